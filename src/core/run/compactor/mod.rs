//! The orchestrator: one compaction, step by step, in the order of the API — and rollback.

mod compaction;
mod lease_hold;
mod recovery;
mod writes;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::core::archive::{
    enforce_policy, list_archives, read_archive, Archive, ArchiveData, ArchiveInfo,
    ArchiveMetadata, SelectedData,
};
use crate::core::cancel::Cancel;
use crate::core::clock::{iso_timestamp, Clock};
use crate::core::error::{CompactionError, StorageError};
use crate::core::events::{CompactionEvent, EventSink};
use crate::core::iteration::{parse_summary_header, parse_summary_source};
use crate::core::journal::{Journal, JournalStage};
use crate::core::keys::StorageKeys;
use crate::core::lease::Lease;
use crate::core::ledger::{Coverage, Fact, Ledger};
use crate::core::log_store::{LogStore, RawLogs, ReadLogs};
use crate::core::metrics::CompactionMetrics;
use crate::core::outcome::{CompactionPlan, CompactionResult};
use crate::core::phase::Phase;
use crate::core::placement::PlacedIterations;
use crate::core::prompt::{build_prompt, prompt_tokens, retry_prompt};
use crate::core::provider::{
    race_deadline, GenerationSettings, ProviderError, SummaryProvider, SummaryRequest, Timer,
    TokenUsage,
};
use crate::core::redact::redact;
use crate::core::rules::{refusal, AutoGuard, RuleInput};
use crate::core::selection::{summary_body, EntryIterations, Selection};
use crate::core::settings::{CompactorSettings, Trigger};
use crate::core::storage::{with_free_space, KeyValueStore};
use crate::core::store_lock::{LockHeld, StoreLock, Unshared};
use crate::core::stored_entry::Stored;
use crate::core::stored_json::{read_value, write_json};
use crate::core::swap::{appended_since, replace, restore, summary_entry, summary_is_live, undo};
use crate::core::tokens::estimate_tokens;
use crate::core::usage::UsageMeasure;
use crate::core::validation::{canonicalize, validate_summary, Validation};

/// A summary must stay under this share of the tokens it replaces to count as a compaction.
pub(crate) const MAX_SUMMARY_SHARE: f64 = 0.8;
/// How often a waiting compaction looks whether the running iteration finished, in ms.
pub(crate) const WAIT_POLL_MS: u32 = 50;
/// The longest wait a 429's RetryInfo can impose before the retry, in ms.
pub(crate) const MAX_RETRY_WAIT_MS: u32 = 60_000;
/// Share of the compacted tokens `plan()` expects the summary to take.
pub(crate) const PLANNED_SUMMARY_SHARE: f64 = 0.3;

/// The latest expiry JavaScript can hold exactly (`Number.MAX_SAFE_INTEGER` ms).
pub const MAX_EXPIRES_AT: u64 = 9_007_199_254_740_991;

/// When an archive written at `timestamp` with `lifetime_ms` expires: never past
/// [`MAX_EXPIRES_AT`], so a lifetime of "for ever" cannot wrap to the past.
pub(crate) fn expiry(timestamp: u64, lifetime_ms: f64) -> u64 {
    let left = MAX_EXPIRES_AT.saturating_sub(timestamp);
    if lifetime_ms.is_nan() || lifetime_ms >= left as f64 {
        MAX_EXPIRES_AT.max(timestamp)
    } else {
        timestamp + lifetime_ms.max(0.0) as u64
    }
}

/// Compacts the logs of one [`LogStore`] with one provider.
pub struct Compactor<S, C> {
    logs: Rc<RefCell<LogStore<S, C>>>,
    provider: Box<dyn SummaryProvider>,
    timer: Box<dyn Timer>,
    events: Box<dyn EventSink>,
    settings: CompactorSettings,
    phase: Cell<Phase>,
    busy: Cell<bool>,
    frozen: Cell<bool>,
    /// What one compaction accumulates; reset as a whole when the next one starts.
    current: PerRun,
    guard: Cell<AutoGuard>,
    owner: String,
    lease_renewed_ms: Cell<f64>,
    /// Taken for every write, so that tabs sharing the store do not lose each other's.
    lock: Box<dyn StoreLock>,
    /// The logs' keys with this compactor's archive prefix and metrics key.
    keys: StorageKeys,
    /// The app's own measure of its prompt, if it gave one.
    measure: Option<Box<dyn UsageMeasure>>,
    /// Tokens of the prompt the app last sent, as it reported them (until a compaction).
    reported_tokens: Cell<Option<usize>>,
}

