//! One compaction, start to end: the lease, the run through the steps, the provider calls with
//! their retries and cancellation, and the record of a failure.

use std::future::Future;

use super::run_lock::RunLock;
use super::Compactor;
use crate::core::error::CompactionError;
use crate::core::json::write::ToJson;
use crate::core::model::clearing::Rung;
use crate::core::model::facts::Coverage;
use crate::core::model::outcome::AnswerFormat;
use crate::core::model::outcome::{saving, CompactionResult};
use crate::core::model::phase::Phase;
use crate::core::model::reasons::{BusyReason, Refusal};
use crate::core::model::settings::Trigger;
use crate::core::ports::cancel::Cancel;
use crate::core::ports::clock::{iso_timestamp, Clock};
use crate::core::ports::events::CompactionEvent;
use crate::core::ports::storage::KeyValueStore;
use crate::core::ports::timer::race_deadline;
use crate::core::providers::attempts::{Asking, AttemptEvent, Attempts, PROGRESS_EVERY_MS};
use crate::core::providers::port::{GenerationSettings, SummaryRequest};
use crate::core::run::view::{clearing_of, Observed, Preparing};
use crate::core::steps::check::{Accepted, SummaryCheck};
use crate::core::steps::clearing::{ClearedEntry, ClearingChoice};
use crate::core::steps::rules::{allowed, allowed_to_clear, waits, RuleInput};
use crate::core::steps::summary_budget::SummaryBudget;
use crate::core::store::archive_record::{Archive, ArchiveMetadata};
use crate::core::store::journal::Commit;
use crate::core::store::page::PageClaim;
use crate::core::store::summary_cache::{input_hash, CachedSummary};

/// One compaction's hold on the page: every compactor and shelf over the logs in this page is
/// busy from [`Compactor::claim`] until this is dropped (the compaction ended, or its future
/// was dropped unpolled).
#[derive(Debug)]
pub struct Claim {
    _page: PageClaim,
    trigger: Trigger,
    cancel: Cancel,
    rung: Option<Rung>,
}

impl Claim {
    /// The compaction runs `rung` only (`None`: the ladder decides, see
    /// [`Compactor::compact_claimed`]).
    pub fn with_rung(mut self, rung: Option<Rung>) -> Self {
        self.rung = rung;
        self
    }
}

/// One compaction's state, passed along the run (never kept on the compactor).
struct Run {
    trigger: Trigger,
    cancel: Cancel,
    /// The rung asked for, if any.
    rung: Option<Rung>,
    /// Whether the clearing rung runs first (see [`Compactor::compact_claimed`]).
    clears: bool,
    started_ms: f64,
    /// Progress reported so far (never goes down).
    percent: u8,
    /// The phase last entered, and its message.
    phase: Phase,
    message: String,
    /// The provider calls made, what they cost, who answered.
    attempts: Attempts,
    /// When the work since the last break of the page's task began (ms).
    working_since_ms: f64,
    /// A paid answer that was accepted: cached once the run ends, whatever happens to it after
    /// (a storage failure is retried without a call).
    answered: Option<CachedSummary>,
    /// Whether the archive is written: from then on the compaction completes.
    archived: bool,
    /// Whether the origin's storage was under pressure as it began: no summary cache then.
    pressed: bool,
}

/// Where the ladder stands after its clearing rung.
enum Ladder {
    /// The clearing was asked for alone, or brought usage under `recommendedUsage`.
    Done(CompactionResult),
    /// A summary follows, of the logs as now observed, after the clearing's result (if one ran).
    Summarise(Observed, Option<Box<CompactionResult>>),
}

/// What a swap puts in place: the logs as observed, the commit, the accepted summary and the
/// archive that holds the originals.
struct Swapped<'a> {
    observed: &'a Observed,
    commit: &'a Commit<'a>,
    accepted: &'a Accepted,
    archive_key: &'a str,
}

/// How often a waiting compaction looks whether the running iteration finished, in ms.
const WAIT_POLL_MS: u32 = 50;

