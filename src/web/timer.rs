//! The timer port over the global `setTimeout` (windows and workers alike).

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::core::provider::{LocalBoxFuture, Timer};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(callback: &js_sys::Function, ms: i32) -> JsValue;
}

/// Sleeps with `setTimeout`.
#[derive(Debug, Clone, Copy, Default)]
pub struct BrowserTimer;

impl Timer for BrowserTimer {
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'static, ()> {
        let delay = i32::try_from(ms).unwrap_or(i32::MAX);
        let promise = js_sys::Promise::new(&mut |resolve, _reject| {
            set_timeout(&resolve, delay);
        });
        Box::pin(async move {
            // A timer promise only resolves; there is nothing to handle on rejection.
            let _ = JsFuture::from(promise).await;
        })
    }
}
