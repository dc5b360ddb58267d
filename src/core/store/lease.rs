//! One compaction per origin: a lease key with an owner and an expiry, so that a second tab's
//! `compact()` is `busy` and its `canCompact()` says why. A tab that dies leaves a lease that
//! simply expires. [`LeaseHolder`] owns the key and its I/O: take, renew, release.

use crate::core::json::record::json_record;
use std::cell::Cell;

use crate::core::error::{CompactionError, StorageError};
use crate::core::model::reasons::BusyReason;
use crate::core::model::settings::{CompactorSettings, MAX_RETRY_WAIT_MS};
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::store::log_store::LogStore;
use crate::core::store::stored_json::{read_value, write_json};

/// `<prefix>compaction_lock`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Lease {
    /// The compactor instance holding it.
    pub owner: String,
    /// Epoch ms after which it no longer counts.
    pub expires_at: f64,
}

json_record! {
    read write Lease {
        owner: "owner" req,
        expires_at: "expiresAt" req,
    }
}

/// The furthest ahead a lease can expire: longer than any compaction the options allow (every
/// attempt timing out, plus the waits). A lease further ahead (`expiresAt: 1e308`) was not
/// written by a compaction and holds nothing back.
pub(crate) const MAX_LEASE_MS: f64 = 8.0 * 3_600_000.0;

impl Lease {
    /// Whether it still keeps `other` out at `now_ms`.
    pub(crate) fn blocks(&self, other: &str, now_ms: f64) -> bool {
        self.owner != other && self.expires_at > now_ms && self.expires_at <= now_ms + MAX_LEASE_MS
    }
}

/// Whether a compaction of a tab not named `owner` holds the lease of `logs` now. A lease that
/// does not read holds nothing back (it is this package's lock and holds no data): the next
/// lease taken replaces it, where before it blocked every compaction until removed by hand.
pub fn held_by_other<S: KeyValueStore, C: Clock>(
    logs: &LogStore<S, C>,
    owner: &str,
) -> Result<bool, StorageError> {
    let lease = match read_value::<Lease>(logs.store(), &logs.keys().lease()) {
        Err(StorageError::Corrupt { .. }) => None,
        read => read?,
    };
    Ok(lease.is_some_and(|lease| lease.blocks(owner, logs.clock().now_ms())))
}

/// This page's side of the lease: its name, how long the running compaction's hold lasts, and
/// when it was last renewed. The page's shelf keeps it: one compaction runs in a page at a time.
#[derive(Debug)]
pub struct LeaseHolder {
    owner: String,
    duration_ms: Cell<f64>,
    renewed_ms: Cell<f64>,
}

impl LeaseHolder {
    /// The lease side of the page named `owner` (every tab needs its own name).
    pub fn new(owner: String) -> Self {
        Self {
            owner,
            duration_ms: Cell::new(0.0),
            renewed_ms: Cell::new(0.0),
        }
    }

    /// This page's name in the lease.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// How long a hold of a compaction run with `settings` lasts: every attempt timing out,
    /// plus the waits.
    fn duration_for(settings: &CompactorSettings) -> f64 {
        f64::from(settings.timeout_ms) * f64::from(settings.max_retries + 1)
            + f64::from(settings.retry_delay_ms.max(MAX_RETRY_WAIT_MS))
                * f64::from(settings.max_retries)
            + 30_000.0
    }

    /// Whether a compaction of another tab holds the lease now.
    pub fn held_elsewhere<S: KeyValueStore, C: Clock>(
        &self,
        logs: &LogStore<S, C>,
    ) -> Result<bool, StorageError> {
        held_by_other(logs, &self.owner)
    }

    /// Takes the lease for a compaction run with `settings`; `busy` while another tab holds it.
    pub fn take<S: KeyValueStore, C: Clock>(
        &self,
        logs: &LogStore<S, C>,
        settings: &CompactorSettings,
    ) -> Result<(), CompactionError> {
        self.duration_ms.set(Self::duration_for(settings));
        if self.held_elsewhere(logs)? {
            return Err(CompactionError::Busy(BusyReason::CompactingElsewhere));
        }
        Ok(self.write(logs)?)
    }

    fn write<S: KeyValueStore, C: Clock>(&self, logs: &LogStore<S, C>) -> Result<(), StorageError> {
        let now = logs.clock().now_ms();
        self.renewed_ms.set(now);
        let lease = Lease {
            owner: self.owner.clone(),
            expires_at: now + self.duration_ms.get(),
        };
        write_json(logs.store(), &logs.keys().lease(), &lease)
    }

    /// Extends the lease while a compaction makes progress (at most once a second).
    pub fn renew<S: KeyValueStore, C: Clock>(&self, logs: &LogStore<S, C>) {
        if logs.clock().now_ms() - self.renewed_ms.get() >= 1000.0 {
            // A lease that cannot be renewed expires on its own; the compaction goes on.
            let _ = self.write(logs);
        }
    }

    /// Gives the lease back, if it is still this holder's.
    pub fn release<S: KeyValueStore, C: Clock>(&self, logs: &LogStore<S, C>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_blocks_others_until_it_expires() {
        let lease = Lease {
            owner: "a".into(),
            expires_at: 100.0,
        };
        assert!(lease.blocks("b", 99.0));
        assert!(!lease.blocks("a", 99.0));
        assert!(!lease.blocks("b", 100.0));
    }

    #[test]
    fn a_lease_that_no_compaction_could_write_blocks_nothing() {
        for expires_at in [1e308, f64::INFINITY, f64::NAN, 100.0 + MAX_LEASE_MS + 1.0] {
            let lease = Lease {
                owner: "a".into(),
                expires_at,
            };
            assert!(!lease.blocks("b", 100.0), "{expires_at}");
        }
    }
}
