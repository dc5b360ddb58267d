//! When a compaction is allowed, what it would do (the plan), and when it should start by
//! itself.

use crate::core::error::{CompactionError, ProviderError};
use crate::core::model::clearing::Rung;
use crate::core::model::facts::Ledger;
use crate::core::model::fallback::FallbackPolicy;
use crate::core::model::outcome::{CompactionPlan, CompactionResult, Wait};
use crate::core::model::reasons::Refusal;
use crate::core::model::settings::{CompactorSettings, Trigger};
use crate::core::steps::prompt::prompt_tokens;
use crate::core::steps::selection::Selection;
use crate::core::steps::summary_budget::SummaryBudget;

/// The state the rules look at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RuleInput {
    /// The current iteration N (0 when there is no session).
    pub current_iteration: u32,
    /// Whether iteration N is still running.
    pub iteration_running: bool,
    /// Whether this page started it.
    pub iteration_running_here: bool,
    /// Estimated tokens of the three logs.
    pub log_tokens: usize,
    /// Share (0..1, can exceed 1) of the window in use: the app's measure when it gives one,
    /// else the logs plus `baseTokens`.
    pub usage: f64,
    /// Whether a compaction or rollback of this compactor is running.
    pub compacting: bool,
    /// Whether another tab holds the compaction lease.
    pub compacting_elsewhere: bool,
    /// Tokens of the earlier summaries a compaction would fold in.
    pub summary_tokens: usize,
    /// Tokens of everything else a compaction would replace: what is new since them.
    pub new_tokens: usize,
    /// Tokens the pinned facts take in a summary, under its six headings.
    pub pinned_tokens: usize,
    /// Finished iterations before N that stay verbatim (`keepRecentIterations`, as many as there
    /// are).
    pub kept_recent: u32,
}

/// A compaction that folds in an earlier summary needs at least this much new material, as a
/// share of that summary: less cannot give a summary clearly smaller than what it replaces.
pub(crate) const MIN_NEW_MATERIAL_SHARE: f64 = 0.5;

/// Why a compaction is not allowed now; `None` when it is.
pub fn refusal(
    settings: &CompactorSettings,
    input: &RuleInput,
    trigger: Trigger,
) -> Option<Refusal> {
    if input.compacting {
        return Some(Refusal::Compacting);
    }
    if input.compacting_elsewhere {
        return Some(Refusal::CompactingElsewhere);
    }
    if input.current_iteration == 0 {
        return Some(Refusal::NoSession);
    }
    let completed = if input.iteration_running {
        input.current_iteration - 1
    } else {
        input.current_iteration
    };
    let kept = input.kept_recent;
    if completed < settings.min_iterations || input.current_iteration < kept.saturating_add(2) {
        // Iteration N is always kept, and the recent ones asked for: the first one before them
        // alone leaves nothing to compact.
        let needed = match completed >= settings.min_iterations {
            true => kept.saturating_add(2) - u32::from(input.iteration_running),
            false => settings.min_iterations.max(1),
        };
        return Some(Refusal::TooFewIterations { needed, completed });
    }
    // Every summary must hold the pins: a budget they exceed is known before any call, and said
    // to the user who asks; the loop's own compaction goes on, its summary over its budget by
    // them (`user_items_over_budget` says so), rather than leave the window full for good.
    let budget = settings.summary_budget();
    if input.pinned_tokens > budget && trigger == Trigger::User {
        return Some(Refusal::PinsOverBudget {
            needed: input.pinned_tokens,
            budget,
        });
    }
    // A window that needs room now gets it: the summary itself is compacted under its budget,
    // its oldest facts leaving for the index.
    let window_full =
        trigger == Trigger::ContextLimitError || input.usage >= settings.auto_trigger_usage;
    let needed = (input.summary_tokens as f64 * MIN_NEW_MATERIAL_SHARE).ceil() as usize;
    if !window_full && input.summary_tokens > 0 && input.new_tokens < needed {
        return Some(Refusal::TooLittleNew {
            new_tokens: input.new_tokens,
            summary_tokens: input.summary_tokens,
            needed,
        });
    }
    let (usage, recommended) = (input.usage, settings.recommended());
    if trigger != Trigger::ContextLimitError && usage < recommended {
        return Some(Refusal::UsageTooLow { usage, recommended });
    }
    None
}

/// The share of what every later turn reads that a summary must cut, after a clearing, to be
/// worth its call when the app gives no `recommendedUsage`: the call reads about what a turn
/// reads, so it repays itself within two turns; waiting until that much has gathered keeps the
/// calls few (the bulky-output agent of `tests/native/read_per_turn.rs`: 1.3 calls per 100
/// iterations and 21,600 tokens a turn at two thirds, 2.3 and 16,100 at a half, 0.7 and 26,500
/// at three quarters).
pub const TURN_CUT: f64 = 2.0 / 3.0;

