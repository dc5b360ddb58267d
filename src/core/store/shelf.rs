//! The archive shelf: where the archives of one `LogStore` are kept in a page, and the one
//! place every `Compactor` and `Archives` over those logs goes through to reach them — the
//! archive store and the move into it, the store lock hold that brings it up to date, commit,
//! read, delete, purge, rollback, and the settling of an interrupted compaction. Whether a
//! compaction runs in this page is the logs' [`PageState`], which every shelf over them
//! consults: a second object in the page cannot delete or roll back the archive a running
//! compaction is writing.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::core::error::{CompactionError, StorageError};
use crate::core::model::outcome::CompactionResult;
use crate::core::model::reasons::BusyReason;
use crate::core::ports::archive_store::ArchiveStore;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::ports::store_lock::{LockHeld, StoreLock, Unshared};
use crate::core::store::archives::Archives;
use crate::core::store::journal::{Commit, Journal, Recovered};
use crate::core::store::keys::StorageKeys;
use crate::core::store::lease::held_by_other;
use crate::core::store::log_store::LogStore;
use crate::core::store::migration::{migrate, waiting};
use crate::core::store::page::PageState;
use crate::core::store::raw_logs::ReadLogs;

/// What [`Shelf::swap_in`] swaps: the logs as read before, the commit, its archive's key.
pub struct Swap<'a> {
    /// The logs as the compaction read them.
    pub before: &'a ReadLogs,
    /// The summary and what it replaces.
    pub commit: &'a Commit<'a>,
    /// The archive holding the originals.
    pub key: &'a str,
    /// Archives kept at most in the logs' own store.
    pub max_archives: usize,
}

/// The archives of one `LogStore` under one archive prefix, as this page reaches them.
#[derive(Clone)]
pub struct Shelf {
    /// The logs' keys with the archive prefix.
    keys: StorageKeys,
    /// Where the archives are when not in the logs' own store (IndexedDB in the browser).
    archive_store: Option<Rc<dyn ArchiveStore>>,
    /// Whether the archives the logs' own store held have moved into the archive store.
    migrated: Cell<bool>,
    /// Taken for every write, so that tabs sharing the store do not lose each other's.
    lock: Rc<dyn StoreLock>,
    /// This page's name in the cross-tab lease.
    owner: String,
    /// Whether a compaction over these logs runs in this page.
    page: Rc<PageState>,
}

impl Shelf {
    /// The shelf of the logs whose page state is `page`, under `keys`: archives beside the
    /// logs, no other writer, the lease name `"compactor"`.
    pub fn new(page: Rc<PageState>, keys: StorageKeys) -> Self {
        Self {
            keys,
            archive_store: None,
            migrated: Cell::new(false),
            lock: Rc::new(Unshared),
            owner: String::from("compactor"),
            page,
        }
    }

    /// Takes `lock` before every write (the browser's lock across tabs).
    pub fn with_lock(mut self, lock: Rc<dyn StoreLock>) -> Self {
        self.lock = lock;
        self
    }

    /// Keeps the archives in `store` instead of the logs' own store. The journal stays with
    /// the logs and names each archive before it is written, so a compaction is undone or
    /// finished across the two stores as in one.
    pub fn with_archive_store(mut self, store: Rc<dyn ArchiveStore>) -> Self {
        self.archive_store = Some(store);
        self.migrated.set(false);
        self
    }

    /// Names this page in the cross-tab lease; every tab needs its own name.
    pub fn with_owner(mut self, owner: impl Into<String>) -> Self {
        self.owner = owner.into();
        self
    }

    /// The logs' keys with this shelf's archive prefix.
    pub fn keys(&self) -> &StorageKeys {
        &self.keys
    }

    /// This page's name in the cross-tab lease.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Whether a compaction over these logs runs in this page, and holds them frozen.
    pub fn page(&self) -> &Rc<PageState> {
        &self.page
    }

    /// Whether the archives are in an archive store of their own (IndexedDB in the browser)
    /// rather than beside the logs.
    pub fn has_archive_store(&self) -> bool {
        self.archive_store.is_some()
    }

