//! The archive shelf: the archives of one `LogStore` as a page reaches them, and the one place
//! every `Compactor` and `Archives` over those logs goes through — the logs themselves, the
//! archive store and the move into it, the store lock hold that brings it up to date, the
//! cross-tab lease, commit, read, delete, purge, rollback, and the settling of an interrupted
//! compaction. Every read refreshes first ([`Shelf::refreshed`]). Whether a compaction runs in
//! this page is the logs' [`PageState`], which every shelf over them consults: a second object
//! in the page cannot delete or roll back the archive a running compaction is writing.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;

use crate::core::error::{CompactionError, StorageError};
use crate::core::json::write::ToJson;
use crate::core::model::outcome::CompactionResult;
use crate::core::model::reasons::BusyReason;
use crate::core::model::settings::CompactorSettings;
use crate::core::ports::archive_store::{ArchiveStore, StorageEstimate, PRESSURE_SHARE};
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::ports::store_lock::{LockHeld, StoreLock, Unshared};
use crate::core::ports::timer::{Timer, SLICE_MS};
use crate::core::store::archive_digests::{ArchiveDigest, ArchiveDigests};
use crate::core::store::archives::StoredArchives;
use crate::core::store::journal::{Journal, Recovered};
use crate::core::store::keys::StorageKeys;
use crate::core::store::lease::LeaseHolder;
use crate::core::store::log_store::LogStore;
use crate::core::store::migration::{migrate, waiting};
use crate::core::store::page::{busy_in_page, PageBusy, PageState};
use crate::core::store::recall_tool::{RecallArgs, RecallQuery};

/// A write of the logs under the journal, with the archives as last refreshed.
pub type JournalWrite<'a, S, C> = dyn Fn(&Journal<'_, S, C>, &StoredArchives<'_, S, C>) -> Result<CompactionResult, CompactionError>
    + 'a;

/// The archives of one `LogStore` under one archive prefix, as this page reaches them.
pub struct Shelf<S, C> {
    /// The logs the archives are of.
    logs: Rc<RefCell<LogStore<S, C>>>,
    /// The logs' keys with the archive prefix.
    keys: StorageKeys,
    /// Where the archives are when not in the logs' own store (IndexedDB in the browser).
    archive_store: Option<Rc<dyn ArchiveStore>>,
    /// Whether the archives the logs' own store held have moved into the archive store.
    migrated: Cell<bool>,
    /// Taken for every write, so that tabs sharing the store do not lose each other's.
    lock: Rc<dyn StoreLock>,
    /// This page's side of the cross-tab lease.
    lease: LeaseHolder,
    /// Whether a compaction over these logs runs in this page.
    page: Rc<PageState>,
    /// What each archive read so far says of itself.
    digests: ArchiveDigests,
}

/// The gap (ms) before each archive [`Shelf::digest_while_idle`] reads: one archive's digest is
/// a read, a decompression and a parse (20–40 ms at 200 iterations, in three tasks), so a page
/// that opens over many archives gives the app most of its time while they are read.
pub const IDLE_GAP_MS: u32 = 100;

/// How many rounds of fetches a read may take: a chain of summaries `recall` follows fetches
/// one archive a round (see `MAX_SUMMARY_CHAIN`).
const MAX_FETCH_ROUNDS: usize = 72;

/// After how many rounds of one archive each a read has every archive fetched at once.
const EACH_AT_ONCE_AFTER: usize = 8;

