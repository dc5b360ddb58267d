//! The core LogStore over an in-memory store: the same rules the browser tests check, natively.
#![cfg(not(target_arch = "wasm32"))]
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use context_compactor::core::error::StorageError;
use context_compactor::core::log::entries::{ExecutionInput, ToolActivityInput};
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::store::keys::StorageKeys;
use context_compactor::core::store::log_store::LogStore;
use serde_json::{json, Value};

const NOV_22_2026: f64 = 1_795_373_767_000.0;

fn store_over(memory: &MemoryStore) -> LogStore<MemoryStore, ManualClock> {
    LogStore::new(
        memory.clone(),
        ManualClock::new(NOV_22_2026),
        StorageKeys::default(),
        7,
    )
}

fn exec(success: bool, code: &str) -> ExecutionInput {
    ExecutionInput {
        success,
        code: code.into(),
        ..Default::default()
    }
}

fn stored(memory: &MemoryStore, key: &str) -> Value {
    serde_json::from_str(&memory.get(key).unwrap().unwrap()).unwrap()
}

#[test]
fn iterations_are_numbered_from_the_logs_and_entries_stamped() {
    let memory = MemoryStore::new();
    let mut logs = store_over(&memory);
    assert_eq!(logs.start_iteration().unwrap(), 1);
    logs.append_reasoning("plan").unwrap();
    let entry = logs.append_execution(exec(true, "1+1")).unwrap();
    let written: Value = serde_json::from_str(entry.json()).unwrap();
    assert_eq!(written["iteration"], 1);
    assert_eq!(written["timestamp"], "2026-11-22T18:56:07.000Z");
    assert_eq!(written["error"], Value::Null);
    let tool = logs
        .append_tool_activity(ToolActivityInput {
            kind: "vfs".into(),
            action: "write".into(),
            status: "success".into(),
            ..Default::default()
        })
        .unwrap();
    assert!(tool.facts.id.clone().unwrap().starts_with("tool_"));
    logs.finish_iteration();

    // A second instance (another tab) sees the same iteration count.
    let mut other = store_over(&memory);
    assert_eq!(other.current_iteration().unwrap(), 1);
    assert_eq!(other.start_iteration().unwrap(), 2);
    assert_eq!(logs.current_iteration().unwrap(), 2);
    assert_eq!(
        stored(&memory, "gdrs_reasoning_log"),
        json!(["=== ITERATION 1 ===", "plan", "=== ITERATION 2 ==="])
    );
}

#[test]
fn a_compacted_summary_counts_as_the_iterations_it_covers() {
    let memory = MemoryStore::new();
    memory
        .set(
            "gdrs_reasoning_log",
            r#"["=== COMPACTED SUMMARY (Iterations 1-6) ===\n### 🎯 OBJECTIVE ACHIEVED\n...","=== ITERATION 7 ==="]"#,
        )
        .unwrap();
    let mut logs = store_over(&memory);
    assert_eq!(logs.current_iteration().unwrap(), 7);
    assert_eq!(logs.start_iteration().unwrap(), 8);
}

