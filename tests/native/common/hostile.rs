//! Data and timing a hostile user (or a confused app) produces: odd numbers, keys of other code,
//! a compaction of another tab, a crash right after the archive (issue #13). Each case asserts
//! what must hold and returns its row of the fault matrix (docs/guarantees.md).

use super::census::{assert_nothing_lost, census};
use super::locked::locked;
use super::*;
use context_compactor::core::error::CompactionError;
use context_compactor::core::json::read::from_text;
use context_compactor::core::log::entries::ExecutionInput;
use context_compactor::core::model::outcome::CompactionResult;
use context_compactor::core::model::set_aside::SetAside;
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::store::archive_record::MAX_EXPIRES_AT;
use context_compactor::core::store::journal::Recovered;

const LOGS: [&str; 3] = [
    "gdrs_reasoning_log",
    "gdrs_execution_log",
    "gdrs_tool_activity_log",
];

pub fn logs_of(memory: &MemoryStore) -> Vec<Option<String>> {
    LOGS.iter().map(|k| memory.get(k).unwrap()).collect()
}

/// A session written the way GDRS writes it: executions without id or iteration.
pub fn session_without_ids(memory: &MemoryStore, iterations: u32) {
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
pub fn compacted(memory: &MemoryStore, settings: CompactorSettings) -> (Rig, CompactionResult) {
    let rig = Rig::offline(memory.clone(), ManualClock::new(NOV_22_2026), settings);
    let result = run_ready(rig.compactor.compact(Trigger::ContextLimitError))
        .unwrap()
        .unwrap();
    (rig, result)
}

/// A row of the fault matrix: the case and its outcome.
pub type Row = (String, String);

fn row(case: &str, outcome: impl Into<String>) -> Row {
    (case.to_owned(), outcome.into())
}

/// Every case, in the order of the table.
pub fn all() -> Vec<Row> {
    vec![
        an_entry_read_back_and_appended_again_is_stored_once(),
        quota_pressure_never_removes_an_unexpired_archive(),
        every_write_of_a_compaction_is_made_under_the_store_lock(),
        a_huge_iteration_number_costs_no_work_or_storage_of_its_size(),
        an_archive_kept_for_ever_does_not_expire_at_once(),
        a_crash_after_the_archive_write_is_undone_without_doubling_entries_without_ids(),
        archives_are_neither_deleted_nor_rolled_back_while_another_tab_compacts(),
        recovery_never_touches_a_key_of_other_code(),
        appended_text_never_starts_an_iteration_or_poses_as_a_summary(),
        the_last_iteration_number_is_refused_not_wrapped(),
        a_lease_far_in_the_future_holds_nothing_back(),
    ]
}

/// An entry read back from the log and appended again, its stamps included (item 1).
pub fn an_entry_read_back_and_appended_again_is_stored_once() -> Row {
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let logs = logs_over(&memory, &clock);
    grow_session(&logs, &clock, 6, 3);
    let read_back = logs.borrow().execution_log_json().unwrap();
    let entries: Vec<serde_json::Value> = serde_json::from_str(&read_back).unwrap();
    let again: ExecutionInput = from_text(&entries[0].to_string()).unwrap();
    let stored = logs.borrow_mut().append_execution(again).unwrap();
    assert_eq!(
        stored.json().matches("\"id\"").count(),
        1,
        "{}",
        stored.json()
    );
    let text = memory.get("gdrs_execution_log").unwrap().unwrap();
    let parsed: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed.len(), entries.len() + 1);
    let before = census(&memory);
    let (_, result) = compacted(&memory, small_window());
    assert_nothing_lost("re-appended entry", &before, &memory);
    row(
        "an entry read back from `executionLog()` and appended again (`id`, `timestamp`, `iteration` given)",
        format!(
            "stored once with the store's own stamps; the log reads and compacts (iterations 1-{})",
            result.iterations[1]
        ),
    )
}

