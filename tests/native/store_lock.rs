//! Every write a compaction, a rollback or a recovery makes happens while the store lock is
//! held (issue #13: two tabs lost and doubled entries because only the lease was shared).
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod common;

use common::holds_an_archive;
use common::locked::locked;
use context_compactor::core::error::ErrorCode;
use context_compactor::core::model::settings::Trigger;
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::store::journal::Recovered;

#[test]
fn a_compaction_writes_only_under_the_lock_and_gives_it_back() {
    let rig = locked(MemoryStore::default(), 8);
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    assert!(rig.memory.get(&result.archive_key).unwrap().is_some());
    assert_eq!(*rig.watch.unguarded.borrow(), Vec::<String>::new());
    assert!(!rig.watch.held.get(), "the lock is released");
    // Once for the lease, once for the archive, the swap and giving the lease back (each
    // hold is a Web Lock and an IndexedDB transaction in the browser: it was three).
    assert_eq!(rig.watch.acquired.get(), 2);
}

#[test]
fn a_failed_compaction_records_it_under_the_lock() {
    let rig = locked(MemoryStore::default(), 1);
    let err = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotAllowed);
    // A refusal holds the lock once, for the lease it takes and gives back.
    assert_eq!(rig.watch.acquired.get(), 1);
    assert!(!rig.watch.held.get());
    let rig = locked(MemoryStore::default(), 8);
    rig.memory.set("gdrs_reasoning_log", "{not json").unwrap();
    let err = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::StorageCorrupt);
    assert!(rig.memory.get("gdrs_compaction_metrics").unwrap().is_some());
    assert_eq!(*rig.watch.unguarded.borrow(), Vec::<String>::new());
    assert!(!rig.watch.held.get());
}

#[test]
fn rollback_and_recovery_write_only_under_the_lock() {
    let rig = locked(MemoryStore::default(), 8);
    let before = rig.memory.get("gdrs_reasoning_log").unwrap();
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    run_ready(rig.compactor.rollback(&result.archive_key))
        .unwrap()
        .unwrap();
    assert_eq!(rig.memory.get("gdrs_reasoning_log").unwrap(), before);

    // A journal a closed tab left after its archive write is undone under the lock.
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    let archive = rig.memory.get(&result.archive_key).unwrap().unwrap();
    let restored = locked(MemoryStore::default(), 8);
    restored.memory.set(&result.archive_key, &archive).unwrap();
    restored
        .memory
        .set(
            "gdrs_compaction_journal",
            &format!(
                "{{\"stage\":\"archiving\",\"archiveKey\":\"{}\"}}",
                result.archive_key
            ),
        )
        .unwrap();
    let recovered = run_ready(restored.compactor.recover()).unwrap().unwrap();
    assert!(recovered.is_some());
    assert_eq!(restored.memory.get("gdrs_reasoning_log").unwrap(), before);
    assert_eq!(*rig.watch.unguarded.borrow(), Vec::<String>::new());
    assert_eq!(*restored.watch.unguarded.borrow(), Vec::<String>::new());
    assert!(!rig.watch.held.get() && !restored.watch.held.get());
}

#[test]
fn a_refused_lock_fails_the_compaction_before_anything_changes() {
    let rig = locked(MemoryStore::default(), 8);
    let before: Vec<_> = ["gdrs_reasoning_log", "gdrs_execution_log"]
        .map(|key| rig.memory.get(key).unwrap())
        .into();
    rig.watch.refuse.set(true);
    let err = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::StorageUnavailable);
    let after: Vec<_> = ["gdrs_reasoning_log", "gdrs_execution_log"]
        .map(|key| rig.memory.get(key).unwrap())
        .into();
    assert_eq!(before, after);
    assert!(!holds_an_archive(&rig.memory));
    assert!(!rig.compactor.busy());
    // With the lock back, the next compaction runs.
    rig.watch.refuse.set(false);
    assert!(run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .is_ok());
}

/// Every `new Compactor` in a page recovers; with no journal to settle (nearly always) it takes
/// no lock: it took one, and the page's first compaction queued behind it.
#[test]
fn recovery_without_a_journal_takes_no_lock() {
    let rig = locked(MemoryStore::default(), 8);
    assert_eq!(run_ready(rig.compactor.recover()).unwrap().unwrap(), None);
    assert_eq!(rig.watch.acquired.get(), 0);
    rig.memory
        .set("gdrs_compaction_journal", "{not json")
        .unwrap();
    let recovered = run_ready(rig.compactor.recover()).unwrap().unwrap();
    assert!(
        matches!(recovered, Some(Recovered::SetAside(_))),
        "{recovered:?}"
    );
    assert_eq!(rig.watch.acquired.get(), 1);
    assert!(!rig.watch.held.get());
}
