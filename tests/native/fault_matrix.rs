//! The fault matrix: every way a compaction can go wrong, and the proof that afterwards the
//! live logs and the archives together hold every entry that existed, exactly once.
//!
//! The table of cases and outcomes in docs/guarantees.md is generated from this run (and checked
//! against it: rerun with UPDATE_GOLDEN=1 after a change of outcome).
#![cfg(not(target_arch = "wasm32"))]
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use common::census::{assert_nothing_lost, census, identities};
use common::*;
use context_compactor::core::error::ProviderError;
use context_compactor::core::error::StorageError;
use context_compactor::core::log::iteration::parse_summary_header;
use context_compactor::core::model::clearing::Rung;
use context_compactor::core::model::outcome::CompactionResult;
use context_compactor::core::model::set_aside::SetAside;
use context_compactor::core::model::settings::{
    CompactorSettings, LinePolicy, MissingFacts, Trigger,
};
use context_compactor::core::ports::archive_store::{ArchiveStore, MemoryArchiveStore};
use context_compactor::core::ports::cancel::Cancel;
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::events::{CompactionEvent, RecordingSink};
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::providers::offline::OfflineProvider;
use context_compactor::core::providers::port::SummaryProvider;
use context_compactor::core::run::compactor::{Compactor, Started};
use context_compactor::core::store::journal::Recovered;
use context_compactor::core::store::keys::StorageKeys;
use context_compactor::core::store::log_store::LogStore;

type Engine = Compactor<FaultyStore, ManualClock>;

/// The three stored log texts, as they are.
fn stored_logs(memory: &MemoryStore) -> Vec<Option<String>> {
    let keys = StorageKeys::default();
    [keys.reasoning(), keys.execution(), keys.tool_activity()]
        .iter()
        .map(|k| memory.get(k).unwrap())
        .collect()
}

struct Tab {
    logs: Logs2,
    compactor: Engine,
    events: RecordingSink,
    /// The compactor's timer, whose sleeps can run the tab's loop.
    timer: InstantTimer,
}

type Logs2 = Rc<RefCell<LogStore<FaultyStore, ManualClock>>>;

fn tab(
    store: &FaultyStore,
    clock: &ManualClock,
    provider: Box<dyn SummaryProvider>,
    owner: &str,
) -> Tab {
    tab_with(store, clock, provider, owner, small_window())
}

fn tab_with(
    store: &FaultyStore,
    clock: &ManualClock,
    provider: Box<dyn SummaryProvider>,
    owner: &str,
    settings: CompactorSettings,
) -> Tab {
    let logs = Rc::new(RefCell::new(LogStore::new(
        store.clone(),
        clock.clone(),
        StorageKeys::default(),
        3,
    )));
    let events = RecordingSink::default();
    let timer = InstantTimer::new(clock);
    let compactor = shelved(
        Compactor::new(
            logs.clone(),
            provider,
            Box::new(timer.clone()),
            Box::new(events.clone()),
            settings,
        )
        .unwrap(),
        |shelf| shelf.with_owner(owner),
    );
    Tab {
        logs,
        compactor,
        events,
        timer,
    }
}

/// A session of 6 iterations (plus an earlier compaction, so an archive already exists).
fn seeded_store() -> (MemoryStore, ManualClock) {
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let rig = Rig::offline(memory.clone(), clock.clone(), small_window());
    grow_session(&rig.logs, &clock, 5, 1);
    run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    grow_session(&rig.logs, &clock, 4, 2);
    (memory, clock)
}

/// The table rows this run produced.
struct Matrix(RefCell<Vec<(String, String)>>);

impl Matrix {
    fn row(&self, case: &str, outcome: impl Into<String>) {
        self.0.borrow_mut().push((case.to_owned(), outcome.into()));
    }
}

fn outcome_of(
    result: &Result<CompactionResult, context_compactor::core::error::CompactionError>,
) -> String {
    match result {
        Ok(r) => {
            let mut outcome = format!(
                "compacted (iterations 1-{}, {} attempt(s))",
                r.iterations[1], r.attempts
            );
            let (repaired, marked) = (r.coverage.repaired.len(), r.unverified.len());
            if repaired > 0 {
                outcome.push_str(&format!("; {repaired} fact(s) added in the ledger's words"));
            }
            if marked > 0 {
                let items: Vec<&str> = r
                    .unverified
                    .iter()
                    .flat_map(|u| &u.items)
                    .map(String::as_str)
                    .collect();
                outcome.push_str(&format!(
                    "; {marked} line(s) marked `[unverified]`: {}",
                    items.join(", ")
                ));
            }
            outcome
        }
        Err(err) => format!("`{}`, logs unchanged", err.code().as_str()),
    }
}

