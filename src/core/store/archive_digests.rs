//! What each archive says of itself — its head, and for one that reads whole what `list`
//! shows — kept per key once its text was read. An archive is written once under its key and
//! never changed, so listing, expiring and evicting archives reads no archive's text again:
//! the archive store's copy need not hold the texts (a page's memory stays flat however many
//! archives a session writes).

use std::cell::RefCell;
use std::rc::Rc;

use crate::core::model::clearing::Rung;
use crate::core::model::outcome::EntryCounts;
use crate::core::order::sorted_map::SortedMap;
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
    /// Not an archive the package reads: left alone.
    Unreadable,
}

impl ArchiveDigest {
    /// The digest of the archive `text` stored under `key`.
    pub fn of(key: &str, text: &str) -> Self {
        match parse::<Archive>(key, text) {
            Ok(archive) => Self::Whole(ArchiveInfo {
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
                rung: match archive.placeholders {
                    Some(_) => Rung::Clear,
                    None => Rung::Summarize,
                },
            }),
            Err(_) => ArchiveHead::from_start(key, text).map_or(Self::Unreadable, Self::Head),
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
            Self::Unreadable => None,
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

/// The digests of the archives a page has read, by key.
#[derive(Debug, Default)]
pub struct ArchiveDigests(RefCell<SortedMap<String, Rc<ArchiveDigest>>>);

impl ArchiveDigests {
    /// The digest of the archive under `key`, when its text was read.
    pub fn get(&self, key: &str) -> Option<Rc<ArchiveDigest>> {
        self.0.borrow().get(key).cloned()
    }

    /// Keeps `digest` for the archive under `key`.
    pub fn insert(&self, key: &str, digest: Rc<ArchiveDigest>) {
        self.0.borrow_mut().insert(key.to_owned(), digest);
    }

    /// Forgets the digests of archives whose keys `stored` no longer lists.
    pub fn keep_only(&self, stored: &[String]) {
        self.0.borrow_mut().retain(|key, _| stored.contains(key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(ArchiveDigest::of("k", "[1]"), ArchiveDigest::Unreadable);
    }
}
