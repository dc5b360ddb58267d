//! The options of a compactor, with the defaults of the API.

use crate::core::json::record::{json_names, json_record};
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

/// Every tunable of a compaction (`CompactorOptions` in the README, less the provider).
#[derive(Debug, Clone, PartialEq)]
pub struct CompactorSettings {
    /// The app model's context window, in tokens.
    pub context_window_tokens: usize,
    /// Tokens of the app's own prompt parts, counted in the usage.
    pub base_tokens: usize,
    /// Completed iterations needed before a compaction is allowed.
    pub min_iterations: u32,
    /// Usage (0..1) below which `canCompact` says no.
    pub recommended_usage: f64,
    /// Usage (0..1) at which `shouldAutoCompact` says yes.
    pub auto_trigger_usage: f64,
    /// Sampling temperature of the summary call; when absent a provider uses 0.1, or what the
    /// model family's guide advises (1.0 for Gemini 3).
    pub temperature: Option<f64>,
    /// Output budget of the summary call.
    pub max_output_tokens: u32,
    /// Time limit of one provider call, in milliseconds.
    pub timeout_ms: u32,
    /// Further attempts after a failed or invalid one.
    pub max_retries: u32,
    /// Wait before a retry, in milliseconds.
    pub retry_delay_ms: u32,
    /// Archives kept at most.
    pub max_archives: usize,
    /// Days an archive is kept.
    pub archive_expiry_days: f64,
    /// Extra guidance appended to the prompt.
    pub instructions: Option<String>,
    /// Key prefix of the archives, `<prefix>archived_logs_` when absent.
    pub archive_prefix: Option<String>,
    /// Key of the metrics, `<prefix>compaction_metrics` when absent.
    pub metrics_key: Option<String>,
    /// What to do with ledger facts the answer lacks.
    pub missing_facts: MissingFacts,
    /// What to do with lines naming what no source holds.
    pub unverified: LinePolicy,
    /// What to do with lines that give the user a request, an instruction or a permission
    /// only tool output gave.
    pub injections: LinePolicy,
    /// Input budget of one summary call, in tokens; a larger prompt is summarised in parts,
    /// then merged. When absent, the provider's model family says (none for custom providers).
    pub max_prompt_tokens: Option<usize>,
    /// Where the archives are kept; when absent, IndexedDB where the browser has it.
    pub archive_store: Option<ArchiveBackend>,
    /// No stored summary is larger, in tokens; when absent, the smaller of `maxOutputTokens`
    /// and [`DEFAULT_SUMMARY_SHARE`] of the window.
    pub summary_budget_tokens: Option<usize>,
    /// Whether a summary is taken from the cache when its exact input was summarised before
    /// (the same prompt to the same model), with no provider call.
    pub summary_cache: bool,
}

impl Default for CompactorSettings {
    fn default() -> Self {
        Self {
            context_window_tokens: 32_768,
            base_tokens: 0,
            min_iterations: 3,
            recommended_usage: 0.60,
            auto_trigger_usage: 0.85,
            temperature: None,
            max_output_tokens: 4000,
            timeout_ms: 30_000,
            max_retries: 1,
            retry_delay_ms: 2000,
            max_archives: 10,
            archive_expiry_days: 30.0,
            instructions: None,
            archive_prefix: None,
            metrics_key: None,
            missing_facts: MissingFacts::Repair,
            unverified: LinePolicy::Mark,
            injections: LinePolicy::Mark,
            max_prompt_tokens: None,
            archive_store: None,
            summary_budget_tokens: None,
            summary_cache: true,
        }
    }
}

