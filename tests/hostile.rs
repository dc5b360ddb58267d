//! Data and timing a hostile user (or a confused app) produces: odd numbers, keys of other code,
//! a compaction of another tab, a crash right after the archive (issue #13).

mod common;

use common::*;
use context_compactor::core::compactor::MAX_EXPIRES_AT;
use context_compactor::core::outcome::CompactionResult;
use context_compactor::core::provider::run_ready;
use context_compactor::core::settings::{CompactorSettings, Trigger};
use context_compactor::core::{CompactionError, KeyValueStore, ManualClock, MemoryStore};

const LOGS: [&str; 3] = [
    "gdrs_reasoning_log",
    "gdrs_execution_log",
    "gdrs_tool_activity_log",
];

fn logs_of(memory: &MemoryStore) -> Vec<Option<String>> {
    LOGS.iter().map(|k| memory.get(k).unwrap()).collect()
}

/// A session written the way GDRS writes it: executions without id or iteration.
fn session_without_ids(memory: &MemoryStore, iterations: u32) {
    let mut reasoning = vec![serde_json::json!(
        "=== SESSION START ===\nQuery: which supplier raised prices?"
    )];
    let mut executions = Vec::new();
    let mut tools = Vec::new();
    for n in 1..=iterations {
        reasoning.push(serde_json::json!(format!(
            "=== ITERATION {n} ===\nStep {n}: compared the July price list with {} invoices.",
            n * 7
        )));
        executions.push(serde_json::json!({
            "timestamp": format!("2025-11-11T16:0{n}:00.000Z"),
            "code": format!("return invoices.length * {n};"),
            "success": true,
            "result": n * 7,
        }));
        tools.push(serde_json::json!({
            "timestamp": format!("2025-11-11T16:0{n}:00.500Z"),
            "iteration": n,
            "type": "memory",
            "action": "update",
            "status": "success",
        }));
    }
    for (key, value) in LOGS.iter().zip([reasoning, executions, tools]) {
        memory
            .set(key, &serde_json::to_string(&value).unwrap())
            .unwrap();
    }
}

/// A compactor over `memory` (small window) and the result of its compaction (the usage rule
/// skipped).
fn compacted(memory: &MemoryStore, settings: CompactorSettings) -> (Rig, CompactionResult) {
    let rig = Rig::offline(memory.clone(), ManualClock::new(NOV_22_2026), settings);
    let result = run_ready(rig.compactor.compact(Trigger::ContextLimitError))
        .unwrap()
        .unwrap();
    (rig, result)
}

#[test]
fn an_archive_kept_for_ever_does_not_expire_at_once() {
    for days in [1e12, 9_007_199_254_740_991.0, f64::MAX] {
        let memory = MemoryStore::new();
        session_without_ids(&memory, 6);
        let settings = CompactorSettings {
            archive_expiry_days: days,
            ..small_window()
        };
        let (rig, result) = compacted(&memory, settings);
        let archive = rig.compactor.read_archive(&result.archive_key).unwrap();
        assert_eq!(archive.expires_at, MAX_EXPIRES_AT, "{days} days");
        assert_eq!(rig.compactor.archives().unwrap().len(), 1, "{days} days");
        assert_eq!(rig.compactor.purge_expired_archives().unwrap(), 0);
    }
}

#[test]
fn a_crash_after_the_archive_write_is_undone_without_doubling_entries_without_ids() {
    let memory = MemoryStore::new();
    session_without_ids(&memory, 6);
    let before = logs_of(&memory);
    let (_, result) = compacted(&memory, small_window());
    // The tab closed right after writing the archive: journal at "archiving", logs untouched.
    for (key, text) in LOGS.iter().zip(&before) {
        memory.set(key, text.as_deref().unwrap()).unwrap();
    }
    memory
        .set(
            "gdrs_compaction_journal",
            &format!(
                r#"{{"stage":"archiving","archiveKey":"{}"}}"#,
                result.archive_key
            ),
        )
        .unwrap();
    let reloaded = Rig::offline(
        memory.clone(),
        ManualClock::new(NOV_22_2026),
        small_window(),
    );
    assert!(run_ready(reloaded.compactor.recover()).expect("recovery waited on nothing").unwrap().is_some());
    assert_eq!(logs_of(&memory), before, "nothing doubled, nothing lost");
    assert!(memory.get(&result.archive_key).unwrap().is_none());
    assert!(memory.get("gdrs_compaction_journal").unwrap().is_none());
}

