//! The store lock as one compaction holds it, as a value its steps pass along.

use crate::core::ports::store_lock::LockHeld;

/// The store lock across one compaction: taken with the lease, given up while the provider
/// works (other tabs append meanwhile), taken again for the archive and the swap, and held to
/// the end, where the lease is given back under it. Two holds for a compaction, one for a
/// refusal before the provider was asked. (The holds themselves are awaited by the steps: a
/// future of its own here would add its state machine to the download.)
pub(super) struct RunLock(Option<LockHeld>);

impl RunLock {
    /// The lock taken with the lease.
    pub(super) fn taken(held: LockHeld) -> Self {
        RunLock(Some(held))
    }

    /// Gives the lock up while the provider works.
    pub(super) fn give_up(&mut self) {
        self.0 = None;
    }

    /// Holds `held`, taken again for the archive and the swap.
    pub(super) fn taken_again(&mut self, held: LockHeld) {
        self.0 = Some(held);
    }

    /// The lock the end runs under when the compaction still holds it; else the end takes it
    /// again (without it the lease still goes: an expired lease would block for hours).
    pub(super) fn still_held(self) -> Option<LockHeld> {
        self.0
    }
}
