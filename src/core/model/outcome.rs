//! What a compaction reports: the dry-run plan and the result.

use crate::core::json::read::{FromJson, RawJson, ReadError};
use crate::core::json::record::{json_names, json_record};
use crate::core::json::write::{to_json, write_string, ObjectOut, ToJson};
use crate::core::model::clearing::{ClearedBody, Rung};
use crate::core::model::per_log::PerLog;
use crate::core::order::text_search::TextSearch;

use crate::core::model::facts::{Coverage, Demoted, Injection, UnverifiedLine};
use crate::core::model::fallback::FallbackReason;
use crate::core::model::settings::Trigger;
use crate::core::model::token_usage::TokenUsage;
use crate::core::model::user_items::{UserItem, UserItems};

/// Entries per log.
pub type EntryCounts = PerLog<usize>;

/// What `compact()` would do now (no provider call).
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPlan {
    /// First and last iteration that would be compacted.
    pub iterations: [u32; 2],
    /// First and last iteration that would stay verbatim: the running one, and the finished
    /// ones `keepRecentIterations` keeps.
    pub verbatim: [u32; 2],
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
    pub refused: Option<String>,
    /// The facts the summary will have to keep (the ledger, as its texts).
    pub ledger: Vec<String>,
    /// The running iteration a compaction would wait for, and which triggers wait; absent
    /// when none is running.
    pub waits_for: Option<Wait>,
    /// The most tokens the summary may take (`summaryBudgetTokens`, or its default).
    pub summary_budget_tokens: usize,
    /// The facts that would leave the summary for its index now, each with the archive the
    /// compaction would write.
    pub demoted: Vec<Demoted>,
    /// The rung the loop's own compaction (`auto`) would run now: `clear` when clearing alone
    /// brings usage under `recommendedUsage`.
    pub rung: Rung,
    /// The bodies a clearing would move to its archive now (none when `clearing` is `false`).
    pub cleared: Vec<ClearedBody>,
    /// The user's items every summary will have to keep now.
    pub user_items: Vec<UserItem>,
}

/// The running iteration a compaction waits for before it gathers.
#[derive(Debug, Clone, PartialEq)]
pub struct Wait {
    /// The running iteration.
    pub iteration: u32,
    /// Whether this page started it (then only a compaction the user asks for waits: the
    /// loop's own, `auto` and `context_limit_error`, go ahead with it kept verbatim).
    pub running_here: bool,
    /// The triggers whose compaction would wait.
    pub triggers: Vec<Trigger>,
}

impl std::fmt::Display for Wait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.iteration;
        if self.running_here {
            write!(
                f,
                "Iteration {n} is running in this page: a compaction the user asks for waits \
                 until finishIteration(); \"auto\" and \"context_limit_error\" go ahead and \
                 keep it verbatim."
            )
        } else {
            write!(
                f,
                "Iteration {n} is running in another tab (or was started by another LogStore): \
                 every compaction waits until it finishes or its mark is 10 minutes old."
            )
        }
    }
}

impl ToJson for Wait {
    fn write_json(&self, out: &mut String) {
        ObjectOut::new(out)
            .field("iteration", &self.iteration)
            .field("runningHere", &self.running_here)
            .field("triggers", &self.triggers)
            .field("message", &self.to_string());
    }
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

/// The form of the answer a summary was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnswerFormat {
    /// A JSON object with one key per section (Gemini's structured output, or a model that
    /// answered in JSON), rendered as the six sections.
    Json,
    /// Markdown (or plain) text with the sections as headings.
    #[default]
    Markdown,
}

json_names! {
    AnswerFormat {
        Json = "json",
        Markdown = "markdown",
    }
}

