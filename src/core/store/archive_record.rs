//! The format of an archive of compacted originals, and when it expires. [`super::archives`]
//! writes, lists and removes them.

use crate::core::error::StorageError;
use crate::core::json::read::{FromJson, RawJson};
use crate::core::json::record::{json_record, Record};
use crate::core::json::scan::members;
use crate::core::json::write::{write_array, ObjectOut, ToJson};
use crate::core::log::entries::{StoredExecution, StoredReasoning, StoredToolActivity};
use crate::core::log::iteration::parse_summary_header;
use crate::core::log::placement::place;
use crate::core::log::snapshot::LogSnapshot;
use crate::core::log::text_hash::text_hash;
use crate::core::model::clearing::Rung;
use crate::core::model::facts::{Fact, IndexLine, Ledger};
use crate::core::model::outcome::EntryCounts;
use crate::core::model::settings::Trigger;
use crate::core::order::sort::sort_unique;
use crate::core::ports::storage::KeyValueStore;
use crate::core::steps::clearing::{restore, ClearedEntry, ClearedLog};
use crate::core::steps::selection::{
    recalled_with, EntryIterations, PerEntry, Positions, Selection,
};
use crate::core::store::originals::pairs_of;
use crate::core::store::stored_json::parse;

/// The latest expiry JavaScript can hold exactly (`Number.MAX_SAFE_INTEGER` ms).
pub const MAX_EXPIRES_AT: u64 = 9_007_199_254_740_991;

/// When an archive written at `timestamp` with `lifetime_ms` expires: never past
/// [`MAX_EXPIRES_AT`], so a lifetime of "for ever" cannot wrap to the past.
pub(crate) fn expiry(timestamp: u64, lifetime_ms: f64) -> u64 {
    let left = MAX_EXPIRES_AT.saturating_sub(timestamp);
    if lifetime_ms.is_nan() || lifetime_ms >= left as f64 {
        MAX_EXPIRES_AT.max(timestamp)
    } else {
        timestamp + lifetime_ms.max(0.0) as u64
    }
}

/// The original entries an archive keeps, exactly as they were stored.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArchiveData {
    /// Reasoning entries.
    pub reasoning_log: Vec<StoredReasoning>,
    /// Execution entries.
    pub execution_log: Vec<StoredExecution>,
    /// Tool entries.
    pub tool_activity_log: Vec<StoredToolActivity>,
}

impl From<ArchiveData> for LogSnapshot {
    fn from(data: ArchiveData) -> Self {
        Self {
            reasoning: data.reasoning_log,
            execution: data.execution_log,
            tool_activity: data.tool_activity_log,
        }
    }
}

/// Usage figures at the time of archiving.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArchiveMetadata {
    /// Usage (0..1) before the compaction.
    pub context_usage_before: f64,
    /// Log tokens before the compaction.
    pub total_tokens_before: usize,
}

/// `<prefix>archived_logs_<ms>`: the originals a compaction replaced. `D` is what `data` is
/// read or written as: the entries themselves, or a compaction's selection ([`SelectedData`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Archive<D = ArchiveData> {
    /// When it was written (epoch ms).
    pub timestamp: u64,
    /// When it may be purged (epoch ms).
    pub expires_at: u64,
    /// The iterations it covers.
    pub iterations: Vec<u32>,
    /// What triggered the compaction.
    pub trigger: String,
    /// The original entries.
    pub data: D,
    /// Where each original entry stood in its log (absent in archives of earlier versions:
    /// their entries go back first).
    pub positions: Option<Positions>,
    /// Usage figures.
    pub metadata: ArchiveMetadata,
    /// The iteration of each original entry, log by log (absent in archives of earlier
    /// versions: `recall` then places the entries itself).
    pub entry_iterations: Option<EntryIterations>,
    /// The facts the summary that replaced these entries had to keep (absent in archives of
    /// earlier versions); a later compaction requires them again.
    pub ledger: Option<Vec<Fact>>,
    /// The index lines of that summary (absent in archives of earlier versions, and when it
    /// had none); those naming no archive name this one.
    pub index: Option<Vec<IndexLine>>,
    /// In a clearing's archive: the hash of the placeholder that took each original's place,
    /// beside it (absent in a summary's archive).
    pub placeholders: Option<PerEntry<String>>,
    /// In a summary's archive of a front that keeps the app's own records: those of what it
    /// folded, exactly as the app gave them (`store::originals`).
    pub originals: Option<RawJson>,
}

