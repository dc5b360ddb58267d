//! Two tiers of facts, so that a summary stays within its budget however long the session: the
//! goal and the pins always stay in the summary; the newest iteration's results (the last to
//! leave), open failures (within [`FAILURES_SHARE`] first), the identifiers the current
//! iteration refers to and the newest results stay as the budget holds them, in that order;
//! older results, failures a later iteration resolved and identifiers no longer referred to
//! leave it for its index, each only when this compaction's archive holds it.

use crate::core::log::tokens::estimate_tokens;
use crate::core::model::facts::{Fact, FactKind, IndexLine, Ledger};
use crate::core::order::sort::sort_by;
use crate::core::steps::fit::facts_alone;
use crate::core::steps::index::{index_of, with_index};
use crate::core::steps::selection::Selection;
use crate::core::steps::term_search::{TermScan, TermsFound};
use crate::core::steps::terms::{execution_text, reasoning_text, tool_text};

/// Share of a summary's budget that the facts it must keep may take, in the ledger's words.
pub const FACTS_SHARE: f64 = 0.5;
/// Share of the facts' tokens that open failures take before the other facts are placed.
pub const FAILURES_SHARE: f64 = 0.3;
/// Share of a summary's budget kept for the model's own points when the facts and the index
/// take the rest.
pub const MODEL_SHARE: f64 = 0.1;
/// Share of a summary's budget that its index lines may take.
pub const INDEX_SHARE: f64 = 0.15;
/// Share of a summary's budget that the index lines naming open failures may take besides.
pub const OPEN_INDEX_SHARE: f64 = 0.3;

/// How much of a summary the ledger may take, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FactBudget {
    /// The summary's own budget: no summary is larger.
    pub summary_tokens: usize,
    /// The facts it keeps.
    pub facts_tokens: usize,
    /// Its index lines.
    pub index_tokens: usize,
    /// Its index lines that name open failures.
    pub open_index_tokens: usize,
}

impl FactBudget {
    /// The budget of a summary of at most `target` tokens (its budget `summary_budget`, or
    /// less when what it replaces is small): the index takes up to [`INDEX_SHARE`] of it and
    /// [`OPEN_INDEX_SHARE`] for open failures, the facts up to [`FACTS_SHARE`] of the budget
    /// and never more than the rest.
    pub fn of(summary_budget: usize, target: usize) -> Self {
        let share = |tokens: usize, s: f64| (tokens as f64 * s) as usize;
        let index_tokens = share(target, INDEX_SHARE);
        let open_index_tokens = share(target, OPEN_INDEX_SHARE);
        FactBudget {
            summary_tokens: target,
            facts_tokens: share(summary_budget, FACTS_SHARE)
                .min(target - index_tokens - open_index_tokens),
            index_tokens,
            open_index_tokens,
        }
    }

    /// A budget large enough for anything (a ledger drawn with no tiers).
    pub fn unbounded() -> Self {
        FactBudget {
            summary_tokens: usize::MAX,
            facts_tokens: usize::MAX,
            index_tokens: usize::MAX,
            open_index_tokens: usize::MAX,
        }
    }
}

/// The tokens a fact takes as a point of a summary.
pub fn fact_tokens(fact: &Fact) -> usize {
    estimate_tokens(&fact.one_line()) + 2
}

/// Which facts stay first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rank {
    /// Stays whatever the budget (the goal, the pins: the app's own words).
    Always,
    /// Stays while the budget holds it, lower first (then the newest first).
    Then(u8),
}

/// The facts of a compaction in two tiers.
pub struct Candidates<'a> {
    /// Every fact drawn, in the order the prompt lists them.
    pub facts: Vec<Fact>,
    /// Facts that leave whatever the budget: failures a later iteration resolved.
    pub leaving: Vec<Fact>,
    /// Which facts stay first.
    pub rank: &'a dyn Fn(&Fact) -> Rank,
    /// The earlier summary's index.
    pub carried_index: &'a [IndexLine],
    /// Which facts this compaction's archive holds (see [`archived_terms`]): only a fact it
    /// holds leaves. `None`: not read yet (a bound that needs it gives up).
    pub archived: Option<&'a TermsFound>,
}

/// The search of the archive of `selection` for the terms of `facts` (one pass, whatever the
/// number of facts).
pub fn archived_terms(facts: &[&[Fact]], selection: &Selection<'_>) -> TermScan {
    Fact::scan_for(facts, &archived_text(selection))
}

