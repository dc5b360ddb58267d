//! Choosing what to compact: every entry of iterations before the current one.

use crate::core::json::record::json_record;
use crate::core::log::entries::{StoredExecution, StoredReasoning, StoredToolActivity};
use crate::core::log::iteration::parse_summary_header;
use crate::core::log::placement::PlacedIterations;
use crate::core::log::snapshot::LogSnapshot;
use crate::core::model::outcome::EntryCounts;
use crate::core::order::sort::sort_unique;

/// The iteration an archived entry placed at iteration `n` is read back with: its own, the
/// preamble (the entries before the first iteration's header, placed at 0: a GDRS session's
/// query) with iteration 1, which it is compacted with.
pub fn recalled_with(n: u32) -> u32 {
    n.max(1)
}

/// One value per compacted entry, log by log, in the order of the archived entries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PerEntry<T> {
    /// Of the reasoning entries.
    pub reasoning_log: Vec<T>,
    /// Of the execution entries.
    pub execution_log: Vec<T>,
    /// Of the tool entries.
    pub tool_activity_log: Vec<T>,
}

json_record! {
    read write PerEntry<T> {
        reasoning_log: "reasoningLog" req,
        execution_log: "executionLog" req,
        tool_activity_log: "toolActivityLog" req,
    }
}

/// Where each compacted entry stood in its log before the compaction (0-based), so that a
/// rollback puts it back in the same place among the entries that stayed.
pub type Positions = PerEntry<usize>;

/// The iteration of each compacted entry (what `recall` reads).
pub type EntryIterations = PerEntry<u32>;

