//! The orchestrator: one compaction, step by step, in the order of the API — and rollback.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::core::archive::{
    enforce_policy, list_archives, read_archive, Archive, ArchiveInfo, ArchiveMetadata,
    SelectedData,
};
use crate::core::cancel::Cancel;
use crate::core::clock::{iso_timestamp, Clock};
use crate::core::error::{CompactionError, StorageError};
use crate::core::events::{CompactionEvent, EventSink};
use crate::core::iteration::parse_summary_header;
use crate::core::journal::{Journal, JournalStage};
use crate::core::keys::StorageKeys;
use crate::core::lease::Lease;
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
use crate::core::selection::{summary_body, Selection};
use crate::core::settings::{CompactorSettings, Trigger};
use crate::core::storage::{with_free_space, KeyValueStore};
use crate::core::store_lock::{LockHeld, StoreLock, Unshared};
use crate::core::stored_entry::Stored;
use crate::core::stored_json::{read_value, write_json};
use crate::core::swap::{appended_since, replace, restore, summary_entry, undo};
use crate::core::tokens::estimate_tokens;
use crate::core::usage::UsageMeasure;
use crate::core::validation::{canonicalize, validate_summary, Validation};

/// A summary must stay under this share of the tokens it replaces to count as a compaction.
pub const MAX_SUMMARY_SHARE: f64 = 0.8;
/// How often a waiting compaction looks whether the running iteration finished, in ms.
pub const WAIT_POLL_MS: u32 = 50;
/// The longest wait a 429's RetryInfo can impose before the retry, in ms.
pub const MAX_RETRY_WAIT_MS: u32 = 60_000;
/// Share of the compacted tokens `plan()` expects the summary to take.
pub const PLANNED_SUMMARY_SHARE: f64 = 0.3;

/// The latest expiry JavaScript can hold exactly (`Number.MAX_SAFE_INTEGER` ms).
pub const MAX_EXPIRES_AT: u64 = 9_007_199_254_740_991;

