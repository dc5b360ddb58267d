//! Cutting a selection whose prompt exceeds the input budget into parts that each fit: whole
//! iterations only (so an execution never parts from its tool entry), in order, each part as
//! large as the budget allows; and grouping part summaries into merges that fit.

use crate::core::log::tokens::estimate_tokens;
use crate::core::model::facts::{Fact, Ledger};
use crate::core::model::settings::CompactorSettings;
use crate::core::steps::prompt::{build_part_prompt, prompt_tokens, PartSummary};
use crate::core::steps::selection::Selection;
use crate::core::steps::summary_budget::SummaryBudget;

/// The parts of `selection` whose prompts (each listing the facts of `ledger` it holds) fit
/// `budget` tokens; one iteration larger than the budget is a part of its own (its huge entries
/// cut as in every prompt). One part when the whole fits. `summary` is the whole summary's
/// budget, which every prompt states.
pub fn parts_of<'a>(
    selection: &Selection<'a>,
    settings: &CompactorSettings,
    ledger: &Ledger,
    budget: usize,
    summary: &SummaryBudget,
) -> Vec<Selection<'a>> {
    let none = Ledger::default();
    let cost = |part: &Selection| {
        prompt_tokens(&build_part_prompt(part, settings, &none, (1, 1), summary))
    };
    // The prompt's own text, and every fact listed, whatever the part holds.
    let base = cost(&selection.part(0, 0));
    let room = base + ledger_tokens(ledger);
    let mut parts = Vec::new();
    let mut first: Option<u32> = None;
    let mut used = room;
    let mut previous = 0;
    for n in selection.iterations() {
        let tokens = cost(&selection.part(n, n)).saturating_sub(base);
        if let Some(start) = first.filter(|_| used.saturating_add(tokens) > budget) {
            parts.push(selection.part(start, previous));
            first = None;
            used = room;
        }
        // The first part starts at iteration 1: it holds the preamble and earlier summaries.
        first.get_or_insert(if parts.is_empty() { 1 } else { n });
        used = used.saturating_add(tokens);
        previous = n;
    }
    if let Some(start) = first {
        parts.push(selection.part(start, previous));
    }
    parts
}

/// The facts of `ledger` that `text` holds (what a part's summary can be asked to keep).
pub fn facts_held(ledger: &Ledger, text: &str) -> Ledger {
    let held = Fact::each_kept_in(&ledger.facts, text);
    Ledger {
        facts: ledger
            .facts
            .iter()
            .filter(|fact| fact.kept_in(&held))
            .cloned()
            .collect(),
        ..Ledger::default()
    }
}

/// Consecutive groups of `parts` whose merge prompts fit `budget` beside `room` tokens of
/// prompt text; every group but a lone last one holds two or more, so that each round of
/// merges at least halves the count.
pub fn merge_groups(parts: Vec<PartSummary>, budget: usize, room: usize) -> Vec<Vec<PartSummary>> {
    let mut groups: Vec<Vec<PartSummary>> = Vec::new();
    let mut used = room;
    for part in parts {
        let tokens = estimate_tokens(&part.summary);
        let full = groups
            .last()
            .is_none_or(|group| group.len() >= 2 && used.saturating_add(tokens) > budget);
        if full {
            groups.push(Vec::new());
            used = room;
        }
        used = used.saturating_add(tokens);
        if let Some(group) = groups.last_mut() {
            group.push(part);
        }
    }
    // A lone last part joins the group before it rather than being "merged" on its own.
    if groups.len() > 1 && groups.last().is_some_and(|group| group.len() == 1) {
        if let Some(lone) = groups.pop() {
            if let Some(group) = groups.last_mut() {
                group.extend(lone);
            }
        }
    }
    groups
}

/// Tokens the ledger adds to a prompt that lists it.
fn ledger_tokens(ledger: &Ledger) -> usize {
    ledger
        .facts
        .iter()
        .map(|fact| estimate_tokens(&fact.text))
        .sum()
}
