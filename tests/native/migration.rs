//! Archives a localStorage backend left move into the archive database on first open, byte for
//! byte, each read back before its localStorage key goes; a migration interrupted at any step
//! resumes on the next open with nothing lost or doubled.
#![cfg(not(target_arch = "wasm32"))]
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::cell::Cell;
use std::rc::Rc;

use common::*;
use context_compactor::core::error::StorageError;
use context_compactor::core::model::settings::Trigger;
use context_compactor::core::ports::archive_store::{ArchiveStore, MemoryArchiveStore};
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::events::RecordingSink;
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::providers::offline::OfflineProvider;
use context_compactor::core::run::compactor::Compactor;

/// A session with three compactions whose archives are in localStorage; the archives' texts.
fn local_archives() -> (MemoryStore, ManualClock, Vec<(String, String)>) {
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let rig = Rig::offline(memory.clone(), clock.clone(), small_window());
    for seed in 1..=3 {
        grow_session(&rig.logs, &clock, 5, seed);
        run_ready(rig.compactor.compact(Trigger::User))
            .unwrap()
            .unwrap();
        clock.advance(1_000.0);
    }
    (memory.clone(), clock, archives_in(&memory))
}

/// The archive keys and texts `store` holds, in key order.
fn archives_in(store: &MemoryStore) -> Vec<(String, String)> {
    let mut keys: Vec<String> = store
        .keys()
        .unwrap()
        .into_iter()
        .filter(|key| key.starts_with("gdrs_archived_logs_"))
        .collect();
    keys.sort();
    keys.into_iter()
        .map(|key| {
            let text = store.get(&key).unwrap().unwrap();
            (key, text)
        })
        .collect()
}

/// An archive database whose commits and read-backs fail from the `stop`-th on (a tab closed
/// mid-migration).
fn interrupted(stop: usize) -> MemoryArchiveStore {
    let db = MemoryArchiveStore::new();
    let calls = Cell::new(0);
    db.fail_when(move || {
        let call = calls.get();
        calls.set(call + 1);
        match call >= stop {
            true => Err(StorageError::ArchiveDatabase {
                reason: "the tab was closed".into(),
                quota: false,
            }),
            false => Ok(()),
        }
    });
    db
}

/// A compactor over `store` (the tab's localStorage) with its archives in `db`.
fn opened(
    store: &FaultyStore,
    clock: &ManualClock,
    db: Rc<dyn ArchiveStore>,
) -> Compactor<FaultyStore, ManualClock> {
    let logs = Rc::new(std::cell::RefCell::new(
        context_compactor::core::store::log_store::LogStore::new(
            store.clone(),
            clock.clone(),
            context_compactor::core::store::keys::StorageKeys::default(),
            3,
        ),
    ));
    shelved(
        Compactor::new(
            logs,
            Box::new(OfflineProvider),
            Box::new(InstantTimer::new(clock)),
            Box::new(RecordingSink::default()),
            small_window(),
        )
        .unwrap(),
        |shelf| shelf.with_archive_store(db),
    )
}

/// Every archive is in the database exactly as it was in localStorage, and only there.
fn assert_moved(
    case: &str,
    memory: &MemoryStore,
    db: &MemoryArchiveStore,
    before: &[(String, String)],
) {
    assert!(
        archives_in(memory).is_empty(),
        "{case}: localStorage keeps no archive"
    );
    assert_eq!(archives_in(db.committed()), before, "{case}: byte for byte");
}

#[test]
fn first_open_moves_every_archive_and_lists_them() {
    let (memory, clock, before) = local_archives();
    assert_eq!(before.len(), 3);
    let db = MemoryArchiveStore::new();
    let compactor = opened(
        &FaultyStore::over(memory.clone()),
        &clock,
        Rc::new(db.clone()),
    );
    let listed = archives_now(&compactor).with(|a| a.list()).unwrap();
    assert_eq!(listed.len(), 3);
    assert_moved("first open", &memory, &db, &before);
    // Recall reads the moved archives: iteration 1 was compacted first.
    assert!(archives_now(&compactor)
        .with(|a| a.recall(1))
        .unwrap()
        .is_some());
    // A second open finds nothing to move and takes no lock for it.
    let again = opened(
        &FaultyStore::over(memory.clone()),
        &clock,
        Rc::new(db.other_tab()),
    );
    assert_eq!(archives_now(&again).with(|a| a.list()).unwrap().len(), 3);
    assert_moved("second open", &memory, &db, &before);
}

#[test]
fn an_interrupted_migration_resumes_with_nothing_lost_or_doubled() {
    let (_, _, reference) = local_archives();
    // Each archive takes a commit and a read-back: stop before every one of them.
    for stop in 0..2 * reference.len() {
        let (memory, clock, before) = local_archives();
        let db = interrupted(stop);
        let tab = opened(
            &FaultyStore::over(memory.clone()),
            &clock,
            Rc::new(db.clone()),
        );
        let err = run_ready(tab.shelf().refreshed(true)).unwrap().unwrap_err();
        assert!(err.to_string().contains("the tab was closed"), "{err}");
        // Nothing is lost: every archive is in localStorage or committed to the database.
        for (key, text) in &before {
            let held = memory
                .get(key)
                .unwrap()
                .or(db.committed().get(key).unwrap());
            assert_eq!(held.as_ref(), Some(text), "stop {stop}: {key} kept");
        }
        let reopened = opened(
            &FaultyStore::over(memory.clone()),
            &clock,
            Rc::new(db.other_tab()),
        );
        assert_eq!(
            archives_now(&reopened).with(|a| a.list()).unwrap().len(),
            3,
            "stop {stop}"
        );
        assert_moved(
            &format!("database stopped at call {stop}"),
            &memory,
            &db,
            &before,
        );
    }
    // A tab closed after each removal from localStorage.
    for removed in 0..reference.len() {
        let (memory, clock, before) = local_archives();
        let db = MemoryArchiveStore::new();
        let store = FaultyStore::over(memory.clone());
        store.crash_after(removed);
        let tab = opened(&store, &clock, Rc::new(db.clone()));
        assert!(run_ready(tab.shelf().refreshed(true)).unwrap().is_err());
        let reopened = opened(
            &FaultyStore::over(memory.clone()),
            &clock,
            Rc::new(db.other_tab()),
        );
        assert_eq!(archives_now(&reopened).with(|a| a.list()).unwrap().len(), 3);
        assert_moved(
            &format!("closed after {removed} removals"),
            &memory,
            &db,
            &before,
        );
    }
}

#[test]
fn a_compaction_after_the_move_archives_in_the_database_only() {
    let (memory, clock, before) = local_archives();
    let db = MemoryArchiveStore::new();
    let compactor = opened(
        &FaultyStore::over(memory.clone()),
        &clock,
        Rc::new(db.clone()),
    );
    grow_session(&logs_over(&memory, &clock), &clock, 5, 9);
    let result = run_ready(compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    assert!(archives_in(&memory).is_empty());
    assert_eq!(archives_in(db.committed()).len(), before.len() + 1);
    assert!(db.committed().get(&result.archive_key).unwrap().is_some());
    // Rollback reads it from the database and removes it there.
    run_ready(compactor.rollback(&result.archive_key))
        .unwrap()
        .unwrap();
    assert!(db.committed().get(&result.archive_key).unwrap().is_none());
    assert_moved("after a rollback", &memory, &db, &before);
}
