//! The ledger of must-keep facts: drawn from iterations 1..N-1 before the provider is called,
//! listed in the prompt, and checked in the summary. A fact is the session's goal, the final
//! result of a computation, a failure no later iteration resolved, an identifier iteration N
//! still refers to, a fact the app pinned, or a fact an earlier summary was required to keep.

use std::borrow::Cow;

use crate::core::log::entries::{StoredExecution, StoredReasoning, StoredToolActivity};
use crate::core::log::iteration::parse_summary_header;
use crate::core::model::facts::{Coverage, Fact, FactKind, Ledger, Pin};
use crate::core::steps::digest::text::{clip, cut_whole, first_sentence};
use crate::core::steps::digest::Digest;
use crate::core::steps::selection::Selection;

impl Fact {
    /// Whether `summary` keeps this fact.
    pub fn kept_in(&self, summary: &Normalised) -> bool {
        let exact = self.exact.iter().all(|term| summary.has_exact(term));
        let found = self
            .words
            .iter()
            .filter(|word| summary.has_word(word))
            .count();
        exact && found * 2 >= self.words.len()
    }

    /// The fact on one line, as a summary's bullet states it.
    pub fn one_line(&self) -> String {
        self.text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// A fact shown as `text` whose terms are drawn from `content` (the text without its
    /// label).
    fn text_fact(id: String, kind: FactKind, text: String, content: &str) -> Fact {
        let exact = identifiers_in(content)
            .into_iter()
            .take(MAX_EXACT)
            .collect();
        let words = key_words(content);
        Fact {
            id,
            kind,
            text,
            exact,
            words,
        }
    }
}

/// At most this many identifiers of iteration N are required (the first it mentions).
pub const MAX_IDENTIFIERS: usize = 12;
/// At most this many exact terms per fact.
const MAX_EXACT: usize = 6;
/// At most this many key words per text fact.
const MAX_WORDS: usize = 6;
/// The longest identifier (in bytes) the ledger takes.
const MAX_TOKEN_LEN: usize = 120;
/// Characters of a value or message a fact's text shows.
const SHOWN_CHARS: usize = 160;

impl Ledger {
    /// Draws the ledger of `selection`: `carried` (the facts earlier summaries had to keep, as
    /// their archives recorded them), then the goal, final results, open failures,
    /// identifiers iteration N refers to, and `pins`. A newer result of the same task replaces
    /// a carried one; a carried failure a later iteration resolved is dropped.
    pub fn draw(selection: &Selection, digest: &Digest, pins: &[Pin], carried: &[Fact]) -> Ledger {
        let mut drawn = Vec::new();
        if let Some(goal) = goal(digest) {
            drawn.push(goal);
        }
        drawn.extend(results(digest));
        drawn.extend(open_failures(digest));
        let resolved = resolved_subjects(digest);
        let mut facts: Vec<Fact> = carried
            .iter()
            .filter(|fact| fact.kind != FactKind::Pin)
            .filter(|fact| !(fact.kind == FactKind::Failure && resolved.contains(&fact.id)))
            .filter(|fact| {
                fact.kind == FactKind::Goal || !drawn.iter().any(|new| new.id == fact.id)
            })
            .cloned()
            .collect();
        for fact in drawn {
            if !facts.iter().any(|f| f.id == fact.id) {
                facts.push(fact);
            }
        }
        for token in referenced_identifiers(selection) {
            let id = format!("identifier:{token}");
            if !facts.iter().any(|f| f.id == id) {
                facts.push(Fact {
                    id,
                    kind: FactKind::Identifier,
                    text: token.clone(),
                    exact: vec![token],
                    words: Vec::new(),
                });
            }
        }
        for pin in pins {
            let text = pin.text.trim();
            facts.push(Fact::text_fact(
                format!("pin:{}", pin.id),
                FactKind::Pin,
                text.to_owned(),
                text,
            ));
        }
        Ledger { facts }
    }

    /// Whether there is nothing to check.
    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
    }

    /// The facts' texts, in order.
    pub fn texts(&self) -> Vec<String> {
        self.facts.iter().map(|fact| fact.text.clone()).collect()
    }

