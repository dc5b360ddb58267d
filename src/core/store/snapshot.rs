//! The three logs as read at one moment: their stored text (to write back only what changed
//! and to tell whether another writer changed them) and their parsed entries.

use crate::core::entries::{HasFacts, StoredExecution, StoredReasoning, StoredToolActivity};
use crate::core::error::StorageError;
use crate::core::iteration::parse_summary_header;
use crate::core::journal::{text_hash, LogHashes};
use crate::core::keys::StorageKeys;
use crate::core::placement::{current_iteration, place, PlacedIterations};
use crate::core::stored_entry::{join_entries, parse_entries, Stored};
use crate::core::tokens::estimate_tokens;

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

/// The three logs as the exact texts stored (`None` for an absent key).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawLogs {
    /// `<prefix>reasoning_log`.
    pub reasoning: Option<String>,
    /// `<prefix>execution_log`.
    pub execution: Option<String>,
    /// `<prefix>tool_activity_log`.
    pub tool_activity: Option<String>,
}

impl RawLogs {
    /// The texts `logs` is stored as: every entry as its stored text.
    pub fn encode(logs: &LogSnapshot) -> RawLogs {
        RawLogs {
            reasoning: Some(join_entries(&logs.reasoning)),
            execution: Some(join_entries(&logs.execution)),
            tool_activity: Some(join_entries(&logs.tool_activity)),
        }
    }

    /// The three logs these texts hold; text that is not a JSON array is an error naming its
    /// key.
    pub fn parse(&self, keys: &StorageKeys) -> Result<LogSnapshot, StorageError> {
        Ok(LogSnapshot {
            reasoning: parse_entries(&keys.reasoning(), self.reasoning.as_deref())?,
            execution: parse_entries(&keys.execution(), self.execution.as_deref())?,
            tool_activity: parse_entries(&keys.tool_activity(), self.tool_activity.as_deref())?,
        })
    }

    /// FNV-1a hashes of the three texts.
    pub(crate) fn hashes(&self) -> LogHashes {
        LogHashes {
            reasoning: text_hash(self.reasoning.as_deref()),
            execution: text_hash(self.execution.as_deref()),
            tool_activity: text_hash(self.tool_activity.as_deref()),
        }
    }
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

/// The logs as read at one moment: the stored texts and what they hold.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReadLogs {
    /// The texts as stored.
    pub raw: RawLogs,
    /// The entries those texts hold.
    pub parsed: LogSnapshot,
}

impl LogSnapshot {
    /// Where every entry belongs (see [`crate::core::placement`]).
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
        let current = placed.current;
        let mut census = Census {
            current,
            ..Census::default()
        };
        for (entry, n) in self.reasoning.iter().zip(&placed.reasoning) {
            let tokens = estimate_tokens(entry);
            census.tokens += tokens;
            if *n < current {
                census.compacted_tokens += tokens;
                if parse_summary_header(entry).is_some() {
                    census.summary_tokens += tokens;
                }
            }
        }
        let entries = self
            .execution
            .iter()
            .map(Stored::json)
            .zip(&placed.execution)
            .chain(
                self.tool_activity
                    .iter()
                    .map(Stored::json)
                    .zip(&placed.tool_activity),
            );
        for (json, n) in entries {
            let tokens = estimate_tokens(json);
            census.tokens += tokens;
            if *n < current {
                census.compacted_tokens += tokens;
            }
        }
        census
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
