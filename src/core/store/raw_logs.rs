//! The three logs as read at one moment: their stored text (to write back only what changed
//! and to tell whether another writer changed them) and their parsed entries.

use crate::core::error::StorageError;
use crate::core::json::read::{FromJson, Object, ReadError};
use crate::core::json::write::{ObjectOut, ToJson};
use crate::core::log::snapshot::LogSnapshot;
use crate::core::log::stored_entry::{join_entries, parse_entries};
use crate::core::log::text_hash::text_hash;
use crate::core::store::keys::StorageKeys;

/// FNV-1a hashes of the three stored log texts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct LogHashes {
    /// Of `<prefix>reasoning_log`.
    pub reasoning: String,
    /// Of `<prefix>execution_log`.
    pub execution: String,
    /// Of `<prefix>tool_activity_log`.
    pub tool_activity: String,
}

impl ToJson for LogHashes {
    fn write_json(&self, out: &mut String) {
        ObjectOut::new(out)
            .field("reasoning", &self.reasoning)
            .field("execution", &self.execution)
            .field("toolActivity", &self.tool_activity);
    }
}

impl FromJson for LogHashes {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        let hashes = Object::read(json)?;
        Ok(LogHashes {
            reasoning: hashes.req("reasoning")?,
            execution: hashes.req("execution")?,
            tool_activity: hashes.req("toolActivity")?,
        })
    }
}

/// The three logs as the exact texts stored (`None` for an absent key).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawLogs {
    /// `<prefix>reasoning_log`.
    pub reasoning: Option<String>,
    /// `<prefix>execution_log`.
    pub execution: Option<String>,
    /// `<prefix>tool_activity_log`.
    pub tool_activity: Option<String>,
}

impl RawLogs {
    /// The texts `logs` is stored as: every entry as its stored text.
    pub fn encode(logs: &LogSnapshot) -> RawLogs {
        RawLogs {
            reasoning: Some(join_entries(&logs.reasoning)),
            execution: Some(join_entries(&logs.execution)),
            tool_activity: Some(join_entries(&logs.tool_activity)),
        }
    }

    /// The three logs these texts hold; text that is not a JSON array is an error naming its
    /// key.
    pub fn parse(&self, keys: &StorageKeys) -> Result<LogSnapshot, StorageError> {
        Ok(LogSnapshot {
            reasoning: parse_entries(&keys.reasoning(), self.reasoning.as_deref())?,
            execution: parse_entries(&keys.execution(), self.execution.as_deref())?,
            tool_activity: parse_entries(&keys.tool_activity(), self.tool_activity.as_deref())?,
        })
    }

    /// FNV-1a hashes of the three texts.
    pub(crate) fn hashes(&self) -> LogHashes {
        LogHashes {
            reasoning: text_hash(self.reasoning.as_deref()),
            execution: text_hash(self.execution.as_deref()),
            tool_activity: text_hash(self.tool_activity.as_deref()),
        }
    }
}

/// The logs as read at one moment: the stored texts and what they hold.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReadLogs {
    /// The texts as stored.
    pub raw: RawLogs,
    /// The entries those texts hold.
    pub parsed: LogSnapshot,
}
