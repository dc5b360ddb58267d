//! Compaction metrics, persisted under `<prefix>compaction_metrics` (or `metricsKey`), and the
//! one type that updates them ([`Metrics`]).

use crate::core::error::StorageError;
use crate::core::json::read::RawJson;
use crate::core::json::record::json_record;
use crate::core::model::clearing::{ClearedBody, Rung};
use crate::core::model::outcome::CompactionResult;
use crate::core::model::token_usage::TokenUsage;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::store::keys::StorageKeys;
use crate::core::store::log_store::LogStore;
use crate::core::store::stored_json::{read_value, write_json};

/// Running totals over every compaction of these logs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompactionMetrics {
    /// Compactions attempted (successful plus failed).
    pub total_compactions: u32,
    /// Compactions that swapped a summary in.
    pub successful_compactions: u32,
    /// Compactions that stopped with an error.
    pub failed_compactions: u32,
    /// Mean of `reduction` over successful compactions.
    pub average_reduction_ratio: f64,
    /// Mean wall time of successful compactions, in ms.
    pub average_execution_time: f64,
    /// Sum of `tokensSaved`.
    pub total_tokens_saved: usize,
    /// Sum of provider calls.
    pub total_attempts: u32,
    /// Prompt tokens providers reported, over all compactions.
    pub total_prompt_tokens: u64,
    /// Answer tokens providers reported.
    pub total_output_tokens: u64,
    /// Thinking tokens providers reported.
    pub total_thinking_tokens: u64,
    /// ISO time of the last compaction, successful or not.
    pub last_compaction_at: Option<String>,
    /// Code of the last error, if the last compaction failed.
    pub last_error_code: Option<String>,
    /// Ledger facts the package added to summaries (the models' answers lacked them).
    pub total_repaired_facts: u32,
    /// Summary lines marked ` [unverified]`.
    pub total_unverified_lines: u32,
    /// What the last compaction cost and mended, successful or not.
    pub last_compaction: Option<CompactionCost>,
    /// Compactions that cleared bulky bodies (the clearing rung ran), with or without a
    /// summary after it.
    pub clearings: u32,
    /// Tokens the clearings took out of the live logs.
    pub tokens_cleared: usize,
    /// Compactions the clearing rung completed alone: model calls a summary would have made.
    pub calls_saved: u32,
    /// Compactions that stored the package's own summary, every attempt of the model failed.
    pub fallbacks: u32,
    /// Compactions whose model summary replaced a fallback summary.
    pub upgrades: u32,
    /// Fields other code keeps here (GDRS's own `totalCostSaved`, …), written back as read.
    pub extra: Vec<(String, RawJson)>,
}

/// What one compaction cost and mended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CompactionCost {
    /// Provider calls.
    pub calls: u32,
    /// Ledger facts added in the ledger's words.
    pub repaired_facts: u32,
    /// Lines marked ` [unverified]`.
    pub unverified_lines: u32,
}

// Fields absent or `null` read as zero; other code's fields are kept, in their order.
json_record! {
    read write CompactionMetrics [..extra] {
        total_compactions: "totalCompactions" default,
        successful_compactions: "successfulCompactions" default,
        failed_compactions: "failedCompactions" default,
        average_reduction_ratio: "averageReductionRatio" default,
        average_execution_time: "averageExecutionTime" default,
        total_tokens_saved: "totalTokensSaved" default,
        total_attempts: "totalAttempts" default,
        total_prompt_tokens: "totalPromptTokens" default,
        total_output_tokens: "totalOutputTokens" default,
        total_thinking_tokens: "totalThinkingTokens" default,
        last_compaction_at: "lastCompactionAt" default,
        last_error_code: "lastErrorCode" default,
        total_repaired_facts: "totalRepairedFacts" default,
        total_unverified_lines: "totalUnverifiedLines" default,
        last_compaction: "lastCompaction" default,
        clearings: "clearings" default,
        tokens_cleared: "tokensCleared" default,
        calls_saved: "callsSaved" default,
        fallbacks: "fallbacks" default,
        upgrades: "upgrades" default,
    }
}

json_record! {
    read write CompactionCost {
        calls: "calls" default,
        repaired_facts: "repairedFacts" default,
        unverified_lines: "unverifiedLines" default,
    }
}

impl CompactionMetrics {
    /// Adds the tokens a provider reported.
    pub(crate) fn record_usage(&mut self, usage: Option<TokenUsage>) {
        if let Some(usage) = usage {
            self.total_prompt_tokens += usage.prompt_tokens;
            self.total_output_tokens += usage.output_tokens;
            self.total_thinking_tokens += usage.thinking_tokens;
        }
    }

    /// Adds one successful compaction.
    pub(crate) fn record_success(
        &mut self,
        reduction: f64,
        duration_ms: f64,
        tokens_saved: usize,
        attempts: u32,
        at: String,
    ) {
        let n = f64::from(self.successful_compactions);
        self.average_reduction_ratio = (self.average_reduction_ratio * n + reduction) / (n + 1.0);
        self.average_execution_time = (self.average_execution_time * n + duration_ms) / (n + 1.0);
        self.total_compactions += 1;
        self.successful_compactions += 1;
        self.total_tokens_saved += tokens_saved;
        self.total_attempts += attempts;
        self.last_compaction_at = Some(at);
        self.last_error_code = None;
    }