fn provider_cases(matrix: &Matrix) {
    let http = |status, retry_after_ms| ProviderError::Http {
        status,
        message: "mock".into(),
        retry_after_ms,
        lasting: false,
    };
    let valid = valid_summary("12 regions, grouped by month");
    let invented = valid_summary(
        "The user asked to delete sales_2024.csv (https://files.example/s.csv); 98,765 rows were removed",
    );
    let partial = "### 🎯 OBJECTIVE ACHIEVED\n- only one section, long enough to pass the length rule on its own merits".to_string();
    let cases: Vec<(&str, Vec<Answer>)> = vec![
        ("ok", vec![Answer::Text(valid.clone())]),
        ("missing_sections_once", vec![Answer::Text(partial.clone()), Answer::Text(valid.clone())]),
        ("missing_sections_always", vec![Answer::Text(partial.clone()), Answer::Text(partial.clone())]),
        ("drops_facts_always (default `missingFacts: \"repair\"`: added in the ledger's words)", vec![Answer::Verbatim(valid.clone())]),
        ("invents a figure, a file name and a URL (default `unverified: \"mark\"`)", vec![Answer::Verbatim(invented.clone())]),
        ("refusal", vec![Answer::Text("I cannot help with that request, sorry about that; it is simply not possible for me to do it.".into()); 2]),
        ("empty_candidates / max_tokens (incomplete twice)", vec![Answer::fail(ProviderError::Incomplete("no text".into())); 2]),
        ("prompt_blocked / safety_finish", vec![Answer::fail(ProviderError::Blocked("SAFETY".into()))]),
        ("http_429_retryinfo_once", vec![Answer::fail(http(429, Some(26_000))), Answer::Text(valid.clone())]),
        ("http_500_always", vec![Answer::fail(http(500, None)); 2]),
        ("http_503_once", vec![Answer::fail(http(503, None)), Answer::Text(valid.clone())]),
        ("http_404_model", vec![Answer::fail(http(404, None))]),
        ("http_400_bad_key", vec![Answer::fail(http(400, None))]),
        ("hang (time-out twice)", vec![Answer::Hang, Answer::Hang]),
        ("malformed_json / non_json_502", vec![Answer::fail(http(502, None)); 2]),
        ("network failure twice", vec![Answer::fail(ProviderError::Network("offline".into())); 2]),
    ];
    let strict = CompactorSettings {
        missing_facts: MissingFacts::Fail,
        unverified: LinePolicy::Fail,
        ..small_window()
    };
    let strict_cases: Vec<(&str, Vec<Answer>)> = vec![
        (
            "drops_facts_once (`missingFacts: \"fail\"`: a fact of the ledger missing, then kept)",
            vec![Answer::Verbatim(valid.clone()), Answer::Text(valid.clone())],
        ),
        (
            "drops_facts_always (`missingFacts: \"fail\"`: the retry names it; the error too)",
            vec![
                Answer::Verbatim(valid.clone()),
                Answer::Verbatim(valid.clone()),
            ],
        ),
        (
            "invents a figure twice (`unverified: \"fail\"`)",
            vec![
                Answer::Text(invented.clone()),
                Answer::Text(invented.clone()),
            ],
        ),
    ];
    let cases = cases
        .into_iter()
        .map(|(case, answers)| (case, answers, small_window()))
        .chain(
            strict_cases
                .into_iter()
                .map(|(case, answers)| (case, answers, strict.clone())),
        );
    for (case, answers, settings) in cases {
        let (memory, clock) = seeded_store();
        let before = census(&memory);
        let store = FaultyStore::over(memory.clone());
        let tab = tab_with(
            &store,
            &clock,
            Box::new(ScriptedProvider::new(answers)),
            "a",
            settings,
        );
        let result = run_ready(tab.compactor.compact(Trigger::User)).unwrap();
        assert_nothing_lost(case, &before, &memory);
        matrix.row(&format!("provider: {case}"), outcome_of(&result));
    }
}

