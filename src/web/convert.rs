//! Conversions between JS values and core types, through JSON (`JSON.parse`/`JSON.stringify`
//! on the browser's side, serde_json on ours): the values that cross are plain data, and one
//! JSON implementation in the module is smaller than a second, JS-specific serde format.

use js_sys::JsString;
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

use super::js_error::{thrown_message, ContextCompactorError};
use super::lone_surrogates;
use crate::core::error::ErrorCode;

/// A core value as a plain JS object, cast to its typed stand-in.
pub fn to_js<T: Serialize + ?Sized, J: JsCast>(value: &T) -> Result<J, ContextCompactorError> {
    let unconvertible = |reason: String| {
        ContextCompactorError::new(
            ErrorCode::InvalidInput,
            format!("could not convert a value for JavaScript: {reason}"),
        )
    };
    let text = serde_json::to_string(value).map_err(|err| unconvertible(err.to_string()))?;
    parse_json(&lone_surrogates::to_js(&text))
        .map(JsCast::unchecked_into)
        .map_err(|err| unconvertible(thrown_message(&err)))
}

#[wasm_bindgen]
extern "C" {
    /// `JSON.parse` of a JavaScript string (which may hold lone surrogates).
    #[wasm_bindgen(js_namespace = JSON, js_name = parse, catch)]
    fn parse_json(text: &JsString) -> Result<JsValue, JsValue>;
}

/// The JSON text `json` as a JS value, parsed by the browser (so stored numbers and strings
/// arrive exactly as `JSON.parse` reads them).
pub fn json_to_js<J: JsCast>(json: &str) -> Result<J, ContextCompactorError> {
    parse_json(&lone_surrogates::to_js(json))
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
        // A lone surrogate arrives escaped (`\ud83d`), which serde cannot read into a String.
        Ok(text) if text.is_string() => {
            let text = lone_surrogates::from_js(&text);
            lone_surrogates::unescape_lone_surrogates(&text).into_owned()
        }
        Ok(_) => "null".to_owned(),
        Err(err) => {
            return Err(ContextCompactorError::invalid_input(
                what,
                thrown_message(&err),
            ))
        }
    };
    serde_json::from_str(&text).map_err(|err| {
        // serde_json places its errors in the JSON text ("at line 1 column 40"), which the
        // caller never saw: the message names the field instead, in JavaScript's terms.
        let message = err.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(head, _)| head);
        let field = field_before(&text, err.column());
        let what = match &field {
            Some(field) if !message.starts_with("unknown field") => format!("{what}.{field}"),
            _ => what.to_owned(),
        };
        ContextCompactorError::invalid_input(&what, in_js_terms(message))
    })
}

/// The name of the last object key that starts before `column` (1-based) of the compact JSON
/// `text`: the field a serde error at that column is about.
fn field_before(text: &str, column: usize) -> Option<String> {
    let head = text.get(..column.saturating_sub(1).min(text.len()))?;
    let colon = head.rfind("\":")?;
    let start = head[..colon].rfind(['{', ','])? + 1;
    let key = head.get(start..colon + 1)?;
    serde_json::from_str::<String>(key).ok()
}

/// A serde message as a JavaScript developer reads it: JS type names, the closest known option
/// for an unknown one.
fn in_js_terms(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (name, known) = rest.split_once('`').unwrap_or((rest, ""));
        let options: Vec<&str> = known.split('`').skip(1).step_by(2).collect();
        let closest = options.iter().min_by_key(|option| {
            edit_distance(&name.to_ascii_lowercase(), &option.to_ascii_lowercase())
        });
        return match closest {
            Some(closest) => format!(
                "\"{name}\" is not an option; did you mean \"{closest}\"? (options: {})",
                options.join(", ")
            ),
            None => format!("\"{name}\" is not an option"),
        };
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or(rest);
        return format!("\"{name}\" is required");
    }
    let mut text = message.replace("invalid type: ", "got ");
    for (rust, js) in [
        ("integer `", "the number `"),
        ("floating point `", "the number `"),
        ("boolean `", "`"),
        ("string \"", "the text \""),
        ("expected u32", "expected a whole number"),
        ("expected u8", "expected a whole number"),
        ("expected u64", "expected a whole number"),
        ("expected usize", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected an array"),
        ("got map", "got an object"),
        ("got sequence", "got an array"),
        ("got unit value", "got null"),
        ("expected struct ", "expected an object "),
    ] {
        text = text.replace(rust, js);
    }
    text
}

/// Levenshtein distance, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = if ca == *cb {
                previous
            } else {
                1 + previous.min(row[j]).min(current)
            };
            previous = current;
        }
    }
    row[b.len()]
}

/// A string argument; anything else is `invalid_input` naming `what` (wasm-bindgen's own
/// conversion would trap inside the allocator or throw a plain `TypeError`).
pub fn string_arg(value: &JsValue, what: &str) -> Result<String, ContextCompactorError> {
    value
        .dyn_ref::<JsString>()
        .map(lone_surrogates::from_js)
        .ok_or_else(|| {
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
