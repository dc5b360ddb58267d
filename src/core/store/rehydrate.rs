//! Rehydration: the archived originals a model's message refers to — an iteration it names
//! (`iteration 12`, `iterations 3–5`, `recall(3..5)`), or an id, file name or figure that only
//! an archive still holds — within a token budget, newest first, for the app's next prompt
//! only. An iteration offered is not offered again by the next two calls.

use crate::core::error::StorageError;
use crate::core::json::record::json_record;
use crate::core::log::tokens::estimate_tokens;
use crate::core::order::join::Joined;
use crate::core::order::sort::sort_unique;
use crate::core::order::text_search::TextSearch;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::steps::clearing::CLEARED_MARK;
use crate::core::steps::item_search::ItemSearch;
use crate::core::steps::verify::each_item;
use crate::core::store::archives::StoredArchives;

/// The tokens rehydration adds at most when the app sets no budget.
pub const DEFAULT_REHYDRATE_TOKENS: usize = 2_000;

/// Calls after the one that offered an iteration that do not offer it again.
pub const COOLDOWN_CALLS: u32 = 2;

/// The ids, file names and figures of a message that are looked for: the first this many (a
/// message that names more is a dump, not a reference), so that a megabyte of them costs what
/// a page of them does.
const MAX_NAMED_ITEMS: usize = 100_000;

/// The widest range a message's words bring back (`iterations 1–4000` is a mistake).
const MAX_NAMED_RANGE: u32 = 50;

/// Which iterations the recent calls offered.
#[derive(Debug, Clone, Default)]
pub struct Cooldown {
    call: u32,
    offered: Vec<(u32, u32)>,
}

impl Cooldown {
    /// Starts a call: what the calls before the last [`COOLDOWN_CALLS`] offered is free again.
    fn begin(&mut self) {
        self.call = self.call.saturating_add(1);
        let call = self.call;
        self.offered.retain(|(_, at)| call - at <= COOLDOWN_CALLS);
    }

    fn cooling(&self, iteration: u32) -> bool {
        self.offered.iter().any(|(n, _)| *n == iteration)
    }
}

/// The originals a text refers to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rehydrated {
    /// The iterations whose originals `text` holds, newest first.
    pub iterations: Vec<u32>,
    /// Their entries, one a line (`[iteration 3 · execution] {…}`).
    pub text: String,
    /// The estimated tokens of `text`.
    pub tokens: usize,
    /// The iterations referred to whose originals did not fit in the budget, newest first, each
    /// with its tokens: `recall(n)` or a larger budget brings them.
    pub too_large: Vec<TooLarge>,
}

json_record! {
    write Rehydrated {
        iterations: "iterations" req,
        text: "text" req,
        tokens: "tokens" req,
        too_large: "tooLarge" req,
    }
}

/// An iteration whose originals a text refers to but a budget left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TooLarge {
    /// The iteration.
    pub iteration: u32,
    /// The estimated tokens of its originals.
    pub tokens: usize,
}

json_record! {
    write TooLarge {
        iteration: "iteration" req,
        tokens: "tokens" req,
    }
}

/// The ranges of iterations `text` names (`iteration 12`, `iterations 3–5` (or `3-5`,
/// `3 to 5`), `recall(3..5)`, ASCII case ignored), sorted and merged: a message that names
/// an iteration a million times names one.
pub fn named_ranges(text: &str) -> Vec<(u32, u32)> {
    let lower = text.to_ascii_lowercase();
    let mut named = Vec::new();
    for (word, skip) in [("iteration", "s "), ("recall(", "")] {
        let mut rest = lower.as_str();
        while let Some(at) = rest.find_text(word) {
            rest = &rest[at + word.len()..];
            let after = rest.trim_start_matches(|c: char| skip.chars().any(|s| s == c));
            let (first, tail) = leading_number(after);
            let Some(first) = first else { continue };
            let tail = tail.trim_start();
            let tail = ["–", "-", "..", "to "]
                .into_iter()
                .find_map(|dash| tail.strip_prefix(dash));
            let last = tail.and_then(|t| leading_number(t.trim_start()).0);
            let last = last.filter(|last| *last >= first).unwrap_or(first);
            named.push((first, last.min(first.saturating_add(MAX_NAMED_RANGE))));
        }
    }
    sort_unique(&mut named);
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(named.len());
    for (first, last) in named {
        match merged.last_mut() {
            Some(open) if first <= open.1.saturating_add(1) => open.1 = open.1.max(last),
            _ => merged.push((first, last)),
        }
    }
    merged
}

