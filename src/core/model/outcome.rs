//! What a compaction reports: the dry-run plan and the result.

use serde::Serialize;

use crate::core::model::facts::{Coverage, UnverifiedLine};
use crate::core::model::token_usage::TokenUsage;

/// Entries per log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct EntryCounts {
    /// Reasoning entries.
    pub reasoning: usize,
    /// Execution entries.
    pub execution: usize,
    /// Tool-activity entries.
    pub tool_activity: usize,
}

/// What `compact()` would do now (no provider call).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionPlan {
    /// First and last iteration that would be compacted.
    pub iterations: [u32; 2],
    /// Entries that would be replaced.
    pub entries: EntryCounts,
    /// Estimated tokens of those entries.
    pub tokens_to_compact: usize,
    /// Estimated tokens of the prompt.
    pub prompt_tokens: usize,
    /// Estimated tokens of the logs afterwards (the summary at its ~30% target).
    pub estimated_tokens_after: usize,
    /// Why a compaction the user asked for would be refused now (no provider call is made);
    /// absent when it would go ahead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// The facts the summary will have to keep (the ledger, as its texts).
    pub ledger: Vec<String>,
}

/// `tokens_before - tokens_after`, and its share of `tokens_before` (0 when there were none).
pub fn saving(tokens_before: usize, tokens_after: usize) -> (usize, f64) {
    let saved = tokens_before.saturating_sub(tokens_after);
    let share = if tokens_before == 0 {
        0.0
    } else {
        saved as f64 / tokens_before as f64
    };
    (saved, share)
}

/// What one successful compaction did.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionResult {
    /// First and last iteration compacted.
    pub iterations: [u32; 2],
    /// Tokens of the three logs before.
    pub tokens_before: usize,
    /// Tokens of the three logs after.
    pub tokens_after: usize,
    /// `tokens_before - tokens_after`.
    pub tokens_saved: usize,
    /// `tokens_saved / tokens_before`.
    pub reduction: f64,
    /// Usage (0..1) before, base tokens included.
    pub context_usage_before: f64,
    /// Usage (0..1) after.
    pub context_usage_after: f64,
    /// Provider calls made.
    pub attempts: u32,
    /// Wall time of the whole compaction.
    pub duration_ms: f64,
    /// Key of the archive holding the originals.
    pub archive_key: String,
    /// The validated summary, headings canonical.
    pub summary: String,
    /// Tokens the provider reported over all attempts, failed ones included (`null` when no
    /// answer reported any).
    pub usage: Option<TokenUsage>,
    /// The model that gave the summary, when the provider says (Gemini's `modelVersion`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model: Option<String>,
    /// The facts the summary had to keep, and which it kept (all of them, or it failed).
    #[serde(default)]
    pub coverage: Coverage,
    /// The lines that name what no source holds, each marked ` [unverified]` in the summary.
    #[serde(default)]
    pub unverified: Vec<UnverifiedLine>,
    /// Parts the selection was summarised in: 1 unless its prompt exceeded the input budget.
    #[serde(default = "one")]
    pub chunks: u32,
}

fn one() -> u32 {
    1
}
