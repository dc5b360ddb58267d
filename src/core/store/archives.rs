//! The archives of one compactor's logs, behind one type that owns their keys and their I/O:
//! the seam a second archive backend plugs into. Its operations are the whole archive
//! protocol: `next_key`, `write` (with eviction of expired archives when the store is full),
//! `list`, `read`, `delete`, `purge`, `enforce_limit`, `recall`, `carried`, `lost`
//! and `put_back` (a rollback's reads and writes).

use crate::core::order::text_search::TextSearch;
use std::rc::Rc;

use crate::core::error::{CompactionError, StorageError};
use crate::core::json::write::ToJson;
use crate::core::log::entries::StoredReasoning;
use crate::core::log::iteration::{parse_summary_header, parse_summary_source};
use crate::core::model::clearing::Rung;
use crate::core::model::facts::Carried;
use crate::core::model::reasons::{BusyReason, Conflict, Refusal};
use crate::core::order::sort::{sort_by, unique_in_order};
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::{with_free_space, KeyValueStore};
use crate::core::steps::clearing::{placeholder_naming, placeholder_sources, CLEARED_MARK};
use crate::core::steps::selection::{EntryIterations, Selection};
use crate::core::steps::swap::{restore, summary_is_live};
use crate::core::store::archive_digests::{ArchiveDigest, ArchiveDigests};
use crate::core::store::archive_record::{
    read_archive, Archive, ArchiveData, ArchiveHead, ArchiveInfo,
};
use crate::core::store::keys::StorageKeys;
use crate::core::store::log_store::LogStore;
use crate::core::store::raw_logs::RawLogs;
use crate::core::store::stored_json::write_json;

/// How many summaries deep `recall` follows archives that hold earlier summaries.
const MAX_SUMMARY_CHAIN: usize = 64;

/// Whether a placeholder naming the archive `key` is in the live logs `live`.
fn names_live(live: &RawLogs, key: &str) -> bool {
    let named = placeholder_naming(key);
    [&live.execution, &live.tool_activity]
        .into_iter()
        .flatten()
        .any(|text| text.contains_text(&named))
}

/// Sorts archives newest first by the timestamp and key `written` gives each (the later key
/// first among archives of one millisecond).
fn newest_first<T>(archives: &mut [T], written: impl Fn(&T) -> (u64, &String)) {
    sort_by(archives, |a, b| written(b).cmp(&written(a)));
}

/// The archives of `logs` under `keys` (a compactor's archive prefix), held in `store`.
pub struct StoredArchives<'a, S, C> {
    pub(crate) logs: &'a LogStore<S, C>,
    keys: &'a StorageKeys,
    store: &'a dyn KeyValueStore,
    digests: &'a ArchiveDigests,
    /// Whether the digests are read ahead of what needs them (an archive store, whose texts
    /// come asynchronously): an archive whose digest is not read yet is passed over by what
    /// reads every archive's digest, rather than read there.
    read_ahead: bool,
}

impl<'a, S: KeyValueStore, C: Clock> StoredArchives<'a, S, C> {
    /// The archives of `logs` whose keys `keys` names, held in `store` (the logs' own store or
    /// an [`ArchiveStore`](crate::core::ports::archive_store::ArchiveStore)), with the
    /// `digests` of those already read.
    pub fn new(
        logs: &'a LogStore<S, C>,
        keys: &'a StorageKeys,
        store: &'a dyn KeyValueStore,
        digests: &'a ArchiveDigests,
    ) -> Self {
        Self {
            logs,
            keys,
            store,
            digests,
            read_ahead: false,
        }
    }

    /// These archives with their digests read ahead ([`Shelf::digest_while_idle`], and
    /// [`Shelf::refreshed`] before every read the app asks for): a compaction's eviction
    /// passes over an archive whose digest is not read yet.
    ///
    /// [`Shelf::digest_while_idle`]: crate::core::store::shelf::Shelf::digest_while_idle
    /// [`Shelf::refreshed`]: crate::core::store::shelf::Shelf::refreshed
    pub fn with_digests_read_ahead(mut self) -> Self {
        self.read_ahead = true;
        self
    }

    /// The time now (epoch ms) by the logs' clock.
    pub(crate) fn now(&self) -> f64 {
        self.logs.clock().now_ms()
    }

