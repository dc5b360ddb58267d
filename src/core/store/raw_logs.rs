//! The three logs as read at one moment: their stored text (to write back only what changed
//! and to tell whether another writer changed them) and their parsed entries.

use crate::core::error::StorageError;
use crate::core::log::placement::current_iteration_of_items;
use crate::core::log::snapshot::LogSnapshot;
use crate::core::log::stored_entry::{join_entries, log_items, parse_entries, reasoning_text};
use crate::core::log::text_hash::text_hash;
use crate::core::log::tokens::estimate_tokens;
use crate::core::model::per_log::PerLog;
use crate::core::store::keys::StorageKeys;

/// FNV-1a hashes of the three stored log texts.
pub(crate) type LogHashes = PerLog<String>;

/// The three logs as the exact texts stored (`None` for an absent key).
pub type RawLogs = PerLog<Option<String>>;

impl PerLog<Option<String>> {
    /// The texts `logs` is stored as: every entry as its stored text.
    pub fn encode(logs: &LogSnapshot) -> RawLogs {
        RawLogs {
            reasoning: Some(join_entries(&logs.reasoning)),
            execution: Some(join_entries(&logs.execution)),
            tool_activity: Some(join_entries(&logs.tool_activity)),
        }
    }

    /// The texts `after` is stored as, each log whose entries are those `parsed` (read from
    /// `raw`) holds kept as its stored text (a log not changed is not rewritten, whatever its layout).
    pub fn encode_changed(after: &LogSnapshot, parsed: &LogSnapshot, raw: &RawLogs) -> RawLogs {
        let mut texts = RawLogs::encode(after);
        if after.reasoning == parsed.reasoning {
            texts.reasoning.clone_from(&raw.reasoning);
        }
        if after.execution == parsed.execution {
            texts.execution.clone_from(&raw.execution);
        }
        if after.tool_activity == parsed.tool_activity {
            texts.tool_activity.clone_from(&raw.tool_activity);
        }
        texts
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

    /// The items of the three texts, each as its JSON text; text that is not a JSON array is
    /// an error naming its key, as in [`RawLogs::parse`].
    pub(crate) fn items(&self, keys: &StorageKeys) -> Result<LogItems<'_>, StorageError> {
        keys.logs()
            .zip(self.as_ref())
            .try_map(|(key, text)| log_items(&key, text.as_deref()))
    }

    /// Estimated tokens of the entries these texts hold, counted as
    /// [`LogSnapshot::estimate_tokens`] counts them, without copying the entries out or reading
    /// their fields.
    pub fn estimate_tokens(&self, keys: &StorageKeys) -> Result<usize, StorageError> {
        Ok(self.items(keys)?.estimate_tokens())
    }

    /// FNV-1a hashes of the three texts.
    pub(crate) fn hashes(&self) -> LogHashes {
        self.as_ref().map(|text| text_hash(text.as_deref()))
    }
}

/// The entries of the three logs as the slices of their stored texts, for what can be known
/// without copying them out or reading every field.
pub(crate) type LogItems<'a> = PerLog<Vec<&'a str>>;

impl PerLog<Vec<&str>> {
    /// Estimated tokens, counted as [`LogSnapshot::estimate_tokens`] counts them (a reasoning
    /// entry's text, any other entry's JSON).
    pub fn estimate_tokens(&self) -> usize {
        let reasoning: usize = self
            .reasoning
            .iter()
            .map(|json| estimate_tokens(&reasoning_text(json)))
            .sum();
        let others: usize = self
            .execution
            .iter()
            .chain(&self.tool_activity)
            .map(|json| estimate_tokens(json))
            .sum();
        reasoning + others
    }

    /// The current iteration, as [`LogSnapshot::current_iteration`] gives it.
    pub fn current_iteration(&self) -> u32 {
        current_iteration_of_items(&self.reasoning, &self.execution, &self.tool_activity)
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
    use crate::core::order::join::Joined;

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

    #[test]
    fn the_iteration_read_from_the_items_is_the_one_the_entries_give() {
        let reasoning = [
            r#""=== ITERATION 3 ===""#,
            r#""  === ITERATION 12 ===\nbody""#,
            r#""\t=== ITERATION 5 ===""#,
            "\"\u{3000}=== ITERATION 40 ===\"",
            r#""\u3000=== ITERATION 41 ===""#,
            r#""\u000b=== ITERATION 42 ===""#,
            r#""\u003d== ITERATION 55 ===""#,
            r#""\n=== ITERATION 99 ===""#,
            r#""x\n=== ITERATION 50 ===""#,
            r#""\"=== ITERATION 66 ===\"""#,
            r#""=== ITERATION 7 ERROR ===""#,
            r#""=== ITERATION 4294967295 ===""#,
            r#""=== COMPACTED SUMMARY (Iterations 1-9) ===\n### OBJECTIVE ACHIEVED""#,
            r#""=== JAVASCRIPT EXECUTION ===\nID: exec_a\nok""#,
            r#""plain = text""#,
            "42",
            r#"{"text":"=== ITERATION 77 ==="}"#,
        ];
        let execution = [
            r#"{"id":"exec_a","iteration":4}"#,
            r#"{"id":"exec_b"}"#,
            r#"{"iteration":"6"}"#,
            r#"{"iteration":"x","context":{"iteration":11}}"#,
            r#"{"context":{"iteration":13}}"#,
            r#"{"iteration":3,"iteration":21}"#,
            r#"{"iteration":1e1}"#,
            r#"{"iteration":-1}"#,
            r#"{"iteration":2.5}"#,
            r#"{"id":"exec_c","iteration":null,"context":{"iteration":" 15 "}}"#,
            "null",
            "7",
            r#""text""#,
        ];
        let tools = [
            r#"{"id":"exec_b","iteration":17,"type":"js_execute"}"#,
            r#"{"type":"vault","action":"read","iteration":2}"#,
            r#"{"context":{"iteration":19}}"#,
            "{}",
        ];
        let keys = StorageKeys::default();
        let mut seed: u64 = 0x5851_f42d_4c95_7f2d;
        let mut pick = |pool: &[&str]| -> Option<String> {
            let mut chosen = Vec::new();
            for item in pool {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                if seed % 4 == 0 {
                    chosen.push(*item);
                }
            }
            (seed % 7 != 0).then(|| format!("[{}]", chosen.joined(", ")))
        };
        for _ in 0..3000 {
            let raw = RawLogs {
                reasoning: pick(&reasoning),
                execution: pick(&execution),
                tool_activity: pick(&tools),
            };
            let from_items = raw.items(&keys).map(|items| items.current_iteration());
            let from_entries = raw.parse(&keys).map(|logs| logs.current_iteration());
            assert_eq!(from_items, from_entries, "{raw:?}");
        }
    }
}