/// Whether the loop's compaction goes on to summarise after a clearing of the logs `before`
/// counts that freed `freed` tokens and left usage at `usage_after` (0..1): at
/// `recommendedUsage` when the app gives it; else when the summary (at most its budget) of what
/// is left to replace would cut what every later turn reads by [`TURN_CUT`], or usage is still
/// at the default `recommendedUsage`.
pub fn summary_follows_clearing(
    settings: &CompactorSettings,
    before: &RuleInput,
    freed: usize,
    usage_after: f64,
) -> bool {
    if let Some(recommended) = settings.recommended_usage {
        return usage_after >= recommended;
    }
    let compactable = (before.summary_tokens + before.new_tokens).saturating_sub(freed);
    let read = usage_after * settings.context_window_tokens as f64;
    let cut = compactable.saturating_sub(settings.summary_budget()) as f64;
    usage_after >= settings.recommended() || (cut > 0.0 && cut >= read * TURN_CUT)
}

/// What `compact()` would do with `selection` now: its entries and tokens, the ledger (what
/// would leave the summary written to the archive under `archive_key`), the prompt's size,
/// and why it would refuse if it would.
pub fn plan_of(
    selection: &Selection<'_>,
    input: &RuleInput,
    ledger: &Ledger,
    prompt: &str,
    settings: &CompactorSettings,
    budget: &SummaryBudget,
    archive_key: &str,
) -> CompactionPlan {
    let tokens_to_compact = input.summary_tokens + input.new_tokens;
    let summary = ((tokens_to_compact as f64 * PLANNED_SUMMARY_SHARE).round() as usize)
        .min(budget.max_tokens);
    CompactionPlan {
        iterations: [1.min(selection.last), selection.last],
        verbatim: [
            selection.current,
            input.current_iteration.max(selection.current),
        ],
        entries: selection.counts(),
        tokens_to_compact,
        prompt_tokens: prompt_tokens(prompt),
        ledger: ledger.texts(),
        estimated_tokens_after: input.log_tokens - tokens_to_compact + summary,
        refused: refusal(settings, input, Trigger::User).map(|r| r.to_string()),
        waits_for: wait_of(input),
        summary_budget_tokens: budget.budget,
        demoted: ledger.demoted_in(archive_key, [selection.first, selection.last]),
        rung: Rung::Summarize,
        cleared: Vec::new(),
        user_items: Vec::new(),
    }
}

/// Whether a compaction started by `trigger` that failed with `failure` stores the package's
/// own summary instead (the fallback rung): `fallback` covers the trigger, and the failure is
/// the model's (an error of its API, a time-out, the network, a block, an invalid answer), not
/// a refusal, a cancel or the storage's.
pub fn falls_back(
    settings: &CompactorSettings,
    trigger: Trigger,
    failure: &CompactionError,
) -> bool {
    let covered = match settings.fallback {
        FallbackPolicy::Off => false,
        FallbackPolicy::Loop => trigger != Trigger::User,
        FallbackPolicy::Always => true,
    };
    let models = match failure {
        CompactionError::Provider(err) => !matches!(err, ProviderError::Aborted),
        CompactionError::InvalidSummary(_) | CompactionError::SameInvalidSummary(_) => true,
        _ => false,
    };
    covered && models
}

/// Whether a compaction with `trigger` waits for the running iteration before it gathers. The
/// loop's own compactions (`auto`, and `context_limit_error`, which arrives in the middle of an
/// iteration by nature) do not wait for an iteration this page runs: the loop that awaits them
/// finishes it only after the await. The iteration stays verbatim either way.
pub fn waits(running: bool, running_here: bool, trigger: Trigger) -> bool {
    running && !(running_here && trigger != Trigger::User)
}

/// The running iteration a compaction would wait for, and for which triggers.
pub fn wait_of(input: &RuleInput) -> Option<Wait> {
    let triggers: Vec<Trigger> = Trigger::ALL
        .into_iter()
        .filter(|&t| waits(input.iteration_running, input.iteration_running_here, t))
        .collect();
    (!triggers.is_empty()).then_some(Wait {
        iteration: input.current_iteration,
        running_here: input.iteration_running_here,
        triggers,
    })
}

/// Share of the compacted tokens `plan()` expects the summary to take.
const PLANNED_SUMMARY_SHARE: f64 = 0.3;

/// Whether the compaction that is itself running (so not counted as one) may go on; the
/// refusal as its error.
pub fn allowed(
    settings: &CompactorSettings,
    input: &RuleInput,
    trigger: Trigger,
) -> Result<(), CompactionError> {
    admitted_by(refusal, settings, input, trigger)
}