/// The state of one compaction: its progress, attempts, reported usage, answering model and
/// cancellation token. Only [`PerRun::begin`] resets it.
#[derive(Default)]
struct PerRun {
    percent: Cell<u8>,
    attempt: Cell<u32>,
    started_ms: Cell<f64>,
    usage: Cell<Option<TokenUsage>>,
    answered_by: RefCell<Option<String>>,
    cancel: RefCell<Cancel>,
}

impl PerRun {
    /// A fresh run starting at `now_ms`, stopped by `cancel`.
    fn begin(&self, now_ms: f64, cancel: Cancel) {
        self.percent.set(0);
        self.attempt.set(0);
        self.started_ms.set(now_ms);
        self.usage.set(None);
        self.answered_by.replace(None);
        self.cancel.replace(cancel);
    }
}

/// What recovery did with a compaction that a closed tab left half done.
#[derive(Debug, Clone, PartialEq)]
pub enum Recovered {
    /// All three logs had been written: the compaction stands.
    Completed(Box<CompactionResult>),
    /// The logs are back as they were before it; the archive key it had used.
    RolledBack(String),
}

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// A compactor over `logs`; fails with a message naming the first option out of range.
    pub fn new(
        logs: Rc<RefCell<LogStore<S, C>>>,
        provider: Box<dyn SummaryProvider>,
        timer: Box<dyn Timer>,
        events: Box<dyn EventSink>,
        settings: CompactorSettings,
    ) -> Result<Self, String> {
        settings.validate()?;
        let keys = settings.keys_over(logs.borrow().keys());
        Ok(Self {
            logs,
            provider,
            timer,
            events,
            settings,
            phase: Cell::new(Phase::Idle),
            busy: Cell::new(false),
            frozen: Cell::new(false),
            current: PerRun::default(),
            guard: Cell::new(AutoGuard::default()),
            owner: String::from("compactor"),
            lease_renewed_ms: Cell::new(0.0),
            lock: Box::new(Unshared),
            keys,
            measure: None,
            reported_tokens: Cell::new(None),
        })
    }

    /// Takes `lock` before every write (the browser's lock across tabs); without it the store
    /// is taken to be this compactor's alone.
    pub fn with_lock(mut self, lock: Box<dyn StoreLock>) -> Self {
        self.lock = lock;
        self
    }

    /// Names this instance in the cross-tab lease; every tab's compactor needs its own name.
    pub fn with_owner(mut self, owner: impl Into<String>) -> Self {
        self.owner = owner.into();
        self
    }

    /// Measures usage with the app's own function instead of the package's count of the logs.
    pub fn with_usage_measure(mut self, measure: Box<dyn UsageMeasure>) -> Self {
        self.measure = Some(measure);
        self
    }

    /// Records the tokens of the prompt the app last sent; usage is measured by them until the
    /// next compaction (or the next report).
    pub fn report_prompt_tokens(&self, tokens: usize) {
        self.reported_tokens.set(Some(tokens));
    }

    /// Usage (0..1, can exceed 1): the app's measure when it gives one, else `log_tokens` plus
    /// `baseTokens`.
    fn usage_of(&self, log_tokens: usize) -> f64 {
        let measured = self
            .reported_tokens
            .get()
            .or_else(|| self.measure.as_ref()?.prompt_tokens());
        match measured {
            Some(tokens) => tokens as f64 / self.settings.context_window_tokens as f64,
            None => self.settings.usage(log_tokens),
        }
    }

    /// The phase of the running (or last) compaction.
    pub fn phase(&self) -> Phase {
        self.phase.get()
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

    fn now(&self) -> f64 {
        self.logs.borrow().clock().now_ms()
    }

    fn rule_input(&self) -> Result<RuleInput, StorageError> {
        Ok(self.read_state()?.2)
    }

    /// The logs as stored (text and parsed), and what the rules need to know about them (one
    /// read, one count).
    fn read_state(&self) -> Result<(ReadLogs, PlacedIterations, RuleInput), StorageError> {
        let logs = self.logs.borrow().read()?;
        let placed = logs.parsed.placed_iterations();
        let census = logs.parsed.census_of(&placed);
        let input = RuleInput {
            current_iteration: census.current,
            iteration_running: self.logs.borrow().iteration_running(),
            log_tokens: census.tokens,
            usage: self.usage_of(census.tokens),
            compacting: self.busy.get(),
            compacting_elsewhere: self.lease_elsewhere()?.is_some(),
            summary_tokens: census.summary_tokens,
            new_tokens: census.compacted_tokens - census.summary_tokens,
        };
        Ok((logs, placed, input))
    }

    /// Share (0..1, can exceed 1) of the context window the logs and base tokens take.
    pub fn context_usage(&self) -> Result<f64, StorageError> {
        Ok(self.usage_of(self.logs.borrow().estimate_tokens()?))
    }

    /// Why a user-triggered compaction is not allowed now; `None` when it is.
    pub fn can_compact(&self) -> Result<Option<String>, StorageError> {
        Ok(refusal(&self.settings, &self.rule_input()?, Trigger::User))
    }

    /// Whether usage reached `autoTriggerUsage` and an automatic compaction should start.
    pub fn should_auto_compact(&self) -> Result<bool, StorageError> {
        let input = self.rule_input()?;
        Ok(self.guard.get().should_auto_compact(&self.settings, &input))
    }

    /// The prompt `compact()` would send now.
    pub fn build_prompt(&self) -> Result<String, StorageError> {
        let snapshot = self.logs.borrow().snapshot()?;
        let selection = Selection::of(&snapshot);
        let ledger = self.ledger_of(&selection)?;
        Ok(build_prompt(&selection, &self.settings, &ledger))
    }

    /// The facts the summary of `selection` must keep: those drawn from it, the app's pins, and
    /// those the earlier summaries in it had to keep (read from their archives; an archive
    /// that is gone or unreadable carries none).
    pub fn ledger_of(&self, selection: &Selection<'_>) -> Result<Ledger, StorageError> {
        let logs = self.logs.borrow();
        let pins = logs.pins()?;
        let mut carried: Vec<Fact> = Vec::new();
        for (_, entry) in &selection.reasoning {
            let Some(key) = parse_summary_source(entry) else {
                continue;
            };
            if self.keys.archive_timestamp(key).is_none() {
                continue;
            }
            if let Ok(Some(archive)) = read_archive(logs.store(), key) {
                carried.extend(archive.ledger.unwrap_or_default());
            }
        }
        Ok(Ledger::draw(selection, &pins, &carried))
    }

    /// The archived originals of `iteration`, from the archive that compacted it; `None` when
    /// no archive holds it (it is live in the logs, or its archive expired or was deleted).
    pub fn recall(&self, iteration: u32) -> Result<Option<ArchiveData>, StorageError> {
        let logs = self.logs.borrow();
        let (infos, _) = list_archives(logs.store(), &self.keys)?;
        for info in infos
            .iter()
            .filter(|info| info.iterations.contains(&iteration))
        {
            let Some(archive) = read_archive(logs.store(), &info.key)? else {
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
                return Ok(Some(recalled));
            }
        }
        Ok(None)
    }

    /// What `compact()` would do now, without calling the provider, and why it would refuse
    /// if it would.
    pub fn plan(&self) -> Result<CompactionPlan, StorageError> {
        let (read, placed, input) = self.read_state()?;
        let selection = Selection::placed(&read.parsed, &placed);
        let tokens_to_compact = input.summary_tokens + input.new_tokens;
        let ledger = self.ledger_of(&selection)?;
        Ok(CompactionPlan {
            iterations: [1.min(selection.last), selection.last],
            entries: selection.counts(),
            tokens_to_compact,
            prompt_tokens: prompt_tokens(&build_prompt(&selection, &self.settings, &ledger)),
            ledger: ledger.texts(),
            estimated_tokens_after: input.log_tokens - tokens_to_compact
                + (tokens_to_compact as f64 * PLANNED_SUMMARY_SHARE).round() as usize,
            refused: refusal(&self.settings, &input, Trigger::User),
        })
    }

    fn emit(&self, event: CompactionEvent) {
        // Messages leave without anything shaped like an API key.
        let event = match event {
            CompactionEvent::Error {
                code,
                message,
                phase,
            } => CompactionEvent::Error {
                code,
                message: redact(&message, None).into_owned(),
                phase,
            },
            other => other,
        };
        self.events.emit(&event);
    }

    /// The model the provider calls.
    pub fn model(&self) -> String {
        self.provider.model()
    }

    fn set_phase(&self, phase: Phase) {
        self.set_phase_saying(phase, phase.message().to_owned());
    }

    /// Enters `phase`, its progress event carrying `message`.
    fn set_phase_saying(&self, phase: Phase, message: String) {
        if self.busy.get() {
            self.renew_lease();
        }
        let previous = self.phase.replace(phase);
        self.emit(CompactionEvent::PhaseChange { phase, previous });
        if matches!(phase, Phase::Error | Phase::Idle | Phase::RollingBack) {
            return;
        }
        let percent = self
            .current
            .percent
            .get()
            .max(phase.progress_percent(self.current.attempt.get()));
        self.current.percent.set(percent);
        self.emit(CompactionEvent::Progress {
            phase,
            percent,
            message,
            elapsed_ms: (self.now() - self.current.started_ms.get()).max(0.0),
        });
    }
}