    /// A free archive key and its timestamp: now, or the first free millisecond after.
    pub fn next_key(&self) -> Result<(String, u64), StorageError> {
        let mut timestamp = self.now().max(0.0) as u64;
        while self.store.contains(&self.keys.archive(timestamp))? {
            timestamp += 1;
        }
        Ok((self.keys.archive(timestamp), timestamp))
    }

    /// Writes `archive` under `key`. A full store first loses expired archives (never `key`)
    /// before the write fails with the sizes; an unexpired archive is never removed to make
    /// room: it may be the only copy of entries the user wants back.
    pub fn write(&self, key: &str, archive: &dyn ToJson) -> Result<(), StorageError> {
        let store = &self.store;
        loop {
            match write_json(store, key, archive) {
                Ok(()) => return Ok(()),
                Err(StorageError::Quota { .. }) if self.free_expired(key)? => continue,
                Err(err) => return Err(with_free_space(store, err)),
            }
        }
    }

    /// Removes one expired archive other than `keep`; whether one went.
    fn free_expired(&self, keep: &str) -> Result<bool, StorageError> {
        let now = self.now();
        let (heads, _) = self.heads(Some(keep))?;
        for expired in heads.iter().filter(|head| head.expires_at as f64 <= now) {
            if self.evict(&expired.key)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The archives, newest first, expired ones excluded, each saying whether `rollback` can
    /// put it back now.
    pub fn list(&self) -> Result<Vec<ArchiveInfo>, StorageError> {
        let now = self.now();
        let (infos, _) = self.stored(None)?;
        // Only the reasoning log says which summaries are live, and only when there are archives.
        let reasoning = if infos.is_empty() {
            Vec::new()
        } else {
            self.logs.stored_reasoning()?
        };
        let cleared_any = infos.iter().any(|info| info.rung == Rung::Clear);
        let live = if cleared_any {
            self.live()?
        } else {
            RawLogs::default()
        };
        Ok(infos
            .into_iter()
            .filter(|a| a.expires_at as f64 > now)
            .map(|mut info| {
                let last = info.iterations.iter().copied().max().unwrap_or(0);
                info.restorable = match info.rung {
                    Rung::Clear => names_live(&live, &info.key),
                    Rung::Summarize | Rung::Fallback => summary_is_live(&reasoning, last),
                };
                info
            })
            .collect())
    }

    /// Every readable archive, newest first, without reading `skip`, and whether `skip` exists.
    fn stored(&self, skip: Option<&str>) -> Result<(Vec<ArchiveInfo>, bool), StorageError> {
        // An unreadable archive is left alone: reported by `read`, never destroyed.
        let (mut infos, skipped) = self.each_stored(skip, |digest| digest.info().cloned())?;
        newest_first(&mut infos, |info| (info.timestamp, &info.key));
        Ok((infos, skipped))
    }

    /// The head of every archive whose head reads, newest first, without reading `skip`, and
    /// whether `skip` exists: what eviction and `recall` need, without reading the entries.
    pub(crate) fn heads(
        &self,
        skip: Option<&str>,
    ) -> Result<(Vec<ArchiveHead>, bool), StorageError> {
        let (mut heads, skipped) = self.each_stored(skip, ArchiveDigest::head)?;
        newest_first(&mut heads, |head| (head.timestamp, &head.key));
        Ok((heads, skipped))
    }

    /// The digest of the archive under `key`, read once and then kept; `None` when it is
    /// gone, or not read yet where digests are read ahead.
    pub(crate) fn digest(&self, key: &str) -> Result<Option<Rc<ArchiveDigest>>, StorageError> {
        if let Some(digest) = self.digests.get(key) {
            return Ok(Some(digest));
        }
        if self.read_ahead {
            return Ok(None);
        }
        let text = match self.store.get(key) {
            Ok(Some(text)) => text,
            Ok(None) => return Ok(None),
            // A stored value that gives no text (its compression damaged) reads as no archive.
            Err(StorageError::Corrupt { .. }) => String::new(),
            Err(other) => return Err(other),
        };
        let digest = Rc::new(ArchiveDigest::of(key, &text));
        self.digests.insert(Rc::clone(&digest));
        Ok(Some(digest))
    }

    /// The keys of the stored archives whose digests were never read.
    pub(crate) fn undigested(&self) -> Result<Vec<String>, StorageError> {
        let stored = self.archive_keys()?;
        self.digests.keep_only(&stored);
        Ok(stored
            .into_iter()
            .filter(|key| self.digests.get(key).is_none())
            .collect())
    }

    /// The keys of the stored archives.
    fn archive_keys(&self) -> Result<Vec<String>, StorageError> {
        let mut keys = self.store.keys()?;
        keys.retain(|key| self.owns(key));
        Ok(keys)
    }

    /// What `read` makes of the digest of each archive other than `skip` (those it gives
    /// `None` for are left out), and whether `skip` exists.
    fn each_stored<T>(
        &self,
        skip: Option<&str>,
        read: impl Fn(&ArchiveDigest) -> Option<T>,
    ) -> Result<(Vec<T>, bool), StorageError> {
        let mut found = Vec::new();
        let mut skipped = false;
        let stored = self.archive_keys()?;
        self.digests.keep_only(&stored);
        for key in stored {
            if skip == Some(key.as_str()) {
                skipped = true;
                continue;
            }
            if let Some(digest) = self.digest(&key)? {
                found.extend(read(&digest));
            }
        }
        Ok((found, skipped))
    }

    /// The stored archives whose text does not even give their head: damaged where they are
    /// kept.
    pub(crate) fn unreadable(&self) -> Result<Vec<String>, StorageError> {
        let unreadable = |digest: &ArchiveDigest| match digest {
            ArchiveDigest::Unreadable(key) => Some(key.clone()),
            _ => None,
        };
        Ok(self.each_stored(None, unreadable)?.0)
    }

    /// Whether the archive under `key` is a clearing's (it holds the bodies its placeholders
    /// stand for).
    fn holds_cleared_bodies(&self, key: &str) -> Result<bool, StorageError> {
        let digest = self.digest(key)?;
        Ok(digest.is_some_and(|d| d.info().is_some_and(|info| info.rung == Rung::Clear)))
    }

    /// Removes the archive under `key` when it reads whole: one whose head reads but whose
    /// entries do not is left alone, as an unreadable one is. Whether it went.
    fn evict(&self, key: &str) -> Result<bool, StorageError> {
        let readable = self.digest(key)?.is_some_and(|d| d.info().is_some());
        if readable {
            self.remove(key)?;
        }
        Ok(readable)
    }

    /// The archive under `key` as stored; `None` when it is gone.
    pub fn read_stored(&self, key: &str) -> Result<Option<Archive>, StorageError> {
        read_archive(&self.store, key)
    }

    /// One archive, whole; refused for a key that is not one of these archives,
    /// `ArchiveMissing` for one that is no longer stored.
    pub fn read(&self, key: &str) -> Result<Archive, CompactionError> {
        if self.keys.archive_timestamp(key).is_none() {
            return Err(CompactionError::NotAllowed(Refusal::NotAnArchiveKey(
                key.to_owned(),
            )));
        }
        self.read_stored(key)?
            .ok_or_else(|| CompactionError::ArchiveMissing {
                key: key.to_owned(),
            })
    }

    /// The archives the live summaries and placeholders name that are no longer stored
    /// (deleted, expired, or evicted by the browser), in the order of the logs.
    pub fn lost(&self) -> Result<Vec<String>, StorageError> {
        let mut named = self.named()?;
        named.append(&mut self.live_placeholder_keys(None)?);
        unique_in_order(&mut named);
        if named.is_empty() {
            return Ok(named);
        }
        let stored = self.store.keys()?;
        Ok(named
            .into_iter()
            .filter(|key| !stored.contains(key))
            .collect())
    }

    /// The archives the live summaries name, in the order of the log: those a compaction
    /// reads for the facts and index lines the summaries carry.
    pub(crate) fn named(&self) -> Result<Vec<String>, StorageError> {
        Ok(self
            .logs
            .stored_reasoning()?
            .iter()
            .filter_map(|entry| parse_summary_source(entry))
            .filter(|key| self.owns(key))
            .map(str::to_owned)
            .collect())
    }

    /// The archive that should hold `iteration`'s originals but is no longer stored: the live
    /// summary that compacted it names an archive, whose own summaries name older ones; or a
    /// live placeholder of it names its clearing's archive.
    pub(crate) fn missing_for(&self, iteration: u32) -> Result<Option<String>, StorageError> {
        let covering = |entries: &[StoredReasoning]| {
            entries.iter().find_map(|entry| {
                let (_, last) = parse_summary_header(entry)?;
                let key = parse_summary_source(entry).filter(|_| iteration <= last)?;
                Some(key.to_owned())
            })
        };
        let mut next = covering(&self.logs.stored_reasoning()?);
        // Each archive in the chain holds an older summary; a corrupt one could name itself.
        for _ in 0..MAX_SUMMARY_CHAIN {
            let Some(key) = next.take().filter(|key| self.owns(key)) else {
                break;
            };
            match self.read_stored(&key)? {
                None => return Ok(Some(key)),
                Some(archive) => next = covering(&archive.data.reasoning_log),
            }
        }
        let mut named = self.live_placeholder_keys(Some(iteration))?;
        if !named.is_empty() {
            let stored = self.store.keys()?;
            named.retain(|key| !stored.contains(key));
        }
        Ok(named.into_iter().next())
    }

    /// The archives the live placeholders (of `iteration` only, when given) name.
    fn live_placeholder_keys(&self, iteration: Option<u32>) -> Result<Vec<String>, StorageError> {
        // Placeholders stand in executions and tool entries only: the reasoning is not read.
        let keys = self.logs.keys();
        let mut named = Vec::new();
        for log in [keys.execution(), keys.tool_activity()] {
            let Some(text) = self.logs.store().get(&log)? else {
                continue;
            };
            for (n, key) in placeholder_sources(&text) {
                if iteration.is_none_or(|wanted| wanted == n) && self.owns(key) {
                    named.push(key.to_owned());
                }
            }
        }
        Ok(named)
    }

    /// Whether `key` names one of these archives.
    pub fn owns(&self, key: &str) -> bool {
        self.keys.archive_timestamp(key).is_some()
    }

    /// Removes the archive under `key` (refused for a key that is not one of these archives).
    pub fn delete(&self, key: &str) -> Result<(), CompactionError> {
        self.read(key)?;
        Ok(self.remove(key)?)
    }

    /// Removes the archive under `key`, which the caller has checked is one of these.
    pub(crate) fn remove(&self, key: &str) -> Result<(), StorageError> {
        self.store.remove(key)
    }

    /// Removes expired archives; how many went.
    pub fn purge(&self) -> Result<usize, StorageError> {
        Ok(self.enforce_limit(usize::MAX, None)?.len())
    }

    /// Removes expired archives, then the oldest beyond `max_archives`, never `keep` (which
    /// takes one of the places and is not read). Only the heads are read to choose; an archive
    /// that does not read whole is never removed. Returns the keys removed.
    pub fn enforce_limit(
        &self,
        max_archives: usize,
        keep: Option<&str>,
    ) -> Result<Vec<String>, StorageError> {
        let now = self.now();
        let (heads, keeping) = self.heads(keep)?;
        let mut removed = Vec::new();
        let mut kept = usize::from(keeping);
        // Newest first: the expired go, then everything past max_archives but the bodies a
        // clearing took (the logs' own bytes, moved: their placeholders name them).
        for head in heads {
            let expired = (head.expires_at as f64) <= now;
            // (Read only where a limit applies: in the logs' own store.)
            let limited = max_archives < usize::MAX;
            if !expired && limited && self.holds_cleared_bodies(&head.key)? {
                continue;
            }
            if expired || kept >= max_archives {
                if self.evict(&head.key)? {
                    removed.push(head.key);
                }
            } else {
                kept += 1;
            }
        }
        Ok(removed)
    }

    /// The keys of these archives and of their logs.
    pub(crate) fn keys(&self) -> &StorageKeys {
        self.keys
    }

    /// The live logs as stored.
    pub(crate) fn live(&self) -> Result<RawLogs, StorageError> {
        self.logs.raw_logs()
    }

    /// The archived originals of `iteration`, from the archive that compacted it; `None` when
    /// it was never compacted (it is live); `ArchiveMissing` naming the archive that held it
    /// when that archive is no longer stored (deleted, expired, evicted).
    pub fn recall(&self, iteration: u32) -> Result<Option<ArchiveData>, CompactionError> {
        let (heads, _) = self.heads(None)?;
        for head in heads
            .iter()
            .filter(|head| head.iterations.contains(&iteration))
        {
            let Some(archive) = self.read_stored(&head.key)? else {
                continue;
            };
            let placed;
            let numbers = match &archive.entry_iterations {
                Some(numbers) => numbers,
                None => {
                    placed = EntryIterations::placed(&archive.data);
                    &placed
                }
            };
            let recalled = archive.data.of_iteration(iteration, numbers);
            if !recalled.is_empty() {
                return Ok(Some(self.resolved(recalled, &heads)?));
            }
        }
        match self.missing_for(iteration)? {
            Some(key) => Err(CompactionError::ArchiveMissing { key }),
            None => Ok(None),
        }
    }

    /// `data` with each placeholder a clearing wrote replaced by its original, from that
    /// clearing's archive (among `heads`) while it is stored: a later summary archived the
    /// placeholder, and recall follows it to the body.
    fn resolved(
        &self,
        mut data: ArchiveData,
        heads: &[ArchiveHead],
    ) -> Result<ArchiveData, StorageError> {
        for head in heads {
            let named = placeholder_naming(&head.key);
            let names = |json: &str| json.contains_text(CLEARED_MARK) && json.contains_text(&named);
            let named_here = data.execution_log.iter().any(|e| names(e.json()))
                || data.tool_activity_log.iter().any(|e| names(e.json()));
            if !named_here {
                continue;
            }
            if let Some(clearing) = self.read_stored(&head.key)? {
                clearing.restore_into(&mut data.execution_log, &mut data.tool_activity_log);
            }
        }
        Ok(data)
    }

    /// The facts the earlier summaries in `selection` had to keep and their index lines, read
    /// from their archives; an archive that is gone or unreadable carries none.
    pub fn carried(&self, selection: &Selection<'_>) -> Carried {
        let mut carried = Carried::default();
        for (_, entry) in &selection.reasoning {
            let Some(key) = parse_summary_source(entry) else {
                continue;
            };
            if !self.owns(key) {
                continue;
            }
            if let Ok(Some(archive)) = self.read_stored(key) {
                carried.facts.extend(archive.ledger.unwrap_or_default());
                let index = archive.index.unwrap_or_default();
                carried
                    .index
                    .extend(index.into_iter().map(|line| line.in_archive(key)));
            }
        }
        carried
    }

    /// Puts the originals of the archive under `key` back in place of the summary that
    /// replaced them (entries appended since stay), and the app's own records of them where the
    /// archive keeps any (`store::originals`), then removes the archive once the logs read back
    /// as written: it is the only other copy. The caller holds the store lock.
    pub fn put_back(&self, key: &str) -> Result<(), CompactionError> {
        let mut archive = self.read(key)?;
        let originals = archive.originals.take();
        let last = archive.iterations.iter().copied().max().unwrap_or(0);
        let now = self.logs.read()?;
        let refused = |conflict| CompactionError::NotAllowed(Refusal::Conflict(conflict));
        let restored = if archive.rung() == Rung::Clear {
            let mut live = now.parsed.clone();
            match archive.restore_into(&mut live.execution, &mut live.tool_activity) {
                0 => return Err(refused(Conflict::PlaceholdersGone)),
                _ => live,
            }
        } else {
            let positions = archive.positions.as_ref();
            restore(&now.parsed, &archive.data.into(), positions, last).map_err(refused)?
        };
        let restored = RawLogs::encode_changed(&restored, &now.parsed, &now.raw);
        if let Err(err) = self.logs.write_changed(&restored, &now.raw) {
            let _ = self.logs.write_changed(&now.raw, &restored);
            return Err(err.into());
        }
        if self.logs.raw_logs()? != restored {
            return Err(CompactionError::Busy(BusyReason::LogsChangedDuringRollback));
        }
        if let Some(originals) = originals {
            self.logs.set_originals(originals.get())?;
        }
        Ok(self.remove(key)?)
    }
}
