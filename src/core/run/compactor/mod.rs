//! The orchestrator: one compaction, step by step, in the order of the API — and rollback.
//! It calls the steps and the store's protocols and never touches a storage key itself.

mod compaction;
mod recovery;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::core::error::StorageError;
use crate::core::model::facts::Ledger;
use crate::core::model::outcome::CompactionPlan;
use crate::core::model::phase::Phase;
use crate::core::model::reasons::Refusal;
use crate::core::model::settings::{CompactorSettings, SettingsError, Trigger};
use crate::core::ports::archive_store::ArchiveStore;
use crate::core::ports::cancel::Cancel;
use crate::core::ports::clock::Clock;
use crate::core::ports::events::{EventSink, Reporter};
use crate::core::ports::storage::KeyValueStore;
use crate::core::ports::store_lock::{LockHeld, StoreLock, Unshared};
use crate::core::ports::timer::Timer;
use crate::core::ports::usage::{PromptUsage, UsageMeasure};
use crate::core::providers::attempts::Attempts;
use crate::core::providers::port::SummaryProvider;
use crate::core::steps::digest::Digest;
use crate::core::steps::rules::{refusal, AutoGuard};
use crate::core::steps::selection::Selection;
use crate::core::store::archives::Archives;
use crate::core::store::keys::StorageKeys;
use crate::core::store::lease::LeaseHolder;
use crate::core::store::log_store::LogStore;
use crate::core::store::metrics::{CompactionMetrics, Metrics};
use crate::core::store::migration::{migrate, waiting};
use crate::core::store::view::{LogView, Observed};

/// Compacts the logs of one [`LogStore`] with one provider.
pub struct Compactor<S, C> {
    logs: Rc<RefCell<LogStore<S, C>>>,
    provider: Box<dyn SummaryProvider>,
    timer: Box<dyn Timer>,
    events: Reporter,
    settings: CompactorSettings,
    /// The logs' keys with this compactor's archive prefix and metrics key.
    keys: StorageKeys,
    /// This compactor's side of the cross-tab lease.
    lease: LeaseHolder,
    /// Taken for every write, so that tabs sharing the store do not lose each other's.
    lock: Box<dyn StoreLock>,
    /// Where the archives are when not in the logs' own store (IndexedDB in the browser).
    archive_store: Option<Rc<dyn ArchiveStore>>,
    /// Whether the archives the logs' own store held have moved into the archive store.
    migrated: Cell<bool>,
    /// The app's own measure of its prompt, and the size it last reported.
    usage: PromptUsage,
    busy: Rc<Cell<bool>>,
    frozen: Cell<bool>,
    guard: Cell<AutoGuard>,
    /// The cancellation of the running compaction, for [`Compactor::abort`].
    cancel: RefCell<Cancel>,
}

