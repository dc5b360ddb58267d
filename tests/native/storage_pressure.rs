//! Acting before the quota (#54): when the origin's storage is at least 80% full as a
//! compaction begins, the expired archives are purged first, the app hears `storage_pressure`
//! with the figures after, no unexpired archive goes, and that compaction writes no summary
//! cache; below 80%, or where the browser says nothing, the compaction runs as before.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::rc::Rc;

use common::*;
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::archive_store::{
    ArchiveStore, MemoryArchiveStore, StorageEstimate,
};
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::events::{CompactionEvent, RecordingSink};
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::run::compactor::Compactor;
use context_compactor::core::store::keys::StorageKeys;

const DAY_MS: f64 = 86_400_000.0;

/// A compactor over an archive store whose archives expire after a day, an archive that has
/// expired (written 1.2 days ago) beside one that has not (0.7 days ago), and more iterations.
fn two_archives() -> Session {
    let settings = CompactorSettings {
        archive_expiry_days: 1.0,
        ..small_window()
    };
    let rig = Rig::with(
        MemoryStore::new(),
        vec![Answer::Text(valid_summary("the totals per region")); 4],
        settings,
    );
    let database = Rc::new(MemoryArchiveStore::new());
    let compactor = shelved(rig.compactor, |shelf| {
        shelf.with_archive_store(Rc::clone(&database) as Rc<dyn ArchiveStore>)
    });
    // `days` later, `iterations` more, then a compaction: its archive's key.
    let compacted_after = |days: f64, iterations: u32, seed: u64| {
        rig.clock.advance(days * DAY_MS);
        grow_session(&rig.logs, &rig.clock, iterations, seed);
        run_ready(compactor.compact(Trigger::User))
            .unwrap()
            .unwrap()
            .archive_key
    };
    let old = compacted_after(0.0, 12, 42);
    let kept = compacted_after(0.5, 8, 43);
    // The first has expired now, the second not.
    rig.clock.advance(0.7 * DAY_MS);
    grow_session(&rig.logs, &rig.clock, 8, 44);
    Session {
        events: rig.events,
        memory: rig.memory,
        compactor,
        database,
        old,
        kept,
    }
}

/// What a test reads of [`two_archives`]'s session.
struct Session {
    events: RecordingSink,
    memory: MemoryStore,
    compactor: Compactor<MemoryStore, ManualClock>,
    database: Rc<MemoryArchiveStore>,
    old: String,
    kept: String,
}

fn pressure_events(rig: &Session) -> Vec<CompactionEvent> {
    rig.events
        .events()
        .into_iter()
        .filter(|e| matches!(e, CompactionEvent::StoragePressure { .. }))
        .collect()
}

fn cache(rig: &Session) -> Option<String> {
    rig.memory
        .get(&StorageKeys::default().summary_cache())
        .unwrap()
}

#[test]
fn at_eighty_percent_the_expired_archives_go_first_the_app_is_told_and_no_cache_is_written() {
    let rig = two_archives();
    let (compactor, database, old, kept) = (&rig.compactor, &rig.database, &rig.old, &rig.kept);
    let cached_before = cache(&rig);
    assert!(
        cached_before.is_some(),
        "the earlier compactions cached their answers"
    );
    database.set_estimate(Some(StorageEstimate {
        usage: 850.0,
        quota: 1000.0,
    }));
    let result = run_ready(compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    let events = pressure_events(&rig);
    assert_eq!(events.len(), 1, "{events:?}");
    let CompactionEvent::StoragePressure {
        usage,
        quota,
        share,
        purged,
    } = &events[0]
    else {
        unreachable!()
    };
    assert_eq!((*usage, *quota, *share), (850.0, 1000.0, 0.85));
    assert_eq!(purged, &vec![old.to_owned()]);
    let listed: Vec<String> = archives_now(compactor)
        .with(|a| a.list())
        .unwrap()
        .into_iter()
        .map(|a| a.key)
        .collect();
    assert!(!listed.contains(old), "the expired archive went");
    assert!(listed.contains(kept), "the unexpired one stays");
    assert!(listed.contains(&result.archive_key));
    assert_eq!(
        cache(&rig),
        cached_before,
        "no summary cache written under pressure"
    );
    // The event is a DOM event of its own with the fields the .d.ts names.
    assert_eq!(events[0].name(), "storage_pressure");
}

#[test]
fn below_eighty_percent_or_with_no_estimate_the_app_is_not_told_and_the_cache_is_written() {
    for estimate in [
        Some(StorageEstimate {
            usage: 790.0,
            quota: 1000.0,
        }),
        None,
    ] {
        let rig = two_archives();
        let (compactor, database) = (&rig.compactor, &rig.database);
        let cached_before = cache(&rig);
        database.set_estimate(estimate);
        run_ready(compactor.compact(Trigger::User))
            .unwrap()
            .unwrap();
        assert!(pressure_events(&rig).is_empty(), "{estimate:?}");
        assert_ne!(
            cache(&rig),
            cached_before,
            "{estimate:?}: the answer is cached"
        );
    }
}
