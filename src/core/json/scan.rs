//! JSON text as `JSON.parse` reads it, without building values: where a value ends, the
//! members of an object and the items of an array as their exact text, and a string decoded.
//!
//! Nesting is followed with a stack, not recursion, so an entry nested deeper than any
//! recursion limit is read like any other.

use std::borrow::Cow;
use std::fmt;

/// Text that is not JSON: where reading stopped and what it expected there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset in the text.
    pub at: usize,
    /// What would have been valid there.
    pub expected: &'static str,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not JSON: expected {} at byte {}",
            self.expected, self.at
        )
    }
}

impl std::error::Error for SyntaxError {}

fn expected(at: usize, expected: &'static str) -> SyntaxError {
    SyntaxError { at, expected }
}

/// The first byte at or after `i` that is not JSON whitespace.
fn skip_space(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// The end of the string that opens at `i` (a `"`).
fn string_end(b: &[u8], i: usize) -> Result<usize, SyntaxError> {
    let mut i = i + 1;
    loop {
        match b.get(i) {
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => {
                i += match b.get(i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => 2,
                    Some(b'u')
                        if b.get(i + 2..i + 6)
                            .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) =>
                    {
                        6
                    }
                    _ => return Err(expected(i, "an escape sequence")),
                }
            }
            Some(0..=0x1f) | None => return Err(expected(i, "the end of the string")),
            Some(_) => i += 1,
        }
    }
}

/// The end of the digits starting at `i` (at least one).
fn digits_end(b: &[u8], i: usize) -> Result<usize, SyntaxError> {
    let end = i + b[i.min(b.len())..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if end == i {
        return Err(expected(i, "a digit"));
    }
    Ok(end)
}

/// The end of the number that starts at `i`.
fn number_end(b: &[u8], i: usize) -> Result<usize, SyntaxError> {
    let mut i = i + usize::from(b.get(i) == Some(&b'-'));
    i = match b.get(i) {
        Some(b'0') => i + 1,
        _ => digits_end(b, i)?,
    };
    if b.get(i) == Some(&b'.') {
        i = digits_end(b, i + 1)?;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        i = digits_end(b, i)?;
    }
    Ok(i)
}

/// The start of the value of the member whose key opens at `i`.
fn member_value_start(b: &[u8], i: usize) -> Result<usize, SyntaxError> {
    if b.get(i) != Some(&b'"') {
        return Err(expected(i, "a key"));
    }
    let i = skip_space(b, string_end(b, i)?);
    if b.get(i) != Some(&b':') {
        return Err(expected(i, "`:`"));
    }
    Ok(i + 1)
}

/// The end of the JSON value that starts at `start` (after any whitespace).
pub fn value_end(text: &str, start: usize) -> Result<usize, SyntaxError> {
    let b = text.as_bytes();
    let mut closers: Vec<u8> = Vec::new();
    let mut i = start;
    loop {
        i = skip_space(b, i);
        i = match b.get(i) {
            Some(b'{') => {
                let next = skip_space(b, i + 1);
                if b.get(next) == Some(&b'}') {
                    next + 1
                } else {
                    closers.push(b'}');
                    i = member_value_start(b, next)?;
                    continue;
                }
            }
            Some(b'[') => {
                let next = skip_space(b, i + 1);
                if b.get(next) == Some(&b']') {
                    next + 1
                } else {
                    closers.push(b']');
                    i = next;
                    continue;
                }
            }
            Some(b'"') => string_end(b, i)?,
            Some(b't') if b[i..].starts_with(b"true") => i + 4,
            Some(b'f') if b[i..].starts_with(b"false") => i + 5,
            Some(b'n') if b[i..].starts_with(b"null") => i + 4,
            Some(b'-' | b'0'..=b'9') => number_end(b, i)?,
            _ => return Err(expected(i, "a value")),
        };
        // A value ended at `i`: close what it ended, up to the next member or item.
        loop {
            let Some(&closer) = closers.last() else {
                return Ok(i);
            };
            i = skip_space(b, i);
            match b.get(i) {
                Some(b',') if closer == b'}' => {
                    i = member_value_start(b, skip_space(b, i + 1))?;
                    break;
                }
                Some(b',') => {
                    i += 1;
                    break;
                }
                Some(&c) if c == closer => {
                    closers.pop();
                    i += 1;
                }
                _ if closer == b'}' => return Err(expected(i, "`,` or `}`")),
                _ => return Err(expected(i, "`,` or `]`")),
            }
        }
    }
}

/// How deeply containers nest in `json` (the text of one value; `0` for a scalar), in one pass
/// over its bytes, so that a reader that follows nesting can refuse a depth before it starts.
pub fn depth(json: &str) -> usize {
    let b = json.as_bytes();
    let (mut open, mut deepest, mut i) = (0usize, 0usize, 0);
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                i = string_end(b, i).unwrap_or(b.len());
                continue;
            }
            b'{' | b'[' => {
                open += 1;
                deepest = deepest.max(open);
            }
            b'}' | b']' => open = open.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    deepest
}

