//! Helpers shared by the browser test binaries.
#![allow(dead_code)]

use wasm_bindgen::{JsCast, JsValue};

/// The page's localStorage.
pub fn storage() -> web_sys::Storage {
    web_sys::window().unwrap().local_storage().unwrap().unwrap()
}

/// A JS value from JSON text.
pub fn js(json: &str) -> JsValue {
    js_sys::JSON::parse(json).unwrap()
}

/// Runs `body` as a function in the page and returns what it returns.
pub fn eval(body: &str) -> JsValue {
    js_sys::Function::new_no_args(body)
        .call0(&JsValue::NULL)
        .unwrap()
}

/// A JS value as JSON, for assertions.
pub fn json_of(value: &JsValue) -> serde_json::Value {
    serde_json::from_str(&String::from(js_sys::JSON::stringify(value).unwrap())).unwrap()
}

/// Every key under `prefix` (the metrics and the store lock's write number aside) with its raw
/// value, sorted: the state a failed compaction must leave exactly as it found it.
pub fn dump(prefix: &str) -> Vec<(String, String)> {
    let s = storage();
    let mut out: Vec<(String, String)> = (0..s.length().unwrap())
        .filter_map(|i| s.key(i).unwrap())
        .filter(|k| {
            k.starts_with(prefix)
                && !k.ends_with("compaction_metrics")
                && !k.ends_with("store_version")
        })
        .map(|k| (k.clone(), s.get_item(&k).unwrap().unwrap()))
        .collect();
    out.sort();
    out
}

/// The `code` of a thrown package error (asserting it is a real `Error`).
pub fn error_code(err: &JsValue) -> String {
    assert!(
        err.is_instance_of::<js_sys::Error>(),
        "not an Error: {err:?}"
    );
    js_sys::Reflect::get(err, &"code".into())
        .unwrap()
        .as_string()
        .unwrap()
}

/// The `message` of a thrown `Error`.
pub fn error_message(err: &JsValue) -> String {
    js_sys::Reflect::get(err, &"message".into())
        .unwrap()
        .as_string()
        .unwrap()
}

/// Waits `ms` milliseconds of the page's clock.
/// Whether the JavaScript `condition` (a function body returning a boolean) held within
/// `limit_ms`, asked every 25 ms: a wait for what a busy machine makes slower, never a fixed
/// guess.
pub async fn holds_within(condition: &str, limit_ms: i32) -> bool {
    for _ in 0..=limit_ms / 25 {
        if eval(condition).as_bool() == Some(true) {
            return true;
        }
        sleep_ms(25).await;
    }
    false
}

pub async fn sleep_ms(ms: i32) {
    let wait = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
            .unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(wait).await.unwrap();
}
