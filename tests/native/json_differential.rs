//! The crate's JSON reader decides "corrupt" or "accepted" for every stored key: here it is held
//! against serde_json on generated, mutated and hostile documents — the same verdict on validity,
//! the same strings decoded, the same numbers (bit for bit against `str::parse`), and spans that
//! are exactly each value's text.
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

// The generator alone: this test runs without the `testing` feature that `common` needs.
#[path = "common/seeded.rs"]
mod seeded;

use context_compactor::core::json::read::FromJson;
use context_compactor::core::json::scan::{document, items, members, string};
use seeded::Seeded;
use serde_json::Value;

const STRINGS: [&str; 12] = [
    "",
    "plain",
    "with \"quotes\"",
    "back\\slash",
    "tab\there",
    "new\nline",
    "ünïcödé",
    "emoji 🎯 📊",
    "\u{1}\u{1f}",
    "漢字テキスト",
    "/slash/",
    "\u{2028}\u{2029}",
];
const NUMBERS: [&str; 14] = [
    "0",
    "-0",
    "1",
    "-17",
    "3.25",
    "1e3",
    "1E-7",
    "-2.5e+10",
    "123456789012345678901234567890",
    "0.1",
    "1.7976931348623157e308",
    "5e-324",
    "9007199254740993",
    "77928578787.01234",
];