fn quota_cases(matrix: &Matrix) {
    // At the archive write, with nothing that may be purged.
    let (memory, clock) = seeded_store();
    let before = census(&memory);
    let store = FaultyStore::over(memory.clone());
    store.quota_on("gdrs_archived_logs_");
    let t = tab(&store, &clock, Box::new(OfflineProvider), "a");
    let logs_before = memory.get("gdrs_reasoning_log").unwrap();
    let result = run_ready(t.compactor.compact(Trigger::User)).unwrap();
    assert_eq!(
        result.as_ref().unwrap_err().code().as_str(),
        "storage_quota"
    );
    assert_eq!(memory.get("gdrs_reasoning_log").unwrap(), logs_before);
    assert!(memory.get("gdrs_compaction_journal").unwrap().is_none());
    assert_nothing_lost("quota at archive write", &before, &memory);
    matrix.row("quota full at the archive write", outcome_of(&result));

    // At the archive write, room made by purging an expired archive.
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let rig = Rig::offline(
        memory.clone(),
        clock.clone(),
        CompactorSettings {
            archive_expiry_days: 1.0,
            ..small_window()
        },
    );
    grow_session(&rig.logs, &clock, 5, 1);
    run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    grow_session(&rig.logs, &clock, 4, 2);
    clock.advance(2.0 * 86_400_000.0);
    // Measure the new archive on a copy, then give the real store one unit too few for it.
    let copy = MemoryStore::new();
    for key in memory.keys().unwrap() {
        copy.set(&key, &memory.get(&key).unwrap().unwrap()).unwrap();
    }
    let archives_before: Vec<String> = copy.keys().unwrap();
    let probe = tab(
        &FaultyStore::over(copy.clone()),
        &clock,
        Box::new(OfflineProvider),
        "probe",
    );
    let probe_result = run_ready(probe.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    assert!(!archives_before.contains(&probe_result.archive_key));
    let new_archive_units = probe_result.archive_key.len()
        + copy
            .get(&probe_result.archive_key)
            .unwrap()
            .unwrap()
            .encode_utf16()
            .count();
    let tight = MemoryStore::with_quota(memory.used_units() + new_archive_units - 1);
    for key in memory.keys().unwrap() {
        tight
            .set(&key, &memory.get(&key).unwrap().unwrap())
            .unwrap();
    }
    let live_before = {
        let logs = LogStore::new(
            tight.clone(),
            ManualClock::new(0.0),
            StorageKeys::default(),
            1,
        );
        identities(&logs.snapshot().unwrap())
    };
    let store = FaultyStore::over(tight.clone());
    let t = tab(&store, &clock, Box::new(OfflineProvider), "a");
    let result = run_ready(t.compactor.compact(Trigger::User)).unwrap();
    assert!(result.is_ok(), "{result:?}");
    let after = census(&tight);
    for id in &live_before {
        assert_eq!(after.get(id), Some(&1), "live entry kept exactly once");
    }
    matrix.row(
        "quota full at the archive write; an expired archive is purged to make room",
        format!("{} (the expired archive is gone)", outcome_of(&result)),
    );

    // At a log write.
    for key in ["gdrs_reasoning_log", "gdrs_execution_log"] {
        let (memory, clock) = seeded_store();
        let before = census(&memory);
        let raw_before = stored_logs(&memory);
        let store = FaultyStore::over(memory.clone());
        store.quota_on(key);
        let t = tab(&store, &clock, Box::new(OfflineProvider), "a");
        let result = run_ready(t.compactor.compact(Trigger::User)).unwrap();
        assert_eq!(
            result.as_ref().unwrap_err().code().as_str(),
            "storage_quota"
        );
        let raw_after = stored_logs(&memory);
        assert_eq!(raw_after, raw_before, "byte-for-byte as before");
        assert_nothing_lost("quota at log write", &before, &memory);
        matrix.row(
            &format!("quota full at the write of `{key}`"),
            outcome_of(&result),
        );
    }
}

fn crash_cases(matrix: &Matrix) {
    // Count the writes of one whole compaction, then stop after each of them in turn.
    let (memory, clock) = seeded_store();
    let store = FaultyStore::over(memory.clone());
    let t = tab(&store, &clock, Box::new(OfflineProvider), "a");
    run_ready(t.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    let total_writes = store.writes();
    let mut tally = (0, 0);
    for stop_after in 0..total_writes {
        let (memory, clock) = seeded_store();
        let before = census(&memory);
        let offline =
            |store: &FaultyStore, owner: &str| tab(store, &clock, Box::new(OfflineProvider), owner);
        let closed = Closed {
            memory: &memory,
            clock: &clock,
            stop_after,
            trigger: Trigger::User,
        };
        let (reloaded, recovered) = closed.then_reloaded(offline, offline, &mut tally);
        assert_nothing_lost(&format!("stop after write {stop_after}"), &before, &memory);
        let reasoning = reloaded.logs.borrow().reasoning_log().unwrap();
        let summaries = reasoning
            .iter()
            .filter(|r| parse_summary_header(r).is_some())
            .count();
        assert_eq!(
            summaries, 1,
            "stop after {stop_after}: exactly one summary entry live"
        );
        if recovered.is_some() {
            let names = reloaded.events.names();
            assert!(
                names == ["compaction_complete"] || names == ["compaction_rolled_back"],
                "{names:?}"
            );
        }
    }
    matrix.row(
        &format!("tab closed after each of the {total_writes} write steps, then reloaded"),
        format!("recovered from the journal: {} finished (`compaction_complete`), {} undone (`compaction_rolled_back`), the rest needed nothing", tally.0, tally.1),
    );
}

/// A tab closed after each write of a compaction, its journal then damaged (half its text), and
/// a reloaded tab that compacts: the journal is set aside and nothing is lost. An entry may be
/// held twice (live and in the archive of the compaction stopped half way, which nothing
/// rolls back without its journal), never not at all.
fn corrupt_journal_after_crash_cases(matrix: &Matrix) {
    let mut set_aside = 0;
    for stop_after in 0..200 {
        let (memory, clock) = seeded_store();
        let before = census(&memory);
        let store = FaultyStore::over(memory.clone());
        store.crash_after(stop_after);
        let closed = tab(&store, &clock, Box::new(OfflineProvider), "closed-tab");
        let finished = run_ready(closed.compactor.compact(Trigger::User))
            .unwrap()
            .is_ok();
        if finished {
            break;
        }
        let journal = "gdrs_compaction_journal";
        if let Some(text) = memory.get(journal).unwrap() {
            memory.set(journal, &text[..text.len() / 2]).unwrap();
            set_aside += 1;
        }
        clock.advance(10.0 * 60_000.0);
        let reloaded = tab(
            &FaultyStore::over(memory.clone()),
            &clock,
            Box::new(OfflineProvider),
            "new-tab",
        );
        let result = run_ready(reloaded.compactor.compact(Trigger::User)).unwrap();
        assert!(result.is_ok(), "stop after {stop_after}: {result:?}");
        assert_eq!(memory.get(journal).unwrap(), None);
        let after = census(&memory);
        for id in before.keys() {
            assert!(
                after.get(id).is_some_and(|&n| n >= 1),
                "stop after {stop_after}: entry {id:.80} lost"
            );
        }
    }
    assert!(set_aside > 0);
    matrix.row(
        "tab closed after each write step, its journal then damaged, then reloaded",
        format!("{set_aside} journals set aside (`key_set_aside`) and the next compaction runs; no entry lost (one the half-done compaction archived may be held twice)"),
    );
}

/// The loop's compaction in the background, the tab closed after each of its writes while the
/// loop goes on (iteration 10 runs as it starts; while the model works the loop finishes it and
/// starts 11, which it finishes at the second poll of the wait for the boundary), then
/// reloaded: every entry held exactly once, the loop's own that landed included.
fn background_crash_cases(matrix: &Matrix) {
    let mut tally = (0, 0);
    for stop_after in 0..200 {
        let (memory, clock) = seeded_store();
        let store = FaultyStore::over(memory.clone());
        let provider = ScriptedProvider::new(vec![Answer::Text(valid_summary("background"))]);
        let closing = tab(&store, &clock, Box::new(provider.clone()), "closed-tab");
        let logs = closing.logs.clone();
        logs.borrow_mut().start_iteration().unwrap();
        logs.borrow_mut()
            .append_reasoning("loop: iteration 10 begins")
            .unwrap();
        let before = census(&memory);
        // The loop's reasoning that landed (a closed tab's writes fail).
        let landed = Rc::new(RefCell::new(Vec::<String>::new()));
        let write = {
            let (logs, landed) = (logs.clone(), landed.clone());
            move |text: &str, finish: bool, start: bool| {
                let mut logs = logs.borrow_mut();
                if logs.append_reasoning(text).is_ok() {
                    landed.borrow_mut().push(text.to_owned());
                }
                if finish {
                    logs.finish_iteration();
                }
                if start {
                    if let Ok(n) = logs.start_iteration() {
                        landed.borrow_mut().push(format!("=== ITERATION {n} ==="));
                    }
                }
            }
        };
        let during_call = write.clone();
        *provider.on_call.borrow_mut() = Some(Box::new(move || {
            during_call("loop: iteration 10 ends", true, true);
        }));
        *closing.timer.on_sleep.borrow_mut() = Some(Box::new(move |count| {
            if count == 2 {
                write("loop: iteration 11 ends", true, false);
            }
        }));
        store.crash_after(stop_after);
        let compactor = &closing.compactor;
        let claim = compactor.claim(Trigger::Auto, Cancel::default()).unwrap();
        let claim = claim.in_background(Started::new(|_| {}));
        let finished = run_ready(compactor.compact_claimed(claim)).unwrap().is_ok();
        clock.advance(10.0 * 60_000.0);
        let reload = FaultyStore::over(memory.clone());
        let reloaded = tab(&reload, &clock, Box::new(OfflineProvider), "new-tab");
        recovered_in(&reloaded, &memory, &mut tally, stop_after);
        let case = format!("background, stop after write {stop_after}");
        let mut expected = before;
        for text in landed.borrow().iter() {
            expected.insert(format!("r:{text}"), 1);
        }
        assert_nothing_lost(&case, &expected, &memory);
        if finished {
            assert_eq!(landed.borrow().len(), 3, "the loop wrote on");
            matrix.row(
                &format!("the loop's compaction in the background, the loop appending and finishing iterations meanwhile, the tab closed after each of the {stop_after} write steps, then reloaded"),
                format!("recovered from the journal: {} finished (`compaction_complete`), {} undone (`compaction_rolled_back`), the rest needed nothing; what the loop wrote meanwhile kept", tally.0, tally.1),
            );
            return;
        }
    }
    panic!("the compaction in the background never finished");
}

/// What recovery does in `reloaded`, a tab that loads after another closed having stopped
/// after write `stop_after`: counted in `tally` (finished, undone), its journal settled.
fn recovered_in(
    reloaded: &Tab,
    memory: &MemoryStore,
    tally: &mut (usize, usize),
    stop_after: usize,
) -> Option<Recovered> {
    let recovered = run_ready(reloaded.compactor.recover())
        .expect("recovery waited on nothing")
        .unwrap();
    match &recovered {
        Some(Recovered::Completed(_)) => tally.0 += 1,
        Some(Recovered::RolledBack(_)) => tally.1 += 1,
        Some(Recovered::SetAside(SetAside { reason, .. })) => {
            panic!("stop after {stop_after}: the journal a crash left reads, yet: {reason}")
        }
        None => {}
    }
    assert!(
        memory.get("gdrs_compaction_journal").unwrap().is_none(),
        "stop after {stop_after}: journal settled"
    );
    recovered
}

/// A session of 8 iterations of bulky tool output, and settings whose window it fills to 90%.
fn bulky_store() -> (MemoryStore, ManualClock, CompactorSettings) {
    let (memory, clock) = (MemoryStore::new(), ManualClock::new(NOV_22_2026));
    let logs = logs_over(&memory, &clock);
    bulky_session(&logs, &clock, 8);
    let tokens = logs.borrow().estimate_tokens().unwrap();
    let settings = CompactorSettings {
        context_window_tokens: tokens * 10 / 9,
        ..CompactorSettings::default()
    };
    (memory, clock, settings)
}

/// The writes of one clearing (the loop's own compaction over [`bulky_store`], no model call)
/// whose store `ready` prepares, in order, and its result.
fn clearing_writes(ready: impl Fn(&FaultyStore)) -> (CompactionResult, Vec<String>) {
    let (memory, clock, settings) = bulky_store();
    let store = FaultyStore::over(memory.clone());
    ready(&store);
    let t = tab_with(&store, &clock, Box::new(OfflineProvider), "a", settings);
    let cleared = run_ready(t.compactor.compact(Trigger::Auto))
        .unwrap()
        .unwrap();
    assert_eq!(cleared.attempts, 0, "the clearing alone was enough");
    let written = store.written.borrow().clone();
    (cleared, written)
}

/// That clearing, its store prepared by `ready`, in a tab closed after write `stop_after`,
/// then a page reloaded over the same store.
struct ClosedClearing {
    memory: MemoryStore,
    /// What the store held before, and its logs.
    before: HashMap<String, usize>,
    untouched: Vec<Option<String>>,
    reloaded: Tab,
    recovered: Option<Recovered>,
}

fn clearing_closed_after(stop_after: usize, ready: impl Fn(&FaultyStore)) -> ClosedClearing {
    let (memory, clock, settings) = bulky_store();
    let before = census(&memory);
    let untouched = stored_logs(&memory);
    let closing = |store: &FaultyStore, owner: &str| {
        ready(store);
        tab_with(
            store,
            &clock,
            Box::new(OfflineProvider),
            owner,
            settings.clone(),
        )
    };
    let reload =
        |store: &FaultyStore, owner: &str| tab(store, &clock, Box::new(OfflineProvider), owner);
    let closed = Closed {
        memory: &memory,
        clock: &clock,
        stop_after,
        trigger: Trigger::Auto,
    };
    let (reloaded, recovered) = closed.then_reloaded(closing, reload, &mut (0, 0));
    ClosedClearing {
        memory,
        before,
        untouched,
        reloaded,
        recovered,
    }
}

/// The placeholders in the stored execution (and, with `tools`, tool) log of `memory`.
fn placeholders_in(memory: &MemoryStore, tools: bool) -> usize {
    let live = stored_logs(memory);
    let count =
        |text: &Option<String>| text.as_deref().unwrap_or("").matches("[cleared by").count();
    count(&live[1]) + if tools { count(&live[2]) } else { 0 }
}

fn clearing_crash_cases(matrix: &Matrix) {
    // Name the writes of one clearing, then stop after each of them in turn: one row per write.
    let (_, written) = clearing_writes(|_| {});
    for (stop_after, key) in (1..).zip(&written) {
        let closed = clearing_closed_after(stop_after, |_| {});
        let (memory, recovered) = (&closed.memory, &closed.recovered);
        if let Some(Recovered::Completed(result)) = recovered {
            assert_eq!(result.parsed().unwrap().cleared.len(), 14);
        }
        let case = format!("clearing, stop after write {stop_after}");
        assert_nothing_lost(&case, &closed.before, memory);
        // Either every placeholder with its archive, or the logs as they were.
        let marks = placeholders_in(memory, false);
        let placeholders = marks == 7 && holds_an_archive(memory);
        assert!(
            placeholders || stored_logs(memory) == closed.untouched,
            "{case}: {marks} placeholders"
        );
        let what = settled(
            recovered,
            placeholders,
            "complete: the placeholders stand with their archive",
            "nothing to settle: the originals stand",
        );
        let key = key_stem(key);
        matrix.row(
            &format!("a clearing (the loop's own compaction, no model call): tab closed after write {stop_after} of {} (`{key}`), then reloaded", written.len()),
            format!("{what}; the live logs hold every placeholder with its archive, or the originals"),
        );
    }
}

fn journal_less_clearing_cases(matrix: &Matrix) {
    // The journal refused for want of room (a nearly full localStorage): the clearing goes on
    // without it. Name its writes, then stop after each in turn.
    let no_room = |store: &FaultyStore| store.quota_on("gdrs_compaction_journal");
    let (cleared, written) = clearing_writes(no_room);
    assert_eq!(cleared.rung, Rung::Clear, "cleared without a journal");
    for (stop_after, key) in (1..).zip(&written) {
        let closed = clearing_closed_after(stop_after, no_room);
        let memory = &closed.memory;
        assert!(memory.get("gdrs_compaction_journal").unwrap().is_none());
        let case = format!("clearing without a journal, stop after write {stop_after}");
        assert!(
            closed.recovered.is_none(),
            "{case}: no journal, nothing to settle"
        );
        assert_nothing_lost(&case, &closed.before, memory);
        // Every live placeholder names an archive that is stored: recall reads each back.
        let marks = placeholders_in(memory, true);
        let archives = archives_now(&closed.reloaded.compactor);
        for n in 1..=5 {
            let recalled = archives.with(|a| a.recall(n));
            let recalled = recalled.unwrap_or_else(|err| panic!("{case}: recall({n}): {err}"));
            assert!(marks == 0 || recalled.is_some(), "{case}: recall({n})");
        }
        let key = key_stem(key);
        matrix.row(
            &format!("a clearing with no room for its journal (a nearly full localStorage): tab closed after write {stop_after} of {} (`{key}`), then reloaded", written.len()),
            match marks {
                0 => "nothing to settle: the originals stand".to_owned(),
                n => format!("nothing to settle: {n} placeholders stand, each read back by recall from the archive written before them"),
            },
        );
    }
}

/// A tab closed in the middle of a compaction: over `memory`, its compaction started by
/// `trigger` stops after write `stop_after` (every operation after it fails, as if the tab
/// closed).
struct Closed<'a> {
    memory: &'a MemoryStore,
    clock: &'a ManualClock,
    stop_after: usize,
    trigger: Trigger,
}

impl Closed<'_> {
    /// The tab `closing` opens compacts and closes after its write; its lease expires; the page
    /// `reload` opens loads and recovers (counted in `tally`). The reloaded tab and what its
    /// recovery did.
    fn then_reloaded(
        &self,
        closing: impl FnOnce(&FaultyStore, &str) -> Tab,
        reload: impl FnOnce(&FaultyStore, &str) -> Tab,
        tally: &mut (usize, usize),
    ) -> (Tab, Option<Recovered>) {
        let store = FaultyStore::over(self.memory.clone());
        store.crash_after(self.stop_after);
        let closed = closing(&store, "closed-tab");
        // Whether the closing tab saw an error depends on the step; what counts is the state
        // the next load finds.
        drop(run_ready(closed.compactor.compact(self.trigger)).unwrap());
        // The tab is gone; its lease expires; a new page loads.
        self.clock.advance(10.0 * 60_000.0);
        let reloaded = reload(&FaultyStore::over(self.memory.clone()), "new-tab");
        let recovered = recovered_in(&reloaded, self.memory, tally, self.stop_after);
        (reloaded, recovered)
    }
}