/// Work (ms) after which a compaction lets the page run before its next step: the browser
/// counts a task of 50 ms or more as long (input waits, frames drop), and no stage of a
/// compaction of 733K tokens takes 35 ms (`bench/big-entries.mjs`); a break costs a message
/// hop, so a compaction of a few milliseconds takes none.
const BREAK_AFTER_MS: f64 = 10.0;

/// How much of the logs the clearing rung reads between two breaks while it chooses the bodies
/// (about 15 ms in Chromium on this machine).
const CHOICE_SLICE_BYTES: usize = 512 * 1024;

/// Usage and tokens of `observed`, as its archive records them.
fn metadata_of(observed: &Observed) -> ArchiveMetadata {
    ArchiveMetadata {
        context_usage_before: observed.input.usage,
        total_tokens_before: observed.input.log_tokens,
    }
}

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// Runs one compaction. Whatever the error, the logs are as before (plus any appends).
    /// The compactor is claimed when this is called (see [`Compactor::claim`]).
    pub fn compact(
        &self,
        trigger: Trigger,
    ) -> impl Future<Output = Result<CompactionResult, CompactionError>> + '_ {
        self.compact_until(trigger, Cancel::default())
    }

    /// Runs one compaction that `cancel` (or [`Compactor::abort`]) stops with
    /// [`CompactionError::Aborted`] until its archive is written; after that it completes.
    /// The compactor is claimed when this is called (see [`Compactor::claim`]).
    pub fn compact_until(
        &self,
        trigger: Trigger,
        cancel: Cancel,
    ) -> impl Future<Output = Result<CompactionResult, CompactionError>> + '_ {
        let claim = self.claim(trigger, cancel);
        async move { self.compact_claimed(claim?).await }
    }

    /// Claims this compactor for one compaction now, not when the compaction's future is first
    /// polled: a compaction asked for while another runs is `Busy` even when the other has
    /// ended by the time the new one would start (a listener of `compaction_complete` that
    /// calls `compact()` is refused; it started a second compaction once).
    pub fn claim(&self, trigger: Trigger, cancel: Cancel) -> Result<Claim, CompactionError> {
        let page = self.shelf.page().claim();
        let page = page.ok_or(CompactionError::Busy(BusyReason::Compacting))?;
        // A refusal gives the page back as it drops the claim.
        if cancel.is_cancelled() {
            return Err(CompactionError::Aborted);
        }
        self.cancel.replace(cancel.clone());
        Ok(Claim {
            _page: page,
            trigger,
            cancel,
            rung: None,
        })
    }

    /// Runs the compaction `claim` (of this compactor) was taken for: the ladder's rungs in
    /// order. A compaction the loop asks for (`auto`, `context_limit_error`) clears bulky
    /// bodies first (unless `clearing` is `false`) and summarises only when usage is still at
    /// `recommendedUsage` or more; the user's summarises; a claim `Claim::with_rung` runs
    /// that rung.
    pub async fn compact_claimed(&self, claim: Claim) -> Result<CompactionResult, CompactionError> {
        let mut run = Run {
            trigger: claim.trigger,
            cancel: claim.cancel.clone(),
            rung: claim.rung,
            clears: false,
            started_ms: self.now(),
            percent: 0,
            phase: Phase::Idle,
            message: String::new(),
            attempts: Attempts::default(),
            working_since_ms: self.now(),
            answered: None,
            archived: false,
            pressed: false,
        };
        let outcome = self.compact_leased(&mut run).await;
        drop(claim);
        outcome
    }

    /// Cancels the running compaction, if any (see [`Compactor::compact_until`]).
    pub fn abort(&self) {
        if self.busy() {
            self.cancel.borrow().cancel();
        }
    }

    /// Takes the lease, runs the compaction, records a failure and gives the lease back, each
    /// write under the store lock (see [`RunLock`]).
    async fn compact_leased(&self, run: &mut Run) -> Result<CompactionResult, CompactionError> {
        self.relieve_storage(run).await;
        let mut lock = RunLock::taken(self.shelf.hold().await?);
        run.working_since_ms = self.now();
        self.shelf.take_lease(&self.settings)?;
        let outcome = self.steps(run, &mut lock).await;
        let held = match lock.still_held() {
            Some(held) => Some(held),
            None => self.shelf.acquire().await.ok(),
        };
        if let Err(err) = &outcome {
            self.fail(run, err);
        }
        if let Some(answered) = run.answered.take().filter(|_| !run.pressed) {
            // A cache that cannot be written is only a cache.
            let _ = self
                .logs()
                .borrow()
                .summary_cache()
                .put(answered, self.now());
        }
        self.shelf.page().set_frozen(false);
        self.shelf.release_lease();
        drop(held);
        outcome
    }

    /// Acts before the quota: where the origin's storage is at least 80% full, the expired
    /// archives go first, then the app hears it (`storage_pressure`), and this run writes no
    /// summary cache. Only a gauge: a failure to read it or to purge does not stop the run.
    async fn relieve_storage(&self, run: &mut Run) {
        if let Ok(Some((estimate, purged))) = self.shelf.relieve().await {
            run.pressed = true;
            self.events.emit(CompactionEvent::StoragePressure {
                usage: estimate.usage,
                quota: estimate.quota,
                share: estimate.share(),
                purged,
            });
        }
    }

    fn fail(&self, run: &Run, err: &CompactionError) {
        let stopped_in = self.events.phase();
        let refused = matches!(err, CompactionError::NotAllowed(_));
        if !refused && !matches!(err, CompactionError::Aborted) {
            let (code, at) = (err.code().as_str(), iso_timestamp(self.now()));
            let (count, usage) = (run.attempts.count, run.attempts.usage);
            self.record(|m| m.record_failure(code, count, usage, at));
        }
        if !refused {
            self.shelf.page().set_frozen(false);
            self.events.enter(Phase::Error);
        }
        if run.trigger == Trigger::Auto {
            let tokens = self.logs().borrow().estimate_tokens().unwrap_or(0);
            self.guard
                .set(self.guard.get().hold(&self.settings, tokens));
        }
        self.events.error(err, stopped_in, err.to_string());
    }

    /// The compaction itself, step by step; `lock` is given up while the provider works.
    async fn steps(
        &self,
        run: &mut Run,
        lock: &mut RunLock,
    ) -> Result<CompactionResult, CompactionError> {
        // A journal an interrupted compaction left is settled first (a corrupt one stops the
        // compaction: its archive key must not be guessed); the lease is held.
        self.settle_journal().await?;
        run.clears = self.clears(run)?;
        let observed = self.open(run)?;
        // Other tabs append while the model works; the swap picks their entries up.
        lock.give_up();
        self.take_a_break(run).await?;
        let waited = self.wait_for_iteration(run).await?;
        let observed = self.gather(run, observed, waited)?;
        let (observed, cleared) = match self.clear_first(run, lock, observed).await? {
            Ladder::Done(result) => return Ok(self.finish(run, result)),
            Ladder::Summarise(observed, cleared) => (observed, cleared),
        };
        self.advance(run, Phase::BuildingPrompt, None);
        let mut preparing = Preparing::of(&observed);
        let prepared = loop {
            self.take_a_break(run).await?;
            let next = preparing.next_stage(&self.view(&self.logs().borrow()))?;
            if let Some(prepared) = next {
                break prepared;
            }
        };
        if prepared.selection.is_empty() {
            return Err(CompactionError::NotAllowed(Refusal::NothingToCompact));
        }
        self.take_a_break(run).await?;
        let request = SummaryRequest {
            prompt: &prepared.prompt,
            selection: &prepared.selection,
            digest: &prepared.digest,
            ledger: &prepared.ledger,
            settings: &GenerationSettings::of(&self.settings, self.provider.model()),
        };
        let accepted = self.summarise(run, &request, prepared.budget).await?;
        lock.taken_again(self.shelf.hold().await?);
        run.working_since_ms = self.now();
        // The last moment a cancellation is honoured: from here on the compaction completes.
        if run.cancel.is_cancelled() {
            return Err(CompactionError::Aborted);
        }
        let commit = Commit {
            selection: &prepared.selection,
            ledger: &prepared.ledger,
            summary: &accepted.summary,
            trigger: run.trigger,
            lifetime_ms: self.settings.archive_lifetime_ms(),
            metadata: metadata_of(&observed),
        };
        self.advance(run, Phase::Archiving, None);
        let (archive_key, timestamp) = self.shelf.next_key()?;
        let archive = Archive::of(
            commit.selection,
            commit.ledger,
            commit.trigger,
            timestamp,
            commit.lifetime_ms,
            commit.metadata.clone(),
        );
        self.write_archive(&archive_key, timestamp, &archive)
            .await?;
        run.archived = true;
        self.take_a_break(run).await?;
        self.advance(run, Phase::Replacing, None);
        let swapped = Swapped {
            observed: &observed,
            commit: &commit,
            accepted: &accepted,
            archive_key: &archive_key,
        };
        let ran = &*run;
        let result = self
            .shelf
            .swap_in(self.settings.max_archives, &|journal, archives| {
                let before = &swapped.observed.read;
                let result = |added| self.result_of(ran, &swapped, added);
                journal.swap_in(archives, before, swapped.commit, &archive_key, &result)
            })
            .await?;
        let result = match cleared {
            Some(clearing) => result.after(*clearing),
            None => result,
        };
        Ok(self.finish(run, result))
    }

    /// Writes `archive` under `key` (its `timestamp`), durable before any log changes, and
    /// tells the app.
    async fn write_archive(
        &self,
        key: &str,
        timestamp: u64,
        archive: &dyn ToJson,
    ) -> Result<(), CompactionError> {
        self.shelf.archive(key, archive).await?;
        self.events.emit(CompactionEvent::Archived {
            archive_key: key.to_owned(),
            timestamp,
        });
        Ok(())
    }

    /// The ladder's clearing rung, when this compaction runs it: under the store lock, the
    /// bulky bodies of older iterations go to an archive of their own, then their placeholders
    /// into the logs (the journal's order), no model call. Done when the clearing was asked
    /// for alone or brought usage under `recommendedUsage`; else a summary follows, of the
    /// logs as they are now.
    async fn clear_first(
        &self,
        run: &mut Run,
        lock: &mut RunLock,
        observed: Observed,
    ) -> Result<Ladder, CompactionError> {
        let only = run.rung == Some(Rung::Clear);
        if !run.clears {
            return Ok(Ladder::Summarise(observed, None));
        }
        lock.taken_again(self.shelf.hold().await?);
        run.working_since_ms = self.now();
        if run.cancel.is_cancelled() {
            return Err(CompactionError::Aborted);
        }
        let (key, timestamp) = self.shelf.next_key()?;
        let mut cleared = Vec::new();
        if let Some(clearing) = clearing_of(&observed, &self.settings, &key) {
            // Chosen a slice at a time, with a break between (a million tokens of bulky
            // results take longer than a task should).
            let mut choice = ClearingChoice::of(clearing.logs);
            while !choice.advance(&clearing, CHOICE_SLICE_BYTES) {
                self.take_a_break(run).await?;
            }
            cleared = choice.cleared;
        }
        self.take_a_break(run).await?;
        if cleared.is_empty() {
            lock.give_up();
            if only {
                return Err(CompactionError::NotAllowed(Refusal::NothingToClear));
            }
            // Nothing cleared: the summary's own rules decide, as for any compaction.
            allowed(&self.settings, &observed.input, run.trigger)?;
            return Ok(Ladder::Summarise(observed, None));
        }
        self.advance(run, Phase::Clearing, None);
        let lifetime_ms = self.settings.archive_lifetime_ms();
        let metadata = metadata_of(&observed);
        let logs = &observed.read.parsed;
        let archive = Archive::cleared(
            logs,
            &cleared,
            run.trigger,
            timestamp,
            lifetime_ms,
            metadata,
        );
        self.write_archive(&key, timestamp, &archive).await?;
        // The archive is written: the clearing completes (a break, no cancel).
        self.pause(run).await;
        let ran = &*run;
        let result = self
            .shelf
            .swap_in(self.settings.max_archives, &|journal, archives| {
                let result = |added| self.cleared_result(ran, &observed, &cleared, &key, added);
                journal.clear_in(archives, &observed.read, &cleared, &key, &result)
            })
            .await?;
        if only || result.context_usage_after < self.settings.recommended_usage {
            return Ok(Ladder::Done(result));
        }
        lock.give_up();
        self.take_a_break(run).await?;
        let observed = self.view(&self.logs().borrow()).observe()?;
        // A summary of what is left only where its own rules allow it.
        if allowed(&self.settings, &observed.input, run.trigger).is_err() {
            return Ok(Ladder::Done(result));
        }
        Ok(Ladder::Summarise(observed, Some(Box::new(result))))
    }

    /// The result of a clearing of `observed` that took `cleared` into the archive `key`,
    /// `appended` tokens appended meanwhile.
    fn cleared_result(
        &self,
        run: &Run,
        observed: &Observed,
        cleared: &[ClearedEntry],
        key: &str,
        appended: usize,
    ) -> CompactionResult {
        let input = &observed.input;
        let freed: usize = cleared.iter().map(|entry| entry.tokens).sum();
        let tokens_after = input.log_tokens.saturating_sub(freed) + appended;
        let (tokens_saved, reduction) = saving(input.log_tokens, tokens_after);
        let iterations = cleared.iter().map(|entry| entry.iteration);
        let first = iterations.clone().min().unwrap_or(0);
        CompactionResult {
            iterations: [first, iterations.max().unwrap_or(0)],
            tokens_before: input.log_tokens,
            tokens_after,
            tokens_saved,
            reduction,
            context_usage_before: input.usage,
            context_usage_after: self
                .view(&self.logs().borrow())
                .usage_at(tokens_after, false),
            attempts: 0,
            duration_ms: (self.now() - run.started_ms).max(0.0),
            archive_key: key.to_owned(),
            summary: String::new(),
            usage: None,
            model: None,
            coverage: Coverage::default(),
            unverified: Vec::new(),
            chunks: 0,
            answer_format: AnswerFormat::default(),
            cached: false,
            injections: Vec::new(),
            rung: Rung::Clear,
            cleared: cleared.iter().map(ClearedEntry::body).collect(),
        }
    }

    /// Whether `run` clears first: the rung asked for, else a compaction the loop asks for
    /// while `clearing` is on. The clear rung asked for while it is off is refused.
    fn clears(&self, run: &Run) -> Result<bool, CompactionError> {
        let on = self.settings.clearing.rules().is_some();
        match run.rung {
            Some(Rung::Summarize) => Ok(false),
            Some(Rung::Clear) if !on => Err(CompactionError::NotAllowed(Refusal::NothingToClear)),
            Some(Rung::Clear) => Ok(true),
            None => Ok(on && run.trigger != Trigger::User),
        }
    }

    /// Whether the rules let `run` go on with the logs as `input` counts them: a compaction
    /// that clears first is not held back by the rules of a summary's cost (it summarises only
    /// if they allow it once it has cleared).
    fn admit(&self, run: &Run, input: &RuleInput) -> Result<(), CompactionError> {
        match run.clears {
            true => allowed_to_clear(&self.settings, input, run.trigger),
            false => allowed(&self.settings, input, run.trigger),
        }
    }

    /// Reads the logs, and starts if the rules allow.
    fn open(&self, run: &Run) -> Result<Observed, CompactionError> {
        let observed = self.view(&self.logs().borrow()).observe()?;
        self.admit(run, &observed.input)?;
        self.events.emit(CompactionEvent::Start {
            trigger: run.trigger,
            iteration: observed.input.current_iteration,
            context_usage: observed.input.usage,
        });
        Ok(observed)
    }
    /// Waits while an iteration runs that a compaction with this trigger waits for (a
    /// compaction the loop itself asks for does not wait for the iteration this page runs: the
    /// loop finishes it only after the await; it stays verbatim either way). Whether it waited.
    async fn wait_for_iteration(&self, run: &mut Run) -> Result<bool, CompactionError> {
        let trigger = run.trigger;
        let waiting = || {
            let logs = self.logs().borrow();
            waits(
                logs.iteration_running(),
                logs.iteration_running_here(),
                trigger,
            )
        };
        if !waiting() {
            return Ok(false);
        }
        self.advance(run, Phase::Waiting, None);
        let mut since_beat_ms = 0;
        while waiting() {
            let poll = self.timer.sleep(WAIT_POLL_MS);
            let polled = race_deadline(poll, run.cancel.cancelled()).await;
            polled.ok_or(CompactionError::Aborted)?;
            since_beat_ms += WAIT_POLL_MS;
            if since_beat_ms >= PROGRESS_EVERY_MS {
                since_beat_ms = 0;
                self.beat(run);
            } else {
                self.shelf.renew_lease();
            }
        }
        Ok(true)
    }

    /// Freezes the logs and gathers them: read again after a wait (the swap keeps any appends
    /// either way), and the rules asked again.
    #[inline(always)]
    fn gather(
        &self,
        run: &mut Run,
        observed: Observed,
        waited: bool,
    ) -> Result<Observed, CompactionError> {
        self.advance(run, Phase::Freezing, None);
        self.shelf.page().set_frozen(true);
        self.advance(run, Phase::Gathering, None);
        if !waited {
            return Ok(observed);
        }
        let observed = self.view(&self.logs().borrow()).observe()?;
        self.admit(run, &observed.input)?;
        Ok(observed)
    }

    /// The result of the compaction `swapped` completed, the summary's entry taking `added`
    /// tokens.
    fn result_of(&self, run: &Run, swapped: &Swapped<'_>, added: usize) -> CompactionResult {
        let Swapped {
            observed,
            commit,
            accepted,
            archive_key,
        } = swapped;
        let input = &observed.input;
        let (tokens_before, usage_before) = (input.log_tokens, input.usage);
        let kept_tokens = tokens_before - (input.summary_tokens + input.new_tokens);
        let tokens_after = kept_tokens + added;
        let (tokens_saved, reduction) = saving(tokens_before, tokens_after);
        CompactionResult {
            iterations: [1, commit.selection.last],
            tokens_before,
            tokens_after,
            tokens_saved,
            reduction,
            context_usage_before: usage_before,
            // A prompt size the app reported described the prompt before the compaction.
            context_usage_after: self
                .view(&self.logs().borrow())
                .usage_at(tokens_after, false),
            attempts: run.attempts.count,
            duration_ms: (self.now() - run.started_ms).max(0.0),
            archive_key: (*archive_key).to_owned(),
            coverage: accepted.coverage.in_archive(archive_key),
            unverified: accepted.unverified.clone(),
            summary: accepted.summary.clone(),
            usage: run.attempts.usage,
            model: run.attempts.model.clone(),
            chunks: run.attempts.parts,
            answer_format: accepted.answer_format,
            cached: run.attempts.cached,
            injections: accepted.injections.clone(),
            rung: Rung::Summarize,
            cleared: Vec::new(),
        }
    }

    /// Records a swapped-in `result`, unfreezes the logs and tells the app.
    #[inline(always)]
    fn finish(&self, run: &mut Run, result: CompactionResult) -> CompactionResult {
        self.usage.forget_report();
        self.advance(run, Phase::RecordingMetrics, None);
        let at = iso_timestamp(self.now());
        self.record(|m| m.record_result(&result, at));
        let guard = self.guard.get();
        self.guard
            .set(guard.after_success(&self.settings, run.trigger, &result));
        self.advance(run, Phase::Unfreezing, None);
        self.shelf.page().set_frozen(false);
        self.advance(run, Phase::Complete, None);
        self.events.emit(CompactionEvent::Complete {
            result: Box::new(result.clone()),
        });
        result
    }

    /// Lets the page's other tasks run (input, frames, the app's own work) when this compaction
    /// has worked [`BREAK_AFTER_MS`] since the last break, so that a big compaction is several
    /// short tasks instead of one long one (small compactions never wait); then honours a
    /// cancellation, until the archive is written.
    async fn take_a_break(&self, run: &mut Run) -> Result<(), CompactionError> {
        self.pause(run).await;
        match run.cancel.is_cancelled() && !run.archived {
            true => Err(CompactionError::Aborted),
            false => Ok(()),
        }
    }

    /// The break of [`Compactor::take_a_break`], without the cancellation.
    async fn pause(&self, run: &mut Run) {
        if self.now() - run.working_since_ms >= BREAK_AFTER_MS {
            self.timer.sleep(0).await;
            run.working_since_ms = self.now();
        }
    }

    /// Asks the provider until an answer within `budget` passes the check, reporting each step
    /// as progress.
    async fn summarise(
        &self,
        run: &mut Run,
        request: &SummaryRequest<'_>,
        budget: SummaryBudget,
    ) -> Result<Accepted, CompactionError> {
        let asking = Asking {
            provider: self.provider.as_ref(),
            timer: self.timer.as_ref(),
            settings: &self.settings,
            cancel: run.cancel.clone(),
        };
        let (selection, ledger) = (request.selection, request.ledger);
        let check = SummaryCheck::of(selection, ledger, budget, &self.settings);
        // A paid answer is cached by its exact input; the offline summariser costs nothing.
        let input = (self.settings.summary_cache && !self.provider.grounded())
            .then(|| input_hash(request.prompt, &request.settings.model, &self.settings));
        if let Some(input) = &input {
            let cached = self.logs().borrow().summary_cache().get(input, self.now());
            if let Some(cached) = cached {
                run.attempts.cached = true;
                let message = "The same input was summarised before: its summary is taken from \
                               the cache, with no call";
                self.advance(run, Phase::Validating, Some(message.into()));
                return Ok(cached.accepted(&check));
            }
        }
        let mut attempts = std::mem::take(&mut run.attempts);
        let report = |event: AttemptEvent| {
            match event {
                AttemptEvent::Still => return self.beat(run),
                AttemptEvent::Asking { attempt } => run.attempts.count = attempt,
                _ => {}
            }
            let (phase, message, announced) = event.progress(self.settings.max_retries);
            if let Some(announced) = announced {
                self.events.emit(announced);
            }
            self.advance(run, phase, message);
        };
        let summary = asking
            .summarise_all(request, &check, &mut attempts, report)
            .await;
        run.attempts = attempts;
        if let (Ok(accepted), Some(input)) = (&summary, input) {
            let expires_at = self.now() + self.settings.archive_lifetime_ms();
            run.answered = Some(CachedSummary::of(input, accepted, expires_at));
        }
        summary
    }

    /// Enters `phase` of `run` with `message` (the phase's own when `None`); renews the lease.
    fn advance(&self, run: &mut Run, phase: Phase, message: Option<String>) {
        run.percent = run.percent.max(phase.progress_percent(run.attempts.count));
        run.message = message.unwrap_or_else(|| phase.message().to_owned());
        run.phase = phase;
        self.beat(run);
    }

    /// Tells the app again where `run` stands (its phase, percent and message, the time
    /// elapsed now), and renews the lease: while a call or a wait lasts, at least every 250 ms.
    fn beat(&self, run: &Run) {
        self.shelf.renew_lease();
        let elapsed_ms = (self.now() - run.started_ms).max(0.0);
        self.events
            .progress(run.phase, run.percent, run.message.clone(), elapsed_ms);
    }
}
