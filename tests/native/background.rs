//! `compact({ background: true })`: the loop goes on appending while the model works; the
//! summary is swapped in at the next iteration boundary and replaces exactly what it
//! summarised; a failure or a cancel leaves the logs as the loop left them.
#![cfg(not(target_arch = "wasm32"))]
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use common::{grow_session, logs_over, small_window, valid_summary, Answer, Logs, Rig};
use context_compactor::core::error::{CompactionError, ErrorCode, ProviderError};
use context_compactor::core::log::entries::ExecutionInput;
use context_compactor::core::log::iteration::parse_summary_header;
use context_compactor::core::model::fallback::FallbackPolicy;
use context_compactor::core::model::outcome::CompactionResult;
use context_compactor::core::model::phase::Phase;
use context_compactor::core::model::reasons::Refusal;
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::cancel::Cancel;
use context_compactor::core::ports::events::{CompactionEvent, RecordingSink};
use context_compactor::core::ports::storage::MemoryStore;
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::providers::offline::OfflineProvider;
use context_compactor::core::run::compactor::{Compactor, Started};

/// Eight finished iterations and a ninth this page is running: the loop asked for a
/// compaction in the middle of it.
fn mid_iteration(answers: Vec<Answer>, settings: CompactorSettings) -> Rig {
    let rig = Rig::with(MemoryStore::new(), answers, settings);
    grow_session(&rig.logs, &rig.clock, 8, 7);
    let mut logs = rig.logs.borrow_mut();
    logs.start_iteration().unwrap();
    logs.append_reasoning("iteration 9 begins").unwrap();
    drop(logs);
    rig
}

/// What the loop did while the compaction ran, as the test saw it.
#[derive(Default)]
struct Seen {
    /// The iterations `compact()` told as it asked for the summary.
    started: Cell<Option<[u32; 2]>>,
    /// Whether the logs were frozen, and whether the loop's compaction was due, while the model
    /// worked.
    frozen_during_call: Cell<bool>,
    auto_due_during_call: Cell<bool>,
    /// What a compactor of another tab said of a compaction while the model worked.
    elsewhere_during_call: RefCell<Option<Refusal>>,
    /// Polls of the boundary wait, and whether a summary was in the logs at one of them.
    polls: Cell<u32>,
    summary_before_boundary: Cell<bool>,
}

/// Runs a background compaction of `rig` while the loop goes on: during the model's call it
/// finishes iteration 9 and starts 10; after the answer, `at_poll` runs at each poll of the
/// wait with its number (from 1) and the logs.
fn run_with_the_loop(
    rig: &Rig,
    cancel: Cancel,
    at_poll: impl Fn(u32, &Logs) + 'static,
) -> (Rc<Seen>, Result<CompactionResult, CompactionError>) {
    let seen = Rc::new(Seen::default());
    let other = Compactor::new(
        rig.logs.clone(),
        Box::new(OfflineProvider),
        Box::new(rig.timer.clone()),
        Box::new(RecordingSink::default()),
        small_window(),
    )
    .unwrap();
    let elsewhere = Compactor::new(
        logs_over(&rig.memory, &rig.clock),
        Box::new(OfflineProvider),
        Box::new(rig.timer.clone()),
        Box::new(RecordingSink::default()),
        small_window(),
    )
    .unwrap();
    let (logs, during) = (rig.logs.clone(), seen.clone());
    let called = Rc::new(Cell::new(false));
    let answered = called.clone();
    *rig.provider.on_call.borrow_mut() = Some(Box::new(move || {
        during.frozen_during_call.set(logs.borrow().page().frozen());
        during
            .auto_due_during_call
            .set(other.should_auto_compact().unwrap());
        *during.elsewhere_during_call.borrow_mut() = elsewhere.can_compact().unwrap();
        let mut logs = logs.borrow_mut();
        logs.append_reasoning("iteration 9 ends").unwrap();
        logs.append_execution(ExecutionInput {
            success: true,
            code: "nine()".into(),
            ..Default::default()
        })
        .unwrap();
        logs.finish_iteration();
        logs.start_iteration().unwrap();
        logs.append_reasoning("iteration 10 works").unwrap();
        called.set(true);
    }));
    let (logs, polled) = (rig.logs.clone(), seen.clone());
    *rig.timer.on_sleep.borrow_mut() = Some(Box::new(move |_| {
        if !answered.get() {
            return;
        }
        let reasoning = logs.borrow().reasoning_log().unwrap();
        if reasoning.iter().any(|e| parse_summary_header(e).is_some()) {
            polled.summary_before_boundary.set(true);
        }
        polled.polls.set(polled.polls.get() + 1);
        at_poll(polled.polls.get(), &logs);
    }));
    let told = seen.clone();
    let started = Started::new(move |iterations| told.started.set(Some(iterations)));
    let claim = rig.compactor.claim(Trigger::Auto, cancel).unwrap();
    let claim = claim.in_background(started);
    let outcome = run_ready(rig.compactor.compact_claimed(claim)).expect("waited on nothing");
    (seen, outcome)
}

/// At the third poll, the loop finishes iteration 10 and starts 11 in the same task (it never
/// pauses between iterations).
fn finish_ten_at_the_third(poll: u32, logs: &Logs) {
    if poll == 3 {
        let mut logs = logs.borrow_mut();
        logs.append_reasoning("iteration 10 ends").unwrap();
        logs.finish_iteration();
        logs.start_iteration().unwrap();
        logs.append_reasoning("iteration 11 starts").unwrap();
    }
}

