//! Undoing: recovery of a compaction a closed tab left half done, and rollback of an archive,
//! with what the app hears of them. The reads and writes are the shelf's (`Shelf::settle`,
//! `Shelf::rollback`); this decides when recovery may run and reports both.

use std::future::Future;

use super::Compactor;
use crate::core::error::{CompactionError, StorageError};
use crate::core::model::phase::Phase;
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
        // A compaction of this page, or another tab's, may be mid-way: its journal is no orphan.
        if self.busy() {
            return Ok(None);
        }
        // Archives that cannot be listed now, or have not moved yet, are not reported lost.
        if self.shelf.refreshed(false).await.is_ok() {
            if let Some(keys) = self
                .shelf
                .with_archives(|a| a.lost())
                .ok()
                .filter(|keys| !keys.is_empty())
            {
                self.events.emit(CompactionEvent::ArchivesLost { keys });
            }
        }
        // Nearly always there is nothing to settle: then no store lock (every `new Compactor`
        // recovers, and a hold is a Web Lock and an IndexedDB transaction).
        if !Journal::of(&self.logs().borrow()).is_present()? {
            return Ok(None);
        }
        let held = self.shelf.hold().await?;
        let elsewhere = self.shelf.compacting_elsewhere();
        let outcome = match elsewhere {
            _ if self.busy() => return Ok(None),
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

    /// Reads the digests of the archives kept from earlier sessions and compactions while this
    /// page runs no compaction ([`Shelf::digest_while_idle`]): what the browser layer starts
    /// after every recovery and every compaction, so that a compaction reads no archive's text
    /// it does not carry facts from.
    ///
    /// [`Shelf::digest_while_idle`]: crate::core::store::shelf::Shelf::digest_while_idle
    pub fn digest_archives_while_idle(
        &self,
    ) -> impl Future<Output = Result<(), StorageError>> + '_ {
        self.shelf.digest_while_idle(self.timer.as_ref())
    }

    /// Settles a journal an interrupted compaction left, sets aside pins that do not read, and
    /// tells the app; the lease is checked.
    pub(super) async fn settle_journal(&self) -> Result<Option<Recovered>, CompactionError> {
        let settled = self.shelf.settle().await?;
        if let Some(recovered) = &settled {
            self.events.emit(recovered.event());
        }
        if let Some(set_aside) = self.logs().borrow().settle_pins()? {
            self.events.emit(CompactionEvent::SetAside(set_aside));
        }
        Ok(settled)
    }

    /// Puts an archive's originals back in place of the summary that replaced them; entries
    /// appended since stay. The archive is removed once its entries are live again.
    pub async fn rollback(&self, archive_key: &str) -> Result<(), CompactionError> {
        let started = || self.events.enter(Phase::RollingBack);
        let outcome = self.shelf.rollback(archive_key, started).await;
        match &outcome {
            Ok(()) => {
                self.events.enter(Phase::Idle);
                self.events.emit(CompactionEvent::RolledBack {
                    archive_key: archive_key.to_owned(),
                });
            }
            // Refused before it began: the phase stays.
            Err(CompactionError::Busy(_)) => {}
            Err(err) => {
                self.events.enter(Phase::Error);
                self.events.error(err, Phase::RollingBack, err.to_string());
            }
        }
        outcome
    }
}
