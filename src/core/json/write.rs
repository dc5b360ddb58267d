//! JSON text written as `JSON.stringify` writes it (compact, keys in the order given):
//! [`ToJson`] for the package's records and the values it hands to JavaScript.

use std::fmt::Write as _;

/// A value written as JSON text.
pub trait ToJson {
    /// Appends the JSON of `self` to `out`.
    fn write_json(&self, out: &mut String);
}

/// The JSON text of `value`.
pub fn to_json<T: ToJson + ?Sized>(value: &T) -> String {
    let mut out = String::new();
    value.write_json(&mut out);
    out
}

/// Appends `text` as a JSON string: `"`, `\` and control characters escaped, everything else
/// as it is.
pub fn write_string(out: &mut String, text: &str) {
    out.push('"');
    let mut plain = 0;
    for (i, byte) in text.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&text[plain..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{byte:04x}");
        } else {
            out.push_str(escape);
        }
        plain = i + 1;
    }
    out.push_str(&text[plain..]);
    out.push('"');
}

/// An object being written: fields in the order added, closed when dropped.
pub struct ObjectOut<'a> {
    out: &'a mut String,
    empty: bool,
}

impl<'a> ObjectOut<'a> {
    /// Opens an object in `out`.
    pub fn new(out: &'a mut String) -> Self {
        out.push('{');
        ObjectOut { out, empty: true }
    }

    fn key(&mut self, name: &str) -> &mut String {
        if !std::mem::take(&mut self.empty) {
            self.out.push(',');
        }
        write_string(self.out, name);
        self.out.push(':');
        self.out
    }

    /// Adds the field `name` with `value`.
    pub fn field<T: ToJson + ?Sized>(&mut self, name: &str, value: &T) -> &mut Self {
        value.write_json(self.key(name));
        self
    }

    /// Adds the field `name` when `value` is `Some`.
    pub fn field_opt<T: ToJson>(&mut self, name: &str, value: &Option<T>) -> &mut Self {
        if let Some(value) = value {
            self.field(name, value);
        }
        self
    }

    /// Adds the field `name` whose value is the JSON text `json`.
    pub fn raw(&mut self, name: &str, json: &str) -> &mut Self {
        self.key(name).push_str(json);
        self
    }
}

impl Drop for ObjectOut<'_> {
    fn drop(&mut self) {
        self.out.push('}');
    }
}

/// Appends the items of `values` as a JSON array.
pub fn write_array<T: ToJson + ?Sized>(
    out: &mut String,
    values: impl IntoIterator<Item = impl std::ops::Deref<Target = T>>,
) {
    out.push('[');
    for (i, value) in values.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        value.write_json(out);
    }
    out.push(']');
}

impl ToJson for str {
    fn write_json(&self, out: &mut String) {
        write_string(out, self);
    }
}

impl ToJson for String {
    fn write_json(&self, out: &mut String) {
        write_string(out, self);
    }
}

impl ToJson for bool {
    fn write_json(&self, out: &mut String) {
        out.push_str(if *self { "true" } else { "false" });
    }
}

macro_rules! integers_to_json {
    ($($t:ty),*) => {$(
        impl ToJson for $t {
            fn write_json(&self, out: &mut String) {
                let _ = write!(out, "{self}");
            }
        }
    )*};
}
integers_to_json!(u32, u64, usize, i64);

/// A number as `JSON.stringify` writes it: whole numbers without a fraction, `null` for what
/// JSON cannot hold (NaN, infinities).
impl ToJson for f64 {
    fn write_json(&self, out: &mut String) {
        if self.is_finite() {
            let _ = write!(out, "{self}");
        } else {
            out.push_str("null");
        }
    }
}

impl<T: ToJson + ?Sized> ToJson for &T {
    fn write_json(&self, out: &mut String) {
        (**self).write_json(out);
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn write_json(&self, out: &mut String) {
        match self {
            Some(value) => value.write_json(out),
            None => out.push_str("null"),
        }
    }
}

impl<T: ToJson> ToJson for [T] {
    fn write_json(&self, out: &mut String) {
        write_array::<T>(out, self);
    }
}

impl<T: ToJson> ToJson for Vec<T> {
    fn write_json(&self, out: &mut String) {
        self.as_slice().write_json(out);
    }
}

impl<T: ToJson, const N: usize> ToJson for [T; N] {
    fn write_json(&self, out: &mut String) {
        self.as_slice().write_json(out);
    }
}

impl ToJson for super::read::RawJson {
    fn write_json(&self, out: &mut String) {
        out.push_str(self.get());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::read::{from_text, RawJson};

    #[test]
    fn strings_are_escaped_as_json_stringify_does() {
        assert_eq!(
            to_json("a\"b\\c\n\t\u{1}\u{7f}é😀/"),
            "\"a\\\"b\\\\c\\n\\t\\u0001\u{7f}é😀/\""
        );
        for text in ["", "plain", "\u{8}\u{c}\r", "mixed \"quote\" \\ end\u{1f}"] {
            assert_eq!(from_text::<String>(&to_json(text)).as_deref(), Ok(text));
        }
    }

    #[test]
    fn objects_keep_the_order_given_and_skip_absent_options() {
        let mut out = String::new();
        {
            let mut object = ObjectOut::new(&mut out);
            object
                .field("b", &1u32)
                .field("a", &[0.5, 2.0])
                .field_opt::<u32>("none", &None)
                .field("null", &None::<u32>)
                .raw("raw", "{\"x\" : 1}")
                .field("nan", &f64::NAN)
                .field("list", &vec![RawJson::from("true")]);
        }
        assert_eq!(
            out,
            r#"{"b":1,"a":[0.5,2],"null":null,"raw":{"x" : 1},"nan":null,"list":[true]}"#
        );
    }
}