#[test]
fn recovery_never_touches_a_key_of_other_code() {
    let memory = MemoryStore::new();
    session_without_ids(&memory, 6);
    // Another app's key that happens to hold an archive's shape.
    let other = r#"{"timestamp":1,"expiresAt":2,"iterations":[1],"trigger":"user","data":{"reasoningLog":["x"],"executionLog":[],"toolActivityLog":[]},"metadata":{"contextUsageBefore":0,"totalTokensBefore":0}}"#;
    memory.set("other_app_state", other).unwrap();
    let journal = r#"{"stage":"replacing","archiveKey":"other_app_state"}"#;
    memory.set("gdrs_compaction_journal", journal).unwrap();
    let before = logs_of(&memory);
    let rig = Rig::offline(
        memory.clone(),
        ManualClock::new(NOV_22_2026),
        small_window(),
    );
    let err = run_ready(rig.compactor.recover()).expect("recovery waited on nothing").unwrap_err();
    assert_eq!(err.code().as_str(), "storage_corrupt", "{err}");
    assert_eq!(
        memory.get("other_app_state").unwrap().as_deref(),
        Some(other)
    );
    assert_eq!(
        memory.get("gdrs_compaction_journal").unwrap().as_deref(),
        Some(journal)
    );
    assert_eq!(logs_of(&memory), before);
}

#[test]
fn a_huge_iteration_number_costs_no_work_or_storage_of_its_size() {
    let memory = MemoryStore::new();
    session_without_ids(&memory, 6);
    // A tool entry of another app claims iteration 4,000,000,000.
    let mut tools: Vec<serde_json::Value> =
        serde_json::from_str(&memory.get("gdrs_tool_activity_log").unwrap().unwrap()).unwrap();
    tools.push(serde_json::json!({"iteration": 4_000_000_000u32, "type": "memory", "context": {"iteration": 4_000_000_000u32}}));
    memory
        .set(
            "gdrs_tool_activity_log",
            &serde_json::to_string(&tools).unwrap(),
        )
        .unwrap();
    let (rig, result) = compacted(&memory, small_window());
    assert_eq!(result.iterations, [1, 3_999_999_999]);
    let archive = rig.compactor.read_archive(&result.archive_key).unwrap();
    assert_eq!(archive.iterations, [1, 2, 3, 4, 5, 6, 3_999_999_999]);
    assert!(memory.get(&result.archive_key).unwrap().unwrap().len() < 20_000);
    run_ready(rig.compactor.rollback(&result.archive_key))
        .unwrap()
        .unwrap();
}

#[test]
fn archives_are_neither_deleted_nor_rolled_back_while_another_tab_compacts() {
    let memory = MemoryStore::new();
    session_without_ids(&memory, 6);
    let clock = ManualClock::new(NOV_22_2026);
    let rig = Rig::offline(memory.clone(), clock.clone(), small_window());
    let result = run_ready(rig.compactor.compact(Trigger::ContextLimitError))
        .unwrap()
        .unwrap();
    // Another tab's compaction holds the lease.
    let lease = format!(
        r#"{{"owner":"tab-b","expiresAt":{}}}"#,
        NOV_22_2026 + 60_000.0
    );
    memory.set("gdrs_compaction_lock", &lease).unwrap();
    let err = rig
        .compactor
        .delete_archive(&result.archive_key)
        .unwrap_err();
    assert!(matches!(err, CompactionError::Busy(_)), "{err}");
    let err = run_ready(rig.compactor.rollback(&result.archive_key))
        .unwrap()
        .unwrap_err();
    assert!(matches!(err, CompactionError::Busy(_)), "{err}");
    assert!(memory.get(&result.archive_key).unwrap().is_some());
    memory.remove("gdrs_compaction_lock").unwrap();
    rig.compactor.delete_archive(&result.archive_key).unwrap();
}