/// A random JSON text of `depth` levels at most, written with random whitespace.
fn value(rng: &mut Seeded, depth: u32, out: &mut String) {
    let space = |rng: &mut Seeded, out: &mut String| {
        out.push_str(rng.pick(&["", "", " ", "\n  ", "\t", "\r\n"]))
    };
    match rng.next(if depth == 0 { 6 } else { 8 }) {
        0 => out.push_str("null"),
        1 => out.push_str(rng.pick(&["true", "false"])),
        2 | 3 => out.push_str(rng.pick(&NUMBERS)),
        4 | 5 => {
            let text = rng.pick(&STRINGS);
            if rng.next(2) == 0 {
                out.push_str(&serde_json::to_string(text).unwrap());
            } else {
                // Escapes of every kind, as other writers produce them.
                out.push('"');
                for c in text.chars() {
                    match rng.next(3) {
                        0 if c.is_ascii_alphanumeric() => out.push(c),
                        _ => {
                            let mut units = [0u16; 2];
                            for unit in c.encode_utf16(&mut units) {
                                out.push_str(&format!("\\u{unit:04x}"));
                            }
                        }
                    }
                }
                out.push('"');
            }
        }
        6 => {
            out.push('[');
            for i in 0..rng.next(4) {
                if i > 0 {
                    out.push(',');
                }
                space(rng, out);
                value(rng, depth - 1, out);
                space(rng, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..rng.next(4) {
                if i > 0 {
                    out.push(',');
                }
                space(rng, out);
                let key = rng.pick(&["a", "b", "iteration", "é", "a"]);
                out.push_str(&serde_json::to_string(key).unwrap());
                space(rng, out);
                out.push(':');
                space(rng, out);
                value(rng, depth - 1, out);
            }
            out.push('}');
        }
    }
}

/// `text` with one to three bytes changed, inserted or removed, from JSON's own characters.
fn mutate(rng: &mut Seeded, text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..=rng.next(3) {
        let at = rng.next(bytes.len() as u64 + 1) as usize;
        let byte = b"{}[]\",:\\0123456789.eE+-tfnul \n\x01"[rng.next(31) as usize];
        match rng.next(3) {
            0 if at < bytes.len() => bytes[at] = byte,
            1 if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => bytes.insert(at, byte),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// What serde_json refuses that `JSON.parse` (and this reader) accept on purpose: escaped
/// lone surrogates, numbers beyond the double range, nesting beyond its recursion limit.
fn known_difference(err: &serde_json::Error, text: &str) -> bool {
    let message = err.to_string();
    // serde_json wants a `\u` low surrogate right after a high one, and says so this way.
    let high_surrogate = text.to_ascii_lowercase().contains("\\ud8")
        || ["\\ud9", "\\uda", "\\udb"]
            .iter()
            .any(|escape| text.to_ascii_lowercase().contains(escape));
    ["surrogate", "out of range", "recursion limit"]
        .iter()
        .any(|known| message.contains(known))
        || (high_surrogate && message.contains("hex escape"))
}

/// The value this reader sees in `json`, as serde_json's tree (numbers by our reader, kept
/// where serde's are compared against `str::parse`).
fn ours(json: &str) -> Value {
    let json = json.trim_matches([' ', '\t', '\n', '\r']);
    match json.as_bytes()[0] {
        b'{' => Value::Object(
            members(json)
                .unwrap()
                .map(|(k, v)| (k.into_owned(), ours(v)))
                .collect(),
        ),
        b'[' => Value::Array(items(json).unwrap().map(ours).collect()),
        b'"' => Value::String(string(json).unwrap().into_owned()),
        b't' | b'f' => Value::Bool(json == "true"),
        b'n' => Value::Null,
        _ => {
            let number = f64::from_json(json).unwrap();
            assert_eq!(
                number.to_bits(),
                json.parse::<f64>().unwrap().to_bits(),
                "{json}"
            );
            Value::String(format!("number {json}"))
        }
    }
}

/// `value` with every number (serde_json's, or [`ours`]'s "number …" texts) made `null`: each
/// was checked bit for bit already, and their texts differ in layout.
fn without_numbers(value: Value) -> Value {
    match value {
        Value::Number(_) => Value::Null,
        Value::String(s) if s.starts_with("number ") => Value::Null,
        Value::Array(items) => Value::Array(items.into_iter().map(without_numbers).collect()),
        Value::Object(members) => Value::Object(
            members
                .into_iter()
                .map(|(k, v)| (k, without_numbers(v)))
                .collect(),
        ),
        other => other,
    }
}

fn check(text: &str) -> bool {
    let theirs = serde_json::from_str::<Value>(text);
    let verdict = document(text);
    match (&theirs, &verdict) {
        (Err(err), Ok(_)) if known_difference(err, text) => return false,
        (Err(err), Ok(_)) => panic!("accepted what serde_json refuses ({err}): {text:?}"),
        (Ok(_), Err(err)) => panic!("refused what serde_json accepts ({err}): {text:?}"),
        (Err(_), Err(_)) => return false,
        (Ok(_), Ok(_)) => {}
    }
    let (theirs, span) = (theirs.unwrap(), verdict.unwrap());
    assert_eq!(
        span,
        text.trim_matches([' ', '\t', '\n', '\r']),
        "the span is the value's text"
    );
    assert_eq!(
        without_numbers(ours(span)),
        without_numbers(theirs),
        "{text:?}"
    );
    true
}

#[test]
fn the_reader_agrees_with_serde_json_on_generated_mutated_and_hostile_documents() {
    let mut rng = Seeded(0x9e37_79b9_7f4a_7c15);
    let (mut valid, mut invalid) = (0, 0);
    for round in 0..30_000 {
        let mut text = String::new();
        value(&mut rng, 4, &mut text);
        let text = if round % 2 == 0 {
            text
        } else {
            mutate(&mut rng, &text)
        };
        if check(&text) {
            valid += 1;
        } else {
            invalid += 1;
        }
    }
    for hostile in [
        "",
        " ",
        "[",
        "]",
        "{",
        "}",
        "[1,]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "[1 2]",
        "01",
        "-",
        "1.",
        ".5",
        "1e",
        "1e+",
        "+1",
        "NaN",
        "Infinity",
        "\"\\x\"",
        "\"\u{1}\"",
        "\"\\u12\"",
        "[\"a\"]]",
        "tru",
        "nul",
        "{\"a\":1}{",
        "\"unterminated",
        "[[[[[[[[[[]]]]]]]]]]",
        "{\"a\":{\"b\":{\"c\":[]}}}",
        "\"\\ud83d\\ude00\"",
        "\"\\uD83D\\uDE00\"",
        "1e400",
        "\"\\ud800\"",
        "-0.0e-0",
        "[-]",
    ] {
        check(hostile);
    }
    assert!(
        valid > 10_000 && invalid > 5_000,
        "{valid} valid, {invalid} invalid"
    );
}
