//! Why a compaction, a rollback or an archive operation stops, and why an attempt is retried:
//! typed, so that code branches on the variant and people read its `Display`.

use std::fmt;

use crate::core::model::settings::CompactorSettings;

/// Why the logs no longer fit what a compaction or rollback read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conflict {
    /// Other code rewrote a log (not only appended to it) while a compaction ran.
    Rewritten {
        /// `reasoning`, `execution` or `tool activity`.
        log: &'static str,
    },
    /// The summary an archive replaced is no longer in the reasoning log.
    SummaryGone {
        /// The last iteration that summary covered.
        last: u32,
    },
    /// None of the placeholders a clearing wrote is in the live logs any more.
    PlaceholdersGone,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Conflict::Rewritten { log } => write!(
                f,
                "the {log} log was changed by other code while the compaction ran (not just \
                 appended to)"
            ),
            Conflict::SummaryGone { last } => write!(
                f,
                "the summary of iterations 1-{last} is no longer in the reasoning log; a later \
                 compaction replaced it, so roll that one back first"
            ),
            Conflict::PlaceholdersGone => write!(
                f,
                "none of the placeholders this clearing wrote is in the live logs; a later \
                 summary archived them, so roll that one back first"
            ),
        }
    }
}

/// Why a compaction or an archive operation is not allowed (code `not_allowed`).
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// A compaction over these logs already runs in this page.
    Compacting,
    /// Another tab holds the compaction lease.
    CompactingElsewhere,
    /// The logs hold no iteration yet.
    NoSession,
    /// Fewer completed iterations than `minIterations`.
    TooFewIterations {
        /// Completed iterations needed.
        needed: u32,
        /// Completed iterations so far.
        completed: u32,
    },
    /// An earlier summary would be folded in with too little new material beside it.
    TooLittleNew {
        /// Tokens new since the summary.
        new_tokens: usize,
        /// Tokens of the summary.
        summary_tokens: usize,
        /// Tokens of new material needed.
        needed: usize,
    },
    /// Usage is under `recommendedUsage`.
    UsageTooLow {
        /// Usage now (0..1).
        usage: f64,
        /// `recommendedUsage`.
        recommended: f64,
    },
    /// Only the current iteration has entries.
    NothingToCompact,
    /// What would be compacted is so small that no summary of it could come out clearly
    /// smaller: asking a model would only fail the size check.
    TooSmallToCompact {
        /// Tokens of what would be compacted.
        tokens: usize,
        /// The last iteration it holds.
        last: u32,
    },
    /// The pinned facts alone (under the six headings) exceed the summary's budget: a summary
    /// the user asks for is refused (the loop's own goes on, over its budget by them).
    PinsOverBudget {
        /// Tokens the pins and the headings take.
        needed: usize,
        /// `summaryBudgetTokens`, or its default.
        budget: usize,
    },
    /// The clearing rung was asked for and finds no body to clear.
    NothingToClear,
    /// The key is not an archive key of these logs.
    NotAnArchiveKey(String),
    /// The archive cannot be put back in the logs as they are.
    Conflict(Conflict),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Compacting => write!(
                f,
                "A compaction is already running in this page; try again after its \
                 compaction_complete or compaction_error event."
            ),
            Refusal::CompactingElsewhere => write!(
                f,
                "A compaction is running in another tab; try again when it has finished (if \
                 that tab closed, its lease expires on its own)."
            ),
            Refusal::NoSession => write!(
                f,
                "There is no reasoning session to compact yet; logs.startIteration() starts one."
            ),
            Refusal::TooFewIterations { needed, completed } => write!(
                f,
                "Compaction needs at least {needed} completed iteration{}; {completed} so far \
                 (the minIterations option sets how many).",
                if *needed == 1 { "" } else { "s" }
            ),
            Refusal::TooLittleNew {
                new_tokens,
                summary_tokens,
                needed,
            } => write!(
                f,
                "Too little is new since the last compaction: {new_tokens} tokens beside the \
                 {summary_tokens}-token summary; a compaction needs at least {needed} to come \
                 out clearly smaller. Let more iterations run first."
            ),
            Refusal::UsageTooLow { usage, recommended } => write!(
                f,
                "Context usage is {}%; compaction is worth it from {}% (the recommendedUsage \
                 option; trigger \"context_limit_error\" skips this rule when the app's model \
                 reported its context too long).",
                CompactorSettings::whole_percent(*usage),
                CompactorSettings::whole_percent(*recommended)
            ),
            Refusal::NothingToCompact => write!(
                f,
                "Nothing to compact: only the current iteration has entries; finish it and \
                 start the next first."
            ),
            Refusal::TooSmallToCompact { tokens, last } => write!(
                f,
                "Too little to compact: iterations 1-{last} hold {tokens} tokens, and no \
                 summary of them would come out clearly smaller. Let more iterations run \
                 first; what fills the window is the current iteration."
            ),
            Refusal::PinsOverBudget { needed, budget } => write!(
                f,
                "The pinned facts need {needed} tokens of the summary, more than its budget of \
                 {budget} (summaryBudgetTokens): raise summaryBudgetTokens to at least {needed}, \
                 or unpin facts; no model was called (the loop's own compaction goes on, its \
                 summary over the budget by them)."
            ),
            Refusal::NothingToClear => write!(
                f,
                "Nothing to clear: no execution result or tool body outside the newest \
                 keepIterations iterations is larger than aboveTokens (or clearing is false); \
                 compact({{ rung: \"summarize\" }}) summarises instead."
            ),
            Refusal::NotAnArchiveKey(key) => {
                write!(f, "\"{key}\" is not an archive key of these logs")
            }
            Refusal::Conflict(conflict) => conflict.fmt(f),
        }
    }
}

