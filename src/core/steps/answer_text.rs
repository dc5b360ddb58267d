//! Reading a provider's answer into summary text: a reasoning block before it removed, a JSON
//! object whose keys name the sections (Gemini's structured output, or a model that answers in
//! JSON on its own) rendered as the six sections, then the canonical markdown of
//! `validation::canonicalize`.

use crate::core::order::join::Joined;
use crate::core::order::text_search::TextSearch;
use std::borrow::Cow;

use crate::core::json::scan::{depth, items, members, string, value_end};
use crate::core::model::outcome::AnswerFormat;
use crate::core::steps::validation::{
    canonical_heading, canonicalize, heading_section, is_closing, titled_section, SECTIONS,
};

/// The reasoning blocks open models write before their answer: opening and closing tag.
const REASONING_TAGS: [(&str, &str); 2] = [("<think>", "</think>"), ("<thinking>", "</thinking>")];

/// The longest text before a JSON answer that is dropped as a preamble, in bytes.
const MAX_JSON_PREAMBLE: usize = 300;

/// The deepest nesting a JSON answer may have to be read as sections (a wrapping object, the
/// sections, a list, an object in it, its values: five; the rest is room for a model's own
/// shapes). A deeper answer is read as text, which names no section: `invalid_summary` after
/// its retry. [`points`] follows nesting by recursion, so this bound is also its stack's.
const MAX_JSON_DEPTH: usize = 32;

/// `answer` as summary text to check and store, and the form it came in.
pub fn read_answer(answer: &str) -> (String, AnswerFormat) {
    let answer = without_reasoning(answer);
    let json = json_sections(answer);
    let format = match json {
        Some(_) => AnswerFormat::Json,
        None => AnswerFormat::Markdown,
    };
    (canonicalize(json.as_deref().unwrap_or(answer)), format)
}

/// `answer` without the reasoning at its head: `<think>…</think>` or `<thinking>…</thinking>`
/// blocks (one left open runs to the first section), and a paragraph that opens with
/// `Thinking:`.
fn without_reasoning(answer: &str) -> &str {
    let mut rest = answer.trim_start();
    while let Some((open, close)) = REASONING_TAGS
        .into_iter()
        .find(|(open, _)| starts_ignoring_case(rest, open))
    {
        rest = match find_ignoring_case(&rest[open.len()..], close) {
            Some(at) => rest[open.len() + at + close.len()..].trim_start(),
            None => from_first_section(rest),
        };
    }
    if starts_ignoring_case(
        rest.trim_start_matches('*').trim_start_matches('_'),
        "thinking:",
    ) {
        let paragraph_end = rest.find_text("\n\n").unwrap_or(rest.len());
        let section = rest.len() - from_first_section(rest).len();
        rest = rest[paragraph_end.min(section)..].trim_start();
    }
    rest
}

/// Whether `text` starts with `prefix` (ASCII), case ignored.
fn starts_ignoring_case(text: &str, prefix: &str) -> bool {
    text.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// The byte offset of `needle` (ASCII) in `text`, case ignored.
fn find_ignoring_case(text: &str, needle: &str) -> Option<usize> {
    let needle = needle.as_bytes();
    text.as_bytes()
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
}

/// `text` from its first section heading, or nothing when it has none.
fn from_first_section(text: &str) -> &str {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if heading_section(line).is_some() {
            return &text[offset..];
        }
        offset += line.len();
    }
    ""
}

/// The six sections of a JSON object whose keys name them (any case, spaces, underscores or
/// camelCase; fenced, bare, or inside one wrapping object), as markdown; `None` when the answer
/// is no such object. Keys that name no section are kept under 📝 as `key: value`.
fn json_sections(answer: &str) -> Option<String> {
    let start = answer.find('{').filter(|at| *at <= MAX_JSON_PREAMBLE)?;
    let end = value_end(answer, start).ok()?;
    if depth(&answer[start..end]) > MAX_JSON_DEPTH {
        return None;
    }
    if !answer[end..]
        .lines()
        .all(|line| is_closing(line) || line.trim() == "```")
    {
        return None;
    }
    let mut object = &answer[start..end];
    let mut sections: [Vec<String>; SECTIONS.len()] = Default::default();
    let named = |object: &str| {
        members(object).is_some_and(|mut m| m.any(|(key, _)| titled_section(&key).is_some()))
    };
    if !named(object) {
        let mut only = members(object)?;
        let (_, inner) = only.next()?;
        if only.next().is_some() || !named(inner) {
            return None;
        }
        object = inner;
    }
    for (key, value) in members(object)? {
        match titled_section(&key) {
            Some(section) => points(value, &mut sections[section]),
            None => labelled_points(&key, value, &mut sections[SECTIONS.len() - 1]),
        }
    }
    let blocks: Vec<String> = sections
        .iter()
        .zip(SECTIONS)
        .filter(|(points, _)| !points.is_empty())
        .map(|(points, (emoji, title))| {
            format!(
                "{}\n{}",
                canonical_heading(emoji, title),
                points.joined("\n")
            )
        })
        .collect();
    Some(blocks.joined("\n\n"))
}

/// The points of a section's JSON `value`, as list lines: each string of an array (or the
/// string itself, a line a point), numbers as written, an object's members as `key: value`.
fn points(value: &str, out: &mut Vec<String>) {
    if let Some(list) = items(value) {
        for item in list {
            points(item, out);
        }
    } else if let Some(fields) = members(value) {
        for (key, value) in fields {
            labelled_points(&key, value, out);
        }
    } else if let Some(text) = scalar(value) {
        let mut fenced = false;
        for line in text.lines().filter(|line| !line.trim().is_empty()) {
            let fence = line.trim_start().starts_with("```");
            out.push(if fenced || fence {
                line.trim_end().to_owned()
            } else {
                point(line)
            });
            fenced ^= fence;
        }
    }
}

/// The points of `value` each labelled `key: …` (a member that names no section).
fn labelled_points(key: &str, value: &str, out: &mut Vec<String>) {
    let mut inner = Vec::new();
    points(value, &mut inner);
    out.extend(
        inner
            .iter()
            .map(|point| format!("- {key}: {}", point.trim_start_text("- "))),
    );
}

/// A string's text or a number's or boolean's JSON, `None` for `null` and containers.
fn scalar(value: &str) -> Option<Cow<'_, str>> {
    match value.as_bytes().first() {
        Some(b'"') => string(value),
        Some(b'{' | b'[') | None => None,
        _ if value == "null" => None,
        _ => Some(Cow::Borrowed(value)),
    }
}

/// A line of a point: a list item as written (`*` and `•` bullets as `-`), anything else made one.
fn point(line: &str) -> String {
    let trimmed = line.trim();
    if let Some(rest) = trimmed
        .strip_prefix("* ")
        .or_else(|| trimmed.strip_prefix("• "))
    {
        return format!("- {rest}");
    }
    if trimmed.starts_with("- ") || line.starts_with("  ") {
        return line.trim_end().to_owned();
    }
    format!("- {trimmed}")
}

#[cfg(test)]
mod tests;
