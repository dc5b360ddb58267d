//! The ladder's clearing rung, as a step: which bulky bodies of older iterations leave the live
//! logs, and the placeholder each entry keeps instead. No model call. A body leaves whole (an
//! execution's `result`, a tool entry's `details`, or a long field of either): never cut inside
//! an error message or a JSON document, and the placeholder is of the body's JSON type, so the
//! app's own reader still parses the entry. The caller archives the originals before it writes
//! a placeholder (the journal's order).

use crate::core::order::join::Joined;
use crate::core::order::text_search::TextSearch;
use std::borrow::Cow;

use crate::core::json::scan::{field, items, members};
use crate::core::json::write::write_string;
use crate::core::log::entries::{HasFacts, Part};
use crate::core::log::iteration::Unit;
use crate::core::log::placement::PlacedIterations;
use crate::core::log::snapshot::LogSnapshot;
use crate::core::log::stored_entry::{field_text, EntryView, Stored};
use crate::core::log::text_hash::text_hash;
use crate::core::log::tokens::estimate_tokens;
use crate::core::model::clearing::{ByName, ClearedBody, ClearingRules, ToolRule, KEEP_AT_MOST};
use crate::core::model::per_log::PerLog;
use crate::core::model::reasons::Conflict;
use crate::core::order::sort::{sort_unique, unique_in_order};
use crate::core::order::sorted_map::SortedMap;
use crate::core::steps::item_search::ItemSearch;
use crate::core::steps::terms::{identifiers_in, numbers_in};

/// How every placeholder begins: an entry whose body holds it was cleared (once: it is never
/// cleared again).
pub const CLEARED_MARK: &str = "[cleared by context-compactor: ";

/// The most names and figures a placeholder keeps of its body: it stays a line, since a
/// session keeps many of them.
const MAX_KEPT_TERMS: usize = 8;

/// What a field of a body may take and still stay inline when its body is cleared, in tokens.
const SHORT_FIELD_TOKENS: usize = 40;

/// The log a cleared entry is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClearedLog {
    /// The execution log (its `result`).
    Execution,
    /// The tool-activity log (its `details`).
    ToolActivity,
}

/// One entry whose body leaves the live log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClearedEntry {
    /// The log it is in.
    pub log: ClearedLog,
    /// Its position in that log.
    pub position: usize,
    /// Its iteration.
    pub iteration: u32,
    /// Its id (empty when it has none).
    pub entry_id: String,
    /// Tokens it frees: the entry's before, less its placeholder entry's.
    pub tokens: usize,
    /// The entry's text with its body replaced: every other byte as the app wrote it.
    pub placeholder: String,
}

impl ClearedEntry {
    /// What the app is told of it.
    pub fn body(&self) -> ClearedBody {
        ClearedBody {
            iteration: self.iteration,
            entry_id: self.entry_id.clone(),
            tokens: self.tokens,
        }
    }
}

/// `now` (the logs after a clearing) with each execution and tool entry that differs from its
/// place in `before` (the logs before it: the clearing rewrote only bodies, in place) as it was
/// there: what the clearing took, for the summary of the same compaction to read.
pub fn with_cleared_bodies(now: &LogSnapshot, before: &LogSnapshot) -> LogSnapshot {
    fn back<T: Clone + PartialEq>(now: &[T], before: &[T]) -> Vec<T> {
        let was = |at: usize, entry: &T| before.get(at).filter(|old| *old != entry);
        let each = now.iter().enumerate();
        each.map(|(at, entry)| was(at, entry).unwrap_or(entry).clone())
            .collect()
    }
    LogSnapshot {
        reasoning: now.reasoning.clone(),
        execution: back(&now.execution, &before.execution),
        tool_activity: back(&now.tool_activity, &before.tool_activity),
    }
}

/// The entries of `clearing.logs` (placed as `placed` says) whose bodies `rules` clear now, in
/// log order, executions first, each placeholder naming `archive_key`, the archive that will
/// hold the originals (so that a recall follows a placeholder to its body, also from a later
/// summary's archive). `keep_whole` names tools (the recall tool) whose entries, like any entry
/// a later iteration refers to by id, stay whole one iteration longer. At once: see
/// [`ClearingChoice`] for the same choice in parts.
pub fn clearable(clearing: &Clearing<'_>) -> Vec<ClearedEntry> {
    let mut choice = ClearingChoice::of(clearing.logs);
    while !choice.advance(clearing, usize::MAX) {}
    choice.cleared
}