// Options absent or `null` take their defaults; an unknown option is an error.
json_record! {
    read CompactorSettings [deny defaults] {
        context_window_tokens: "contextWindowTokens" fallback,
        base_tokens: "baseTokens" fallback,
        min_iterations: "minIterations" fallback,
        recommended_usage: "recommendedUsage" fallback,
        auto_trigger_usage: "autoTriggerUsage" fallback,
        temperature: "temperature" opt,
        max_output_tokens: "maxOutputTokens" fallback,
        timeout_ms: "timeoutMs" fallback,
        max_retries: "maxRetries" fallback,
        retry_delay_ms: "retryDelayMs" fallback,
        max_archives: "maxArchives" fallback,
        archive_expiry_days: "archiveExpiryDays" fallback,
        instructions: "instructions" opt,
        archive_prefix: "archivePrefix" opt,
        metrics_key: "metricsKey" opt,
        missing_facts: "missingFacts" fallback,
        unverified: "unverified" fallback,
        injections: "injections" fallback,
        max_prompt_tokens: "maxPromptTokens" opt,
        archive_store: "archiveStore" opt,
        summary_budget_tokens: "summaryBudgetTokens" opt,
        summary_cache: "summaryCache" fallback,
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

/// Share of the window a summary takes at most when the app sets no `summaryBudgetTokens`.
pub const DEFAULT_SUMMARY_SHARE: f64 = 0.15;

/// The smallest `summaryBudgetTokens`: the six headings, the goal, a pin and an index line.
pub const MIN_SUMMARY_BUDGET: usize = 200;

/// Tokens a summary prompt needs besides the history it carries (instructions, the facts).
pub const PROMPT_ROOM_TOKENS: usize = 2_000;

/// The temperature of the summary call when the app sets none.
pub(crate) const DEFAULT_TEMPERATURE: f64 = 0.1;

impl CompactorSettings {
    /// Checks the ranges; the message names the first option out of range.
    pub(crate) fn validate(&self) -> Result<(), SettingsError> {
        let usage_ok = |v: f64| (0.0..=1.0).contains(&v);
        if self.context_window_tokens == 0 || self.context_window_tokens > MAX_TOKENS_OPTION {
            return out_of_range(
                "contextWindowTokens",
                format!("contextWindowTokens must be between 1 and {MAX_TOKENS_OPTION}"),
            );
        }
        if self.base_tokens > MAX_TOKENS_OPTION {
            return out_of_range(
                "baseTokens",
                format!("baseTokens must be at most {MAX_TOKENS_OPTION}"),
            );
        }
        if self.timeout_ms > MAX_TIMEOUT_MS
            || self.retry_delay_ms > MAX_RETRY_DELAY_MS
            || self.max_retries > MAX_RETRIES
        {
            let field = if self.timeout_ms > MAX_TIMEOUT_MS {
                "timeoutMs"
            } else if self.retry_delay_ms > MAX_RETRY_DELAY_MS {
                "retryDelayMs"
            } else {
                "maxRetries"
            };
            return out_of_range(
                field,
                format!(
                    "timeoutMs must be at most {MAX_TIMEOUT_MS}, retryDelayMs at most \
                 {MAX_RETRY_DELAY_MS} and maxRetries at most {MAX_RETRIES} (a compaction must \
                 end within hours, or its lease would hold other tabs back)"
                ),
            );
        }
        if !usage_ok(self.recommended_usage) || !usage_ok(self.auto_trigger_usage) {
            let field = if usage_ok(self.recommended_usage) {
                "autoTriggerUsage"
            } else {
                "recommendedUsage"
            };
            return out_of_range(
                field,
                "recommendedUsage and autoTriggerUsage must be between 0 and 1",
            );
        }
        if self.temperature.is_some_and(|t| !(0.0..=2.0).contains(&t)) {
            return out_of_range("temperature", "temperature must be between 0 and 2");
        }
        if self.max_output_tokens == 0 || self.timeout_ms == 0 {
            let field = if self.max_output_tokens == 0 {
                "maxOutputTokens"
            } else {
                "timeoutMs"
            };
            return out_of_range(
                field,
                "maxOutputTokens and timeoutMs must be greater than 0",
            );
        }
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
        if self
            .summary_budget_tokens
            .is_some_and(|b| !(MIN_SUMMARY_BUDGET..=MAX_TOKENS_OPTION).contains(&b))
        {
            return out_of_range(
                "summaryBudgetTokens",
                format!(
                    "summaryBudgetTokens must be between {MIN_SUMMARY_BUDGET} (the six \
                     headings, the goal, a pin and an index line) and {MAX_TOKENS_OPTION}"
                ),
            );
        }
        if self.max_archives == 0 {
            return out_of_range(
                "maxArchives",
                "maxArchives must be at least 1 (the archive is what makes rollback possible)",
            );
        }
        if self.archive_expiry_days.is_nan() || self.archive_expiry_days <= 0.0 {
            return out_of_range(
                "archiveExpiryDays",
                "archiveExpiryDays must be greater than 0",
            );
        }
        if self.archive_prefix.as_deref().is_some_and(str::is_empty)
            || self.metrics_key.as_deref().is_some_and(str::is_empty)
        {
            let field = if self.metrics_key.as_deref().is_some_and(str::is_empty) {
                "metricsKey"
            } else {
                "archivePrefix"
            };
            return out_of_range(field, "archivePrefix and metricsKey must not be empty");
        }
        Ok(())
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
                recommended_usage: 2.0,
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
            assert!(err.message.contains(err.field), "{err}");
        }
    }

    #[test]
    fn out_of_range_options_are_named() {
        let s = CompactorSettings {
            recommended_usage: 1.5,
            ..Default::default()
        };
        assert!(s
            .validate()
            .unwrap_err()
            .message
            .contains("recommendedUsage"));
        let s = CompactorSettings {
            max_archives: 0,
            ..Default::default()
        };
        assert!(s.validate().unwrap_err().message.contains("maxArchives"));
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
            assert!(s.validate().unwrap_err().message.contains(named), "{named}");
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
