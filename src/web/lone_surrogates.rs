//! JavaScript strings carried through Rust exactly, lone surrogates included.
//!
//! A JavaScript string is any sequence of UTF-16 units; a Rust `String` is UTF-8 and cannot
//! hold a surrogate that is not half of a pair (text cut with `slice()` in the middle of an
//! emoji has one). wasm-bindgen and `TextEncoder` turn such a unit into U+FFFD, which would
//! change a caller's text, or an entry another app stored, in silence. Here each lone
//! surrogate U+D800 + n becomes the private-use character U+10F800 + n (2,048 of them, the
//! end of plane 16), and a character that is really in U+10F7FF..=U+10FFFF is written after
//! the mark U+10F7FF, so that the mapping is one to one and [`to_js`] gives back exactly the
//! string [`from_js`] was given. The core sees ordinary text.

use crate::core::order::text_search::TextSearch;
use js_sys::JsString;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Precedes a character of U+10F7FF..=U+10FFFF that the JavaScript string really held.
const MARK: char = '\u{10F7FF}';
/// Where the 2,048 lone surrogates (U+D800..=U+DFFF) are placed.
const FIRST_STANDIN: u32 = 0x10F800;
/// Units handed to `String.fromCharCode` at a time (its arguments are limited).
const UNITS_PER_CALL: usize = 8192;

#[wasm_bindgen]
extern "C" {
    /// A JavaScript string, seen through the method below.
    #[wasm_bindgen(js_name = String)]
    type Utf16Text;

    /// `String.prototype.isWellFormed` (Chrome 111, Firefox 119, Safari 16.4); it throws
    /// where it is missing.
    #[wasm_bindgen(method, catch, js_name = isWellFormed)]
    fn is_well_formed(this: &Utf16Text) -> Result<bool, JsValue>;
}

/// Whether `js` is well-formed UTF-16 (no lone surrogate).
fn well_formed(js: &JsString) -> bool {
    js.unchecked_ref::<Utf16Text>()
        .is_well_formed()
        .unwrap_or_else(|_| std::char::decode_utf16(js.iter()).all(|unit| unit.is_ok()))
}

/// Whether `text` holds a character that must be escaped or stands for a lone surrogate (all
/// are four-byte characters led by 0xF4).
fn needs_mapping(text: &str) -> bool {
    text.as_bytes().contains(&0xF4) && text.chars().any(|c| c >= MARK)
}

/// The Rust text of `js` (converted by `convert` when it is well-formed), lone surrogates
/// and characters of the mapped range mapped as the module says.
pub fn from_js_with(js: &JsString, convert: impl FnOnce(&JsString) -> String) -> String {
    if well_formed(js) {
        let text = convert(js);
        if !needs_mapping(&text) {
            return text;
        }
        let mut mapped = String::with_capacity(text.len() + 8);
        for c in text.chars() {
            push_literal(&mut mapped, c);
        }
        return mapped;
    }
    let mut mapped = String::with_capacity(js.length() as usize);
    for unit in std::char::decode_utf16(js.iter()) {
        match unit {
            Ok(c) => push_literal(&mut mapped, c),
            Err(lone) => mapped.push(standin(lone.unpaired_surrogate())),
        }
    }
    mapped
}

/// The Rust text of `js` (see [`from_js_with`]).
pub fn from_js(js: &JsString) -> String {
    from_js_with(js, |js| String::from(js))
}

/// The JavaScript string `text` stands for: the inverse of [`from_js`].
pub fn to_js(text: &str) -> JsString {
    if !needs_mapping(text) {
        return JsString::from(text);
    }
    let mut units: Vec<u16> = Vec::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == MARK {
            if let Some(literal) = chars.next() {
                push_utf16(&mut units, literal);
            }
        } else if let Some(lone) = lone_of(c) {
            units.push(lone);
        } else {
            push_utf16(&mut units, c);
        }
    }
    units
        .chunks(UNITS_PER_CALL)
        .map(JsString::from_char_code)
        .fold(JsString::from(""), |all, part| all.concat(&part))
}

/// `json` (the text of `JSON.stringify`, which writes a lone surrogate as `\udXXX`) with each
/// escaped lone surrogate replaced by the character that stands for it, so that the core reads
/// it (a pair of escapes stays as it is).
pub fn unescape_lone_surrogates(json: &str) -> std::borrow::Cow<'_, str> {
    if !json.contains_text("\\u") {
        return json.into();
    }
    let bytes = json.as_bytes();
    let escape_at = |i: usize| -> Option<u16> {
        let hex = json.get(i + 2..i + 6)?;
        (bytes[i] == b'\\' && bytes.get(i + 1) == Some(&b'u'))
            .then(|| u16::from_str_radix(hex, 16).ok())
            .flatten()
    };
    let mut out = String::with_capacity(json.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = escape_at(i) else {
            // `\\`, `\"`, …: the escaped character is skipped with its backslash.
            i += 2;
            continue;
        };
        let high = (0xD800..0xDC00).contains(&unit);
        let paired = high && escape_at(i + 6).is_some_and(|low| (0xDC00..0xE000).contains(&low));
        if paired {
            i += 12;
        } else if (0xD800..0xE000).contains(&unit) {
            out.push_str(&json[copied..i]);
            out.push(standin(unit));
            i += 6;
            copied = i;
        } else {
            i += 6;
        }
    }
    if copied == 0 {
        return json.into();
    }
    out.push_str(&json[copied..]);
    out.into()
}

fn push_literal(text: &mut String, c: char) {
    if c >= MARK {
        text.push(MARK);
    }
    text.push(c);
}

fn push_utf16(units: &mut Vec<u16>, c: char) {
    let mut buffer = [0u16; 2];
    units.extend_from_slice(c.encode_utf16(&mut buffer));
}

/// The character that stands for the lone surrogate `unit`.
fn standin(unit: u16) -> char {
    char::from_u32(FIRST_STANDIN + u32::from(unit - 0xD800)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The lone surrogate `c` stands for, if it stands for one.
fn lone_of(c: char) -> Option<u16> {
    let offset = u32::from(c).checked_sub(FIRST_STANDIN)?;
    u16::try_from(0xD800 + offset).ok()
}
