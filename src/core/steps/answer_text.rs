//! Reading a provider's answer into summary text: a reasoning block before it removed, a JSON
//! object whose keys name the sections (Gemini's structured output, or a model that answers in
//! JSON on its own) rendered as the six sections, then the canonical markdown of
//! `validation::canonicalize`.

use std::borrow::Cow;

use crate::core::json::scan::{items, members, string, value_end};
use crate::core::model::outcome::AnswerFormat;
use crate::core::steps::validation::{
    canonical_heading, canonicalize, heading_section, is_closing, SECTIONS,
};

/// The opening tags of the reasoning blocks open models write before their answer.
const REASONING_TAGS: [&str; 2] = ["think", "thinking"];

/// The longest text before a JSON answer that is dropped as a preamble, in characters.
const MAX_JSON_PREAMBLE_CHARS: usize = 300;

/// `answer` as summary text to check and store, and the form it came in.
pub fn read_answer(answer: &str) -> (String, AnswerFormat) {
    let answer = without_reasoning(answer);
    match json_sections(answer) {
        Some(markdown) => (canonicalize(&markdown), AnswerFormat::Json),
        None => (canonicalize(answer), AnswerFormat::Markdown),
    }
}

/// `answer` without the reasoning at its head: `<think>…</think>` or `<thinking>…</thinking>`
/// blocks (one left open runs to the first section), and a paragraph that opens with
/// `Thinking:`.
pub(crate) fn without_reasoning(answer: &str) -> &str {
    let mut rest = answer.trim_start();
    loop {
        let lower: String = rest
            .chars()
            .take(12)
            .collect::<String>()
            .to_ascii_lowercase();
        let Some(tag) = REASONING_TAGS
            .iter()
            .find(|tag| lower.starts_with(&format!("<{tag}>")))
        else {
            break;
        };
        let close = format!("</{tag}>");
        rest = match find_ignoring_case(rest, &close) {
            Some(at) => rest[at + close.len()..].trim_start(),
            None => from_first_section(rest),
        };
    }
    let opening = rest.trim_start_matches(['*', '_']);
    if opening
        .get(..9)
        .is_some_and(|head| head.eq_ignore_ascii_case("thinking:"))
    {
        let paragraph_end = rest.find("\n\n").unwrap_or(rest.len());
        let section = rest.len() - from_first_section(rest).len();
        rest = rest[paragraph_end.min(section)..].trim_start();
    }
    rest
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
    let start = answer
        .lines()
        .scan(0usize, |offset, line| {
            let at = *offset;
            *offset += line.len() + 1;
            Some((at, line))
        })
        .find(|(_, line)| line.trim_start().starts_with('{'))
        .map(|(at, line)| at + line.len() - line.trim_start().len())?;
    if answer[..start].chars().count() > MAX_JSON_PREAMBLE_CHARS {
        return None;
    }
    let end = value_end(answer, start).ok()?;
    let trailing_is_fence = answer[end..]
        .lines()
        .all(|line| is_closing(line) || line.trim() == "```");
    if !trailing_is_fence {
        return None;
    }
    let mut object = &answer[start..end];
    let mut sections: Vec<Vec<String>> = vec![Vec::new(); SECTIONS.len()];
    let named = |object: &str| {
        members(object).is_some_and(|mut m| m.any(|(key, _)| section_of_key(&key).is_some()))
    };
    if !named(object) {
        let mut only = members(object)?;
        let (_, inner) = only.next()?;
        if only.next().is_some() || !named(inner) {
            return None;
        }
        object = inner;
    }
    let context = SECTIONS.len() - 1;
    for (key, value) in members(object)? {
        match section_of_key(&key) {
            Some(section) => points(value, &mut sections[section]),
            None => {
                let mut text = Vec::new();
                points(value, &mut text);
                let joined: Vec<&str> = text.iter().map(|p| p.trim_start_matches("- ")).collect();
                if !joined.is_empty() {
                    sections[context].push(format!("- {key}: {}", joined.join("; ")));
                }
            }
        }
    }
    let blocks: Vec<String> = sections
        .iter()
        .zip(SECTIONS)
        .filter(|(points, _)| !points.is_empty())
        .map(|(points, (emoji, title))| {
            format!("{}\n{}", canonical_heading(emoji, title), points.join("\n"))
        })
        .collect();
    Some(blocks.join("\n\n"))
}

/// The section a JSON key names: `key_discoveries`, `Key Discoveries`, `keyDiscoveries`,
/// `📊 KEY-DISCOVERIES`.
fn section_of_key(key: &str) -> Option<usize> {
    let mut words = String::new();
    let mut previous_lower = false;
    for c in key.chars() {
        if c.is_ascii_uppercase() && previous_lower {
            words.push(' ');
        }
        previous_lower = c.is_ascii_lowercase();
        words.push(if c.is_ascii_alphanumeric() { c } else { ' ' });
    }
    let title = words
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_uppercase();
    SECTIONS.iter().position(|(_, name)| *name == title)
}

/// The points of a section's JSON `value`, as list lines: each string of an array (or the
/// string itself), numbers as written, an object's members as `key: value`.
fn points(value: &str, out: &mut Vec<String>) {
    if let Some(list) = items(value) {
        for item in list {
            points(item, out);
        }
    } else if let Some(fields) = members(value) {
        let pairs: Vec<String> = fields
            .filter_map(|(key, value)| Some(format!("{key}: {}", scalar(value)?)))
            .collect();
        if !pairs.is_empty() {
            out.push(format!("- {}", pairs.join("; ")));
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
