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

/// A string argument; anything else is `invalid_input` naming `what` (wasm-bindgen's own
/// conversion would trap inside the allocator or throw a plain `TypeError`).
pub fn string_arg(value: &JsValue, what: &str) -> Result<String, ContextCompactorError> {
    value.as_string().ok_or_else(|| {
        ContextCompactorError::invalid_input(
            what,
            format!("must be a string, not {}", type_name(value)),
        )
    })
}

/// A count argument: a whole number, 0 or more (large ones are clamped to `u32::MAX`).
pub fn count_arg(value: &JsValue, what: &str) -> Result<u32, ContextCompactorError> {
    match value.as_f64() {
        Some(n) if n >= 0.0 && n.fract() == 0.0 => Ok(n.min(f64::from(u32::MAX)) as u32),
        _ => Err(ContextCompactorError::invalid_input(
            what,
            format!(
                "must be a whole number, 0 or more, not {}",
                type_name(value)
            ),
        )),
    }
}

/// `typeof value`, as a reader knows it (`null` and arrays named as such).
fn type_name(value: &JsValue) -> String {
    if value.is_null() {
        "null".into()
    } else if js_sys::Array::is_array(value) {
        "an array".into()
    } else {
        value
            .js_typeof()
            .as_string()
            .unwrap_or_else(|| "unknown".into())
    }
}
