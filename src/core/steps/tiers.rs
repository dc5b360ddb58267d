//! Two tiers of facts, so that a summary stays within its budget however long the session: the
//! goal, the pins, open failures and the identifiers the current iteration refers to always stay
//! in the summary, with the newest results the budget holds; older results, failures a later
//! iteration resolved and identifiers no longer referred to leave it for its index, each only
//! when this compaction's archive holds it.

use crate::core::log::tokens::estimate_tokens;
use crate::core::model::facts::{Fact, FactKind, IndexLine, Ledger};
use crate::core::order::sort::sort_by;
use crate::core::steps::index::index_of;
use crate::core::steps::selection::Selection;
use crate::core::steps::terms::Normalised;
use crate::core::steps::terms::{execution_text, reasoning_text, tool_text};

/// Share of a summary's budget that the facts it must keep may take, in the ledger's words.
pub const FACTS_SHARE: f64 = 0.5;
/// Share of a summary's budget that its index lines may take.
pub const INDEX_SHARE: f64 = 0.15;

/// How much of a summary the ledger may take, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FactBudget {
    /// The summary's own budget: no summary is larger.
    pub summary_tokens: usize,
    /// The facts it keeps.
    pub facts_tokens: usize,
    /// Its index lines.
    pub index_tokens: usize,
}

impl FactBudget {
    /// The budget of a summary of at most `target` tokens (its budget `summary_budget`, or
    /// less when what it replaces is small): the index takes up to [`INDEX_SHARE`] of it, the
    /// facts up to [`FACTS_SHARE`] of the budget and never more than the rest.
    pub fn of(summary_budget: usize, target: usize) -> Self {
        let share = |tokens: usize, s: f64| (tokens as f64 * s) as usize;
        let index_tokens = share(target, INDEX_SHARE);
        FactBudget {
            summary_tokens: target,
            facts_tokens: share(summary_budget, FACTS_SHARE).min(target - index_tokens),
            index_tokens,
        }
    }

    /// A budget large enough for anything (a ledger drawn with no tiers).
    pub fn unbounded() -> Self {
        FactBudget {
            summary_tokens: usize::MAX,
            facts_tokens: usize::MAX,
            index_tokens: usize::MAX,
        }
    }
}

/// The tokens a fact takes as a point of a summary.
pub fn fact_tokens(fact: &Fact) -> usize {
    estimate_tokens(&fact.one_line()) + 2
}

/// The facts of a compaction in two tiers.
pub struct Candidates<'a> {
    /// Every fact drawn, in the order the prompt lists them.
    pub facts: Vec<Fact>,
    /// Facts that leave whatever the budget: failures a later iteration resolved.
    pub leaving: Vec<Fact>,
    /// Whether a fact must stay (the goal, a pin, an open failure, a referenced identifier).
    pub required: &'a dyn Fn(&Fact) -> bool,
    /// The earlier summary's index.
    pub carried_index: &'a [IndexLine],
}

impl Candidates<'_> {
    /// The ledger within `budget`: every required fact, then the newest others while the
    /// budget holds; the rest leave for the index when `selection` (this compaction's archive)
    /// holds them, and stay otherwise (nothing leaves without a copy).
    pub fn bound(self, budget: &FactBudget, selection: &Selection<'_>) -> Ledger {
        let mut used = 0usize;
        let mut keep = vec![false; self.facts.len()];
        for (at, fact) in self.facts.iter().enumerate() {
            if (self.required)(fact) {
                keep[at] = true;
                used = used.saturating_add(fact_tokens(fact));
            }
        }
        let mut optional: Vec<usize> = (0..self.facts.len()).filter(|at| !keep[*at]).collect();
        let newest = |fact: &Fact| fact.iterations.map_or(0, |[_, last]| last);
        sort_by(&mut optional, |a, b| {
            newest(&self.facts[*b]).cmp(&newest(&self.facts[*a]))
        });
        for at in optional {
            let cost = fact_tokens(&self.facts[at]);
            if used.saturating_add(cost) <= budget.facts_tokens {
                keep[at] = true;
                used += cost;
            }
        }
        let mut leaving: Vec<Fact> = self.leaving;
        let mut facts = Vec::new();
        for (fact, kept) in self.facts.into_iter().zip(keep) {
            if kept {
                facts.push(fact);
            } else {
                leaving.push(fact);
            }
        }
        let mut demoted = Vec::new();
        if !leaving.is_empty() {
            let held = Normalised::of(&archived_text(selection));
            for fact in leaving {
                if fact.kept_in(&held) {
                    demoted.push(fact);
                } else if fact.kind != FactKind::Failure {
                    facts.push(fact);
                }
            }
        }
        let range = [selection.first, selection.last];
        let new_line = IndexLine::of(&demoted, range);
        Ledger {
            facts,
            index: index_of(self.carried_index, new_line, budget.index_tokens),
            demoted,
        }
    }
}

/// The text of everything `selection` compacts (what its archive holds), read as the ledger
/// reads a summary.
fn archived_text(selection: &Selection<'_>) -> String {
    let mut text = String::new();
    for (_, entry) in &selection.reasoning {
        text.push_str(reasoning_text(entry));
        text.push('\n');
    }
    for (_, entry) in &selection.execution {
        text.push_str(&execution_text(entry));
        text.push('\n');
    }
    for (_, entry) in &selection.tool_activity {
        text.push_str(&tool_text(entry));
        text.push('\n');
    }
    text
}
