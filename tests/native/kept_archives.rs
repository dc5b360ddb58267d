//! A page that opens over archives kept in an archive store (IndexedDB in the browser): its
//! compaction reads no kept archive's text but those of the archives the live summaries name
//! (whose facts it carries); the digests eviction needs are read while the page runs no
//! compaction, and a compaction after them removes what expired (#68).
#![cfg(not(target_arch = "wasm32"))]
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::rc::Rc;

use common::*;
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::archive_store::{ArchiveStore, MemoryArchiveStore};
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::events::RecordingSink;
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::providers::offline::OfflineProvider;
use context_compactor::core::run::compactor::Compactor;

const DAY_MS: f64 = 86_400_000.0;

/// A page's compactor over the logs in `memory`, its archives in `database` (this tab's copy).
fn page(
    memory: &MemoryStore,
    clock: &ManualClock,
    database: &MemoryArchiveStore,
) -> Compactor<MemoryStore, ManualClock> {
    let settings = CompactorSettings {
        archive_expiry_days: 2.0,
        ..small_window()
    };
    let compactor = Compactor::new(
        logs_over(memory, clock),
        Box::new(OfflineProvider),
        Box::new(InstantTimer::new(clock)),
        Box::new(RecordingSink::default()),
        settings,
    )
    .unwrap();
    let database = Rc::new(database.clone()) as Rc<dyn ArchiveStore>;
    shelved(compactor, |shelf| shelf.with_archive_store(database))
}

/// Logs in `memory` with the archives of five compactions a day apart kept in the returned
/// store, with their keys (archives expire after two days: the page that wrote them removed
/// the first three; the fourth has expired when the next page opens).
fn kept(memory: &MemoryStore, clock: &ManualClock) -> (MemoryArchiveStore, Vec<String>) {
    let database = MemoryArchiveStore::new();
    let earlier = page(memory, clock, &database);
    let mut keys = Vec::new();
    for k in 0..5u64 {
        grow_session(earlier.logs(), clock, 8, k + 1);
        let result = run_ready(earlier.compact(Trigger::ContextLimitError))
            .unwrap()
            .unwrap_or_else(|err| panic!("compaction {}: {err}", k + 1));
        keys.push(result.archive_key);
        // As the browser layer does after every compaction.
        run_ready(earlier.digest_archives_while_idle())
            .unwrap()
            .unwrap();
        clock.advance(DAY_MS);
    }
    (database, keys)
}

/// The archives the store holds of `keys`.
fn stored(database: &MemoryArchiveStore, keys: &[String]) -> Vec<String> {
    let stored = database.committed().keys().unwrap();
    keys.iter()
        .filter(|k| stored.contains(k))
        .cloned()
        .collect()
}

/// Opens a page over the logs of `memory` and the kept archives (a copy of its own, as a new
/// tab's), recovers as `new Compactor` does, runs `before` and compacts once; the archives
/// whose texts the page's copy fetched from the store.
fn first_compaction(
    memory: &MemoryStore,
    clock: &ManualClock,
    database: &MemoryArchiveStore,
    before: impl FnOnce(&Compactor<MemoryStore, ManualClock>),
) -> Vec<String> {
    let tab = database.other_tab();
    let opened = page(memory, clock, &tab);
    run_ready(opened.recover()).unwrap().unwrap();
    before(&opened);
    grow_session(opened.logs(), clock, 8, 99);
    run_ready(opened.compact(Trigger::ContextLimitError))
        .unwrap()
        .unwrap();
    tab.keys_fetched()
}

#[test]
fn a_pages_first_compaction_reads_no_kept_archive_but_the_one_its_summary_names() {
    let (memory, clock) = (MemoryStore::new(), ManualClock::new(NOV_22_2026));
    let (database, keys) = kept(&memory, &clock);
    // The live summary names the newest archive: its facts are carried, so it is read.
    let fetched = first_compaction(&memory, &clock, &database, |_| {});
    assert_eq!(fetched, keys[4..], "fetched by recovery and compaction");
    // Their digests were not read: what expired waits for them.
    assert_eq!(stored(&database, &keys), keys[3..]);
}

#[test]
fn the_kept_archives_digests_are_read_while_idle_and_the_next_compaction_removes_the_expired() {
    let (memory, clock) = (MemoryStore::new(), ManualClock::new(NOV_22_2026));
    let (database, keys) = kept(&memory, &clock);
    let fetched = first_compaction(&memory, &clock, &database, |opened| {
        run_ready(opened.digest_archives_while_idle())
            .unwrap()
            .unwrap();
    });
    // Read from the store itself: the copy the compaction reads holds no more texts for them.
    assert_eq!(fetched, keys[4..]);
    assert_eq!(stored(&database, &keys), keys[4..]);
}

#[test]
fn the_idle_pass_reads_no_digest_while_a_compaction_runs_in_the_page() {
    let (memory, clock) = (MemoryStore::new(), ManualClock::new(NOV_22_2026));
    let (database, keys) = kept(&memory, &clock);
    first_compaction(&memory, &clock, &database, |opened| {
        let running = opened.shelf().page().claim().unwrap();
        run_ready(opened.digest_archives_while_idle())
            .unwrap()
            .unwrap();
        drop(running);
    });
    assert_eq!(stored(&database, &keys), keys[3..]);
    // The next pass, with the page idle, reads them.
    first_compaction(&memory, &clock, &database, |opened| {
        run_ready(opened.digest_archives_while_idle())
            .unwrap()
            .unwrap();
    });
    assert_eq!(stored(&database, &keys), keys[4..]);
}