impl<S: KeyValueStore, C: Clock> Shelf<S, C> {
    /// The shelf of `logs` for a compactor with `settings` (its archive prefix): archives
    /// beside the logs, no other writer, the lease name `"compactor"`.
    pub fn new(logs: Rc<RefCell<LogStore<S, C>>>, settings: &CompactorSettings) -> Self {
        let (keys, page) = {
            let logs = logs.borrow();
            (logs.keys().for_settings(settings), Rc::clone(logs.page()))
        };
        Self {
            logs,
            keys,
            archive_store: None,
            migrated: Cell::new(false),
            lock: Rc::new(Unshared),
            lease: LeaseHolder::new(String::from("compactor")),
            page,
            digests: ArchiveDigests::default(),
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
        self.lease = LeaseHolder::new(owner.into());
        self
    }

    /// The logs the archives are of.
    pub fn logs(&self) -> &Rc<RefCell<LogStore<S, C>>> {
        &self.logs
    }

    /// The logs' keys with this shelf's archive prefix.
    pub fn keys(&self) -> &StorageKeys {
        &self.keys
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

    /// Runs `read` over the archives as last refreshed; the logs are borrowed for `read` alone
    /// (never across an await). A read the app asks for goes through [`Shelf::refreshed`].
    pub fn with_archives<T>(&self, read: impl FnOnce(&StoredArchives<'_, S, C>) -> T) -> T {
        read(&self.stored(&self.logs.borrow()))
    }

    /// The archives of `logs` (these logs, borrowed) as last refreshed: one body for every
    /// read (each read's closure would otherwise carry its own copy into the download).
    #[inline(never)]
    fn stored<'a>(&'a self, logs: &'a LogStore<S, C>) -> StoredArchives<'a, S, C> {
        match &self.archive_store {
            Some(store) => StoredArchives::new(logs, &self.keys, store.as_ref(), &self.digests)
                .with_digests_read_ahead(),
            None => StoredArchives::new(logs, &self.keys, logs.store(), &self.digests),
        }
    }

    /// Runs `work` over the archives as last refreshed, fetching the texts it reads that the
    /// archive store's copy does not hold and running it again, until it reads none it lacks.
    /// `work` reads before it writes: a run that lacked a text has written nothing.
    pub async fn fetching<T, E: From<StorageError>>(
        &self,
        mut work: impl FnMut(&StoredArchives<'_, S, C>) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut done = None;
        self.fetch_for(&mut |archives| done = Some(work(archives)))
            .await?;
        done.unwrap_or_else(|| {
            Err(StorageError::Unavailable {
                reason: String::from("the archives were never read"),
            }
            .into())
        })
    }

    /// [`Shelf::fetching`] for every result type: one body for all of them.
    async fn fetch_for(
        &self,
        work: &mut dyn FnMut(&StoredArchives<'_, S, C>),
    ) -> Result<(), StorageError> {
        let Some(store) = &self.archive_store else {
            self.with_archives(work);
            return Ok(());
        };
        for round in 0..MAX_FETCH_ROUNDS {
            self.with_archives(&mut *work);
            let mut wanted = store.take_unfetched();
            if wanted.is_empty() {
                return Ok(());
            }
            // A read that goes through the archives one by one (a search, a recall following
            // placeholders) would take a round each: past a few, every archive comes at once.
            if round == EACH_AT_ONCE_AFTER {
                wanted = store.keys()?;
            }
            store.fetch(wanted).await?;
        }
        Err(StorageError::Unavailable {
            reason: format!(
                "the archives read kept naming others after {MAX_FETCH_ROUNDS} fetches"
            ),
        })
    }

    /// Lets go of every text but those of the archives the live summaries name, which a
    /// compaction reads for the facts they carry (a read the app makes meanwhile keeps them);
    /// their keys. What every hold (which fetches them) and refresh ends with.
    fn release_unnamed(&self, store: &dyn ArchiveStore) -> Result<Vec<String>, StorageError> {
        store.take_unfetched();
        let named = self.with_archives(|a| a.named())?;
        store.release(&named);
        Ok(named)
    }

    /// Reads the digest of every archive not read yet, while this page runs no compaction
    /// ([`IDLE_GAP_MS`] apart, none once a compaction, a rollback or an archive read the app
    /// asks for begins in the page, over these logs or others: the next compaction's end
    /// starts the pass again, and the app's read reads the digests it needs). A compaction
    /// over archives kept from earlier sessions then reads none of their texts to choose what
    /// expired. Of two passes, one ends at the first archive the other read; a pass ends at an
    /// archive that does not read (a read the app asks for reads it, and says why).
    pub fn digest_while_idle<'a>(
        &'a self,
        timer: &'a dyn Timer,
    ) -> impl Future<Output = Result<(), StorageError>> + 'a {
        self.read_digests(Some(timer))
    }

    /// Reads the digest of every archive not read yet, one at a time (each in a task of its
    /// own), from the store itself: the copy a compaction reads is left as it is. `idle`: as
    /// [`Shelf::digest_while_idle`]; else at once, for a read the app asks for.
    async fn read_digests(&self, idle: Option<&dyn Timer>) -> Result<(), StorageError> {
        let Some(store) = &self.archive_store else {
            return Ok(());
        };
        // A digest read meanwhile was read by a read the app asked for, which read them all,
        // or by another pass, which goes on.
        let stop =
            |key: &str| idle.is_some() && (busy_in_page() || self.digests.get(key).is_some());
        for key in self.with_archives(|a| a.undigested())? {
            if let Some(timer) = idle {
                timer.sleep(IDLE_GAP_MS).await;
            }
            if stop(&key) {
                break;
            }
            let read = store.read_committed(&key).await;
            if let Some(timer) = idle {
                // The parse in a task of its own: the copy of a text of 2.4 M characters into
                // the module and its parse were a task of 61 ms.
                timer.sleep(0).await;
            }
            if stop(&key) {
                break;
            }
            if let (Some(text), None) = (read?, self.digests.get(&key)) {
                self.digests.insert(Rc::new(ArchiveDigest::of(&key, &text)));
            }
        }
        Ok(())
    }

    /// Takes the store lock alone.
    pub async fn acquire(&self) -> Result<LockHeld, StorageError> {
        self.lock.acquire().await
    }

    /// Takes the store lock and brings the archives up to date, moving any the logs' own store
    /// still holds into the archive store: what every hold starts with.
    pub async fn hold(&self) -> Result<LockHeld, StorageError> {
        let held = self.lock.acquire().await?;
        if let Some(store) = &self.archive_store {
            store.refresh().await?;
            if !self.migrated.get() {
                migrate(&self.logs, store.as_ref(), &self.keys).await?;
                self.migrated.set(true);
            }
            // No other archive's text is read: a compaction's eviction passes over the
            // archives whose digests were not read yet (`digest_while_idle` reads them).
            let named = self.release_unnamed(store.as_ref())?;
            store.fetch(named).await?;
        }
        Ok(held)
    }

    /// The archives brought up to date with every tab's commits, moving any the logs' own
    /// store still holds (under the store lock only when there are some), with the digest of
    /// every archive read where `read_digests` (what every read the app asks for starts with;
    /// a read of the keys alone, the lost archives, reads none).
    pub async fn refreshed(&self, read_digests: bool) -> Result<Refreshed<'_, S, C>, StorageError> {
        let Some(store) = &self.archive_store else {
            return Ok(Refreshed(self));
        };
        if !self.migrated.get() {
            if waiting(&self.logs.borrow(), &self.keys)?.is_empty() {
                self.migrated.set(true);
            } else {
                drop(self.hold().await?);
            }
        }
        store.refresh().await?;
        if read_digests {
            // A pass of the idle page meeting it ends: this read reads what it needs.
            let _busy = PageBusy::mark();
            self.read_digests(None).await?;
            self.release_unnamed(store.as_ref())?;
        }
        Ok(Refreshed(self))
    }

    /// Makes the archive writes since the last commit durable (all or none).
    pub async fn commit(&self) -> Result<(), StorageError> {
        match &self.archive_store {
            Some(store) => store.commit().await,
            None => Ok(()),
        }
    }

    /// Whether a compaction of another tab holds the lease now.
    pub fn compacting_elsewhere(&self) -> Result<bool, StorageError> {
        self.lease.held_elsewhere(&self.logs.borrow())
    }

    /// Takes the lease for a compaction run with `settings`; `busy` while another tab holds it.
    pub fn take_lease(&self, settings: &CompactorSettings) -> Result<(), CompactionError> {
        self.lease.take(&self.logs.borrow(), settings)
    }

    /// Extends the lease while a compaction makes progress (at most once a second).
    pub fn renew_lease(&self) {
        self.lease.renew(&self.logs.borrow());
    }

    /// Gives the lease back, if it is still this page's.
    pub fn release_lease(&self) {
        self.lease.release(&self.logs.borrow());
    }

    /// `busy` with `reason` while a compaction runs in this page or in another tab.
    pub fn refuse_while_compacting(&self, reason: BusyReason) -> Result<(), CompactionError> {
        if self.page.compacting() || self.compacting_elsewhere()? {
            return Err(CompactionError::Busy(reason));
        }
        Ok(())
    }

    /// Whether [`Shelf::delete`] is refused now; a caller checks it as the app calls (from a
    /// `compaction_archived` listener, say), before the archive store answers.
    pub fn may_delete(&self) -> Result<(), CompactionError> {
        self.refuse_while_compacting(BusyReason::DeleteWhileCompacting)
    }

    /// Whether [`Shelf::rollback`] is refused now, checked as the app calls (as for a delete).
    pub fn may_roll_back(&self) -> Result<(), CompactionError> {
        self.refuse_while_compacting(BusyReason::RollbackWhileCompacting)
    }

    /// Removes one archive; refused while a compaction runs here or in another tab (its
    /// archive may be the only copy of the originals until the swap is done).
    pub async fn delete(&self, key: &str) -> Result<(), CompactionError> {
        self.refreshed(true).await?;
        self.may_delete()?;
        self.fetching(|a| a.delete(key)).await?;
        Ok(self.commit().await?)
    }

    /// Where the origin the archive store shares is at least [`PRESSURE_SHARE`] full: purges
    /// the expired archives (never another) and gives the figures after them, with the keys
    /// purged; `None` below that share, without an archive store, or where the browser says
    /// nothing.
    pub async fn relieve(&self) -> Result<Option<(StorageEstimate, Vec<String>)>, CompactionError> {
        let Some(store) = &self.archive_store else {
            return Ok(None);
        };
        let pressed = |e: &StorageEstimate| e.share() >= PRESSURE_SHARE;
        let Some(before) = store.estimate().await.filter(pressed) else {
            return Ok(None);
        };
        let purged = self.purge_expired().await?;
        Ok(Some((store.estimate().await.unwrap_or(before), purged)))
    }

    /// Removes the expired archives; how many went.
    pub async fn purge(&self) -> Result<usize, CompactionError> {
        Ok(self.purge_expired().await?.len())
    }

    /// Removes the expired archives; their keys.
    async fn purge_expired(&self) -> Result<Vec<String>, CompactionError> {
        self.refreshed(true).await?;
        let purged = self.with_archives(|a| a.enforce_limit(usize::MAX, None))?;
        if !purged.is_empty() {
            self.commit().await?;
        }
        Ok(purged)
    }

    /// Puts an archive's originals back in place of the summary that replaced them; entries
    /// appended since stay, and the archive goes once its entries are live again. Refused
    /// `busy` while a compaction runs in this page or in another tab, before any wait for the
    /// store lock; `started` runs once the rollback holds the page and the lock.
    pub async fn rollback(&self, key: &str, started: impl FnOnce()) -> Result<(), CompactionError> {
        let busy = || CompactionError::Busy(BusyReason::RollbackWhileCompacting);
        self.may_roll_back()?;
        let claim = self.page.claim().ok_or_else(busy)?;
        let held = self.hold().await?;
        if self.compacting_elsewhere()? {
            return Err(busy());
        }
        started();
        let outcome = self.fetching(|a| a.put_back(key)).await;
        // The originals are live again: an archive the store fails to forget stays listed.
        if outcome.is_ok() {
            let _ = self.commit().await;
        }
        drop(held);
        drop(claim);
        outcome
    }

    /// The key and timestamp the next archive takes (the caller holds the store lock).
    pub fn next_key(&self) -> Result<(String, u64), StorageError> {
        self.with_archives(|archives| archives.next_key())
    }

    /// An archive (journal steps 1 and 2, see [`Journal::archive`]) under `key`, from
    /// [`Shelf::next_key`], durable in the archive store before any log changes; a store that
    /// refuses it (full, or blocked by another tab) leaves nothing behind. A clearing's
    /// (`clearing`) needs no room for the journal.
    pub async fn archive(
        &self,
        key: &str,
        archive: &dyn ToJson,
        clearing: bool,
    ) -> Result<(), CompactionError> {
        self.with_journal(|journal, a| journal.archive(a, key, archive, clearing))?;
        if let Err(err) = self.commit().await {
            self.with_journal(|journal, a| journal.abandon(a, key));
            return Err(err.into());
        }
        Ok(())
    }

    /// The logs `write` changes under the journal ([`Journal::swap_in`], [`Journal::clear_in`]),
    /// then the expired archives removed and, in the logs' own store (localStorage, 5 MB for
    /// the whole origin), those beyond `max_archives` (a failure leaves one too many, never a
    /// loss); an archive store keeps every archive until it expires, so that `recall` answers
    /// for every compacted iteration. The archive store commits what changed.
    pub async fn swap_in(
        &self,
        max_archives: usize,
        write: &JournalWrite<'_, S, C>,
    ) -> Result<CompactionResult, CompactionError> {
        let (swapped, removed) = self.with_journal(|journal, archives| {
            let swapped = write(journal, archives);
            let removed = match &swapped {
                Ok(result) => {
                    let limit = match self.archive_store {
                        Some(_) => usize::MAX,
                        None => max_archives,
                    };
                    archives.enforce_limit(limit, Some(&result.archive_key))
                }
                // The swap was undone and its archive removed.
                Err(_) => Ok(Vec::new()),
            };
            (swapped, removed)
        });
        if swapped.is_err() || removed.is_ok_and(|keys| !keys.is_empty()) {
            let _ = self.commit().await;
        }
        swapped
    }

    /// Settles a journal an interrupted compaction left: finishes or undoes it. The caller
    /// holds the store lock and has checked the lease. An archive it removes and the store
    /// fails to forget stays listed: one too many, never a loss.
    pub async fn settle(&self) -> Result<Option<Recovered>, CompactionError> {
        let settled = self
            .fetching(|archives| Journal::of(&self.logs.borrow()).settle(archives))
            .await?;
        if settled.is_some() {
            let _ = self.commit().await;
        }
        Ok(settled)
    }

    /// Runs `work` with the logs' journal and the archives as last refreshed.
    fn with_journal<T>(
        &self,
        work: impl FnOnce(&Journal<'_, S, C>, &StoredArchives<'_, S, C>) -> T,
    ) -> T {
        self.with_archives(|archives| work(&Journal::of(&self.logs.borrow()), archives))
    }
}

/// The archives as [`Shelf::refreshed`] brought them up to date: the reads the app asks for.
pub struct Refreshed<'a, S, C>(&'a Shelf<S, C>);

impl<S, C> std::fmt::Debug for Refreshed<'_, S, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Refreshed")
    }
}

