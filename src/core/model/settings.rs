//! The options of a compactor, with the defaults of the API.

use crate::core::json::record::json_names;
use crate::core::model::clearing::Clearing;
use crate::core::model::fallback::FallbackPolicy;
use crate::core::model::option_rows::{compactor_options, OptionValue, Range};
use std::fmt;

/// What triggered a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trigger {
    /// A person pressed the button.
    #[default]
    User,
    /// `shouldAutoCompact()` said so.
    Auto,
    /// The app's model answered that the context is too long: the usage rule is skipped.
    ContextLimitError,
}

json_names! {
    all Trigger {
        User = "user",
        Auto = "auto",
        ContextLimitError = "context_limit_error",
    }
}

/// The largest token count an option may give (a billion: larger is a mistake, and could wrap
/// on 32-bit wasm).
pub(crate) const MAX_TOKENS_OPTION: usize = 1_000_000_000;
/// The longest `timeoutMs` (30 minutes).
pub(crate) const MAX_TIMEOUT_MS: u32 = 1_800_000;
/// The longest `retryDelayMs` (10 minutes).
pub(crate) const MAX_RETRY_DELAY_MS: u32 = 600_000;
/// The most `maxRetries`.
pub(crate) const MAX_RETRIES: u32 = 10;
/// The longest wait a 429's RetryInfo can impose before the retry, in ms.
pub const MAX_RETRY_WAIT_MS: u32 = 60_000;

/// An option out of its range: the option's name, and the rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    /// The first option out of range (`contextWindowTokens`, …).
    pub field: &'static str,
    /// The rule, naming the option.
    pub message: String,
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SettingsError {}

impl SettingsError {
    /// `field` is out of `range`.
    fn out_of(field: &'static str, range: &Range) -> Self {
        SettingsError {
            field,
            message: format!("{field} must be {}", range.text()),
        }
    }
}

/// A [`SettingsError`] for `field`.
fn out_of_range(field: &'static str, message: impl Into<String>) -> Result<(), SettingsError> {
    Err(SettingsError {
        field,
        message: message.into(),
    })
}

/// What a compaction does with ledger facts the model's answer lacks (`missingFacts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingFacts {
    /// Add each in the ledger's words under its section; no further call.
    #[default]
    Repair,
    /// Ask once more naming them, then repair.
    Retry,
    /// Ask again naming them while retries allow, then fail `invalid_summary`.
    Fail,
}

/// What a compaction does with lines a check flags: lines that name what no source holds
/// (`unverified`), lines that give the user words only tool output said (`injections`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LinePolicy {
    /// End each such line with its mark (` [unverified]`, ` [from tool output]`).
    #[default]
    Mark,
    /// Ask once more naming them, then mark.
    Retry,
    /// Ask again naming them while retries allow, then fail `invalid_summary`.
    Fail,
}

/// Where the archives are kept (`archiveStore`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveBackend {
    /// IndexedDB: off the app's localStorage, with the browser's larger quota.
    IndexedDb,
    /// localStorage beside the logs, for apps whose own code reads archives there.
    LocalStorage,
}

json_names! {
    ArchiveBackend {
        IndexedDb = "indexedDB",
        LocalStorage = "localStorage",
    }
}

const MAX_TOKENS: u64 = MAX_TOKENS_OPTION as u64;