    /// Which facts `summary` kept and which it lost.
    pub fn coverage(&self, summary: &str) -> Coverage {
        let normalised = Normalised::of(summary);
        let mut coverage = Coverage {
            required: self.texts(),
            ..Coverage::default()
        };
        for fact in &self.facts {
            if fact.kept_in(&normalised) {
                coverage.kept.push(fact.text.clone());
            } else {
                coverage.missing.push(fact.text.clone());
            }
        }
        coverage
    }

    /// The facts `summary` lost.
    pub fn missing_in<'a>(&'a self, summary: &str) -> Vec<&'a Fact> {
        let normalised = Normalised::of(summary);
        self.facts
            .iter()
            .filter(|fact| !fact.kept_in(&normalised))
            .collect()
    }
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

    fn has_exact(&self, term: &str) -> bool {
        self.text.contains(&*without_digit_commas(term))
    }

    fn has_word(&self, word: &str) -> bool {
        self.lower.contains(&word.to_ascii_lowercase())
    }
}

/// `3,125,206` → `3125206`: a summary may group digits differently from the logs.
fn without_digit_commas(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let grouped = |i: usize| {
        bytes[i] == b','
            && i > 0
            && bytes[i - 1].is_ascii_digit()
            && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
    };
    if !(0..bytes.len()).any(grouped) {
        return Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(bytes.len());
    for (i, &b) in bytes.iter().enumerate() {
        if !grouped(i) {
            out.push(b);
        }
    }
    // Only ASCII commas between ASCII digits were removed: the rest is the same UTF-8.
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_owned()))
}

fn goal(digest: &Digest) -> Option<Fact> {
    let (text, content) = match &digest.query {
        Some(query) => {
            let content = clip(query, SHOWN_CHARS);
            (format!("Question: {content}"), content)
        }
        None => {
            let (n, first) = digest.reasoning.first()?;
            let content = clip(first_sentence(first), SHOWN_CHARS);
            (format!("Goal (iteration {n}): {content}"), content)
        }
    };
    Some(Fact::text_fact(
        "goal".into(),
        FactKind::Goal,
        text,
        &content,
    ))
}

/// The last successful run of each task that returned a value.
fn results(digest: &Digest) -> Vec<Fact> {
    let mut seen: Vec<&str> = Vec::new();
    let mut facts = Vec::new();
    for run in digest.runs.iter().rev() {
        let (Some(true), Some(value)) = (run.success, run.result.as_deref()) else {
            continue;
        };
        if seen.contains(&run.task.as_str()) {
            continue;
        }
        seen.push(&run.task);
        let shown = cut_whole(value, SHOWN_CHARS);
        let numbers: Vec<String> = numbers_in(&shown).into_iter().take(MAX_EXACT).collect();
        let what = run
            .id
            .clone()
            .unwrap_or_else(|| format!("`{}`", clip(&run.task, 60)));
        let value_term = shown.trim().trim_matches('"').to_owned();
        let (exact, words) = if !numbers.is_empty() {
            (numbers, Vec::new())
        } else if value_term.chars().count() <= 40 && !value_term.is_empty() {
            (vec![value_term], Vec::new())
        } else {
            (Vec::new(), key_words(&shown))
        };
        facts.push(Fact {
            id: format!("result:{}", run.task),
            kind: FactKind::Result,
            text: format!(
                "Result of {what} (iteration {}, task {}): {shown}",
                run.iteration,
                clip(&run.task, 60)
            ),
            exact,
            words,
        });
    }
    facts.reverse();
    facts
}

fn failure_id(subject: &str, digest: &Digest) -> String {
    let task = digest
        .runs
        .iter()
        .find(|run| run.id.as_deref() == Some(subject))
        .map_or(subject, |run| run.task.as_str());
    format!("failure:{task}")
}