impl Candidates<'_> {
    /// The ledger within `budget`: every fact ranked [`Rank::Always`], then the others by rank,
    /// the newest first, while the budget holds; the rest leave for the index when `selection`
    /// (this compaction's archive) holds them, and stay otherwise (nothing leaves without a
    /// copy).
    /// `None` when a fact would leave and `archived` is `None` (most bounds never need it: it
    /// is read only then).
    pub fn bound(self, budget: &FactBudget, selection: &Selection<'_>) -> Option<Ledger> {
        let mut used = 0usize;
        let mut keep = vec![false; self.facts.len()];
        for (at, fact) in self.facts.iter().enumerate() {
            if (self.rank)(fact) == Rank::Always {
                keep[at] = true;
                used = used.saturating_add(fact_tokens(fact));
            }
        }
        let mut optional: Vec<usize> = (0..self.facts.len()).filter(|at| !keep[*at]).collect();
        // By rank, the newest first within one.
        let priority = |fact: &Fact| {
            let newest = fact.iterations.map_or(0, |[_, last]| last);
            ((self.rank)(fact), u32::MAX - newest)
        };
        let order = |at: &usize| priority(&self.facts[*at]);
        sort_by(&mut optional, |a, b| order(a).cmp(&order(b)));
        // Open failures first take no more than their share, so that the newest results stay
        // beside them; what the others leave they may take after.
        let failures_tokens = (budget.facts_tokens as f64 * FAILURES_SHARE) as usize;
        let mut failures = 0usize;
        for capped in [true, false] {
            for at in &optional {
                let fact = &self.facts[*at];
                let cost = fact_tokens(fact);
                let failure = fact.kind == FactKind::Failure;
                if keep[*at] || (capped && failure && failures + cost > failures_tokens) {
                    continue;
                }
                if used.saturating_add(cost) <= budget.facts_tokens {
                    keep[*at] = true;
                    used += cost;
                    failures += if failure { cost } else { 0 };
                }
            }
        }
        let resolved: Vec<String> = self.leaving.iter().map(|fact| fact.id.clone()).collect();
        let mut leaving: Vec<Fact> = self.leaving;
        let mut facts = Vec::new();
        for (fact, kept) in self.facts.into_iter().zip(keep) {
            if kept {
                facts.push(fact);
            } else {
                leaving.push(fact);
            }
        }
        let archived = self.archived;
        let held = |fact: &Fact| archived.map(|found| fact.kept_in(found));
        let range = [selection.first, selection.last];
        loop {
            let mut demoted = Vec::new();
            let mut kept = facts.clone();
            for fact in &leaving {
                if held(fact)? {
                    demoted.push(fact.clone());
                } else if !resolved.contains(&fact.id) {
                    kept.push(fact.clone());
                }
            }
            let new_line = IndexLine::of(&demoted, &resolved, range);
            let ledger = Ledger {
                facts: kept,
                index: index_of(
                    self.carried_index,
                    new_line,
                    [budget.index_tokens, budget.open_index_tokens],
                ),
                demoted,
            };
            // The shares are estimates: the facts alone, as the last resort of a cut writes
            // them, with the index and room for the model's newest points, must fit; the last
            // fact by rank leaves until they do.
            let alone = with_index(&facts_alone(&ledger), &ledger.index);
            let model = (budget.summary_tokens as f64 * MODEL_SHARE) as usize;
            if estimate_tokens(&alone).saturating_add(model) <= budget.summary_tokens {
                return Some(ledger);
            }
            let mut last = None;
            for at in 0..facts.len() {
                let fact = &facts[at];
                if (self.rank)(fact) != Rank::Always && held(fact)? {
                    last = match last {
                        Some(before) if priority(&facts[before]) > priority(fact) => Some(before),
                        _ => Some(at),
                    };
                }
            }
            let Some(at) = last else {
                return Some(ledger);
            };
            leaving.push(facts.remove(at));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::log::iteration::iteration_header;
    use crate::core::log::snapshot::LogSnapshot;
    use crate::core::log::stored_entry::Stored;
    use crate::core::model::facts::FactKind;

    /// A value of the kind logs hold: JSON with long figures, ids, or a sentence.
    fn value(seed: u32) -> String {
        match seed % 3 {
            0 => format!(
                r#"{{"gap":1.18059162071{seed}e+21,"share":0.30000000000000004,"n":{seed}}}"#
            ),
            1 => format!("exec_{seed:08}_{}", seed * 7919),
            _ => format!(
                "north {} south {} rows {}",
                seed * 31,
                seed * 17,
                seed * 1009
            ),
        }
    }

    #[test]
    fn the_facts_alone_and_the_index_fit_the_budget_however_their_counts_add_up() {
        for seed in 1..=40u32 {
            let mut logs = LogSnapshot::default();
            let mut facts = Vec::new();
            for n in 1..=(10 + seed % 30) {
                let shown = value(seed * 100 + n);
                let text = format!("Result of run {n} (iteration {n}, task t{n}): {shown}");
                logs.reasoning.push(Stored::encode(&iteration_header(n)));
                logs.reasoning.push(Stored::encode(&text));
                facts.push(Fact {
                    id: format!("result:t{n}"),
                    kind: FactKind::Result,
                    exact: vec![shown.clone()],
                    text,
                    words: Vec::new(),
                    iterations: Some([n, n]),
                });
            }
            logs.reasoning.push(Stored::encode(&iteration_header(99)));
            let selection = Selection::of(&logs);
            let target = 150 + (seed as usize * 37) % 400;
            let budget = FactBudget::of(target, target);
            let archived = archived_terms(&[&facts], &selection).whole();
            let ledger = Candidates {
                facts,
                leaving: Vec::new(),
                rank: &|_| Rank::Then(2),
                carried_index: &[],
                archived: Some(&archived),
            }
            .bound(&budget, &selection)
            .unwrap();
            let alone = with_index(&facts_alone(&ledger), &ledger.index);
            assert!(
                estimate_tokens(&alone) <= target,
                "seed {seed}: {} tokens over {target}\n{alone}",
                estimate_tokens(&alone)
            );
        }
    }
}
