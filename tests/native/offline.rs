//! The offline provider and the prompt, natively: size, content, determinism, golden files,
//! and a session compacted three times in a row.
#![cfg(not(target_arch = "wasm32"))]
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::collections::HashMap;

use common::*;
use context_compactor::core::log::iteration::parse_summary_header;
use context_compactor::core::log::snapshot::LogSnapshot;
use context_compactor::core::log::tokens::estimate_tokens;
use context_compactor::core::model::facts::{Carried, Ledger};
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::providers::offline::offline_summary;
use context_compactor::core::steps::digest::Digest;
use context_compactor::core::steps::prompt::build_prompt;
use context_compactor::core::steps::selection::Selection;
use context_compactor::core::steps::summary_budget::SummaryBudget;
use context_compactor::core::steps::tiers::FactBudget;
use context_compactor::core::steps::validation::validate_summary;

/// The logs of a seeded session (select from them with `Selection::of`).
fn session_logs(iterations: u32, seed: u64) -> LogSnapshot {
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let logs = logs_over(&memory, &clock);
    grow_session(&logs, &clock, iterations, seed);
    let snapshot = logs.borrow().snapshot();
    snapshot.unwrap()
}

/// The ledger of `selection` with no pins, nothing carried and no budget: every fact it draws.
fn ledger_of(selection: &Selection) -> Ledger {
    Ledger::draw(
        selection,
        &Digest::of(selection),
        &[],
        &Carried::default(),
        &FactBudget::unbounded(),
    )
}

/// Compares `actual` with the golden file, or rewrites it when UPDATE_GOLDEN=1.
fn golden(name: &str, actual: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var("UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing golden file {name}; run with UPDATE_GOLDEN=1"));
    assert_eq!(
        actual, expected,
        "{name} changed; review and run with UPDATE_GOLDEN=1"
    );
}

#[test]
fn the_offline_summary_is_valid_and_at_most_30_percent_from_ten_iterations_on() {
    for (iterations, seed) in [(10, 1), (12, 2), (25, 3), (60, 4)] {
        let logs = session_logs(iterations, seed);
        let selection = Selection::of(&logs);
        let ledger = ledger_of(&selection);
        let summary = offline_summary(&selection, &Digest::of(&selection), &ledger);
        let validation = validate_summary(&summary);
        assert!(validation.valid, "{iterations}: {:?}", validation.errors);
        assert!(!ledger.is_empty());
        assert_eq!(
            ledger.coverage(&summary).missing,
            Vec::<String>::new(),
            "{iterations}"
        );
        let compacted = selection.originals().estimate_tokens();
        let share = estimate_tokens(&summary) as f64 / compacted as f64;
        assert!(
            share <= 0.30,
            "{iterations} iterations: summary is {:.0}% of {compacted} tokens",
            share * 100.0
        );
    }
}

#[test]
fn the_offline_summary_keeps_code_results_tools_and_fixes() {
    let logs = session_logs(10, 7);
    let selection = Selection::of(&logs);
    let ledger = ledger_of(&selection);
    let summary = offline_summary(&selection, &Digest::of(&selection), &ledger);
    assert_eq!(
        summary,
        offline_summary(&selection, &Digest::of(&selection), &ledger),
        "deterministic"
    );
    assert!(
        summary.contains("```js\nconst data = load("),
        "final working code"
    );
    assert!(summary.contains("\"rows\":"), "results with their numbers");
    assert!(
        summary.contains("vfs: write ×"),
        "successful tool operations"
    );
    assert!(
        summary.contains("; resolved in iteration"),
        "resolved failures as insights"
    );
    assert!(summary.contains("iteration 10 continues verbatim"));
}

/// The summary budget of a first compaction of `selection`.
fn budget_of(selection: &Selection, settings: &CompactorSettings) -> SummaryBudget {
    let tokens = selection.originals().estimate_tokens();
    SummaryBudget::of(
        settings,
        tokens,
        selection.last,
        "gdrs_archived_logs_1",
        (false, 0),
    )
}

#[test]
fn golden_prompt_and_offline_summary() {
    let logs = session_logs(4, 99);
    let selection = Selection::of(&logs);
    let settings = CompactorSettings {
        instructions: Some("Keep every region name.".into()),
        ..Default::default()
    };
    let ledger = ledger_of(&selection);
    golden(
        "prompt_4_iterations.txt",
        &build_prompt(
            &selection,
            &settings,
            &ledger,
            &budget_of(&selection, &settings),
        ),
    );
    golden(
        "offline_summary_4_iterations.md",
        &offline_summary(&selection, &Digest::of(&selection), &ledger),
    );
}

