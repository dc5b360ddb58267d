//! Swapping the summary in for the compacted entries, and the archived entries back in.

use std::borrow::Cow;

use crate::core::log::entries::StoredReasoning;
use crate::core::log::iteration::SUMMARY_END;
use crate::core::log::iteration::{parse_summary_header, summary_header, summary_source_line};
use crate::core::log::snapshot::LogSnapshot;
use crate::core::model::reasons::Conflict;
use crate::core::steps::selection::{Positions, Selection};

/// The text of the reasoning entry that stands for iterations 1..=`last`; `failed` is the
/// code of the model's failure when the summary is the package's own.
pub(crate) fn summary_entry(
    last: u32,
    archive_key: &str,
    summary: &str,
    failed: Option<&str>,
) -> String {
    format!(
        "{}\n{}\n{summary}\n{SUMMARY_END}",
        summary_header(1, last),
        summary_source_line(1, last, archive_key, failed)
    )
}

/// The entries of `now` after those of `before`, if `now` only grew by appends.
fn appended<'a, T: PartialEq>(
    before: &[T],
    now: &'a [T],
    log: &'static str,
) -> Result<&'a [T], Conflict> {
    // The same read (nothing was written meanwhile) needs no entry-by-entry comparison.
    let same_read = std::ptr::eq(before, now);
    if same_read || (now.len() >= before.len() && now[..before.len()] == *before) {
        Ok(&now[before.len()..])
    } else {
        Err(Conflict::Rewritten { log })
    }
}

/// What was appended to `now` since `before` was read (empty where `now` is not an extension).
pub(crate) fn appended_since(before: &LogSnapshot, now: &LogSnapshot) -> LogSnapshot {
    fn tail<T: Clone>(before: &[T], now: &[T]) -> Vec<T> {
        now.get(before.len()..)
            .map(<[T]>::to_vec)
            .unwrap_or_default()
    }
    LogSnapshot {
        reasoning: tail(&before.reasoning, &now.reasoning),
        execution: tail(&before.execution, &now.execution),
        tool_activity: tail(&before.tool_activity, &now.tool_activity),
    }
}

/// The logs after a compaction: the summary entry, then the kept entries, then whatever was
/// appended to `now` since `before` was read. Removes exactly the selected entries.
pub fn replace(
    before: &LogSnapshot,
    now: &LogSnapshot,
    selection: &Selection,
    summary_entry: &StoredReasoning,
) -> Result<LogSnapshot, Conflict> {
    let reasoning_tail = appended(&before.reasoning, &now.reasoning, "reasoning")?;
    let execution_tail = appended(&before.execution, &now.execution, "execution")?;
    let tool_tail = appended(&before.tool_activity, &now.tool_activity, "tool activity")?;
    let mut reasoning = vec![summary_entry.clone()];
    reasoning.extend(selection.kept.reasoning.iter().cloned());
    reasoning.extend(reasoning_tail.iter().cloned());
    let mut execution = selection.kept.execution.clone();
    execution.extend(execution_tail.iter().cloned());
    let mut tool_activity = selection.kept.tool_activity.clone();
    tool_activity.extend(tool_tail.iter().cloned());
    Ok(LogSnapshot {
        reasoning,
        execution,
        tool_activity,
    })
}

/// The logs with an archive's entries back in place of the summary that replaced them
/// (the summary covering 1..=`last`), each at the position it had (see [`put_back`]); entries
/// appended since stay after them.
pub(crate) fn restore(
    now: &LogSnapshot,
    archived: &LogSnapshot,
    positions: Option<&Positions>,
    last: u32,
) -> Result<LogSnapshot, Conflict> {
    let position = summary_position(&now.reasoning, last).ok_or(Conflict::SummaryGone { last })?;
    let positions = Positions::or_at_start(positions, archived, Some(position));
    Ok(put_archived_back(
        now,
        archived,
        &positions,
        Some(position),
        Replaced::all(),
    ))
}

/// Which logs of an interrupted compaction were already replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Replaced {
    /// The execution log.
    pub execution: bool,
    /// The tool-activity log.
    pub tool_activity: bool,
}

impl Replaced {
    fn all() -> Self {
        Replaced {
            execution: true,
            tool_activity: true,
        }
    }

