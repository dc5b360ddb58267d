//! Core errors as JavaScript `Error`s carrying a `code` (and the storage `key` where one applies).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::core::error::redact::redact;
use crate::core::error::{CompactionError, ErrorCode, StorageError};
use crate::core::json::write::to_json;

/// An error on its way to JavaScript: a stable code, a message for people, an optional key.
#[derive(Debug, Clone)]
pub struct ContextCompactorError {
    code: ErrorCode,
    message: String,
    key: Option<String>,
    status: Option<u16>,
    retryable: Option<bool>,
    retry_after_ms: Option<u32>,
    model: Option<String>,
    /// The clearing that stands after a later rung failed: its archive key and its cleared
    /// bodies as JSON text.
    clearing: Option<(String, String)>,
}

impl ContextCompactorError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            key: None,
            status: None,
            retryable: None,
            retry_after_ms: None,
            model: None,
            clearing: None,
        }
    }

    /// This error naming the model whose call failed (provider errors only).
    pub fn with_model(mut self, model: String) -> Self {
        if self.status.is_some() || self.retry_after_ms.is_some() || self.is_provider_code() {
            self.model = Some(model);
        }
        self
    }

    fn is_provider_code(&self) -> bool {
        matches!(
            self.code,
            ErrorCode::LlmHttp
                | ErrorCode::LlmTimeout
                | ErrorCode::LlmNetwork
                | ErrorCode::LlmBlocked
                | ErrorCode::InvalidSummary
        )
    }

    /// The message for people.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// A caller passed an argument of the wrong shape.
    pub fn invalid_input(what: &str, detail: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::InvalidInput, format!("{what}: {detail}"))
    }
}

/// What a thrown value says: `Name: message` of an Error (DOMExceptions included), a string or
/// number as itself; of any other value only its type, never its contents (an object thrown by
/// app code may hold a secret).
pub fn thrown_message(value: &JsValue) -> String {
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        return format!(
            "{}: {}",
            String::from(error.name()),
            String::from(error.message())
        );
    }
    if let Some(text) = value.as_string() {
        return text;
    }
    if let Some(number) = value.as_f64() {
        // JavaScript's own `String(number)`: the float printer of Rust's `Display` is 14 KB.
        let text = js_sys::Number::from(number).to_string_with_radix(10);
        return format!("the number {}", text.map(String::from).unwrap_or_default());
    }
    let kind = value
        .js_typeof()
        .as_string()
        .unwrap_or_else(|| "unknown".into());
    format!("a thrown {kind} value that is not an Error")
}

impl From<StorageError> for ContextCompactorError {
    fn from(err: StorageError) -> Self {
        Self {
            key: err.key().map(str::to_owned),
            ..Self::new(err.code(), err.to_string())
        }
    }
}

impl From<CompactionError> for ContextCompactorError {
    fn from(err: CompactionError) -> Self {
        let provider = err.provider();
        Self {
            key: err.key().map(str::to_owned),
            status: provider.and_then(|p| p.status()),
            retry_after_ms: provider.and_then(|p| p.retry_after_ms()),
            retryable: err.retryable(),
            clearing: err
                .clearing_stood()
                .map(|stood| (stood.archive_key.clone(), to_json(&stood.cleared))),
            ..Self::new(err.code(), err.to_string())
        }
    }
}

#[wasm_bindgen(module = "/src/web/boundary.js")]
extern "C" {
    /// `new ContextCompactorError(message, code)`, the class the package exports.
    #[wasm_bindgen(js_name = contextCompactorError)]
    fn new_error(message: &str, code: &str) -> js_sys::Error;
}

impl From<ContextCompactorError> for JsValue {
    fn from(err: ContextCompactorError) -> Self {
        // The one place every message passes on its way out: no key-shaped text leaves.
        let error = new_error(&redact(&err.message, None), err.code.as_str());
        // Defining a property on a fresh, extensible Error object cannot fail.
        let set = |name: &str, value: JsValue| {
            let _ = js_sys::Reflect::set(&error, &name.into(), &value);
        };
        if let Some(key) = err.key {
            set("key", key.into());
        }
        if let Some(status) = err.status {
            set("status", status.into());
        }
        if let Some(retryable) = err.retryable {
            set("retryable", retryable.into());
        }
        if let Some(ms) = err.retry_after_ms {
            set("retryAfterMs", ms.into());
        }
        if let Some(model) = err.model {
            set("model", model.into());
        }
        if let Some((key, cleared)) = err.clearing {
            set("archiveKey", key.into());
            set(
                "cleared",
                js_sys::JSON::parse(&cleared).unwrap_or(JsValue::NULL),
            );
        }
        error.into()
    }
}

impl From<StorageError> for JsValue {
    fn from(err: StorageError) -> Self {
        ContextCompactorError::from(err).into()
    }
}

impl From<CompactionError> for JsValue {
    fn from(err: CompactionError) -> Self {
        ContextCompactorError::from(err).into()
    }
}
