//! LogStore in real browsers over real localStorage (run by `wasm-pack test --chrome/--firefox`).
#![cfg(target_arch = "wasm32")]
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use context_compactor::web::JsLogStore;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

mod browser_support;

use browser_support::*;

wasm_bindgen_test_configure!(run_in_browser);

fn stored(key: &str) -> Option<serde_json::Value> {
    storage()
        .get_item(key)
        .unwrap()
        .map(|text| serde_json::from_str(&text).unwrap())
}

/// A store under its own prefix, with that prefix's keys removed first.
fn fresh_store(prefix: &str) -> JsLogStore {
    for suffix in ["reasoning_log", "execution_log", "tool_activity_log"] {
        storage().remove_item(&format!("{prefix}{suffix}")).unwrap();
    }
    JsLogStore::new(Some(
        js(&format!(r#"{{"prefix":"{prefix}"}}"#)).unchecked_into(),
    ))
    .unwrap()
}

#[wasm_bindgen_test]
fn default_prefix_uses_the_gdrs_keys() {
    let store = JsLogStore::new(None).unwrap();
    assert_eq!(store.prefix(), "gdrs_");
}

#[wasm_bindgen_test]
fn appends_are_stamped_and_iterations_numbered() {
    let store = fresh_store("t_append_");
    assert_eq!(store.current_iteration().unwrap(), 0);
    assert!(!store.iteration_running());

    assert_eq!(store.start_iteration().unwrap(), 1);
    assert!(store.iteration_running());
    store
        .append_reasoning(JsValue::from("look at the data"))
        .unwrap();
    let exec = store
        .append_execution(
            js(r#"{"success":true,"code":"1+1","result":2,"executionTime":3}"#).unchecked_into(),
        )
        .unwrap();
    let exec = json_of(&exec);
    assert_eq!(exec["iteration"], 1);
    assert_eq!(exec["success"], true);
    assert_eq!(exec["error"], serde_json::Value::Null);
    assert_eq!(exec["source"], "auto");
    assert!(exec["id"].as_str().unwrap().starts_with("exec_"));
    let timestamp = exec["timestamp"].as_str().unwrap();
    let parsed = js_sys::Date::new(&timestamp.into());
    assert!((parsed.get_time() - js_sys::Date::now()).abs() < 60_000.0);
    let tool = store
        .append_tool_activity(
            js(r#"{"type":"vfs","action":"write","status":"success","details":{"path":"a.txt"}}"#)
                .unchecked_into(),
        )
        .unwrap();
    assert_eq!(json_of(&tool)["iteration"], 1);
    store.finish_iteration();
    assert!(!store.iteration_running());

    assert_eq!(store.start_iteration().unwrap(), 2);
    store
        .append_execution(
            js(r#"{"success":false,"code":"x()","error":"x is not defined"}"#).unchecked_into(),
        )
        .unwrap();
    store.finish_iteration();

    assert_eq!(store.current_iteration().unwrap(), 2);
    assert_eq!(
        stored("t_append_reasoning_log").unwrap(),
        serde_json::json!([
            "=== ITERATION 1 ===",
            "look at the data",
            "=== ITERATION 2 ==="
        ])
    );
    let executions = stored("t_append_execution_log").unwrap();
    assert_eq!(executions[1]["iteration"], 2);
    assert_eq!(executions[1]["error"]["message"], "x is not defined");
    assert_ne!(executions[0]["id"], executions[1]["id"]);
    assert_eq!(
        json_of(&store.tool_activity_log().unwrap())[0]["details"]["path"],
        "a.txt"
    );
    assert!(store.estimate_tokens().unwrap() > 20);
}

#[wasm_bindgen_test]
fn foreign_entries_are_read_and_survive_a_round_trip() {
    let store = fresh_store("t_foreign_");
    let storage = storage();
    storage
        .set_item(
            "t_foreign_reasoning_log",
            r#"["=== ITERATION 1 ===","a","=== ITERATION 2 ===","b","=== ITERATION 3 ==="]"#,
        )
        .unwrap();
    let foreign = r#"[{"id":"old1","timestamp":"2025-01-01T00:00:00.000Z","success":true,"code":"a","result":null,"error":null,"executionTime":1,"source":"manual","context":{"iteration":1},"customField":{"keep":[1,2]}},{"id":"old2","success":true,"code":"b","executionTime":2,"source":"auto"},{"id":"old3","success":false,"code":"c","error":{"message":"bad"},"executionTime":1,"source":"auto","context":{"iteration":2}}]"#;
    storage
        .set_item("t_foreign_execution_log", foreign)
        .unwrap();

    let log = json_of(&store.execution_log().unwrap());
    let iterations: Vec<_> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["iteration"].clone())
        .collect();
    assert_eq!(iterations, vec![1, 1, 2]);
    assert_eq!(store.current_iteration().unwrap(), 3);

    store
        .append_execution(js(r#"{"success":true,"code":"d"}"#).unchecked_into())
        .unwrap();
    let after = stored("t_foreign_execution_log").unwrap();
    let before: serde_json::Value = serde_json::from_str(foreign).unwrap();
    for (index, original) in before.as_array().unwrap().iter().enumerate() {
        assert_eq!(&after[index], original, "entry {index} changed on write");
    }
    assert_eq!(after[3]["iteration"], 3);
}

#[wasm_bindgen_test]
fn corrupt_json_fails_with_storage_corrupt_and_is_left_untouched() {
    let store = fresh_store("t_corrupt_");
    let storage = storage();
    for (key, text) in [
        ("t_corrupt_reasoning_log", "{not json"),
        // Anything JSON.parse reads as an array is a log (`[1,2,3]`, `[{"type":7}]`); these
        // are not.
        ("t_corrupt_reasoning_log", r#""just text""#),
        ("t_corrupt_execution_log", r#"{"an":"object"}"#),
        ("t_corrupt_tool_activity_log", r#"[{"type":7}"#),
    ] {
        storage.set_item(key, text).unwrap();
        if key == "t_corrupt_reasoning_log" {
            let err = store.append_reasoning(JsValue::from("hello")).unwrap_err();
            assert_eq!(error_code(&err), "storage_corrupt", "{key} = {text}");
            let named = js_sys::Reflect::get(&err, &"key".into()).unwrap();
            assert_eq!(named.as_string().as_deref(), Some(key));
        }
        let err = store.execution_log().err().unwrap();
        assert_eq!(error_code(&err), "storage_corrupt", "{key} = {text}");
        let err = store.start_iteration().unwrap_err();
        assert_eq!(error_code(&err), "storage_corrupt");
        let err = store
            .append_execution(js(r#"{"success":true,"code":"x"}"#).unchecked_into())
            .err()
            .unwrap();
        assert_eq!(error_code(&err), "storage_corrupt");
        assert_eq!(storage.get_item(key).unwrap().as_deref(), Some(text));
        storage.remove_item(key).unwrap();
    }
}

#[wasm_bindgen_test]
fn invalid_input_is_a_typed_error() {
    let store = fresh_store("t_input_");
    let err = store
        .append_execution(js(r#"{"code":42}"#).unchecked_into())
        .err()
        .unwrap();
    assert_eq!(error_code(&err), "invalid_input");
    let message = error_message(&err);
    // Says which argument and what was wrong, in terms of the JS value (no JSON positions).
    assert!(message.starts_with("appendExecution"), "{message}");
    assert!(message.contains("42"), "{message}");
    assert!(!message.contains("line 1"), "{message}");
    let err = JsLogStore::new(Some(js(r#"{"prefix":5}"#).unchecked_into()))
        .err()
        .unwrap();
    assert_eq!(error_code(&err), "invalid_input");
    // Values JSON cannot carry are refused, not turned into something else.
    let cyclic = js("{}");
    js_sys::Reflect::set(&cyclic, &"self".into(), &cyclic).unwrap();
    let err = store
        .append_execution(cyclic.unchecked_into())
        .err()
        .unwrap();
    assert_eq!(error_code(&err), "invalid_input");
}

/// Removes the filler key even when an assertion fails.
struct Filler(&'static str);

impl Drop for Filler {
    fn drop(&mut self) {
        let _ = storage().remove_item(self.0);
    }
}

/// Fills localStorage until one more character does not fit.
fn fill_local_storage(key: &'static str) -> Filler {
    let storage = storage();
    let filler = Filler(key);
    let mut chunk = 4 * 1024 * 1024;
    let mut content = String::new();
    while chunk > 0 {
        let attempt = format!("{content}{}", "x".repeat(chunk));
        if storage.set_item(key, &attempt).is_ok() {
            content = attempt;
        } else {
            chunk /= 2;
        }
    }
    filler
}

#[wasm_bindgen_test]
fn a_full_local_storage_gives_storage_quota_and_keeps_the_old_value() {
    let store = fresh_store("t_quota_");
    store.start_iteration().unwrap();
    store
        .append_reasoning(JsValue::from("before the quota"))
        .unwrap();
    let before = storage().get_item("t_quota_reasoning_log").unwrap();

    let _filler = fill_local_storage("t_quota_filler");
    let err = store
        .append_reasoning(JsValue::from(&"y".repeat(10_000)))
        .unwrap_err();
    assert_eq!(error_code(&err), "storage_quota");
    let message = js_sys::Reflect::get(&err, &"message".into())
        .unwrap()
        .as_string()
        .unwrap();
    assert!(message.contains("t_quota_reasoning_log"), "{message}");
    assert_eq!(storage().get_item("t_quota_reasoning_log").unwrap(), before);
    let err = store
        .append_execution(js(r#"{"success":true,"code":"big"}"#).unchecked_into())
        .err()
        .unwrap();
    assert_eq!(error_code(&err), "storage_quota");
    assert_eq!(
        json_of(&store.reasoning_log().unwrap())
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// Every engine's words for a full localStorage, as `setItem` throws them: the standard
/// `DOMException` (code 22), WebKit's older name, Firefox's older name and code, and each code
/// alone.
const QUOTA_SHAPES: &[&str] = &[
    r#"new DOMException("The quota has been exceeded.", "QuotaExceededError")"#,
    r#"Object.assign(new Error("QuotaExceededError: DOM Exception 22"), { name: "QUOTA_EXCEEDED_ERR", code: 22 })"#,
    r#"Object.assign(new Error("Persistent storage maximum size reached"), { name: "NS_ERROR_DOM_QUOTA_REACHED", code: 1014 })"#,
    r#"Object.assign(new Error("full"), { code: 22 })"#,
    r#"Object.assign(new Error("full"), { code: 1014 })"#,
];

#[wasm_bindgen_test]
fn every_engines_quota_error_gives_storage_quota_and_nothing_changes() {
    let store = fresh_store("t_shape_");
    store.start_iteration().unwrap();
    store.append_reasoning(JsValue::from("kept")).unwrap();
    let before = dump("t_shape_");
    for shape in QUOTA_SHAPES {
        // setItem throws the shape for this test's keys, as a full storage would.
        eval(&format!(
            r#"const original = Storage.prototype.setItem;
            globalThis.__restoreSetItem = () => {{ Storage.prototype.setItem = original; }};
            Storage.prototype.setItem = function (key, value) {{
              if (String(key).startsWith("t_shape_")) throw {shape};
              return original.call(this, key, value);
            }};
            return null;"#
        ));
        let err = store
            .append_reasoning(JsValue::from("one more"))
            .unwrap_err();
        eval("globalThis.__restoreSetItem(); return null;");
        assert_eq!(error_code(&err), "storage_quota", "{shape}");
        assert_eq!(dump("t_shape_"), before, "{shape}");
    }
}

#[wasm_bindgen_test]
fn clear_removes_the_three_logs_only() {
    let store = fresh_store("t_clear_");
    store.start_iteration().unwrap();
    storage().set_item("t_clear_archived_logs_1", "{}").unwrap();
    store.clear(None).unwrap();
    assert_eq!(store.current_iteration().unwrap(), 0);
    assert!(storage()
        .get_item("t_clear_reasoning_log")
        .unwrap()
        .is_none());
    assert!(storage()
        .get_item("t_clear_archived_logs_1")
        .unwrap()
        .is_some());
    storage().remove_item("t_clear_archived_logs_1").unwrap();
}

#[wasm_bindgen_test]
fn estimate_tokens_is_exported() {
    assert_eq!(
        context_compactor::web::estimate_tokens("".into()).unwrap(),
        0
    );
    assert!(
        context_compactor::web::estimate_tokens("2026-11-22T18:56:07.123Z".into()).unwrap() >= 17
    );
}

/// Long texts are kept in wasm between reads; a text rewritten by other code, even to the same
/// length, must still be read afresh. Long texts cross into wasm through `TextEncoder`, so
/// every kind of UTF-16 (ASCII, two- and three-byte, surrogate pairs) must come out intact.
#[wasm_bindgen_test]
fn long_logs_changed_by_other_code_are_read_afresh() {
    let store = fresh_store("t_cache_");
    store.start_iteration().unwrap();
    let text_a = "plain ascii é ß 日本語 🎯 ".repeat(200);
    let text_b = text_a.replace('🎯', "📊");
    store.append_reasoning(JsValue::from(&text_a)).unwrap();
    let key = "t_cache_reasoning_log";
    let first = storage().get_item(key).unwrap().unwrap();
    assert_eq!(json_of(&store.reasoning_log().unwrap())[1], text_a);

    storage()
        .set_item(key, &first.replace(&text_a, &text_b))
        .unwrap();
    assert_eq!(json_of(&store.reasoning_log().unwrap())[1], text_b);

    storage().set_item(key, &first).unwrap();
    assert_eq!(json_of(&store.reasoning_log().unwrap())[1], text_a);
    storage().remove_item(key).unwrap();
    assert_eq!(
        json_of(&store.reasoning_log().unwrap()),
        serde_json::json!([])
    );
}

/// Runs `body` (JavaScript) with `logs` bound, and returns what it returns as JSON.
fn with_logs(logs: JsLogStore, body: &str) -> serde_json::Value {
    let run = js_sys::Function::new_with_args("logs", body);
    json_of(&run.call1(&JsValue::NULL, &logs.into()).unwrap())
}

#[wasm_bindgen_test]
fn text_cut_in_the_middle_of_an_emoji_is_stored_and_read_back_exactly() {
    let logs = fresh_store("surrogate_");
    let outcome = with_logs(
        logs,
        r#"
        const text = "half emoji \ud83d end";
        logs.startIteration();
        logs.appendReasoning(text);
        const execution = logs.appendExecution({ success: true, code: "x", result: "\ud800", error: { message: "cut \udc00" } });
        const stored = JSON.parse(localStorage.getItem("surrogate_reasoning_log"));
        const read = logs.reasoningLog();
        const storedExecution = JSON.parse(localStorage.getItem("surrogate_execution_log")).at(-1);
        const readExecution = logs.executionLog().at(-1);
        const pin = logs.pin("pinned \ud83d");
        return {
          read: read.at(-1) === text,
          stored: stored.at(-1) === text,
          returned: execution.result === "\ud800" && execution.error.message === "cut \udc00",
          storedExecution: storedExecution.result === "\ud800" && storedExecution.error.message === "cut \udc00",
          readExecution: readExecution.result === "\ud800",
          pin: logs.pins().find((p) => p.id === pin).text === "pinned \ud83d",
          plane16: (() => { const t = "\u{10F7FF}\u{10FFFD}x"; logs.appendReasoning(t); return logs.reasoningLog().at(-1) === t; })(),
        };
        "#,
    );
    assert_eq!(
        outcome,
        serde_json::json!({
            "read": true, "stored": true, "returned": true, "storedExecution": true,
            "readExecution": true, "pin": true, "plane16": true
        })
    );
}

#[wasm_bindgen_test]
fn an_entry_another_app_stored_with_a_raw_lone_surrogate_is_never_changed() {
    let logs = fresh_store("foreign_surrogate_");
    let outcome = with_logs(
        logs,
        r#"
        const key = "foreign_surrogate_reasoning_log";
        const theirs = "[" + JSON.stringify("=== ITERATION 1 ===").slice(0, -1) + "\"," + "\"Ab\ud83d raw\"]";
        localStorage.setItem(key, theirs);
        logs.appendReasoning("next");
        const now = localStorage.getItem(key);
        return { kept: now.startsWith(theirs.slice(0, -1) + ","), read: logs.reasoningLog()[1] === "Ab\ud83d raw" };
        "#,
    );
    assert_eq!(outcome, serde_json::json!({ "kept": true, "read": true }));
}

#[wasm_bindgen_test]
fn a_log_encoded_through_a_view_whose_buffer_was_detached_is_not_taken_for_empty() {
    use context_compactor::web::text_cache::encodes_whole;
    use js_sys::{ArrayBuffer, JsString, Uint8Array};
    let log = JsString::from(r#"["=== ITERATION 1 ===","checked shard_1: 1000 rows"]"#);
    let buffer = ArrayBuffer::new(256);
    let view = Uint8Array::new(&buffer);
    assert!(encodes_whole(&log, &view));
    // A growth of wasm memory detaches the buffer its views were made over; a transfer does
    // the same to this one, and the browser then writes nothing through the view.
    let detach = js_sys::Function::new_with_args("b", "structuredClone(b, { transfer: [b] })");
    detach.call1(&JsValue::NULL, &buffer).unwrap();
    assert_eq!(view.length(), 0, "detached");
    assert!(
        !encodes_whole(&log, &view),
        "an empty result is not the log"
    );
}