/// What one successful compaction did.
#[derive(Debug, Clone, PartialEq)]
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
    pub model: Option<String>,
    /// The facts the summary had to keep, and which it kept (all of them, or it failed).
    pub coverage: Coverage,
    /// The lines that name what no source holds, each marked ` [unverified]` in the summary.
    pub unverified: Vec<UnverifiedLine>,
    /// Parts the selection was summarised in: 1 unless its prompt exceeded the input budget.
    pub chunks: u32,
    /// The form of the answer the summary was read from (the merge's, for a summary in parts).
    pub answer_format: AnswerFormat,
    /// Whether the summary came from the cache, its exact input summarised before: no call.
    pub cached: bool,
    /// The lines marked ` [from tool output]`: they gave the user words only data said.
    pub injections: Vec<Injection>,
    /// The rung that ran last: `clear` (no model call), `summarize`, or `fallback` (the
    /// package's own summary, every attempt of the model having failed).
    pub rung: Rung,
    /// The bodies a clearing of this compaction moved to its archive, before any summary.
    pub cleared: Vec<ClearedBody>,
    /// Why the model's summary could not be used, when the fallback rung ran.
    pub fallback: Option<FallbackReason>,
    /// Whether the summary kept the whole lines of an answer cut at its output limit.
    pub salvaged: bool,
    /// Whether the model's summary replaced a summary the fallback rung had stored.
    pub upgraded: bool,
    /// What the summary did with the user's items.
    pub user_items: UserItems,
}

/// What a rung measured of the logs it rewrote.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Measured {
    /// First and last iteration rewritten.
    pub iterations: [u32; 2],
    /// Tokens of the three logs before and after.
    pub tokens: [usize; 2],
    /// Usage (0..1) before and after.
    pub usage: [f64; 2],
    /// Wall time of the whole compaction.
    pub duration_ms: f64,
    /// Key of the archive holding the originals.
    pub archive_key: String,
}

/// What a summary rung stored and what asking for it cost (nothing, for a clearing).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summarised {
    /// The summary, canonical, repaired and marked.
    pub summary: String,
    /// The facts it had to keep, and which it kept.
    pub coverage: Coverage,
    /// The lines marked ` [unverified]`.
    pub unverified: Vec<UnverifiedLine>,
    /// The lines marked ` [from tool output]`.
    pub injections: Vec<Injection>,
    /// The form of the answer it was read from.
    pub answer_format: AnswerFormat,
    /// Whether it kept the whole lines of an answer cut at its limit.
    pub salvaged: bool,
    /// Provider calls made.
    pub attempts: u32,
    /// Tokens the answers reported.
    pub usage: Option<TokenUsage>,
    /// The model that answered last.
    pub model: Option<String>,
    /// Parts the selection was summarised in.
    pub chunks: u32,
    /// Whether it came from the cache.
    pub cached: bool,
    /// Why the model's summary could not be used (the fallback rung's).
    pub fallback: Option<FallbackReason>,
    /// Whether it replaced a fallback summary.
    pub upgraded: bool,
    /// What it did with the user's items.
    pub user_items: UserItems,
}

impl CompactionResult {
    /// The result of a compaction whose last rung `rung` rewrote the logs as `measured` says,
    /// storing `summarised` (a clearing's is empty) after clearing `cleared`.
    pub fn new(
        rung: Rung,
        measured: Measured,
        summarised: Summarised,
        cleared: Vec<ClearedBody>,
    ) -> Self {
        let [tokens_before, tokens_after] = measured.tokens;
        let (tokens_saved, reduction) = saving(tokens_before, tokens_after);
        CompactionResult {
            iterations: measured.iterations,
            tokens_before,
            tokens_after,
            tokens_saved,
            reduction,
            context_usage_before: measured.usage[0],
            context_usage_after: measured.usage[1],
            attempts: summarised.attempts,
            duration_ms: measured.duration_ms,
            archive_key: measured.archive_key,
            summary: summarised.summary,
            usage: summarised.usage,
            model: summarised.model,
            coverage: summarised.coverage,
            unverified: summarised.unverified,
            chunks: summarised.chunks,
            answer_format: summarised.answer_format,
            cached: summarised.cached,
            injections: summarised.injections,
            rung,
            cleared,
            fallback: summarised.fallback,
            salvaged: summarised.salvaged,
            upgraded: summarised.upgraded,
            user_items: summarised.user_items,
        }
    }

    /// The same result as the journal records it: its JSON text without the summary's text,
    /// which is in the reasoning log being written.
    pub fn recorded(&self) -> RawJson {
        let mut result = self.clone();
        result.summary.clear();
        RawJson(to_json(&result))
    }

    /// This summary's result after `clearing`, the same compaction's clearing rung: what the
    /// clearing cleared, and the tokens and usage from before it.
    pub fn after(mut self, clearing: CompactionResult) -> Self {
        self.tokens_before = clearing.tokens_before;
        self.context_usage_before = clearing.context_usage_before;
        (self.tokens_saved, self.reduction) = saving(self.tokens_before, self.tokens_after);
        self.cleared = clearing.cleared;
        self
    }
}

