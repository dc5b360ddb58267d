//! The summary cache (#41): a compaction whose exact input was summarised before takes that
//! summary with no provider call; another model, another selection, the option off or another
//! logs prefix never do.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod common;

use common::*;
use context_compactor::core::error::{CompactionError, ProviderFailure};
use context_compactor::core::model::outcome::CompactionResult;
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::storage::{utf16_units, KeyValueStore, MemoryStore};
use context_compactor::core::ports::timer::{run_ready, LocalBoxFuture};
use context_compactor::core::providers::port::{Generation, SummaryProvider, SummaryRequest};

fn compact(rig: &Rig) -> Result<CompactionResult, CompactionError> {
    run_ready(rig.compactor.compact(Trigger::User)).expect("the compaction waited on nothing")
}

/// Iterations of each session: enough that a summary takes at most a quarter of what its
/// compaction frees, so that it is cached.
const ITERATIONS: u32 = 24;

/// A session of [`ITERATIONS`] over `memory` whose provider answers `answers`, under `settings`.
fn session(memory: MemoryStore, answers: usize, settings: CompactorSettings) -> Rig {
    let answers = (0..answers)
        .map(|n| Answer::Text(valid_summary(&format!("answer {n}"))))
        .collect();
    let rig = Rig::with(memory, answers, settings);
    grow_session(&rig.logs, &rig.clock, ITERATIONS, 42);
    rig
}

#[test]
fn a_rollback_then_the_same_compaction_takes_the_cached_summary_with_no_call() {
    let rig = session(MemoryStore::new(), 1, small_window());
    let first = compact(&rig).unwrap();
    assert!(!first.cached);
    assert_eq!((first.attempts, rig.provider.calls()), (1, 1));
    run_ready(rig.compactor.rollback(&first.archive_key))
        .unwrap()
        .unwrap();
    let again = compact(&rig).expect("the script is exhausted: only the cache can answer");
    assert!(again.cached);
    assert_eq!((again.attempts, rig.provider.calls()), (0, 1));
    assert_eq!(again.summary, first.summary);
    assert_eq!(again.coverage.kept, first.coverage.kept);
    assert_eq!(
        again.coverage, first.coverage,
        "drawn again from the same ledger"
    );
    // The entry holds the summary once, not its facts again.
    let stored = rig.memory.get("gdrs_summary_cache").unwrap().unwrap();
    assert!(
        stored.len() < first.summary.len() + 400,
        "{} bytes cached for a summary of {}",
        stored.len(),
        first.summary.len()
    );
    assert_eq!(again.usage, None, "no call, no tokens");
    assert!(progress_messages(&rig)
        .iter()
        .any(|m| m.contains("taken from the cache")));
}

#[test]
fn a_compaction_that_failed_to_store_is_retried_from_the_cache() {
    // Room for the cache entry but not for the archive: the store is nearly full.
    let memory = MemoryStore::new();
    let rig = session(memory.clone(), 1, small_window());
    let logs_units = memory.used_units();
    // The archive takes about 6,600 units, the cache entry 2,700 and the metrics 450.
    memory.set_quota(Some(logs_units + 4_500));
    let err = compact(&rig).unwrap_err();
    assert_eq!(err.code().as_str(), "storage_quota", "{err}");
    assert!(
        memory.get("gdrs_summary_cache").unwrap().is_some(),
        "the answer was kept"
    );
    // The user frees space; the same compaction needs no second call.
    memory.set_quota(None);
    let result = compact(&rig).unwrap();
    assert!(result.cached);
    assert_eq!(rig.provider.calls(), 1);
    assert!(result.summary.contains("answer 0"));
}

/// The scripted provider under another model's name.
struct Renamed(ScriptedProvider);

impl SummaryProvider for Renamed {
    fn model(&self) -> String {
        "another-model".into()
    }
    fn generate(
        &self,
        request: &SummaryRequest<'_>,
    ) -> LocalBoxFuture<'static, Result<Generation, ProviderFailure>> {
        self.0.generate(request)
    }
}

