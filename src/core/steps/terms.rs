//! The terms facts are made of, read from text: identifiers (ids, file names, URLs, long
//! numbers), numbers, digit grouping; and the text of each kind of entry they are read from.

use crate::core::order::join::Joined;
use crate::core::order::text_search::TextSearch;
use std::borrow::Cow;

use crate::core::log::entries::{StoredExecution, StoredReasoning, StoredToolActivity};
use crate::core::log::iteration::parse_summary_header;
use crate::core::order::sort::unique_in_order;

/// The longest identifier (in bytes) a term can be.
pub(crate) const MAX_TOKEN_LEN: usize = 120;

/// `3,125,206` → `3125206`: a summary may group digits differently from the logs.
pub(crate) fn without_digit_commas(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let grouped = |i: usize| {
        i > 0 && bytes[i - 1].is_ascii_digit() && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
    };
    // Copied in slices between the removed commas; most texts have none and are not copied.
    let mut out: Option<Vec<u8>> = None;
    let (mut copied, mut at) = (0, 0);
    while let Some(offset) = bytes[at..].iter().position(|b| *b == b',') {
        let comma = at + offset;
        if grouped(comma) {
            let out = out.get_or_insert_with(|| Vec::with_capacity(bytes.len()));
            out.extend_from_slice(&bytes[copied..comma]);
            copied = comma + 1;
        }
        at = comma + 1;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.extend_from_slice(&bytes[copied..]);
            // Only ASCII commas between ASCII digits were removed: the rest is the same UTF-8.
            Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_owned()))
        }
    }
}

/// The text of a reasoning entry without its header line when it is a marker.
pub(crate) fn reasoning_text(entry: &StoredReasoning) -> &str {
    let text: &str = entry;
    if parse_summary_header(text).is_some() || text.trim_start().starts_with("===") {
        return text.split_once('\n').map_or("", |(_, rest)| rest);
    }
    text
}

pub(crate) fn execution_text(entry: &StoredExecution) -> String {
    let fields = entry.fields();
    let mut text = fields.code().into_owned();
    for part in [
        fields.result_json().map(str::to_owned),
        fields.error_message(),
    ]
    .into_iter()
    .flatten()
    {
        text.push('\n');
        text.push_str(&part);
    }
    text
}

pub(crate) fn tool_text(entry: &StoredToolActivity) -> String {
    let fields = entry.fields();
    [
        fields.details().map(|d| d.into_owned()),
        fields.error_message(),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .joined("\n")
}

/// Bytes that end a token: ASCII whitespace and the punctuation around identifiers in text,
/// code and JSON. Splitting at ASCII bytes never cuts a UTF-8 character.
const SEPARATORS: [bool; 256] = byte_set(b" \n\t\r\"'`<>()[]{},;|=*");

/// Calls `each` with every token of `text` that may be an identifier: a whole URL, else each
/// `:`-separated part, trimmed of punctuation. `text` has its digit-group commas removed. One
/// pass over the bytes: the text of 1..N-1 can be megabytes.
pub(crate) fn each_candidate<'t>(text: &'t str, mut each: impl FnMut(&'t str)) {
    let trim = |token: &'t str| trim_ascii_matching(token, &TRIMMED);
    let bytes = text.as_bytes();
    let mut start = 0;
    loop {
        let mut end = start;
        while end < bytes.len() && !SEPARATORS[usize::from(bytes[end])] {
            end += 1;
        }
        let token = trim(&text[start..end]);
        // Most tokens hold no colon: no URL, nothing to split.
        let colon = token.bytes().any(|b| b == b':');
        if !token.is_empty() && (!colon || is_url(token)) {
            each(token);
        } else if colon && !token.contains_text("://") {
            for part in token.split(':') {
                let part = trim(part);
                if !part.is_empty() {
                    each(part);
                }
            }
        }
        if end >= bytes.len() {
            return;
        }
        start = end + 1;
    }
}

/// The punctuation a candidate token is trimmed of.
const TRIMMED: [bool; 256] = byte_set(b".:!?/-");

/// The table of `bytes`, for [`trim_ascii_matching`].
pub(crate) const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    table
}

