//! Conversions between JS values and core types, all through serde.

use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::{JsCast, JsValue};

use super::js_error::ContextCompactorError;
use crate::core::ErrorCode;

/// A core value as a plain JS object (objects, not `Map`s), cast to its typed stand-in.
pub fn to_js<T: Serialize + ?Sized, J: JsCast>(value: &T) -> Result<J, ContextCompactorError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map(JsCast::unchecked_into)
        .map_err(|err| {
            ContextCompactorError::new(
                ErrorCode::InvalidInput,
                format!("could not convert a value for JavaScript: {err}"),
            )
        })
}

/// A JS argument as a core type; `what` names the argument in the error.
pub fn from_js<T: DeserializeOwned>(
    value: JsValue,
    what: &str,
) -> Result<T, ContextCompactorError> {
    serde_wasm_bindgen::from_value(value)
        .map_err(|err| ContextCompactorError::invalid_input(what, err))
}
