//! Rehydration: the archived originals a model's message refers to — an iteration it names
//! (`iteration 12`, `iterations 3–5`, `recall(3..5)`), or an id, file name or figure that only
//! an archive still holds — within a token budget, newest first, for the app's next prompt
//! only. An iteration offered is not offered again by the next two calls.

use crate::core::error::StorageError;
use crate::core::json::record::json_record;
use crate::core::log::tokens::estimate_tokens;
use crate::core::order::sort::sort_unique;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::steps::verify::items_in;
use crate::core::store::archives::Archives;

/// The tokens rehydration adds at most when the app sets no budget.
pub const DEFAULT_REHYDRATE_TOKENS: usize = 2_000;

/// Calls after the one that offered an iteration that do not offer it again.
pub const COOLDOWN_CALLS: u32 = 2;

/// The widest range a message's words bring back (`iterations 1–4000` is a mistake).
const MAX_NAMED_RANGE: u32 = 50;

/// Which iterations the recent calls offered.
#[derive(Debug, Default)]
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
}

json_record! {
    write Rehydrated {
        iterations: "iterations" req,
        text: "text" req,
        tokens: "tokens" req,
    }
}

/// The iterations `text` names: `iteration 12`, `iterations 3–5` (or `3-5`, `3 to 5`),
/// `recall(3..5)`, ASCII case ignored.
pub fn named_iterations(text: &str) -> Vec<u32> {
    let lower = text.to_ascii_lowercase();
    let mut named = Vec::new();
    for (word, skip) in [("iteration", "s "), ("recall(", "")] {
        let mut rest = lower.as_str();
        while let Some(at) = rest.find(word) {
            rest = &rest[at + word.len()..];
            let after = rest.trim_start_matches(|c: char| skip.contains(c));
            let (first, tail) = leading_number(after);
            let Some(first) = first else { continue };
            let tail = tail.trim_start();
            let tail = ["–", "-", "..", "to "]
                .into_iter()
                .find_map(|dash| tail.strip_prefix(dash));
            let last = tail.and_then(|t| leading_number(t.trim_start()).0);
            let last = last.filter(|last| *last >= first).unwrap_or(first);
            named.extend(first..=last.min(first.saturating_add(MAX_NAMED_RANGE)));
        }
    }
    named
}

/// The whole number at the head of `text` (from 1), and what follows it.
fn leading_number(text: &str) -> (Option<u32>, &str) {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let number = text[..digits].parse().ok().filter(|n| *n > 0);
    (number, &text[digits..])
}

impl<S: KeyValueStore, C: Clock> Archives<'_, S, C> {
    /// The archived originals `text` refers to, newest first, whole iterations within
    /// `budget` tokens, none that `cooldown` says the last calls offered; nothing is written.
    pub fn rehydrate(
        &self,
        text: &str,
        budget: usize,
        cooldown: &mut Cooldown,
    ) -> Result<Rehydrated, StorageError> {
        cooldown.begin();
        let mut wanted = named_iterations(text);
        let live = self.live()?;
        let live = [live.reasoning, live.execution, live.tool_activity];
        // An id, file name or figure (four digits or more) no live entry holds any more.
        let items: Vec<String> = items_in(text)
            .into_iter()
            .filter(|item| {
                let figure = item.bytes().filter(u8::is_ascii_digit).count() >= 4;
                let named = figure || item.bytes().any(|b| b.is_ascii_alphabetic());
                named && !live.iter().flatten().any(|log| log.contains(item.as_str()))
            })
            .map(|item| item.to_ascii_lowercase())
            .collect();
        if wanted.is_empty() && items.is_empty() {
            return Ok(Rehydrated::default());
        }
        // Every archive is read once, whatever the text names.
        let archived = self.entries_in(1, u32::MAX, &[])?;
        if !items.is_empty() {
            for entry in &archived {
                let lower = entry.body().to_ascii_lowercase();
                if items.iter().any(|item| lower.contains(item.as_str())) {
                    wanted.push(entry.iteration);
                }
            }
        }
        sort_unique(&mut wanted);
        let mut out = Rehydrated::default();
        for iteration in wanted.into_iter().rev() {
            if cooldown.cooling(iteration) {
                continue;
            }
            let lines: Vec<&str> = archived
                .iter()
                .filter(|entry| entry.iteration == iteration)
                .map(|entry| entry.text.as_str())
                .collect();
            let block = lines.join("\n");
            let tokens = estimate_tokens(&block);
            if lines.is_empty() || out.tokens.saturating_add(tokens) > budget {
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
