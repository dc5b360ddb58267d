//! Conversions between JS values and core types, through JSON (`JSON.parse`/`JSON.stringify`
//! on the browser's side, serde_json on ours): the values that cross are plain data, and one
//! JSON implementation in the module is smaller than a second, JS-specific serde format.

use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::{JsCast, JsValue};

use super::js_error::{thrown_message, ContextCompactorError};
use crate::core::ErrorCode;

/// A core value as a plain JS object, cast to its typed stand-in.
pub fn to_js<T: Serialize + ?Sized, J: JsCast>(value: &T) -> Result<J, ContextCompactorError> {
    let unconvertible = |reason: String| {
        ContextCompactorError::new(
            ErrorCode::InvalidInput,
            format!("could not convert a value for JavaScript: {reason}"),
        )
    };
    let text = serde_json::to_string(value).map_err(|err| unconvertible(err.to_string()))?;
    js_sys::JSON::parse(&text)
        .map(JsCast::unchecked_into)
        .map_err(|err| unconvertible(thrown_message(&err)))
}

/// The JSON text `json` as a JS value, parsed by the browser (so stored numbers and strings
/// arrive exactly as `JSON.parse` reads them).
pub fn json_to_js<J: JsCast>(json: &str) -> Result<J, ContextCompactorError> {
    js_sys::JSON::parse(json)
        .map(JsCast::unchecked_into)
        .map_err(|err| {
            ContextCompactorError::new(
                ErrorCode::InvalidInput,
                format!(
                    "could not convert a value for JavaScript: {}",
                    thrown_message(&err)
                ),
            )
        })
}

/// A JS argument as a core type; `what` names the argument in the error.
pub fn from_js<T: DeserializeOwned>(
    value: JsValue,
    what: &str,
) -> Result<T, ContextCompactorError> {
    // `JSON.stringify(undefined)` is `undefined`, not text: an absent value reads as `null`.
    let text = match js_sys::JSON::stringify(&value) {
        Ok(text) => text.as_string().unwrap_or_else(|| "null".to_owned()),
        Err(err) => {
            return Err(ContextCompactorError::invalid_input(
                what,
                thrown_message(&err),
            ))
        }
    };
    serde_json::from_str(&text).map_err(|err| {
        // serde_json places its errors in the JSON text ("at line 1 column 40"), which the
        // caller never saw.
        let message = err.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(head, _)| head);
        ContextCompactorError::invalid_input(what, message)
    })
}
