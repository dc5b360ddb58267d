//! Crash safety: the journal a compaction writes before it touches the logs, and the one
//! protocol that writes, removes and settles it ([`Journal`]).
//!
//! Write order of one compaction, so that the stored state is always "old logs" or "summary +
//! archive" once recovery has run:
//! 1. journal `{ stage: archiving, archiveKey }`
//! 2. the archive
//! 3. journal `{ stage: replacing, …, hashes before and after, result }`
//! 4. the execution log, the tool log (they only shrink), then the reasoning log
//! 5. the journal is removed
//!
//! Recovery finishes a compaction whose three logs were all written, and undoes any other. Where
//! storage has no room for the record of step 3, the compaction goes on under the record of
//! step 1 (the logs only shrink): interrupted, it is undone from its archive.

use crate::core::error::{CompactionError, StorageError};
use crate::core::json::read::RawJson;
use crate::core::json::record::{json_names, json_record};
use crate::core::json::write::ToJson;
use crate::core::log::entries::StoredReasoning;
use crate::core::log::iteration::parse_summary_header;
use crate::core::log::snapshot::LogSnapshot;
use crate::core::log::stored_entry::Stored;
use crate::core::log::tokens::estimate_tokens;
use crate::core::model::clearing::Rung;
use crate::core::model::outcome::{CompactionResult, RecordedResult};
use crate::core::model::reasons::{BusyReason, Conflict};
use crate::core::model::set_aside::SetAside;
use crate::core::ports::clock::Clock;
use crate::core::ports::events::CompactionEvent;
use crate::core::ports::storage::{with_free_space, KeyValueStore};
use crate::core::steps::clearing::{self, ClearedEntry};
use crate::core::steps::selection::{summary_body, Selection};
use crate::core::steps::swap::{appended_since, replace, summary_entry, undo};
use crate::core::store::archives::StoredArchives;
use crate::core::store::log_store::LogStore;
use crate::core::store::raw_logs::{LogHashes, RawLogs, ReadLogs};
use crate::core::store::stored_json::{read_value, set_aside, write_json};

/// What a compaction makes of the logs: from the logs as read before and as they are now, the
/// logs to write and the tokens they gained (or the conflict that stops it).
pub type LogChange<'a> =
    dyn Fn(&LogSnapshot, &LogSnapshot) -> Result<(LogSnapshot, usize), Conflict> + 'a;

/// How far the interrupted compaction got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JournalStage {
    /// The archive may or may not be written; the logs are untouched.
    Archiving,
    /// The archive is written; some, all or none of the logs are replaced.
    Replacing,
}

/// `<prefix>compaction_journal`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JournalRecord {
    /// How far the compaction got.
    pub stage: JournalStage,
    /// The archive it writes.
    pub archive_key: String,
    /// Hashes of the logs it is about to replace (stage `replacing`).
    pub before: Option<LogHashes>,
    /// Hashes of the logs it is about to write (stage `replacing`).
    pub after: Option<LogHashes>,
    /// The result it will report (stage `replacing`), as its JSON text.
    pub result: Option<RawJson>,
}

json_names! {
    JournalStage {
        Archiving = "archiving",
        Replacing = "replacing",
    }
}

json_record! {
    read write JournalRecord {
        stage: "stage" req,
        archive_key: "archiveKey" req,
        before: "before" opt,
        after: "after" opt,
        result: "result" opt,
    }
}

/// What recovery did with a compaction that a closed tab left half done.
#[derive(Debug, Clone, PartialEq)]
pub enum Recovered {
    /// All three logs had been written: the compaction stands.
    Completed(Box<RecordedResult>),
    /// The logs are back as they were before it; the archive key it had used.
    RolledBack(String),
    /// The journal did not read: it was set aside instead of obeyed, and the logs left as they
    /// are (see [`Journal::settle`]).
    SetAside(SetAside),
}

impl Recovered {
    /// The event that tells the app: the compaction completed, was rolled back, or its journal
    /// was set aside.
    pub fn event(&self) -> CompactionEvent {
        match self {
            Recovered::Completed(result) => CompactionEvent::Recovered {
                result: result.clone(),
            },
            Recovered::RolledBack(key) => CompactionEvent::RolledBack {
                archive_key: key.clone(),
            },
            Recovered::SetAside(set_aside) => CompactionEvent::SetAside(set_aside.clone()),
        }
    }
}

/// What a compaction commits once its summary is accepted: the originals it archives and the
/// summary that replaces them.
pub struct Commit<'a> {
    /// The entries compacted.
    pub selection: &'a Selection<'a>,
    /// The accepted summary, headings canonical.
    pub summary: &'a str,
    /// The code of the model's failure, when the summary is the package's own (the fallback
    /// rung's): its entry says so.
    pub failed: Option<&'a str>,
}

