//! One compaction's state, passed along its rungs, and what it tells the app as it goes: the
//! phase and progress, the beat while a call or a wait lasts, the breaks that keep the page's
//! tasks short.

use super::Compactor;
use crate::core::error::CompactionError;
use crate::core::model::clearing::Rung;
use crate::core::model::phase::Phase;
use crate::core::model::settings::Trigger;
use crate::core::ports::cancel::Cancel;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::ports::timer::SLICE_MS;
use crate::core::providers::attempts::Attempts;
use crate::core::store::summary_cache::CachedSummary;

/// One compaction's state, passed along the run (never kept on the compactor).
pub(super) struct Run {
    pub(super) trigger: Trigger,
    pub(super) cancel: Cancel,
    /// The rung asked for, if any.
    pub(super) rung: Option<Rung>,
    /// Whether the clearing rung runs first (see [`Compactor::compact_claimed`]).
    pub(super) clears: bool,
    pub(super) started_ms: f64,
    /// Progress reported so far (never goes down).
    percent: u8,
    /// The phase last entered, and its message.
    phase: Phase,
    message: String,
    /// The provider calls made, what they cost, who answered.
    pub(super) attempts: Attempts,
    /// When the work since the last break of the page's task began (ms).
    pub(super) working_since_ms: f64,
    /// A paid answer that was accepted: cached once the run ends, whatever happens to it after
    /// (a storage failure is retried without a call).
    pub(super) answered: Option<CachedSummary>,
    /// Whether the archive is written: from then on the compaction completes.
    pub(super) archived: bool,
    /// Whether the origin's storage was under pressure as it began: no summary cache then.
    pub(super) pressed: bool,
    /// The seconds the provider still rests, when this run did not ask it for that reason.
    pub(super) rested_s: Option<u64>,
    /// Whether it runs in the background of the loop (see [`super::Claim::in_background`]).
    pub(super) background: bool,
    /// Told as the summary is asked for, in the background.
    pub(super) started: Option<Started>,
}

impl Run {
    /// A run started by `trigger` at `now_ms`, stopped by `cancel`, of `rung` only if given.
    pub(super) fn new(trigger: Trigger, cancel: Cancel, rung: Option<Rung>, now_ms: f64) -> Self {
        Run {
            trigger,
            cancel,
            rung,
            clears: false,
            started_ms: now_ms,
            percent: 0,
            phase: Phase::Idle,
            message: String::new(),
            attempts: Attempts::default(),
            working_since_ms: now_ms,
            answered: None,
            archived: false,
            pressed: false,
            rested_s: None,
            background: false,
            started: None,
        }
    }
}

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// Lets the page's other tasks run (input, frames, the app's own work) when this compaction
    /// has worked [`SLICE_MS`] since the last break, so that a big compaction is several
    /// short tasks instead of one long one (small compactions never wait); then honours a
    /// cancellation, until the archive is written.
    pub(super) async fn take_a_break(&self, run: &mut Run) -> Result<(), CompactionError> {
        self.pause(run).await;
        match run.cancel.is_cancelled() && !run.archived {
            true => Err(CompactionError::Aborted),
            false => Ok(()),
        }
    }

    /// The break of [`Compactor::take_a_break`], without the cancellation.
    pub(super) async fn pause(&self, run: &mut Run) {
        if self.now() - run.working_since_ms >= SLICE_MS {
            self.timer.sleep(0).await;
            run.working_since_ms = self.now();
        }
    }

    /// Enters `phase` of `run` with `message` (the phase's own when `None`); renews the lease.
    pub(super) fn advance(&self, run: &mut Run, phase: Phase, message: Option<String>) {
        run.percent = run.percent.max(phase.progress_percent(run.attempts.count));
        run.message = message.unwrap_or_else(|| phase.message().to_owned());
        run.phase = phase;
        self.beat(run);
    }

    /// Tells the app again where `run` stands (its phase, percent and message, the time
    /// elapsed now), and renews the lease: while a call or a wait lasts, at least every 250 ms.
    pub(super) fn beat(&self, run: &Run) {
        self.shelf.renew_lease();
        let elapsed_ms = (self.now() - run.started_ms).max(0.0);
        self.events
            .progress(run.phase, run.percent, run.message.clone(), elapsed_ms);
    }

    /// Milliseconds since `run` started.
    pub(super) fn elapsed(&self, run: &Run) -> f64 {
        (self.now() - run.started_ms).max(0.0)
    }
}

/// What a compaction in the background tells as it asks for its summary: the first and last
/// iteration the summary replaces.
pub struct Started(Box<dyn FnOnce([u32; 2])>);

impl Started {
    /// A `Started` that calls `tell` once, with the iterations.
    pub fn new(tell: impl FnOnce([u32; 2]) + 'static) -> Self {
        Started(Box::new(tell))
    }

    /// Tells the iterations the summary replaces.
    pub(super) fn tell(self, iterations: [u32; 2]) {
        (self.0)(iterations);
    }
}

impl std::fmt::Debug for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Started")
    }
}
