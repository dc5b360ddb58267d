//! Which iteration every entry of the three logs belongs to.
//!
//! Apps do not always say. GDRS, the app this package was made for, writes executions without
//! an iteration, a reasoning header only when the model wrote reasoning text, and marker
//! entries (`=== JAVASCRIPT EXECUTION ===`, `=== VAULT READ ===`, …) in between. An entry's
//! iteration is therefore taken from, in order:
//!
//! - execution and tool entries: `iteration`, `context.iteration`; then the iteration of the
//!   tool entry with the same `id` (GDRS logs a `js_execute` tool entry per run); then the
//!   timestamps of entries whose iteration is known (the first known entry at or after it);
//!   then its neighbours in the log; else the current iteration (kept, never compacted);
//! - reasoning entries: a header (`=== ITERATION n ===`, `=== ITERATION n ERROR ===`, …) or a
//!   summary names it; an entry naming an execution (`ID: exec_…`) or a vault read
//!   (`Entry: …`) takes that operation's iteration; any other entry follows the entries
//!   before it, except that entries after the last placed one belong to the running iteration
//!   when another log shows it started (a tools-only iteration writes no header).
//!
//! The current iteration is the highest known in any log.

use crate::core::log::entries::{EntryFacts, ExecutionEntry, ToolActivityEntry};
use crate::core::log::iteration::{named_iteration, parse_summary_header};
use crate::core::log::stored_entry::{reasoning_header_text, Stored};
use crate::core::model::per_log::PerLog;
use crate::core::order::sort::sort_by;
use crate::core::order::sorted_map::SortedMap;

/// The iteration of every entry, and the current iteration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlacedIterations {
    /// One per entry of each log, in log order.
    pub entries: PerLog<Vec<u32>>,
    /// The highest iteration known in any log, 0 when none is.
    pub current: u32,
}

/// What the entries state, or imply through ids, before anything is inferred.
struct Known<'a> {
    tool_facts: Vec<&'a EntryFacts>,
    execution_facts: Vec<&'a EntryFacts>,
    tools: Vec<Option<u32>>,
    execution: Vec<Option<u32>>,
    reasoning: Vec<Option<u32>>,
    current: u32,
}

fn known<'a>(
    reasoning: &[Stored<String>],
    execution: &'a [Stored<ExecutionEntry>],
    tool_activity: &'a [Stored<ToolActivityEntry>],
) -> Known<'a> {
    let tool_facts: Vec<&EntryFacts> = tool_activity.iter().map(|e| &e.facts).collect();
    let execution_facts: Vec<&EntryFacts> = execution.iter().map(|e| &e.facts).collect();
    let tools: Vec<Option<u32>> = tool_facts.iter().map(|f| f.iteration).collect();
    let mut execution: Vec<Option<u32>> = execution_facts.iter().map(|f| f.iteration).collect();
    // The lookups below are built only for logs that need them (entries this package wrote
    // state their iteration).
    if execution.iter().any(Option::is_none) {
        let by_id = unique_ids(&tool_facts);
        for (known, fact) in execution.iter_mut().zip(&execution_facts) {
            if known.is_none() {
                *known = fact.id.as_deref().and_then(|id| by_id.get(id).copied());
            }
        }
    }
    let reasoning = reasoning_named(reasoning, &execution_facts, &execution);
    let current = [&tools, &execution, &reasoning]
        .iter()
        .flat_map(|known| known.iter().flatten())
        .copied()
        .max()
        .unwrap_or(0);
    Known {
        tool_facts,
        execution_facts,
        tools,
        execution,
        reasoning,
        current,
    }
}

/// The current iteration: the highest any log states or implies (0 when none does).
pub fn current_iteration(
    reasoning: &[Stored<String>],
    execution: &[Stored<ExecutionEntry>],
    tool_activity: &[Stored<ToolActivityEntry>],
) -> u32 {
    known(reasoning, execution, tool_activity).current
}

