//! When a compaction is allowed, and when it should start by itself.

use crate::core::settings::{CompactorSettings, Trigger};

/// The state the rules look at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RuleInput {
    /// The current iteration N (0 when there is no session).
    pub current_iteration: u32,
    /// Whether iteration N is still running.
    pub iteration_running: bool,
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
}

/// A compaction that folds in an earlier summary needs at least this much new material, as a
/// share of that summary: less cannot give a summary clearly smaller than what it replaces.
pub(crate) const MIN_NEW_MATERIAL_SHARE: f64 = 0.5;

/// Why a compaction is not allowed now, in words a person understands; `None` when it is.
pub fn refusal(
    settings: &CompactorSettings,
    input: &RuleInput,
    trigger: Trigger,
) -> Option<String> {
    if input.compacting {
        return Some("A compaction is already running.".into());
    }
    if input.compacting_elsewhere {
        return Some("A compaction is running in another tab.".into());
    }
    if input.current_iteration == 0 {
        return Some("There is no reasoning session to compact yet.".into());
    }
    let completed = if input.iteration_running {
        input.current_iteration - 1
    } else {
        input.current_iteration
    };
    if completed < settings.min_iterations || input.current_iteration < 2 {
        return Some(format!(
            "Compaction needs at least {} completed iterations; {} so far.",
            settings.min_iterations.max(1),
            completed
        ));
    }
    let needed = (input.summary_tokens as f64 * MIN_NEW_MATERIAL_SHARE).ceil() as usize;
    if input.summary_tokens > 0 && input.new_tokens < needed {
        return Some(format!(
            "Too little is new since the last compaction: {} tokens beside the {}-token \
             summary; a compaction needs at least {needed} to come out clearly smaller.",
            input.new_tokens, input.summary_tokens
        ));
    }
    let usage = input.usage;
    if trigger != Trigger::ContextLimitError && usage < settings.recommended_usage {
        return Some(format!(
            "Context usage is {}%; compaction is worth it from {}%.",
            CompactorSettings::whole_percent(usage),
            CompactorSettings::whole_percent(settings.recommended_usage)
        ));
    }
    None
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
    pub fn hold(&mut self, settings: &CompactorSettings, tokens_now: usize) {
        self.blocked_until_tokens =
            Some(tokens_now.saturating_add(settings.context_window_tokens / 10));
    }

    /// Lifts the hold (after a successful compaction that brought usage under the trigger).
    pub fn release(&mut self) {
        self.blocked_until_tokens = None;
    }

    /// Whether an automatic compaction should start now.
    pub fn should_auto_compact(&self, settings: &CompactorSettings, input: &RuleInput) -> bool {
        let over = input.usage >= settings.auto_trigger_usage;
        let held = self
            .blocked_until_tokens
            .is_some_and(|limit| input.log_tokens < limit);
        over && !held && refusal(settings, input, Trigger::Auto).is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(current: u32, running: bool, tokens: usize) -> RuleInput {
        RuleInput {
            current_iteration: current,
            iteration_running: running,
            log_tokens: tokens,
            usage: CompactorSettings::default().usage(tokens),
            compacting: false,
            compacting_elsewhere: false,
            summary_tokens: 0,
            new_tokens: tokens,
        }
    }

    #[test]
    fn little_new_material_beside_a_summary_is_refused() {
        let s = CompactorSettings::default();
        let little = RuleInput {
            summary_tokens: 1_000,
            new_tokens: 499,
            ..input(9, false, 30_000)
        };
        let reason = refusal(&s, &little, Trigger::Auto).unwrap();
        assert!(reason.contains("Too little is new"), "{reason}");
        assert!(refusal(&s, &little, Trigger::ContextLimitError).is_some());
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
            .contains("no reasoning session"));
        assert!(refusal(&s, &input(3, true, 30_000), Trigger::User)
            .unwrap()
            .contains("at least 3 completed"));
        assert!(refusal(&s, &input(3, false, 30_000), Trigger::User).is_none());
        assert!(refusal(&s, &input(5, false, 1_000), Trigger::User)
            .unwrap()
            .contains("worth it from 60%"));
        assert!(refusal(&s, &input(5, false, 1_000), Trigger::ContextLimitError).is_none());
        let elsewhere = RuleInput {
            compacting_elsewhere: true,
            ..input(5, false, 30_000)
        };
        assert!(refusal(&s, &elsewhere, Trigger::User)
            .unwrap()
            .contains("in another tab"));
        let busy = RuleInput {
            compacting: true,
            ..input(5, false, 30_000)
        };
        assert!(refusal(&s, &busy, Trigger::User)
            .unwrap()
            .contains("already running"));
    }

    #[test]
    fn auto_compaction_is_held_after_a_failure_until_the_logs_grow() {
        let s = CompactorSettings::default();
        let mut guard = AutoGuard::default();
        assert!(!guard.should_auto_compact(&s, &input(6, false, 20_000)));
        assert!(guard.should_auto_compact(&s, &input(6, false, 28_000)));
        guard.hold(&s, 28_000);
        assert!(!guard.should_auto_compact(&s, &input(6, false, 29_000)));
        assert!(guard.should_auto_compact(&s, &input(7, false, 28_000 + 3_277)));
        guard.release();
        assert!(guard.should_auto_compact(&s, &input(6, false, 28_000)));
    }
}