/// When an archive written at `timestamp` with `lifetime_ms` expires: never past
/// [`MAX_EXPIRES_AT`], so a lifetime of "for ever" cannot wrap to the past.
pub fn expiry(timestamp: u64, lifetime_ms: f64) -> u64 {
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
    percent: Cell<u8>,
    attempt: Cell<u32>,
    started_ms: Cell<f64>,
    usage: Cell<Option<TokenUsage>>,
    guard: Cell<AutoGuard>,
    owner: String,
    lease_renewed_ms: Cell<f64>,
    /// Taken for every write, so that tabs sharing the store do not lose each other's.
    lock: Box<dyn StoreLock>,
    /// The cancellation token of the running compaction.
    cancel: RefCell<Cancel>,
    /// The model that gave the last answer, when the provider said.
    answered_by: RefCell<Option<String>>,
    /// The logs' keys with this compactor's archive prefix and metrics key.
    keys: StorageKeys,
    /// The app's own measure of its prompt, if it gave one.
    measure: Option<Box<dyn UsageMeasure>>,
    /// Tokens of the prompt the app last sent, as it reported them (until a compaction).
    reported_tokens: Cell<Option<usize>>,
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
            percent: Cell::new(0),
            attempt: Cell::new(0),
            started_ms: Cell::new(0.0),
            usage: Cell::new(None),
            guard: Cell::new(AutoGuard::default()),
            owner: String::from("compactor"),
            lease_renewed_ms: Cell::new(0.0),
            lock: Box::new(Unshared),
            cancel: RefCell::new(Cancel::default()),
            answered_by: RefCell::new(None),
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
        Ok(build_prompt(&Selection::of(&snapshot), &self.settings))
    }

    /// What `compact()` would do now, without calling the provider, and why it would refuse
    /// if it would.
    pub fn plan(&self) -> Result<CompactionPlan, StorageError> {
        let (read, placed, input) = self.read_state()?;
        let selection = Selection::placed(&read.parsed, &placed);
        let tokens_to_compact = input.summary_tokens + input.new_tokens;
        Ok(CompactionPlan {
            iterations: [1.min(selection.last), selection.last],
            entries: selection.counts(),
            tokens_to_compact,
            prompt_tokens: prompt_tokens(&build_prompt(&selection, &self.settings)),
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
            .percent
            .get()
            .max(phase.progress_percent(self.attempt.get()));
        self.percent.set(percent);
        self.emit(CompactionEvent::Progress {
            phase,
            percent,
            message,
            elapsed_ms: (self.now() - self.started_ms.get()).max(0.0),
        });
    }

    /// Runs one compaction. Whatever the error, the logs are as before (plus any appends).
    pub async fn compact(&self, trigger: Trigger) -> Result<CompactionResult, CompactionError> {
        self.compact_until(trigger, Cancel::default()).await
    }

    /// Runs one compaction that `cancel` (or [`Compactor::abort`]) stops with
    /// [`CompactionError::Aborted`] until its archive is written; after that it completes.
    pub async fn compact_until(
        &self,
        trigger: Trigger,
        cancel: Cancel,
    ) -> Result<CompactionResult, CompactionError> {
        if self.busy.get() {
            return Err(CompactionError::Busy(
                "A compaction is already running; wait for it to finish.".into(),
            ));
        }
        if cancel.is_cancelled() {
            return Err(CompactionError::Aborted);
        }
        self.busy.set(true);
        *self.cancel.borrow_mut() = cancel;
        self.answered_by.replace(None);
        let outcome = self.compact_leased(trigger).await;
        self.busy.set(false);
        outcome
    }

    /// Cancels the running compaction, if any (see [`Compactor::compact_until`]).
    pub fn abort(&self) {
        if self.busy.get() {
            self.cancel.borrow().cancel();
        }
    }

    /// Sleeps `ms`, or less when the compaction is cancelled meanwhile.
    async fn pause(&self, ms: u32) -> Result<(), CompactionError> {
        let cancel = self.cancel.borrow().clone();
        race_deadline(self.timer.sleep(ms), cancel.cancelled())
            .await
            .ok_or(CompactionError::Aborted)
    }

    /// Takes the lease, runs the compaction, records a failure and gives the lease back, each
    /// write under the store lock.
    async fn compact_leased(&self, trigger: Trigger) -> Result<CompactionResult, CompactionError> {
        let held = self.lock.acquire().await?;
        self.take_lease()?;
        self.percent.set(0);
        self.attempt.set(0);
        self.usage.set(None);
        self.started_ms.set(self.now());
        let outcome = self.run(trigger, held).await;
        // Without the lock the lease still goes: an expired lease would block for hours.
        let held = self.lock.acquire().await.ok();
        if let Err(err) = &outcome {
            self.fail(err, trigger);
        }
        self.frozen.set(false);
        self.release_lease();
        drop(held);
        outcome
    }

    /// How long a lease lasts without renewal: every attempt timing out, plus the waits.
    fn lease_ms(&self) -> f64 {
        let s = &self.settings;
        f64::from(s.timeout_ms) * f64::from(s.max_retries + 1)
            + f64::from(s.retry_delay_ms.max(MAX_RETRY_WAIT_MS)) * f64::from(s.max_retries)
            + 30_000.0
    }

    /// The lease of a compaction running in another tab, if there is one.
    fn lease_elsewhere(&self) -> Result<Option<Lease>, StorageError> {
        let logs = self.logs.borrow();
        let lease: Option<Lease> = read_value(logs.store(), &logs.keys().lease())?;
        Ok(lease.filter(|lease| lease.blocks(&self.owner, logs.clock().now_ms())))
    }

    fn take_lease(&self) -> Result<(), CompactionError> {
        if self.lease_elsewhere()?.is_some() {
            return Err(CompactionError::Busy(
                "A compaction is running in another tab; try again when it has finished.".into(),
            ));
        }
        self.write_lease()?;
        Ok(())
    }

    fn write_lease(&self) -> Result<(), StorageError> {
        let now = self.now();
        self.lease_renewed_ms.set(now);
        let logs = self.logs.borrow();
        let lease = Lease {
            owner: self.owner.clone(),
            expires_at: now + self.lease_ms(),
        };
        write_json(logs.store(), &logs.keys().lease(), &lease)
    }

    /// Extends the lease while a compaction makes progress (at most once a second).
    fn renew_lease(&self) {
        if self.now() - self.lease_renewed_ms.get() >= 1000.0 {
            // A lease that cannot be renewed expires on its own; the compaction goes on.
            let _ = self.write_lease();
        }
    }

    fn release_lease(&self) {
        let logs = self.logs.borrow();
        let key = logs.keys().lease();
        let ours = read_value::<Lease>(logs.store(), &key)
            .ok()
            .flatten()
            .is_some_and(|lease| lease.owner == self.owner);
        if ours {
            let _ = logs.store().remove(&key);
        }
    }

    fn fail(&self, err: &CompactionError, trigger: Trigger) {
        let stopped_in = self.phase.get();
        let recorded = !matches!(
            err,
            CompactionError::NotAllowed(_) | CompactionError::Aborted
        );
        if recorded {
            let attempts = self.attempt.get();
            let at = iso_timestamp(self.now());
            // Metrics are a record, not part of the logs: failing to update them must not
            // hide the error being reported.
            let usage = self.usage.get();
            let _ = self.update_metrics(|m| {
                m.record_failure(err.code().as_str(), attempts, at);
                m.record_usage(usage);
            });
        }
        if !matches!(err, CompactionError::NotAllowed(_)) {
            self.frozen.set(false);
            self.set_phase(Phase::Error);
        }
        if trigger == Trigger::Auto {
            let tokens = self.logs.borrow().estimate_tokens().unwrap_or(0);
            let mut guard = self.guard.get();
            guard.hold(&self.settings, tokens);
            self.guard.set(guard);
        }
        self.emit(CompactionEvent::Error {
            code: err.code().as_str(),
            message: err.to_string(),
            phase: stopped_in,
        });
    }

    /// The compaction itself; `held` is the store lock taken with the lease, given up while
    /// the provider works and taken again for the archive and the swap.
    async fn run(
        &self,
        trigger: Trigger,
        held: LockHeld,
    ) -> Result<CompactionResult, CompactionError> {
        // A journal left by an interrupted compaction is settled before a new one starts (a
        // corrupt one stops it: its archive key must not be guessed). We hold the lease.
        self.settle_journal()?;
        let (read, placed, input) = self.read_state()?;
        let input = RuleInput {
            compacting: false,
            ..input
        };
        if let Some(reason) = refusal(&self.settings, &input, trigger) {
            return Err(CompactionError::NotAllowed(reason));
        }
        self.emit(CompactionEvent::Start {
            trigger,
            iteration: input.current_iteration,
            context_usage: input.usage,
        });
        // Other tabs append while the model works; the swap picks their entries up.
        drop(held);
        let waits = self.logs.borrow().iteration_running();
        if waits {
            self.set_phase(Phase::Waiting);
            while self.logs.borrow().iteration_running() {
                self.pause(WAIT_POLL_MS).await?;
                self.renew_lease();
            }
        }
        self.set_phase(Phase::Freezing);
        self.frozen.set(true);

        self.set_phase(Phase::Gathering);
        // Without a wait the logs read for the rules are the ones to compact (appends made
        // meanwhile are picked up before the swap); after a wait they are read again.
        let (before, placed, input) = if waits {
            let (read, placed, input) = self.read_state()?;
            if let Some(reason) = refusal(
                &self.settings,
                &RuleInput {
                    compacting: false,
                    ..input
                },
                trigger,
            ) {
                return Err(CompactionError::NotAllowed(reason));
            }
            (read, placed, input)
        } else {
            (read, placed, input)
        };
        let tokens_before = input.log_tokens;
        let usage_before = input.usage;
        let selection = Selection::placed(&before.parsed, &placed);
        if selection.is_empty() {
            return Err(CompactionError::NotAllowed(
                "Nothing to compact: only the current iteration has entries.".into(),
            ));
        }
        let compacted_tokens = input.summary_tokens + input.new_tokens;

        self.set_phase(Phase::BuildingPrompt);
        let prompt = build_prompt(&selection, &self.settings);
        let summary = self
            .summarise(&prompt, &selection, compacted_tokens)
            .await?;

        let held = self.lock.acquire().await?;
        // The last moment a cancellation is honoured: from here on the compaction completes.
        if self.cancel.borrow().is_cancelled() {
            return Err(CompactionError::Aborted);
        }
        self.set_phase(Phase::Archiving);
        let archive_key = self.write_archive(&selection, trigger, tokens_before, usage_before)?;

        self.set_phase(Phase::Replacing);
        let mut result = self.swap_in(
            &before,
            &selection,
            summary,
            archive_key,
            tokens_before,
            compacted_tokens,
        )?;
        // A reported prompt size described the prompt before the compaction.
        self.reported_tokens.set(None);
        result.context_usage_before = usage_before;
        result.context_usage_after = self.usage_of(result.tokens_after);
        let (tokens_after, tokens_saved) = (result.tokens_after, result.tokens_saved);

        self.set_phase(Phase::RecordingMetrics);
        let at = iso_timestamp(self.now());
        let _ = self.update_metrics(|m| {
            m.record_success(
                result.reduction,
                result.duration_ms,
                tokens_saved,
                result.attempts,
                at,
            );
            m.record_usage(result.usage);
        });
        let logs = self.logs.borrow();
        // Old archives beyond the limits go now that the new one is safely in place; a failure
        // here leaves an extra archive, never a lost entry.
        let _ = enforce_policy(
            logs.store(),
            &self.keys,
            self.now(),
            self.settings.max_archives,
            Some(&result.archive_key),
        );
        drop(logs);
        let mut guard = self.guard.get();
        if trigger == Trigger::Auto
            && result.context_usage_after >= self.settings.auto_trigger_usage
        {
            guard.hold(&self.settings, tokens_after);
        } else {
            guard.release();
        }
        self.guard.set(guard);

        drop(held);
        self.set_phase(Phase::Unfreezing);
        self.frozen.set(false);
        self.set_phase(Phase::Complete);
        self.emit(CompactionEvent::Complete {
            result: Box::new(result.clone()),
        });
        Ok(result)
    }

    /// Asks the provider, validates, and retries once (per `maxRetries`) telling the model what
    /// was wrong. Returns the canonical summary.
    async fn summarise(
        &self,
        prompt: &str,
        selection: &Selection<'_>,
        compacted_tokens: usize,
    ) -> Result<String, CompactionError> {
        let generation = GenerationSettings {
            model: self.provider.model(),
            temperature: self
                .settings
                .temperature
                .unwrap_or(crate::core::settings::DEFAULT_TEMPERATURE),
            temperature_set: self.settings.temperature.is_some(),
            max_output_tokens: self.settings.max_output_tokens,
            timeout_ms: self.settings.timeout_ms,
        };
        let mut attempt_prompt = prompt.to_owned();
        loop {
            let attempt = self.attempt.get() + 1;
            self.attempt.set(attempt);
            self.set_phase(Phase::Compacting);
            let call = self.provider.generate(&SummaryRequest {
                prompt: &attempt_prompt,
                selection,
                settings: &generation,
            });
            let cancel = self.cancel.borrow().clone();
            let timed = race_deadline(call, self.timer.sleep(self.settings.timeout_ms));
            // Dropping the call when cancelled or late lets the provider abort its request.
            let answer = match race_deadline(timed, cancel.cancelled()).await {
                None => return Err(CompactionError::Aborted),
                Some(None) => Err(ProviderError::Timeout {
                    after_ms: self.settings.timeout_ms,
                }),
                Some(Some(answer)) => answer,
            };
            let (error, wait_ms, rejected) = match answer {
                Ok(generation) => {
                    self.count_usage(generation.usage);
                    if generation.model.is_some() {
                        self.answered_by.replace(generation.model);
                    }
                    self.set_phase(Phase::Validating);
                    let summary = canonicalize(&generation.text);
                    let validation = self.check(&summary, selection.last, compacted_tokens);
                    if validation.valid {
                        return Ok(summary);
                    }
                    let error = CompactionError::InvalidSummary(validation.errors.clone());
                    (error, self.settings.retry_delay_ms, Some(validation))
                }
                Err(err) => {
                    let (err, usage) = err.split_usage();
                    self.count_usage(usage);
                    if !err.is_retryable() {
                        return Err(CompactionError::Provider(err));
                    }
                    let wait = err
                        .retry_after_ms()
                        .map_or(self.settings.retry_delay_ms, |ms| ms.min(MAX_RETRY_WAIT_MS));
                    let error = match err {
                        ProviderError::Incomplete(reason) => {
                            CompactionError::InvalidSummary(vec![reason])
                        }
                        other => CompactionError::Provider(other),
                    };
                    (error, wait, None)
                }
            };
            if attempt > self.settings.max_retries {
                return Err(error);
            }
            self.announce_retry(&error, attempt + 1, wait_ms);
            self.pause(wait_ms).await?;
            attempt_prompt = match rejected {
                Some(validation) => retry_prompt(prompt, &validation),
                None => prompt.to_owned(),
            };
        }
    }

    /// Adds the tokens an answer reported to this compaction's usage.
    fn count_usage(&self, usage: Option<TokenUsage>) {
        if let Some(usage) = usage {
            let mut total = self.usage.get().unwrap_or_default();
            total += usage;
            self.usage.set(Some(total));
        }
    }

    /// Tells the app that attempt `next` follows, why, and after how long.
    fn announce_retry(&self, error: &CompactionError, next: u32, wait_ms: u32) {
        let reason = match error {
            CompactionError::Provider(err) => err.retry_reason(),
            _ => "invalid_summary".to_owned(),
        };
        let why = match reason.as_str() {
            "invalid_summary" => "The summary was incomplete".to_owned(),
            "http_429" => "The model's API is rate-limited".to_owned(),
            "timeout" => "The model did not answer in time".to_owned(),
            "network" => "The model's API could not be reached".to_owned(),
            other => match error.provider().and_then(ProviderError::status) {
                Some(status) => format!("The model's API answered HTTP {status}"),
                None => format!("The provider failed ({other})"),
            },
        };
        let of = self.settings.max_retries.saturating_add(1);
        let message = format!(
            "{why}; attempt {next} of {of} in {:.1} s",
            f64::from(wait_ms) / 1000.0
        );
        self.emit(CompactionEvent::Retry {
            reason,
            attempt: next,
            wait_ms,
            message: message.clone(),
        });
        self.set_phase_saying(Phase::Retrying, message);
    }

    /// `validateSummary` plus the rule that a compaction must shrink what it replaces.
    fn check(&self, summary: &str, last: u32, compacted_tokens: usize) -> Validation {
        let mut validation = validate_summary(summary);
        let summary_tokens = estimate_tokens(&summary_entry(last, summary));
        if summary_tokens as f64 > compacted_tokens as f64 * MAX_SUMMARY_SHARE {
            validation.valid = false;
            validation.errors.push(format!(
                "The summary ({summary_tokens} tokens) is not clearly smaller than the \
                 {compacted_tokens} tokens it replaces; at most {}% is allowed",
                CompactorSettings::whole_percent(MAX_SUMMARY_SHARE)
            ));
        }
        validation
    }

    /// Writes the journal, then the archive of the originals. A full store first loses expired
    /// archives, then the oldest ones (never this one), before the write fails with the sizes.
    fn write_archive(
        &self,
        selection: &Selection<'_>,
        trigger: Trigger,
        tokens_before: usize,
        usage_before: f64,
    ) -> Result<String, CompactionError> {
        let logs = self.logs.borrow();
        let store = logs.store();
        let mut timestamp = self.now().max(0.0) as u64;
        while store.get(&self.keys.archive(timestamp))?.is_some() {
            timestamp += 1;
        }
        let key = self.keys.archive(timestamp);
        let archive = Archive {
            timestamp,
            expires_at: expiry(timestamp, self.settings.archive_lifetime_ms()),
            iterations: selection.iterations(),
            trigger: trigger.as_str().to_owned(),
            data: SelectedData(selection),
            positions: Some(selection.positions.clone()),
            metadata: ArchiveMetadata {
                context_usage_before: usage_before,
                total_tokens_before: tokens_before,
            },
        };
        let journal = Journal {
            stage: JournalStage::Archiving,
            archive_key: key.clone(),
            before: None,
            after: None,
            result: None,
        };
        write_json(store, &logs.keys().journal(), &journal)
            .map_err(|err| with_free_space(store, err))?;
        loop {
            match write_json(store, &key, &archive) {
                Ok(()) => break,
                Err(StorageError::Quota { .. }) if self.free_an_archive(&key)? => continue,
                Err(err) => {
                    let _ = store.remove(&logs.keys().journal());
                    return Err(with_free_space(store, err).into());
                }
            }
        }
        drop(logs);
        self.emit(CompactionEvent::Archived {
            archive_key: key.clone(),
            timestamp,
        });
        Ok(key)
    }

    /// Removes one expired archive to make room (never `keep`); returns whether one went. An
    /// unexpired archive is never removed to make room: it may be the only copy of entries the
    /// user wants back, so the write fails instead and the error says what to delete.
    fn free_an_archive(&self, keep: &str) -> Result<bool, StorageError> {
        let logs = self.logs.borrow();
        let store = logs.store();
        let (infos, _) = list_archives(store, &self.keys)?;
        let now = self.now();
        match infos
            .iter()
            .find(|info| info.key != keep && info.expires_at as f64 <= now)
        {
            Some(expired) => store.remove(&expired.key).map(|()| true),
            None => Ok(false),
        }
    }

    /// Writes the summary in place of the selected entries, keeping anything appended since
    /// `before` was read, under a journal that lets a later load finish or undo it. On a
    /// failure the logs are written back and the archive removed.
    fn swap_in(
        &self,
        before: &ReadLogs,
        selection: &Selection<'_>,
        summary: String,
        archive_key: String,
        tokens_before: usize,
        compacted_tokens: usize,
    ) -> Result<CompactionResult, CompactionError> {
        let logs = self.logs.borrow();
        let store = logs.store();
        let journal_key = logs.keys().journal();
        let abandon = |err: CompactionError| {
            let _ = store.remove(&archive_key);
            let _ = store.remove(&journal_key);
            err
        };
        let now_raw = logs.raw_logs().map_err(|e| abandon(e.into()))?;
        // Parsed again only when another writer changed the logs since they were read.
        let reparsed;
        let now = if now_raw == before.raw {
            &before.parsed
        } else {
            reparsed = now_raw.parse(logs.keys()).map_err(|e| abandon(e.into()))?;
            &reparsed
        };
        let before = &before.parsed;
        let entry = Stored::encode(&summary_entry(selection.last, &summary)).map_err(|err| {
            abandon(CompactionError::from(StorageError::Unavailable {
                reason: format!("could not encode the summary: {err}"),
            }))
        })?;
        let after = replace(before, now, selection, &entry)
            .map_err(|conflict| abandon(CompactionError::Busy(conflict.0)))?;
        let mut after_raw = RawLogs::encode(&after);
        // A log none of whose entries was compacted keeps its text: it is not written.
        let counts = selection.counts();
        if counts.execution == 0 {
            after_raw.execution.clone_from(&now_raw.execution);
        }
        if counts.tool_activity == 0 {
            after_raw.tool_activity.clone_from(&now_raw.tool_activity);
        }
        // Counted by difference rather than again: what stayed, the summary, and any appends.
        let tokens_after = tokens_before - compacted_tokens
            + after
                .reasoning
                .first()
                .map_or(0, |entry| estimate_tokens(entry))
            + appended_since(before, now).estimate_tokens();
        let tokens_saved = tokens_before.saturating_sub(tokens_after);
        let result = CompactionResult {
            iterations: [1, selection.last],
            tokens_before,
            tokens_after,
            tokens_saved,
            reduction: if tokens_before == 0 {
                0.0
            } else {
                tokens_saved as f64 / tokens_before as f64
            },
            context_usage_before: self.settings.usage(tokens_before),
            context_usage_after: self.settings.usage(tokens_after),
            attempts: self.attempt.get(),
            duration_ms: (self.now() - self.started_ms.get()).max(0.0),
            archive_key: archive_key.clone(),
            summary,
            usage: self.usage.get(),
            model: self.answered_by.borrow().clone(),
        };
        let journal = Journal {
            stage: JournalStage::Replacing,
            archive_key: archive_key.clone(),
            before: Some(now_raw.hashes()),
            after: Some(after_raw.hashes()),
            // The summary itself is in the reasoning log being written; the journal stays small.
            result: Some(CompactionResult {
                summary: String::new(),
                ..result.clone()
            }),
        };
        write_json(store, &journal_key, &journal)
            .map_err(|err| abandon(with_free_space(store, err).into()))?;
        if let Err(err) = logs.write_changed(&after_raw, &now_raw) {
            let _ = logs.write_changed(&now_raw, &after_raw);
            return Err(abandon(with_free_space(store, err).into()));
        }
        // The compaction is complete once the logs are written; a journal left behind by a
        // failed removal is recognised as complete on the next load.
        let _ = store.remove(&journal_key);
        Ok(result)
    }

    /// Finishes or undoes a compaction that a closed tab or a crash left half done, as its
    /// journal says, and reports it through the events. Does nothing while another tab holds
    /// the lease (its compaction is still running).
    pub async fn recover(&self) -> Result<Option<Recovered>, CompactionError> {
        // Our own compaction, or another tab's, may be mid-way: its journal is not an orphan.
        if self.busy.get() {
            return Ok(None);
        }
        let held = self.lock.acquire().await?;
        if self.busy.get() {
            return Ok(None);
        }
        let outcome = match self.lease_elsewhere() {
            Ok(Some(_)) => return Ok(None),
            Ok(None) => self.settle_journal(),
            Err(err) => Err(err.into()),
        };
        if let Err(err) = &outcome {
            self.emit(CompactionEvent::Error {
                code: err.code().as_str(),
                message: format!("could not recover an interrupted compaction: {err}"),
                phase: Phase::RollingBack,
            });
        }
        drop(held);
        outcome
    }

    /// Finishes or undoes the compaction a journal describes; the caller holds or has checked
    /// the lease.
    fn settle_journal(&self) -> Result<Option<Recovered>, CompactionError> {
        let logs = self.logs.borrow();
        let store = logs.store();
        let journal_key = logs.keys().journal();
        let Some(journal) = read_value::<Journal>(store, &journal_key)? else {
            return Ok(None);
        };
        // Recovery reads and removes the journal's archive: never a key of other code.
        if self.keys.archive_timestamp(&journal.archive_key).is_none() {
            return Err(StorageError::Corrupt {
                key: journal_key,
                reason: format!(
                    "its archive key \"{}\" is not an archive key of these logs",
                    journal.archive_key
                ),
            }
            .into());
        }
        let archive = read_archive(store, &journal.archive_key)?;
        let raw = logs.raw_logs()?;
        let complete = journal.stage == JournalStage::Replacing
            && journal.after.as_ref() == Some(&raw.hashes());
        let outcome = match (complete, journal.result, archive) {
            (true, Some(mut result), Some(_)) => {
                let live = raw.parse(logs.keys())?;
                result.summary = live
                    .reasoning
                    .iter()
                    .find(|entry| parse_summary_header(entry) == Some((1, result.iterations[1])))
                    .map(|entry| summary_body(entry))
                    .unwrap_or_default();
                Recovered::Completed(Box::new(result))
            }
            (_, _, Some(archive)) => {
                let last = archive.iterations.iter().copied().max().unwrap_or(0);
                let positions = archive.positions.as_ref();
                let undone = undo(
                    &raw.parse(logs.keys())?,
                    &archive.data.into(),
                    positions,
                    last,
                );
                logs.write_changed(&RawLogs::encode(&undone), &raw)?;
                store.remove(&journal.archive_key)?;
                Recovered::RolledBack(journal.archive_key.clone())
            }
            // No archive: the tab stopped before writing it, so the logs were never touched.
            (_, _, None) => Recovered::RolledBack(journal.archive_key.clone()),
        };
        store.remove(&journal_key)?;
        drop(logs);
        self.emit(match &outcome {
            Recovered::Completed(result) => CompactionEvent::Complete {
                result: result.clone(),
            },
            Recovered::RolledBack(key) => CompactionEvent::RolledBack {
                archive_key: key.clone(),
            },
        });
        Ok(Some(outcome))
    }

    fn update_metrics(
        &self,
        change: impl FnOnce(&mut CompactionMetrics),
    ) -> Result<(), StorageError> {
        let logs = self.logs.borrow();
        let key = self.keys.metrics();
        let mut metrics: CompactionMetrics = read_value(logs.store(), &key)?.unwrap_or_default();
        change(&mut metrics);
        write_json(logs.store(), &key, &metrics)
    }

    /// Puts an archive's originals back in place of the summary that replaced them; entries
    /// appended since stay. The archive is removed once its entries are live again.
    pub async fn rollback(&self, archive_key: &str) -> Result<(), CompactionError> {
        let refused = || {
            CompactionError::Busy("A compaction is running; roll back when it has finished.".into())
        };
        if self.busy.get() {
            return Err(refused());
        }
        let held = self.lock.acquire().await?;
        if self.busy.get() || self.lease_elsewhere()?.is_some() {
            return Err(refused());
        }
        self.busy.set(true);
        self.set_phase(Phase::RollingBack);
        let outcome = self.restore_archive(archive_key);
        match &outcome {
            Ok(()) => {
                self.set_phase(Phase::Idle);
                self.emit(CompactionEvent::RolledBack {
                    archive_key: archive_key.to_owned(),
                });
            }
            Err(err) => {
                self.set_phase(Phase::Error);
                self.emit(CompactionEvent::Error {
                    code: err.code().as_str(),
                    message: err.to_string(),
                    phase: Phase::RollingBack,
                });
            }
        }
        drop(held);
        self.busy.set(false);
        outcome
    }

    fn restore_archive(&self, archive_key: &str) -> Result<(), CompactionError> {
        let archive = self.read_archive(archive_key)?;
        let last = archive.iterations.iter().copied().max().unwrap_or(0);
        let logs = self.logs.borrow();
        let now = logs.read()?;
        let positions = archive.positions.as_ref();
        let restored = restore(&now.parsed, &archive.data.into(), positions, last)
            .map_err(|conflict| CompactionError::NotAllowed(conflict.0))?;
        let restored = RawLogs::encode(&restored);
        if let Err(err) = logs.write_changed(&restored, &now.raw) {
            let _ = logs.write_changed(&now.raw, &restored);
            return Err(err.into());
        }
        // The archive is the only other copy: it goes only once the logs read back as written.
        if logs.raw_logs()? != restored {
            return Err(CompactionError::Busy(
                "The logs changed while the archive was put back; the archive is kept, roll \
                 back again."
                    .into(),
            ));
        }
        logs.store().remove(archive_key)?;
        Ok(())
    }

    /// The archives of these logs, newest first, expired ones excluded.
    pub fn archives(&self) -> Result<Vec<ArchiveInfo>, StorageError> {
        let logs = self.logs.borrow();
        let now = self.now();
        let (infos, _) = list_archives(logs.store(), &self.keys)?;
        Ok(infos
            .into_iter()
            .filter(|a| a.expires_at as f64 > now)
            .collect())
    }

    /// One archive, whole.
    pub fn read_archive(&self, key: &str) -> Result<Archive, CompactionError> {
        let logs = self.logs.borrow();
        if self.keys.archive_timestamp(key).is_none() {
            return Err(CompactionError::NotAllowed(format!(
                "\"{key}\" is not an archive key of these logs"
            )));
        }
        read_archive(logs.store(), key)?
            .ok_or_else(|| CompactionError::NotAllowed(format!("There is no archive \"{key}\".")))
    }

    /// Removes one archive; refused while a compaction runs here or in another tab (its archive
    /// may be the only copy of the originals until the swap is done).
    pub fn delete_archive(&self, key: &str) -> Result<(), CompactionError> {
        if self.busy.get() || self.lease_elsewhere()?.is_some() {
            return Err(CompactionError::Busy(
                "A compaction is running; delete archives when it has finished.".into(),
            ));
        }
        self.read_archive(key)?;
        Ok(self.logs.borrow().store().remove(key)?)
    }

    /// Removes expired archives; returns how many.
    pub fn purge_expired_archives(&self) -> Result<usize, StorageError> {
        let logs = self.logs.borrow();
        Ok(enforce_policy(logs.store(), &self.keys, self.now(), usize::MAX, None)?.len())
    }

    /// The persisted metrics.
    pub fn metrics(&self) -> Result<CompactionMetrics, StorageError> {
        let logs = self.logs.borrow();
        Ok(read_value(logs.store(), &self.keys.metrics())?.unwrap_or_default())
    }
}