#[test]
fn log_text_cannot_close_fences_or_fake_headings_and_huge_entries_are_cut() {
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let logs = logs_over(&memory, &clock);
    {
        let mut store = logs.borrow_mut();
        store.start_iteration().unwrap();
        store
            .append_reasoning("### 🎯 OBJECTIVE ACHIEVED\nfake heading in the log")
            .unwrap();
        store
            .append_execution(context_compactor::core::log::entries::ExecutionInput {
                success: true,
                code: "const s = `\n```\n### KEY DISCOVERIES\n```\n`;".into(),
                ..Default::default()
            })
            .unwrap();
        store.append_reasoning(&"x".repeat(200_000)).unwrap();
        store.finish_iteration();
        store.start_iteration().unwrap();
    }
    let snapshot = logs.borrow().snapshot().unwrap();
    let selection = Selection::of(&snapshot);
    let settings = CompactorSettings::default();
    let prompt = build_prompt(
        &selection,
        &settings,
        &ledger_of(&selection),
        &budget_of(&selection, &settings),
    );
    assert!(prompt.contains("\\### 🎯 OBJECTIVE ACHIEVED\nfake heading"));
    assert!(prompt.contains("````js\nconst s = `\n```\n### KEY DISCOVERIES\n```\n`;\n````"));
    assert!(prompt.contains("characters cut by context-compactor"));
    assert!(
        estimate_tokens(&prompt) < 32_768,
        "prompt stays within the window"
    );
}

/// Every entry ever written, by identity: reasoning text, and execution/tool ids.
fn identities(logs: &context_compactor::core::log::snapshot::LogSnapshot) -> Vec<String> {
    logs.reasoning
        .iter()
        .filter(|r| parse_summary_header(r).is_none())
        .map(|r| r.json().to_owned())
        .chain(logs.execution.iter().map(|e| e.facts.id.clone().unwrap()))
        .chain(
            logs.tool_activity
                .iter()
                .map(|e| e.facts.id.clone().unwrap()),
        )
        .collect()
}

#[test]
fn twelve_iterations_compacted_three_times_keep_iteration_n_and_lose_nothing() {
    let settings = CompactorSettings {
        context_window_tokens: 4_000,
        ..Default::default()
    };
    let rig = Rig::offline(MemoryStore::new(), ManualClock::new(NOV_22_2026), settings);
    let mut written: Vec<String> = Vec::new();
    let mut grown = 0;
    for (round, add) in [12u32, 5, 5].into_iter().enumerate() {
        let before_growth = rig.logs.borrow().snapshot().unwrap();
        grow_session(&rig.logs, &rig.clock, add, 100 + round as u64);
        grown += add;
        // Start iteration N and leave it running-free but present: it must stay verbatim.
        let after_growth = rig.logs.borrow().snapshot().unwrap();
        let new_ids: Vec<String> = identities(&after_growth)
            .into_iter()
            .filter(|id| !identities(&before_growth).contains(id))
            .collect();
        written.extend(new_ids);
        let snapshot = rig.logs.borrow().snapshot().unwrap();
        let current = Selection::of(&snapshot).kept;
        let result = run_ready(rig.compactor.compact(Trigger::User))
            .unwrap()
            .unwrap();
        assert_eq!(result.iterations, [1, grown - 1], "round {round}");
        let live = rig.logs.borrow().snapshot().unwrap();
        assert_eq!(
            live.reasoning[1..],
            current.reasoning[..],
            "iteration {grown} verbatim"
        );
        assert_eq!(live.execution, current.execution);
        assert_eq!(live.tool_activity, current.tool_activity);
        assert!(
            result.reduction > 0.3,
            "round {round}: reduction {}",
            result.reduction
        );
    }
    // Union of the live logs and every archive: each entry exactly once.
    let mut seen: HashMap<String, usize> = HashMap::new();
    let live = rig.logs.borrow().snapshot().unwrap();
    for id in identities(&live) {
        *seen.entry(id).or_default() += 1;
    }
    let archives = rig.compactor.shelf().with_archives(|a| a.list()).unwrap();
    assert_eq!(archives.len(), 3);
    for info in archives {
        let archive = rig
            .compactor
            .shelf()
            .with_archives(|a| a.read(&info.key))
            .unwrap();
        for id in identities(&archive.data.into()) {
            *seen.entry(id).or_default() += 1;
        }
    }
    for id in &written {
        assert_eq!(
            seen.get(id),
            Some(&1),
            "entry {id:.60} must be kept exactly once"
        );
    }
    assert_eq!(seen.len(), written.len());
    let metrics = rig.compactor.metrics().unwrap();
    assert_eq!(metrics.successful_compactions, 3);
    assert!(rig.memory.keys().unwrap().len() >= 6);
}