/// What the reload found of a compaction stopped after a write: finished or undone by recovery,
/// else `written` when the rewrite stands (`stands`), else `untouched`.
fn settled(
    recovered: &Option<Recovered>,
    stands: bool,
    written: &'static str,
    untouched: &'static str,
) -> &'static str {
    match (recovered, stands) {
        (Some(Recovered::Completed(_)), _) => "finished on reload (`compaction_complete`)",
        (Some(Recovered::RolledBack(_)), _) => "undone on reload (`compaction_rolled_back`)",
        (Some(Recovered::SetAside(_)), _) => "the journal set aside (`key_set_aside`)",
        (None, true) => written,
        (None, false) => untouched,
    }
}

/// An archive's key without its timestamp.
fn key_stem(key: &str) -> String {
    match key.trim_end_matches(|c: char| c.is_ascii_digit()) {
        stem if stem.len() < key.len() => format!("{stem}…"),
        _ => key.to_owned(),
    }
}

/// A tab whose model rejects every call, so that the loop's compaction stores the package's
/// own summary (the fallback rung).
fn failing_tab(store: &FaultyStore, clock: &ManualClock, owner: &str) -> Tab {
    tab(
        store,
        clock,
        Box::new(ScriptedProvider::new(Vec::new())),
        owner,
    )
}

