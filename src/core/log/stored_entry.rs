//! One entry of a stored log, kept as the exact JSON text another program wrote.
//!
//! Entries belong to the app that wrote them: the package reads the fields it needs from a
//! lenient view and writes the original text back unchanged, so numbers keep their digits
//! (`1.1805916207174113e+21`), strings keep lone surrogates (`"Ab\ud83d"`, which
//! `JSON.stringify` writes for text cut with `.slice`) and field order stays as it was.
//! Anything `JSON.parse` accepts is accepted, duplicate keys included (the last one wins).

use std::borrow::Cow;
use std::ops::Deref;

use crate::core::error::StorageError;
use crate::core::json::number::parse_decimal;
use crate::core::json::read::{FromJson, ReadError};
use crate::core::json::scan::{self, SyntaxError};
use crate::core::json::write::ToJson;

pub(crate) use crate::core::json::scan::field as object_field;

/// What the package reads from an entry's JSON text; never fails (unknown shapes read as
/// empty).
pub trait EntryView: Sized {
    /// The view of `json`, a JSON value as stored.
    fn read(json: &str) -> Self;
}

/// A stored entry: its exact JSON text and the view read from it. Two entries are equal when
/// their texts are.
#[derive(Debug, Clone)]
pub struct Stored<V> {
    raw: Box<str>,
    view: V,
}

impl<V: EntryView> Stored<V> {
    /// The entry stored as `json`, one JSON value already read (no surrounding whitespace).
    pub(crate) fn from_json_text(json: &str) -> Self {
        Stored {
            view: V::read(json),
            raw: json.into(),
        }
    }

    /// A new entry written as the JSON of `value`.
    pub fn encode<T: ToJson + ?Sized>(value: &T) -> Self {
        let json = crate::core::json::write::to_json(value);
        Stored {
            view: V::read(&json),
            raw: json.into_boxed_str(),
        }
    }
}

impl<V> Stored<V> {
    /// The JSON text as stored.
    pub fn json(&self) -> &str {
        &self.raw
    }

    /// What the package reads from it.
    pub fn view(&self) -> &V {
        &self.view
    }
}

impl<V> Deref for Stored<V> {
    type Target = V;

    fn deref(&self) -> &V {
        &self.view
    }
}

impl<V> PartialEq for Stored<V> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl<V> ToJson for Stored<V> {
    fn write_json(&self, out: &mut String) {
        out.push_str(&self.raw);
    }
}

impl<V: EntryView> FromJson for Stored<V> {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        Ok(Self::from_json_text(json))
    }
}

/// A reasoning entry reads as its text: a JSON string decoded, anything else as its JSON.
impl EntryView for String {
    fn read(json: &str) -> Self {
        reasoning_text(json).into_owned()
    }
}

/// The text a reasoning entry stored as `json` reads as (see `impl EntryView for String`).
pub(crate) fn reasoning_text(json: &str) -> Cow<'_, str> {
    scan::string(json).unwrap_or(Cow::Borrowed(json))
}

/// The entries of a stored log `text` (under `key`); absent text or `null` is an empty log.
/// Text that is not a JSON array is [`StorageError::Corrupt`].
pub fn parse_entries<V: EntryView>(
    key: &str,
    text: Option<&str>,
) -> Result<Vec<Stored<V>>, StorageError> {
    let found = log_items(key, text)?;
    Ok(found.into_iter().map(Stored::from_json_text).collect())
}

/// The items of the stored log `text` (under `key`), each as its JSON text; none for an
/// absent text or `null`. Text that is not a JSON array is [`StorageError::Corrupt`].
pub(crate) fn log_items<'t>(
    key: &str,
    text: Option<&'t str>,
) -> Result<Vec<&'t str>, StorageError> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    if let Some(found) = scan::array_document(text) {
        return Ok(found);
    }
    let corrupt = |reason: String| StorageError::Corrupt {
        key: key.to_owned(),
        reason,
    };
    let json = scan::document(text).map_err(|err: SyntaxError| corrupt(err.to_string()))?;
    if json == "null" {
        return Ok(Vec::new());
    }
    Err(corrupt(ReadError::invalid(json, "an array").to_string()))
}

