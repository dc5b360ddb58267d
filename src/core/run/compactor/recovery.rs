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
use crate::core::store::archives::Archives;
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
        self.report_lost_archives();
        // Nearly always there is nothing to settle: then no store lock (every `new Compactor`
        // recovers, and a hold is a Web Lock and an IndexedDB transaction).
        if !Journal::of(&self.logs.borrow()).is_present()? {
            return Ok(None);
        }
        let held = self.lock.acquire().await?;
        let outcome = match self.lease.held_elsewhere(&self.logs.borrow()) {
            _ if self.busy.get() => return Ok(None),
            Ok(true) => return Ok(None),
            Ok(false) => self.settle_journal(),
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
        let lost = Archives::new(&self.logs.borrow(), &self.keys).lost();
        if let Some(keys) = lost.ok().filter(|keys| !keys.is_empty()) {
            self.events.emit(CompactionEvent::ArchivesLost { keys });
        }
    }

    /// Settles a journal an interrupted compaction left and tells the app; the lease is checked.
    pub(super) fn settle_journal(&self) -> Result<Option<Recovered>, CompactionError> {
        let logs = self.logs.borrow();
        let settled = Journal::of(&logs).settle(&Archives::new(&logs, &self.keys))?;
        drop(logs);
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
        let held = self.lock.acquire().await?;
        self.refuse_while_compacting(BusyReason::RollbackWhileCompacting)?;
        self.busy.set(true);
        self.events.enter(Phase::RollingBack);
        let outcome = Archives::new(&self.logs.borrow(), &self.keys).put_back(archive_key);
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

    /// Removes one archive; refused while a compaction runs here or in another tab (its archive
    /// may be the only copy of the originals until the swap is done).
    pub fn delete_archive(&self, key: &str) -> Result<(), CompactionError> {
        self.refuse_while_compacting(BusyReason::DeleteWhileCompacting)?;
        Archives::new(&self.logs.borrow(), &self.keys).delete(key)
    }
}
