//! The store lock as one compaction holds it, as a value its steps pass along.

use crate::core::error::StorageError;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::ports::store_lock::LockHeld;
use crate::core::store::shelf::Shelf;

/// The store lock across one compaction: taken with the lease, given up while the provider
/// works (other tabs append meanwhile), taken again for the archive and the swap, and held to
/// the end, where the lease is given back under it. Two holds for a compaction, one for a
/// refusal before the provider was asked.
pub(super) struct RunLock<'s, S, C> {
    shelf: &'s Shelf<S, C>,
    held: Option<LockHeld>,
}

impl<'s, S: KeyValueStore, C: Clock> RunLock<'s, S, C> {
    /// The lock, taken (and the archives brought up to date).
    pub(super) async fn take(shelf: &'s Shelf<S, C>) -> Result<Self, StorageError> {
        let held = Some(shelf.hold().await?);
        Ok(RunLock { shelf, held })
    }

    /// Gives the lock up while the provider works.
    pub(super) fn give_up(&mut self) {
        self.held = None;
    }

    /// Takes the lock again for the archive and the swap.
    pub(super) async fn take_again(&mut self) -> Result<(), StorageError> {
        self.held = Some(self.shelf.hold().await?);
        Ok(())
    }

    /// The lock the end runs under: the one held, else taken again; without it the lease still
    /// goes (an expired lease would block for hours).
    pub(super) async fn for_the_end(self) -> Option<LockHeld> {
        match self.held {
            Some(held) => Some(held),
            None => self.shelf.acquire().await.ok(),
        }
    }
}