/// One compaction's state, passed along the run (never kept on the compactor).
struct Run {
    trigger: Trigger,
    cancel: Cancel,
    started_ms: f64,
    /// Progress reported so far (never goes down).
    percent: u8,
    /// The provider calls made, what they cost, who answered.
    attempts: Attempts,
    /// When the work since the last break of the page's task began (ms).
    working_since_ms: f64,
}

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// A compactor over `logs`; fails naming the first option out of range.
    pub fn new(
        logs: Rc<RefCell<LogStore<S, C>>>,
        provider: Box<dyn SummaryProvider>,
        timer: Box<dyn Timer>,
        events: Box<dyn EventSink>,
        settings: CompactorSettings,
    ) -> Result<Self, SettingsError> {
        settings.validate()?;
        let keys = logs.borrow().keys().for_settings(&settings);
        Ok(Self {
            logs,
            provider,
            timer,
            events: Reporter::new(events),
            lease: LeaseHolder::new(String::from("compactor"), &settings),
            settings,
            keys,
            lock: Box::new(Unshared),
            archive_store: None,
            migrated: Cell::new(false),
            usage: PromptUsage::default(),
            busy: Rc::new(Cell::new(false)),
            frozen: Cell::new(false),
            guard: Cell::new(AutoGuard::default()),
            cancel: RefCell::new(Cancel::default()),
        })
    }

    /// Takes `lock` before every write (the browser's lock across tabs); without it the store
    /// is taken to be this compactor's alone.
    pub fn with_lock(mut self, lock: Box<dyn StoreLock>) -> Self {
        self.lock = lock;
        self
    }

    /// Keeps the archives in `store` instead of the logs' own store. The journal stays with the
    /// logs and names each archive before it is written, so a compaction is undone or
    /// finished across the two stores as in one.
    pub fn with_archive_store(mut self, store: Rc<dyn ArchiveStore>) -> Self {
        self.archive_store = Some(store);
        self
    }

    /// Whether the archives are in an archive store of their own (IndexedDB in the browser)
    /// rather than beside the logs.
    pub fn has_archive_store(&self) -> bool {
        self.archive_store.is_some()
    }

    /// Names this instance in the cross-tab lease; every tab's compactor needs its own name.
    pub fn with_owner(mut self, owner: impl Into<String>) -> Self {
        self.lease = LeaseHolder::new(owner.into(), &self.settings);
        self
    }

    /// Measures usage with the app's own function instead of the package's count of the logs.
    pub fn with_usage_measure(mut self, measure: Box<dyn UsageMeasure>) -> Self {
        self.usage = PromptUsage::measured_by(measure);
        self
    }

    /// Records the tokens of the prompt the app last sent: usage until the next compaction.
    pub fn report_prompt_tokens(&self, tokens: usize) {
        self.usage.report(tokens);
    }

    /// The phase of the running (or last) compaction.
    pub fn phase(&self) -> Phase {
        self.events.phase()
    }

    /// Whether a compaction holds the logs frozen.
    pub fn frozen(&self) -> bool {
        self.frozen.get()
    }

    /// Whether a compaction or rollback is running.
    pub fn busy(&self) -> bool {
        self.busy.get()
    }

    /// The options in force.
    pub fn settings(&self) -> &CompactorSettings {
        &self.settings
    }

    /// The model the provider calls.
    pub fn model(&self) -> String {
        self.provider.model()
    }

    fn now(&self) -> f64 {
        self.logs.borrow().clock().now_ms()
    }

    /// The store the archives are in: the archive store given, else the logs' own.
    fn archive_store<'a>(&'a self, logs: &'a LogStore<S, C>) -> &'a dyn KeyValueStore {
        match &self.archive_store {
            Some(store) => store.as_ref(),
            None => logs.store(),
        }
    }

    /// The archives of `logs`.
    fn archives<'a>(&'a self, logs: &'a LogStore<S, C>) -> Archives<'a, S, C> {
        Archives::new(logs, &self.keys, self.archive_store(logs))
    }

    /// Brings the archive store's copy up to date with every tab's commits.
    async fn refresh_archives(&self) -> Result<(), StorageError> {
        match &self.archive_store {
            Some(store) => store.refresh().await,
            None => Ok(()),
        }
    }

    /// Takes the store lock and brings the archives up to date, moving any the logs' own store
    /// still holds into the archive store: what every hold starts with.
    async fn hold(&self) -> Result<LockHeld, StorageError> {
        let held = self.lock.acquire().await?;
        self.refresh_archives().await?;
        if let (Some(store), false) = (&self.archive_store, self.migrated.get()) {
            migrate(&self.logs, store.as_ref(), &self.keys).await?;
            self.migrated.set(true);
        }
        Ok(held)
    }

    /// Moves the archives the logs' own store holds into the archive store (under the store
    /// lock, once per compactor; without a lock hold when there are none).
    async fn ensure_migrated(&self) -> Result<(), StorageError> {
        if self.archive_store.is_none() || self.migrated.get() {
            return Ok(());
        }
        if waiting(&self.logs.borrow(), &self.keys)?.is_empty() {
            self.migrated.set(true);
            return Ok(());
        }
        drop(self.hold().await?);
        Ok(())
    }

    /// Makes the archive writes since the last commit durable (all or none).
    async fn commit_archives(&self) -> Result<(), StorageError> {
        match &self.archive_store {
            Some(store) => store.commit().await,
            None => Ok(()),
        }
    }

    /// The logs as this compactor sees them.
    fn view<'a>(&'a self, logs: &'a LogStore<S, C>) -> LogView<'a, S, C> {
        LogView {
            logs,
            keys: &self.keys,
            archives: self.archive_store(logs),
            settings: &self.settings,
            lease: &self.lease,
            usage: &self.usage,
        }
    }

    /// The logs as stored, placed and counted as the rules see them.
    fn observe(&self) -> Result<Observed, StorageError> {
        self.view(&self.logs.borrow()).observe(self.busy.get())
    }

    /// Share (0..1, can exceed 1) of the context window the logs and base tokens take.
    pub fn context_usage(&self) -> Result<f64, StorageError> {
        self.view(&self.logs.borrow()).context_usage()
    }

    /// Why a user-triggered compaction is not allowed now; `None` when it is.
    pub fn can_compact(&self) -> Result<Option<Refusal>, StorageError> {
        Ok(refusal(
            &self.settings,
            &self.observe()?.input,
            Trigger::User,
        ))
    }

    /// Whether usage reached `autoTriggerUsage` and an automatic compaction should start.
    pub fn should_auto_compact(&self) -> Result<bool, StorageError> {
        let input = self.observe()?.input;
        Ok(self.guard.get().should_auto_compact(&self.settings, &input))
    }

    /// The prompt `compact()` would send now.
    pub fn build_prompt(&self) -> Result<String, StorageError> {
        self.view(&self.logs.borrow()).prompt()
    }

    /// The facts the summary of `selection` must keep (see [`LogView::ledger_of`]).
    pub fn ledger_of(
        &self,
        selection: &Selection<'_>,
        digest: &Digest,
    ) -> Result<Ledger, StorageError> {
        self.view(&self.logs.borrow()).ledger_of(selection, digest)
    }

    /// What `compact()` would do now, without calling the provider (and why it would refuse).
    pub fn plan(&self) -> Result<CompactionPlan, StorageError> {
        self.view(&self.logs.borrow()).plan(self.busy.get())
    }

    /// Brings the archives up to date with every tab's commits (moving any the logs' own store
    /// still holds): what a read of the archive API awaits before [`Compactor::with_archives`].
    pub async fn refresh_archives_now(&self) -> Result<(), StorageError> {
        self.ensure_migrated().await?;
        self.refresh_archives().await
    }

    /// Runs `read` over the archives of these logs as last refreshed (list, read, recall: see
    /// [`Archives`]); removing them goes through [`Compactor::delete_archive`] and
    /// [`Compactor::purge_archives`].
    /// The logs are borrowed for `read` alone (never across an await).
    pub fn with_archives<T>(&self, read: impl FnOnce(&Archives<'_, S, C>) -> T) -> T {
        read(&self.archives(&self.logs.borrow()))
    }

    /// The persisted metrics.
    pub fn metrics(&self) -> Result<CompactionMetrics, StorageError> {
        Metrics::of(&self.logs.borrow(), &self.keys).read()
    }

    /// Updates the metrics: a record, not part of the logs, so a failure is ignored.
    fn record(&self, change: impl FnOnce(&mut CompactionMetrics)) {
        let _ = Metrics::of(&self.logs.borrow(), &self.keys).update(change);
    }

    /// Enters `phase` of `run` with `message` (the phase's own when `None`); renews the lease.
    fn advance(&self, run: &mut Run, phase: Phase, message: Option<String>) {
        self.lease.renew(&self.logs.borrow());
        run.percent = run.percent.max(phase.progress_percent(run.attempts.count));
        let message = message.unwrap_or_else(|| phase.message().to_owned());
        let elapsed_ms = (self.now() - run.started_ms).max(0.0);
        self.events
            .progress(phase, run.percent, message, elapsed_ms);
    }
}
