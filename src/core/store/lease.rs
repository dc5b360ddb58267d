//! One compaction per origin: a lease key with an owner and an expiry, so that a second tab's
//! `compact()` is `busy` and its `canCompact()` says why. A tab that dies leaves a lease that
//! simply expires.

use serde::{Deserialize, Serialize};

/// `<prefix>compaction_lock`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Lease {
    /// The compactor instance holding it.
    pub owner: String,
    /// Epoch ms after which it no longer counts.
    pub expires_at: f64,
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