compactor_options! {
    /// Every tunable of a compaction (`CompactorOptions`, less the provider and the app's own
    /// measure), one row per option.
    #[derive(Debug, Clone, PartialEq)]
    pub struct CompactorSettings {
        /// The context window of the app's model, in tokens.
        context_window_tokens: usize = "contextWindowTokens" fallback,
            default 32_768, range Range::Between(1, MAX_TOKENS), ts "number";
        /// Tokens of the app's own prompt parts (system prompt, tools), counted in the usage.
        base_tokens: usize = "baseTokens" fallback,
            default 0, range Range::AtMost(MAX_TOKENS), ts "number";
        /// Completed iterations needed before a compaction is allowed.
        min_iterations: u32 = "minIterations" fallback,
            default 3, range Range::Any, ts "number";
        /// Usage (0..1) below which `canCompact()` says no. Given, it is also the usage after a clearing at which the loop's compaction goes on to summarise (as 0.1 did); absent, the loop's compaction summarises after a clearing when the summary would cut what every later turn reads by at least two thirds, or usage is still at 0.6.
        recommended_usage: Option<f64> = "recommendedUsage" opt,
            default None, shown "0.6", range Range::Between(0, 1), ts "number";
        /// Usage (0..1) at which `shouldAutoCompact()` says yes.
        auto_trigger_usage: f64 = "autoTriggerUsage" fallback,
            default 0.85, range Range::Between(0, 1), ts "number";
        /// Temperature of the summary call; when absent a provider uses 0.1, or what the model family's guide advises (1.0 for Gemini 3).
        temperature: Option<f64> = "temperature" opt,
            default None, shown "0.1 (1.0 for Gemini 3 and later, the model's own for `-latest` aliases)",
            range Range::Between(0, 2), ts "number";
        /// Output budget of the summary call, in tokens.
        max_output_tokens: u32 = "maxOutputTokens" fallback,
            default 4000, range Range::AtLeast(1), ts "number";
        /// Time limit of one provider call, in ms (a compaction must end within hours, or its lease would hold other tabs back).
        timeout_ms: u32 = "timeoutMs" fallback,
            default 30_000, range Range::Between(1, MAX_TIMEOUT_MS as u64), ts "number";
        /// Further attempts after a failed or invalid one.
        max_retries: u32 = "maxRetries" fallback,
            default 1, range Range::AtMost(MAX_RETRIES as u64), ts "number";
        /// Wait before a retry, in ms (a 429's RetryInfo wins, up to 60 s).
        retry_delay_ms: u32 = "retryDelayMs" fallback,
            default 2000, range Range::AtMost(MAX_RETRY_DELAY_MS as u64), ts "number";
        /// Archives kept at most in localStorage (IndexedDB archives, and the bodies a clearing took, leave by expiry); the archive is what makes rollback possible.
        max_archives: usize = "maxArchives" fallback,
            default 10, range Range::AtLeast(1), ts "number";
        /// Days an archive is kept.
        archive_expiry_days: f64 = "archiveExpiryDays" fallback,
            default 30.0, range Range::Above(0), ts "number";
        /// Extra guidance appended to the prompt.
        instructions: Option<String> = "instructions" opt,
            default None, range Range::Any, ts "string";
        /// Key prefix of the archives, `<prefix>archived_logs_` when absent.
        archive_prefix: Option<String> = "archivePrefix" opt,
            default None, shown "`${prefix}archived_logs_`", range Range::NonEmpty, ts "string";
        /// Key of the metrics, `<prefix>compaction_metrics` when absent.
        metrics_key: Option<String> = "metricsKey" opt,
            default None, shown "`${prefix}compaction_metrics`", range Range::NonEmpty, ts "string";
        /// What to do with ledger facts the answer lacks: add them, ask once more, or refuse.
        missing_facts: MissingFacts = "missingFacts" fallback,
            default MissingFacts::Repair, range Range::Any, ts "\"repair\" | \"retry\" | \"fail\"";
        /// What to do with lines naming what no source holds: mark them, ask once more, or refuse.
        unverified: LinePolicy = "unverified" fallback,
            default LinePolicy::Mark, range Range::Any, ts "\"mark\" | \"retry\" | \"fail\"";
        /// What to do with lines that give the user a request, an instruction or a permission only tool output gave: mark them, ask once more, or refuse.
        injections: LinePolicy = "injections" fallback,
            default LinePolicy::Mark, range Range::Any, ts "\"mark\" | \"retry\" | \"fail\"";
        /// Input budget of one summary call, in tokens; a larger prompt is summarised in parts, then merged. When absent, the provider's model family says (none for custom providers).
        max_prompt_tokens: Option<usize> = "maxPromptTokens" opt,
            default None, shown "the model's input limit less maxOutputTokens for Gemini models (1,048,576 − 4,000); none for custom providers, Gemma and unknown model names",
            range Range::Rule("at least 2 × maxOutputTokens + 2000, at most 1000000000"), ts "number";
        /// Where the archives are kept: IndexedDB (each one gzip-compressed through the browser's `CompressionStream`: 91–97% fewer bytes on the benchmark sessions, whose text repeats more than most; archives stored uncompressed before still read), or localStorage beside the logs.
        archive_store: Option<ArchiveBackend> = "archiveStore" opt,
            default None, shown "\"indexedDB\" where the browser has it, else \"localStorage\"",
            range Range::Any, ts "\"indexedDB\" | \"localStorage\"";
        /// No stored summary is larger, in tokens.
        summary_budget_tokens: Option<usize> = "summaryBudgetTokens" opt,
            default None, shown "the smaller of maxOutputTokens and 15% of contextWindowTokens",
            range Range::Between(MIN_SUMMARY_BUDGET as u64, MAX_TOKENS), ts "number";
        /// Whether a summary is taken from the cache when its exact input was summarised before (the same prompt to the same model), with no provider call. A summary is cached only where it takes at most a quarter of what its compaction freed (so a compaction frees what it says), and where storage is full the cache gives its room to the next append.
        summary_cache: bool = "summaryCache" fallback,
            default true, range Range::Any, ts "boolean";
        /// The ladder's clearing rung: before a compaction the loop asks for summarises, bulky execution results and tool bodies of older iterations move to an archive and a placeholder takes their place, with no model call; `false` turns it off. Its `keepIterations` adds to `keepRecentIterations`: with 3 and 3, only iterations older than the newest 6 finished ones are cleared (for bulky tool output in a small window, `keepRecentIterations: 1` with `clearing: { keepIterations: 1 }`).
        clearing: Clearing = "clearing" fallback,
            default Clearing::default(), shown "`{ aboveTokens: 400 }`, the newest iterations whole by tokens",
            range Range::Rule("false, or an object whose keepIterations is at least 1"),
            ts "false | ClearingOptions";
        /// Finished iterations kept verbatim besides the running one: the newest this many stay whole when the ones before them are compacted (0: only the running iteration stays, as in GDRS). The clearing rung keeps its own `keepIterations` on top of these.
        keep_recent_iterations: u32 = "keepRecentIterations" fallback,
            default 0, range Range::Any, ts "number";
        /// The ladder's last rung: when every attempt of the model fails (HTTP, time-out, network, blocked, an invalid answer), the package's own summary (the offline summariser's, under the same budget, checks and archive) is stored instead of a refusal: for the compactions the loop asks for (`"loop"`: `auto`, `context_limit_error`), for every one (`"always"`), or never (`false`).
        fallback: FallbackPolicy = "fallback" fallback,
            default FallbackPolicy::Loop, range Range::Any, ts "false | \"loop\" | \"always\"";
    }
}