/// Every write of a compaction, a rollback and a recovery under the store lock, which makes
/// another tab's appends safe (item 3; the two-tab run in Chromium is `tests/node/chaos-page.test.mjs`).
pub fn every_write_of_a_compaction_is_made_under_the_store_lock() -> Row {
    let rig = locked(MemoryStore::default(), 8);
    let before = census(&rig.memory);
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    assert_nothing_lost("under the lock", &before, &rig.memory);
    run_ready(rig.compactor.rollback(&result.archive_key))
        .unwrap()
        .unwrap();
    assert_nothing_lost("rolled back under the lock", &before, &rig.memory);
    assert_eq!(*rig.watch.unguarded.borrow(), Vec::<String>::new());
    assert!(!rig.watch.held.get());
    row(
        "another tab appends (through `withLock`) while this tab compacts or rolls back",
        "every write of the lease, archive, swap, rollback, recovery and metrics is made under the store lock with an up-to-date view; in Chromium two tabs appending, compacting, rolling back, deleting and reloading for 30 s lose and double nothing",
    )
}

/// A lease that claims to last far longer than any compaction (item 9).
pub fn a_lease_far_in_the_future_holds_nothing_back() -> Row {
    let memory = MemoryStore::new();
    session_without_ids(&memory, 6);
    memory
        .set(
            "gdrs_compaction_lock",
            r#"{"owner":"tab-b","expiresAt":1e308}"#,
        )
        .unwrap();
    let before = census(&memory);
    let (_, result) = compacted(&memory, small_window());
    assert_nothing_lost("lease 1e308", &before, &memory);
    row(
        "a lease with `expiresAt: 1e308`",
        format!(
            "ignored (no compaction lasts 8 hours): compacted (iterations 1-{})",
            result.iterations[1]
        ),
    )
}

/// `archiveExpiryDays` far beyond any date (issue #13, item 5).
pub fn an_archive_kept_for_ever_does_not_expire_at_once() -> Row {
    for days in [1e12, 9_007_199_254_740_991.0, f64::MAX] {
        let memory = MemoryStore::new();
        session_without_ids(&memory, 6);
        let before = census(&memory);
        let settings = CompactorSettings {
            archive_expiry_days: days,
            ..small_window()
        };
        let (rig, result) = compacted(&memory, settings);
        let archive = rig
            .compactor
            .shelf()
            .with_archives(|a| a.read(&result.archive_key))
            .unwrap();
        assert_eq!(archive.expires_at, MAX_EXPIRES_AT, "{days} days");
        assert_eq!(
            rig.compactor
                .shelf()
                .with_archives(|a| a.list())
                .unwrap()
                .len(),
            1,
            "{days} days"
        );
        assert_eq!(
            rig.compactor.shelf().with_archives(|a| a.purge()).unwrap(),
            0
        );
        assert_nothing_lost("kept for ever", &before, &memory);
    }
    row(
        "`archiveExpiryDays: 1e12`, `Number.MAX_SAFE_INTEGER`, `f64::MAX`",
        "compacted; `expiresAt` is capped at `Number.MAX_SAFE_INTEGER` ms, never wraps; the archive is listed and not purged",
    )
}

/// A tab closed right after the archive write, over entries without ids (item 6).
pub fn a_crash_after_the_archive_write_is_undone_without_doubling_entries_without_ids() -> Row {
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
    assert!(run_ready(reloaded.compactor.recover())
        .expect("recovery waited on nothing")
        .unwrap()
        .is_some());
    assert_eq!(logs_of(&memory), before, "nothing doubled, nothing lost");
    assert!(memory.get(&result.archive_key).unwrap().is_none());
    assert!(memory.get("gdrs_compaction_journal").unwrap().is_none());
    row(
        "tab closed right after the archive write; entries without `id`",
        "undone by position (`compaction_rolled_back`): the logs byte for byte as before, the archive removed",
    )
}