/// The journal of the logs of one [`LogStore`]: the only code that writes, removes or reads
/// `<prefix>compaction_journal`. The caller holds the store lock and the lease.
pub struct Journal<'a, S, C> {
    logs: &'a LogStore<S, C>,
    key: String,
}

impl<'a, S: KeyValueStore, C: Clock> Journal<'a, S, C> {
    /// The journal of `logs`.
    pub fn of(logs: &'a LogStore<S, C>) -> Self {
        Self {
            logs,
            key: logs.keys().journal(),
        }
    }

    fn write(&self, record: &JournalRecord) -> Result<(), StorageError> {
        write_json(self.logs.store(), &self.key, record)
            .map_err(|err| with_free_space(self.logs.store(), err))
    }

    /// Whether a journal is stored (read without the store lock: a journal this tab's copy of
    /// `localStorage` does not show yet belongs to a compaction still running in another tab,
    /// and one a closed tab left is settled by the next compaction anyway).
    pub fn is_present(&self) -> Result<bool, StorageError> {
        Ok(self.logs.store().get(&self.key)?.is_some())
    }

    /// Removes the journal: the compaction it described is complete or undone.
    fn finish(&self) -> Result<(), StorageError> {
        self.logs.store().remove(&self.key)
    }

    /// Steps 1 and 2: names `archive_key` (from [`StoredArchives::next_key`]) in the journal
    /// (stage `archiving`), then writes `archive` under it. When either write fails, nothing is
    /// left behind and the logs were never touched. A clearing's archive (`clearing`) goes on
    /// without the journal where storage has no room for it: each placeholder names the archive
    /// written before it, so an interrupted clearing leaves a smaller clearing, never a loss.
    pub fn archive(
        &self,
        archives: &StoredArchives<'_, S, C>,
        archive_key: &str,
        archive: &dyn ToJson,
        clearing: bool,
    ) -> Result<(), StorageError> {
        let named = self.write(&JournalRecord {
            stage: JournalStage::Archiving,
            archive_key: archive_key.to_owned(),
            before: None,
            after: None,
            result: None,
        });
        match named {
            Err(StorageError::Quota { .. }) if clearing => {}
            other => other?,
        }
        archives.write(archive_key, archive).inspect_err(|_| {
            let _ = self.finish();
        })
    }

    /// Undoes steps 1 and 2 of a compaction whose logs were never touched: its archive and
    /// the journal go (a failure of either is settled by the next load).
    pub fn abandon(&self, archives: &StoredArchives<'_, S, C>, archive_key: &str) {
        let _ = archives.remove(archive_key);
        let _ = self.finish();
    }

    /// Steps 3 to 5: writes `commit`'s summary entry in place of the selected entries, keeping
    /// anything appended since `before` was read (see `Journal::write_logs`).
    pub fn swap_in(
        &self,
        archives: &StoredArchives<'_, S, C>,
        before: &ReadLogs,
        commit: &Commit<'_>,
        archive_key: &str,
        result: &dyn Fn(usize) -> CompactionResult,
    ) -> Result<CompactionResult, CompactionError> {
        let selection = commit.selection;
        let entry: StoredReasoning = Stored::encode(&summary_entry(
            selection.last,
            archive_key,
            commit.summary,
            commit.failed,
        ));
        let change = |before: &LogSnapshot, now: &LogSnapshot| {
            let after = replace(before, now, selection, &entry)?;
            let added = estimate_tokens(&entry) + appended_since(before, now).estimate_tokens();
            Ok((after, added))
        };
        self.write_logs(archives, before, archive_key, &change, result)
    }

    /// Steps 3 to 5 of a clearing: writes the placeholders of `cleared` in place of their
    /// entries, keeping anything appended since `before` was read (see
    /// `Journal::write_logs`; `result` is given the tokens appended meanwhile).
    pub fn clear_in(
        &self,
        archives: &StoredArchives<'_, S, C>,
        before: &ReadLogs,
        cleared: &[ClearedEntry],
        archive_key: &str,
        result: &dyn Fn(usize) -> CompactionResult,
    ) -> Result<CompactionResult, CompactionError> {
        let change = |before: &LogSnapshot, now: &LogSnapshot| {
            let after = clearing::apply(before, now, cleared)?;
            Ok((after, appended_since(before, now).estimate_tokens()))
        };
        self.write_logs(archives, before, archive_key, &change, result)
    }

