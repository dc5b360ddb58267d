//! Undoing: recovery of a compaction a closed tab left half done, rollback of an archive, and
//! the management of archives.

use super::*;

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// Finishes or undoes a compaction that a closed tab or a crash left half done, as its
    /// journal says, and reports it through the events. Does nothing while another tab holds
    /// the lease (its compaction is still running).
    pub async fn recover(&self) -> Result<Option<Recovered>, CompactionError> {
        // Our own compaction, or another tab's, may be mid-way: its journal is not an orphan.
        if self.busy.get() {
            return Ok(None);
        }
        let held = self.lock.acquire().await?;
        if self.busy.get() {
            return Ok(None);
        }
        let outcome = match self.lease_elsewhere() {
            Ok(Some(_)) => return Ok(None),
            Ok(None) => self.settle_journal(),
            Err(err) => Err(err.into()),
        };
        if let Err(err) = &outcome {
            self.emit(CompactionEvent::Error {
                code: err.code().as_str(),
                message: format!("could not recover an interrupted compaction: {err}"),
                phase: Phase::RollingBack,
            });
        }
        drop(held);
        outcome
    }

    /// Finishes or undoes the compaction a journal describes; the caller holds or has checked
    /// the lease.
    pub(super) fn settle_journal(&self) -> Result<Option<Recovered>, CompactionError> {
        let logs = self.logs.borrow();
        let store = logs.store();
        let journal_key = logs.keys().journal();
        let Some(journal) = read_value::<Journal>(store, &journal_key)? else {
            return Ok(None);
        };
        // Recovery reads and removes the journal's archive: never a key of other code.
        if self.keys.archive_timestamp(&journal.archive_key).is_none() {
            return Err(StorageError::Corrupt {
                key: journal_key,
                reason: format!(
                    "its archive key \"{}\" is not an archive key of these logs",
                    journal.archive_key
                ),
            }
            .into());
        }
        let archive = read_archive(store, &journal.archive_key)?;
        let raw = logs.raw_logs()?;
        let complete = journal.stage == JournalStage::Replacing
            && journal.after.as_ref() == Some(&raw.hashes());
        let outcome = match (complete, journal.result, archive) {
            (true, Some(mut result), Some(_)) => {
                let live = raw.parse(logs.keys())?;
                result.summary = live
                    .reasoning
                    .iter()
                    .find(|entry| parse_summary_header(entry) == Some((1, result.iterations[1])))
                    .map(|entry| summary_body(entry))
                    .unwrap_or_default();
                Recovered::Completed(Box::new(result))
            }
            (_, _, Some(archive)) => {
                let last = archive.iterations.iter().copied().max().unwrap_or(0);
                let positions = archive.positions.as_ref();
                let undone = undo(
                    &raw.parse(logs.keys())?,
                    &archive.data.into(),
                    positions,
                    last,
                );
                logs.write_changed(&RawLogs::encode(&undone), &raw)?;
                store.remove(&journal.archive_key)?;
                Recovered::RolledBack(journal.archive_key.clone())
            }
            // No archive: the tab stopped before writing it, so the logs were never touched.
            (_, _, None) => Recovered::RolledBack(journal.archive_key.clone()),
        };
        store.remove(&journal_key)?;
        drop(logs);
        self.emit(match &outcome {
            Recovered::Completed(result) => CompactionEvent::Complete {
                result: result.clone(),
            },
            Recovered::RolledBack(key) => CompactionEvent::RolledBack {
                archive_key: key.clone(),
            },
        });
        Ok(Some(outcome))
    }
    /// Puts an archive's originals back in place of the summary that replaced them; entries
    /// appended since stay. The archive is removed once its entries are live again.
    pub async fn rollback(&self, archive_key: &str) -> Result<(), CompactionError> {
        let refused = || {
            CompactionError::Busy("A compaction is running; roll back when it has finished.".into())
        };
        if self.busy.get() {
            return Err(refused());
        }
        let held = self.lock.acquire().await?;
        if self.busy.get() || self.lease_elsewhere()?.is_some() {
            return Err(refused());
        }
        self.busy.set(true);
        self.set_phase(Phase::RollingBack);
        let outcome = self.restore_archive(archive_key);
        match &outcome {
            Ok(()) => {
                self.set_phase(Phase::Idle);
                self.emit(CompactionEvent::RolledBack {
                    archive_key: archive_key.to_owned(),
                });
            }
            Err(err) => {
                self.set_phase(Phase::Error);
                self.emit(CompactionEvent::Error {
                    code: err.code().as_str(),
                    message: err.to_string(),
                    phase: Phase::RollingBack,
                });
            }
        }
        drop(held);
        self.busy.set(false);
        outcome
    }

    pub(super) fn restore_archive(&self, archive_key: &str) -> Result<(), CompactionError> {
        let archive = self.read_archive(archive_key)?;
        let last = archive.iterations.iter().copied().max().unwrap_or(0);
        let logs = self.logs.borrow();
        let now = logs.read()?;
        let positions = archive.positions.as_ref();
        let restored = restore(&now.parsed, &archive.data.into(), positions, last)
            .map_err(|conflict| CompactionError::NotAllowed(conflict.0))?;
        let restored = RawLogs::encode(&restored);
        if let Err(err) = logs.write_changed(&restored, &now.raw) {
            let _ = logs.write_changed(&now.raw, &restored);
            return Err(err.into());
        }
        // The archive is the only other copy: it goes only once the logs read back as written.
        if logs.raw_logs()? != restored {
            return Err(CompactionError::Busy(
                "The logs changed while the archive was put back; the archive is kept, roll \
                 back again."
                    .into(),
            ));
        }
        logs.store().remove(archive_key)?;
        Ok(())
    }

    /// The archives of these logs, newest first, expired ones excluded.
    pub fn archives(&self) -> Result<Vec<ArchiveInfo>, StorageError> {
        let logs = self.logs.borrow();
        let now = self.now();
        let (infos, _) = list_archives(logs.store(), &self.keys)?;
        // Only the reasoning log says which summaries are live, and only when there are archives.
        let reasoning = if infos.is_empty() {
            Vec::new()
        } else {
            logs.reasoning_entries()?
        };
        Ok(infos
            .into_iter()
            .filter(|a| a.expires_at as f64 > now)
            .map(|mut info| {
                let last = info.iterations.iter().copied().max().unwrap_or(0);
                info.restorable = summary_is_live(&reasoning, last);
                info
            })
            .collect())
    }

    /// One archive, whole.
    pub fn read_archive(&self, key: &str) -> Result<Archive, CompactionError> {
        let logs = self.logs.borrow();
        if self.keys.archive_timestamp(key).is_none() {
            return Err(CompactionError::NotAllowed(format!(
                "\"{key}\" is not an archive key of these logs"
            )));
        }
        read_archive(logs.store(), key)?
            .ok_or_else(|| CompactionError::NotAllowed(format!("There is no archive \"{key}\".")))
    }

    /// Removes one archive; refused while a compaction runs here or in another tab (its archive
    /// may be the only copy of the originals until the swap is done).
    pub fn delete_archive(&self, key: &str) -> Result<(), CompactionError> {
        if self.busy.get() || self.lease_elsewhere()?.is_some() {
            return Err(CompactionError::Busy(
                "A compaction is running; delete archives when it has finished.".into(),
            ));
        }
        self.read_archive(key)?;
        Ok(self.logs.borrow().store().remove(key)?)
    }

    /// Removes expired archives; returns how many.
    pub fn purge_expired_archives(&self) -> Result<usize, StorageError> {
        let logs = self.logs.borrow();
        Ok(enforce_policy(logs.store(), &self.keys, self.now(), usize::MAX, None)?.len())
    }

    /// The persisted metrics.
    pub fn metrics(&self) -> Result<CompactionMetrics, StorageError> {
        let logs = self.logs.borrow();
        Ok(read_value(logs.store(), &self.keys.metrics())?.unwrap_or_default())
    }
}