/// A journal that names another app's key as its archive (item 8).
pub fn recovery_never_touches_a_key_of_other_code() -> Row {
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
    let recovered = run_ready(rig.compactor.recover())
        .expect("recovery waited on nothing")
        .unwrap();
    assert!(
        matches!(&recovered, Some(Recovered::SetAside(SetAside { kept_as: Some(kept), reason, .. }))
            if kept == "gdrs_compaction_journal_corrupt" && reason.contains("other_app_state")),
        "{recovered:?}"
    );
    assert_eq!(
        memory.get("other_app_state").unwrap().as_deref(),
        Some(other)
    );
    assert_eq!(memory.get("gdrs_compaction_journal").unwrap(), None);
    assert_eq!(
        memory
            .get("gdrs_compaction_journal_corrupt")
            .unwrap()
            .as_deref(),
        Some(journal)
    );
    assert_eq!(logs_of(&memory), before);
    row(
        "a journal whose `archiveKey` is another app's key",
        "set aside (`key_set_aside`, its text kept under `gdrs_compaction_journal_corrupt`); the other key and the logs untouched",
    )
}

/// An entry that claims iteration 4,000,000,000 (item 4).
pub fn a_huge_iteration_number_costs_no_work_or_storage_of_its_size() -> Row {
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
    let before = census(&memory);
    let (rig, result) = compacted(&memory, small_window());
    assert_eq!(result.iterations, [1, 3_999_999_999]);
    let archive = rig
        .compactor
        .shelf()
        .with_archives(|a| a.read(&result.archive_key))
        .unwrap();
    assert_eq!(archive.iterations, [1, 2, 3, 4, 5, 6, 3_999_999_999]);
    let bytes = memory.get(&result.archive_key).unwrap().unwrap().len();
    assert!(bytes < 20_000);
    assert_nothing_lost("huge iteration", &before, &memory);
    run_ready(rig.compactor.rollback(&result.archive_key))
        .unwrap()
        .unwrap();
    assert_nothing_lost("huge iteration, rolled back", &before, &memory);
    row(
        "a stored `context.iteration: 4000000000`",
        format!("compacted at once (iterations 1-3999999999), an archive of {} KB listing 7 iteration numbers; rolled back", bytes / 1000),
    )
}

/// `deleteArchive`/`rollback` while another tab's compaction holds the lease (item 7).
pub fn archives_are_neither_deleted_nor_rolled_back_while_another_tab_compacts() -> Row {
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
    let err = run_ready(rig.compactor.shelf().delete(&result.archive_key))
        .unwrap()
        .unwrap_err();
    assert!(matches!(err, CompactionError::Busy(_)), "{err}");
    let err = run_ready(rig.compactor.rollback(&result.archive_key))
        .unwrap()
        .unwrap_err();
    assert!(matches!(err, CompactionError::Busy(_)), "{err}");
    assert!(memory.get(&result.archive_key).unwrap().is_some());
    memory.remove("gdrs_compaction_lock").unwrap();
    run_ready(rig.compactor.shelf().delete(&result.archive_key))
        .unwrap()
        .unwrap();
    row(
        "`deleteArchive` or `rollback` while a compaction runs in another tab",
        "`busy`; the archive stays (deleted once the compaction is over)",
    )
}

/// A full store whose only archives are unexpired (item 2).
pub fn quota_pressure_never_removes_an_unexpired_archive() -> Row {
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
    row(
        "quota full at the archive write; only unexpired archives could make room",
        "`storage_quota` with the bytes needed and free and what to delete; no archive removed, logs unchanged",
    )
}

/// The model echoes headers in the text the app appends (item 9).
pub fn appended_text_never_starts_an_iteration_or_poses_as_a_summary() -> Row {
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
    row(
        "appended model text `=== ITERATION 8 ===`, `=== ITERATION 4294967295 ===`, a summary header",
        "stored quoted (`> === ITERATION 8 ===`); the current iteration stays 7, the next is 8",
    )
}

/// `startIteration()` after iteration 4,294,967,295 (item 9).
pub fn the_last_iteration_number_is_refused_not_wrapped() -> Row {
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
    row(
        "`startIteration()` after `=== ITERATION 4294967295 ===`",
        "`storage_corrupt` instead of wrapping to 0; the log unchanged",
    )
}