json_names! {
    MissingFacts {
        Repair = "repair",
        Retry = "retry",
        Fail = "fail",
    }
}

json_names! {
    LinePolicy {
        Mark = "mark",
        Retry = "retry",
        Fail = "fail",
    }
}

/// An option whose values are names: any is in range, the default is shown by its name.
macro_rules! named_option {
    ($($ty:ty),*) => {
        $(impl OptionValue for $ty {
            fn in_range(&self, _: &Range) -> bool {
                true
            }
            fn shown(&self) -> String {
                format!("\"{}\"", self.as_str())
            }
        })*
    };
}

named_option!(MissingFacts, LinePolicy, ArchiveBackend);

/// Share of the window a summary takes at most when the app sets no `summaryBudgetTokens`.
pub const DEFAULT_SUMMARY_SHARE: f64 = 0.15;

/// `recommendedUsage` when the app gives none.
pub const DEFAULT_RECOMMENDED_USAGE: f64 = 0.60;

/// The smallest `summaryBudgetTokens`: the six headings, the goal, a pin and an index line.
pub const MIN_SUMMARY_BUDGET: usize = 200;

/// Tokens a summary prompt needs besides the history it carries (instructions, the facts).
pub const PROMPT_ROOM_TOKENS: usize = 2_000;

/// The temperature of the summary call when the app sets none.
pub(crate) const DEFAULT_TEMPERATURE: f64 = 0.1;

impl CompactorSettings {
    /// Checks the ranges; the message names the first option out of range.
    pub(crate) fn validate(&self) -> Result<(), SettingsError> {
        self.check_rows()?;
        let least_budget = self.least_prompt_budget();
        if self
            .max_prompt_tokens
            .is_some_and(|b| b < least_budget || b > MAX_TOKENS_OPTION)
        {
            return out_of_range(
                "maxPromptTokens",
                format!(
                    "maxPromptTokens must be between {least_budget} (two answers of \
                     maxOutputTokens and the prompt's own text, so that parts can be merged) \
                     and {MAX_TOKENS_OPTION}"
                ),
            );
        }
        Ok(())
    }

    /// `recommendedUsage`, or [`DEFAULT_RECOMMENDED_USAGE`] when the app gives none.
    pub fn recommended(&self) -> f64 {
        self.recommended_usage.unwrap_or(DEFAULT_RECOMMENDED_USAGE)
    }

    /// The largest summary a compaction stores, in tokens: `summaryBudgetTokens`, or the
    /// smaller of `maxOutputTokens` and [`DEFAULT_SUMMARY_SHARE`] of the window (never below
    /// [`MIN_SUMMARY_BUDGET`]).
    pub fn summary_budget(&self) -> usize {
        self.summary_budget_tokens.unwrap_or_else(|| {
            let share = (self.context_window_tokens as f64 * DEFAULT_SUMMARY_SHARE) as usize;
            share
                .min(self.max_output_tokens as usize)
                .max(MIN_SUMMARY_BUDGET)
        })
    }

    /// The smallest input budget that can merge two parts: two answers of `maxOutputTokens`
    /// and room for the prompt's own text and facts.
    pub fn least_prompt_budget(&self) -> usize {
        (self.max_output_tokens as usize)
            .saturating_mul(2)
            .saturating_add(PROMPT_ROOM_TOKENS)
    }

    /// Share of the context window that `log_tokens` plus the base tokens take.
    pub fn usage(&self, log_tokens: usize) -> f64 {
        (self.base_tokens as f64 + log_tokens as f64) / self.context_window_tokens as f64
    }