#[test]
fn another_model_another_selection_another_prefix_or_the_option_off_asks_the_provider() {
    // The same logs compacted, rolled back, then compacted by a compactor of another model.
    let memory = MemoryStore::new();
    let rig = session(memory.clone(), 1, small_window());
    let first = compact(&rig).unwrap();
    run_ready(rig.compactor.rollback(&first.archive_key))
        .unwrap()
        .unwrap();
    let other = ScriptedProvider::new(vec![Answer::Text(valid_summary("other model"))]);
    let renamed = Rig::with_provider(
        memory.clone(),
        Box::new(Renamed(other.clone())),
        small_window(),
    );
    let result = compact(&renamed).unwrap();
    assert!(!result.cached);
    assert_eq!(other.calls(), 1);
    run_ready(renamed.compactor.rollback(&result.archive_key))
        .unwrap()
        .unwrap();

    // Another selection: one more iteration before the same compaction.
    let rig = session(memory.clone(), 1, small_window());
    grow_session(&rig.logs, &rig.clock, 1, 7);
    let result = compact(&rig).unwrap();
    assert!(!result.cached);
    assert_eq!(rig.provider.calls(), 1);

    // The option off: asked again after a rollback.
    let off = CompactorSettings {
        summary_cache: false,
        ..small_window()
    };
    let rig = session(MemoryStore::new(), 2, off);
    let first = compact(&rig).unwrap();
    run_ready(rig.compactor.rollback(&first.archive_key))
        .unwrap()
        .unwrap();
    assert!(!compact(&rig).unwrap().cached);
    assert_eq!(rig.provider.calls(), 2);
    assert_eq!(rig.memory.get("gdrs_summary_cache").unwrap(), None);
}

#[test]
fn the_cache_is_kept_under_the_logs_prefix_and_never_read_across_prefixes() {
    let memory = MemoryStore::new();
    let rig = session(memory.clone(), 1, small_window());
    compact(&rig).unwrap();
    let cached = memory.get("gdrs_summary_cache").unwrap().expect("written");
    assert!(cached.contains("answer 0"));
    // The same session under another prefix in the same store: its own cache, empty.
    let other = Rig::with_prefix(memory.clone(), "app2_", vec![], small_window());
    grow_session(&other.logs, &other.clock, ITERATIONS, 42);
    let err = compact(&other).expect_err("asked, and the script has no answer");
    assert!(err.to_string().contains("script exhausted"), "{err}");
    assert!(other.provider.calls() >= 1, "not served from gdrs_'s cache");
    assert_eq!(memory.get("app2_summary_cache").unwrap(), None);
}

/// Storage filled to the last unit after a compaction cached its summary: the next append
/// takes the cache's room (the cache is a saving only) instead of failing `storage_quota`.
/// Before, the append was refused while the cache kept its room.
#[test]
fn the_summary_cache_gives_its_room_to_the_next_append() {
    let memory = MemoryStore::new();
    let rig = session(memory.clone(), 1, small_window());
    compact(&rig).unwrap();
    let cache = "gdrs_summary_cache";
    assert!(memory.get(cache).unwrap().is_some());
    memory.set_quota(Some(memory.used_units()));
    let mut logs = rig.logs.borrow_mut();
    logs.start_iteration().unwrap();
    logs.append_reasoning("Iteration 7: the totals match the report now.")
        .expect("the cache's room is taken");
    assert_eq!(memory.get(cache).unwrap(), None);
    assert!(logs
        .reasoning_log()
        .unwrap()
        .iter()
        .any(|entry| entry.contains("the totals match")));
}

/// A compaction frees what it says: the summary is cached only where it takes at most a quarter
/// of the room the logs gave up. Before, a short session's summary was cached whatever its
/// size, and the room the compaction freed went to the cache (six iterations: the logs gave up
/// 3,282 units and the cache took 1,270 of them).
#[test]
fn a_compaction_with_the_cache_on_frees_what_it_says() {
    for iterations in [6, ITERATIONS] {
        let memory = MemoryStore::new();
        let answers = vec![Answer::Text(valid_summary("answer 0"))];
        let rig = Rig::with(memory.clone(), answers, small_window());
        grow_session(&rig.logs, &rig.clock, iterations, 42);
        let units = |keys: &[&str]| -> usize {
            keys.iter()
                .filter_map(|key| memory.get(key).unwrap())
                .map(|text| utf16_units(&text))
                .sum()
        };
        let logs = [
            "gdrs_reasoning_log",
            "gdrs_execution_log",
            "gdrs_tool_activity_log",
        ];
        let before = units(&logs);
        let result = compact(&rig).unwrap();
        let freed = before - units(&logs);
        let cached = units(&["gdrs_summary_cache"]);
        assert!(
            result.tokens_saved > 0 && freed > 0,
            "{iterations}: {freed}"
        );
        assert!(
            cached * 4 <= freed,
            "{iterations} iterations: the cache took {cached} of the {freed} units the logs gave up"
        );
        assert_eq!(
            cached > 0,
            iterations == ITERATIONS,
            "{iterations}: cached only where it is worth its room"
        );
    }
}