/// A result as the journal recorded it (see [`CompactionResult::recorded`]), with the summary
/// recovery read back from the live logs. Written as the result it was, it is never parsed:
/// recovery reports it without reading its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedResult {
    /// The result's JSON text, its summary empty.
    pub json: RawJson,
    /// The summary's text.
    pub summary: String,
}

/// The member a recorded result holds in place of its summary.
const NO_SUMMARY: &str = "\"summary\":\"\"";

impl ToJson for RecordedResult {
    fn write_json(&self, out: &mut String) {
        // Strings are escaped, so the unescaped member is the result's own.
        let json = self.json.get();
        match json.split_once_text(NO_SUMMARY) {
            Some((head, tail)) => {
                out.push_str(head);
                out.push_str("\"summary\":");
                write_string(out, &self.summary);
                out.push_str(tail);
            }
            None => out.push_str(json),
        }
    }
}

impl RecordedResult {
    /// The result it records, read (for tests and tools: recovery itself never reads it).
    pub fn parsed(&self) -> Result<CompactionResult, ReadError> {
        CompactionResult::from_json(&to_json(self))
    }
}

json_record! {
    write CompactionPlan {
        iterations: "iterations" req,
        verbatim: "verbatim" req,
        entries: "entries" req,
        tokens_to_compact: "tokensToCompact" req,
        prompt_tokens: "promptTokens" req,
        estimated_tokens_after: "estimatedTokensAfter" req,
        refused: "refused" opt,
        ledger: "ledger" req,
        waits_for: "waitsFor" opt,
        summary_budget_tokens: "summaryBudgetTokens" req,
        demoted: "demoted" req,
        rung: "rung" req,
        cleared: "cleared" req,
        user_items: "userItems" req,
    }
}

json_record! {
    read write CompactionResult {
        iterations: "iterations" req,
        tokens_before: "tokensBefore" req,
        tokens_after: "tokensAfter" req,
        tokens_saved: "tokensSaved" req,
        reduction: "reduction" req,
        context_usage_before: "contextUsageBefore" req,
        context_usage_after: "contextUsageAfter" req,
        attempts: "attempts" req,
        duration_ms: "durationMs" req,
        archive_key: "archiveKey" req,
        summary: "summary" req,
        usage: "usage" null,
        model: "model" opt,
        coverage: "coverage" default,
        unverified: "unverified" default,
        chunks: "chunks" (or 1),
        answer_format: "answerFormat" default,
        cached: "cached" default,
        injections: "injections" default,
        rung: "rung" default,
        cleared: "cleared" default,
        fallback: "fallback" opt,
        salvaged: "salvaged" default,
        upgraded: "upgraded" default,
        user_items: "userItems" default,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::read::FromJson;
    use crate::core::json::write::to_json;

    const RESULT: &str = r#"{"iterations":[1,4],"tokensBefore":900,"tokensAfter":300,"tokensSaved":600,"reduction":0.6666666666666666,"contextUsageBefore":0.9,"contextUsageAfter":0.3,"attempts":1,"durationMs":12,"archiveKey":"context_archive_1","summary":"S","usage":null"#;

    #[test]
    fn the_answer_format_is_written_and_read_back_and_defaults_to_markdown() {
        let json =
            CompactionResult::from_json(&format!(r#"{RESULT},"answerFormat":"json"}}"#)).unwrap();
        assert_eq!(json.answer_format, AnswerFormat::Json);
        let written = to_json(&json);
        assert!(
            written.ends_with(r#","answerFormat":"json","cached":false,"injections":[],"rung":"summarize","cleared":[],"salvaged":false,"upgraded":false,"userItems":{"kept":[],"repaired":[],"demoted":[],"replaced":[]}}"#),
            "{written}"
        );
        assert_eq!(CompactionResult::from_json(&written).unwrap(), json);
        // A journal written before the field existed.
        let old = CompactionResult::from_json(&format!("{RESULT}}}")).unwrap();
        assert_eq!(old.answer_format, AnswerFormat::Markdown);
        assert!(
            CompactionResult::from_json(&format!(r#"{RESULT},"answerFormat":"xml"}}"#)).is_err()
        );
    }
}
