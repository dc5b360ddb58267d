//! The ladder: one compaction, start to end, its rungs in order — the lease and the journal
//! left behind, the rules, the wait for a running iteration, the clearing rung
//! ([`super::clear`]), the summary rung ([`super::summarize`]) and, when every attempt of the
//! model fails, the fallback rung ([`super::fallback`]); each rung ends in the one shared step
//! of [`super::ending`]. A failure is recorded and told here.

use std::future::Future;

use super::clear::Ladder;
use super::ending::Rewrite;
use super::run::{Run, Started};
use super::run_lock::RunLock;
use super::summarize::NOTHING_TO_COMPACT;
use super::Compactor;
use crate::core::error::{ClearingStood, CompactionError};
use crate::core::model::clearing::Rung;
use crate::core::model::outcome::CompactionResult;
use crate::core::model::phase::Phase;
use crate::core::model::reasons::BusyReason;
use crate::core::model::settings::Trigger;
use crate::core::ports::cancel::Cancel;
use crate::core::ports::clock::{iso_timestamp, Clock};
use crate::core::ports::events::CompactionEvent;
use crate::core::ports::storage::KeyValueStore;
use crate::core::ports::timer::race_deadline;
use crate::core::providers::attempts::PROGRESS_EVERY_MS;
use crate::core::run::view::Observed;
use crate::core::steps::rules::{allowed, allowed_to_clear, waits, RuleInput};
use crate::core::store::page::PageClaim;

/// How often a waiting compaction looks whether the running iteration finished, in ms.
const WAIT_POLL_MS: u32 = 50;

/// One compaction's hold on the page: every compactor and shelf over the logs in this page is
/// busy from [`Compactor::claim`] until this is dropped (the compaction ended, or its future
/// was dropped unpolled).
#[derive(Debug)]
pub struct Claim {
    _page: PageClaim,
    trigger: Trigger,
    cancel: Cancel,
    rung: Option<Rung>,
    background: Option<Started>,
}

impl Claim {
    /// The compaction runs `rung` only (`None`: the ladder decides, see
    /// [`Compactor::compact_claimed`]).
    pub fn with_rung(mut self, rung: Option<Rung>) -> Self {
        self.rung = rung;
        self
    }

