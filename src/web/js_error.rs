//! Core errors as JavaScript `Error`s carrying a `code` (and the storage `key` where one applies).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::core::{CompactionError, ErrorCode, StorageError};

/// The `name` every error thrown by the package carries.
pub const ERROR_NAME: &str = "ContextCompactorError";

/// An error on its way to JavaScript: a stable code, a message for people, an optional key.
#[derive(Debug, Clone)]
pub struct ContextCompactorError {
    code: ErrorCode,
    message: String,
    key: Option<String>,
}

impl ContextCompactorError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            key: None,
        }
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
        return format!("the number {number}");
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
            code: err.code(),
            message: err.to_string(),
            key: err.key().map(str::to_owned),
        }
    }
}

impl From<CompactionError> for ContextCompactorError {
    fn from(err: CompactionError) -> Self {
        Self {
            code: err.code(),
            message: err.to_string(),
            key: err.key().map(str::to_owned),
        }
    }
}

impl From<ContextCompactorError> for JsValue {
    fn from(err: ContextCompactorError) -> Self {
        let error = js_sys::Error::new(&err.message);
        error.set_name(ERROR_NAME);
        // Defining a property on a fresh, extensible Error object cannot fail.
        let _ = js_sys::Reflect::set(&error, &"code".into(), &err.code.as_str().into());
        if let Some(key) = err.key {
            let _ = js_sys::Reflect::set(&error, &"key".into(), &key.into());
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