    /// `share` (0..1) as a whole percentage, for messages.
    pub(crate) fn whole_percent(share: f64) -> u64 {
        (share * 100.0).round().max(0.0) as u64
    }

    /// Archive lifetime in milliseconds.
    pub(crate) fn archive_lifetime_ms(&self) -> f64 {
        self.archive_expiry_days * 86_400_000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::order::text_search::TextSearch;

    #[test]
    fn defaults_are_the_documented_ones_and_valid() {
        let s = CompactorSettings::default();
        assert_eq!(s.context_window_tokens, 32_768);
        assert_eq!(
            (s.min_iterations, s.max_retries, s.max_archives),
            (3, 1, 10)
        );
        assert!(s.validate().is_ok());
        assert!((s.usage(16_384) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn every_option_a_range_names_is_spelled_as_the_table_reads_it() {
        use crate::core::json::record::Record;
        let d = CompactorSettings::default;
        let out_of_range = [
            CompactorSettings {
                context_window_tokens: 0,
                ..d()
            },
            CompactorSettings {
                base_tokens: usize::MAX,
                ..d()
            },
            CompactorSettings {
                timeout_ms: u32::MAX,
                ..d()
            },
            CompactorSettings {
                retry_delay_ms: u32::MAX,
                ..d()
            },
            CompactorSettings {
                max_retries: u32::MAX,
                ..d()
            },
            CompactorSettings {
                recommended_usage: Some(2.0),
                ..d()
            },
            CompactorSettings {
                auto_trigger_usage: -1.0,
                ..d()
            },
            CompactorSettings {
                temperature: Some(3.0),
                ..d()
            },
            CompactorSettings {
                max_output_tokens: 0,
                ..d()
            },
            CompactorSettings {
                timeout_ms: 0,
                ..d()
            },
            CompactorSettings {
                max_prompt_tokens: Some(1),
                ..d()
            },
            CompactorSettings {
                summary_budget_tokens: Some(1),
                ..d()
            },
            CompactorSettings {
                max_archives: 0,
                ..d()
            },
            CompactorSettings {
                archive_expiry_days: 0.0,
                ..d()
            },
            CompactorSettings {
                archive_prefix: Some(String::new()),
                ..d()
            },
            CompactorSettings {
                metrics_key: Some(String::new()),
                ..d()
            },
        ];
        for settings in out_of_range {
            let err = settings.validate().unwrap_err();
            assert!(
                CompactorSettings::FIELDS.contains(&err.field),
                "{}",
                err.field
            );
            assert!(err.message.contains_text(err.field), "{err}");
        }
    }

    #[test]
    fn out_of_range_options_are_named() {
        let s = CompactorSettings {
            recommended_usage: Some(1.5),
            ..Default::default()
        };
        assert!(s
            .validate()
            .unwrap_err()
            .message
            .contains_text("recommendedUsage"));
        let s = CompactorSettings {
            max_archives: 0,
            ..Default::default()
        };
        assert!(s
            .validate()
            .unwrap_err()
            .message
            .contains_text("maxArchives"));
        for (s, named) in [
            (
                CompactorSettings {
                    base_tokens: 4_294_967_000,
                    ..Default::default()
                },
                "baseTokens",
            ),
            (
                CompactorSettings {
                    context_window_tokens: usize::MAX,
                    ..Default::default()
                },
                "contextWindowTokens",
            ),
            (
                CompactorSettings {
                    timeout_ms: u32::MAX,
                    ..Default::default()
                },
                "timeoutMs",
            ),
            (
                CompactorSettings {
                    summary_budget_tokens: Some(199),
                    ..Default::default()
                },
                "summaryBudgetTokens",
            ),
        ] {
            assert!(
                s.validate().unwrap_err().message.contains_text(named),
                "{named}"
            );
        }
    }

    #[test]
    fn the_summary_budget_is_the_smaller_of_the_output_budget_and_a_share_of_the_window() {
        let budget = |window: usize, output: u32, set: Option<usize>| {
            CompactorSettings {
                context_window_tokens: window,
                max_output_tokens: output,
                summary_budget_tokens: set,
                ..Default::default()
            }
            .summary_budget()
        };
        assert_eq!(budget(16_384, 4_000, None), 2_457);
        assert_eq!(budget(1_048_576, 4_000, None), 4_000);
        assert_eq!(budget(1_000, 4_000, None), MIN_SUMMARY_BUDGET);
        assert_eq!(budget(16_384, 4_000, Some(9_000)), 9_000);
    }

    #[test]
    fn usage_adds_without_wrapping() {
        let s = CompactorSettings {
            base_tokens: usize::MAX,
            ..Default::default()
        };
        assert!(s.usage(usize::MAX) > 1.0);
    }
}
