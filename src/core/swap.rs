//! Swapping the summary in for the compacted entries, and the archived entries back in.

use super::iteration::{parse_summary_header, summary_header};
use super::log_store::LogSnapshot;
use super::selection::Selection;

/// The last line of a compacted-summary entry.
pub const SUMMARY_END: &str = "=== END COMPACTED SUMMARY ===";

/// The reasoning entry that stands for iterations 1..=`last`.
pub fn summary_entry(last: u32, summary: &str) -> String {
    format!("{}\n{summary}\n{SUMMARY_END}", summary_header(1, last))
}

/// Why the stored logs no longer fit what a compaction or rollback read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwapConflict(pub String);

/// The entries of `now` after those of `before`, if `now` only grew by appends.
fn appended<'a, T: PartialEq>(
    before: &[T],
    now: &'a [T],
    log: &str,
) -> Result<&'a [T], SwapConflict> {
    // The same read (nothing was written meanwhile) needs no entry-by-entry comparison.
    let same_read = std::ptr::eq(before, now);
    if same_read || (now.len() >= before.len() && now[..before.len()] == *before) {
        Ok(&now[before.len()..])
    } else {
        Err(SwapConflict(format!(
            "the {log} log was changed by other code while the compaction ran (not just appended to)"
        )))
    }
}

/// What was appended to `now` since `before` was read (empty where `now` is not an extension).
pub fn appended_since(before: &LogSnapshot, now: &LogSnapshot) -> LogSnapshot {
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
    summary: &str,
) -> Result<LogSnapshot, SwapConflict> {
    let reasoning_tail = appended(&before.reasoning, &now.reasoning, "reasoning")?;
    let execution_tail = appended(&before.execution, &now.execution, "execution")?;
    let tool_tail = appended(&before.tool_activity, &now.tool_activity, "tool activity")?;
    let mut reasoning = vec![summary_entry(selection.last, summary)];
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
/// (the summary covering 1..=`last`). Entries appended since stay; archived entries whose id
/// is already live are not doubled.
pub fn restore(
    now: &LogSnapshot,
    archived: &LogSnapshot,
    last: u32,
) -> Result<LogSnapshot, SwapConflict> {
    let position = summary_position(now, last).ok_or_else(|| {
        SwapConflict(format!(
            "the summary of iterations 1-{last} is no longer in the reasoning log; a later \
             compaction replaced it, so roll that one back first"
        ))
    })?;
    Ok(put_archived_back(now, archived, Some(position)))
}

/// Undoes an interrupted compaction whatever subset of the logs it had written: the summary is
/// swapped back when present, archived entries missing from the other logs come back.
pub fn undo(now: &LogSnapshot, archived: &LogSnapshot, last: u32) -> LogSnapshot {
    put_archived_back(now, archived, summary_position(now, last))
}

fn summary_position(now: &LogSnapshot, last: u32) -> Option<usize> {
    now.reasoning
        .iter()
        .position(|entry| parse_summary_header(entry) == Some((1, last)))
}

fn put_archived_back(
    now: &LogSnapshot,
    archived: &LogSnapshot,
    summary_at: Option<usize>,
) -> LogSnapshot {
    let reasoning = match summary_at {
        Some(position) => {
            let mut reasoning = now.reasoning[..position].to_vec();
            reasoning.extend(archived.reasoning.iter().cloned());
            reasoning.extend(now.reasoning[position + 1..].iter().cloned());
            reasoning
        }
        None => now.reasoning.clone(),
    };

    let live_ids: Vec<&str> = now
        .execution
        .iter()
        .filter_map(|e| e.id.as_deref())
        .chain(now.tool_activity.iter().filter_map(|e| e.id.as_deref()))
        .collect();
    let execution = put_back(&archived.execution, &now.execution, &live_ids, |e| {
        e.id.as_deref()
    });
    let tool_activity = put_back(
        &archived.tool_activity,
        &now.tool_activity,
        &live_ids,
        |e| e.id.as_deref(),
    );
    LogSnapshot {
        reasoning,
        execution,
        tool_activity,
    }
}

/// The archived entries whose id is not live (entries without an id always come back), then
/// the live ones.
fn put_back<T: Clone>(
    archived: &[T],
    live: &[T],
    live_ids: &[&str],
    id: impl Fn(&T) -> Option<&str>,
) -> Vec<T> {
    archived
        .iter()
        .filter(|entry| id(entry).is_none_or(|id| !live_ids.contains(&id)))
        .chain(live)
        .cloned()
        .collect()
}