    /// A log still holds the archived entries where they stood (appends only go after them)
    /// unless it was replaced.
    pub(crate) fn judge(now: &LogSnapshot, archived: &LogSnapshot, positions: &Positions) -> Self {
        fn replaced<T: PartialEq>(now: &[T], archived: &[T], positions: &[usize]) -> bool {
            !archived
                .iter()
                .zip(positions)
                .all(|(entry, at)| now.get(*at) == Some(entry))
        }
        Replaced {
            execution: replaced(
                &now.execution,
                &archived.execution,
                &positions.execution_log,
            ),
            tool_activity: replaced(
                &now.tool_activity,
                &archived.tool_activity,
                &positions.tool_activity_log,
            ),
        }
    }
}

/// Undoes an interrupted compaction whatever subset of the logs it had written: the summary is
/// swapped back when present, and the archived entries go back into each log that had lost
/// them.
pub(crate) fn undo(
    now: &LogSnapshot,
    archived: &LogSnapshot,
    positions: Option<&Positions>,
    last: u32,
) -> LogSnapshot {
    let summary_at = summary_position(&now.reasoning, last);
    let positions = Positions::or_at_start(positions, archived, summary_at);
    let replaced = Replaced::judge(now, archived, &positions);
    put_archived_back(now, archived, &positions, summary_at, replaced)
}

/// Whether the summary of iterations 1..`last` is in the reasoning log: what a rollback of
/// its archive needs.
pub(crate) fn summary_is_live(reasoning: &[StoredReasoning], last: u32) -> bool {
    summary_position(reasoning, last).is_some()
}

fn summary_position(reasoning: &[StoredReasoning], last: u32) -> Option<usize> {
    reasoning
        .iter()
        .position(|entry| parse_summary_header(entry) == Some((1, last)))
}

impl Positions {
    /// `positions`, or for an archive written before positions were kept: its entries first
    /// (the reasoning ones where the summary stands).
    pub(crate) fn or_at_start<'a>(
        positions: Option<&'a Positions>,
        archived: &LogSnapshot,
        summary_at: Option<usize>,
    ) -> Cow<'a, Positions> {
        let Some(positions) = positions else {
            let summary_at = summary_at.unwrap_or(0);
            return Cow::Owned(Positions {
                reasoning_log: (summary_at..summary_at + archived.reasoning.len()).collect(),
                execution_log: (0..archived.execution.len()).collect(),
                tool_activity_log: (0..archived.tool_activity.len()).collect(),
            });
        };
        Cow::Borrowed(positions)
    }
}

fn put_archived_back(
    now: &LogSnapshot,
    archived: &LogSnapshot,
    positions: &Positions,
    summary_at: Option<usize>,
    replaced: Replaced,
) -> LogSnapshot {
    let reasoning = match summary_at {
        Some(at) => {
            let mut live = now.reasoning.clone();
            live.remove(at);
            put_back(&archived.reasoning, &positions.reasoning_log, &live)
        }
        None => now.reasoning.clone(),
    };
    let execution = if replaced.execution {
        put_back(
            &archived.execution,
            &positions.execution_log,
            &now.execution,
        )
    } else {
        now.execution.clone()
    };
    let tool_activity = if replaced.tool_activity {
        put_back(
            &archived.tool_activity,
            &positions.tool_activity_log,
            &now.tool_activity,
        )
    } else {
        now.tool_activity.clone()
    };
    LogSnapshot {
        reasoning,
        execution,
        tool_activity,
    }
}

/// The archived entries merged into the live ones: the entry archived from position `p` goes
/// back after the live entries that stood before it, whatever their ids; live entries beyond
/// those (appended since) follow. Nothing is dropped: with fewer live entries than expected,
/// the archived ones keep their order.
pub(crate) fn put_back<T: Clone>(archived: &[T], positions: &[usize], live: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(archived.len() + live.len());
    let mut live_taken = 0;
    for (index, entry) in archived.iter().enumerate() {
        let live_before = positions
            .get(index)
            .map_or(live_taken, |at| at.saturating_sub(index));
        let take_until = live_before.clamp(live_taken, live.len());
        out.extend_from_slice(&live[live_taken..take_until]);
        live_taken = take_until;
        out.push(entry.clone());
    }
    out.extend_from_slice(&live[live_taken..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archived_entries_go_back_where_they_stood() {
        // Before: a0 k1 a2 a3 k4; after the compaction: k1 k4, then x appended.
        let merged = put_back(&["a0", "a2", "a3"], &[0, 2, 3], &["k1", "k4", "x"]);
        assert_eq!(merged, ["a0", "k1", "a2", "a3", "k4", "x"]);
        // Live entries removed by other code: nothing archived is lost.
        assert_eq!(put_back(&["a0", "a5"], &[0, 5], &[]), ["a0", "a5"]);
        assert_eq!(put_back(&["a0", "a1"], &[], &["k"]), ["a0", "a1", "k"]);
    }
}
