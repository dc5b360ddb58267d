//! The browser layer: `#[wasm_bindgen]` classes that convert types and wire the browser
//! implementations of the core's ports (localStorage, `Date.now`). No rules live here.

mod clock;
mod convert;
mod js_error;
mod local_storage;
mod log_store;
mod typescript;

pub use clock::BrowserClock;
pub use js_error::ContextCompactorError;
pub use local_storage::BrowserStorage;
pub use log_store::JsLogStore;

use wasm_bindgen::prelude::*;

/// The package's token estimate for Gemini-family models (see the README for how it counts).
#[wasm_bindgen(js_name = estimateTokens)]
pub fn estimate_tokens(text: &str) -> usize {
    crate::core::tokens::estimate_tokens(text)
}
