//! JSON text written as `JSON.stringify` writes it (compact, keys in the order given):
//! [`ToJson`] for the package's records and the values it hands to JavaScript.

use std::fmt::Write as _;

use crate::core::json::number::shortest_decimal;

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

    /// Adds the field `name` whose value `write` appends.
    pub fn field_with(&mut self, name: &str, write: impl FnOnce(&mut String)) -> &mut Self {
        write(self.key(name));
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
/// JSON cannot hold (NaN, infinities). See [`write_number`].
impl ToJson for f64 {
    fn write_json(&self, out: &mut String) {
        write_number(out, *self);
    }
}

/// Appends `value` as `JSON.stringify` writes it: `null` for NaN and infinities, `0` for both
/// zeros, else the shortest decimal that reads back as `value` (the nearest of the shortest),
/// positional from 1e-6 to below 1e21 and `1.5e+21` beyond.
pub fn write_number(out: &mut String, value: f64) {
    if !value.is_finite() {
        out.push_str("null");
        return;
    }
    if value.fract() == 0.0 && value.abs() < 9_007_199_254_740_992.0 {
        // Whole and below 2^53: the cast is exact.
        let _ = write!(out, "{}", value as i64);
        return;
    }
    if value < 0.0 {
        out.push('-');
    }
    let (digits, point) = shortest_decimal(value.abs());
    let digits = &digits.to_string();
    let exponent = point - 1; // the power of ten of the first digit
    if (-5..=21).contains(&point) {
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
            out.push_str(digits);
        } else {
            let point = point as usize;
            if digits.len() <= point {
                out.push_str(digits);
                out.extend(std::iter::repeat_n('0', point - digits.len()));
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(
            out,
            "e{}{}",
            if exponent < 0 { '-' } else { '+' },
            exponent.abs()
        );
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
    fn numbers_are_laid_out_as_json_stringify_does() {
        // The right-hand sides are what `JSON.stringify` gives (checked in Node 20).
        for (value, json) in [
            (0.0, "0"),
            (-0.0, "0"),
            (3.0, "3"),
            (-42.0, "-42"),
            (1_732_000_000_123.0, "1732000000123"),
            (9_007_199_254_740_991.0, "9007199254740991"),
            (0.1, "0.1"),
            (0.7, "0.7"),
            (-2.5, "-2.5"),
            (991.402745709, "991.402745709"),
            (0.28, "0.28"),
            (0.000_001, "0.000001"),
            (0.000_001_5, "0.0000015"),
            (1e-7, "1e-7"),
            (1.5e-10, "1.5e-10"),
            (1e21, "1e+21"),
            (1.234_5e25, "1.2345e+25"),
            (1e20, "100000000000000000000"),
            (123_456.789, "123456.789"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
        ] {
            assert_eq!(to_json(&value), json, "{value:e}");
        }
        // Where JavaScript writes 16 or 17 digits, so does this (the double rounding that wrote
        // the 15th digit of 77928578787.01234 as 4 is gone).
        assert_eq!(to_json(&(1.0 / 3.0)), "0.3333333333333333");
        assert_eq!(to_json(&(0.1 + 0.2)), "0.30000000000000004");
        assert_eq!(to_json(&77_928_578_787.012_34), "77928578787.01234");
        // Two as short and as near: the even one, as V8 writes it.
        assert_eq!(
            to_json(&(698_901_099_704_227.0 + 0.25)),
            "698901099704227.2"
        );
        assert_eq!(to_json(&f64::MAX), "1.7976931348623157e+308");
        assert_eq!(to_json(&5e-324), "5e-324");
        assert_eq!(to_json(&2f64.powi(-1022)), "2.2250738585072014e-308");
        for value in [
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            1.0 / 7.0,
            2.0f64.sqrt() * 1e-100,
        ] {
            let back: f64 = to_json(&value).parse().unwrap_or(f64::NAN);
            assert!(((back - value) / value).abs() < 1e-14, "{value:e}");
        }
        // A fraction of up to 15 significant digits reads back as itself.
        for value in [
            0.1,
            0.2,
            0.3,
            12.5,
            99.99,
            0.123_456_789_012_345,
            271.828_182_845_904,
        ] {
            assert_eq!(to_json(&value).parse::<f64>(), Ok(value));
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