/// The entries of iterations 1..N-1 (and any preamble), borrowed from the logs they were
/// selected from, and a copy of what stays.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection<'a> {
    /// The first iteration compacted: 1, or the first of a part (see [`Selection::part`]).
    pub first: u32,
    /// The current iteration N, kept verbatim.
    pub current: u32,
    /// The last iteration compacted, N-1.
    pub last: u32,
    /// Compacted reasoning entries with their iteration, in log order (earlier summaries
    /// included).
    pub reasoning: Vec<(u32, &'a StoredReasoning)>,
    /// Compacted execution entries with their iteration, as stored.
    pub execution: Vec<(u32, &'a StoredExecution)>,
    /// Compacted tool entries with their iteration, as stored.
    pub tool_activity: Vec<(u32, &'a StoredToolActivity)>,
    /// Where the compacted entries stood in their logs.
    pub positions: Positions,
    /// The entries that stay, as stored.
    pub kept: LogSnapshot,
}

impl<'a> Selection<'a> {
    /// Splits `logs` at the current iteration.
    pub fn of(logs: &'a LogSnapshot) -> Selection<'a> {
        Selection::placed(logs, &logs.placed_iterations())
    }

    /// Splits `logs`, placed as `placed` says, at the current iteration.
    pub fn placed(logs: &'a LogSnapshot, placed: &PlacedIterations) -> Selection<'a> {
        let current = placed.current;
        let reasoning = split_at(current, &placed.entries.reasoning, &logs.reasoning);
        let execution = split_at(current, &placed.entries.execution, &logs.execution);
        let tool_activity = split_at(current, &placed.entries.tool_activity, &logs.tool_activity);
        Selection {
            first: 1,
            current,
            last: current.saturating_sub(1),
            positions: Positions {
                reasoning_log: reasoning.positions,
                execution_log: execution.positions,
                tool_activity_log: tool_activity.positions,
            },
            reasoning: reasoning.compacted,
            execution: execution.compacted,
            tool_activity: tool_activity.compacted,
            kept: LogSnapshot {
                reasoning: reasoning.kept,
                execution: execution.kept,
                tool_activity: tool_activity.kept,
            },
        }
    }

    /// The entries of iterations `first..=last` alone (the preamble counts as iteration 1),
    /// with nothing kept: one part of a selection too large for one summary call.
    pub fn part(&self, first: u32, last: u32) -> Selection<'a> {
        fn within<T: Copy, P: Copy>(
            entries: &[(u32, T)],
            positions: &[P],
            first: u32,
            last: u32,
        ) -> (Vec<(u32, T)>, Vec<P>) {
            entries
                .iter()
                .zip(positions)
                .filter(|((n, _), _)| (first..=last).contains(&(*n).max(1)))
                .map(|(entry, position)| (*entry, *position))
                .unzip()
        }
        let positions = &self.positions;
        let (reasoning, reasoning_log) =
            within(&self.reasoning, &positions.reasoning_log, first, last);
        let (execution, execution_log) =
            within(&self.execution, &positions.execution_log, first, last);
        let (tool_activity, tool_activity_log) = within(
            &self.tool_activity,
            &positions.tool_activity_log,
            first,
            last,
        );
        Selection {
            first,
            current: last.saturating_add(1),
            last,
            reasoning,
            execution,
            tool_activity,
            positions: Positions {
                reasoning_log,
                execution_log,
                tool_activity_log,
            },
            kept: LogSnapshot::default(),
        }
    }

    /// Whether there is anything to compact.
    pub fn is_empty(&self) -> bool {
        self.reasoning.is_empty() && self.execution.is_empty() && self.tool_activity.is_empty()
    }

    /// Entries per log that would be replaced.
    pub fn counts(&self) -> EntryCounts {
        EntryCounts {
            reasoning: self.reasoning.len(),
            execution: self.execution.len(),
            tool_activity: self.tool_activity.len(),
        }
    }

    /// Tokens of the compacted entries, given the `total` of the logs they were selected
    /// from: every entry is counted on its own, so what is not kept was compacted.
    #[cfg(test)]
    fn compacted_tokens(&self, total: usize) -> usize {
        total.saturating_sub(self.kept.estimate_tokens())
    }

    /// The compacted entries, as stored: what the archive keeps.
    pub fn originals(&self) -> LogSnapshot {
        fn copies<T: Clone>(entries: &[(u32, &T)]) -> Vec<T> {
            entries.iter().map(|(_, e)| (*e).clone()).collect()
        }
        LogSnapshot {
            reasoning: copies(&self.reasoning),
            execution: copies(&self.execution),
            tool_activity: copies(&self.tool_activity),
        }
    }

    /// Bodies of earlier compacted summaries among the compacted entries, with their ranges.
    pub(crate) fn earlier_summaries(&self) -> Vec<((u32, u32), String)> {
        self.reasoning
            .iter()
            .filter_map(|(_, entry)| {
                let range = parse_summary_header(entry)?;
                Some((range, summary_body(entry)))
            })
            .collect()
    }

    /// The iterations whose entries are compacted (from 1; the preamble is not listed), always
    /// with the last one: as many as there are entries at most, never one per iteration number
    /// (an entry may claim iteration 4,000,000,000).
    pub fn iterations(&self) -> Vec<u32> {
        let mut iterations: Vec<u32> = self
            .reasoning
            .iter()
            .map(|(n, _)| *n)
            .chain(self.execution.iter().map(|(n, _)| *n))
            .chain(self.tool_activity.iter().map(|(n, _)| *n))
            .filter(|n| *n >= 1)
            .chain((self.last >= 1).then_some(self.last))
            .collect();
        sort_unique(&mut iterations);
        iterations
    }
}

/// One log split at the current iteration.
struct Split<'a, T> {
    compacted: Vec<(u32, &'a T)>,
    positions: Vec<usize>,
    kept: Vec<T>,
}

/// Entries of iterations before `current` (with their iteration and position), and a copy of
/// the rest, in order.
fn split_at<'a, T: Clone>(current: u32, placed: &[u32], entries: &'a [T]) -> Split<'a, T> {
    let mut split = Split {
        compacted: Vec::new(),
        positions: Vec::new(),
        kept: Vec::new(),
    };
    for (position, (n, entry)) in placed.iter().zip(entries).enumerate() {
        if *n < current {
            split.compacted.push((*n, entry));
            split.positions.push(position);
        } else {
            split.kept.push(entry.clone());
        }
    }
    split
}

/// The text between a summary entry's header line and its end marker.
pub(crate) fn summary_body(entry: &str) -> String {
    let body = entry.split_once('\n').map_or("", |(_, rest)| rest);
    body.trim_end()
        .strip_suffix(crate::core::log::iteration::SUMMARY_END)
        .unwrap_or(body)
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::log::iteration::iteration_header;
    use crate::core::log::stored_entry::Stored;

    #[test]
    fn compacted_tokens_are_the_tokens_of_the_originals() {
        let mut logs = LogSnapshot::default();
        for n in 1..=4u32 {
            logs.reasoning.push(Stored::encode(&iteration_header(n)));
            logs.reasoning.push(Stored::encode(&format!(
                "Step {n}: checked 40213 rows, 3 mismatched ids."
            )));
            logs.execution.push(Stored::from_json_text(&format!(
                r#"{{"iteration":{n},"code":"rows.filter((r) => r.week === {n})"}}"#
            )));
            logs.tool_activity.push(Stored::from_json_text(&format!(
                r#"{{"iteration":{n},"type":"vfs"}}"#
            )));
        }
        let selection = Selection::of(&logs);
        assert_eq!(selection.last, 3);
        assert_eq!(
            selection.compacted_tokens(logs.estimate_tokens()),
            selection.originals().estimate_tokens()
        );
    }
}
