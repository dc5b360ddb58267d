//! The orchestrator: one compaction, step by step, in the order of the API — and rollback.
//! It calls the steps and the store's protocols and never touches a storage key itself; the
//! logs, their archives and the lease are reached through the logs' [`Shelf`], shared with
//! every other object over them in the page.

mod clear;
mod ending;
mod fallback;
mod ladder;
mod queries;
mod recovery;
mod run;
mod run_lock;
mod summarize;

pub use ladder::Claim;
pub use run::Started;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::core::error::StorageError;
use crate::core::model::phase::Phase;
use crate::core::model::settings::{CompactorSettings, SettingsError};
use crate::core::ports::cancel::Cancel;
use crate::core::ports::clock::Clock;
use crate::core::ports::events::{EventSink, Reporter};
use crate::core::ports::storage::KeyValueStore;
use crate::core::ports::timer::Timer;
use crate::core::ports::usage::{PromptUsage, UsageMeasure};
use crate::core::providers::port::SummaryProvider;
use crate::core::steps::rest::ModelRest;
use crate::core::steps::rules::AutoGuard;
use crate::core::store::log_store::LogStore;
use crate::core::store::metrics::{CompactionMetrics, Metrics};
use crate::core::store::shelf::Shelf;

/// Compacts the logs of one [`LogStore`] with one provider.
pub struct Compactor<S, C> {
    provider: Box<dyn SummaryProvider>,
    timer: Box<dyn Timer>,
    events: Reporter,
    settings: CompactorSettings,
    /// The logs, their archives, the lease, and whether a compaction runs in this page.
    shelf: Rc<Shelf<S, C>>,
    /// The app's own measure of its prompt, and the size it last reported.
    usage: PromptUsage,
    guard: Cell<AutoGuard>,
    /// Whether the provider rests after failing, and until when.
    rest: RefCell<ModelRest>,
    /// The cancellation of this compactor's running compaction, for [`Compactor::abort`].
    cancel: RefCell<Cancel>,
}

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// A compactor over `logs` with a shelf of its own; fails naming the first option out of
    /// range.
    pub fn new(
        logs: Rc<RefCell<LogStore<S, C>>>,
        provider: Box<dyn SummaryProvider>,
        timer: Box<dyn Timer>,
        events: Box<dyn EventSink>,
        settings: CompactorSettings,
    ) -> Result<Self, SettingsError> {
        settings.validate()?;
        Ok(Self {
            provider,
            timer,
            events: Reporter::new(events),
            shelf: Rc::new(Shelf::new(logs, &settings)),
            settings,
            usage: PromptUsage::default(),
            guard: Cell::new(AutoGuard::default()),
            rest: RefCell::new(ModelRest::default()),
            cancel: RefCell::new(Cancel::default()),
        })
    }

    /// Reaches the logs, their archives and the lease through `shelf` (the one every object
    /// over these logs in the page shares).
    pub fn with_shelf(mut self, shelf: Rc<Shelf<S, C>>) -> Self {
        self.shelf = shelf;
        self
    }

    /// Measures usage with the app's own function instead of the package's count of the logs.
    pub fn with_usage_measure(mut self, measure: Box<dyn UsageMeasure>) -> Self {
        self.usage = PromptUsage::measured_by(measure);
        self
    }

    /// The archives of the logs, shared with every object over them in the page.
    pub fn shelf(&self) -> &Rc<Shelf<S, C>> {
        &self.shelf
    }

    /// The logs.
    pub fn logs(&self) -> &Rc<RefCell<LogStore<S, C>>> {
        self.shelf.logs()
    }

    /// Records the tokens of the prompt the app last sent: usage until the next compaction.
    pub fn report_prompt_tokens(&self, tokens: usize) {
        self.usage.report(tokens);
    }

    /// The phase of this compactor's running (or last) compaction.
    pub fn phase(&self) -> Phase {
        self.events.phase()
    }

    /// Whether a compaction of this page holds the logs frozen.
    pub fn frozen(&self) -> bool {
        self.shelf.page().frozen()
    }

    /// Whether a compaction or rollback over these logs runs in this page.
    pub fn busy(&self) -> bool {
        self.shelf.page().compacting()
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
        self.logs().borrow().clock().now_ms()
    }

    /// The persisted metrics.
    pub fn metrics(&self) -> Result<CompactionMetrics, StorageError> {
        Metrics::of(&self.logs().borrow(), self.shelf.keys()).read()
    }

    /// Updates the metrics: a record, not part of the logs, so a failure is ignored.
    fn record(&self, change: impl FnOnce(&mut CompactionMetrics)) {
        let _ = Metrics::of(&self.logs().borrow(), self.shelf.keys()).update(change);
    }
}
