//! The three logs as read at one moment: their stored text (to write back only what changed
//! and to tell whether another writer changed them) and their parsed entries.

use crate::core::error::StorageError;
use crate::core::json::read::{FromJson, Object, ReadError};
use crate::core::json::write::{ObjectOut, ToJson};
use crate::core::log::snapshot::LogSnapshot;
use crate::core::log::stored_entry::{join_entries, log_items, parse_entries, reasoning_text};
use crate::core::log::text_hash::text_hash;
use crate::core::log::tokens::estimate_tokens;
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

    /// Estimated tokens of the entries these texts hold, counted as
    /// [`LogSnapshot::estimate_tokens`] counts them (a reasoning entry's text, any other
    /// entry's JSON) without copying the entries out or reading their fields.
    pub fn estimate_tokens(&self, keys: &StorageKeys) -> Result<usize, StorageError> {
        let reasoning = log_items(&keys.reasoning(), self.reasoning.as_deref())?;
        let mut tokens: usize = reasoning
            .iter()
            .map(|json| estimate_tokens(&reasoning_text(json)))
            .sum();
        for (key, text) in [
            (keys.execution(), &self.execution),
            (keys.tool_activity(), &self.tool_activity),
        ] {
            let entries = log_items(&key, text.as_deref())?;
            tokens += entries
                .iter()
                .map(|json| estimate_tokens(json))
                .sum::<usize>();
        }
        Ok(tokens)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn logs(reasoning: Option<&str>, execution: Option<&str>, tools: Option<&str>) -> RawLogs {
        RawLogs {
            reasoning: reasoning.map(str::to_owned),
            execution: execution.map(str::to_owned),
            tool_activity: tools.map(str::to_owned),
        }
    }

    #[test]
    fn the_count_without_the_entries_is_the_count_of_the_entries() {
        let keys = StorageKeys::default();
        for raw in [
            logs(None, None, None),
            logs(Some("null"), Some(" [ ] "), Some("null")),
            logs(
                Some(
                    r#"["=== ITERATION 1 ===", "line\none \"q\" \ud83d\ude00", 42, {"text":"x"}, "lone \ud83d"]"#,
                ),
                Some(
                    r#"[{"id":"exec_1","code":"rows.length\nrows[0]","result":1.1805916207174113e+21}, null]"#,
                ),
                Some(r#"[{"type":"vault","action":"read","details":{"path":"a/b.csv"}}]"#),
            ),
            logs(Some("[\"日本語のテキスト、12345\"]"), None, Some("[]")),
        ] {
            let counted = raw.estimate_tokens(&keys);
            let parsed = raw.parse(&keys).map(|snapshot| snapshot.estimate_tokens());
            assert_eq!(counted, parsed, "{raw:?}");
        }
        for corrupt in [
            logs(Some("[1,]"), None, None),
            logs(None, Some("{}"), None),
            logs(None, None, Some("[\"a\"")),
        ] {
            let counted = corrupt.estimate_tokens(&keys);
            assert!(counted.is_err(), "{corrupt:?}");
            assert_eq!(counted, corrupt.parse(&keys).map(|s| s.estimate_tokens()));
        }
    }
}