/// [`allowed`] for a compaction that clears first (see [`refusal_to_clear`]).
pub fn allowed_to_clear(
    settings: &CompactorSettings,
    input: &RuleInput,
    trigger: Trigger,
) -> Result<(), CompactionError> {
    admitted_by(refusal_to_clear, settings, input, trigger)
}

/// [`allowed`] for the summary that follows a clearing ([`summary_follows_clearing`] decided
/// that its usage is enough).
pub fn allowed_after_clearing(
    settings: &CompactorSettings,
    input: &RuleInput,
    trigger: Trigger,
) -> Result<(), CompactionError> {
    match allowed(settings, input, trigger) {
        Err(CompactionError::NotAllowed(Refusal::UsageTooLow { .. })) => Ok(()),
        other => other,
    }
}

/// Why `rule` refuses the running compaction (itself not counted as one that runs).
type Rule = fn(&CompactorSettings, &RuleInput, Trigger) -> Option<Refusal>;

fn admitted_by(
    rule: Rule,
    settings: &CompactorSettings,
    input: &RuleInput,
    trigger: Trigger,
) -> Result<(), CompactionError> {
    let input = RuleInput {
        compacting: false,
        ..*input
    };
    rule(settings, &input, trigger).map_or(Ok(()), |r| Err(CompactionError::NotAllowed(r)))
}

/// Why the clearing rung may not run now: [`refusal`] less the rules of a summary alone
/// (usage under `recommendedUsage`, too little new beside an earlier summary, pins over its
/// budget). Clearing calls no model; what it frees decides whether it runs.
pub fn refusal_to_clear(
    settings: &CompactorSettings,
    input: &RuleInput,
    trigger: Trigger,
) -> Option<Refusal> {
    refusal(settings, input, trigger).filter(|refused| {
        !matches!(
            refused,
            Refusal::UsageTooLow { .. }
                | Refusal::TooLittleNew { .. }
                | Refusal::PinsOverBudget { .. }
        )
    })
}

/// Holds automatic compaction back after one that failed or saved little, until the logs have
/// grown by a tenth of the window — so a session never loops on compactions.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct AutoGuard {
    blocked_until_tokens: Option<usize>,
}

impl AutoGuard {
    /// Records an automatic compaction that failed or ended at `tokens_after` still over the
    /// trigger.
    pub fn hold(self, settings: &CompactorSettings, tokens_now: usize) -> Self {
        AutoGuard {
            blocked_until_tokens: Some(
                tokens_now.saturating_add(settings.context_window_tokens / 10),
            ),
        }
    }

    /// Lifts the hold (after a successful compaction that brought usage under the trigger).
    pub fn release(self) -> Self {
        AutoGuard::default()
    }

    /// The guard after a successful compaction: an automatic one that left usage over the
    /// trigger holds, any other releases.
    pub fn after_success(
        self,
        settings: &CompactorSettings,
        trigger: Trigger,
        result: &CompactionResult,
    ) -> Self {
        if trigger == Trigger::Auto && result.context_usage_after >= settings.auto_trigger_usage {
            self.hold(settings, result.tokens_after)
        } else {
            self.release()
        }
    }

    /// Whether an automatic compaction should start now.
    pub fn should_auto_compact(&self, settings: &CompactorSettings, input: &RuleInput) -> bool {
        let over = input.usage >= settings.auto_trigger_usage;
        over && !self.held(input) && refusal(settings, input, Trigger::Auto).is_none()
    }

    /// Whether the loop's compaction may clear now, were there enough to clear: not held
    /// back, and no rule but those of a summary's cost says no.
    pub fn may_clear(&self, settings: &CompactorSettings, input: &RuleInput) -> bool {
        !self.held(input) && refusal_to_clear(settings, input, Trigger::Auto).is_none()
    }

