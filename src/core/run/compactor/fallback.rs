//! The ladder's last rung: when every attempt of the model fails on a compaction the
//! `fallback` option covers, the offline summariser's summary of the same selection is stored
//! instead of a refusal — under the same budget, checks, index lines and archive as any
//! summary. The next compaction whose model answers summarises over it (an upgrade).

use super::run::Run;
use super::summarize::Written;
use super::Compactor;
use crate::core::error::redact::redact;
use crate::core::error::CompactionError;
use crate::core::model::clearing::Rung;
use crate::core::model::fallback::FallbackReason;
use crate::core::model::phase::Phase;
use crate::core::ports::clock::Clock;
use crate::core::ports::events::CompactionEvent;
use crate::core::ports::storage::KeyValueStore;
use crate::core::providers::offline::offline_summary;
use crate::core::run::view::Prepared;
use crate::core::steps::check::{SummaryCheck, Verdict};
use crate::core::steps::rules::falls_back;

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// The package's own summary of `prepared` in place of the model's, which failed with
    /// `failure`; `failure` itself when the rung does not cover this compaction or the
    /// failure, or when the offline summary does not pass the check either.
    pub(super) fn fall_back(
        &self,
        run: &mut Run,
        prepared: &Prepared<'_>,
        failure: CompactionError,
    ) -> Result<Written, CompactionError> {
        if !falls_back(&self.settings, run.trigger, &failure) {
            return Err(failure);
        }
        let mut message = redact(&failure.to_string(), None).into_owned();
        if let Some(left_s) = run.rested_s {
            let rest = format!("; not asked: it failed before and rests for {left_s} s more");
            message.push_str(&rest);
        }
        let reason = FallbackReason {
            code: failure.code().as_str().to_owned(),
            message,
        };
        self.events.emit(CompactionEvent::Fallback {
            reason: reason.clone(),
        });
        let message = "The model failed: summarising without it (compaction_fallback says why)";
        self.advance(run, Phase::Validating, Some(message.into()));
        let (selection, ledger) = (&prepared.selection, &prepared.ledger);
        let text = offline_summary(selection, &prepared.digest, ledger);
        // Its figures and names are the entries' own by construction: nothing to verify.
        let check = SummaryCheck {
            verify: false,
            ..SummaryCheck::of(selection, ledger, prepared.budget, &self.settings)
        };
        let accepted = match check.judge(&text, &[]) {
            Verdict::Accept(accepted)
            | Verdict::AskAgain {
                fallback: Some(accepted),
                ..
            } => accepted,
            Verdict::AskAgain { fallback: None, .. } => return Err(failure),
        };
        Ok(Written {
            accepted,
            rung: Rung::Fallback,
            fallback: Some(reason),
            upgraded: false,
        })
    }
}
