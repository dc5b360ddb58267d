//! Summarising a selection too large for one call: each part on its own (checked against the
//! facts it holds), then the part summaries merged, in rounds when they do not fit one prompt,
//! the last merge checked against the whole ledger and the whole selection.

use crate::core::error::CompactionError;
use crate::core::log::tokens::estimate_tokens;
use crate::core::model::facts::Ledger;
use crate::core::model::reasons::RetryReason;
use crate::core::model::settings::CompactorSettings;
use crate::core::order::join::Joined;
use crate::core::providers::attempts::{Asking, AttemptEvent, Attempts};
use crate::core::providers::port::{SummaryProvider, SummaryRequest};
use crate::core::steps::check::{Accepted, SummaryCheck, Verdict};
use crate::core::steps::digest::Digest;
use crate::core::steps::parts::{facts_held, merge_groups, parts_of};
use crate::core::steps::prompt::{
    build_merge_prompt, build_part_prompt, prompt_tokens, PartSummary,
};
use crate::core::steps::selection::Selection;
use crate::core::steps::summary_budget::SummaryBudget;

/// The input budget of one summary call: `maxPromptTokens`, else the provider's input limit
/// less the output reserve (`maxOutputTokens`); none when neither is known.
pub fn prompt_budget(
    settings: &CompactorSettings,
    provider: &dyn SummaryProvider,
) -> Option<usize> {
    settings.max_prompt_tokens.or_else(|| {
        let limit = provider.input_limit()?;
        Some(limit.saturating_sub(settings.max_output_tokens as usize))
    })
}

/// The parts `selection` is summarised in when `prompt` (its whole prompt) exceeds the
/// budget (see [`parts_of`]); none when it fits or there is no budget.
pub fn parts_over_budget<'a>(
    prompt: &str,
    selection: &Selection<'a>,
    ledger: &Ledger,
    settings: &CompactorSettings,
    provider: &dyn SummaryProvider,
    summary: &SummaryBudget,
) -> Vec<Selection<'a>> {
    match prompt_budget(settings, provider) {
        Some(budget) if prompt_tokens(prompt) > budget => {
            let parts = parts_of(selection, settings, ledger, budget, summary);
            if parts.len() > 1 {
                parts
            } else {
                Vec::new()
            }
        }
        _ => Vec::new(),
    }
}