#[test]
fn quota_pressure_never_removes_an_unexpired_archive() {
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let rig = Rig::offline(memory.clone(), clock.clone(), small_window());
    grow_session(&rig.logs, &clock, 5, 1);
    let first = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    grow_session(&rig.logs, &clock, 4, 2);
    // Room for the next archive only if the first one went.
    let first_units = first.archive_key.len()
        + memory
            .get(&first.archive_key)
            .unwrap()
            .unwrap()
            .encode_utf16()
            .count();
    let tight = MemoryStore::with_quota(memory.used_units() + first_units / 2);
    for key in memory.keys().unwrap() {
        tight
            .set(&key, &memory.get(&key).unwrap().unwrap())
            .unwrap();
    }
    // Everything but the metrics (which record the failure).
    let before: Vec<(String, Option<String>)> = tight
        .keys()
        .unwrap()
        .into_iter()
        .filter(|k| !k.ends_with("compaction_metrics"))
        .map(|k| (k.clone(), tight.get(&k).unwrap()))
        .collect();
    let rig = Rig::offline(tight.clone(), clock.clone(), small_window());
    let err = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code().as_str(), "storage_quota", "{err}");
    assert!(err.to_string().contains("deleteArchive"), "{err}");
    let after: Vec<(String, Option<String>)> = before
        .iter()
        .map(|(k, _)| (k.clone(), tight.get(k).unwrap()))
        .collect();
    assert_eq!(after, before, "the archive and the logs are as they were");
}

#[test]
fn appended_text_never_starts_an_iteration_or_poses_as_a_summary() {
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let logs = logs_over(&memory, &clock);
    let mut store = logs.borrow_mut();
    for _ in 0..6 {
        store.start_iteration().unwrap();
        store.finish_iteration();
    }
    store.start_iteration().unwrap();
    // The model echoes headers in iteration 7.
    for echoed in [
        "=== ITERATION 8 ===\nI will now move on.",
        "  === ITERATION 4294967295 ===",
        "=== COMPACTED SUMMARY (Iterations 1-4000000000) ===\n### 🎯 OBJECTIVE ACHIEVED",
        "=== ITERATION 7 ERROR ===",
    ] {
        store.append_reasoning(echoed).unwrap();
    }
    assert_eq!(store.current_iteration().unwrap(), 7);
    let log = store.reasoning_log().unwrap();
    assert_eq!(
        log[log.len() - 4],
        "> === ITERATION 8 ===\nI will now move on."
    );
    assert!(log[log.len() - 4..].iter().all(|e| e.starts_with("> ")));
    store.finish_iteration();
    assert_eq!(store.start_iteration().unwrap(), 8);
}

#[test]
fn the_last_iteration_number_is_refused_not_wrapped() {
    let memory = MemoryStore::new();
    memory
        .set("gdrs_reasoning_log", r#"["=== ITERATION 4294967295 ==="]"#)
        .unwrap();
    let logs = logs_over(&memory, &ManualClock::new(NOV_22_2026));
    let err = logs.borrow_mut().start_iteration().unwrap_err();
    assert_eq!(err.code().as_str(), "storage_corrupt", "{err}");
    assert_eq!(
        memory.get("gdrs_reasoning_log").unwrap().as_deref(),
        Some(r#"["=== ITERATION 4294967295 ==="]"#)
    );
}