/// What [`clearable`] reads: the logs, placed, the rules, the tools kept whole, the archive key.
pub struct Clearing<'a> {
    /// The logs as read.
    pub logs: &'a LogSnapshot,
    /// The iteration of every entry.
    pub placed: &'a PlacedIterations,
    /// The clearing's rules.
    pub rules: &'a ClearingRules,
    /// Tools whose entries stay whole one iteration longer.
    pub keep_whole: &'a [&'a str],
    /// The archive the placeholders name.
    pub archive_key: &'a str,
    /// What the placeholders call an iteration.
    pub unit: Unit,
    /// When `keepIterations` is not given: the tokens the bulky entries of the iterations kept
    /// whole before the newest may take together.
    pub keep_within: usize,
}

/// [`clearable`] in parts, so that a caller can let the page run between them: first which ids
/// later iterations name (every entry read), then each body's placeholder; each
/// [`ClearingChoice::advance`] reads entries up to a number of bytes.
pub struct ClearingChoice {
    search: ItemSearch,
    /// The last iteration naming each id of `search`.
    latest: Vec<u32>,
    /// Entries read for ids so far (reasoning, then executions, then tool entries).
    noted: usize,
    /// The ids later iterations name, once every entry is read.
    referred: Option<SortedMap<String, u32>>,
    /// How many of the newest iterations keep their bodies whole, once every entry is read.
    keep: Option<u32>,
    /// Executions and tool entries considered so far.
    considered: usize,
    /// The entries whose bodies leave, in log order.
    pub cleared: Vec<ClearedEntry>,
}

impl ClearingChoice {
    /// A choice over `logs`, not begun.
    pub fn of(logs: &LogSnapshot) -> ClearingChoice {
        let ids = logs
            .execution
            .iter()
            .filter_map(|e| e.view().facts.id.clone())
            .chain(
                logs.tool_activity
                    .iter()
                    .filter_map(|e| e.view().facts.id.clone()),
            );
        let search = ItemSearch::new(ids);
        ClearingChoice {
            latest: vec![0; search.len()],
            search,
            noted: 0,
            referred: None,
            keep: None,
            considered: 0,
            cleared: Vec::new(),
        }
    }

    /// Reads entries of `clearing` up to about `bytes` more; whether the choice is made.
    pub fn advance(&mut self, clearing: &Clearing<'_>, bytes: usize) -> bool {
        let (logs, placed) = (clearing.logs, &clearing.placed.entries);
        let mut read = 0usize;
        // Every entry, for the ids it names (its own id counts only from a later iteration).
        while let Some((json, n)) = nth_entry(logs, placed, self.noted) {
            if read >= bytes {
                return false;
            }
            let latest = &mut self.latest;
            if let Some(n) = n {
                self.search.each_in(json, |i| latest[i] = latest[i].max(n));
            }
            read = read.saturating_add(json.len());
            self.noted += 1;
        }
        let search = &self.search;
        let latest = &self.latest;
        let referred = self.referred.get_or_insert_with(|| {
            (0..search.len())
                .filter_map(|i| {
                    let id = String::from_utf8(search.item(i)?.to_vec()).ok()?;
                    Some((id, latest[i]))
                })
                .collect()
        });
        let keep = *self.keep.get_or_insert_with(|| kept_iterations(clearing));
        // Then each execution's result and each tool entry's details.
        let executions = logs.execution.len();
        loop {
            let at = self.considered;
            let (log, position, candidate) = if at < executions {
                let entry = &logs.execution[at];
                let names = entry.fields().source().into_iter().collect();
                let candidate = Candidate::of(entry, names, Part::Result);
                (ClearedLog::Execution, at, candidate)
            } else if let Some(entry) = logs.tool_activity.get(at - executions) {
                let fields = entry.fields();
                let names = [fields.kind(), fields.action()];
                let names = names.into_iter().flatten().collect();
                let candidate = Candidate::of(entry, names, Part::Details);
                (ClearedLog::ToolActivity, at - executions, candidate)
            } else {
                return true;
            };
            let iterations = match log {
                ClearedLog::Execution => &placed.execution,
                ClearedLog::ToolActivity => &placed.tool_activity,
            };
            if read >= bytes {
                return false;
            }
            read = read.saturating_add(candidate.text.len());
            self.considered += 1;
            if let Some(&n) = iterations.get(position) {
                let chosen = consider(clearing, referred, keep, (log, position, n), candidate);
                self.cleared.extend(chosen);
            }
        }
    }
}

