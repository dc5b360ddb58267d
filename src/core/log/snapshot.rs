//! The three logs as read at one moment: their stored text (to write back only what changed
//! and to tell whether another writer changed them) and their parsed entries.

use crate::core::log::entries::{HasFacts, StoredExecution, StoredReasoning, StoredToolActivity};
use crate::core::log::iteration::parse_summary_header;
use crate::core::log::placement::{current_iteration, place, PlacedIterations};
use crate::core::log::stored_entry::Stored;
use crate::core::log::tokens::estimate_tokens;

/// All three logs exactly as stored at one moment, each entry with its stored text.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LogSnapshot {
    /// Reasoning entries, headers included.
    pub reasoning: Vec<StoredReasoning>,
    /// Execution entries.
    pub execution: Vec<StoredExecution>,
    /// Tool entries.
    pub tool_activity: Vec<StoredToolActivity>,
}

/// What the logs hold at one moment, counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Census {
    /// The current iteration.
    pub current: u32,
    /// Estimated tokens of all three logs.
    pub tokens: usize,
    /// Of those, the tokens of the entries a compaction would replace (iterations before the
    /// current one).
    pub compacted_tokens: usize,
    /// Of those, the tokens of earlier compacted summaries.
    pub summary_tokens: usize,
}

impl LogSnapshot {
    /// Where every entry belongs (see [`crate::core::log::placement`]).
    pub fn placed_iterations(&self) -> PlacedIterations {
        place(&self.reasoning, &self.execution, &self.tool_activity)
    }

    /// The highest iteration any log names or implies, 0 when all are empty.
    pub fn current_iteration(&self) -> u32 {
        current_iteration(&self.reasoning, &self.execution, &self.tool_activity)
    }

    /// Where the entries belong and what they weigh, in one pass.
    pub fn census(&self) -> Census {
        self.census_of(&self.placed_iterations())
    }

    /// What the entries weigh, placed as `placed` says.
    pub(crate) fn census_of(&self, placed: &PlacedIterations) -> Census {
        let mut census = Census {
            current: placed.current,
            ..Census::default()
        };
        self.count_reasoning(placed, &mut census);
        self.count_entries(placed, &mut census);
        census
    }

    /// Adds what the reasoning entries weigh to `census` (one of the two halves of
    /// [`LogSnapshot::census_of`], so that a caller sharing the page can let it run between).
    pub(crate) fn count_reasoning(&self, placed: &PlacedIterations, census: &mut Census) {
        let current = census.current;
        for (entry, n) in self.reasoning.iter().zip(&placed.entries.reasoning) {
            let tokens = estimate_tokens(entry);
            census.tokens += tokens;
            if *n < current {
                census.compacted_tokens += tokens;
                if parse_summary_header(entry).is_some() {
                    census.summary_tokens += tokens;
                }
            }
        }
    }

    /// Adds what the execution and tool entries weigh to `census` (the other half).
    pub(crate) fn count_entries(&self, placed: &PlacedIterations, census: &mut Census) {
        let current = census.current;
        let entries = self
            .execution
            .iter()
            .map(Stored::json)
            .zip(&placed.entries.execution)
            .chain(
                self.tool_activity
                    .iter()
                    .map(Stored::json)
                    .zip(&placed.entries.tool_activity),
            );
        for (json, n) in entries {
            let tokens = estimate_tokens(json);
            census.tokens += tokens;
            if *n < current {
                census.compacted_tokens += tokens;
            }
        }
    }

    /// Estimated tokens of all three logs: reasoning text, and each entry as its JSON.
    pub fn estimate_tokens(&self) -> usize {
        let reasoning: usize = self.reasoning.iter().map(|e| estimate_tokens(e)).sum();
        let execution: usize = self
            .execution
            .iter()
            .map(|e| estimate_tokens(e.json()))
            .sum();
        let tools: usize = self
            .tool_activity
            .iter()
            .map(|e| estimate_tokens(e.json()))
            .sum();
        reasoning + execution + tools
    }
}

/// `entries` as a JSON array with `stamp` written into each entry that lacks it (the
/// placed iteration, for readers); the stored texts are not changed.
pub(crate) fn with_placed_iterations<V: HasFacts>(entries: &[Stored<V>], placed: &[u32]) -> String {
    let mut out = String::from("[");
    for (i, (entry, n)) in entries.iter().zip(placed).enumerate() {
        if i > 0 {
            out.push(',');
        }
        let json = entry.json();
        match json.trim_start().strip_prefix('{') {
            Some(rest) if !entry.view().facts().has_iteration => {
                let separator = if rest.trim_start().starts_with('}') {
                    ""
                } else {
                    ","
                };
                out.push_str(&format!("{{\"iteration\":{n}{separator}{rest}"));
            }
            _ => out.push_str(json),
        }
    }
    out.push(']');
    out
}