/// The one JSON value `text` holds, without the whitespace around it.
pub fn document(text: &str) -> Result<&str, SyntaxError> {
    let start = skip_space(text.as_bytes(), 0);
    let end = value_end(text, start)?;
    if skip_space(text.as_bytes(), end) != text.len() {
        return Err(expected(end, "the end of the text"));
    }
    Ok(&text[start..end])
}

/// The items of the array that is the whole of `text` (whitespace around it allowed), each as
/// its text, read in one pass where [`document`] and [`items`] take two; `None` when `text`
/// holds anything else or is not valid JSON ([`document`] says why).
pub fn array_document(text: &str) -> Option<Vec<&str>> {
    let b = text.as_bytes();
    let open = skip_space(b, 0);
    if b.get(open) != Some(&b'[') {
        return None;
    }
    let mut found = Vec::new();
    let mut at = skip_space(b, open + 1);
    if b.get(at) == Some(&b']') {
        at += 1;
    } else {
        loop {
            let end = value_end(text, at).ok()?;
            found.push(&text[at..end]);
            let after = skip_space(b, end);
            match b.get(after) {
                Some(b',') => at = skip_space(b, after + 1),
                Some(b']') => {
                    at = after + 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    (skip_space(b, at) == b.len()).then_some(found)
}

/// The members of an object read with [`document`] or [`value_end`], in order: each key
/// decoded and each value as its text. Text that is not such an object yields nothing more.
pub struct Members<'a> {
    text: &'a str,
    at: usize,
}

/// The members of `json`, or `None` when it is not an object.
pub fn members(json: &str) -> Option<Members<'_>> {
    json.starts_with('{')
        .then_some(Members { text: json, at: 1 })
}

impl<'a> Iterator for Members<'a> {
    type Item = (Cow<'a, str>, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.text.as_bytes();
        let key_start = skip_space(b, self.at);
        if b.get(key_start) != Some(&b'"') {
            self.at = b.len();
            return None;
        }
        let read = || -> Result<(usize, usize, usize, usize), SyntaxError> {
            let key_end = string_end(b, key_start)?;
            let value_start = skip_space(b, member_value_start(b, key_start)?);
            let value_end = value_end(self.text, value_start)?;
            Ok((key_end, value_start, value_end, skip_space(b, value_end)))
        };
        let Ok((key_end, value_start, value_end, after)) = read() else {
            self.at = b.len();
            return None;
        };
        self.at = if b.get(after) == Some(&b',') {
            after + 1
        } else {
            b.len()
        };
        let key = string(&self.text[key_start..key_end])?;
        Some((key, &self.text[value_start..value_end]))
    }
}

/// The items of an array read with [`document`] or [`value_end`], each as its text. Text that
/// is not such an array yields nothing more.
pub struct Items<'a> {
    text: &'a str,
    at: usize,
}

/// The items of `json`, or `None` when it is not an array.
pub fn items(json: &str) -> Option<Items<'_>> {
    json.starts_with('[').then_some(Items { text: json, at: 1 })
}

impl<'a> Iterator for Items<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let b = self.text.as_bytes();
        let start = skip_space(b, self.at);
        if matches!(b.get(start), Some(b']') | None) {
            self.at = b.len();
            return None;
        }
        let Ok(end) = value_end(self.text, start) else {
            self.at = b.len();
            return None;
        };
        let after = skip_space(b, end);
        self.at = if b.get(after) == Some(&b',') {
            after + 1
        } else {
            b.len()
        };
        Some(&self.text[start..end])
    }
}

/// The field `name` of the object `json` as its text, the last one when the key is given
/// twice (as `JSON.parse` reads it); `None` when `json` is not an object or has no such field.
pub fn field<'a>(json: &'a str, name: &str) -> Option<&'a str> {
    members(json.trim_start())?
        .filter(|(key, _)| key == name)
        .last()
        .map(|(_, value)| value)
}

