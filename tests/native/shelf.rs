//! One shelf per page: every compactor over the same logs sees a compaction another one runs
//! in the page (its archive cannot be deleted or rolled back under it), and a compaction the
//! loop itself asks for in the middle of this page's iteration does not wait for it.
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::future::Future;
use std::task::{Context, Waker};

use common::*;
use context_compactor::core::model::settings::Trigger;
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::events::RecordingSink;
use context_compactor::core::ports::storage::MemoryStore;
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::providers::offline::OfflineProvider;
use context_compactor::core::run::compactor::Compactor;

/// A second compactor over the same logs object (as `Archives` and the demo's archive view build
/// beside the app's compactor).
fn second(rig: &Rig) -> Compactor<MemoryStore, ManualClock> {
    Compactor::new(
        rig.logs.clone(),
        Box::new(OfflineProvider),
        Box::new(InstantTimer::new(&rig.clock)),
        Box::new(RecordingSink::default()),
        small_window(),
    )
    .unwrap()
}

#[test]
fn another_compactor_of_the_page_cannot_delete_or_roll_back_while_one_compacts() {
    let rig = Rig::with(
        MemoryStore::new(),
        vec![
            Answer::Text(valid_summary("north region leads.")),
            Answer::Hang,
        ],
        small_window(),
    );
    grow_session(&rig.logs, &rig.clock, 6, 42);
    let first = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    grow_session(&rig.logs, &rig.clock, 8, 43);
    rig.timer.never.set(true);
    let other = second(&rig);

    let mut running = Box::pin(rig.compactor.compact(Trigger::User));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(running.as_mut().poll(&mut cx).is_pending());

    let deleted = run_ready(other.shelf().delete(&first.archive_key)).unwrap();
    assert_eq!(deleted.unwrap_err().code().as_str(), "busy");
    let rolled_back = run_ready(other.rollback(&first.archive_key)).unwrap();
    assert_eq!(rolled_back.unwrap_err().code().as_str(), "busy");
    let compacted = run_ready(other.compact(Trigger::User)).unwrap();
    assert_eq!(compacted.unwrap_err().code().as_str(), "busy");
    assert!(other.busy());
    assert!(other.plan().unwrap().refused.is_some());

    drop(running);
    assert!(
        !other.busy(),
        "the page is free once the compaction's future is gone"
    );
    run_ready(other.shelf().delete(&first.archive_key))
        .unwrap()
        .unwrap();
}

/// A session of `iterations` finished ones, then one this page has started.
fn running_here(iterations: u32) -> Rig {
    let rig = Rig::offline(
        MemoryStore::new(),
        ManualClock::new(NOV_22_2026),
        small_window(),
    );
    grow_session(&rig.logs, &rig.clock, iterations, 7);
    let mut logs = rig.logs.borrow_mut();
    logs.start_iteration().unwrap();
    logs.append_reasoning("Checking shard_099 now.").unwrap();
    drop(logs);
    // A compaction that waited would never see its sleeps end.
    rig.timer.never.set(true);
    rig
}

#[test]
fn the_loops_own_compaction_goes_ahead_in_the_middle_of_its_iteration() {
    for trigger in [Trigger::Auto, Trigger::ContextLimitError] {
        let rig = running_here(8);
        let live = rig.logs.borrow().current_iteration().unwrap();
        assert_eq!(rig.compactor.waits_for(trigger).unwrap(), None);
        let result = run_ready(rig.compactor.compact(trigger))
            .expect("settles without waiting for its own iteration")
            .unwrap();
        assert_eq!(result.iterations, [1, live - 1], "{trigger:?}");
        let logs = rig.logs.borrow();
        assert!(logs.iteration_running());
        let reasoning = logs.reasoning_log().unwrap();
        assert!(reasoning.ends_with(&[
            format!("=== ITERATION {live} ==="),
            "Checking shard_099 now.".to_owned()
        ]));
    }
}

#[test]
fn a_users_compaction_still_waits_for_the_running_iteration_and_says_so() {
    let rig = running_here(8);
    let wait = rig.compactor.waits_for(Trigger::User).unwrap().unwrap();
    assert!(wait.running_here);
    assert_eq!(wait.triggers, vec![Trigger::User]);
    assert!(wait.to_string().contains("finishIteration()"), "{wait}");
    assert_eq!(rig.compactor.plan().unwrap().waits_for, Some(wait));

    let mut waiting = Box::pin(rig.compactor.compact(Trigger::User));
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..10 {
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
    }
    assert_eq!(rig.compactor.phase().as_str(), "waiting");
    rig.logs.borrow_mut().finish_iteration();
    rig.timer.never.set(false);
    // The sleep it is in never ends; a new one ends at once.
    drop(waiting);
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    assert_eq!(result.iterations, [1, 8]);
}

#[test]
fn an_iteration_another_tab_runs_holds_back_every_compaction() {
    let rig = running_here(8);
    let other_tab = logs_over(&rig.memory, &rig.clock);
    let compactor = Compactor::new(
        other_tab,
        Box::new(OfflineProvider),
        Box::new(InstantTimer::new(&rig.clock)),
        Box::new(RecordingSink::default()),
        small_window(),
    )
    .unwrap();
    for trigger in Trigger::ALL {
        let wait = compactor.waits_for(trigger).unwrap().unwrap();
        assert!(!wait.running_here);
        assert_eq!(wait.triggers, Trigger::ALL.to_vec());
    }
}