/// What took the place of an archive's originals in the logs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArchiveKind<'a> {
    /// A summary (the model's or the package's own), with the facts it had to keep and its
    /// index lines (absent in archives of earlier versions).
    Summary {
        /// The facts the summary had to keep.
        ledger: Option<&'a [Fact]>,
        /// The summary's index lines.
        index: Option<&'a [IndexLine]>,
    },
    /// A clearing: the hash of the placeholder that took each original's place.
    Clearing {
        /// The hashes, log by log, beside the originals.
        placeholders: &'a PerEntry<String>,
    },
}

impl<D> Archive<D> {
    /// What took the place of its originals: the one reading of an archive's kind.
    pub fn kind(&self) -> ArchiveKind<'_> {
        match &self.placeholders {
            Some(placeholders) => ArchiveKind::Clearing { placeholders },
            None => ArchiveKind::Summary {
                ledger: self.ledger.as_deref(),
                index: self.index.as_deref(),
            },
        }
    }

    /// The rung that wrote it.
    pub fn rung(&self) -> Rung {
        match self.kind() {
            ArchiveKind::Summary { .. } => Rung::Summarize,
            ArchiveKind::Clearing { .. } => Rung::Clear,
        }
    }
}

impl<'a> Archive<SelectedData<'a>> {
    /// The archive of `selection`'s originals, written at `timestamp` to be kept `lifetime_ms`,
    /// by a compaction that `trigger` started and that had to keep `ledger`, with the app's
    /// own records of what it folds (`originals`, where a front keeps them).
    pub fn of(
        selection: &'a Selection<'a>,
        ledger: &Ledger,
        trigger: Trigger,
        (timestamp, lifetime_ms): (u64, f64),
        metadata: ArchiveMetadata,
        originals: Option<String>,
    ) -> Self {
        Archive {
            timestamp,
            expires_at: expiry(timestamp, lifetime_ms),
            iterations: selection.iterations(),
            trigger: trigger.as_str().to_owned(),
            data: SelectedData(selection),
            positions: Some(selection.positions.clone()),
            metadata,
            entry_iterations: Some(EntryIterations::of(selection)),
            ledger: Some(ledger.facts.clone()),
            index: (!ledger.index.is_empty()).then(|| ledger.index.clone()),
            placeholders: None,
            originals: originals.map(|text| {
                let (first, last) = (selection.first, selection.last);
                RawJson(pairs_of(&text, &|n| n == 0 || (first..=last).contains(&n)))
            }),
        }
    }
}

impl Archive<ArchiveData> {
    /// Puts the originals of this clearing's archive back in place of its placeholders in
    /// `execution` and `tool_activity`, byte for byte; how many went back (none for a
    /// summary's archive).
    pub fn restore_into(
        &self,
        execution: &mut [StoredExecution],
        tool_activity: &mut [StoredToolActivity],
    ) -> usize {
        let ArchiveKind::Clearing { placeholders } = self.kind() else {
            return 0;
        };
        let data = &self.data;
        restore(execution, &data.execution_log, &placeholders.execution_log)
            + restore(
                tool_activity,
                &data.tool_activity_log,
                &placeholders.tool_activity_log,
            )
    }

    /// The archive of the bodies `cleared` takes from `logs`: each original entry whole, where
    /// it stood, its iteration and the hash of its placeholder, written at `timestamp` to be
    /// kept `lifetime_ms`, by a compaction that `trigger` started, with the app's own records
    /// of those iterations (of `originals`, where a front keeps them).
    pub fn cleared(
        logs: &LogSnapshot,
        cleared: &[ClearedEntry],
        trigger: Trigger,
        (timestamp, lifetime_ms): (u64, f64),
        metadata: ArchiveMetadata,
        originals: Option<String>,
    ) -> Self {
        let mut data = ArchiveData::default();
        let mut positions = Positions::default();
        let mut numbers = EntryIterations::default();
        let mut placeholders = PerEntry::default();
        for entry in cleared {
            let taken = match entry.log {
                ClearedLog::Execution => logs.execution.get(entry.position).map(|original| {
                    data.execution_log.push(original.clone());
                    (
                        &mut positions.execution_log,
                        &mut numbers.execution_log,
                        &mut placeholders.execution_log,
                    )
                }),
                ClearedLog::ToolActivity => {
                    logs.tool_activity.get(entry.position).map(|original| {
                        data.tool_activity_log.push(original.clone());
                        (
                            &mut positions.tool_activity_log,
                            &mut numbers.tool_activity_log,
                            &mut placeholders.tool_activity_log,
                        )
                    })
                }
            };
            if let Some((at, iteration, hash)) = taken {
                at.push(entry.position);
                iteration.push(entry.iteration);
                hash.push(text_hash(Some(&entry.placeholder)));
            }
        }
        let originals = originals.map(|text| {
            RawJson(pairs_of(&text, &|n| {
                cleared.iter().any(|c| c.iteration == n)
            }))
        });
        let mut iterations: Vec<u32> = cleared.iter().map(|entry| entry.iteration).collect();
        sort_unique(&mut iterations);
        Archive {
            timestamp,
            expires_at: expiry(timestamp, lifetime_ms),
            iterations,
            trigger: trigger.as_str().to_owned(),
            data,
            positions: Some(positions),
            metadata,
            entry_iterations: Some(numbers),
            ledger: None,
            index: None,
            placeholders: Some(placeholders),
            originals,
        }
    }
}