/// The `index`th entry of `logs` (reasoning, then executions, then tool entries) as stored,
/// with its iteration (where placed).
fn nth_entry<'a>(
    logs: &'a LogSnapshot,
    placed: &PerLog<Vec<u32>>,
    index: usize,
) -> Option<(&'a str, Option<u32>)> {
    let (reasoning, execution) = (logs.reasoning.len(), logs.execution.len());
    let (json, n) = if index < reasoning {
        (logs.reasoning[index].json(), placed.reasoning.get(index))
    } else if index < reasoning + execution {
        let at = index - reasoning;
        (logs.execution[at].json(), placed.execution.get(at))
    } else {
        let at = index - reasoning - execution;
        (
            logs.tool_activity.get(at)?.json(),
            placed.tool_activity.get(at),
        )
    };
    Some((json, n.copied()))
}

/// How many of the newest iterations keep their bodies whole: `keepIterations`, else as many of
/// the newest [`KEEP_AT_MOST`] as keep, after the newest, no more than `keep_within` tokens of
/// executions and tool entries larger than `aboveTokens` (those whose bodies the rules clear by
/// size).
fn kept_iterations(clearing: &Clearing<'_>) -> u32 {
    if let Some(keep) = clearing.rules.keep_iterations {
        return keep;
    }
    let logs = clearing.logs;
    let mut tokens = [0; KEEP_AT_MOST as usize];
    let executions = logs.reasoning.len() + logs.execution.len();
    let tools = executions + logs.tool_activity.len();
    for entries in [logs.reasoning.len()..executions, executions..tools] {
        for index in entries.rev() {
            let Some((json, Some(n))) = nth_entry(logs, &clearing.placed.entries, index) else {
                break;
            };
            let age = clearing.placed.current.saturating_sub(n) as usize;
            let Some(sum) = tokens.get_mut(age) else {
                break;
            };
            let size = estimate_tokens(json);
            if size > clearing.rules.above_tokens {
                *sum += size;
            }
        }
    }
    let mut within = clearing.keep_within;
    let older = tokens[1..].iter().take_while(|&&sum| {
        let left = within.checked_sub(sum);
        within = left.unwrap_or(0);
        left.is_some()
    });
    1 + older.count() as u32
}

/// The entry `candidate` (at a position of a log, in an iteration) cleared, if the rules clear
/// its body now, the newest `keep` iterations keeping theirs.
fn consider(
    clearing: &Clearing<'_>,
    referred: &SortedMap<String, u32>,
    keep: u32,
    (log, position, iteration): (ClearedLog, usize, u32),
    entry: Candidate<'_>,
) -> Option<ClearedEntry> {
    let rules = clearing.rules;
    let id = entry.id.unwrap_or_default();
    let names: Vec<&str> = entry.names.iter().map(|name| name.as_ref()).collect();
    let rule = rule_of(&rules.tools, &names);
    let protected = names.iter().any(|name| clearing.keep_whole.contains(name))
        || referred
            .get(&id.to_ascii_lowercase())
            .is_some_and(|&m| m > iteration);
    let keep = keep.saturating_add(u32::from(protected));
    if rule == Some(ToolRule::Keep) || iteration.saturating_add(keep) > clearing.placed.current {
        return None;
    }
    let body = entry.body.filter(|body| *body != "null")?;
    let whole = rule.is_some_and(ToolRule::whole);
    let ours = placeholder_sources(body).next().is_some();
    if ours || (!whole && estimate_tokens(body) <= rules.above_tokens) {
        return None;
    }
    let how = Recovery {
        iteration,
        id,
        archive_key: clearing.archive_key,
        rule,
        unit: clearing.unit,
    };
    let kept = kept_fields(&rules.keep_fields, &names);
    let new_body = placeholder_body(body, &how, &kept, whole, rules.above_tokens);
    let placeholder = replace_span(entry.text, body, &new_body);
    let tokens = estimate_tokens(entry.text).saturating_sub(estimate_tokens(&placeholder));
    // A placeholder that frees nothing is not written (a small body cleared by its tool's
    // rule).
    (tokens > 0).then(|| ClearedEntry {
        log,
        position,
        iteration,
        entry_id: id.to_owned(),
        tokens,
        placeholder,
    })
}

