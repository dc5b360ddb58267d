//! Summarising a selection too large for one call: each part on its own (checked against the
//! facts it holds), then the part summaries merged, in rounds when they do not fit one prompt,
//! the last merge checked against the whole ledger and the whole selection.

use crate::core::error::CompactionError;
use crate::core::log::tokens::estimate_tokens;
use crate::core::model::facts::Ledger;
use crate::core::model::reasons::RetryReason;
use crate::core::providers::attempts::{Asking, AttemptEvent, Attempts};
use crate::core::providers::port::SummaryRequest;
use crate::core::steps::check::{Accepted, SummaryCheck, Verdict};
use crate::core::steps::digest::Digest;
use crate::core::steps::parts::{facts_held, merge_groups};
use crate::core::steps::prompt::{build_merge_prompt, build_part_prompt, PartSummary};
use crate::core::steps::selection::Selection;

/// How every answer is checked, whatever it summarises.
pub struct Checking<'a> {
    /// The check of the whole summary; a part's and a merge's are drawn from it.
    pub whole: SummaryCheck<'a>,
    /// The input budget of one call, in tokens.
    pub budget: usize,
}

impl Asking<'_> {
    /// Summarises `request` (the whole selection) through `parts`: one call per part, then
    /// merges until one summary is left, accepted by `checking.whole`. `report` hears each
    /// part and merge as an [`AttemptEvent::Part`]; `attempts` holds every call's cost.
    pub async fn summarise_in_parts(
        &self,
        request: &SummaryRequest<'_>,
        parts: &[Selection<'_>],
        checking: &Checking<'_>,
        attempts: &mut Attempts,
        report: &mut impl FnMut(AttemptEvent),
    ) -> Result<Accepted, CompactionError> {
        let whole = &checking.whole;
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
                &build_part_prompt(part, self.settings, &none, (1, 1)),
            );
            let prompt = build_part_prompt(part, self.settings, &ledger, (i + 1, parts.len()));
            let digest = Digest::of(part);
            let tokens = part.originals().estimate_tokens();
            let check = whole.for_part(part, &ledger, tokens);
            let asked = SummaryRequest {
                prompt: &prompt,
                selection: part,
                digest: &digest,
                ledger: &ledger,
                settings: request.settings,
            };
            let accepted = self
                .summarise(&asked, attempts, judge_with(&check), &mut *report)
                .await?;
            summaries.push(PartSummary {
                first: part.first,
                last: part.last,
                summary: accepted.summary,
                tokens,
            });
        }
        let room = estimate_tokens(&build_merge_prompt(
            &[],
            (whole.selection.last, whole.selection.current),
            self.settings,
            whole.ledger,
        ));
        loop {
            let groups = merge_groups(summaries, checking.budget, room);
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
                let ledger = facts_held(whole.ledger, &texts.join("\n"));
                let tokens = group.iter().map(|p| p.tokens).sum();
                let prompt = build_merge_prompt(&group, (last, last + 1), self.settings, &ledger);
                let span = whole.selection.part(first, last);
                let digest = Digest::of(&span);
                let check = whole.for_part(&span, &ledger, tokens);
                let asked = SummaryRequest {
                    prompt: &prompt,
                    selection: &span,
                    digest: &digest,
                    ledger: &ledger,
                    settings: request.settings,
                };
                let accepted = self
                    .summarise(&asked, attempts, judge_with(&check), &mut *report)
                    .await?;
                merged.push(PartSummary {
                    first,
                    last,
                    summary: accepted.summary,
                    tokens,
                });
            }
            summaries = merged;
        }
    }
}

/// `check` as the asking loop calls it.
fn judge_with<'c>(check: &'c SummaryCheck<'_>) -> impl Fn(&str, &[RetryReason]) -> Verdict + 'c {
    move |summary, retried| check.judge(summary, retried)
}