impl EntryIterations {
    /// The iterations of a selection's compacted entries.
    pub fn of(selection: &Selection<'_>) -> Self {
        fn numbers<T>(entries: &[(u32, T)]) -> Vec<u32> {
            entries.iter().map(|(n, _)| *n).collect()
        }
        Self {
            reasoning_log: numbers(&selection.reasoning),
            execution_log: numbers(&selection.execution),
            tool_activity_log: numbers(&selection.tool_activity),
        }
    }

    /// The iterations of `data`'s entries as placement infers them (for archives written
    /// before the iterations were recorded).
    pub fn placed(data: &ArchiveData) -> Self {
        let placed = place(
            &data.reasoning_log,
            &data.execution_log,
            &data.tool_activity_log,
        );
        Self {
            reasoning_log: placed.entries.reasoning,
            execution_log: placed.entries.execution,
            tool_activity_log: placed.entries.tool_activity,
        }
    }
}

impl ArchiveData {
    /// The entries of iteration `n`, as stored, given the iteration of each entry; earlier
    /// summaries are not originals and are left out.
    pub fn of_iteration(&self, n: u32, numbers: &EntryIterations) -> ArchiveData {
        fn pick<T: Clone>(
            entries: &[T],
            numbers: &[u32],
            n: u32,
            keep: impl Fn(&T) -> bool,
        ) -> Vec<T> {
            entries
                .iter()
                .zip(numbers)
                .filter(|(entry, m)| recalled_with(**m) == n && keep(entry))
                .map(|(entry, _)| entry.clone())
                .collect()
        }
        ArchiveData {
            reasoning_log: pick(&self.reasoning_log, &numbers.reasoning_log, n, |entry| {
                parse_summary_header(entry).is_none()
            }),
            execution_log: pick(&self.execution_log, &numbers.execution_log, n, |_| true),
            tool_activity_log: pick(
                &self.tool_activity_log,
                &numbers.tool_activity_log,
                n,
                |_| true,
            ),
        }
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.reasoning_log.is_empty()
            && self.execution_log.is_empty()
            && self.tool_activity_log.is_empty()
    }
}

/// The compacted entries of a [`Selection`], written as an archive's `data` without copying
/// them.
pub struct SelectedData<'a>(pub &'a Selection<'a>);

impl ToJson for SelectedData<'_> {
    fn write_json(&self, out: &mut String) {
        fn entries<T: ToJson>(out: &mut String, selected: &[(u32, &T)]) {
            write_array::<T>(out, selected.iter().map(|(_, entry)| *entry));
        }
        let selection = self.0;
        let [reasoning, execution, tool_activity] = ArchiveData::LOG_FIELDS;
        ObjectOut::new(out)
            .field_with(reasoning, |out| entries(out, &selection.reasoning))
            .field_with(execution, |out| entries(out, &selection.execution))
            .field_with(tool_activity, |out| entries(out, &selection.tool_activity));
    }
}

impl ArchiveData {
    /// The JSON names of the three logs, as [`Record::FIELDS`] has them.
    pub const LOG_FIELDS: [&'static str; 3] = [
        <ArchiveData as Record>::FIELDS[0],
        <ArchiveData as Record>::FIELDS[1],
        <ArchiveData as Record>::FIELDS[2],
    ];
}

json_record! {
    read write ArchiveData {
        reasoning_log: "reasoningLog" req,
        execution_log: "executionLog" req,
        tool_activity_log: "toolActivityLog" req,
    }
}

json_record! {
    read write ArchiveMetadata {
        context_usage_before: "contextUsageBefore" req,
        total_tokens_before: "totalTokensBefore" req,
    }
}

json_record! {
    read write Archive<D> {
        timestamp: "timestamp" req,
        expires_at: "expiresAt" req,
        iterations: "iterations" req,
        trigger: "trigger" req,
        data: "data" req,
        positions: "positions" opt,
        metadata: "metadata" req,
        entry_iterations: "entryIterations" opt,
        ledger: "ledger" opt,
        index: "index" opt,
        placeholders: "placeholders" opt,
        originals: "originals" opt,
    }
}