/// The logs `now` (which grew from `before` by appends alone) with `cleared`'s placeholders in
/// place of their entries: what a clearing writes. Entries appended since stay; a log that was
/// rewritten meanwhile is a conflict (the clearing is given up, nothing lost).
pub fn apply(
    before: &LogSnapshot,
    now: &LogSnapshot,
    cleared: &[ClearedEntry],
) -> Result<LogSnapshot, Conflict> {
    grew(&before.reasoning, &now.reasoning, "reasoning")?;
    grew(&before.execution, &now.execution, "execution")?;
    grew(&before.tool_activity, &now.tool_activity, "tool activity")?;
    let mut after = now.clone();
    for entry in cleared {
        let placeholder = entry.placeholder.as_str();
        match entry.log {
            ClearedLog::Execution => put(&mut after.execution, entry.position, placeholder),
            ClearedLog::ToolActivity => put(&mut after.tool_activity, entry.position, placeholder),
        }
    }
    Ok(after)
}

/// Whether `now` holds `before` and entries appended after it (a conflict naming `log` if not).
fn grew<T: PartialEq>(before: &[T], now: &[T], log: &'static str) -> Result<(), Conflict> {
    let kept = now.get(..before.len()).is_some_and(|head| head == before);
    kept.then_some(()).ok_or(Conflict::Rewritten { log })
}

/// `entries` with the entry at `position` replaced by `text` (nothing when there is none).
fn put<V: EntryView>(entries: &mut [Stored<V>], position: usize, text: &str) {
    if let Some(entry) = entries.get_mut(position) {
        *entry = Stored::from_json_text(text);
    }
}

/// Puts back in `entries` the original of every placeholder `placeholders` names (the hash of
/// each placeholder's text, beside the original it stands for in `originals`): the bytes
/// exactly as they were. How many went back.
pub fn restore<V: EntryView + Clone>(
    entries: &mut [Stored<V>],
    originals: &[Stored<V>],
    placeholders: &[String],
) -> usize {
    let mut restored = 0;
    for entry in entries.iter_mut() {
        if let Some(original) = original_of(entry, originals, placeholders) {
            *entry = original.clone();
            restored += 1;
        }
    }
    restored
}

/// The original `entry` stands for when it is one of `placeholders` (see [`restore`]).
pub fn original_of<'o, V: EntryView>(
    entry: &Stored<V>,
    originals: &'o [Stored<V>],
    placeholders: &[String],
) -> Option<&'o Stored<V>> {
    if !entry.json().contains_text(CLEARED_MARK) {
        return None;
    }
    let hash = text_hash(Some(entry.json()));
    let at = placeholders.iter().position(|p| *p == hash)?;
    originals.get(at)
}

/// How a placeholder naming `archive_key` ends, as its entry's JSON text holds it.
pub fn placeholder_naming(archive_key: &str) -> String {
    let mut quoted = String::new();
    write_string(&mut quoted, &format!(" brings it back from {archive_key}]"));
    quoted[1..quoted.len() - 1].to_owned()
}