impl<S: KeyValueStore, C: Clock> Refreshed<'_, S, C> {
    /// Runs `read` over the archives brought up to date (list, read, recall, the recall tool's
    /// answer, rehydrate, the lost ones), fetching the texts it reads ([`Shelf::fetching`]).
    pub async fn with<T, E: From<StorageError>>(
        &self,
        read: impl FnMut(&StoredArchives<'_, S, C>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.0.fetching(read).await
    }

    /// The recall tool's answer to `args` within `max_tokens`, its search of the archives in
    /// steps of about [`SLICE_MS`] with a break for the page (`timer`) between two: a query
    /// over hundreds of archives is many short tasks, not one long one.
    pub async fn recall_text(
        &self,
        args: &RecallArgs,
        max_tokens: usize,
        timer: &dyn Timer,
    ) -> Result<String, StorageError> {
        let unit = self.0.logs.borrow().unit();
        let query = match RecallQuery::read(args, unit, max_tokens) {
            Ok(query) => query,
            Err(sentence) => return Ok(sentence),
        };
        let mut search = query.search();
        while !search.take(self.with(|a| a.search_step(&search, SLICE_MS)).await?) {
            timer.sleep(0).await;
        }
        self.with(|a| a.recall_answer(&query, &search, max_tokens))
            .await
    }
}
