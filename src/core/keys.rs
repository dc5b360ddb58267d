//! The localStorage keys the package reads and writes.

/// Key names under one prefix (`gdrs_` by default, compatible with existing reasoning apps).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageKeys {
    prefix: String,
}

/// The prefix existing reasoning apps use.
pub const DEFAULT_PREFIX: &str = "gdrs_";

impl StorageKeys {
    /// Keys under `prefix`.
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
        }
    }

    /// The prefix itself.
    pub fn prefix(&self) -> &str {
        &self.prefix
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
        format!("{}compaction_metrics", self.prefix)
    }

    /// The journal of a compaction in progress.
    pub fn journal(&self) -> String {
        format!("{}compaction_journal", self.prefix)
    }

    /// The lease that keeps compactions of these logs to one at a time, across tabs.
    pub fn lease(&self) -> String {
        format!("{}compaction_lock", self.prefix)
    }

    /// The archive written at `timestamp_ms`.
    pub fn archive(&self, timestamp_ms: u64) -> String {
        format!("{}archived_logs_{timestamp_ms}", self.prefix)
    }

    /// The timestamp of an archive key, or `None` when `key` is not one of ours.
    pub fn archive_timestamp(&self, key: &str) -> Option<u64> {
        key.strip_prefix(&self.prefix)?
            .strip_prefix("archived_logs_")?
            .parse()
            .ok()
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
    }
}