/// The iteration and archive key of every placeholder in `text` (a log's stored JSON text, or
/// one entry's), in order: what each says brings its body back.
pub fn placeholder_sources(text: &str) -> impl Iterator<Item = (u32, &str)> {
    // Its own ending is the last `. recall(n)… brings it back from key]` in it (a title
    // before it may quote one).
    text.split_text(CLEARED_MARK)
        .skip(1)
        .filter_map(|placeholder| {
            let endings = placeholder.split_text(". recall(").skip(1);
            endings
                .filter_map(|ending| {
                    let (n, rest) = ending.split_once(')')?;
                    let (_, key) = rest.split_once_text(" brings it back from ")?;
                    Some((n.parse().ok()?, key.split_once(']')?.0))
                })
                .last()
        })
}

/// An entry as clearing reads it.
struct Candidate<'a> {
    text: &'a str,
    id: Option<&'a str>,
    /// Its tool's type and name (an execution's source).
    names: Vec<Cow<'a, str>>,
    body: Option<&'a str>,
}

impl<'a> Candidate<'a> {
    fn of<V: EntryView + HasFacts>(
        entry: &'a Stored<V>,
        names: Vec<Cow<'a, str>>,
        body: Part,
    ) -> Self {
        let facts = entry.view().facts();
        Candidate {
            text: entry.json(),
            id: facts.id.as_deref(),
            names,
            body: facts.parts.get(entry.json(), body),
        }
    }
}

/// The rule `tools` gives an entry of a tool called `names`, if any.
fn rule_of(tools: &ByName<ToolRule>, names: &[&str]) -> Option<ToolRule> {
    tools.of(names).next().copied()
}

/// The fields `keep_fields` keeps inline for a tool called `names`.
fn kept_fields<'r>(keep_fields: &'r ByName<Vec<String>>, names: &'r [&str]) -> Vec<&'r str> {
    keep_fields
        .of(names)
        .flatten()
        .map(String::as_str)
        .collect()
}

/// How a placeholder says its body comes back.
struct Recovery<'a> {
    iteration: u32,
    id: &'a str,
    archive_key: &'a str,
    /// The tool's rule, when the app gave one: a replayable call can be made again, a
    /// non-replayable one has its only copy in the archive.
    rule: Option<ToolRule>,
    /// What the placeholder calls an iteration.
    unit: Unit,
}

/// The text of a placeholder for `body` (JSON): its size, where it came from, the names and
/// figures it held, and how to get it back. The entry's id, tool and status stay in the entry's
/// own fields beside it: a session keeps many placeholders, each stays one short line.
fn placeholder_text(body: &str, how: &Recovery<'_>) -> String {
    let text = field_text(Some(body)).unwrap_or_default();
    let mut out = String::from(CLEARED_MARK);
    out.push_str(&format!(
        "{} characters of {} {}",
        text.chars().count(),
        how.unit.word(),
        how.iteration
    ));
    if let Some(title) = title_of(&text) {
        out.push_str(&format!("; title: {title}"));
    }
    let terms = kept_terms(&text);
    if !terms.is_empty() {
        out.push_str(&format!("; holds {}", terms.joined(", ")));
    }
    // The entry's id stands beside the placeholder, in its own field.
    let query = match how.id.is_empty() {
        true => "",
        false => " or the recall tool's query of its id",
    };
    out.push_str(match how.rule {
        Some(ToolRule::Replayable) => "; the call can be made again",
        Some(ToolRule::NonReplayable) => "; the archive holds the only copy",
        _ => "",
    });
    out.push_str(&format!(
        ". recall({}){query} brings it back from {}]",
        how.iteration, how.archive_key
    ));
    out
}

/// The names and figures a placeholder keeps of `text`: names first, then figures of three
/// digits or more or with a point, but not those of a numbered run (`Row 101`, `Row 102`: a
/// row number is not a finding), nor three-digit counts where a table holds more of them than a
/// placeholder keeps (its cells are not findings one by one).
fn kept_terms(text: &str) -> Vec<String> {
    let mut terms = identifiers_in(text);
    let numbers = numbers_in(text);
    let mut wholes: Vec<u64> = numbers.iter().filter_map(|n| whole(n)).collect();
    sort_unique(&mut wholes);
    let has = |v: Option<u64>| v.is_some_and(|v| wholes.binary_search(&v).is_ok());
    let in_run = |n: &str| whole(n).is_some_and(|v| has(v.checked_sub(1)) || has(v.checked_add(1)));
    let short = |n: &String| n.len() == 3 && !n.as_bytes().contains(&b'.');
    let table = numbers.iter().filter(|n| short(n)).count() > MAX_KEPT_TERMS;
    let figure = |n: &String| {
        (n.as_bytes().contains(&b'.') || n.len() >= 3) && !in_run(n) && !(table && short(n))
    };
    terms.extend(numbers.iter().filter(|n| figure(n)).cloned());
    unique_in_order(&mut terms);
    terms.truncate(MAX_KEPT_TERMS);
    terms
}