fn fallback_crash_cases(matrix: &Matrix) {
    // Name the writes of one fallback (every call of the model fails), then stop after each of
    // them in turn: one row per write.
    let (memory, clock) = seeded_store();
    let store = FaultyStore::over(memory.clone());
    let t = failing_tab(&store, &clock, "a");
    let fell_back = run_ready(t.compactor.compact(Trigger::ContextLimitError))
        .unwrap()
        .unwrap();
    assert_eq!(fell_back.rung, Rung::Fallback);
    let written = store.written.borrow().clone();
    for (stop_after, key) in written.iter().enumerate() {
        let (memory, clock) = seeded_store();
        let before = census(&memory);
        let failing = |store: &FaultyStore, owner: &str| failing_tab(store, &clock, owner);
        let closed = Closed {
            memory: &memory,
            clock: &clock,
            stop_after: stop_after + 1,
            trigger: Trigger::ContextLimitError,
        };
        let (reloaded, recovered) = closed.then_reloaded(failing, failing, &mut (0, 0));
        let case = format!("fallback, stop after write {}", stop_after + 1);
        assert_nothing_lost(&case, &before, &memory);
        let reasoning = reloaded.logs.borrow().reasoning_log().unwrap();
        let summaries: Vec<&String> = reasoning
            .iter()
            .filter(|r| parse_summary_header(r).is_some())
            .collect();
        assert_eq!(summaries.len(), 1, "{case}: exactly one summary entry live");
        let own = summaries[0].contains("Summarised without the model");
        let what = settled(
            &recovered,
            own,
            "complete: the package's own summary stands with its archive",
            "nothing to settle: the originals and the earlier summary stand",
        );
        let key = key_stem(key);
        matrix.row(
            &format!("the fallback rung (every call of the model fails, `context_limit_error`): tab closed after write {} of {} (`{key}`), then reloaded", stop_after + 1, written.len()),
            what,
        );
    }
}

