//! One compaction per origin: a lease key with an owner and an expiry, so that a second tab's
//! `compact()` is `busy` and its `canCompact()` says why. A tab that dies leaves a lease that
//! simply expires.

use serde::{Deserialize, Serialize};

/// `<prefix>compaction_lock`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    /// The compactor instance holding it.
    pub owner: String,
    /// Epoch ms after which it no longer counts.
    pub expires_at: f64,
}

impl Lease {
    /// Whether it still keeps `other` out at `now_ms`.
    pub fn blocks(&self, other: &str, now_ms: f64) -> bool {
        self.owner != other && self.expires_at > now_ms
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
}