/// `text` without the bytes of `set` (ASCII, see [`byte_set`]) at either end:
/// `str::trim_matches` walks characters through a searcher, and was the hottest spot of the
/// check of a summary.
pub(crate) fn trim_ascii_matching<'t>(text: &'t str, set: &[bool; 256]) -> &'t str {
    let bytes = text.as_bytes();
    let kept = |b: &u8| !set[usize::from(*b)];
    let start = bytes.iter().position(kept).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(kept).map_or(start, |i| i + 1);
    // Only ASCII bytes were cut: both ends are character boundaries.
    &text[start..end]
}

pub(crate) fn is_url(token: &str) -> bool {
    token.starts_with("http://") || token.starts_with("https://")
}

/// URLs, file names, ids (words joined by `_`, or letters and digits joined by `-`) and
/// numbers of four or more digits in `text`, in order, each once.
pub fn identifiers_in(text: &str) -> Vec<String> {
    let text = without_digit_commas(text);
    let mut found: Vec<String> = Vec::new();
    each_candidate(&text, |token| {
        if is_url(token) || is_identifier(token) {
            found.push(token.to_owned());
        }
    });
    unique_in_order(&mut found);
    found
}

pub(crate) fn is_identifier(token: &str) -> bool {
    if token.len() > MAX_TOKEN_LEN {
        return false;
    }
    let (mut letters, mut digits, mut points, mut joiners) = (0, 0, 0, 0);
    for byte in token.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' => letters += 1,
            b'0'..=b'9' => digits += 1,
            b'.' => points += 1,
            b'_' | b'-' | b'/' => joiners += 1,
            _ => return false,
        }
    }
    let is_number = letters == 0 && joiners == 0 && points <= 1;
    if is_number {
        return digits >= 4;
    }
    // `data.rows` is code, `data.csv` a file: only the extensions files commonly have count.
    let file_name = token.rsplit_once('.').is_some_and(|(stem, ext)| {
        FILE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
            && stem.chars().any(|c| c.is_ascii_alphanumeric())
    });
    // `exec_mi9x2k1c`, `supplier_notes` (a vault key), `report-7a2f`; not `follow-up`.
    let joined_id = token.len() >= 6
        && letters > 0
        && (token.as_bytes().contains(&b'_') || (token.as_bytes().contains(&b'-') && digits > 0));
    file_name || joined_id
}

const FILE_EXTENSIONS: [&str; 32] = [
    "csv", "tsv", "json", "jsonl", "ndjson", "xml", "yaml", "yml", "toml", "md", "txt", "log",
    "xls", "xlsx", "parquet", "pdf", "doc", "docx", "html", "htm", "js", "mjs", "ts", "py", "rs",
    "sql", "db", "sqlite", "png", "jpg", "zip", "gz",
];

/// Numbers of two or more digits in a value, in order, each once.
pub(crate) fn numbers_in(value: &str) -> Vec<String> {
    numbers_of_at_least(value, 2)
}

/// Every number in `text`, a single digit included (`3 retries`, `0.2`), in order, each once:
/// what the app's own words (a pin, the goal) state must come back exactly.
pub(crate) fn every_number_in(text: &str) -> Vec<String> {
    numbers_of_at_least(text, 1)
}

/// Whether `term` is a number as [`numbers_in`] reads them: digits, at most one point.
pub(crate) fn is_number(term: &str) -> bool {
    !term.is_empty()
        && term.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && term.matches('.').count() <= 1
        && term.bytes().any(|b| b.is_ascii_digit())
}

/// Whether the number `number` stands in `text` as a number of its own: not as part of a
/// longer one (`350` is not in `3500` nor in `1.350`).
pub(crate) fn has_number(text: &str, number: &str) -> bool {
    let bytes = text.as_bytes();
    text.offsets_of(number)
        .any(|start| number_stands_alone(bytes, start, start + number.len()))
}