fn open_failures(digest: &Digest) -> Vec<Fact> {
    digest
        .failures
        .iter()
        .filter(|failure| failure.resolved_in.is_none())
        .map(|failure| {
            let message = clip(&failure.message, SHOWN_CHARS);
            let text = format!(
                "Still failing (iteration {}): {} → {message}",
                failure.iteration, failure.subject
            );
            let exact = if failure.subject == "iteration" {
                Vec::new()
            } else {
                vec![failure.subject.clone()]
            };
            Fact {
                id: failure_id(&failure.subject, digest),
                kind: FactKind::Failure,
                text,
                exact,
                words: key_words(&message),
            }
        })
        .collect()
}

/// The failure ids this range resolved (a later success of the task, or of the operation).
fn resolved_subjects(digest: &Digest) -> Vec<String> {
    let mut resolved: Vec<String> = digest
        .runs
        .iter()
        .filter(|run| run.success == Some(true))
        .map(|run| format!("failure:{}", run.task))
        .collect();
    resolved.extend(
        digest
            .tool_successes
            .iter()
            .map(|(_, subject)| format!("failure:{subject}")),
    );
    resolved
}

/// Identifiers in iteration N's entries that iterations 1..N-1 also mention, in the order N
/// first mentions them. The earlier text is only scanned for N's identifiers (its own are never
/// collected), and the scan stops once every one is found.
fn referenced_identifiers(selection: &Selection) -> Vec<String> {
    let kept = &selection.kept;
    let mut current: Vec<String> = Vec::new();
    let mut add = |text: &str| {
        for token in identifiers_in(text) {
            if !current.contains(&token) {
                current.push(token);
            }
        }
    };
    kept.reasoning.iter().for_each(|e| add(reasoning_text(e)));
    kept.execution.iter().for_each(|e| add(&execution_text(e)));
    kept.tool_activity.iter().for_each(|e| add(&tool_text(e)));
    // Sets of a few dozen at most: plain vectors (a BTreeSet would add to the package's size).
    let mut wanted: Vec<&str> = current.iter().map(String::as_str).collect();
    // Most tokens of the earlier text are rejected by their first byte and length alone.
    let mut first_bytes = [false; 256];
    let mut lengths = [false; MAX_TOKEN_LEN + 1];
    for token in &wanted {
        first_bytes[usize::from(token.as_bytes()[0])] = true;
        lengths[token.len().min(MAX_TOKEN_LEN)] = true;
    }
    let mut found: Vec<&str> = Vec::new();
    let mut look = |text: &str| {
        if wanted.is_empty() {
            return;
        }
        let text = without_digit_commas(text);
        each_candidate(&text, |token| {
            if first_bytes[usize::from(token.as_bytes()[0])]
                && token.len() <= MAX_TOKEN_LEN
                && lengths[token.len()]
            {
                if let Some(at) = wanted.iter().position(|w| *w == token) {
                    found.push(wanted.swap_remove(at));
                }
            }
        });
    };
    selection
        .reasoning
        .iter()
        .for_each(|(_, e)| look(reasoning_text(e)));
    selection
        .execution
        .iter()
        .for_each(|(_, e)| look(&execution_text(e)));
    selection
        .tool_activity
        .iter()
        .for_each(|(_, e)| look(&tool_text(e)));
    current
        .iter()
        .filter(|token| found.contains(&token.as_str()))
        .take(MAX_IDENTIFIERS)
        .cloned()
        .collect()
}

/// The text of a reasoning entry without its header line when it is a marker.
fn reasoning_text(entry: &StoredReasoning) -> &str {
    let text: &str = entry;
    if parse_summary_header(text).is_some() || text.trim_start().starts_with("===") {
        return text.split_once('\n').map_or("", |(_, rest)| rest);
    }
    text
}

