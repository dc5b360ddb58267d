//! Choosing what to compact: every entry of iterations before the current one.

use super::entries::{ExecutionEntry, ToolActivityEntry};
use super::iteration::parse_summary_header;
use super::log_store::LogSnapshot;
use super::outcome::EntryCounts;

/// The entries of iterations 1..N-1 (and any preamble), borrowed from the logs they were
/// selected from, and a copy of what stays.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection<'a> {
    /// The current iteration N, kept verbatim.
    pub current: u32,
    /// The last iteration compacted, N-1.
    pub last: u32,
    /// Compacted reasoning entries with their iteration, in log order (earlier summaries
    /// included).
    pub reasoning: Vec<(u32, &'a str)>,
    /// Compacted execution entries with their iteration, as stored.
    pub execution: Vec<(u32, &'a ExecutionEntry)>,
    /// Compacted tool entries with their iteration, as stored.
    pub tool_activity: Vec<(u32, &'a ToolActivityEntry)>,
    /// The entries that stay, as stored.
    pub kept: LogSnapshot,
}

impl<'a> Selection<'a> {
    /// Splits `logs` at the current iteration.
    pub fn of(logs: &'a LogSnapshot) -> Selection<'a> {
        let current = logs.current_iteration();
        let placed = logs.placed_iterations();
        let (reasoning, kept_reasoning) = split_at(current, placed.reasoning, &logs.reasoning);
        let (execution, kept_execution) = split_at(current, placed.execution, &logs.execution);
        let (tool_activity, kept_tools) =
            split_at(current, placed.tool_activity, &logs.tool_activity);
        let kept = LogSnapshot {
            reasoning: kept_reasoning,
            execution: kept_execution,
            tool_activity: kept_tools,
        };
        Selection {
            current,
            last: current.saturating_sub(1),
            reasoning: reasoning
                .into_iter()
                .map(|(n, entry)| (n, entry.as_str()))
                .collect(),
            execution,
            tool_activity,
            kept,
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
    pub fn compacted_tokens(&self, total: usize) -> usize {
        total.saturating_sub(self.kept.estimate_tokens())
    }

    /// The compacted entries, as stored: what the archive keeps.
    pub fn originals(&self) -> LogSnapshot {
        LogSnapshot {
            reasoning: self
                .reasoning
                .iter()
                .map(|(_, e)| (*e).to_owned())
                .collect(),
            execution: self.execution.iter().map(|(_, e)| (*e).clone()).collect(),
            tool_activity: self
                .tool_activity
                .iter()
                .map(|(_, e)| (*e).clone())
                .collect(),
        }
    }

    /// Bodies of earlier compacted summaries among the compacted entries, with their ranges.
    pub fn earlier_summaries(&self) -> Vec<((u32, u32), String)> {
        self.reasoning
            .iter()
            .filter_map(|(_, entry)| {
                let range = parse_summary_header(entry)?;
                Some((range, summary_body(entry)))
            })
            .collect()
    }

    /// The iterations compacted, from 1 (a later compaction's range starts at 1 again).
    pub fn iterations(&self) -> Vec<u32> {
        (1..=self.last).collect()
    }
}

/// Entries of iterations before `current` (with their iteration), and a copy of the rest, in
/// order.
fn split_at<T: Clone>(current: u32, placed: Vec<u32>, entries: &[T]) -> (Vec<(u32, &T)>, Vec<T>) {
    let mut compacted = Vec::new();
    let mut kept = Vec::new();
    for (n, entry) in placed.into_iter().zip(entries) {
        if n < current {
            compacted.push((n, entry));
        } else {
            kept.push(entry.clone());
        }
    }
    (compacted, kept)
}

/// The text between a summary entry's header line and its end marker.
pub fn summary_body(entry: &str) -> String {
    let body = entry.split_once('\n').map_or("", |(_, rest)| rest);
    body.trim_end()
        .strip_suffix(super::swap::SUMMARY_END)
        .unwrap_or(body)
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::iteration::iteration_header;

    #[test]
    fn compacted_tokens_are_the_tokens_of_the_originals() {
        let mut logs = LogSnapshot::default();
        for n in 1..=4u32 {
            logs.reasoning.push(iteration_header(n));
            logs.reasoning
                .push(format!("Step {n}: checked 40213 rows, 3 mismatched ids."));
            logs.execution.push(ExecutionEntry {
                iteration: Some(n),
                code: Some(format!("rows.filter((r) => r.week === {n})")),
                ..Default::default()
            });
            logs.tool_activity.push(ToolActivityEntry {
                iteration: Some(n),
                kind: Some("vfs".into()),
                ..Default::default()
            });
        }
        let selection = Selection::of(&logs);
        assert_eq!(selection.last, 3);
        assert_eq!(
            selection.compacted_tokens(logs.estimate_tokens()),
            selection.originals().estimate_tokens()
        );
    }
}