/// What an archive says of itself before its data: enough to order, expire and find it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveHead {
    /// Storage key.
    pub key: String,
    /// When it was written (epoch ms).
    pub timestamp: u64,
    /// When it may be purged (epoch ms).
    pub expires_at: u64,
    /// The iterations it covers.
    pub iterations: Vec<u32>,
}

impl ArchiveHead {
    /// The head of the archive `text` stored under `key`. The package writes these fields
    /// first, so they are read without scanning the entries that follow; an archive written
    /// in another order is read whole. `None` when it is not a readable archive.
    pub fn read(key: &str, text: &str) -> Option<Self> {
        Self::from_start(key, text).or_else(|| {
            let whole = parse::<Archive>(key, text).ok()?;
            Some(Self {
                key: key.to_owned(),
                timestamp: whole.timestamp,
                expires_at: whole.expires_at,
                iterations: whole.iterations,
            })
        })
    }

    /// The head from the members that open `start` (the start of an archive's text, or all
    /// of it), when they hold it; never scans past it.
    pub fn from_start(key: &str, start: &str) -> Option<Self> {
        let (mut timestamp, mut expires_at, mut iterations) = (None, None, None);
        for (name, value) in members(start)? {
            match name.as_ref() {
                "timestamp" => timestamp = u64::from_json(value).ok(),
                "expiresAt" => expires_at = u64::from_json(value).ok(),
                "iterations" => iterations = Vec::<u32>::from_json(value).ok(),
                _ => {}
            }
            if let (Some(timestamp), Some(expires_at), Some(iterations)) =
                (timestamp, expires_at, &iterations)
            {
                return Some(Self {
                    key: key.to_owned(),
                    timestamp,
                    expires_at,
                    iterations: iterations.clone(),
                });
            }
        }
        None
    }
}

/// An archive without its data, plus its key and stored size.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveInfo {
    /// Storage key.
    pub key: String,
    /// When it was written (epoch ms).
    pub timestamp: u64,
    /// When it may be purged (epoch ms).
    pub expires_at: u64,
    /// The iterations it covers.
    pub iterations: Vec<u32>,
    /// What triggered the compaction.
    pub trigger: String,
    /// Usage figures.
    pub metadata: ArchiveMetadata,
    /// Stored size in bytes (UTF-16, as localStorage counts it).
    pub bytes: usize,
    /// Entries per log.
    pub entries: EntryCounts,
    /// Whether `rollback` can put the originals back now: the summary that replaced them is in
    /// the reasoning log (a later compaction may have folded it into its own), or for a
    /// clearing's archive, a placeholder it wrote is in the live logs.
    pub restorable: bool,
    /// The rung that wrote it: `clear` (the bodies a clearing took) or `summarize`.
    pub rung: Rung,
}

json_record! {
    write ArchiveInfo {
        key: "key" req,
        timestamp: "timestamp" req,
        expires_at: "expiresAt" req,
        iterations: "iterations" req,
        trigger: "trigger" req,
        metadata: "metadata" req,
        bytes: "bytes" req,
        entries: "entries" req,
        restorable: "restorable" req,
        rung: "rung" req,
    }
}

/// Reads one archive; invalid JSON is [`StorageError::Corrupt`] naming the key.
pub fn read_archive(
    store: &impl KeyValueStore,
    key: &str,
) -> Result<Option<Archive>, StorageError> {
    store.get(key)?.map(|text| parse(key, &text)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_read_from_the_fields_before_the_data_without_reading_on() {
        let head = |text: &str| ArchiveHead::read("k", text);
        let expected = Some(ArchiveHead {
            key: "k".into(),
            timestamp: 5,
            expires_at: 9,
            iterations: vec![1, 2],
        });
        // What follows the head is never scanned: here it is not even JSON.
        let written =
            r#"{"timestamp":5,"expiresAt":9,"iterations":[1,2],"data":{"reasoningLog":[tru"#;
        assert_eq!(head(written), expected);
        // Other code's field order: the archive is read whole, and must read.
        let reordered = r#"{"trigger":"auto","iterations":[1,2],"data":{"reasoningLog":[],"executionLog":[],"toolActivityLog":[]},"metadata":{"contextUsageBefore":0.5,"totalTokensBefore":10},"expiresAt":9,"timestamp":5}"#;
        assert_eq!(head(reordered), expected);
        assert_eq!(
            head(&reordered.replace("\"timestamp\":5", "\"timestamp\":\"5\"")),
            None
        );
        assert_eq!(head("[1]"), None);
    }
}