/// The text of the JSON string `json`, borrowed when it has no escapes; a lone surrogate
/// (valid in `JSON.parse`, not in a Rust string) reads as U+FFFD. `None` when `json` is not a
/// string.
pub fn string(json: &str) -> Option<Cow<'_, str>> {
    let inner = json.trim();
    let inner = inner.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.as_bytes().contains(&b'\\') {
        return Some(Cow::Borrowed(inner));
    }
    let mut out = String::with_capacity(inner.len());
    let mut rest = inner;
    let mut pending_high: Option<u32> = None;
    while let Some(slash) = rest.find('\\') {
        if slash > 0 {
            flush_high(&mut out, &mut pending_high);
            out.push_str(&rest[..slash]);
        }
        let escaped = rest[slash + 1..].chars().next()?;
        rest = &rest[slash + 1 + escaped.len_utf8()..];
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
        let unit = u32::from_str_radix(rest.get(..4)?, 16).ok()?;
        rest = &rest[4..];
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
    out.push_str(rest);
    Some(Cow::Owned(out))
}

fn flush_high(out: &mut String, pending_high: &mut Option<u32>) {
    if pending_high.take().is_some() {
        out.push(char::REPLACEMENT_CHARACTER);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_json_parse_accepts_is_read_and_the_rest_is_not() {
        for text in [
            "0",
            "-0.5e+10",
            " true ",
            "null",
            r#""a\u00e9\n\ud83d""#,
            r#"{"a":[1,{"b":[]},{}],"a":"x" , "c" : null}"#,
            "[ ]",
            "{ }",
        ] {
            assert!(document(text).is_ok(), "{text}");
        }
        for text in [
            "",
            "01",
            "1.",
            "-",
            "[1,]",
            "{\"a\" 1}",
            "{\"a\":1,}",
            "[1 2]",
            "\"a",
            "\"tab\there\"",
            "\"\\x\"",
            "tru",
            "{} {}",
            "NaN",
            "[1}",
        ] {
            assert!(document(text).is_err(), "{text}");
        }
    }

    #[test]
    fn nesting_deeper_than_any_recursion_limit_is_read() {
        let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(document(&deep).map(str::len), Ok(deep.len()));
        let open = "[".repeat(100_000);
        assert!(document(&open).is_err());
    }

    #[test]
    fn members_and_items_are_their_exact_text() {
        let object = r#"{ "id" : "a", "x":{"id":1}, "\u0069d":[1, 2 ] }"#;
        let found: Vec<(String, &str)> = members(document(object).unwrap())
            .unwrap()
            .map(|(k, v)| (k.into_owned(), v))
            .collect();
        assert_eq!(
            found,
            [
                ("id".to_owned(), r#""a""#),
                ("x".to_owned(), r#"{"id":1}"#),
                ("id".to_owned(), "[1, 2 ]")
            ]
        );
        assert_eq!(field(object, "id"), Some("[1, 2 ]"));
        assert_eq!(field(object, "y"), None);
        assert_eq!(field("[1]", "id"), None);
        let array: Vec<&str> = items("[ 1 ,\"b\",[ ] ]").unwrap().collect();
        assert_eq!(array, ["1", "\"b\"", "[ ]"]);
        assert_eq!(items("[]").unwrap().count(), 0);
    }

    #[test]
    fn an_array_document_is_read_in_one_pass_as_document_and_items_read_it() {
        let texts = [
            " [ 1 ,\"b\",[ ] , {\"a\":[2]} ] ",
            "[]",
            "[ ]\n",
            "[\"\\ud83d\"]",
            "[1,]",
            "[1 2]",
            "[1}",
            "[1] [2]",
            "[\"a",
            "[",
            "",
            "{\"a\":1}",
            "null",
            "[1,,2]",
        ];
        for text in texts {
            let two_passes = document(text)
                .ok()
                .and_then(items)
                .map(Iterator::collect::<Vec<_>>);
            assert_eq!(array_document(text), two_passes, "{text:?}");
        }
    }

    #[test]
    fn depth_counts_containers_and_not_brackets_inside_strings() {
        let cases = [
            ("1", 0),
            (r#""[{[""#, 0),
            ("[]", 1),
            (r#"{"a":[1,{"b":"]]]"}],"c":[[]]}"#, 3),
            (r#"["\"[", [[["\\"]]]]"#, 4),
        ];
        for (json, deepest) in cases {
            assert_eq!(depth(json), deepest, "{json}");
        }
        let deep = format!("{}{}", "[{\"a\":".repeat(50_000), "0}]".repeat(50_000));
        assert_eq!(depth(&deep), 100_000);
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
            (r#""é\u00e9""#, "éé"),
        ];
        for (json, text) in cases {
            assert_eq!(string(json).as_deref(), Some(text), "{json}");
        }
        assert_eq!(string("12"), None);
    }
}
