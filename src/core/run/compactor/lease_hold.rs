//! The cross-tab lease a compaction holds: taken under the store lock, renewed while it makes
//! progress, given back at the end.

use super::*;

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// How long a lease lasts without renewal: every attempt timing out, plus the waits.
    pub(super) fn lease_ms(&self) -> f64 {
        let s = &self.settings;
        f64::from(s.timeout_ms) * f64::from(s.max_retries + 1)
            + f64::from(s.retry_delay_ms.max(MAX_RETRY_WAIT_MS)) * f64::from(s.max_retries)
            + 30_000.0
    }

    /// The lease of a compaction running in another tab, if there is one.
    pub(super) fn lease_elsewhere(&self) -> Result<Option<Lease>, StorageError> {
        let logs = self.logs.borrow();
        let lease: Option<Lease> = read_value(logs.store(), &logs.keys().lease())?;
        Ok(lease.filter(|lease| lease.blocks(&self.owner, logs.clock().now_ms())))
    }

    pub(super) fn take_lease(&self) -> Result<(), CompactionError> {
        if self.lease_elsewhere()?.is_some() {
            return Err(CompactionError::Busy(
                "A compaction is running in another tab; try again when it has finished.".into(),
            ));
        }
        self.write_lease()?;
        Ok(())
    }

    pub(super) fn write_lease(&self) -> Result<(), StorageError> {
        let now = self.now();
        self.lease_renewed_ms.set(now);
        let logs = self.logs.borrow();
        let lease = Lease {
            owner: self.owner.clone(),
            expires_at: now + self.lease_ms(),
        };
        write_json(logs.store(), &logs.keys().lease(), &lease)
    }

    /// Extends the lease while a compaction makes progress (at most once a second).
    pub(super) fn renew_lease(&self) {
        if self.now() - self.lease_renewed_ms.get() >= 1000.0 {
            // A lease that cannot be renewed expires on its own; the compaction goes on.
            let _ = self.write_lease();
        }
    }

    pub(super) fn release_lease(&self) {
        let logs = self.logs.borrow();
        let key = logs.keys().lease();
        let ours = read_value::<Lease>(logs.store(), &key)
            .ok()
            .flatten()
            .is_some_and(|lease| lease.owner == self.owner);
        if ours {
            let _ = logs.store().remove(&key);
        }
    }
}
