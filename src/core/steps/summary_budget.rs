//! How many tokens one compaction's summary may take, worked out once where the view is
//! prepared and handed to the ledger's tiers, the prompt, the plan and the check (and so the
//! fit): the option's budget, the target under it, and the rule that a summary must be clearly
//! smaller than what it replaces.

use crate::core::log::tokens::estimate_tokens;
use crate::core::model::facts::Pin;
use crate::core::model::settings::CompactorSettings;
use crate::core::steps::swap::summary_entry;
use crate::core::steps::tiers::FactBudget;
use crate::core::steps::validation::SECTIONS;

/// A summary must stay under this share of the tokens it replaces to count as a compaction.
pub const MAX_SUMMARY_SHARE: f64 = 0.8;

/// The token budget of one compaction's summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryBudget {
    /// No stored summary is larger: `summaryBudgetTokens`, or its default.
    pub budget: usize,
    /// The most this summary may take, index lines included: the budget, and less than
    /// [`MAX_SUMMARY_SHARE`] of what it replaces once in its entry.
    pub max_tokens: usize,
    /// Tokens of what the summary replaces.
    pub compacted_tokens: usize,
    /// Tokens of the summary entry's own lines: header, source line naming the archive, end.
    entry_lines: usize,
    /// Whether what the summary replaces holds an earlier summary: then a small remainder
    /// (a full window) bounds its facts too, so that its oldest facts leave.
    replaces_summary: bool,
}

/// Tokens `pins` take in a summary: one line each, under the six headings.
pub fn pinned_tokens(pins: &[Pin]) -> usize {
    match pins.is_empty() {
        true => 0,
        false => under_headings(pins),
    }
}

/// Tokens the six headings take with one line for each of `pins`.
fn under_headings(pins: &[Pin]) -> usize {
    let mut text = String::new();
    for (emoji, title) in SECTIONS {
        text.push_str(&format!("### {emoji} {title}\n"));
    }
    for pin in pins {
        text.push_str(&format!("- {}\n", pin.text));
    }
    estimate_tokens(&text)
}

impl SummaryBudget {
    /// The budget of a summary of iterations 1..=`last` replacing `compacted_tokens` (of which
    /// an earlier summary's when `replaces_summary`), as `settings` ask; its entry will name an
    /// archive key as long as `archive_key` (the key is chosen when the archive is written).
    /// Pins of `pinned_tokens` over that budget raise it by theirs: the pins and, beside them,
    /// the budget for the rest (the loop's compaction goes on; the user's is refused before).
    pub fn of(
        settings: &CompactorSettings,
        compacted_tokens: usize,
        last: u32,
        archive_key: &str,
        (replaces_summary, pinned_tokens): (bool, usize),
    ) -> Self {
        let budget = settings.summary_budget();
        let budget = match pinned_tokens > budget {
            true => pinned_tokens.saturating_add(budget),
            false => budget,
        };
        let entry_lines = estimate_tokens(&summary_entry(last, archive_key, "", None));
        let largest_entry = max_entry_tokens(compacted_tokens);
        SummaryBudget {
            budget,
            max_tokens: budget.min(largest_entry.saturating_sub(entry_lines)),
            compacted_tokens,
            entry_lines,
            replaces_summary,
        }
    }

    /// The same budget for a part of the whole that replaces `compacted_tokens`: the whole's
    /// target, and the size rule against the part.
    pub fn for_part(&self, compacted_tokens: usize) -> Self {
        SummaryBudget {
            compacted_tokens,
            ..*self
        }
    }

    /// What the ledger's facts and the index may take of it.
    pub fn facts(&self) -> FactBudget {
        let target = match self.replaces_summary {
            true => self.max_tokens,
            false => self.budget,
        };
        FactBudget::of(self.budget, target)
    }

    /// The tokens of the entry that holds a summary of `summary_tokens`: the summary's and
    /// those of the entry's own lines. Estimates do not add (a whole text is not the sum of
    /// its pieces), so the target and the size rule both measure this one way: a summary cut
    /// to its target always passes the rule.
    pub fn entry_tokens(&self, summary_tokens: usize) -> usize {
        summary_tokens.saturating_add(self.entry_lines)
    }

    /// Whether no summary could fit it: not even the six headings.
    pub fn too_small(&self) -> bool {
        self.max_tokens < under_headings(&[])
    }

    /// The most tokens the summary's entry may take and still count as a compaction.
    pub fn max_entry_tokens(&self) -> usize {
        max_entry_tokens(self.compacted_tokens)
    }
}

/// The most tokens the entry of a summary of `compacted_tokens` may take.
fn max_entry_tokens(compacted_tokens: usize) -> usize {
    (compacted_tokens as f64 * MAX_SUMMARY_SHARE) as usize
}
