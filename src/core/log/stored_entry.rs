//! One entry of a stored log, kept as the exact JSON text another program wrote.
//!
//! Entries belong to the app that wrote them: the package reads the fields it needs from a
//! lenient view and writes the original text back unchanged, so numbers keep their digits
//! (`1.1805916207174113e+21`), strings keep lone surrogates (`"Ab\ud83d"`, which
//! `JSON.stringify` writes for text cut with `.slice`) and field order stays as it was.
//! Anything `JSON.parse` accepts is accepted, duplicate keys included (the last one wins).

use std::ops::Deref;

use std::borrow::Cow;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::core::error::StorageError;

/// What the package reads from an entry's JSON text; never fails (unknown shapes read as
/// empty).
pub trait EntryView: Sized {
    /// The view of `raw`, a JSON value as stored.
    fn read(raw: &RawValue) -> Self;
}

/// A stored entry: its exact JSON text and the view read from it. Two entries are equal when
/// their texts are.
#[derive(Debug, Clone)]
pub struct Stored<V> {
    raw: Box<RawValue>,
    view: V,
}

impl<V: EntryView> Stored<V> {
    /// The entry stored as `raw`.
    pub(crate) fn from_raw(raw: Box<RawValue>) -> Self {
        let view = V::read(&raw);
        Stored { raw, view }
    }

    /// A new entry written as the JSON of `value`.
    pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(Self::from_raw)
    }
}

impl<V> Stored<V> {
    /// The JSON text as stored.
    pub fn json(&self) -> &str {
        self.raw.get()
    }

    /// The stored JSON value.
    pub fn raw(&self) -> &RawValue {
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
        self.raw.get() == other.raw.get()
    }
}

impl<V> Serialize for Stored<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(serializer)
    }
}

impl<'de, V: EntryView> Deserialize<'de> for Stored<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(Self::from_raw)
    }
}

/// A reasoning entry reads as its text: a JSON string decoded, anything else as its JSON.
impl EntryView for String {
    fn read(raw: &RawValue) -> Self {
        decode_string(raw.get()).unwrap_or_else(|| raw.get().to_owned())
    }
}

/// The entries of a stored log `text` (under `key`); absent text or `null` is an empty log.
/// Text that is not a JSON array is [`StorageError::Corrupt`].
pub fn parse_entries<V: EntryView>(
    key: &str,
    text: Option<&str>,
) -> Result<Vec<Stored<V>>, StorageError> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    serde_json::from_str::<Option<Vec<Stored<V>>>>(text)
        .map(Option::unwrap_or_default)
        .map_err(|err| StorageError::Corrupt {
            key: key.to_owned(),
            reason: err.to_string(),
        })
}

/// The JSON array of `entries`, each written as its stored text.
pub fn join_entries<'a, V: 'a>(entries: impl IntoIterator<Item = &'a Stored<V>>) -> String {
    let mut out = String::from("[");
    for (i, entry) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(entry.json());
    }
    out.push(']');
    out
}

/// The JSON of the field `name` of the object `json`, the last one when the key is given twice
/// (as `JSON.parse` reads it); `None` when `json` is not an object or has no such field.
pub(crate) fn object_field<'a>(json: &'a str, name: &str) -> Option<&'a str> {
    if !json.trim_start().starts_with('{') {
        return None;
    }
    let Fields(fields) = serde_json::from_str(json).ok()?;
    fields
        .into_iter()
        .rev()
        .find(|(key, _)| key.as_str() == name)
        .map(|(_, value)| value.get())
}

/// The fields of an object in order, values borrowed as stored, duplicates included.
struct Fields<'a>(Vec<(Key<'a>, &'a RawValue)>);

impl<'de> Deserialize<'de> for Fields<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
                let mut fields = Vec::new();
                while let Some(entry) = map.next_entry::<Key<'de>, &'de RawValue>()? {
                    fields.push(entry);
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}

/// An object key, borrowed from the text when it has no escapes.
pub struct Key<'a>(Cow<'a, str>);

impl Key<'_> {
    /// The key's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The text of a JSON string value `json`; lone surrogates (valid in `JSON.parse`, not in Rust
/// strings) read as U+FFFD. `None` when `json` is not a string.
pub(crate) fn decode_string(json: &str) -> Option<String> {
    let inner = json.trim();
    let inner = inner.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        return Some(inner.to_owned());
    }
    // serde_json copies runs of plain text at once; only a lone surrogate needs the loop below.
    if let Ok(text) = serde_json::from_str::<String>(json) {
        return Some(text);
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    let mut pending_high: Option<u32> = None;
    while let Some(c) = chars.next() {
        if c != '\\' {
            flush_high(&mut out, &mut pending_high);
            out.push(c);
            continue;
        }
        let escaped = chars.next()?;
        if escaped != 'u' {
            flush_high(&mut out, &mut pending_high);
            out.push(match escaped {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                'b' => '\u{8}',
                'f' => '\u{c}',
                other => other,
            });
            continue;
        }
        let hex: String = chars.by_ref().take(4).collect();
        let unit = u32::from_str_radix(&hex, 16).ok()?;
        match (pending_high.take(), unit) {
            (Some(high), 0xDC00..=0xDFFF) => {
                let code = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00);
                out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            (high, 0xD800..=0xDBFF) => {
                if high.is_some() {
                    out.push(char::REPLACEMENT_CHARACTER);
                }
                pending_high = Some(unit);
            }
            (high, _) => {
                if high.is_some() {
                    out.push(char::REPLACEMENT_CHARACTER);
                }
                out.push(char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
        }
    }
    flush_high(&mut out, &mut pending_high);
    Some(out)
}

fn flush_high(out: &mut String, pending_high: &mut Option<u32>) {
    if pending_high.take().is_some() {
        out.push(char::REPLACEMENT_CHARACTER);
    }
}

/// A field (its JSON) read as text: a string decoded (borrowed when it has no escapes), a
/// number or other value as its JSON, `null` as absent.
pub(crate) fn field_text(json: Option<&str>) -> Option<Cow<'_, str>> {
    let json = json?;
    if let Some(inner) = json.strip_prefix('"').and_then(|j| j.strip_suffix('"')) {
        if !inner.contains('\\') {
            return Some(Cow::Borrowed(inner));
        }
    }
    match decode_string(json) {
        Some(text) => Some(Cow::Owned(text)),
        None => (json != "null").then_some(Cow::Borrowed(json)),
    }
}

/// A field (its JSON) read as an iteration number: a non-negative integer, or a string
/// holding one.
pub(crate) fn field_iteration(json: Option<&str>) -> Option<u32> {
    let json = json?;
    if let Ok(n) = json.parse::<u32>() {
        return Some(n);
    }
    let number: f64 = match decode_string(json) {
        Some(text) => text.trim().parse().ok()?,
        None => json.trim().parse().ok()?,
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
    fn strings_decode_like_json_parse() {
        let cases = [
            (r#""plain""#, "plain"),
            (r#""a\nb\t\"q\" \\ \/""#, "a\nb\t\"q\" \\ /"),
            (r#""\ud83d\ude00 ok""#, "😀 ok"),
            (r#""\udc00 \ud83d""#, "\u{fffd} \u{fffd}"),
            (r#""\ud83d\u0041""#, "\u{fffd}A"),
            (r#""\\ud83d""#, "\\ud83d"),
        ];
        for (json, text) in cases {
            assert_eq!(decode_string(json).as_deref(), Some(text), "{json}");
        }
        assert_eq!(decode_string("12"), None);
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