/// Why a call must wait for another to finish (code `busy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BusyReason {
    /// A compaction over these logs already runs in this page.
    Compacting,
    /// Another tab holds the compaction lease.
    CompactingElsewhere,
    /// A rollback was asked for while a compaction runs.
    RollbackWhileCompacting,
    /// An archive deletion was asked for while a compaction runs.
    DeleteWhileCompacting,
    /// The logs changed while an archive was put back; the archive is kept.
    LogsChangedDuringRollback,
    /// Other code rewrote the logs while this compaction ran.
    Conflict(Conflict),
}

impl fmt::Display for BusyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BusyReason::Compacting => {
                write!(f, "A compaction is already running; wait for it to finish.")
            }
            BusyReason::CompactingElsewhere => write!(
                f,
                "A compaction is running in another tab; try again when it has finished."
            ),
            BusyReason::RollbackWhileCompacting => write!(
                f,
                "A compaction is running; roll back when it has finished."
            ),
            BusyReason::DeleteWhileCompacting => write!(
                f,
                "A compaction is running; delete archives when it has finished."
            ),
            BusyReason::LogsChangedDuringRollback => write!(
                f,
                "The logs changed while the archive was put back; the archive is kept, roll \
                 back again."
            ),
            BusyReason::Conflict(conflict) => conflict.fmt(f),
        }
    }
}

/// Why another attempt follows a failed one (the `reason` of a `compaction_retry` event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryReason {
    /// The answer was rejected, cut off or empty.
    InvalidSummary,
    /// The answer lacked ledger facts (`missingFacts: "retry"` or `"fail"`).
    MissingFacts,
    /// The answer named what no source holds (`unverified: "retry"` or `"fail"`).
    Unverified,
    /// The answer gave the user words only tool output said (`injections: "retry"` or `"fail"`).
    Injection,
    /// The API answered one of the retryable statuses (408, 429, 500, 502, 503, 504).
    Http(u16),
    /// No answer within `timeoutMs`.
    Timeout,
    /// The API could not be reached.
    Network,
    /// A custom provider failed.
    Provider,
}

impl RetryReason {
    /// Every reason a retry can have.
    pub const ALL: [RetryReason; 13] = [
        RetryReason::InvalidSummary,
        RetryReason::MissingFacts,
        RetryReason::Unverified,
        RetryReason::Injection,
        RetryReason::Http(408),
        RetryReason::Http(429),
        RetryReason::Http(500),
        RetryReason::Http(502),
        RetryReason::Http(503),
        RetryReason::Http(504),
        RetryReason::Timeout,
        RetryReason::Network,
        RetryReason::Provider,
    ];

    /// The snake_case name used in events: `invalid_summary`, `http_429`, `timeout`, …
    pub fn name(self) -> String {
        match self {
            RetryReason::InvalidSummary => "invalid_summary".into(),
            RetryReason::MissingFacts => "missing_facts".into(),
            RetryReason::Unverified => "unverified".into(),
            RetryReason::Injection => "injection".into(),
            RetryReason::Http(status) => format!("http_{status}"),
            RetryReason::Timeout => "timeout".into(),
            RetryReason::Network => "network".into(),
            RetryReason::Provider => "provider".into(),
        }
    }

    /// What the app hears: what happened, and that attempt `next` of `of` follows after
    /// `wait_ms`.
    pub fn announcement(self, next: u32, of: u32, wait_ms: u32) -> String {
        // Tenths of a second in integers: formatting a float with a precision pulls 14 KB of
        // the standard library's float printing into the wasm.
        let tenths = wait_ms.saturating_add(50) / 100;
        format!(
            "{}; attempt {next} of {of} in {}.{} s",
            self.describe(),
            tenths / 10,
            tenths % 10
        )
    }

    /// What happened, for people.
    pub fn describe(self) -> String {
        match self {
            RetryReason::InvalidSummary => "The summary was incomplete".into(),
            RetryReason::MissingFacts => "The summary left out facts it must keep".into(),
            RetryReason::Unverified => "The summary named things the logs do not hold".into(),
            RetryReason::Injection => {
                "The summary gave the user words only tool output said".into()
            }
            RetryReason::Http(429) => "The model's API is rate-limited".into(),
            RetryReason::Http(status) => format!("The model's API answered HTTP {status}"),
            RetryReason::Timeout => "The model did not answer in time".into(),
            RetryReason::Network => "The model's API could not be reached".into(),
            RetryReason::Provider => "The summary provider failed".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RetryReason;

    #[test]
    fn the_wait_is_announced_in_tenths_of_a_second() {
        for (wait_ms, said) in [
            (0, "in 0.0 s"),
            (49, "in 0.0 s"),
            (50, "in 0.1 s"),
            (1_250, "in 1.3 s"),
            (2_000, "in 2.0 s"),
            (u32::MAX, "in 4294967.2 s"),
        ] {
            let text = RetryReason::Timeout.announcement(2, 3, wait_ms);
            assert!(text.ends_with(said), "{wait_ms} ms: {text}");
        }
    }
}
