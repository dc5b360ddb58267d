//! The localStorage keys the package reads and writes.

use crate::core::model::per_log::PerLog;
use crate::core::model::settings::CompactorSettings;

/// Key names under one prefix (`gdrs_` by default, compatible with existing reasoning apps).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageKeys {
    prefix: String,
    archive_prefix: String,
    metrics: String,
}

/// The prefix existing reasoning apps use.
pub const DEFAULT_PREFIX: &str = "gdrs_";

impl StorageKeys {
    /// Keys under `prefix`.
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
            archive_prefix: format!("{prefix}archived_logs_"),
            metrics: format!("{prefix}compaction_metrics"),
        }
    }

    /// These keys with archives under `archive_prefix` instead (`None` keeps them).
    pub(crate) fn with_archive_prefix(mut self, archive_prefix: Option<&str>) -> Self {
        if let Some(archive_prefix) = archive_prefix {
            archive_prefix.clone_into(&mut self.archive_prefix);
        }
        self
    }

    /// These keys with the metrics under `key` instead (`None` keeps it).
    pub(crate) fn with_metrics_key(mut self, key: Option<&str>) -> Self {
        if let Some(key) = key {
            key.clone_into(&mut self.metrics);
        }
        self
    }

    /// These keys with the archive prefix and metrics key of `settings`.
    pub fn for_settings(&self, settings: &CompactorSettings) -> StorageKeys {
        self.clone()
            .with_archive_prefix(settings.archive_prefix.as_deref())
            .with_metrics_key(settings.metrics_key.as_deref())
    }

    /// The prefix itself.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The keys of the three logs.
    pub fn logs(&self) -> PerLog<String> {
        PerLog {
            reasoning: self.reasoning(),
            execution: self.execution(),
            tool_activity: self.tool_activity(),
        }
    }

    /// `string[]` of reasoning text.
    pub fn reasoning(&self) -> String {
        format!("{}reasoning_log", self.prefix)
    }

    /// `ExecutionEntry[]`.
    pub fn execution(&self) -> String {
        format!("{}execution_log", self.prefix)
    }

    /// `ToolActivityEntry[]`.
    pub fn tool_activity(&self) -> String {
        format!("{}tool_activity_log", self.prefix)
    }

    /// `CompactionMetrics`.
    pub fn metrics(&self) -> String {
        self.metrics.clone()
    }

    /// `[{ id, text }]`: the facts the app pinned (`LogStore.pin`), which every summary keeps.
    pub fn pins(&self) -> String {
        format!("{}pinned_facts", self.prefix)
    }

    /// `"…"`: the task as the app set it (`LogStore.setGoal`), which every summary keeps as its
    /// goal in place of the first words of the logs.
    pub fn goal(&self) -> String {
        format!("{}goal", self.prefix)
    }

    /// `[{ input, summary, expiresAt }]`: the summaries providers wrote, by their input
    /// (`store::summary_cache`).
    pub fn summary_cache(&self) -> String {
        format!("{}summary_cache", self.prefix)
    }

    /// `[[iteration, record], …]`: the app's own records each iteration was written from, where
    /// a front keeps them (`store::originals`).
    pub fn originals(&self) -> String {
        format!("{}originals", self.prefix)
    }

    /// A message list's last compaction (`messages::stitch::LastCompaction`): what it was
    /// given and gave, kept across reloads.
    pub fn last_compaction(&self) -> String {
        format!("{}last_compaction", self.prefix)
    }

    /// The journal of a compaction in progress.
    pub fn journal(&self) -> String {
        format!("{}compaction_journal", self.prefix)
    }

    /// `{ since }`: an iteration is running (set by `startIteration`/`markIterationRunning`,
    /// removed by `finishIteration`), so compactions in every tab wait.
    pub fn iteration_running(&self) -> String {
        format!("{}iteration_running", self.prefix)
    }

    /// The lease that keeps compactions of these logs to one at a time, across tabs.
    pub fn lease(&self) -> String {
        format!("{}compaction_lock", self.prefix)
    }

    /// The number of the last write made under the store lock; a tab whose copy of the store
    /// shows a lower number than the lock's record has not yet seen that write.
    pub fn store_version(&self) -> String {
        format!("{}store_version", self.prefix)
    }

    /// The name of the cross-tab lock over these keys.
    pub fn lock_name(&self) -> String {
        format!("context-compactor:{}", self.prefix)
    }

    /// What every archive key starts with.
    pub fn archive_prefix(&self) -> &str {
        &self.archive_prefix
    }

    /// The archive written at `timestamp_ms`.
    pub fn archive(&self, timestamp_ms: u64) -> String {
        format!("{}{timestamp_ms}", self.archive_prefix)
    }

    /// The timestamp of an archive key, or `None` when `key` is not one of ours.
    pub fn archive_timestamp(&self, key: &str) -> Option<u64> {
        let digits = key.strip_prefix(&self.archive_prefix)?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    }
}

impl Default for StorageKeys {
    fn default() -> Self {
        Self::new(DEFAULT_PREFIX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_keys_match_existing_apps() {
        let keys = StorageKeys::default();
        assert_eq!(keys.reasoning(), "gdrs_reasoning_log");
        assert_eq!(keys.execution(), "gdrs_execution_log");
        assert_eq!(keys.tool_activity(), "gdrs_tool_activity_log");
        assert_eq!(keys.metrics(), "gdrs_compaction_metrics");
        assert_eq!(keys.archive(17), "gdrs_archived_logs_17");
    }

    #[test]
    fn archive_keys_are_recognised_only_under_the_prefix() {
        let keys = StorageKeys::new("app_");
        assert_eq!(keys.archive_timestamp("app_archived_logs_123"), Some(123));
        assert_eq!(keys.archive_timestamp("gdrs_archived_logs_123"), None);
        assert_eq!(keys.archive_timestamp("app_archived_logs_x"), None);
        assert_eq!(keys.archive_timestamp("app_archived_logs_+5"), None);
    }

    #[test]
    fn archive_prefix_and_metrics_key_can_be_chosen() {
        let keys = StorageKeys::default()
            .with_archive_prefix(Some("gdrs_compaction_archive_"))
            .with_metrics_key(Some("my_metrics"));
        assert_eq!(keys.archive(5), "gdrs_compaction_archive_5");
        assert_eq!(keys.archive_timestamp("gdrs_compaction_archive_5"), Some(5));
        assert_eq!(keys.archive_timestamp("gdrs_archived_logs_5"), None);
        assert_eq!(keys.archive_timestamp("gdrs_compaction_archive_"), None);
        assert_eq!(keys.metrics(), "my_metrics");
        assert_eq!(keys.reasoning(), "gdrs_reasoning_log");
        let unchanged = StorageKeys::default()
            .with_archive_prefix(None)
            .with_metrics_key(None);
        assert_eq!(unchanged, StorageKeys::default());
    }
}
