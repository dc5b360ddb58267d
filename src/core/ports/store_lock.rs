//! The port to the lock every tab of an origin takes before it changes the logs.
//!
//! localStorage has no transactions: two tabs that read a log, add to it and write it back can
//! each miss the other's entry. Every read-modify-write the package makes (the lease, the swap,
//! rollback, recovery, the metrics) runs while it holds this lock, with a view of the store that
//! includes every write made under it before.

use crate::core::error::StorageError;
use crate::core::ports::timer::LocalBoxFuture;

/// Proof that this tab holds the store lock; dropping it releases the lock.
pub struct LockHeld {
    release: Option<Box<dyn FnOnce()>>,
}

impl LockHeld {
    /// A hold that runs `release` when it is dropped.
    pub fn new(release: impl FnOnce() + 'static) -> Self {
        Self {
            release: Some(Box::new(release)),
        }
    }

    /// A hold with nothing to release (a store no other tab shares).
    pub(crate) fn unshared() -> Self {
        Self { release: None }
    }
}

impl Drop for LockHeld {
    fn drop(&mut self) {
        if let Some(release) = self.release.take() {
            release();
        }
    }
}

impl std::fmt::Debug for LockHeld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockHeld")
            .field("shared", &self.release.is_some())
            .finish()
    }
}

/// A lock over the store shared by every writer of it.
pub trait StoreLock {
    /// Waits until this writer holds the lock and its view of the store is current.
    fn acquire(&self) -> LocalBoxFuture<'static, Result<LockHeld, StorageError>>;
}

/// The lock of a store no one else writes: granted at once.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Unshared;

impl StoreLock for Unshared {
    fn acquire(&self) -> LocalBoxFuture<'static, Result<LockHeld, StorageError>> {
        Box::pin(async { Ok(LockHeld::unshared()) })
    }
}
