//! The timer port over the global `setTimeout` (windows and workers alike), and a break of 0 ms
//! that gives the page its turn without `setTimeout`'s clamp. A sleep that is dropped before
//! it ends (the work it raced finished first) clears its timeout.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::core::ports::timer::{LocalBoxFuture, Timer};

#[wasm_bindgen(module = "/src/web/page_yield.js")]
extern "C" {
    #[wasm_bindgen(js_name = pageYield)]
    fn page_yield() -> js_sys::Promise;
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(callback: &js_sys::Function, ms: i32) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(id: &JsValue);
}

/// Sleeps with `setTimeout`.
#[derive(Debug, Clone, Copy, Default)]
pub struct BrowserTimer;

/// Clears its timeout when dropped (a no-op once the timeout has fired).
struct ClearOnDrop(JsValue);

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        clear_timeout(&self.0);
    }
}

impl Timer for BrowserTimer {
    /// A sleep of 0 ms is a break that gives the page its turn and resumes at once after it
    /// (`page_yield.js`).
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'static, ()> {
        if ms == 0 {
            let promise = page_yield();
            return Box::pin(async move {
                // The break only resolves; there is nothing to handle on rejection.
                let _ = JsFuture::from(promise).await;
            });
        }
        let delay = i32::try_from(ms).unwrap_or(i32::MAX);
        let mut id = JsValue::UNDEFINED;
        let promise = js_sys::Promise::new(&mut |resolve, _reject| {
            id = set_timeout(&resolve, delay);
        });
        let pending = ClearOnDrop(id);
        Box::pin(async move {
            let _clear = pending;
            // A timer promise only resolves; there is nothing to handle on rejection.
            let _ = JsFuture::from(promise).await;
        })
    }
}