    /// Adds one successful compaction and the tokens its provider reported.
    pub(crate) fn record_result(&mut self, result: &CompactionResult, at: String) {
        let (reduction, duration) = (result.reduction, result.duration_ms);
        self.record_success(
            reduction,
            duration,
            result.tokens_saved,
            result.attempts,
            at,
        );
        self.record_usage(result.usage);
        self.record_clearing(&result.cleared);
        match result.rung {
            Rung::Clear => self.calls_saved = self.calls_saved.saturating_add(1),
            Rung::Fallback => self.fallbacks = self.fallbacks.saturating_add(1),
            Rung::Summarize => {}
        }
        if result.upgraded {
            self.upgrades = self.upgrades.saturating_add(1);
        }
        let cost = CompactionCost {
            calls: result.attempts,
            repaired_facts: u32::try_from(result.coverage.repaired.len()).unwrap_or(u32::MAX),
            unverified_lines: u32::try_from(result.unverified.len()).unwrap_or(u32::MAX),
        };
        self.total_repaired_facts = self
            .total_repaired_facts
            .saturating_add(cost.repaired_facts);
        self.total_unverified_lines = self
            .total_unverified_lines
            .saturating_add(cost.unverified_lines);
        self.last_compaction = Some(cost);
    }

    /// Adds the clearing that moved `cleared` to its archive, if it moved any: that of a
    /// successful compaction, or one that stands after a later rung failed.
    pub(crate) fn record_clearing(&mut self, cleared: &[ClearedBody]) {
        if !cleared.is_empty() {
            self.clearings = self.clearings.saturating_add(1);
            let tokens = cleared.iter().map(|body| body.tokens);
            self.tokens_cleared = self.tokens_cleared.saturating_add(tokens.sum());
        }
    }

    /// Adds one failed compaction.
    pub(crate) fn record_failure(
        &mut self,
        code: &str,
        attempts: u32,
        usage: Option<TokenUsage>,
        at: String,
    ) {
        self.record_usage(usage);
        self.total_compactions += 1;
        self.failed_compactions += 1;
        self.total_attempts += attempts;
        self.last_compaction_at = Some(at);
        self.last_error_code = Some(code.to_owned());
        self.last_compaction = Some(CompactionCost {
            calls: attempts,
            ..CompactionCost::default()
        });
    }
}

/// The metrics of one compactor's logs: the only code that reads and writes their key.
pub struct Metrics<'a, S> {
    store: &'a S,
    key: String,
}

impl<'a, S: KeyValueStore> Metrics<'a, S> {
    /// The metrics of `logs` under the metrics key of `keys` (a compactor's).
    pub fn of<C: Clock>(logs: &'a LogStore<S, C>, keys: &StorageKeys) -> Self {
        Self {
            store: logs.store(),
            key: keys.metrics(),
        }
    }

    /// The totals so far (all zero when none were recorded).
    pub fn read(&self) -> Result<CompactionMetrics, StorageError> {
        Ok(read_value(self.store, &self.key)?.unwrap_or_default())
    }

    /// Reads the totals, applies `change` and writes them back (fields of other code kept).
    pub fn update(&self, change: impl FnOnce(&mut CompactionMetrics)) -> Result<(), StorageError> {
        let mut metrics = self.read()?;
        change(&mut metrics);
        write_json(self.store, &self.key, &metrics)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::read::from_text;
    use crate::core::json::write::to_json;

    #[test]
    fn fields_of_other_code_survive_an_update() {
        let stored = r#"{"totalCompactions":2,"totalCostSaved":0.0123,"note":{"by":"gdrs"}}"#;
        let mut metrics: CompactionMetrics = from_text(stored).unwrap();
        metrics.total_compactions += 1;
        let written = to_json(&metrics);
        assert!(
            written.starts_with(r#"{"totalCompactions":3,"#),
            "{written}"
        );
        assert!(
            written.ends_with(r#","totalCostSaved":0.0123,"note":{"by":"gdrs"}}"#),
            "{written}"
        );
    }

    #[test]
    fn averages_cover_successes_only() {
        let mut m = CompactionMetrics::default();
        m.record_success(0.6, 100.0, 600, 1, "t1".into());
        m.record_failure("invalid_summary", 2, None, "t2".into());
        m.record_success(0.8, 300.0, 800, 2, "t3".into());
        assert_eq!(
            (
                m.total_compactions,
                m.successful_compactions,
                m.failed_compactions
            ),
            (3, 2, 1)
        );
        assert!((m.average_reduction_ratio - 0.7).abs() < 1e-9);
        assert!((m.average_execution_time - 200.0).abs() < 1e-9);
        assert_eq!((m.total_tokens_saved, m.total_attempts), (1400, 5));
        assert_eq!(m.last_error_code, None);
    }
}
