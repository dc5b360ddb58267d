//! The ladder's clearing rung: bulky bodies of older iterations move to an archive of their
//! own and placeholders take their place, with no model call. It ends the compaction unless a
//! summary is worth its call after it ([`summary_follows_clearing`]) and was not asked for alone;
//! else a summary follows, of the logs as they are then.

use super::ending::Rewrite;
use super::run::Run;
use super::run_lock::RunLock;
use super::Compactor;
use crate::core::error::CompactionError;
use crate::core::log::snapshot::LogSnapshot;
use crate::core::model::clearing::Rung;
use crate::core::model::outcome::CompactionResult;
use crate::core::model::reasons::Refusal;
use crate::core::model::settings::Trigger;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::run::view::{clearing_of, Observed};
use crate::core::steps::clearing::{ClearedEntry, ClearingChoice};
use crate::core::steps::rules::{allowed, allowed_after_clearing, summary_follows_clearing};

/// Where the ladder stands after its clearing rung.
// Returned once per compaction and moved at once: boxing the result would cost an allocation
// and code for nothing.
#[allow(clippy::large_enum_variant)]
pub(super) enum Ladder {
    /// The clearing was asked for alone, or left too little for a summary to be worth its call.
    Done(CompactionResult),
    /// A summary follows, of the logs as now observed, after the clearing's result and the
    /// logs as they were before it (if one ran: its prompt shows the bodies it cleared).
    Summarise(Observed, Option<(Box<CompactionResult>, LogSnapshot)>),
}

/// How much of the logs the clearing rung reads between two breaks while it chooses the bodies:
/// about 15 ms in Chromium on this machine where a slice holds few bodies to clear, 61–84 ms in
/// 512 KB of a session whose every entry is bulky (#68's, 736K tokens); so 128 KB.
const CHOICE_SLICE_BYTES: usize = 128 * 1024;

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// Whether `run` clears first: the rung asked for, else a compaction the loop asks for
    /// while `clearing` is on. The clear rung asked for while it is off is refused.
    pub(super) fn clears(&self, run: &Run) -> Result<bool, CompactionError> {
        let on = self.settings.clearing.rules().is_some();
        match run.rung {
            Some(Rung::Clear) if !on => Err(CompactionError::NotAllowed(Refusal::NothingToClear)),
            Some(Rung::Clear) => Ok(true),
            Some(_) => Ok(false),
            None => Ok(on && run.trigger != Trigger::User),
        }
    }

    /// The clearing rung, when this compaction runs it (see the module's doc).
    pub(super) async fn clear_first(
        &self,
        run: &mut Run,
        lock: &mut RunLock,
        observed: Observed,
    ) -> Result<Ladder, CompactionError> {
        if !run.clears {
            return Ok(Ladder::Summarise(observed, None));
        }
        let only = run.rung == Some(Rung::Clear);
        let Some(result) = self.end(run, lock, &observed, Rewrite::Clearing).await? else {
            if only {
                return Err(CompactionError::NotAllowed(Refusal::NothingToClear));
            }
            // Nothing cleared: the summary's own rules decide, as for any compaction.
            allowed(&self.settings, &observed.input, run.trigger)?;
            return Ok(Ladder::Summarise(observed, None));
        };
        let (freed, after) = (result.tokens_saved, result.context_usage_after);
        if only || !summary_follows_clearing(&self.settings, &observed.input, freed, after) {
            return Ok(Ladder::Done(result));
        }
        lock.give_up();
        self.take_a_break(run).await?;
        let before = observed.read.parsed;
        let observed = self.view(&self.logs().borrow()).observe()?;
        // A summary of what is left only where its other rules allow it.
        if allowed_after_clearing(&self.settings, &observed.input, run.trigger).is_err() {
            return Ok(Ladder::Done(result));
        }
        Ok(Ladder::Summarise(
            observed,
            Some((Box::new(result), before)),
        ))
    }

    /// The bodies of `observed` the clearing takes into the archive `key`, chosen a slice at a
    /// time with a break between (a million tokens of bulky results take longer than a task
    /// should); the caller holds the store lock.
    pub(super) async fn choose_bodies(
        &self,
        run: &mut Run,
        observed: &Observed,
        key: &str,
    ) -> Result<Vec<ClearedEntry>, CompactionError> {
        let mut cleared = Vec::new();
        let unit = self.logs().borrow().unit();
        if let Some(clearing) = clearing_of(observed, &self.settings, key, unit) {
            let mut choice = ClearingChoice::of(clearing.logs);
            while !choice.advance(&clearing, CHOICE_SLICE_BYTES) {
                self.take_a_break(run).await?;
            }
            cleared = choice.cleared;
        }
        self.take_a_break(run).await?;
        Ok(cleared)
    }
}