impl Asking<'_> {
    /// Summarises `request` in one call accepted by `whole`, or in parts when its prompt
    /// exceeds the input budget (see [`parts_over_budget`]). `attempts` holds every call's
    /// cost and the number of parts.
    pub async fn summarise_all(
        &self,
        request: &SummaryRequest<'_>,
        whole: &SummaryCheck<'_>,
        attempts: &mut Attempts,
        mut report: impl FnMut(AttemptEvent),
    ) -> Result<Accepted, CompactionError> {
        let whole = &SummaryCheck {
            verify: !self.provider.grounded(),
            ..whole.for_part(whole.selection, whole.ledger, whole.budget.compacted_tokens)
        };
        let (prompt, selection, ledger) = (request.prompt, request.selection, request.ledger);
        let parts = parts_over_budget(
            prompt,
            selection,
            ledger,
            self.settings,
            self.provider,
            &whole.budget,
        );
        let parts = &parts;
        attempts.parts = u32::try_from(parts.len().max(1)).unwrap_or(u32::MAX);
        if parts.len() < 2 {
            return self
                .summarise(request, attempts, judge_with(whole), report)
                .await;
        }
        self.summarise_in_parts(request, parts, whole, attempts, &mut report)
            .await
    }

    /// Summarises `request` (the whole selection) through `parts`: one call per part, then
    /// merges until one summary is left, accepted by `whole`. `report` hears each part and
    /// merge as an [`AttemptEvent::Part`].
    async fn summarise_in_parts(
        &self,
        request: &SummaryRequest<'_>,
        parts: &[Selection<'_>],
        whole: &SummaryCheck<'_>,
        attempts: &mut Attempts,
        report: &mut impl FnMut(AttemptEvent),
    ) -> Result<Accepted, CompactionError> {
        let budget = prompt_budget(self.settings, self.provider).unwrap_or(usize::MAX);
        let steps = parts.len() + 1;
        let mut summaries = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            report(AttemptEvent::Part {
                step: i + 1,
                of: steps,
                iterations: [part.first, part.last],
            });
            let none = Ledger::default();
            let ledger = facts_held(
                whole.ledger,
                &build_part_prompt(part, self.settings, &none, (1, 1), &whole.budget),
            );
            let step = Step {
                prompt: build_part_prompt(
                    part,
                    self.settings,
                    &ledger,
                    (i + 1, parts.len()),
                    &whole.budget,
                ),
                selection: part,
                ledger,
                tokens: part.originals().estimate_tokens(),
            };
            let summary = self
                .summarise_step(step, request, whole, attempts, &mut *report)
                .await?;
            summaries.push(summary);
        }
        let room = estimate_tokens(&build_merge_prompt(
            &[],
            (whole.selection.last, whole.selection.current),
            self.settings,
            whole.ledger,
            &whole.budget,
        ));
        loop {
            let groups = merge_groups(summaries, budget, room);
            let last_round = groups.len() == 1;
            let mut merged = Vec::with_capacity(groups.len());
            for group in groups {
                let (first, last) = (group[0].first, group[group.len() - 1].last);
                report(AttemptEvent::Part {
                    step: steps,
                    of: steps,
                    iterations: [first, last],
                });
                if last_round {
                    let prompt = build_merge_prompt(
                        &group,
                        (whole.selection.last, whole.selection.current),
                        self.settings,
                        whole.ledger,
                        &whole.budget,
                    );
                    let asked = SummaryRequest {
                        prompt: &prompt,
                        ..*request
                    };
                    return self
                        .summarise(&asked, attempts, judge_with(whole), &mut *report)
                        .await;
                }
                let texts: Vec<&str> = group.iter().map(|p| p.summary.as_str()).collect();
                let ledger = facts_held(whole.ledger, &texts.joined("\n"));
                let prompt = build_merge_prompt(
                    &group,
                    (last, last + 1),
                    self.settings,
                    &ledger,
                    &whole.budget,
                );
                let span = whole.selection.part(first, last);
                let step = Step {
                    prompt,
                    selection: &span,
                    ledger,
                    tokens: group.iter().map(|p| p.tokens).sum(),
                };
                let summary = self
                    .summarise_step(step, request, whole, attempts, &mut *report)
                    .await?;
                merged.push(summary);
            }
            summaries = merged;
        }
    }
}

/// One call of a summary in parts: a part, or consecutive part summaries to merge.
struct Step<'s, 'a> {
    /// Its prompt.
    prompt: String,
    /// The entries it covers (the sources its answer is checked against).
    selection: &'s Selection<'a>,
    /// The facts of the whole ledger its text holds.
    ledger: Ledger,
    /// Tokens of the originals it covers.
    tokens: usize,
}

impl Asking<'_> {
    /// Asks for the summary of `step`, judged as `whole` judges the whole, for its entries
    /// and facts.
    async fn summarise_step(
        &self,
        step: Step<'_, '_>,
        request: &SummaryRequest<'_>,
        whole: &SummaryCheck<'_>,
        attempts: &mut Attempts,
        report: &mut impl FnMut(AttemptEvent),
    ) -> Result<PartSummary, CompactionError> {
        let digest = Digest::of(step.selection);
        let check = whole.for_part(step.selection, &step.ledger, step.tokens);
        let asked = SummaryRequest {
            prompt: &step.prompt,
            selection: step.selection,
            digest: &digest,
            ledger: &step.ledger,
            settings: request.settings,
        };
        let accepted = self
            .summarise(&asked, attempts, judge_with(&check), report)
            .await?;
        Ok(PartSummary {
            first: step.selection.first,
            last: step.selection.last,
            summary: accepted.summary,
            tokens: step.tokens,
        })
    }
}

/// `check` as the asking loop calls it.
fn judge_with<'c>(check: &'c SummaryCheck<'_>) -> impl Fn(&str, &[RetryReason]) -> Verdict + 'c {
    move |summary, retried| check.judge(summary, retried)
}
