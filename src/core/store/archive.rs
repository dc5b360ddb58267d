//! Archives of compacted originals: their format, listing, expiry and count limits.

use serde::de::IgnoredAny;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};

use crate::core::entries::{StoredExecution, StoredReasoning, StoredToolActivity};
use crate::core::error::StorageError;
use crate::core::iteration::parse_summary_header;
use crate::core::keys::StorageKeys;
use crate::core::ledger::Fact;
use crate::core::log_store::LogSnapshot;
use crate::core::placement::place;
use crate::core::selection::{EntryIterations, Positions, Selection};
use crate::core::storage::{utf16_units, KeyValueStore};
use crate::core::stored_json::parse;

/// The original entries an archive keeps, exactly as they were stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveMetadata {
    /// Usage (0..1) before the compaction.
    pub context_usage_before: f64,
    /// Log tokens before the compaction.
    pub total_tokens_before: usize,
}

/// `<prefix>archived_logs_<ms>`: the originals a compaction replaced. `D` is what `data` is
/// read or written as: the entries themselves, only their counts ([`ArchiveEntryCounts`]), or
/// a compaction's selection ([`SelectedData`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub positions: Option<Positions>,
    /// Usage figures.
    pub metadata: ArchiveMetadata,
    /// The iteration of each original entry, log by log (absent in archives of earlier
    /// versions: `recall` then places the entries itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_iterations: Option<EntryIterations>,
    /// The facts the summary that replaced these entries had to keep (absent in archives of
    /// earlier versions); a later compaction requires them again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<Vec<Fact>>,
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
            reasoning_log: placed.reasoning,
            execution_log: placed.execution,
            tool_activity_log: placed.tool_activity,
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
                .filter(|(entry, m)| **m == n && keep(entry))
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

/// The logs of an archive, counted without building their entries (what a listing reads).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveEntryCounts {
    reasoning_log: Vec<IgnoredAny>,
    execution_log: Vec<IgnoredAny>,
    tool_activity_log: Vec<IgnoredAny>,
}

/// The compacted entries of a [`Selection`], written as an archive's `data` without copying
/// them.
pub struct SelectedData<'a>(pub &'a Selection<'a>);

impl Serialize for SelectedData<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let selection = self.0;
        let mut data = serializer.serialize_struct("ArchiveData", 3)?;
        data.serialize_field("reasoningLog", &Entries(&selection.reasoning))?;
        data.serialize_field("executionLog", &Entries(&selection.execution))?;
        data.serialize_field("toolActivityLog", &Entries(&selection.tool_activity))?;
        data.end()
    }
}

/// Selected entries, serialised without their iteration numbers.
struct Entries<'a, T>(&'a [(u32, T)]);

impl<T: Serialize> Serialize for Entries<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|(_, entry)| entry))
    }
}

/// An archive without its data, plus its key and stored size.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
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
    pub entries: crate::core::outcome::EntryCounts,
    /// Whether `rollback` can put the originals back now: the summary that replaced them is in
    /// the reasoning log (a later compaction may have folded it into its own).
    pub restorable: bool,
}

/// Reads one archive; invalid JSON is [`StorageError::Corrupt`] naming the key.
pub fn read_archive(
    store: &impl KeyValueStore,
    key: &str,
) -> Result<Option<Archive>, StorageError> {
    store.get(key)?.map(|text| parse(key, &text)).transpose()
}

/// Every readable archive under `keys`, newest first, with the key of each unreadable one.
pub(crate) fn list_archives(
    store: &impl KeyValueStore,
    keys: &StorageKeys,
) -> Result<(Vec<ArchiveInfo>, Vec<String>), StorageError> {
    list_archives_but(store, keys, None).map(|(infos, unreadable, _)| (infos, unreadable))
}

/// [`list_archives`] without reading `skip`; the flag says whether `skip` exists.
fn list_archives_but(
    store: &impl KeyValueStore,
    keys: &StorageKeys,
    skip: Option<&str>,
) -> Result<(Vec<ArchiveInfo>, Vec<String>, bool), StorageError> {
    let mut infos = Vec::new();
    let mut unreadable = Vec::new();
    let mut skipped = false;
    for key in store.keys()? {
        if keys.archive_timestamp(&key).is_none() {
            continue;
        }
        if skip == Some(key.as_str()) {
            skipped = true;
            continue;
        }
        let Some(text) = store.get(&key)? else {
            continue;
        };
        match parse::<Archive<ArchiveEntryCounts>>(&key, &text) {
            Ok(archive) => infos.push(ArchiveInfo {
                bytes: 2 * (utf16_units(&key) + utf16_units(&text)),
                entries: crate::core::outcome::EntryCounts {
                    reasoning: archive.data.reasoning_log.len(),
                    execution: archive.data.execution_log.len(),
                    tool_activity: archive.data.tool_activity_log.len(),
                },
                key,
                timestamp: archive.timestamp,
                expires_at: archive.expires_at,
                iterations: archive.iterations,
                trigger: archive.trigger,
                metadata: archive.metadata,
                restorable: false,
            }),
            Err(_) => unreadable.push(key),
        }
    }
    infos.sort_by(|a, b| b.timestamp.cmp(&a.timestamp).then(b.key.cmp(&a.key)));
    Ok((infos, unreadable, skipped))
}

/// Removes expired archives, then the oldest beyond `max_archives`, never `keep` (which takes
/// one of the places and is not read). Returns the keys removed. Unreadable archives are left
/// alone (they are reported, never destroyed).
pub(crate) fn enforce_policy(
    store: &impl KeyValueStore,
    keys: &StorageKeys,
    now_ms: f64,
    max_archives: usize,
    keep: Option<&str>,
) -> Result<Vec<String>, StorageError> {
    let (infos, _, keeping) = list_archives_but(store, keys, keep)?;
    let mut removed = Vec::new();
    let mut kept = usize::from(keeping);
    // Newest first: the expired go, then everything past max_archives.
    for info in infos {
        if (info.expires_at as f64) <= now_ms || kept >= max_archives {
            store.remove(&info.key)?;
            removed.push(info.key);
        } else {
            kept += 1;
        }
    }
    Ok(removed)
}