    /// Writes the logs `change` makes of them (from the logs as `before` read them and as they
    /// are now; it also gives the tokens the logs gained) under a journal (stage `replacing`) that lets a later load finish or undo it.
    /// `result` is given the tokens gained. On a failure the logs are written back and the
    /// archive and journal removed.
    fn write_logs(
        &self,
        archives: &StoredArchives<'_, S, C>,
        before: &ReadLogs,
        archive_key: &str,
        change: &LogChange<'_>,
        result: &dyn Fn(usize) -> CompactionResult,
    ) -> Result<CompactionResult, CompactionError> {
        let logs = self.logs;
        let abandon = |err: CompactionError| {
            self.abandon(archives, archive_key);
            err
        };
        let now_raw = logs.raw_logs().map_err(|e| abandon(e.into()))?;
        // Parsed again only when another writer changed the logs since they were read.
        let reparsed;
        let now = if now_raw == before.raw {
            &before.parsed
        } else {
            reparsed = now_raw.parse(logs.keys()).map_err(|e| abandon(e.into()))?;
            &reparsed
        };
        let (after, added) = change(&before.parsed, now)
            .map_err(|conflict| abandon(CompactionError::Busy(BusyReason::Conflict(conflict))))?;
        // A log none of whose entries changed keeps its text: it is not written.
        let after_raw = RawLogs::encode_changed(&after, now, &now_raw);
        let result = result(added);
        let replacing = self.write(&JournalRecord {
            stage: JournalStage::Replacing,
            archive_key: archive_key.to_owned(),
            before: Some(now_raw.hashes()),
            after: Some(after_raw.hashes()),
            // The summary itself is in the reasoning log being written; the journal stays small.
            result: Some(result.recorded()),
        });
        match replacing {
            // Storage too full for this record: the `archiving` one stays, and an interrupted
            // compaction is undone from its archive instead of finished. The logs only shrink.
            Err(StorageError::Quota { .. }) => {}
            other => other.map_err(|err| abandon(err.into()))?,
        }
        if let Err(err) = logs.write_changed(&after_raw, &now_raw) {
            let _ = logs.write_changed(&now_raw, &after_raw);
            return Err(abandon(with_free_space(logs.store(), err).into()));
        }
        // The compaction is complete once the logs are written; a journal left behind by a
        // failed removal is recognised as complete on the next load.
        let _ = self.finish();
        Ok(result)
    }

    /// Finishes or undoes the compaction the journal describes, if there is one: it stands
    /// when all three logs were written, else the logs go back as they were (by position) and
    /// its archive goes. A journal that does not read, or names an archive key not of these
    /// logs, is set aside ([`Recovered::SetAside`]). The caller holds or has checked the lease.
    pub fn settle(
        &self,
        archives: &StoredArchives<'_, S, C>,
    ) -> Result<Option<Recovered>, CompactionError> {
        let logs = self.logs;
        let read = match read_value::<JournalRecord>(logs.store(), &self.key) {
            Ok(None) => return Ok(None),
            // Recovery reads and removes the journal's archive: never a key of other code.
            Ok(Some(journal)) if !archives.owns(&journal.archive_key) => Err(format!(
                "its archive key \"{}\" is not an archive key of these logs",
                journal.archive_key
            )),
            Ok(Some(journal)) => Ok(journal),
            Err(StorageError::Corrupt { reason, .. }) => Err(reason),
            Err(err) => return Err(err.into()),
        };
        // A journal that cannot be obeyed is set aside, because its archive key must not be
        // guessed. It holds no data: its compaction wrote its archive before any log, so that
        // archive (if written) keeps the originals, and the logs hold every entry live or there.
        let journal = match read {
            Ok(journal) => journal,
            Err(reason) => {
                let set_aside = set_aside(logs.store(), &self.key, reason)?;
                return Ok(Some(Recovered::SetAside(set_aside)));
            }
        };
        let archive = archives.read_stored(&journal.archive_key)?;
        let raw = logs.raw_logs()?;
        let complete = journal.stage == JournalStage::Replacing
            && journal.after.as_ref() == Some(&raw.hashes());
        let outcome = match (complete, journal.result, archive) {
            (true, Some(json), Some(archive)) => {
                let live = raw.parse(logs.keys())?;
                let last = archive.iterations.iter().copied().max().unwrap_or(0);
                let summary = match archive.rung() {
                    Rung::Clear => String::new(),
                    _ => live
                        .reasoning
                        .iter()
                        .find(|entry| parse_summary_header(entry) == Some((1, last)))
                        .map(|entry| summary_body(entry))
                        .unwrap_or_default(),
                };
                Recovered::Completed(Box::new(RecordedResult { json, summary }))
            }
            (_, _, Some(archive)) => {
                let last = archive.iterations.iter().copied().max().unwrap_or(0);
                let mut live = raw.parse(logs.keys())?;
                let undone = if archive.rung() == Rung::Clear {
                    archive.restore_into(&mut live.execution, &mut live.tool_activity);
                    live
                } else {
                    let positions = archive.positions.as_ref();
                    undo(&live, &archive.data.into(), positions, last)
                };
                logs.write_changed(&RawLogs::encode(&undone), &raw)?;
                archives.remove(&journal.archive_key)?;
                Recovered::RolledBack(journal.archive_key)
            }
            // No archive: the tab stopped before writing it, so the logs were never touched.
            (_, _, None) => Recovered::RolledBack(journal.archive_key),
        };
        self.finish()?;
        Ok(Some(outcome))
    }
}
