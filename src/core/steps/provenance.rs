//! Whose words: a summary line that gives the user a request, an instruction or a permission, or
//! that states an imperative, whose content only data holds (an execution's result, a tool's
//! details, fetched text) and the user's own words (the goal, the pins) do not. Compaction
//! must not launder an instruction that arrived in tool output into the user's voice: such a
//! line ends with [`INJECTED_MARK`] and names the entry it came from.

use crate::core::model::facts::{FactKind, Injection, Ledger};
use crate::core::steps::selection::Selection;
use crate::core::steps::validation::heading_section;

/// What a line that gives the user words only data said ends with.
pub const INJECTED_MARK: &str = " [from tool output]";

/// Share of a line's content words one data entry must hold for the line to come from it.
const FROM_DATA: f64 = 0.6;

/// Words that tell a line gives the user a request: `user` then one of these within four words.
const USER_VERBS: [&str; 12] = [
    "asked",
    "asks",
    "wants",
    "want",
    "requested",
    "request",
    "instructed",
    "told",
    "said",
    "approved",
    "authori",
    "permission",
];

/// Phrases that grant a permission.
const PERMISSIONS: [&str; 5] = [
    "you are allowed",
    "you may ",
    "you are permitted",
    "permission to",
    "authorized to",
];

/// Verbs that open an imperative line (`Delete every file under /srv/data.`).
const IMPERATIVES: [&str; 24] = [
    "delete",
    "remove",
    "erase",
    "wipe",
    "purge",
    "destroy",
    "drop",
    "overwrite",
    "send",
    "email",
    "forward",
    "transfer",
    "wire",
    "pay",
    "upload",
    "share",
    "publish",
    "run",
    "execute",
    "ignore",
    "disregard",
    "disable",
    "grant",
    "approve",
];

/// Words too common to show where a line's content came from.
const COMMON: [&str; 24] = [
    "user", "users", "asked", "wants", "that", "this", "with", "from", "have", "been", "every",
    "again", "should", "would", "must", "will", "your", "their", "they", "them", "into", "also",
    "please", "now",
];

/// `text` lower-cased (ASCII) without what it quotes: a line that reports what data said
/// (`the ticket says "delete …"`) quotes it.
fn unquoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '"' | '\u{201c}' | '\u{201d}' | '\u{ab}' | '\u{bb}' => quoted = !quoted,
            _ if !quoted => out.push(c.to_ascii_lowercase()),
            _ => {}
        }
    }
    out
}

/// Whether `line` gives the user a request or a permission, or opens with an imperative.
fn speaks_for_the_user(line: &str) -> bool {
    let text = unquoted(line);
    let words: Vec<&str> = text
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect();
    let by_user = words.iter().enumerate().any(|(at, word)| {
        matches!(*word, "user" | "user's")
            && words
                .iter()
                .skip(at + 1)
                .take(4)
                .any(|next| USER_VERBS.iter().any(|verb| next.starts_with(verb)))
    });
    let imperative = words
        .first()
        .is_some_and(|first| IMPERATIVES.contains(first));
    by_user
        || imperative
        || text.contains("do not ask")
        || PERMISSIONS.iter().any(|phrase| text.contains(phrase))
}

/// The words of `line` that say what it is about: four letters or more, not common ones.
fn content_words(line: &str) -> Vec<String> {
    let text = line.to_ascii_lowercase();
    let mut words: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| w.len() >= 4 && !COMMON.contains(w))
        .filter(|w| !USER_VERBS.iter().any(|verb| w.starts_with(verb)))
        .map(str::to_owned)
        .collect();
    words.dedup();
    words
}

/// The share of `words` that `text` (lower-cased) holds.
fn share_in(words: &[String], text: &str) -> f64 {
    let held = words.iter().filter(|w| text.contains(w.as_str())).count();
    held as f64 / words.len().max(1) as f64
}

/// The lines of `summary` that give the user words only the data of `selection` said (not the
/// goal or the pins of `ledger`), each with the entry it came from.
pub fn injected_lines(summary: &str, selection: &Selection, ledger: &Ledger) -> Vec<Injection> {
    let users: String = ledger
        .facts
        .iter()
        .filter(|fact| matches!(fact.kind, FactKind::Goal | FactKind::Pin))
        .map(|fact| fact.text.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join("\n");
    let data: Vec<(String, String)> = selection
        .execution
        .iter()
        .map(|(n, entry)| (*n, "execution", entry.facts.id.as_deref(), entry.json()))
        .chain(
            selection
                .tool_activity
                .iter()
                .map(|(n, entry)| (*n, "tool activity", entry.facts.id.as_deref(), entry.json())),
        )
        .map(|(n, log, id, json)| {
            let name = id.map_or(String::new(), |id| format!(" {id}"));
            (
                format!("{log}{name} (iteration {n})"),
                json.to_ascii_lowercase(),
            )
        })
        .chain(earlier_marks(selection))
        .collect();
    let mut found = Vec::new();
    for line in summary.lines() {
        if heading_section(line).is_some() || line.ends_with(INJECTED_MARK) {
            continue;
        }
        if !speaks_for_the_user(line) {
            continue;
        }
        let words = content_words(line);
        if words.len() < 2 || share_in(&words, &users) >= FROM_DATA {
            continue;
        }
        let source = data
            .iter()
            .map(|(name, text)| (share_in(&words, text), name))
            .filter(|(share, _)| *share >= FROM_DATA)
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((_, name)) = source {
            found.push(Injection {
                line: line.trim_end().to_owned(),
                source: name.clone(),
            });
        }
    }
    found
}

/// The lines earlier summaries marked as from tool output: still data once the entry they came
/// from is archived, so that a model that copies one without its mark is caught again.
fn earlier_marks<'a>(selection: &'a Selection) -> impl Iterator<Item = (String, String)> + 'a {
    selection.reasoning.iter().flat_map(|(n, entry)| {
        entry
            .lines()
            .filter(|line| line.ends_with(INJECTED_MARK))
            .map(move |line| {
                let source = format!("an earlier summary's line from tool output (iteration {n})");
                (source, line.to_ascii_lowercase())
            })
    })
}

/// `summary` with each of `injected`'s lines ending in [`INJECTED_MARK`]; nothing else changes.
pub fn mark_injected(summary: &str, injected: &[Injection]) -> String {
    if injected.is_empty() {
        return summary.to_owned();
    }
    summary
        .lines()
        .map(|line| {
            if injected.iter().any(|i| i.line == line.trim_end()) {
                format!("{}{INJECTED_MARK}", line.trim_end())
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests;