/// Whether the number at `start..end` of `bytes` has no digit joined to either end (directly
/// or across a decimal point).
pub(crate) fn number_stands_alone(bytes: &[u8], start: usize, end: usize) -> bool {
    let digit_at = |i: Option<usize>| i.and_then(|i| bytes.get(i)).is_some_and(u8::is_ascii_digit);
    let before = start.checked_sub(1);
    let joined_before = digit_at(before)
        || (before.is_some_and(|i| bytes[i] == b'.')
            && digit_at(before.and_then(|i| i.checked_sub(1))));
    let joined_after =
        digit_at(Some(end)) || (bytes.get(end) == Some(&b'.') && digit_at(Some(end + 1)));
    !joined_before && !joined_after
}

/// The quoted strings of `text` (between `"…"`, `“…”` or backticks, 1 to 80 characters).
pub(crate) fn quoted_in(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for (open, close) in [('"', '"'), ('\u{201c}', '\u{201d}'), ('`', '`')] {
        let mut rest = text;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else {
                break;
            };
            let quoted = after[..end].trim();
            if (1..=80).contains(&quoted.chars().count()) && !found.iter().any(|f| f == quoted) {
                found.push(quoted.to_owned());
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    found
}

/// Numbers of at least `min_digits` digits in `value`, in order, each once.
fn numbers_of_at_least(value: &str, min_digits: usize) -> Vec<String> {
    let value = without_digit_commas(value);
    let mut numbers: Vec<String> = Vec::new();
    for token in value.split(|c: char| !(c.is_ascii_digit() || c == '.')) {
        let token = token.trim_matches('.');
        if token.chars().filter(char::is_ascii_digit).count() >= min_digits
            && token.matches('.').count() <= 1
            && !numbers.iter().any(|n| n == token)
        {
            numbers.push(token.to_owned());
        }
    }
    numbers
}

/// A summary prepared for the checks: digit-group commas removed, and a lower-case copy.
pub struct Normalised {
    text: String,
    lower: String,
}

impl Normalised {
    /// Prepares `summary`.
    pub fn of(summary: &str) -> Normalised {
        let text = without_digit_commas(summary).into_owned();
        // ASCII case only: Unicode's case tables would cost the package about 7 KB (gzip).
        let lower = text.to_ascii_lowercase();
        Normalised { text, lower }
    }

    pub(crate) fn has_exact(&self, term: &str) -> bool {
        let term = without_digit_commas(term);
        if is_number(&term) {
            has_number(&self.text, &term)
        } else {
            self.text.contains_text(&term)
        }
    }

    pub(crate) fn has_word(&self, word: &str) -> bool {
        self.lower.contains_text(&word.to_ascii_lowercase())
    }

    /// The text, digit-group commas removed.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The text in ASCII lower case (byte for byte the same length as [`Normalised::text`]).
    pub(crate) fn lower(&self) -> &str {
        &self.lower
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimming_cuts_only_the_listed_bytes_at_the_ends() {
        let set = b".:!?/-";
        for (text, trimmed) in [
            ("", ""),
            ("...", ""),
            ("report.csv.", "report.csv"),
            ("-é-", "é"),
            ("https://a.b/c/", "https://a.b/c"),
            ("日本.", "日本"),
        ] {
            assert_eq!(
                trim_ascii_matching(text, &byte_set(set)),
                trimmed,
                "{text:?}"
            );
            let expected = text.trim_matches(|c: char| c.is_ascii() && set.contains(&(c as u8)));
            assert_eq!(trim_ascii_matching(text, &byte_set(set)), expected);
        }
    }

    #[test]
    fn only_commas_between_digits_are_removed() {
        for (text, expected) in [
            ("3,125,206 rows", "3125206 rows"),
            ("[1,2,3], a,b, 4, 5,", "[123], a,b, 4, 5,"),
            (",1,", ",1,"),
            ("", ""),
            ("日本1,000語", "日本1000語"),
        ] {
            assert_eq!(without_digit_commas(text), expected, "{text:?}");
        }
        assert!(matches!(without_digit_commas("a, b"), Cow::Borrowed(_)));
    }

    #[test]
    fn candidates_are_trimmed_of_punctuation_and_split_at_colons() {
        let mut seen = Vec::new();
        each_candidate("see exec_12ab: rows.csv! and https://x.y/z. -", |t| {
            seen.push(t)
        });
        assert_eq!(
            seen,
            ["see", "exec_12ab", "rows.csv", "and", "https://x.y/z"]
        );
    }
}
