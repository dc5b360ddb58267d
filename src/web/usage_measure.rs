//! The app's `promptTokens()` option: its own measure of the prompt it would send.

use wasm_bindgen::JsValue;

use crate::core::ports::usage::UsageMeasure;

/// Calls `options.promptTokens()`; anything but a finite non-negative number (or a throw)
/// means "cannot say", and the package's count is used.
pub struct PromptTokensFunction {
    this: JsValue,
    function: js_sys::Function,
}

impl PromptTokensFunction {
    /// The measure `options.promptTokens` gives, called with `options` as `this`.
    pub fn new(this: JsValue, function: js_sys::Function) -> Self {
        Self { this, function }
    }
}

impl UsageMeasure for PromptTokensFunction {
    fn prompt_tokens(&self) -> Option<usize> {
        let value = self.function.call0(&self.this).ok()?.as_f64()?;
        (value.is_finite() && value >= 0.0).then(|| value.round() as usize)
    }
}