/// [`current_iteration`] from the logs' items as stored (each entry's JSON text), without
/// reading them into entries: only the iterations entries state count, because one an entry
/// implies (an execution through its tool entry's id, a reasoning entry through the execution
/// it names) is always one another entry states.
pub(crate) fn current_iteration_of_items(
    reasoning: &[&str],
    execution: &[&str],
    tool_activity: &[&str],
) -> u32 {
    let reasoning = reasoning
        .iter()
        .filter_map(|json| stated_reasoning_iteration(&reasoning_header_text(json)?));
    let others = execution
        .iter()
        .chain(tool_activity)
        .filter_map(|json| EntryFacts::stated_iteration(json));
    reasoning.chain(others).max().unwrap_or(0)
}

/// Places every entry of the three logs (see the module documentation).
pub fn place(
    reasoning: &[Stored<String>],
    execution: &[Stored<ExecutionEntry>],
    tool_activity: &[Stored<ToolActivityEntry>],
) -> PlacedIterations {
    let known = known(reasoning, execution, tool_activity);
    let current = known.current;
    let unknown = |known: &[Option<u32>]| known.iter().any(Option::is_none);
    let timeline = if unknown(&known.tools) || unknown(&known.execution) {
        Timeline::of(&[
            (&known.tool_facts, &known.tools),
            (&known.execution_facts, &known.execution),
        ])
    } else {
        Timeline { points: Vec::new() }
    };
    let execution_placed = complete(&known.execution_facts, &known.execution, &timeline, current);
    let tools_placed = complete(&known.tool_facts, &known.tools, &timeline, current);
    let vault_reads = vault_reads(tool_activity, &tools_placed);
    PlacedIterations {
        entries: PerLog {
            reasoning: reasoning_placed(reasoning, &known.reasoning, vault_reads, current),
            execution: execution_placed,
            tool_activity: tools_placed,
        },
        current,
    }
}

/// Ids that name one iteration only among the tool entries that state theirs.
fn unique_ids<'a>(facts: &[&'a EntryFacts]) -> SortedMap<&'a str, u32> {
    let stated = facts
        .iter()
        .filter_map(|fact| Some((fact.id.as_deref()?, fact.iteration?)));
    SortedMap::grouped(stated)
        .into_iter()
        .filter(|(_, named)| named.iter().all(|n| *n == named[0]))
        .map(|(id, named)| (id, named[0]))
        .collect()
}

/// Timestamps of entries whose iteration is known, in order (ISO-8601 UTC text compares in
/// time order).
struct Timeline<'a> {
    points: Vec<(&'a str, u32)>,
}

