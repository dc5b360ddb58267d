//! The check of one answer: the required sections (`validation`), every fact of the ledger,
//! and the rule that a summary must be clearly smaller than what it replaces.

use crate::core::log::tokens::estimate_tokens;
use crate::core::model::facts::Ledger;
use crate::core::model::settings::CompactorSettings;
use crate::core::steps::swap::summary_entry;
use crate::core::steps::validation::{validate_summary, Validation};

/// A summary must stay under this share of the tokens it replaces to count as a compaction.
pub const MAX_SUMMARY_SHARE: f64 = 0.8;

/// Checks `summary` of iterations 1..=`last`, which replaces `compacted_tokens`: its sections,
/// every fact of `ledger`, and its size as the entry it becomes under `archive_key` (a key of
/// the same length counts the same, before the archive's own is chosen).
pub fn check_summary(
    summary: &str,
    last: u32,
    ledger: &Ledger,
    compacted_tokens: usize,
    archive_key: &str,
) -> Validation {
    let mut validation = validate_summary(summary);
    for fact in ledger.missing_in(summary) {
        validation.valid = false;
        validation
            .errors
            .push(format!("Missing required fact: {}", fact.text));
    }
    let summary_tokens = estimate_tokens(&summary_entry(last, archive_key, summary));
    if summary_tokens as f64 > compacted_tokens as f64 * MAX_SUMMARY_SHARE {
        validation.valid = false;
        validation.errors.push(format!(
            "The summary ({summary_tokens} tokens) is not clearly smaller than the \
             {compacted_tokens} tokens it replaces; at most {}% is allowed",
            CompactorSettings::whole_percent(MAX_SUMMARY_SHARE)
        ));
    }
    validation
}