/// The whole number `digits` spells, when it is one that fits.
fn whole(digits: &str) -> Option<u64> {
    digits.bytes().try_fold(0u64, |value, b| {
        let digit = b.is_ascii_digit().then(|| u64::from(b - b'0'))?;
        value.checked_mul(10)?.checked_add(digit)
    })
}

/// A page's title: an HTML `<title>`, else a first Markdown heading.
fn title_of(text: &str) -> Option<String> {
    let mut head = text.len().min(4096);
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    // Lower-casing ASCII keeps every byte where it was: offsets in `lower` are offsets in `text`.
    let lower = text[..head].to_ascii_lowercase();
    if let Some(start) = lower.find_text("<title>").map(|at| at + "<title>".len()) {
        let end = start + lower[start..].find_text("</title>")?;
        return Some(text[start..end].trim().chars().take(120).collect());
    }
    text.lines()
        .take(20)
        .find_map(|line| line.strip_prefix("# "))
        .map(|title| title.trim().chars().take(120).collect())
}

/// The body that replaces `body` (JSON), of its JSON type: a string for a string, an array of
/// one placeholder for an array (a text part `{"type":"text","text":…}` where its items are
/// typed parts, as a message's content is in every provider's schema), an object that keeps its short fields (and `kept`) with each
/// long one replaced (every field but `kept` when `whole`, or when short fields alone still
/// weigh more than `above_tokens`).
fn placeholder_body(
    body: &str,
    how: &Recovery<'_>,
    kept: &[&str],
    whole: bool,
    above_tokens: usize,
) -> String {
    let placeholder = |json: &str| {
        let mut out = String::new();
        write_string(&mut out, &placeholder_text(json, how));
        out
    };
    if let Some(fields) = members(body) {
        // Each field's name, value and tokens, measured once.
        let fields: Vec<(String, &str, usize)> = fields
            .map(|(k, v)| (k.into_owned(), v, estimate_tokens(v)))
            .collect();
        let inline = |name: &str, tokens: usize, limit: usize| {
            kept.contains(&name) || (!whole && tokens <= limit)
        };
        let mut limit = SHORT_FIELD_TOKENS;
        // Short fields that still weigh more than the body may: fewer stay, the shortest.
        while limit > 0
            && fields
                .iter()
                .filter(|(name, _, tokens)| inline(name, *tokens, limit))
                .map(|(_, _, tokens)| tokens)
                .sum::<usize>()
                > above_tokens / 2
        {
            limit /= 2;
        }
        let mut out = String::with_capacity(body.len());
        let mut copied = 0;
        for (name, value, tokens) in &fields {
            if inline(name, *tokens, limit) {
                continue;
            }
            let start = offset_in(body, value);
            out.push_str(&body[copied..start]);
            out.push_str(&placeholder(value));
            copied = start + value.len();
        }
        out.push_str(&body[copied..]);
        return out;
    }
    if let Some(mut parts) = items(body) {
        let (head, tail) = match parts
            .next()
            .is_some_and(|first| field(first, "type").is_some())
        {
            true => ("{\"type\":\"text\",\"text\":", "}"),
            false => ("", ""),
        };
        return format!("[{head}{}{tail}]", placeholder(body));
    }
    placeholder(body)
}

/// Where `part`, a slice of `text`, begins in it.
fn offset_in(text: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

/// `text` with `part` (a slice of `text`) replaced by `with`.
fn replace_span(text: &str, part: &str, with: &str) -> String {
    let start = offset_in(text, part);
    let end = start + part.len();
    match (text.get(..start), text.get(end..)) {
        (Some(head), Some(tail)) => format!("{head}{with}{tail}"),
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests;