impl<'a> Timeline<'a> {
    fn of(logs: &[(&[&'a EntryFacts], &[Option<u32>])]) -> Self {
        let mut points: Vec<(&str, u32)> = logs
            .iter()
            .flat_map(|(facts, known)| facts.iter().zip(known.iter()))
            .filter_map(|(fact, n)| Some((iso_time(fact.timestamp.as_deref()?)?, (*n)?)))
            .collect();
        sort_by(&mut points, Ord::cmp);
        Timeline { points }
    }

    /// The iteration of the first known entry at or after `time`, else of the last one.
    fn at(&self, time: &str) -> Option<u32> {
        let after = self.points.partition_point(|(t, _)| *t < time);
        self.points
            .get(after)
            .or_else(|| self.points.last())
            .map(|(_, n)| *n)
    }
}

/// `text` when it is a `Date.prototype.toISOString()` timestamp (`2025-11-11T16:51:34.123Z`).
fn iso_time(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let shaped = bytes.len() == 24
        && bytes[4] == b'-'
        && bytes[10] == b'T'
        && bytes[19] == b'.'
        && bytes[23] == b'Z';
    shaped.then_some(text)
}

/// Fills in the entries of unknown iteration: by timestamp, then by neighbours, else
/// `current`.
fn complete(
    facts: &[&EntryFacts],
    known: &[Option<u32>],
    timeline: &Timeline<'_>,
    current: u32,
) -> Vec<u32> {
    let by_time: Vec<Option<u32>> = facts
        .iter()
        .zip(known)
        .map(|(fact, n)| n.or_else(|| timeline.at(iso_time(fact.timestamp.as_deref()?)?)))
        .collect();
    by_neighbours(&by_time, current)
}

/// An entry that does not state its iteration takes the one of the nearest earlier entry that
/// does, else of the nearest later one, else `fallback` (logs are appended in order).
pub(crate) fn by_neighbours(stated: &[Option<u32>], fallback: u32) -> Vec<u32> {
    let mut next_known = vec![None; stated.len()];
    let mut later = None;
    for (slot, value) in next_known.iter_mut().zip(stated).rev() {
        if value.is_some() {
            later = *value;
        }
        *slot = later;
    }
    let mut earlier = None;
    stated
        .iter()
        .zip(next_known)
        .map(|(value, following)| {
            if value.is_some() {
                earlier = *value;
            }
            earlier.or(following).unwrap_or(fallback)
        })
        .collect()
}

/// The iteration each reasoning entry names by itself: a header or summary, or the execution
/// it reports (`ID: exec_…`).
fn reasoning_named(
    reasoning: &[Stored<String>],
    execution: &[&EntryFacts],
    execution_known: &[Option<u32>],
) -> Vec<Option<u32>> {
    let mut executions: Option<SortedMap<&str, u32>> = None;
    reasoning
        .iter()
        .map(|entry| {
            stated_reasoning_iteration(entry).or_else(|| {
                let id = marker_field(entry, "=== JAVASCRIPT EXECUTION ===", "ID: ")?;
                let executions = executions.get_or_insert_with(|| {
                    execution
                        .iter()
                        .zip(execution_known)
                        .filter_map(|(fact, n)| Some((fact.id.as_deref()?, (*n)?)))
                        .collect()
                });
                executions.get(id).copied()
            })
        })
        .collect()
}

/// The iteration a reasoning entry's first line names: an iteration header or marker, or the
/// last iteration of a summary.
fn stated_reasoning_iteration(entry: &str) -> Option<u32> {
    named_iteration(entry).or_else(|| parse_summary_header(entry).map(|(_, last)| last))
}

/// The value of the line `field…` in an entry whose first line is `marker`.
pub(crate) fn marker_field<'a>(entry: &'a str, marker: &str, field: &str) -> Option<&'a str> {
    let mut lines = entry.trim_start().lines();
    if lines.next()?.trim() != marker {
        return None;
    }
    lines
        .take(8)
        .find_map(|line| line.strip_prefix(field))
        .map(str::trim)
}

/// The iterations of vault reads, per vault id, in log order.
fn vault_reads<'a>(
    tools: &'a [Stored<ToolActivityEntry>],
    placed: &[u32],
) -> SortedMap<&'a str, Vec<u32>> {
    SortedMap::grouped(tools.iter().zip(placed).filter_map(|(entry, n)| {
        let id = entry
            .facts
            .id
            .as_deref()
            .filter(|_| entry.facts.vault_read)?;
        Some((id, *n))
    }))
}

/// Reasoning entries placed: named ones by their name, vault reads by the matching tool entry,
/// the rest after the entries before them (see the module documentation).
fn reasoning_placed(
    reasoning: &[Stored<String>],
    named: &[Option<u32>],
    mut vault_reads: SortedMap<&str, Vec<u32>>,
    current: u32,
) -> Vec<u32> {
    let mut floor = 0;
    let mut placed = Vec::with_capacity(reasoning.len());
    let mut last_known = None;
    for (index, (entry, name)) in reasoning.iter().zip(named).enumerate() {
        let known = name.or_else(|| {
            let id = marker_field(entry, "=== VAULT READ ===", "Entry: ")?;
            let reads = vault_reads.get_mut(id)?;
            let at = reads.iter().position(|n| *n >= floor)?;
            Some(reads.remove(at))
        });
        if let Some(n) = known {
            floor = floor.max(n);
            last_known = Some(index);
            placed.push(n);
        } else {
            placed.push(floor);
        }
    }
    let tail_start = last_known.map_or(0, |i| i + 1);
    if floor < current && tail_start > 0 {
        for n in &mut placed[tail_start..] {
            *n = current;
        }
    }
    placed
}
