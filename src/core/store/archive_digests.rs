//! What each archive says of itself — its head, and for one that reads whole what `list`
//! shows — kept per key once its text was read. An archive is written once under its key and
//! never changed, so listing, expiring and evicting archives reads no archive's text again:
//! the archive store's copy need not hold the texts (a page's memory stays flat however many
//! archives a session writes).

use std::cell::RefCell;
use std::rc::Rc;

use crate::core::model::outcome::EntryCounts;
use crate::core::ports::storage::utf16_units;
use crate::core::store::archive_record::{Archive, ArchiveHead, ArchiveInfo};
use crate::core::store::stored_json::parse;

/// What an archive's text says of the archive.
#[derive(Debug, Clone, PartialEq)]
pub enum ArchiveDigest {
    /// It reads whole: what `list` shows of it (`restorable` is decided when listed).
    Whole(ArchiveInfo),
    /// Only its head reads: it expires and `recall` finds it, and it is never removed.
    Head(ArchiveHead),
    /// Not an archive the package reads (its key): left alone.
    Unreadable(String),
}

impl ArchiveDigest {
    /// The digest of the archive `text` stored under `key`.
    pub fn of(key: &str, text: &str) -> Self {
        match parse::<Archive>(key, text) {
            Ok(archive) => Self::Whole(ArchiveInfo {
                rung: archive.rung(),
                bytes: 2 * (utf16_units(key) + utf16_units(text)),
                entries: EntryCounts {
                    reasoning: archive.data.reasoning_log.len(),
                    execution: archive.data.execution_log.len(),
                    tool_activity: archive.data.tool_activity_log.len(),
                },
                key: key.to_owned(),
                timestamp: archive.timestamp,
                expires_at: archive.expires_at,
                iterations: archive.iterations,
                trigger: archive.trigger,
                metadata: archive.metadata,
                restorable: false,
            }),
            Err(_) => ArchiveHead::from_start(key, text)
                .map_or_else(|| Self::Unreadable(key.to_owned()), Self::Head),
        }
    }

    /// Its head, when that reads.
    pub fn head(&self) -> Option<ArchiveHead> {
        match self {
            Self::Whole(info) => Some(ArchiveHead {
                key: info.key.clone(),
                timestamp: info.timestamp,
                expires_at: info.expires_at,
                iterations: info.iterations.clone(),
            }),
            Self::Head(head) => Some(head.clone()),
            Self::Unreadable(_) => None,
        }
    }

    /// The key of the archive it is of.
    pub fn key(&self) -> &str {
        match self {
            Self::Whole(info) => &info.key,
            Self::Head(head) => &head.key,
            Self::Unreadable(key) => key,
        }
    }

    /// What `list` shows of it, when it reads whole.
    pub fn info(&self) -> Option<&ArchiveInfo> {
        match self {
            Self::Whole(info) => Some(info),
            _ => None,
        }
    }
}

/// The digests of the archives a page has read (a few hundred at most: searched in order).
#[derive(Debug, Default)]
pub struct ArchiveDigests(RefCell<Vec<Rc<ArchiveDigest>>>);

impl ArchiveDigests {
    /// The digest of the archive under `key`, when its text was read.
    pub fn get(&self, key: &str) -> Option<Rc<ArchiveDigest>> {
        let digests = self.0.borrow();
        digests.iter().find(|digest| digest.key() == key).cloned()
    }

    /// Keeps `digest` (of an archive whose digest is not kept yet).
    pub fn insert(&self, digest: Rc<ArchiveDigest>) {
        self.0.borrow_mut().push(digest);
    }

    /// Forgets the digests of archives whose keys `stored` no longer lists.
    pub fn keep_only(&self, stored: &[String]) {
        let mut digests = self.0.borrow_mut();
        let mut at = 0;
        while at < digests.len() {
            if stored.iter().any(|key| key == digests[at].key()) {
                at += 1;
            } else {
                digests.swap_remove(at);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::model::clearing::Rung;

    #[test]
    fn an_archive_whose_entries_do_not_read_keeps_its_head_and_is_never_whole() {
        let whole = r#"{"timestamp":5,"expiresAt":9,"iterations":[1,2],"trigger":"auto","data":{"reasoningLog":["a"],"executionLog":[],"toolActivityLog":[]},"metadata":{"contextUsageBefore":0.5,"totalTokensBefore":10}}"#;
        let info = ArchiveDigest::of("k", whole);
        let listed = info.info().expect("it reads whole");
        assert_eq!(
            (listed.entries.reasoning, listed.rung),
            (1, Rung::Summarize)
        );
        assert_eq!(listed.bytes, 2 * (1 + whole.len()));
        let broken = &whole[..whole.len() - 20];
        let head = ArchiveDigest::of("k", broken);
        assert_eq!(head.info(), None);
        assert_eq!(head.head(), info.head());
        assert_eq!(
            ArchiveDigest::of("k", "[1]"),
            ArchiveDigest::Unreadable("k".into())
        );
        let digests = ArchiveDigests::default();
        for key in ["a", "b", "c"] {
            digests.insert(Rc::new(ArchiveDigest::of(key, "[1]")));
        }
        digests.keep_only(&["c".into(), "a".into()]);
        assert!(digests.get("b").is_none());
        assert_eq!(
            digests.get("c").map(|d| d.key().to_owned()).as_deref(),
            Some("c")
        );
    }
}