/// A tab whose archives are in `db` (IndexedDB's double).
fn database_tab(
    store: &FaultyStore,
    db: Rc<dyn ArchiveStore>,
    clock: &ManualClock,
    owner: &str,
) -> Tab {
    let t = tab(store, clock, Box::new(OfflineProvider), owner);
    Tab {
        compactor: shelved(t.compactor, |shelf| shelf.with_archive_store(db)),
        ..t
    }
}

/// The logs in `memory` and the archives committed to `db`, in one store for the census.
fn with_database(memory: &MemoryStore, db: &MemoryArchiveStore) -> MemoryStore {
    let merged = MemoryStore::new();
    for store in [memory, db.committed()] {
        for key in store.keys().unwrap() {
            merged
                .set(&key, &store.get(&key).unwrap().unwrap())
                .unwrap();
        }
    }
    merged
}

/// [`seeded_store`] with its archives in an archive database.
fn seeded_database() -> (MemoryStore, MemoryArchiveStore, ManualClock) {
    let (memory, clock) = (MemoryStore::new(), ManualClock::new(NOV_22_2026));
    let db = MemoryArchiveStore::new();
    let t = database_tab(
        &FaultyStore::over(memory.clone()),
        Rc::new(db.clone()),
        &clock,
        "a",
    );
    let logs = logs_over(&memory, &clock);
    grow_session(&logs, &clock, 5, 1);
    run_ready(t.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    grow_session(&logs, &clock, 4, 2);
    assert!(!holds_an_archive(&memory), "the archive is in the database");
    assert_eq!(db.committed().keys().unwrap().len(), 1);
    (memory, db, clock)
}

fn database_cases(matrix: &Matrix) {
    for (case, quota) in [
        ("IndexedDB refuses the archive: its quota is reached", true),
        (
            "IndexedDB refuses the archive: blocked by another tab's version change",
            false,
        ),
    ] {
        let (memory, db, clock) = seeded_database();
        let before = census(&with_database(&memory, &db));
        let committed_before = db.committed().keys().unwrap();
        db.fail_commits(StorageError::ArchiveDatabase {
            reason: case.into(),
            quota,
        });
        let t = database_tab(
            &FaultyStore::over(memory.clone()),
            Rc::new(db.clone()),
            &clock,
            "a",
        );
        let logs_before = stored_logs(&memory);
        let result = run_ready(t.compactor.compact(Trigger::User)).unwrap();
        let code = if quota {
            "storage_quota"
        } else {
            "storage_unavailable"
        };
        assert_eq!(result.as_ref().unwrap_err().code().as_str(), code);
        assert_eq!(stored_logs(&memory), logs_before, "{case}: logs untouched");
        assert!(memory.get("gdrs_compaction_journal").unwrap().is_none());
        assert_eq!(db.committed().keys().unwrap(), committed_before);
        assert_nothing_lost(case, &before, &with_database(&memory, &db));
        matrix.row(case, outcome_of(&result));
    }

    // Count the localStorage writes of one whole compaction, then close the tab after each.
    let (memory, db, clock) = seeded_database();
    let store = FaultyStore::over(memory.clone());
    let t = database_tab(&store, Rc::new(db.clone()), &clock, "a");
    run_ready(t.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    let total_writes = store.writes();
    let (mut tally, mut between) = ((0, 0), 0);
    for stop_after in 0..total_writes {
        let (memory, db, clock) = seeded_database();
        let before = census(&with_database(&memory, &db));
        let logs_before = stored_logs(&memory);
        let store = FaultyStore::over(memory.clone());
        store.crash_after(stop_after);
        // The database's commits fail once the tab has closed (its localStorage crashed).
        let closing = db.other_tab();
        let tab = store.clone();
        closing.fail_when(move || match tab.crashed() {
            true => Err(StorageError::ArchiveDatabase {
                reason: "the tab was closed".into(),
                quota: false,
            }),
            false => Ok(()),
        });
        let t = database_tab(&store, Rc::new(closing), &clock, "closed-tab");
        drop(run_ready(t.compactor.compact(Trigger::User)).unwrap());
        if db.committed().keys().unwrap().len() == 2 && stored_logs(&memory) == logs_before {
            between += 1;
        }
        clock.advance(10.0 * 60_000.0);
        let reloaded = database_tab(
            &FaultyStore::over(memory.clone()),
            Rc::new(db.other_tab()),
            &clock,
            "new-tab",
        );
        recovered_in(&reloaded, &memory, &mut tally, stop_after);
        let case = format!("IndexedDB archives, stop after write {stop_after}");
        assert!(
            !holds_an_archive(&memory),
            "{case}: no archive in localStorage"
        );
        assert_nothing_lost(&case, &before, &with_database(&memory, &db));
    }
    assert!(
        between > 0,
        "some stop fell between the IndexedDB commit and the swap"
    );
    matrix.row(
        &format!("archives in IndexedDB: tab closed after each of the {total_writes} localStorage write steps ({between} between the IndexedDB commit and the swap), then reloaded"),
        format!("recovered from the journal, the archive found in IndexedDB: {} finished, {} undone, the rest needed nothing", tally.0, tally.1),
    );
}

fn tab_cases(matrix: &Matrix) {
    // Two tabs at once.
    let (memory, clock) = seeded_store();
    let before = census(&memory);
    let store = FaultyStore::over(memory.clone());
    let a = tab(
        &store,
        &clock,
        Box::new(ScriptedProvider::new(vec![Answer::Hang])),
        "tab-a",
    );
    let b = tab(&store, &clock, Box::new(OfflineProvider), "tab-b");
    let never = InstantTimer::new(&clock);
    never.never.set(true);
    let a_slow = shelved(
        Compactor::new(
            a.logs.clone(),
            Box::new(ScriptedProvider::new(vec![Answer::Hang])),
            Box::new(never),
            Box::new(a.events.clone()),
            small_window(),
        )
        .unwrap(),
        |shelf| shelf.with_owner("tab-a"),
    );
    let mut running = Box::pin(a_slow.compact(Trigger::User));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(std::future::Future::poll(running.as_mut(), &mut cx).is_pending());
    let second = run_ready(b.compactor.compact(Trigger::User)).unwrap();
    assert_eq!(second.as_ref().unwrap_err().code().as_str(), "busy");
    assert!(b
        .compactor
        .can_compact()
        .unwrap()
        .unwrap()
        .to_string()
        .contains("another tab"));
    drop(running);
    assert_nothing_lost("two tabs", &before, &memory);
    matrix.row(
        "two tabs compact at once",
        "the second gets `busy` (\"A compaction is running in another tab\"); the first goes on",
    );

    // Appends from another tab during a compaction.
    let (memory, clock) = seeded_store();
    let store = FaultyStore::over(memory.clone());
    let provider = ScriptedProvider::new(vec![Answer::Text(valid_summary(
        "with appends from another tab",
    ))]);
    let other = tab(&store, &clock, Box::new(OfflineProvider), "tab-b");
    let other_logs = other.logs.clone();
    *provider.on_call.borrow_mut() = Some(Box::new(move || {
        let mut logs = other_logs.borrow_mut();
        logs.start_iteration().unwrap();
        logs.append_reasoning("written by another tab mid-compaction")
            .unwrap();
        logs.finish_iteration();
    }));
    let a = tab(&store, &clock, Box::new(provider), "tab-a");
    let before = census(&memory);
    let result = run_ready(a.compactor.compact(Trigger::User)).unwrap();
    let mut expected = before.clone();
    let next = a.logs.borrow().current_iteration().unwrap();
    expected.insert(format!("r:=== ITERATION {next} ==="), 1);
    expected.insert("r:written by another tab mid-compaction".into(), 1);
    assert_nothing_lost("appends from another tab", &expected, &memory);
    matrix.row(
        "another tab appends during a compaction",
        format!(
            "{}; the appended entries stay after the summary",
            outcome_of(&result)
        ),
    );
}

fn corrupt_cases(matrix: &Matrix) {
    for key in [
        "gdrs_reasoning_log",
        "gdrs_execution_log",
        "gdrs_tool_activity_log",
        "gdrs_compaction_journal",
        "gdrs_pinned_facts",
        "gdrs_compaction_lock",
        "gdrs_compaction_metrics",
        "an archive (half written)",
    ] {
        let (memory, clock) = seeded_store();
        let archive_key = memory
            .keys()
            .unwrap()
            .into_iter()
            .find(|k| k.contains("archived_logs"))
            .unwrap();
        let target = if key.starts_with("an archive") {
            archive_key.clone()
        } else {
            key.to_owned()
        };
        let original = memory.get(&target).unwrap();
        let broken = match &original {
            Some(text) => text[..text.len() / 2].to_owned(),
            None => "{not json".to_owned(),
        };
        memory.set(&target, &broken).unwrap();
        let before = census(&memory);
        let store = FaultyStore::over(memory.clone());
        let t = tab(&store, &clock, Box::new(OfflineProvider), "a");
        let result = run_ready(t.compactor.compact(Trigger::User)).unwrap();
        if key == "gdrs_compaction_journal" || key == "gdrs_pinned_facts" {
            // The package's own record of a compaction (which holds no data), or the pins: set
            // aside, the text kept; the compaction goes on. Before, every compaction failed
            // `storage_corrupt` until the key was removed by hand.
            let result = result.unwrap_or_else(|err| panic!("{key}: {err}"));
            assert_eq!(memory.get(&target).unwrap(), None, "{key}: set aside");
            assert_eq!(
                memory.get(&format!("{target}_corrupt")).unwrap().as_deref(),
                Some(broken.as_str()),
                "{key}: its text kept"
            );
            let set_aside = t.events.events().into_iter().find_map(|event| match event {
                CompactionEvent::SetAside(SetAside { key, kept_as, .. }) => Some((key, kept_as)),
                _ => None,
            });
            assert_eq!(
                set_aside,
                Some((target.clone(), Some(format!("{target}_corrupt")))),
                "{key}: the app is told"
            );
            assert_nothing_lost(key, &before, &memory);
            matrix.row(
                &format!("corrupt JSON in `{key}`"),
                format!("{}; set aside (`key_set_aside`, its text kept under `{key}_corrupt`) instead of stopping every compaction", outcome_of(&Ok(result))),
            );
            continue;
        }
        if key == "gdrs_compaction_lock" {
            // The package's own lock, which holds no data: it holds nothing back either.
            let result = result.unwrap_or_else(|err| panic!("{key}: {err}"));
            assert_eq!(
                memory.get(&target).unwrap(),
                None,
                "{key}: replaced, released"
            );
            matrix.row(
                &format!("corrupt JSON in `{key}`"),
                format!("{}; the lease that does not read holds nothing back and is replaced (it holds no data)", outcome_of(&Ok(result))),
            );
            continue;
        }
        assert_eq!(
            memory.get(&target).unwrap().as_deref(),
            Some(broken.as_str()),
            "{key}: never overwritten"
        );
        let outcome = match &result {
            Err(err) => {
                assert_eq!(err.code().as_str(), "storage_corrupt", "{key}: {err}");
                assert!(
                    err.to_string().contains(&target),
                    "{key}: the error names the key: {err}"
                );
                format!(
                    "`storage_corrupt` naming `{}`, nothing overwritten",
                    if key.starts_with("an archive") {
                        "<archive key>"
                    } else {
                        key
                    }
                )
            }
            Ok(_) => {
                let read = match key {
                    "gdrs_compaction_metrics" => {
                        t.compactor.metrics().map(|_| ()).map_err(|e| e.to_string())
                    }
                    _ => t
                        .compactor
                        .shelf()
                        .with_archives(|a| a.read(&target))
                        .map(|_| ())
                        .map_err(|e| e.to_string()),
                };
                let message = read.expect_err("reading the corrupt key reports it");
                assert!(message.contains(&target), "{message}");
                assert!(
                    !t.compactor
                        .shelf()
                        .with_archives(|a| a.list())
                        .unwrap()
                        .is_empty(),
                    "the other archives stay readable"
                );
                format!("{}; reading the key gives `storage_corrupt` naming it; other archives readable", outcome_of(&result))
            }
        };
        assert_nothing_lost(key, &before, &memory);
        matrix.row(
            &format!(
                "corrupt JSON in {}",
                if key.starts_with("an archive") {
                    key.to_owned()
                } else {
                    format!("`{key}`")
                }
            ),
            outcome,
        );
    }
}

#[test]
fn fault_matrix() {
    let matrix = Matrix(RefCell::new(Vec::new()));
    provider_cases(&matrix);
    quota_cases(&matrix);
    crash_cases(&matrix);
    corrupt_journal_after_crash_cases(&matrix);
    background_crash_cases(&matrix);
    clearing_crash_cases(&matrix);
    journal_less_clearing_cases(&matrix);
    fallback_crash_cases(&matrix);
    database_cases(&matrix);
    tab_cases(&matrix);
    corrupt_cases(&matrix);
    for (case, outcome) in common::hostile::all() {
        matrix.row(&case, outcome);
    }

    let mut table =
        String::from("| case | outcome | every entry kept exactly once |\n| --- | --- | --- |\n");
    for (case, outcome) in matrix.0.borrow().iter() {
        table.push_str(&format!("| {case} | {outcome} | yes |\n"));
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let _ = std::fs::create_dir_all(root.join("test-output"));
    std::fs::write(root.join("test-output/fault-matrix.md"), &table).unwrap();
    let readme_path = root.join("docs/guarantees.md");
    let readme = std::fs::read_to_string(&readme_path).unwrap();
    let (start, end) = ("<!-- fault-matrix:start -->\n", "<!-- fault-matrix:end -->");
    let (head, rest) = readme
        .split_once(start)
        .expect("docs/guarantees.md has the fault-matrix markers");
    let (current, tail) = rest
        .split_once(end)
        .expect("docs/guarantees.md has the fault-matrix end marker");
    if std::env::var("UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::write(&readme_path, format!("{head}{start}{table}{end}{tail}")).unwrap();
    } else {
        assert_eq!(
            current, table,
            "the fault matrix of docs/guarantees.md is stale: rerun with UPDATE_GOLDEN=1"
        );
    }
}
