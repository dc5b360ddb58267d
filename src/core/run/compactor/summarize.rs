//! The ladder's summary rung: the selection prepared (digest, ledger, prompt) a stage at a
//! time, then the model asked until an answer passes the check, or a summary cached for the
//! same input taken with no call.

use super::run::Run;
use super::Compactor;
use crate::core::error::CompactionError;
use crate::core::log::iteration::{parse_summary_header, written_without_model};
use crate::core::log::snapshot::LogSnapshot;
use crate::core::model::clearing::Rung;
use crate::core::model::fallback::FallbackReason;
use crate::core::model::phase::Phase;
use crate::core::model::reasons::Refusal;
use crate::core::model::settings::Trigger;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::providers::attempts::{Asking, AttemptEvent};
use crate::core::providers::port::{GenerationSettings, SummaryRequest};
use crate::core::run::view::{Observed, Prepared, Preparing};
use crate::core::steps::check::{Accepted, SummaryCheck};
use crate::core::store::summary_cache::{input_hash, CachedSummary};

/// A summary that finds nothing left to compact.
pub(super) const NOTHING_TO_COMPACT: CompactionError =
    CompactionError::NotAllowed(Refusal::NothingToCompact);

/// A summary to store: the accepted answer and the rung that wrote it.
pub(super) struct Written {
    /// The summary as the check accepted it.
    pub(super) accepted: Accepted,
    /// `summarize` (the model's) or `fallback` (the package's own).
    pub(super) rung: Rung,
    /// Why the model's could not be used, for the fallback's.
    pub(super) fallback: Option<FallbackReason>,
    /// Whether the model's summary replaces a fallback summary.
    pub(super) upgraded: bool,
}

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// Prepares the summary of `observed` a stage at a time, with a break between stages;
    /// nothing to compact is a refusal. `before`: the logs before this compaction's clearing,
    /// whose bodies its prompt shows in place of their placeholders.
    pub(super) async fn prepare<'o>(
        &self,
        run: &mut Run,
        observed: &'o Observed,
        before: Option<&'o LogSnapshot>,
    ) -> Result<Prepared<'o>, CompactionError> {
        self.advance(run, Phase::BuildingPrompt, None);
        let mut preparing = Preparing::of(observed).showing(before);
        let prepared = loop {
            self.take_a_break(run).await?;
            let next = preparing.next_stage(&self.view(&self.logs().borrow()))?;
            if let Some(prepared) = next {
                break prepared;
            }
        };
        if prepared.selection.is_empty() {
            return Err(NOTHING_TO_COMPACT);
        }
        if prepared.budget.too_small() {
            let tokens = prepared.budget.compacted_tokens;
            let last = prepared.selection.last;
            return Err(CompactionError::NotAllowed(Refusal::TooSmallToCompact {
                tokens,
                last,
            }));
        }
        self.take_a_break(run).await?;
        Ok(prepared)
    }

    /// The model's summary of `prepared`: asked of the provider until an answer within the
    /// summary's budget passes the check, each step reported as progress. While the provider
    /// rests after failing (see [`crate::core::steps::rest`]), the loop's compaction fails
    /// with that failure at once, asking nothing.
    pub(super) async fn summarise(
        &self,
        run: &mut Run,
        prepared: &Prepared<'_>,
    ) -> Result<Written, CompactionError> {
        self.resting(run)?;
        let asked = self.ask(run, prepared).await;
        self.rest_after(run, asked.as_ref().err());
        let accepted = asked?;
        Ok(Written {
            accepted,
            rung: Rung::Summarize,
            fallback: None,
            upgraded: replaces_fallback(prepared),
        })
    }

    /// The failure the provider rests after, for a compaction of the loop while it rests.
    #[inline(never)]
    fn resting(&self, run: &mut Run) -> Result<(), CompactionError> {
        let rest = self.rest.borrow();
        match rest.resting(self.now()) {
            Some((failure, left_s)) if run.trigger != Trigger::User => {
                run.rested_s = Some(left_s);
                Err(CompactionError::Provider(failure.clone()))
            }
            _ => Ok(()),
        }
    }

    /// The provider's rest after `run` asked it and ended in `failure` (or an answer).
    #[inline(never)]
    fn rest_after(&self, run: &Run, failure: Option<&CompactionError>) {
        if run.attempts.count > 0 {
            let rest = self.rest.take().after(failure, self.now());
            self.rest.replace(rest);
        }
    }

    /// Asks the provider for a summary of `prepared` until an answer within its budget passes
    /// the check, reporting each step; a paid answer is cached by its exact input, and one
    /// cached for it is taken with no call.
    async fn ask(
        &self,
        run: &mut Run,
        prepared: &Prepared<'_>,
    ) -> Result<Accepted, CompactionError> {
        let provider = self.provider.as_ref();
        let settings = GenerationSettings::of(&self.settings, provider.model());
        let request = SummaryRequest {
            prompt: &prepared.prompt,
            selection: &prepared.selection,
            digest: &prepared.digest,
            ledger: &prepared.ledger,
            settings: &settings,
        };
        let asking = Asking {
            provider,
            timer: self.timer.as_ref(),
            settings: &self.settings,
            cancel: run.cancel.clone(),
        };
        let (selection, ledger) = (request.selection, request.ledger);
        let check = SummaryCheck::of(selection, ledger, prepared.budget, &self.settings);
        // A paid answer is cached by its exact input; the offline summariser costs nothing.
        let input = (self.settings.summary_cache && !provider.grounded())
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
            .summarise_all(&request, &check, &mut attempts, report)
            .await;
        run.attempts = attempts;
        if let (Ok(accepted), Some(input)) = (&summary, input) {
            let expires_at = self.now() + self.settings.archive_lifetime_ms();
            run.answered = Some(CachedSummary::of(input, accepted, expires_at));
        }
        summary
    }
}

/// Whether `prepared` folds in a summary the fallback rung wrote (the model's summary then
/// replaces the package's own).
fn replaces_fallback(prepared: &Prepared<'_>) -> bool {
    prepared
        .selection
        .reasoning
        .iter()
        .any(|(_, entry)| parse_summary_header(entry).is_some() && written_without_model(entry))
}