/// The whole number at the head of `text` (from 1), and what follows it.
fn leading_number(text: &str) -> (Option<u32>, &str) {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let number = text[..digits].parse().ok().filter(|n| *n > 0);
    (number, &text[digits..])
}

/// The ids, file names and figures (four digits or more) of `text` that may name an archived
/// entry, ASCII case ignored.
fn named_items(text: &str) -> ItemSearch {
    let mut items = Vec::new();
    each_item(text, |item| {
        let figure = item.bytes().filter(u8::is_ascii_digit).count() >= 4;
        if items.len() < MAX_NAMED_ITEMS
            && (figure || item.bytes().any(|b| b.is_ascii_alphabetic()))
        {
            items.push(item.to_owned());
        }
    });
    ItemSearch::new(items)
}

impl<S: KeyValueStore, C: Clock> StoredArchives<'_, S, C> {
    /// The archived originals `text` refers to, newest first, whole iterations within
    /// `budget` tokens, none that `cooldown` says the last calls offered; nothing is written.
    /// Each live log and each archive is read once, whatever the text names. `cooldown`
    /// changes only when the call succeeds (a read that fails is tried again as the same call).
    pub fn rehydrate(
        &self,
        text: &str,
        budget: usize,
        cooldown: &mut Cooldown,
    ) -> Result<Rehydrated, StorageError> {
        let mut next = cooldown.clone();
        let out = self.rehydrated(text, budget, &mut next)?;
        *cooldown = next;
        Ok(out)
    }

    fn rehydrated(
        &self,
        text: &str,
        budget: usize,
        cooldown: &mut Cooldown,
    ) -> Result<Rehydrated, StorageError> {
        cooldown.begin();
        let ranges = named_ranges(text);
        let mut items = named_items(text);
        // An item a live entry still holds is live, not a reason to bring an archive back; a
        // placeholder holds its body's items without the body, which the archives give.
        let mut live_items = vec![false; items.len()];
        let live = self.live()?;
        let entries = live.items(self.keys())?;
        for entry in [entries.reasoning, entries.execution, entries.tool_activity]
            .iter()
            .flatten()
            .filter(|entry| !entry.contains_text(CLEARED_MARK))
        {
            items.each_in(entry, |at| live_items[at] = true);
        }
        items.retain(|at| !live_items[at]);
        if ranges.is_empty() && items.is_empty() {
            return Ok(Rehydrated::default());
        }
        // In iteration order (`entries_in` sorts them).
        // A damaged archive brings nothing back; the others still do.
        let (archived, _) = self.entries_in(1, u32::MAX, &[])?;
        let in_range = |n: u32| {
            let at = ranges.partition_point(|(_, last)| *last < n);
            ranges.get(at).is_some_and(|(first, _)| *first <= n)
        };
        let mut wanted: Vec<u32> = archived
            .iter()
            .filter(|entry| in_range(entry.iteration) || items.any_in(entry.body()))
            .map(|entry| entry.iteration)
            .collect();
        sort_unique(&mut wanted);
        let mut out = Rehydrated::default();
        for iteration in wanted.into_iter().rev() {
            if cooldown.cooling(iteration) {
                continue;
            }
            let start = archived.partition_point(|entry| entry.iteration < iteration);
            let end = archived.partition_point(|entry| entry.iteration <= iteration);
            let lines: Vec<&str> = archived[start..end]
                .iter()
                .map(|entry| entry.text.as_str())
                .collect();
            let block = lines.joined("\n");
            let tokens = estimate_tokens(&block);
            if lines.is_empty() {
                continue;
            }
            if out.tokens.saturating_add(tokens) > budget {
                out.too_large.push(TooLarge { iteration, tokens });
                continue;
            }
            if !out.text.is_empty() {
                out.text.push('\n');
            }
            out.text.push_str(&block);
            out.tokens = estimate_tokens(&out.text);
            out.iterations.push(iteration);
            cooldown.offered.push((iteration, cooldown.call));
        }
        Ok(out)
    }
}
