//! Undoing: recovery of a compaction a closed tab left half done, rollback of an archive, and
//! the deletion of one. The reads and writes are the store's (`Journal::settle`,
//! `Archives::put_back`); this decides when they may run and what the app hears.

use super::Compactor;
use crate::core::error::CompactionError;
use crate::core::model::phase::Phase;
use crate::core::model::reasons::BusyReason;
use crate::core::ports::clock::Clock;
use crate::core::ports::events::CompactionEvent;
use crate::core::ports::storage::KeyValueStore;
use crate::core::store::journal::{Journal, Recovered};

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// Finishes or undoes a compaction that a closed tab or a crash left half done, as its
    /// journal says, and reports it through the events. Does nothing while another tab holds
    /// the lease (its compaction is still running). Reports archives the live summaries name
    /// that are no longer stored (`archives_lost`).
    pub async fn recover(&self) -> Result<Option<Recovered>, CompactionError> {
        // Our own compaction, or another tab's, may be mid-way: its journal is not an orphan.
        if self.busy.get() {
            return Ok(None);
        }
        // Archives that cannot be read now, or have not moved yet, are not reported lost.
        if self.refresh_archives_now().await.is_ok() {
            self.report_lost_archives();
        }
        // Nearly always there is nothing to settle: then no store lock (every `new Compactor`
        // recovers, and a hold is a Web Lock and an IndexedDB transaction).
        if !Journal::of(&self.logs.borrow()).is_present()? {
            return Ok(None);
        }
        let held = self.hold().await?;
        let elsewhere = self.lease.held_elsewhere(&self.logs.borrow());
        let outcome = match elsewhere {
            _ if self.busy.get() => return Ok(None),
            Ok(true) => return Ok(None),
            Ok(false) => self.settle_journal().await,
            Err(err) => Err(err.into()),
        };
        if let Err(err) = &outcome {
            let message = format!("could not recover an interrupted compaction: {err}");
            self.events.error(err, Phase::RollingBack, message);
        }
        drop(held);
        outcome
    }

    /// Tells the app (`archives_lost`) which archives the live summaries name that are no
    /// longer stored; a failed read reports nothing here (the next read reports it).
    fn report_lost_archives(&self) {
        let lost = self.with_archives(|a| a.lost());
        if let Some(keys) = lost.ok().filter(|keys| !keys.is_empty()) {
            self.events.emit(CompactionEvent::ArchivesLost { keys });
        }
    }

    /// Settles a journal an interrupted compaction left and tells the app; the lease is checked.
    /// An archive it removes and the store fails to forget stays listed: one too many, never
    /// a loss.
    pub(super) async fn settle_journal(&self) -> Result<Option<Recovered>, CompactionError> {
        let settled = {
            let logs = self.logs.borrow();
            Journal::of(&logs).settle(&self.archives(&logs))?
        };
        if settled.is_some() {
            let _ = self.commit_archives().await;
        }
        if let Some(recovered) = &settled {
            self.events.emit(recovered.event());
        }
        Ok(settled)
    }

    /// Whether a compaction runs here or in another tab; then `busy` with `reason`.
    fn refuse_while_compacting(&self, reason: BusyReason) -> Result<(), CompactionError> {
        if self.busy.get() || self.lease.held_elsewhere(&self.logs.borrow())? {
            return Err(CompactionError::Busy(reason));
        }
        Ok(())
    }

    /// Puts an archive's originals back in place of the summary that replaced them; entries
    /// appended since stay. The archive is removed once its entries are live again.
    pub async fn rollback(&self, archive_key: &str) -> Result<(), CompactionError> {
        if self.busy.get() {
            return Err(CompactionError::Busy(BusyReason::RollbackWhileCompacting));
        }
        let held = self.hold().await?;
        self.refuse_while_compacting(BusyReason::RollbackWhileCompacting)?;
        self.busy.set(true);
        self.events.enter(Phase::RollingBack);
        let outcome = self.with_archives(|a| a.put_back(archive_key));
        // The originals are live again: an archive the store fails to forget stays listed.
        if outcome.is_ok() {
            let _ = self.commit_archives().await;
        }
        match &outcome {
            Ok(()) => {
                self.events.enter(Phase::Idle);
                self.events.emit(CompactionEvent::RolledBack {
                    archive_key: archive_key.to_owned(),
                });
            }
            Err(err) => {
                self.events.enter(Phase::Error);
                self.events.error(err, Phase::RollingBack, err.to_string());
            }
        }
        drop(held);
        self.busy.set(false);
        outcome
    }

    /// Whether [`Compactor::delete_archive`] is refused now; a caller checks it as the app
    /// calls (from a `compaction_archived` listener, say), before the archive store answers.
    pub fn may_delete_archive(&self) -> Result<(), CompactionError> {
        self.refuse_while_compacting(BusyReason::DeleteWhileCompacting)
    }

    /// Removes one archive; refused while a compaction runs here or in another tab (its archive
    /// may be the only copy of the originals until the swap is done).
    pub async fn delete_archive(&self, key: &str) -> Result<(), CompactionError> {
        self.refresh_archives_now().await?;
        self.may_delete_archive()?;
        let deleted = self.with_archives(|a| a.delete(key));
        deleted?;
        Ok(self.commit_archives().await?)
    }

    /// Removes the expired archives; how many went.
    pub async fn purge_archives(&self) -> Result<usize, CompactionError> {
        self.refresh_archives_now().await?;
        let purged = self.with_archives(|a| a.purge());
        let purged = purged?;
        if purged > 0 {
            self.commit_archives().await?;
        }
        Ok(purged)
    }
}