/// The JSON array of `entries`, each written as its stored text.
pub fn join_entries<'a, V: 'a>(entries: impl IntoIterator<Item = &'a Stored<V>>) -> String {
    join_items(entries.into_iter().map(Stored::json))
}

/// The JSON array of `items`, each a JSON value's text.
pub(crate) fn join_items<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::from("[");
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item);
    }
    out.push(']');
    out
}

/// The text of the reasoning entry stored as `json` (see [`reasoning_text`]) when its first
/// line can be a header: `None` when the text starts with a character other than whitespace
/// or `=`, which no header does, so that most entries are not decoded.
pub(crate) fn reasoning_header_text(json: &str) -> Option<Cow<'_, str>> {
    let Some(body) = json.strip_prefix('"') else {
        return Some(reasoning_text(json));
    };
    let cannot_start_a_header = |first: u8| {
        first.is_ascii() && first != b'=' && first != b'\\' && !char::from(first).is_whitespace()
    };
    match body.as_bytes().first() {
        Some(&first) if cannot_start_a_header(first) => None,
        _ => Some(reasoning_text(json)),
    }
}

/// The text of a JSON string value `json`; lone surrogates (valid in `JSON.parse`, not in Rust
/// strings) read as U+FFFD. `None` when `json` is not a string.
pub(crate) fn decode_string(json: &str) -> Option<String> {
    scan::string(json).map(Cow::into_owned)
}

/// A field (its JSON) read as text: a string decoded (borrowed when it has no escapes), a
/// number or other value as its JSON, `null` as absent.
pub(crate) fn field_text(json: Option<&str>) -> Option<Cow<'_, str>> {
    let json = json?;
    scan::string(json).or_else(|| (json != "null").then_some(Cow::Borrowed(json)))
}

/// A field (its JSON) read as an iteration number: a non-negative integer, or a string
/// holding one.
pub(crate) fn field_iteration(json: Option<&str>) -> Option<u32> {
    let json = json?;
    if let Ok(n) = json.parse::<u32>() {
        return Some(n);
    }
    let number = match decode_string(json) {
        Some(text) => parse_decimal(text.trim())?,
        None => parse_decimal(json.trim())?,
    };
    (number.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&number))
        .then_some(number as u32)
}

/// A field (its JSON) read as a boolean.
pub(crate) fn field_bool(json: Option<&str>) -> Option<bool> {
    match json? {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_keep_every_entry_text_exactly() {
        let text = r#"["Ab\ud83d",{"b":1.1805916207174113e+21,"a":0.30000000000000004,"a":1e-7},  {"x" : [1, 2]}]"#;
        let entries: Vec<Stored<String>> = parse_entries("k", Some(text)).unwrap();
        assert_eq!(entries[0].json(), r#""Ab\ud83d""#);
        assert_eq!(entries[0].as_str(), "Ab\u{fffd}");
        assert_eq!(
            entries[1].json(),
            r#"{"b":1.1805916207174113e+21,"a":0.30000000000000004,"a":1e-7}"#
        );
        assert_eq!(
            join_entries(&entries),
            r#"["Ab\ud83d",{"b":1.1805916207174113e+21,"a":0.30000000000000004,"a":1e-7},{"x" : [1, 2]}]"#
        );
    }

    #[test]
    fn duplicate_keys_keep_the_last_value_and_odd_shapes_read_empty() {
        let object = r#"{"id":"a","x":{"id":1},"id":"b"}"#;
        assert_eq!(object_field(object, "id"), Some(r#""b""#));
        assert_eq!(object_field(object, "x"), Some(r#"{"id":1}"#));
        assert_eq!(object_field(object, "y"), None);
        assert_eq!(object_field("[1,2]", "id"), None);
        assert_eq!(object_field(r#"{"\u0069d":3}"#, "id"), Some("3"));
    }

    #[test]
    fn iteration_fields_are_read_leniently() {
        assert_eq!(field_iteration(Some("4")), Some(4));
        assert_eq!(field_iteration(Some("4.0")), Some(4));
        assert_eq!(field_iteration(Some(r#""7""#)), Some(7));
        assert_eq!(field_iteration(Some("-1")), None);
        assert_eq!(field_iteration(Some("1e300")), None);
        assert_eq!(field_iteration(Some("2.5")), None);
        assert_eq!(field_iteration(Some("null")), None);
    }
}
