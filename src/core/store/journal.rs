//! Crash safety: the journal a compaction writes before it touches the logs. Recovery from it,
//! when a tab closed mid-compaction, is the orchestrator's (`run::compactor::recovery`).
//!
//! Write order of one compaction, so that the stored state is always "old logs" or "summary +
//! archive" once recovery has run:
//! 1. journal `{ stage: archiving, archiveKey }`
//! 2. the archive
//! 3. journal `{ stage: replacing, …, hashes before and after, result }`
//! 4. the execution log, the tool log (they only shrink), then the reasoning log
//! 5. the journal is removed
//!
//! Recovery finishes a compaction whose three logs were all written, and undoes any other.

use serde::{Deserialize, Serialize};

use crate::core::outcome::CompactionResult;

/// How far the interrupted compaction got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum JournalStage {
    /// The archive may or may not be written; the logs are untouched.
    Archiving,
    /// The archive is written; some, all or none of the logs are replaced.
    Replacing,
}

/// FNV-1a hashes of the three stored log texts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LogHashes {
    /// Of `<prefix>reasoning_log`.
    pub reasoning: String,
    /// Of `<prefix>execution_log`.
    pub execution: String,
    /// Of `<prefix>tool_activity_log`.
    pub tool_activity: String,
}

/// `<prefix>compaction_journal`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Journal {
    /// How far the compaction got.
    pub stage: JournalStage,
    /// The archive it writes.
    pub archive_key: String,
    /// Hashes of the logs it is about to replace (stage `replacing`).
    #[serde(default)]
    pub before: Option<LogHashes>,
    /// Hashes of the logs it is about to write (stage `replacing`).
    #[serde(default)]
    pub after: Option<LogHashes>,
    /// The result it will report (stage `replacing`).
    #[serde(default)]
    pub result: Option<CompactionResult>,
}

/// A 64-bit FNV-1a-style hash of `text`, as 16 hex digits; `absent` for a missing key.
pub(crate) fn text_hash(text: Option<&str>) -> String {
    let Some(text) = text else {
        return "absent".into();
    };
    // FNV-1a over eight-byte words (then the last bytes one by one): every step is a bijection
    // of the state, so texts that differ in one word always hash apart.
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut words = text.as_bytes().chunks_exact(8);
    for chunk in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        hash = (hash ^ u64::from_le_bytes(word)).wrapping_mul(PRIME);
        hash ^= hash >> 29;
    }
    for &byte in words.remainder() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_tell_texts_apart() {
        assert_eq!(text_hash(Some("")), "cbf29ce484222325");
        assert_ne!(text_hash(Some("[1]")), text_hash(Some("[2]")));
        let text = "[\"exec_mi9x2k1c\",\"tool_4f7q0z\"]";
        for at in 0..text.len() {
            let mut changed = text.as_bytes().to_vec();
            changed[at] ^= 1;
            let changed = String::from_utf8(changed).unwrap();
            assert_ne!(
                text_hash(Some(text)),
                text_hash(Some(&changed)),
                "byte {at}"
            );
        }
        assert_eq!(text_hash(None), "absent");
    }
}
