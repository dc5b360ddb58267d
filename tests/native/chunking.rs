//! Never stuck at a full window: a selection whose prompt exceeds the input budget
//! (`maxPromptTokens`) is summarised in parts under the budget, then merged; every ledger fact
//! reaches the merged summary, across chained compactions too.
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use common::*;
use context_compactor::core::error::CompactionError;
use context_compactor::core::model::outcome::CompactionResult;
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::storage::MemoryStore;
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::run::compactor::Compactor;
use context_compactor::core::steps::prompt::prompt_tokens;

/// A budget of 3,000 prompt tokens (the least two 500-token answers allow).
fn budgeted() -> CompactorSettings {
    CompactorSettings {
        context_window_tokens: 100_000,
        max_output_tokens: 500,
        max_prompt_tokens: Some(3_000),
        ..Default::default()
    }
}

fn compact(rig: &Rig) -> Result<CompactionResult, CompactionError> {
    let compaction = rig.compactor.compact(Trigger::ContextLimitError);
    run_ready(compaction).expect("the compaction waited on nothing")
}

/// A model that does what each prompt asks (every listed fact kept), for `n` calls.
fn obedient(n: usize) -> Vec<Answer> {
    vec![Answer::Text(valid_summary("the work of these iterations")); n]
}

#[test]
fn a_log_at_150_percent_of_the_budget_compacts_in_parts_then_merges() {
    let rig = Rig::with(MemoryStore::new(), obedient(20), budgeted());
    grow_session(&rig.logs, &rig.clock, 17, 5);
    let whole = rig.compactor.build_prompt().unwrap();
    let ratio = prompt_tokens(&whole) as f64 / 3_000.0;
    assert!(
        (1.5..1.75).contains(&ratio),
        "the whole prompt is {ratio:.2} × the budget"
    );
    let ledger = rig.compactor.plan().unwrap().ledger;
    let before = rig.dump();

    let result = compact(&rig).unwrap();
    assert!(result.chunks >= 2, "{} parts", result.chunks);
    let prompts = rig.provider.prompts.borrow().clone();
    assert_eq!(
        prompts.len() as u32,
        result.chunks + 1,
        "one call per part, one merge"
    );
    assert_eq!(result.attempts as usize, prompts.len());
    for prompt in &prompts {
        assert!(
            prompt_tokens(prompt) <= 3_000,
            "{} tokens",
            prompt_tokens(prompt)
        );
    }
    assert!(prompts.last().unwrap().contains("Merge the "));
    for fact in &ledger {
        assert!(result
            .summary
            .contains(fact.split_whitespace().next().unwrap()));
    }
    assert_eq!(result.coverage.required, ledger);
    assert!(result.coverage.missing.is_empty());
    let said = progress_messages(&rig);
    let parts = result.chunks;
    assert!(
        said.iter()
            .any(|m| m.starts_with(&format!("Summarising part 1 of {parts} (iterations 1–"))),
        "{said:?}"
    );
    assert!(said
        .iter()
        .any(|m| m.starts_with(&format!("Summarising part {parts} of {parts}"))));
    assert!(said
        .iter()
        .any(|m| m.starts_with("Merging the parts (iterations 1–")));
    assert_ne!(rig.dump(), before, "the logs were compacted");
    // Every part starts where the one before ended.
    let ranges: Vec<(u32, u32)> = prompts[..prompts.len() - 1]
        .iter()
        .map(|p| {
            let range = p.split("Compact iterations ").nth(1).unwrap();
            let (first, rest) = range.split_once('-').unwrap();
            let last: String = rest.chars().take_while(char::is_ascii_digit).collect();
            (first.parse().unwrap(), last.parse().unwrap())
        })
        .collect();
    assert_eq!(ranges[0].0, 1);
    for pair in ranges.windows(2) {
        assert_eq!(pair[1].0, pair[0].1 + 1, "{ranges:?}");
    }
    assert_eq!(ranges.last().unwrap().1, result.iterations[1]);
}

#[test]
fn three_chained_compactions_in_parts_keep_every_ledger_fact() {
    let rig = Rig::with(MemoryStore::new(), obedient(60), budgeted());
    let mut chunked = 0;
    for round in 1..=3u64 {
        grow_session(&rig.logs, &rig.clock, 24, round);
        let ledger = rig.compactor.plan().unwrap().ledger;
        let result = compact(&rig).unwrap_or_else(|e| panic!("round {round}: {e}"));
        if result.chunks > 1 {
            chunked += 1;
        }
        assert_eq!(result.coverage.required, ledger, "round {round}");
        let mut every = result.coverage.kept.clone();
        every.extend(result.coverage.repaired.iter().cloned());
        every.sort();
        let mut expected = ledger.clone();
        expected.sort();
        assert_eq!(every, expected, "round {round}: each fact kept or repaired");
        let live = rig.logs.borrow().reasoning_log().unwrap();
        assert!(live[0].contains(&result.summary), "round {round}");
    }
    assert_eq!(chunked, 3, "every round needed parts");
}

#[test]
fn one_iteration_larger_than_the_budget_is_a_part_of_its_own_and_the_run_ends() {
    let rig = Rig::with(MemoryStore::new(), obedient(20), budgeted());
    grow_session(&rig.logs, &rig.clock, 4, 3);
    {
        let mut logs = rig.logs.borrow_mut();
        logs.start_iteration().unwrap();
        let huge = "The totals by region and month, row by row. ".repeat(2_000);
        logs.append_reasoning(&huge).unwrap();
        logs.finish_iteration();
    }
    grow_session(&rig.logs, &rig.clock, 4, 4);
    let result = compact(&rig).unwrap();
    assert!(result.chunks >= 2);
    assert!(
        rig.provider.calls() <= 20,
        "bounded: {} calls",
        rig.provider.calls()
    );
}

#[test]
fn a_budget_too_small_to_merge_two_answers_is_refused_naming_the_option() {
    let settings = CompactorSettings {
        max_output_tokens: 4_000,
        max_prompt_tokens: Some(5_000),
        ..Default::default()
    };
    let rig = Rig::with(MemoryStore::new(), vec![], small_window());
    let refused = Compactor::new(
        rig.logs.clone(),
        Box::new(rig.provider.clone()),
        Box::new(rig.timer.clone()),
        Box::new(rig.events.clone()),
        settings,
    );
    let err = refused.err().expect("refused");
    assert_eq!(err.field, "maxPromptTokens");
    assert!(
        err.message
            .contains("maxPromptTokens must be between 10000"),
        "{err}"
    );
}