    /// The compaction runs in the background of the loop: the logs are not frozen (the loop
    /// goes on appending), `started` is told as the summary is asked for, and the summary is
    /// swapped in once this page's running iteration has finished.
    pub fn in_background(mut self, started: Started) -> Self {
        self.background = Some(started);
        self
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
            background: None,
        })
    }

    /// Runs the compaction `claim` (of this compactor) was taken for: the ladder's rungs in
    /// order. A compaction the loop asks for (`auto`, `context_limit_error`) clears bulky
    /// bodies first (unless `clearing` is `false`) and summarises only when usage is still at
    /// `recommendedUsage` or more; the user's summarises; a claim `Claim::with_rung` runs
    /// that rung. A summary the model cannot give falls back to the package's own where
    /// `fallback` covers the trigger.
    pub async fn compact_claimed(
        &self,
        mut claim: Claim,
    ) -> Result<CompactionResult, CompactionError> {
        let mut run = Run::new(claim.trigger, claim.cancel.clone(), claim.rung, self.now());
        run.background = claim.background.is_some();
        run.started = claim.background.take();
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

    /// Takes the lease, climbs the ladder, records a failure and gives the lease back, each
    /// write under the store lock (see [`RunLock`]).
    async fn compact_leased(&self, run: &mut Run) -> Result<CompactionResult, CompactionError> {
        self.relieve_storage(run).await;
        let mut lock = RunLock::taken(self.shelf.hold().await?);
        run.working_since_ms = self.now();
        self.shelf.take_lease(&self.settings)?;
        let outcome = self.climb(run, &mut lock).await;
        let held = match lock.still_held() {
            Some(held) => Some(held),
            None => self.shelf.acquire().await.ok(),
        };
        if let Err(err) = &outcome {
            self.fail(run, err);
        }
        let saved = outcome.as_ref().ok().map(|result| result.tokens_saved);
        if let Some(answered) = run
            .answered
            .take()
            .filter(|answered| !run.pressed && answered.worth_keeping(saved))
        {
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
        let refused = matches!(err.cause(), CompactionError::NotAllowed(_));
        let failed = !refused && !matches!(err.cause(), CompactionError::Aborted);
        // A clearing that stands is counted, whatever stopped the summary after it.
        let stood = err.clearing_stood();
        if failed || stood.is_some() {
            let (code, at) = (err.code().as_str(), iso_timestamp(self.now()));
            let (count, usage) = (run.attempts.count, run.attempts.usage);
            self.record(|m| {
                if let Some(stood) = stood {
                    m.record_clearing(&stood.cleared);
                }
                if failed {
                    m.record_failure(code, count, usage, at);
                }
            });
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

    /// The ladder itself, rung by rung; `lock` is given up while the provider works.
    async fn climb(
        &self,
        run: &mut Run,
        lock: &mut RunLock,
    ) -> Result<CompactionResult, CompactionError> {
        // A journal an interrupted compaction left is settled first (a corrupt one is set
        // aside: its archive key must not be guessed), and pins that do not read are set
        // aside; the lease is held.
        self.settle_journal().await?;
        run.clears = self.clears(run)?;
        let observed = self.open(run).await?;
        // Other tabs append while the model works; the swap picks their entries up.
        lock.give_up();
        self.take_a_break(run).await?;
        let waited = self.wait_for_iteration(run).await?;
        let observed = self.gather(run, observed, waited)?;
        let (observed, cleared, before) = match self.clear_first(run, lock, observed).await? {
            Ladder::Done(result) => return Ok(self.finish(run, result)),
            Ladder::Summarise(observed, None) => (observed, None, None),
            Ladder::Summarise(observed, Some((cleared, before))) => {
                (observed, Some(cleared), Some(before))
            }
        };
        // A failure from here on says that the clearing stands, if one ran.
        let stood = |err| after_clearing(err, cleared.as_deref());
        let prepared = self.prepare(run, &observed, before.as_ref());
        let prepared = prepared.await.map_err(stood)?;
        if let Some(started) = run.started.take() {
            started.tell([1, prepared.selection.last]);
        }
        let written = match self.summarise(run, &prepared).await {
            Ok(written) => written,
            Err(failure) => self.fall_back(run, &prepared, failure).map_err(stood)?,
        };
        self.wait_for_boundary(run).await.map_err(stood)?;
        let rewrite = Rewrite::Summary(&prepared, &written);
        let result = self.end(run, lock, &observed, rewrite).await;
        let result = result.and_then(|result| result.ok_or(NOTHING_TO_COMPACT));
        let result = result.map_err(stood)?;
        let result = match cleared {
            Some(clearing) => result.after(*clearing),
            None => result,
        };
        Ok(self.finish(run, result))
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

    /// Reads the logs, and starts if the rules allow. Reading megabytes of logs, placing their
    /// entries and counting their tokens (the reasoning log, then the others) are four tasks
    /// where the page needs it (one of 61 ms at 736K tokens before).
    async fn open(&self, run: &mut Run) -> Result<Observed, CompactionError> {
        let read = self.logs().borrow().read()?;
        self.pause(run).await;
        let mut counting = self.view(&self.logs().borrow()).placing(read);
        self.pause(run).await;
        counting.count_reasoning();
        self.pause(run).await;
        let observed = self.view(&self.logs().borrow()).counted(counting)?;
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
        self.wait_while(run, &waiting, None).await
    }

    /// Waits, in a compaction in the background, for the boundary after the iteration this
    /// page runs as its summary is ready: the summary is swapped in between two iterations of
    /// the loop, never in the middle of one.
    async fn wait_for_boundary(&self, run: &mut Run) -> Result<bool, CompactionError> {
        let finished = self.logs().borrow().iterations_finished_here();
        let background = run.background;
        let running = || {
            let logs = self.logs().borrow();
            background
                && logs.iteration_running_here()
                && logs.iterations_finished_here() == finished
        };
        let message = "The summary is ready: it is swapped in as the running iteration finishes";
        self.wait_while(run, &running, Some(message)).await
    }

    /// Waits in the phase `waiting` (told with `message`, else the phase's own) while `still`
    /// holds, polling every [`WAIT_POLL_MS`], renewing the lease and telling the app where
    /// `run` stands; a cancel stops the wait. Whether it waited.
    async fn wait_while(
        &self,
        run: &mut Run,
        still: &dyn Fn() -> bool,
        message: Option<&str>,
    ) -> Result<bool, CompactionError> {
        if !still() {
            return Ok(false);
        }
        self.advance(run, Phase::Waiting, message.map(str::to_owned));
        let mut since_beat_ms = 0;
        while still() {
            let poll = self.timer.sleep(WAIT_POLL_MS);
            let polled = race_deadline(poll, run.cancel.cancelled()).await;
            polled
                .filter(|_| !run.cancel.is_cancelled())
                .ok_or(CompactionError::Aborted)?;
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
        // In the background the loop goes on appending.
        self.shelf.page().set_frozen(!run.background);
        self.advance(run, Phase::Gathering, None);
        if !waited {
            return Ok(observed);
        }
        let observed = self.view(&self.logs().borrow()).observe()?;
        self.admit(run, &observed.input)?;
        Ok(observed)
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
}

/// `err`, the summary rung's, after the clearing `cleared` of the same compaction, if one
/// ran: the error saying that the clearing stands (a cancel included, which came too late for
/// it).
#[inline(never)]
fn after_clearing(err: CompactionError, cleared: Option<&CompactionResult>) -> CompactionError {
    match cleared {
        Some(clearing) => {
            let stood = ClearingStood {
                archive_key: clearing.archive_key.clone(),
                cleared: clearing.cleared.clone(),
            };
            CompactionError::AfterClearing(Box::new(err), stood)
        }
        None => err,
    }
}