    fn held(&self, input: &RuleInput) -> bool {
        self.blocked_until_tokens
            .is_some_and(|limit| input.log_tokens < limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::order::text_search::TextSearch;

    fn input(current: u32, running: bool, tokens: usize) -> RuleInput {
        RuleInput {
            current_iteration: current,
            iteration_running: running,
            iteration_running_here: false,
            log_tokens: tokens,
            usage: CompactorSettings::default().usage(tokens),
            compacting: false,
            compacting_elsewhere: false,
            summary_tokens: 0,
            new_tokens: tokens,
            pinned_tokens: 0,
            kept_recent: 0,
        }
    }

    #[test]
    fn too_few_iterations_says_a_true_count() {
        let with_min = |min_iterations| CompactorSettings {
            min_iterations,
            ..CompactorSettings::default()
        };
        let said = |min, current, running| {
            let reason = refusal(
                &with_min(min),
                &input(current, running, 24_000),
                Trigger::User,
            );
            reason.map(|reason| reason.to_string()).unwrap_or_default()
        };
        let one_done = said(1, 1, false);
        assert!(
            one_done.starts_with("Compaction needs at least 2 completed iterations; 1 so far"),
            "{one_done}"
        );
        let short_of_three = said(3, 2, true);
        assert!(
            short_of_three
                .starts_with("Compaction needs at least 3 completed iterations; 1 so far"),
            "{short_of_three}"
        );
        assert_eq!(said(1, 2, true), "");
    }

    #[test]
    fn little_new_material_beside_a_summary_is_refused() {
        let s = CompactorSettings::default();
        let little = RuleInput {
            summary_tokens: 1_000,
            new_tokens: 499,
            ..input(9, false, 24_000)
        };
        let reason = refusal(&s, &little, Trigger::Auto).unwrap().to_string();
        assert!(reason.contains_text("Too little is new"), "{reason}");
        // A full window is never refused for it: the summary itself is compacted.
        assert!(refusal(&s, &little, Trigger::ContextLimitError).is_none());
        let full = RuleInput {
            usage: s.auto_trigger_usage,
            ..little
        };
        assert!(refusal(&s, &full, Trigger::Auto).is_none());
        assert!(refusal(&s, &full, Trigger::User).is_none());
        let enough = RuleInput {
            new_tokens: 500,
            ..little
        };
        assert!(refusal(&s, &enough, Trigger::User).is_none());
    }

    #[test]
    fn each_rule_gives_its_reason() {
        let s = CompactorSettings::default();
        assert!(refusal(&s, &input(0, false, 30_000), Trigger::User)
            .unwrap()
            .to_string()
            .contains_text("no reasoning session"));
        assert!(refusal(&s, &input(3, true, 30_000), Trigger::User)
            .unwrap()
            .to_string()
            .contains_text("at least 3 completed"));
        assert!(refusal(&s, &input(3, false, 30_000), Trigger::User).is_none());
        assert!(refusal(&s, &input(5, false, 1_000), Trigger::User)
            .unwrap()
            .to_string()
            .contains_text("worth it from 60%"));
        assert!(refusal(&s, &input(5, false, 1_000), Trigger::ContextLimitError).is_none());
        let elsewhere = RuleInput {
            compacting_elsewhere: true,
            ..input(5, false, 30_000)
        };
        assert!(refusal(&s, &elsewhere, Trigger::User)
            .unwrap()
            .to_string()
            .contains_text("in another tab"));
        let busy = RuleInput {
            compacting: true,
            ..input(5, false, 30_000)
        };
        assert!(refusal(&s, &busy, Trigger::User)
            .unwrap()
            .to_string()
            .contains_text("already running"));
    }

    #[test]
    fn a_summary_follows_a_clearing_when_it_cuts_two_thirds_of_a_turn_or_by_recommended_usage() {
        // A 100,000-token window, a summary of at most 4,000 tokens.
        let s = CompactorSettings {
            context_window_tokens: 100_000,
            ..CompactorSettings::default()
        };
        // Logs whose iterations before N hold `compactable` tokens, nothing freed.
        let follows = |s: &CompactorSettings, usage, compactable| {
            summary_follows_clearing(s, &input(9, false, compactable), 0, usage)
        };
        // 30,000 tokens read a turn: a cut of 20,000 (24,000 replaced) is two thirds.
        assert!(follows(&s, 0.3, 24_000));
        assert!(!follows(&s, 0.3, 23_999));
        // What the clearing freed is no longer there to replace.
        assert!(!summary_follows_clearing(
            &s,
            &input(9, false, 24_000),
            1,
            0.3
        ));
        // At the default recommendedUsage, whatever the cut; nothing to cut, no summary.
        assert!(follows(&s, 0.6, 0));
        assert!(!follows(&s, 0.0, 4_000));
        // recommendedUsage given: by usage alone, as 0.1 did.
        let given = CompactorSettings {
            recommended_usage: Some(0.25),
            ..s
        };
        assert!(!follows(&given, 0.24, 24_000));
        assert!(follows(&given, 0.25, 0));
    }

    #[test]
    fn auto_compaction_is_held_after_a_failure_until_the_logs_grow() {
        let s = CompactorSettings::default();
        let mut guard = AutoGuard::default();
        assert!(!guard.should_auto_compact(&s, &input(6, false, 20_000)));
        assert!(guard.should_auto_compact(&s, &input(6, false, 28_000)));
        guard = guard.hold(&s, 28_000);
        assert!(!guard.should_auto_compact(&s, &input(6, false, 29_000)));
        assert!(guard.should_auto_compact(&s, &input(7, false, 28_000 + 3_277)));
        guard = guard.release();
        assert!(guard.should_auto_compact(&s, &input(6, false, 28_000)));
    }
}
