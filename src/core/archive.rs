//! Archives of compacted originals: their format, listing, expiry and count limits.

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use super::entries::{ExecutionEntry, ToolActivityEntry};
use super::error::StorageError;
use super::keys::StorageKeys;
use super::log_store::LogSnapshot;
use super::storage::{utf16_units, KeyValueStore};
use super::stored_json::parse;

/// The original entries an archive keeps, exactly as they were stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveData {
    /// Reasoning entries.
    pub reasoning_log: Vec<String>,
    /// Execution entries.
    pub execution_log: Vec<ExecutionEntry>,
    /// Tool entries.
    pub tool_activity_log: Vec<ToolActivityEntry>,
}

impl From<LogSnapshot> for ArchiveData {
    fn from(logs: LogSnapshot) -> Self {
        Self {
            reasoning_log: logs.reasoning,
            execution_log: logs.execution,
            tool_activity_log: logs.tool_activity,
        }
    }
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

/// `<prefix>archived_logs_<ms>`: the originals a compaction replaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Archive {
    /// When it was written (epoch ms).
    pub timestamp: u64,
    /// When it may be purged (epoch ms).
    pub expires_at: u64,
    /// The iterations it covers.
    pub iterations: Vec<u32>,
    /// What triggered the compaction.
    pub trigger: String,
    /// The original entries.
    pub data: ArchiveData,
    /// Usage figures.
    pub metadata: ArchiveMetadata,
}

/// What a listing reads of an archive: everything but the entries, which are only counted.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ArchiveHeader {
    timestamp: u64,
    expires_at: u64,
    iterations: Vec<u32>,
    trigger: String,
    data: ArchiveEntryCounts,
    metadata: ArchiveMetadata,
}

/// The logs of an archive, counted without building their entries.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ArchiveEntryCounts {
    reasoning_log: Vec<IgnoredAny>,
    execution_log: Vec<IgnoredAny>,
    tool_activity_log: Vec<IgnoredAny>,
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
    pub entries: super::outcome::EntryCounts,
}

/// Reads one archive; invalid JSON is [`StorageError::Corrupt`] naming the key.
pub fn read_archive(
    store: &impl KeyValueStore,
    key: &str,
) -> Result<Option<Archive>, StorageError> {
    store.get(key)?.map(|text| parse(key, &text)).transpose()
}

/// Every readable archive under `keys`, newest first, with the key of each unreadable one.
pub fn list_archives(
    store: &impl KeyValueStore,
    keys: &StorageKeys,
) -> Result<(Vec<ArchiveInfo>, Vec<String>), StorageError> {
    let mut infos = Vec::new();
    let mut unreadable = Vec::new();
    for key in store.keys()? {
        if keys.archive_timestamp(&key).is_none() {
            continue;
        }
        let Some(text) = store.get(&key)? else {
            continue;
        };
        match parse::<ArchiveHeader>(&key, &text) {
            Ok(archive) => infos.push(ArchiveInfo {
                bytes: 2 * (utf16_units(&key) + utf16_units(&text)),
                entries: super::outcome::EntryCounts {
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
            }),
            Err(_) => unreadable.push(key),
        }
    }
    infos.sort_by(|a, b| b.timestamp.cmp(&a.timestamp).then(b.key.cmp(&a.key)));
    Ok((infos, unreadable))
}

/// Removes expired archives, then the oldest beyond `max_archives`, never `keep`. Returns the
/// keys removed. Unreadable archives are left alone (they are reported, never destroyed).
pub fn enforce_policy(
    store: &impl KeyValueStore,
    keys: &StorageKeys,
    now_ms: f64,
    max_archives: usize,
    keep: Option<&str>,
) -> Result<Vec<String>, StorageError> {
    let (infos, _) = list_archives(store, keys)?;
    let mut removed = Vec::new();
    let mut live = Vec::new();
    for info in infos {
        if (info.expires_at as f64) <= now_ms && keep != Some(info.key.as_str()) {
            store.remove(&info.key)?;
            removed.push(info.key);
        } else {
            live.push(info);
        }
    }
    // Newest first: everything past max_archives goes, except the one being kept.
    let mut kept = 0;
    for info in live {
        if keep == Some(info.key.as_str()) || kept < max_archives {
            kept += 1;
        } else {
            store.remove(&info.key)?;
            removed.push(info.key);
        }
    }
    Ok(removed)
}