    /// The store the archives are in: the archive store given, else the logs' own.
    fn store<'a, S: KeyValueStore, C: Clock>(
        &'a self,
        logs: &'a LogStore<S, C>,
    ) -> &'a dyn KeyValueStore {
        match &self.archive_store {
            Some(store) => store.as_ref(),
            None => logs.store(),
        }
    }

    /// The archives of `logs` as last refreshed.
    pub fn archives<'a, S: KeyValueStore, C: Clock>(
        &'a self,
        logs: &'a LogStore<S, C>,
    ) -> Archives<'a, S, C> {
        Archives::new(logs, &self.keys, self.store(logs))
    }

    /// Runs `read` over the archives of `logs` as last refreshed (list, read, recall); the logs
    /// are borrowed for `read` alone (never across an await).
    pub fn with_archives<S: KeyValueStore, C: Clock, T>(
        &self,
        logs: &RefCell<LogStore<S, C>>,
        read: impl FnOnce(&Archives<'_, S, C>) -> T,
    ) -> T {
        read(&self.archives(&logs.borrow()))
    }

    /// Takes the store lock alone.
    pub async fn acquire(&self) -> Result<LockHeld, StorageError> {
        self.lock.acquire().await
    }

    /// Takes the store lock and brings the archives up to date, moving any the logs' own store
    /// still holds into the archive store: what every hold starts with.
    pub async fn hold<S: KeyValueStore, C: Clock>(
        &self,
        logs: &RefCell<LogStore<S, C>>,
    ) -> Result<LockHeld, StorageError> {
        let held = self.lock.acquire().await?;
        if let Some(store) = &self.archive_store {
            store.refresh().await?;
            if !self.migrated.get() {
                migrate(logs, store.as_ref(), &self.keys).await?;
                self.migrated.set(true);
            }
        }
        Ok(held)
    }

    /// Brings the archives up to date with every tab's commits, moving any the logs' own store
    /// still holds (under the store lock only when there are some): what a read awaits first.
    pub async fn refresh<S: KeyValueStore, C: Clock>(
        &self,
        logs: &RefCell<LogStore<S, C>>,
    ) -> Result<(), StorageError> {
        let Some(store) = &self.archive_store else {
            return Ok(());
        };
        if !self.migrated.get() {
            if waiting(&logs.borrow(), &self.keys)?.is_empty() {
                self.migrated.set(true);
            } else {
                drop(self.hold(logs).await?);
            }
        }
        store.refresh().await
    }

    /// Makes the archive writes since the last commit durable (all or none).
    pub async fn commit(&self) -> Result<(), StorageError> {
        match &self.archive_store {
            Some(store) => store.commit().await,
            None => Ok(()),
        }
    }

    /// Whether a compaction of another tab holds the lease now.
    pub fn compacting_elsewhere<S: KeyValueStore, C: Clock>(
        &self,
        logs: &LogStore<S, C>,
    ) -> Result<bool, StorageError> {
        held_by_other(logs, &self.owner)
    }

    /// `busy` with `reason` while a compaction runs in this page or in another tab.
    pub fn refuse_while_compacting<S: KeyValueStore, C: Clock>(
        &self,
        logs: &LogStore<S, C>,
        reason: BusyReason,
    ) -> Result<(), CompactionError> {
        if self.page.compacting() || self.compacting_elsewhere(logs)? {
            return Err(CompactionError::Busy(reason));
        }
        Ok(())
    }

    /// Whether [`Shelf::delete`] is refused now; a caller checks it as the app calls (from a
    /// `compaction_archived` listener, say), before the archive store answers.
    pub fn may_delete<S: KeyValueStore, C: Clock>(
        &self,
        logs: &LogStore<S, C>,
    ) -> Result<(), CompactionError> {
        self.refuse_while_compacting(logs, BusyReason::DeleteWhileCompacting)
    }

    /// Whether [`Shelf::rollback`] is refused now, checked as the app calls (as for a delete).
    pub fn may_roll_back<S: KeyValueStore, C: Clock>(
        &self,
        logs: &LogStore<S, C>,
    ) -> Result<(), CompactionError> {
        self.refuse_while_compacting(logs, BusyReason::RollbackWhileCompacting)
    }

    /// Removes one archive; refused while a compaction runs here or in another tab (its
    /// archive may be the only copy of the originals until the swap is done).
    pub async fn delete<S: KeyValueStore, C: Clock>(
        &self,
        logs: &RefCell<LogStore<S, C>>,
        key: &str,
    ) -> Result<(), CompactionError> {
        self.refresh(logs).await?;
        self.may_delete(&logs.borrow())?;
        self.with_archives(logs, |a| a.delete(key))?;
        Ok(self.commit().await?)
    }

    /// Removes the expired archives; how many went.
    pub async fn purge<S: KeyValueStore, C: Clock>(
        &self,
        logs: &RefCell<LogStore<S, C>>,
    ) -> Result<usize, CompactionError> {
        self.refresh(logs).await?;
        let purged = self.with_archives(logs, |a| a.purge())?;
        if purged > 0 {
            self.commit().await?;
        }
        Ok(purged)
    }

    /// Puts an archive's originals back in place of the summary that replaced them; entries
    /// appended since stay, and the archive goes once its entries are live again. Refused
    /// `busy` while a compaction runs in this page or in another tab, before any wait for the
    /// store lock; `started` runs once the rollback holds the page and the lock.
    pub async fn rollback<S: KeyValueStore, C: Clock>(
        &self,
        logs: &RefCell<LogStore<S, C>>,
        key: &str,
        started: impl FnOnce(),
    ) -> Result<(), CompactionError> {
        let busy = || CompactionError::Busy(BusyReason::RollbackWhileCompacting);
        self.may_roll_back(&logs.borrow())?;
        let claim = self.page.claim().ok_or_else(busy)?;
        let held = self.hold(logs).await?;
        if self.compacting_elsewhere(&logs.borrow())? {
            return Err(busy());
        }
        started();
        let outcome = self.with_archives(logs, |a| a.put_back(key));
        // The originals are live again: an archive the store fails to forget stays listed.
        if outcome.is_ok() {
            let _ = self.commit().await;
        }
        drop(held);
        drop(claim);
        outcome
    }

    /// A compaction's archive (journal steps 1 and 2, see [`Journal::archive`]), durable in the
    /// archive store before any log changes; a store that refuses it (full, or blocked by
    /// another tab) leaves nothing behind. Its key and timestamp.
    pub async fn archive<S: KeyValueStore, C: Clock>(
        &self,
        logs: &RefCell<LogStore<S, C>>,
        commit: &Commit<'_>,
    ) -> Result<(String, u64), CompactionError> {
        let (key, timestamp) = {
            let logs = logs.borrow();
            Journal::of(&logs).archive(&self.archives(&logs), commit)?
        };
        if let Err(err) = self.commit().await {
            let logs = logs.borrow();
            Journal::of(&logs).abandon(&self.archives(&logs), &key);
            return Err(err.into());
        }
        Ok((key, timestamp))
    }

    /// The summary swapped in for the archived entries (see [`Journal::swap_in`]), then the
    /// expired archives removed and, in the logs' own store (localStorage, 5 MB for the whole
    /// origin), those beyond `max_archives` (a failure leaves one too many, never a loss); an
    /// archive store keeps every archive until it expires, so that `recall` answers for every
    /// compacted iteration. The archive store commits what changed.
    pub async fn swap_in<S: KeyValueStore, C: Clock>(
        &self,
        logs: &RefCell<LogStore<S, C>>,
        swap: Swap<'_>,
        result: impl FnOnce(usize) -> CompactionResult,
    ) -> Result<CompactionResult, CompactionError> {
        let (swapped, removed) = {
            let logs = logs.borrow();
            let archives = self.archives(&logs);
            let swapped =
                Journal::of(&logs).swap_in(&archives, swap.before, swap.commit, swap.key, result);
            let removed = match &swapped {
                Ok(result) => {
                    let limit = match self.archive_store {
                        Some(_) => usize::MAX,
                        None => swap.max_archives,
                    };
                    archives.enforce_limit(limit, Some(&result.archive_key))
                }
                // The swap was undone and its archive removed.
                Err(_) => Ok(Vec::new()),
            };
            (swapped, removed)
        };
        if swapped.is_err() || removed.is_ok_and(|keys| !keys.is_empty()) {
            let _ = self.commit().await;
        }
        swapped
    }

    /// Settles a journal an interrupted compaction left: finishes or undoes it. The caller
    /// holds the store lock and has checked the lease. An archive it removes and the store
    /// fails to forget stays listed: one too many, never a loss.
    pub async fn settle<S: KeyValueStore, C: Clock>(
        &self,
        logs: &RefCell<LogStore<S, C>>,
    ) -> Result<Option<Recovered>, CompactionError> {
        let settled = {
            let logs = logs.borrow();
            Journal::of(&logs).settle(&self.archives(&logs))?
        };
        if settled.is_some() {
            let _ = self.commit().await;
        }
        Ok(settled)
    }
}