#[test]
fn execution_entries_without_iteration_are_placed_by_context_then_position() {
    let memory = MemoryStore::new();
    memory
        .set(
            "gdrs_reasoning_log",
            r#"["=== ITERATION 1 ===","=== ITERATION 2 ===","=== ITERATION 3 ==="]"#,
        )
        .unwrap();
    memory
        .set(
            "gdrs_execution_log",
            r#"[{"code":"a"},{"code":"b","context":{"iteration":2}},{"code":"c"},{"code":"d","iteration":3}]"#,
        )
        .unwrap();
    memory
        .set("gdrs_tool_activity_log", r#"[{"type":"vfs"}]"#)
        .unwrap();
    let logs = store_over(&memory);
    let placed = logs.snapshot().unwrap().placed_iterations();
    assert_eq!(placed.entries.execution, vec![2, 2, 2, 3]);
    // Nothing to go by: the current iteration, never a compactable one by guess.
    assert_eq!(placed.entries.tool_activity, vec![3]);
    // Readers get the placed iteration in entries that state none; stored texts stay.
    let listed: Value = serde_json::from_str(&logs.execution_log_json().unwrap()).unwrap();
    assert_eq!(listed[0], serde_json::json!({"iteration": 2, "code": "a"}));
    assert_eq!(listed[1]["iteration"], 2);
    assert_eq!(
        memory.get("gdrs_execution_log").unwrap().unwrap(),
        r#"[{"code":"a"},{"code":"b","context":{"iteration":2}},{"code":"c"},{"code":"d","iteration":3}]"#
    );
}

#[test]
fn corrupt_keys_fail_every_call_that_reads_them_and_are_never_written() {
    for key in [
        "gdrs_reasoning_log",
        "gdrs_execution_log",
        "gdrs_tool_activity_log",
    ] {
        let memory = MemoryStore::new();
        memory.set(key, "[{\"broken\"").unwrap();
        let mut logs = store_over(&memory);
        let err = logs.append_execution(exec(true, "x")).unwrap_err();
        assert!(
            matches!(&err, StorageError::Corrupt { key: k, .. } if k == key),
            "{err:?}"
        );
        assert!(logs.start_iteration().is_err());
        assert!(logs.estimate_tokens().is_err());
        assert_eq!(memory.get(key).unwrap().as_deref(), Some("[{\"broken\""));
    }
}

#[test]
fn a_full_store_reports_quota_and_keeps_the_previous_value() {
    let memory = MemoryStore::with_quota(400);
    let mut logs = store_over(&memory);
    logs.start_iteration().unwrap();
    let before = memory.get("gdrs_reasoning_log").unwrap();
    let err = logs.append_reasoning(&"z".repeat(500)).unwrap_err();
    assert!(matches!(err, StorageError::Quota { units_needed, .. } if units_needed > 500));
    assert_eq!(memory.get("gdrs_reasoning_log").unwrap(), before);
    assert_eq!(logs.reasoning_log().unwrap(), vec!["=== ITERATION 1 ==="]);
}

#[test]
fn tokens_grow_with_every_log_and_clear_empties_them() {
    let memory = MemoryStore::new();
    let mut logs = store_over(&memory);
    logs.start_iteration().unwrap();
    let header_only = logs.estimate_tokens().unwrap();
    logs.append_reasoning("The dataset has 40213 rows.")
        .unwrap();
    let with_reasoning = logs.estimate_tokens().unwrap();
    logs.append_execution(exec(true, "rows.length")).unwrap();
    let with_execution = logs.estimate_tokens().unwrap();
    assert!(header_only > 0 && with_reasoning > header_only && with_execution > with_reasoning);

    memory.set("gdrs_archived_logs_5", "{}").unwrap();
    logs.pin("Region 7 stays out of the report.").unwrap();
    logs.set_goal("Find the regions under target.").unwrap();
    logs.clear(false).unwrap();
    assert_eq!(logs.estimate_tokens().unwrap(), 0);
    assert_eq!(logs.current_iteration().unwrap(), 0);
    assert!(!logs.iteration_running());
    assert!(memory.get("gdrs_archived_logs_5").unwrap().is_some());
    assert_eq!(logs.goal().unwrap(), None, "the goal is the session's");
    assert_eq!(logs.pins().unwrap().len(), 1, "pins stay unless asked");
    logs.clear(true).unwrap();
    assert!(
        logs.pins().unwrap().is_empty(),
        "clear({{ pins: true }}) removes the pins"
    );
}

#[test]
fn a_running_iteration_is_seen_by_other_tabs_until_finished_or_stale() {
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let tab = |seed| LogStore::new(memory.clone(), clock.clone(), StorageKeys::default(), seed);
    let (mut app, other) = (tab(1), tab(2));
    app.mark_iteration_running();
    assert!(app.iteration_running() && other.iteration_running());
    assert!(
        memory.get("gdrs_reasoning_log").unwrap().is_none(),
        "no header is written"
    );
    app.finish_iteration();
    assert!(!app.iteration_running() && !other.iteration_running());
    // A tab closed mid-iteration holds compactions back for ten minutes at most.
    app.mark_iteration_running();
    clock.advance(10.0 * 60_000.0);
    assert!(!other.iteration_running());
    assert!(
        app.iteration_running(),
        "the tab that marked it still knows"
    );
}