/// The reasoning the loop wrote from iteration 9 on.
const LOOP_REASONING: [&str; 7] = [
    "=== ITERATION 9 ===",
    "iteration 9 begins",
    "iteration 9 ends",
    "=== ITERATION 10 ===",
    "iteration 10 works",
    "iteration 10 ends",
    "=== ITERATION 11 ===",
];

/// Asserts that nothing of `before` (the reasoning as the compaction began) was replaced, that
/// the loop's own entries follow it (iteration 9 finished, 10 running), and no archive was
/// written.
fn assert_left_as_the_loop_left_them(rig: &Rig, before: &[String]) {
    let after = rig.logs.borrow().reasoning_log().unwrap();
    assert_eq!(after[..before.len()], before[..], "nothing replaced");
    assert_eq!(after[before.len() - 2..], LOOP_REASONING[..5]);
    assert!(!common::holds_an_archive(&rig.memory));
}

#[test]
fn a_background_compaction_swaps_in_at_the_next_boundary_and_keeps_what_the_loop_wrote() {
    let rig = mid_iteration(
        vec![Answer::Text(valid_summary("in the background"))],
        small_window(),
    );
    let before = rig.logs.borrow().snapshot().unwrap();
    let (seen, outcome) = run_with_the_loop(&rig, Cancel::default(), finish_ten_at_the_third);
    let result = outcome.unwrap();
    assert_eq!(
        seen.started.get(),
        Some([1, 8]),
        "told as the summary was asked"
    );
    assert_eq!(result.iterations, [1, 8]);
    assert!(!seen.frozen_during_call.get(), "the loop goes on appending");
    assert!(
        !seen.auto_due_during_call.get(),
        "no second compaction is due"
    );
    assert_eq!(seen.polls.get(), 3, "the swap waited for the boundary");
    assert!(!seen.summary_before_boundary.get(), "never mid-iteration");
    let reasoning = rig.logs.borrow().reasoning_log().unwrap();
    assert_eq!(parse_summary_header(&reasoning[0]), Some((1, 8)));
    let mut expected: Vec<&str> = LOOP_REASONING.to_vec();
    expected.push("iteration 11 starts");
    assert_eq!(&reasoning[1..], expected, "each entry of the loop once");
    let after = rig.logs.borrow().snapshot().unwrap();
    let codes: Vec<String> = after
        .execution
        .iter()
        .map(|e| e.fields().code().into_owned())
        .collect();
    assert_eq!(codes, ["nine()"], "iterations 1-8's executions replaced");
    assert_eq!(result.tokens_after, after.estimate_tokens());
    assert!(before.execution.len() > 1);
    let waiting = rig.events.events().into_iter().any(|event| {
        matches!(
            event,
            CompactionEvent::PhaseChange {
                phase: Phase::Waiting,
                ..
            }
        )
    });
    assert!(waiting, "the app hears that the swap waits");
}

#[test]
fn with_no_iteration_running_the_summary_is_swapped_in_at_once() {
    let rig = Rig::with(
        MemoryStore::new(),
        vec![Answer::Text(valid_summary("at once"))],
        small_window(),
    );
    grow_session(&rig.logs, &rig.clock, 8, 7);
    let started = Rc::new(RefCell::new(None));
    let told = started.clone();
    let claim = rig
        .compactor
        .claim(Trigger::Auto, Cancel::default())
        .unwrap();
    let claim = claim.in_background(Started::new(move |it| *told.borrow_mut() = Some(it)));
    let result = run_ready(rig.compactor.compact_claimed(claim))
        .unwrap()
        .unwrap();
    assert_eq!(*started.borrow(), Some([1, 7]));
    assert_eq!(result.iterations, [1, 7]);
    assert!(!rig.timer.waits.borrow().contains(&50), "no wait");
}

#[test]
fn a_failed_background_compaction_leaves_the_logs_as_the_loop_left_them() {
    let settings = CompactorSettings {
        fallback: FallbackPolicy::Off,
        max_retries: 0,
        ..small_window()
    };
    let failure = Answer::fail(ProviderError::Failed("the provider is down".into()));
    let rig = mid_iteration(vec![failure], settings);
    let before = rig.logs.borrow().reasoning_log().unwrap();
    let (seen, outcome) = run_with_the_loop(&rig, Cancel::default(), |_, _| {});
    assert_eq!(outcome.unwrap_err().code(), ErrorCode::LlmNetwork);
    assert_eq!(seen.started.get(), Some([1, 8]));
    assert_left_as_the_loop_left_them(&rig, &before);
    let told = rig.events.events().into_iter().any(|event| {
        matches!(
            event,
            CompactionEvent::Error {
                code: "llm_network",
                ..
            }
        )
    });
    assert!(told, "the app hears it");
    assert!(!rig.compactor.busy(), "the loop may compact again");
}

#[test]
fn a_cancel_while_the_swap_waits_for_the_boundary_leaves_the_logs_as_the_loop_left_them() {
    let rig = mid_iteration(
        vec![Answer::Text(valid_summary("cancelled"))],
        small_window(),
    );
    let before = rig.logs.borrow().reasoning_log().unwrap();
    let cancel = Cancel::default();
    let cancelling = cancel.clone();
    // Iteration 10 runs on; the app cancels at the second poll.
    let at_poll = move |poll: u32, _: &Logs| {
        if poll == 2 {
            cancelling.cancel();
        }
    };
    let (seen, outcome) = run_with_the_loop(&rig, cancel, at_poll);
    assert_eq!(outcome.unwrap_err().code(), ErrorCode::Aborted);
    assert_eq!(seen.started.get(), Some([1, 8]));
    assert_left_as_the_loop_left_them(&rig, &before);
    assert!(!rig.compactor.busy());
}