fn execution_text(entry: &StoredExecution) -> String {
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

fn tool_text(entry: &StoredToolActivity) -> String {
    let fields = entry.fields();
    [
        fields.details().map(|d| d.into_owned()),
        fields.error_message(),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("\n")
}

/// Bytes that end a token: ASCII whitespace and the punctuation around identifiers in text,
/// code and JSON. Splitting at ASCII bytes never cuts a UTF-8 character.
const SEPARATORS: [bool; 256] = {
    let mut table = [false; 256];
    let bytes = b" \n\t\r\"'`<>()[]{},;|=*";
    let mut i = 0;
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    table
};

/// Calls `each` with every token of `text` that may be an identifier: a whole URL, else each
/// `:`-separated part, trimmed of punctuation. `text` has its digit-group commas removed. One
/// pass over the bytes: the text of 1..N-1 can be megabytes.
fn each_candidate<'t>(text: &'t str, mut each: impl FnMut(&'t str)) {
    let trim = |token: &'t str| {
        token.trim_matches(|c: char| matches!(c, '.' | ':' | '!' | '?' | '/' | '-'))
    };
    let mut start = 0;
    for (i, byte) in text.bytes().chain(std::iter::once(b' ')).enumerate() {
        if !SEPARATORS[usize::from(byte)] {
            continue;
        }
        let token = trim(&text[start..i]);
        start = i + 1;
        if token.is_empty() {
            continue;
        }
        if is_url(token) {
            each(token);
        } else if !token.contains("://") {
            for part in token.split(':') {
                let part = trim(part);
                if !part.is_empty() {
                    each(part);
                }
            }
        }
    }
}

fn is_url(token: &str) -> bool {
    token.starts_with("http://") || token.starts_with("https://")
}

/// URLs, file names, ids (words joined by `_`, or letters and digits joined by `-`) and
/// numbers of four or more digits in `text`, in order, each once.
pub fn identifiers_in(text: &str) -> Vec<String> {
    let text = without_digit_commas(text);
    let mut found: Vec<String> = Vec::new();
    each_candidate(&text, |token| {
        if (is_url(token) || is_identifier(token)) && !found.iter().any(|f| f == token) {
            found.push(token.to_owned());
        }
    });
    found
}

fn is_identifier(token: &str) -> bool {
    let letters = token.chars().filter(char::is_ascii_alphabetic).count();
    let digits = token.chars().filter(char::is_ascii_digit).count();
    let allowed = token
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
    if !allowed || token.len() > MAX_TOKEN_LEN {
        return false;
    }
    let is_number = letters == 0
        && token.chars().all(|c| c.is_ascii_digit() || c == '.')
        && token.matches('.').count() <= 1;
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
        && (token.contains('_') || (token.contains('-') && digits > 0));
    file_name || joined_id
}

const FILE_EXTENSIONS: [&str; 32] = [
    "csv", "tsv", "json", "jsonl", "ndjson", "xml", "yaml", "yml", "toml", "md", "txt", "log",
    "xls", "xlsx", "parquet", "pdf", "doc", "docx", "html", "htm", "js", "mjs", "ts", "py", "rs",
    "sql", "db", "sqlite", "png", "jpg", "zip", "gz",
];

/// Numbers of two or more digits in a value, in order, each once.
fn numbers_in(value: &str) -> Vec<String> {
    let value = without_digit_commas(value);
    let mut numbers: Vec<String> = Vec::new();
    for token in value.split(|c: char| !(c.is_ascii_digit() || c == '.')) {
        let token = token.trim_matches('.');
        if token.chars().filter(char::is_ascii_digit).count() >= 2
            && token.matches('.').count() <= 1
            && !numbers.iter().any(|n| n == token)
        {
            numbers.push(token.to_owned());
        }
    }
    numbers
}

const STOP_WORDS: [&str; 24] = [
    "about", "after", "again", "being", "could", "every", "first", "found", "their", "there",
    "these", "thing", "those", "through", "under", "until", "using", "where", "which", "while",
    "would", "should", "other", "before",
];

/// Up to six distinctive words of a text fact: five letters or more, not a common word.
fn key_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    // A word is letters, any non-ASCII character counting as one (no Unicode tables needed).
    for word in text.split(|c: char| c.is_ascii() && !c.is_ascii_alphabetic()) {
        let lower = word.to_ascii_lowercase();
        if lower.chars().count() >= 5
            && !STOP_WORDS.contains(&lower.as_str())
            && !words.contains(&lower)
        {
            words.push(lower);
        }
        if words.len() == MAX_WORDS {
            break;
        }
    }
    words
}

#[cfg(test)]
#[path = "ledger_tests.rs"]
mod tests;
