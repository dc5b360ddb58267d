//! A store that notes every write made without the store lock, and a lock the core must
//! not take twice at once: the proof that a compaction, a rollback and a recovery write only
//! under the lock.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::shelved;
use context_compactor::core::error::StorageError;
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::events::RecordingSink;
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::ports::store_lock::{LockHeld, StoreLock};
use context_compactor::core::ports::timer::LocalBoxFuture;
use context_compactor::core::providers::offline::OfflineProvider;
use context_compactor::core::run::compactor::Compactor;
use context_compactor::core::store::keys::StorageKeys;
use context_compactor::core::store::log_store::LogStore;

use super::{grow_session, logs_over, small_window, InstantTimer, NOV_22_2026};

/// Whether the lock is held, and every write made while it was not.
#[derive(Clone, Default)]
pub struct Watch {
    pub held: Rc<Cell<bool>>,
    pub acquired: Rc<Cell<usize>>,
    pub refuse: Rc<Cell<bool>>,
    pub unguarded: Rc<RefCell<Vec<String>>>,
}

/// A store that records the keys written without the lock. The lease's renewal is a write of
/// the owner's own key that no other writer changes, so it needs no lock.
#[derive(Clone)]
pub struct WatchedStore {
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
pub struct FlagLock(pub Watch);

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

pub struct Locked {
    pub memory: MemoryStore,
    pub watch: Watch,
    pub compactor: Compactor<WatchedStore, ManualClock>,
}

/// A compactor over a session of `iterations` iterations, its store watched.
pub fn locked(memory: MemoryStore, iterations: u32) -> Locked {
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
    let compactor = shelved(
        Compactor::new(
            logs,
            Box::new(OfflineProvider),
            Box::new(InstantTimer::new(&clock)),
            Box::new(RecordingSink::default()),
            small_window(),
        )
        .unwrap(),
        |shelf| shelf.with_lock(Rc::new(FlagLock(watch.clone()))),
    );
    Locked {
        memory,
        watch,
        compactor,
    }
}
