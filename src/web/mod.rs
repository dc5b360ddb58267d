//! The browser layer: `#[wasm_bindgen]` classes that convert types and wire the browser
//! implementations of the core's ports (localStorage, `Date.now`). No rules live here.

mod abort_on_drop;
mod archive_database;
mod archives;
mod clock;
mod compactor;
mod convert;
mod custom_provider;
mod event_sink;
mod gemini;
mod js_error;
mod local_storage;
mod log_store;
mod lone_surrogates;
mod message_compactor;
mod recall_tool;
mod shelves;
mod storage_estimate;
mod store_lock;
#[doc(hidden)]
pub mod text_cache;
mod timer;
mod typescript;
mod usage_measure;

pub use archives::JsArchives;
pub use clock::BrowserClock;
pub use compactor::JsCompactor;
pub use js_error::ContextCompactorError;
pub use local_storage::BrowserStorage;
pub use log_store::JsLogStore;
pub use message_compactor::JsMessageCompactor;
pub use recall_tool::JsRecallTool;

use wasm_bindgen::prelude::*;

/// The package's token estimate for Gemini-family models (see the README for how it counts);
/// a lone surrogate counts as it does in the logs.
#[wasm_bindgen(js_name = estimateTokens)]
pub fn estimate_tokens(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> Result<usize, JsValue> {
    let text = convert::string_arg(&text, "estimateTokens(text)")?;
    Ok(crate::core::log::tokens::estimate_tokens(&text))
}

/// Checks a summary: the sections of `REQUIRED_SECTIONS` as `###` headings (emoji optional),
/// at least 100 characters, and no refusal in its opening.
#[wasm_bindgen(js_name = validateSummary)]
pub fn validate_summary(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> Result<typescript::ValidationResultJs, JsValue> {
    let text = convert::string_arg(&text, "validateSummary(text)")?;
    Ok(convert::to_js(
        &crate::core::steps::validation::validate_summary(&text),
    )?)
}

/// The titles of the required sections (also exported as the constant `REQUIRED_SECTIONS`).
#[wasm_bindgen(js_name = requiredSections, unchecked_return_type = "string[]")]
pub fn required_sections() -> Vec<String> {
    crate::core::steps::validation::REQUIRED_SECTIONS
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}
