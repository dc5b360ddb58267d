//! Every write a compaction, a rollback or a recovery makes happens while the store lock is
//! held (issue #13: two tabs lost and doubled entries because only the lease was shared).
mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use common::*;
use context_compactor::core::events::RecordingSink;
use context_compactor::core::offline::OfflineProvider;
use context_compactor::core::provider::{run_ready, LocalBoxFuture};
use context_compactor::core::settings::Trigger;
use context_compactor::core::store_lock::{LockHeld, StoreLock};
use context_compactor::core::{
    Compactor, ErrorCode, KeyValueStore, LogStore, ManualClock, MemoryStore, StorageError,
    StorageKeys,
};

/// Whether the lock is held, and every write made while it was not.
#[derive(Clone, Default)]
struct Watch {
    held: Rc<Cell<bool>>,
    acquired: Rc<Cell<usize>>,
    refuse: Rc<Cell<bool>>,
    unguarded: Rc<RefCell<Vec<String>>>,
}

/// A store that records the keys written without the lock. The lease's renewal is a write of
/// the owner's own key that no other writer changes, so it needs no lock.
#[derive(Clone)]
struct WatchedStore {
    inner: MemoryStore,
    watch: Watch,
}

impl WatchedStore {
    fn note(&self, key: &str) {
        if !self.watch.held.get() && !key.ends_with("compaction_lock") {
            self.watch.unguarded.borrow_mut().push(key.to_owned());
        }
    }
}

impl KeyValueStore for WatchedStore {
    fn get(&self, key: &str) -> Result<Option<String>, StorageError> {
        self.inner.get(key)
    }
    fn set(&self, key: &str, value: &str) -> Result<(), StorageError> {
        self.note(key);
        self.inner.set(key, value)
    }
    fn remove(&self, key: &str) -> Result<(), StorageError> {
        self.note(key);
        self.inner.remove(key)
    }
    fn keys(&self) -> Result<Vec<String>, StorageError> {
        self.inner.keys()
    }
}

/// A lock the core must never take twice at once (it does not nest its own holds).
struct FlagLock(Watch);

impl StoreLock for FlagLock {
    fn acquire(&self) -> LocalBoxFuture<'static, Result<LockHeld, StorageError>> {
        let watch = self.0.clone();
        Box::pin(async move {
            if watch.refuse.get() {
                return Err(StorageError::Unavailable {
                    reason: "the lock was refused".into(),
                });
            }
            assert!(!watch.held.get(), "the core took the store lock twice");
            watch.held.set(true);
            watch.acquired.set(watch.acquired.get() + 1);
            let held = watch.held.clone();
            Ok(LockHeld::new(move || held.set(false)))
        })
    }
}

struct Locked {
    memory: MemoryStore,
    watch: Watch,
    compactor: Compactor<WatchedStore, ManualClock>,
}

/// A compactor over a session of `iterations` iterations, its store watched.
fn locked(memory: MemoryStore, iterations: u32) -> Locked {
    let clock = ManualClock::new(NOV_22_2026);
    grow_session(&logs_over(&memory, &clock), &clock, iterations, 5);
    let watch = Watch::default();
    let store = WatchedStore {
        inner: memory.clone(),
        watch: watch.clone(),
    };
    let logs = Rc::new(RefCell::new(LogStore::new(
        store,
        clock.clone(),
        StorageKeys::default(),
        3,
    )));
    let compactor = Compactor::new(
        logs,
        Box::new(OfflineProvider),
        Box::new(InstantTimer::new(&clock)),
        Box::new(RecordingSink::default()),
        small_window(),
    )
    .unwrap()
    .with_lock(Box::new(FlagLock(watch.clone())));
    Locked {
        memory,
        watch,
        compactor,
    }
}

#[test]
fn a_compaction_writes_only_under_the_lock_and_gives_it_back() {
    let rig = locked(MemoryStore::default(), 8);
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    assert!(rig.memory.get(&result.archive_key).unwrap().is_some());
    assert_eq!(*rig.watch.unguarded.borrow(), Vec::<String>::new());
    assert!(!rig.watch.held.get(), "the lock is released");
    // Once for the lease, once for the archive and the swap, once to give the lease back.
    assert_eq!(rig.watch.acquired.get(), 3);
}

#[test]
fn a_failed_compaction_records_it_under_the_lock() {
    let rig = locked(MemoryStore::default(), 1);
    let err = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotAllowed);
    let rig = locked(MemoryStore::default(), 8);
    rig.memory
        .set("gdrs_compaction_journal", "{not json")
        .unwrap();
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
    assert!(rig.memory.keys().unwrap().iter().all(|k| !k.contains("archived")));
    assert!(!rig.compactor.busy());
    // With the lock back, the next compaction runs.
    rig.watch.refuse.set(false);
    assert!(run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .is_ok());
}
