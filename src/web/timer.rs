//! The timer port over the global `setTimeout` (windows and workers alike), and a break of 0 ms
//! that gives the page its turn without `setTimeout`'s clamp. A sleep that is dropped before
//! it ends (the work it raced finished first) clears its timeout.
//!
//! The break is a `MessageChannel` message, an ordinary task. Not `setTimeout(0)`, which
//! browsers hold back to 4 ms once timeouts nest (a compaction of many short tasks would idle
//! between them), nor `scheduler.yield()`, whose continuation Chromium runs before rendering:
//! measured at 733,000 tokens, frames stopped for up to 117 ms across tasks that were each under
//! 50 ms. The channel is held until its message arrives (a channel no script holds may be
//! collected with its message), and it is made here rather than in a JS snippet: every snippet is
//! one more module a page without a bundler fetches before the package starts.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::core::ports::timer::{LocalBoxFuture, Timer};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(callback: &js_sys::Function, ms: i32) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(id: &JsValue);
}

/// A break that gives the page its turn and resumes right after it; where `MessageChannel` is
/// missing, at once.
fn page_break() -> LocalBoxFuture<'static, ()> {
    let Ok(channel) = web_sys::MessageChannel::new() else {
        return Box::pin(async {});
    };
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        channel.port1().set_onmessage(Some(&resolve));
    });
    let posted = channel.port2().post_message(&JsValue::NULL);
    Box::pin(async move {
        if posted.is_ok() {
            // The message only resolves; there is nothing to handle on rejection.
            let _ = JsFuture::from(promise).await;
        }
        channel.port1().close();
    })
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
    /// A sleep of 0 ms is a break that gives the page its turn and resumes at once after it.
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'static, ()> {
        if ms == 0 {
            return page_break();
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
