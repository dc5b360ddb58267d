//! Conversions between JS values and core types, through JSON (`JSON.parse`/`JSON.stringify`
//! on the browser's side, the core's `json` wing on ours): the values that cross are plain
//! data, and one small JSON reader and writer serve both storage and the boundary.

use js_sys::JsString;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

use super::js_error::{thrown_message, ContextCompactorError};
use super::lone_surrogates;
use crate::core::error::ErrorCode;
use crate::core::json::read::{from_text, FromJson, ReadError};
use crate::core::json::write::{to_json, ToJson};
use crate::core::model::option_rows::Range;
use crate::core::order::join::Joined;

/// A core value as a plain JS object, cast to its typed stand-in.
pub fn to_js<T: ToJson + ?Sized, J: JsCast>(value: &T) -> Result<J, ContextCompactorError> {
    json_to_js(&to_json(value))
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

#[wasm_bindgen(module = "/src/web/boundary.js")]
extern "C" {
    /// The first option of an object that is `NaN` or infinite, as `name: value`.
    #[wasm_bindgen(js_name = nonFiniteOption)]
    fn non_finite_option(options: &js_sys::Object) -> Option<String>;
}

/// An options object as a core type, as [`from_js`] reads it, after refusing a number option
/// that is `NaN` or infinite (JSON would carry it as `null`, which reads as the default).
pub fn options_from_js<T: FromJson>(
    value: JsValue,
    what: &str,
) -> Result<T, ContextCompactorError> {
    let text = options_text(value, what)?;
    from_text(&text).map_err(|err| read_error(&err, what))
}

/// A JS argument as a core type; `what` names the argument in the error.
pub fn from_js<T: FromJson>(value: JsValue, what: &str) -> Result<T, ContextCompactorError> {
    let text = json_text(value, what)?;
    from_text(&text).map_err(|err| read_error(&err, what))
}

/// The JSON text of an options object; a Symbol or a BigInt in its place, and an option JSON
/// cannot carry (a number that is `NaN` or infinite, a Symbol), refused.
/// (The readers' shared parts are not generic: each type read adds only its own.)
fn options_text(value: JsValue, what: &str) -> Result<String, ContextCompactorError> {
    // JSON would read a Symbol as no options at all.
    if value.is_symbol() || value.is_bigint() {
        return Err(not_an_object(&value, what));
    }
    if let Some(wrong) = value.dyn_ref().and_then(non_finite_option) {
        return Err(ContextCompactorError::invalid_input(what, wrong));
    }
    json_text(value, what)
}

/// The JSON text of a JS value (`null` for an absent one).
fn json_text(value: JsValue, what: &str) -> Result<String, ContextCompactorError> {
    // `JSON.stringify(undefined)` is `undefined`, not text: an absent value reads as `null`.
    match js_sys::JSON::stringify(&value) {
        // A lone surrogate arrives escaped (`\ud83d`); it is carried as the character that
        // stands for it, so that it is given back exactly.
        Ok(text) if text.is_string() => {
            let text = lone_surrogates::from_js(&text);
            Ok(lone_surrogates::unescape_lone_surrogates(&text).into_owned())
        }
        Ok(_) => Ok("null".to_owned()),
        Err(err) => Err(ContextCompactorError::invalid_input(
            what,
            thrown_message(&err),
        )),
    }
}

/// `err`, a reading error of the argument `what`, as the error JavaScript gets.
fn read_error(err: &ReadError, what: &str) -> ContextCompactorError {
    let (path, error) = err.located();
    let what = if path.is_empty() {
        what.to_owned()
    } else {
        format!("{what}.{path}")
    };
    ContextCompactorError::invalid_input(&what, in_js_terms(error))
}

/// A reading error as a JavaScript developer reads it: the closest known option for an
/// unknown one.
fn in_js_terms(error: &ReadError) -> String {
    let ReadError::Unknown { name, known } = error else {
        return error.to_string();
    };
    let closest = known.iter().min_by_key(|option| {
        edit_distance(&name.to_ascii_lowercase(), &option.to_ascii_lowercase())
    });
    match closest {
        Some(closest) => format!(
            "\"{name}\" is not an option; did you mean \"{closest}\"? (options: {})",
            known.joined(", ")
        ),
        None => format!("\"{name}\" is not an option"),
    }
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
    whole_arg(value, Range::AtLeast(0), what)
}

/// A whole-number argument within `range` (large ones are clamped to `u32::MAX`); anything
/// else is `invalid_input` saying what was given, as an option's mistake is said.
pub fn whole_arg(value: &JsValue, range: Range, what: &str) -> Result<u32, ContextCompactorError> {
    whole_in(from_js::<f64>(value.clone(), what)?, range, what)
}

/// JavaScript's `Number.MAX_SAFE_INTEGER`: a larger number is not the one the app wrote
/// (`2 ** 53 + 1` reads as `2 ** 53`).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `n` as a whole number within `range` and JavaScript's safe integers, or the error `what` gets.
fn whole_in(n: f64, range: Range, what: &str) -> Result<u32, ContextCompactorError> {
    let safe = n.abs() <= MAX_SAFE_INTEGER;
    if n.fract() == 0.0 && range.holds(n) && safe {
        return Ok(n.min(f64::from(u32::MAX)) as u32);
    }
    let wanted = match safe || !range.holds(n) {
        true => format!("a whole number, {}", range.text()),
        false => "a safe integer (at most Number.MAX_SAFE_INTEGER)".to_owned(),
    };
    let error = ReadError::invalid(&to_json(&n), wanted);
    Err(ContextCompactorError::invalid_input(what, error))
}

/// An options object (`undefined` or `null`: none given) as a core type, as
/// [`options_from_js`] reads it.
pub fn optional_options<T: FromJson + Default>(
    options: JsValue,
    what: &str,
) -> Result<T, ContextCompactorError> {
    if options.is_undefined() || options.is_null() {
        return Ok(T::default());
    }
    options_from_js(options, what)
}

/// The number option `name` given to `what`, when given: a whole number within `range`.
pub fn option_in(
    value: Option<f64>,
    name: &str,
    range: Range,
    what: &str,
) -> Result<Option<usize>, ContextCompactorError> {
    value
        .map(|n| whole_in(n, range, &format!("{what}.{name}")).map(|n| n as usize))
        .transpose()
}

/// The error of `what` given `value` where an options object goes.
fn not_an_object(value: &JsValue, what: &str) -> ContextCompactorError {
    let given = format!("must be an object, not {}", type_name(value));
    ContextCompactorError::invalid_input(what, given)
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

#[wasm_bindgen]
extern "C" {
    /// `Object.assign(target, source)`, its exceptions (a throwing getter) caught.
    #[wasm_bindgen(js_namespace = Object, js_name = assign, catch)]
    fn copy_object(target: &js_sys::Object, source: &JsValue) -> Result<js_sys::Object, JsValue>;
}

/// A copy of the options object `options` (empty for `undefined` or `null`), for `what` to
/// read after taking out what is not JSON; anything but an object (a number, a Symbol, a
/// BigInt, which `Object.assign` would copy as nothing) is `invalid_input`.
pub(super) fn options_copy(options: &JsValue, what: &str) -> Result<js_sys::Object, JsValue> {
    let copy = js_sys::Object::new();
    if options.is_undefined() || options.is_null() {
        return Ok(copy);
    }
    if !options.is_object() || options.is_function() {
        return Err(not_an_object(options, what).into());
    }
    copy_object(&copy, options).map_err(|err| invalid(what, thrown_message(&err)))
}

/// An `invalid_input` error naming `what` (an argument or option) and what is wrong with it.
pub(super) fn invalid(what: &str, detail: impl std::fmt::Display) -> JsValue {
    ContextCompactorError::invalid_input(what, detail).into()
}
