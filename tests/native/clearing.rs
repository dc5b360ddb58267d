//! The ladder's clearing rung, as an app meets it: the loop's own compaction clears bulky tool
//! output first and makes no model call when that is enough; every body comes back through
//! `recall`, the recall tool and `rollback`, also after a later summary archived the
//! placeholders; the user's compaction and `clearing: false` summarise as before.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use common::census::{assert_nothing_lost, census};
use common::*;
use context_compactor::core::error::{CompactionError, ErrorCode};
use context_compactor::core::json::read::FromJson;
use context_compactor::core::model::clearing::{Clearing, ClearingRules, Rung};
use context_compactor::core::model::fallback::FallbackPolicy;
use context_compactor::core::model::phase::Phase;
use context_compactor::core::model::reasons::{Conflict, Refusal};
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::cancel::Cancel;
use context_compactor::core::ports::events::CompactionEvent;
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::store::keys::StorageKeys;
use context_compactor::core::store::recall_tool::RecallArgs;

const MARK: &str = "[cleared by context-compactor: ";

/// A store holding `iterations` bulky iterations, and their tokens.
fn bulky(iterations: u32) -> (MemoryStore, usize) {
    let memory = MemoryStore::new();
    let rig = Rig::with(memory.clone(), vec![], CompactorSettings::default());
    bulky_session(&rig.logs, &rig.clock, iterations);
    let tokens = rig.logs.borrow().estimate_tokens().unwrap();
    (memory, tokens)
}

/// Settings whose window the logs of `tokens` fill to 90%, clearing by `rules`.
fn at_ninety_percent(tokens: usize, clearing: Clearing) -> CompactorSettings {
    CompactorSettings {
        context_window_tokens: tokens * 10 / 9,
        summary_budget_tokens: Some(2_000),
        clearing,
        ..Default::default()
    }
}

/// Settings for the logs of `bulky(8)`, of `tokens`, whose clearing (of the iterations before
/// the newest 6) frees too little: a summary follows it in the same compaction.
fn clearing_then_summary(tokens: usize) -> CompactorSettings {
    let rules = ClearingRules {
        keep_iterations: Some(6),
        ..ClearingRules::default()
    };
    at_ninety_percent(tokens, Clearing::On(rules))
}

fn compact(
    rig: &Rig,
    trigger: Trigger,
    rung: Option<Rung>,
) -> Result<CompactionResultBox, CompactionError> {
    let claim = rig.compactor.claim(trigger, Cancel::default())?;
    run_ready(rig.compactor.compact_claimed(claim.with_rung(rung)))
        .expect("nothing waits in memory")
        .map(Box::new)
}

type CompactionResultBox = Box<context_compactor::core::model::outcome::CompactionResult>;

fn execution_text(rig: &Rig) -> String {
    rig.memory
        .get(&StorageKeys::default().execution())
        .unwrap()
        .unwrap_or_default()
}

#[test]
fn the_loops_compaction_clears_bulky_output_first_and_makes_no_model_call_when_that_is_enough() {
    let (memory, tokens) = bulky(8);
    let before = census(&memory);
    let rig = Rig::with(
        memory,
        vec![],
        at_ninety_percent(tokens, Clearing::default()),
    );
    let plan = rig.compactor.plan().unwrap();
    assert_eq!(plan.rung, Rung::Clear);
    assert_eq!(
        plan.cleared.len(),
        14,
        "iterations 1-7, an execution and a tool entry each: the newest keeps its bodies, \
         which take more than a twentieth of the window"
    );

    let result = compact(&rig, Trigger::Auto, None).unwrap();
    assert_eq!(result.rung, Rung::Clear);
    assert_eq!((rig.provider.calls(), result.attempts), (0, 0));
    let cleared: Vec<u32> = result.cleared.iter().map(|c| c.iteration).collect();
    assert_eq!(cleared, [1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(result.cleared, plan.cleared);
    assert!(
        result.context_usage_after < 0.6,
        "{}",
        result.context_usage_after
    );
    assert!(result.tokens_after * 2 < result.tokens_before);
    assert!(result.summary.is_empty());
    assert_nothing_lost("a clearing", &before, &rig.memory);

    // The newest iteration keeps its bodies whole; the cleared ones keep their figures.
    let live = execution_text(&rig);
    assert!(live.contains(&format!("Net revenue {}", bulky_figure(8))));
    for n in 1..=7 {
        assert!(!live.contains(&format!("Net revenue {}", bulky_figure(n))));
        assert!(
            live.contains(&bulky_figure(n)),
            "iteration {n}'s figure is in its placeholder"
        );
    }
    assert_eq!(live.matches(MARK).count(), 7);

    let phases: Vec<Phase> = rig
        .events
        .events()
        .into_iter()
        .filter_map(|event| match event {
            CompactionEvent::PhaseChange { phase, .. } => Some(phase),
            _ => None,
        })
        .collect();
    assert!(phases.contains(&Phase::Clearing), "{phases:?}");
    assert!(!phases.contains(&Phase::Compacting), "{phases:?}");
    let names = rig.events.names();
    assert!(names.contains(&"compaction_archived"));
    assert_eq!(names.last(), Some(&"compaction_complete"));

    let metrics = rig.compactor.metrics().unwrap();
    assert_eq!((metrics.clearings, metrics.calls_saved), (1, 1));
    let freed: usize = result.cleared.iter().map(|c| c.tokens).sum();
    assert_eq!(metrics.tokens_cleared, freed);
    assert_eq!(metrics.total_attempts, 0);

    // Cleared once: the next compaction finds nothing more to clear, and usage is low.
    assert!(matches!(
        compact(&rig, Trigger::Auto, None),
        Err(CompactionError::NotAllowed(Refusal::UsageTooLow { .. }))
    ));
    assert_eq!(execution_text(&rig).matches(MARK).count(), 7);
}

#[test]
fn recall_and_the_recall_tool_return_the_originals_also_after_a_summary_archived_the_placeholders()
{
    let (memory, tokens) = bulky(8);
    let before = census(&memory);
    let answers = vec![Answer::Text(valid_summary(
        "Net revenue was read for every report.",
    ))];
    let rig = Rig::with(
        memory,
        answers,
        at_ninety_percent(tokens, Clearing::default()),
    );
    let cleared = compact(&rig, Trigger::Auto, None).unwrap();
    let id_of_2 = cleared.cleared[1].entry_id.clone();
    let check = |when: &str| {
        let archives = archives_now(&rig.compactor);
        let recalled = archives
            .with(|a| a.recall(2))
            .unwrap()
            .expect("iteration 2 is archived");
        let execution = recalled.execution_log[0].json();
        assert!(!execution.contains(MARK), "{when}: {execution:.200}");
        assert!(
            execution.contains(&format!("Net revenue {}", bulky_figure(2))),
            "{when}"
        );
        assert!(
            execution.contains("Row 109"),
            "{when}: the body comes back whole"
        );
        let args = RecallArgs {
            query: Some(id_of_2.clone()),
            ..RecallArgs::from_json("{}").unwrap()
        };
        let answer = archives.with(|a| a.recall_text(&args, 20_000)).unwrap();
        assert!(
            answer.contains(&format!("Net revenue {}", bulky_figure(2))),
            "{when}: {answer:.300}"
        );
        assert!(
            !answer.contains(MARK),
            "{when}: the placeholder is not offered beside its original"
        );
        let mut cooldown = context_compactor::core::store::rehydrate::Cooldown::default();
        let message = format!("What did {id_of_2} return?");
        let found = archives
            .with(|a| a.rehydrate(&message, 20_000, &mut cooldown))
            .unwrap();
        assert_eq!(found.iterations, [2], "{when}");
        assert!(
            found
                .text
                .contains(&format!("Net revenue {}", bulky_figure(2))),
            "{when}"
        );
        assert!(!found.text.contains(MARK), "{when}: {:.300}", found.text);
    };
    check("after the clearing");

    let summary = compact(&rig, Trigger::ContextLimitError, Some(Rung::Summarize)).unwrap();
    assert_eq!(summary.rung, Rung::Summarize);
    assert_eq!(rig.provider.calls(), 1);
    check("after a summary archived the placeholders");
    assert_nothing_lost("a clearing, then a summary", &before, &rig.memory);
}

/// IndexedDB evicted while localStorage stays: the placeholders in the live logs still name
/// the clearing's archive, which is gone. `archives_lost` names it, `recall` rejects
/// `archive_missing` with its key, and the recall tool says the original was evicted. Before,
/// nothing was lost, `recall(2)` found nothing and the tool said iteration 2 was live.
#[test]
fn a_placeholder_whose_archive_was_evicted_is_reported_lost_not_live() {
    let (memory, tokens) = bulky(8);
    let rig = Rig::with(
        memory,
        vec![],
        at_ninety_percent(tokens, Clearing::default()),
    );
    let cleared = compact(&rig, Trigger::Auto, None).unwrap();
    assert_eq!(cleared.rung, Rung::Clear);
    let key = cleared.archive_key.clone();
    rig.memory.remove(&key).unwrap();
    run_ready(rig.compactor.recover()).unwrap().unwrap();
    let lost = rig
        .events
        .events()
        .into_iter()
        .find_map(|event| match event {
            CompactionEvent::ArchivesLost { keys } => Some(keys),
            _ => None,
        });
    assert_eq!(lost, Some(vec![key.clone()]));
    let archives = archives_now(&rig.compactor);
    let recalled = archives.with(|a| a.recall(2));
    assert_eq!(
        recalled.unwrap_err(),
        CompactionError::ArchiveMissing { key: key.clone() }
    );
    let args = RecallArgs {
        from: Some(2.0),
        ..RecallArgs::from_json("{}").unwrap()
    };
    let answer = archives.with(|a| a.recall_text(&args, 2_000)).unwrap();
    assert!(answer.contains(&key), "{answer}");
    assert!(answer.contains("evicted by the browser"), "{answer}");
    // An iteration never cleared is still live, as before.
    let args = RecallArgs {
        from: Some(8.0),
        ..RecallArgs::from_json("{}").unwrap()
    };
    let answer = archives.with(|a| a.recall_text(&args, 2_000)).unwrap();
    assert!(answer.contains("in the live logs"), "{answer}");
}

/// localStorage all but full (150 to 560 units left), the archives in IndexedDB: the clearing
/// rung that frees tens of thousands of characters still runs, and a summary too. A clearing
/// goes on without the journal it has no room for (each placeholder names the archive written
/// before it); a summary under the journal's first, short record where the second does not
/// fit. Before, the journal (3,000 units and more) failed both `storage_quota`.
#[test]
fn the_clearing_runs_on_a_nearly_full_local_storage() {
    let (memory, tokens) = bulky(8);
    let mut rig = Rig::with(
        memory.clone(),
        vec![],
        at_ninety_percent(tokens, Clearing::default()),
    );
    rig.compactor = shelved(rig.compactor, |shelf| {
        shelf.with_archive_store(std::rc::Rc::new(
            context_compactor::core::ports::archive_store::MemoryArchiveStore::new(),
        ))
    });
    for slack in [150, 300, 560] {
        let memory = memory.clone();
        let before = memory.used_units();
        memory.set_quota(Some(before + slack));
        let claim = rig
            .compactor
            .claim(Trigger::User, Cancel::default())
            .unwrap();
        let cleared = run_ready(
            rig.compactor
                .compact_claimed(claim.with_rung(Some(Rung::Clear))),
        )
        .unwrap()
        .unwrap_or_else(|err| panic!("{slack} units left: {err}"));
        assert!(!cleared.cleared.is_empty());
        assert!(
            memory.used_units() + 10_000 < before,
            "{slack}: {} units before, {} after",
            before,
            memory.used_units()
        );
        memory.set_quota(None);
        run_ready(rig.compactor.rollback(&cleared.archive_key))
            .unwrap()
            .unwrap();
    }
    let answer = Answer::Text(valid_summary("Net revenue was read for every report."));
    rig.provider.answers.borrow_mut().push_back(answer);
    let before = memory.used_units();
    memory.set_quota(Some(before + 560));
    let claim = rig
        .compactor
        .claim(Trigger::User, Cancel::default())
        .unwrap();
    let summarised = run_ready(rig.compactor.compact_claimed(claim))
        .unwrap()
        .unwrap_or_else(|err| panic!("a summary with 560 units left: {err}"));
    assert_eq!(summarised.rung, Rung::Summarize);
    assert!(memory.used_units() + 10_000 < before);
    assert_eq!(memory.get("gdrs_compaction_journal").unwrap(), None);
}

#[test]
fn rollback_puts_the_cleared_bytes_back_and_waits_for_a_later_summary_to_be_rolled_back_first() {
    let (memory, tokens) = bulky(8);
    let answers = vec![Answer::Text(valid_summary("Every report was read."))];
    let rig = Rig::with(
        memory,
        answers,
        at_ninety_percent(tokens, Clearing::default()),
    );
    let untouched = rig.dump();
    let clearing = compact(&rig, Trigger::Auto, None).unwrap();
    let listed = archives_now(&rig.compactor).with(|a| a.list()).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].rung, listed[0].restorable), (Rung::Clear, true));
    run_ready(rig.compactor.rollback(&clearing.archive_key))
        .unwrap()
        .unwrap();
    assert_eq!(rig.dump(), untouched, "byte for byte, and the archive gone");

    let clearing = compact(&rig, Trigger::Auto, None).unwrap();
    let summary = compact(&rig, Trigger::ContextLimitError, Some(Rung::Summarize)).unwrap();
    let listed = archives_now(&rig.compactor).with(|a| a.list()).unwrap();
    let of = |key: &str| listed.iter().find(|a| a.key == key).unwrap().restorable;
    assert!(
        !of(&clearing.archive_key),
        "its placeholders are in the summary's archive"
    );
    assert!(of(&summary.archive_key));
    assert_eq!(
        run_ready(rig.compactor.rollback(&clearing.archive_key)).unwrap(),
        Err(CompactionError::NotAllowed(Refusal::Conflict(
            Conflict::PlaceholdersGone
        )))
    );
    run_ready(rig.compactor.rollback(&summary.archive_key))
        .unwrap()
        .unwrap();
    run_ready(rig.compactor.rollback(&clearing.archive_key))
        .unwrap()
        .unwrap();
    assert_eq!(rig.dump(), untouched);
}

#[test]
fn a_clearing_that_frees_too_little_is_followed_by_a_summary_in_the_same_compaction() {
    let (memory, tokens) = bulky(8);
    let before = census(&memory);
    let answers = vec![Answer::Text(valid_summary("Every report was read."))];
    let rig = Rig::with(memory, answers, clearing_then_summary(tokens));
    assert_eq!(rig.compactor.plan().unwrap().rung, Rung::Summarize);
    let result = compact(&rig, Trigger::Auto, None).unwrap();
    assert_eq!(result.rung, Rung::Summarize);
    assert_eq!(rig.provider.calls(), 1);
    let cleared: Vec<u32> = result.cleared.iter().map(|c| c.iteration).collect();
    assert_eq!(cleared, [1, 2, 1, 2]);
    assert_eq!(result.tokens_before, tokens, "measured before the clearing");
    let archives = archives_now(&rig.compactor).with(|a| a.list()).unwrap();
    let rungs: Vec<Rung> = archives.iter().map(|a| a.rung).collect();
    assert_eq!(rungs, [Rung::Summarize, Rung::Clear]);
    let metrics = rig.compactor.metrics().unwrap();
    assert_eq!((metrics.clearings, metrics.calls_saved), (1, 0));
    assert_nothing_lost("a clearing, then a summary", &before, &rig.memory);
}

/// A compaction that clears and then summarises: the summariser reads the bodies the clearing
/// took as they were (the page's own title and rows), the logs the placeholders. (Before,
/// its prompt showed only the placeholders of what it had just cleared.)
#[test]
fn the_summary_after_a_clearing_reads_the_bodies_it_cleared_and_the_logs_keep_the_placeholders() {
    let (memory, tokens) = bulky(8);
    let answers = vec![Answer::Text(valid_summary("Every report was read."))];
    let rig = Rig::with(memory, answers, clearing_then_summary(tokens));
    let result = compact(&rig, Trigger::Auto, None).unwrap();
    assert_eq!(result.rung, Rung::Summarize);
    assert!(!result.cleared.is_empty());
    let prompt = rig.provider.prompts.borrow()[0].clone();
    for n in 1..=2 {
        let page = format!("Result: \"<html><head><title>Regional report {n}</title>");
        assert!(prompt.contains(&page), "{prompt}");
    }
}

#[test]
fn the_users_compaction_summarises_unless_it_asks_for_the_clear_rung_and_clearing_false_never_clears(
) {
    let (memory, tokens) = bulky(8);
    let answers = vec![
        Answer::Text(valid_summary("Every report was read.")),
        Answer::Text(valid_summary("Every report was read.")),
    ];
    let rig = Rig::with(
        memory.clone(),
        answers.clone(),
        at_ninety_percent(tokens, Clearing::default()),
    );
    let result = compact(&rig, Trigger::User, None).unwrap();
    assert_eq!((result.rung, result.cleared.len()), (Rung::Summarize, 0));

    let (memory, tokens) = bulky(8);
    let rig = Rig::with(
        memory,
        vec![],
        at_ninety_percent(tokens, Clearing::default()),
    );
    let result = compact(&rig, Trigger::User, Some(Rung::Clear)).unwrap();
    assert_eq!((result.rung, rig.provider.calls()), (Rung::Clear, 0));

    let (memory, tokens) = bulky(8);
    let rig = Rig::with(memory, answers, at_ninety_percent(tokens, Clearing::Off));
    assert_eq!(
        compact(&rig, Trigger::User, Some(Rung::Clear)).map(|r| r.rung),
        Err(CompactionError::NotAllowed(Refusal::NothingToClear))
    );
    let plan = rig.compactor.plan().unwrap();
    assert_eq!((plan.rung, plan.cleared.len()), (Rung::Summarize, 0));
    let result = compact(&rig, Trigger::Auto, None).unwrap();
    assert_eq!((result.rung, result.cleared.len()), (Rung::Summarize, 0));
    assert_eq!(execution_text(&rig).matches(MARK).count(), 0);
}

#[test]
fn the_clearing_option_reads_false_or_its_rules_and_refuses_what_it_does_not_know() {
    let read = |json: &str| -> Result<Clearing, String> {
        let settings = CompactorSettings::from_json(json).map_err(|e| e.to_string())?;
        let clock = context_compactor::core::ports::clock::ManualClock::new(NOV_22_2026);
        let logs = logs_over(&MemoryStore::new(), &clock);
        let provider = Box::new(context_compactor::core::providers::offline::OfflineProvider);
        let timer = Box::new(InstantTimer::new(&clock));
        let events = Box::new(context_compactor::core::ports::events::RecordingSink::default());
        let compactor = context_compactor::core::run::compactor::Compactor::new(
            logs, provider, timer, events, settings,
        )
        .map_err(|e| e.to_string())?;
        Ok(compactor.settings().clearing.clone())
    };
    assert_eq!(read("{}").unwrap(), Clearing::default());
    assert_eq!(read(r#"{"clearing":false}"#).unwrap(), Clearing::Off);
    let rules = read(
        r#"{"clearing":{"keepIterations":5,"tools":{"vfs":"keep","fetch":"clear"},"keepFields":{"fetch":["url"]}}}"#,
    )
    .unwrap();
    let Clearing::On(rules) = rules else {
        panic!("on")
    };
    assert_eq!((rules.keep_iterations, rules.above_tokens), (Some(5), 400));
    assert_eq!(rules.tools.0.len(), 2);
    assert_eq!(rules.keep_fields.0[0].1, ["url"]);
    let refused = read(r#"{"clearing":{"keepIteration":5}}"#).unwrap_err();
    assert!(refused.contains("keepIteration"), "{refused}");
    assert!(read(r#"{"clearing":{"tools":{"vfs":"sometimes"}}}"#).is_err());
    assert!(read(r#"{"clearing":"yes"}"#).is_err());
    let zero = read(r#"{"clearing":{"keepIterations":0}}"#).unwrap_err();
    assert!(zero.contains("clearing"), "{zero}");
}

#[test]
fn the_loop_is_told_to_compact_once_clearing_would_free_enough_even_under_recommended_usage() {
    // A window the logs fill to 30%: under recommendedUsage, far from autoTriggerUsage.
    let at_thirty_percent = |tokens: usize, clearing| CompactorSettings {
        context_window_tokens: tokens * 10 / 3,
        summary_budget_tokens: Some(2_000),
        clearing,
        ..Default::default()
    };
    let (memory, tokens) = bulky(8);
    let rig = Rig::with(
        memory,
        vec![],
        at_thirty_percent(tokens, Clearing::default()),
    );
    assert!(rig.compactor.should_auto_compact().unwrap());
    let result = compact(&rig, Trigger::Auto, None).unwrap();
    assert_eq!((result.rung, rig.provider.calls()), (Rung::Clear, 0));
    assert!(
        !rig.compactor.should_auto_compact().unwrap(),
        "nothing left to clear"
    );
    assert!(matches!(
        compact(&rig, Trigger::Auto, None),
        Err(CompactionError::NotAllowed(Refusal::UsageTooLow { .. }))
    ));

    // Less to free than atLeastTokens, or clearing off: not due, and refused as before.
    let (memory, tokens) = bulky(8);
    let rules = ClearingRules {
        at_least_tokens: Some(tokens),
        ..ClearingRules::default()
    };
    let rig = Rig::with(
        memory,
        vec![],
        at_thirty_percent(tokens, Clearing::On(rules)),
    );
    assert!(!rig.compactor.should_auto_compact().unwrap());
    let (memory, tokens) = bulky(8);
    let rig = Rig::with(memory, vec![], at_thirty_percent(tokens, Clearing::Off));
    assert!(!rig.compactor.should_auto_compact().unwrap());
    assert!(matches!(
        compact(&rig, Trigger::Auto, None),
        Err(CompactionError::NotAllowed(Refusal::UsageTooLow { .. }))
    ));
}

#[test]
fn a_summary_that_fails_after_a_clearing_leaves_the_clearing_in_place_and_undoable() {
    let (memory, tokens) = bulky(8);
    let untouched = {
        let rig = Rig::with(memory.clone(), vec![], CompactorSettings::default());
        rig.dump()
    };
    let down = context_compactor::core::error::ProviderError::Http {
        status: 503,
        message: "overloaded".into(),
        retry_after_ms: None,
        lasting: false,
    };
    let answers = vec![Answer::fail(down.clone()), Answer::fail(down)];
    // The fallback rung would store the package's own summary; this test is of a refusal.
    let settings = CompactorSettings {
        fallback: FallbackPolicy::Off,
        ..clearing_then_summary(tokens)
    };
    let rig = Rig::with(memory, answers, settings);
    let failed = compact(&rig, Trigger::Auto, None).unwrap_err();
    assert_eq!(
        execution_text(&rig).matches(MARK).count(),
        2,
        "the clearing stands"
    );
    let listed = archives_now(&rig.compactor).with(|a| a.list()).unwrap();
    assert_eq!(
        (listed.len(), listed[0].rung, listed[0].restorable),
        (1, Rung::Clear, true)
    );
    // The error is the summary's, and it says the clearing stands (it said nothing before).
    assert_eq!(failed.code(), ErrorCode::LlmHttp);
    assert!(matches!(failed.cause(), CompactionError::Provider(_)));
    let stood = failed.clearing_stood().expect("the clearing is named");
    assert_eq!(stood.archive_key, listed[0].key);
    // Two results and two tool bodies, as a successful clearing of these logs lists them.
    assert_eq!(stood.cleared.len(), 4);
    let message = failed.to_string();
    assert!(
        message.contains("the clearing that ran first stands: 4 bodies")
            && message.contains(&format!("rollback(\"{}\")", listed[0].key)),
        "{message}"
    );
    let metrics = rig.compactor.metrics().unwrap();
    assert_eq!(
        (metrics.clearings, metrics.failed_compactions),
        (1, 1),
        "the clearing and the failed summary are both counted"
    );
    run_ready(rig.compactor.rollback(&listed[0].key))
        .unwrap()
        .unwrap();
    assert_eq!(rig.dump(), untouched);
}

#[test]
fn in_localstorage_a_clearings_archive_is_never_evicted_by_max_archives() {
    let (memory, tokens) = bulky(8);
    let settings = CompactorSettings {
        max_archives: 1,
        ..at_ninety_percent(tokens, Clearing::default())
    };
    let answers = vec![
        Answer::Text(valid_summary("Every report was read.")),
        Answer::Text(valid_summary("Every report was read, twice.")),
    ];
    let rig = Rig::with(memory, answers, settings);
    let first = compact(&rig, Trigger::Auto, None).unwrap();
    bulky_session(&rig.logs, &rig.clock, 2);
    let second = compact(&rig, Trigger::Auto, None).unwrap();
    assert_eq!((first.rung, second.rung), (Rung::Clear, Rung::Clear));
    let summary = compact(&rig, Trigger::ContextLimitError, Some(Rung::Summarize)).unwrap();
    bulky_session(&rig.logs, &rig.clock, 4);
    let later = compact(&rig, Trigger::ContextLimitError, Some(Rung::Summarize)).unwrap();
    let keys: Vec<String> = archives_now(&rig.compactor)
        .with(|a| a.list())
        .unwrap()
        .into_iter()
        .map(|a| a.key)
        .collect();
    // The newest summary's archive is the one maxArchives keeps; the older summary's went.
    assert!(keys.contains(&later.archive_key));
    assert!(!keys.contains(&summary.archive_key));
    assert!(keys.contains(&first.archive_key) && keys.contains(&second.archive_key));
    let archives = archives_now(&rig.compactor);
    let args = RecallArgs {
        query: Some(bulky_figure(1)),
        ..RecallArgs::from_json("{}").unwrap()
    };
    let answer = archives.with(|a| a.recall_text(&args, 20_000)).unwrap();
    assert!(
        answer.contains(&format!("Net revenue {}", bulky_figure(1))),
        "{answer:.300}"
    );
}

#[test]
fn rehydrate_brings_back_a_cleared_body_a_message_names_by_its_entrys_id() {
    use context_compactor::core::store::rehydrate::Cooldown;
    let (memory, tokens) = bulky(8);
    let rig = Rig::with(
        memory,
        vec![],
        at_ninety_percent(tokens, Clearing::default()),
    );
    let result = compact(&rig, Trigger::Auto, None).unwrap();
    let id = &result.cleared[2].entry_id;
    let message = format!("What did {id} return?");
    let mut cooldown = Cooldown::default();
    let found = archives_now(&rig.compactor)
        .with(|a| a.rehydrate(&message, 20_000, &mut cooldown))
        .unwrap();
    assert_eq!(found.iterations, [3]);
    assert!(
        found
            .text
            .contains(&format!("Net revenue {}", bulky_figure(3))),
        "{:.300}",
        found.text
    );
}

/// A compaction the loop asks for that clears, then summarises, with `cancel` tripped as
/// `phase` begins.
fn cancelled_as(
    phase: Phase,
) -> (
    Rig,
    Vec<(String, String)>,
    Result<CompactionResultBox, CompactionError>,
) {
    let (memory, tokens) = bulky(8);
    let answers = vec![Answer::Text(valid_summary("Every report was read."))];
    let rig = Rig::with(memory, answers, clearing_then_summary(tokens));
    let before = rig.dump();
    let cancel = Cancel::default();
    rig.events.cancel_as(phase, cancel.clone());
    let outcome = run_ready(rig.compactor.compact_until(Trigger::Auto, cancel))
        .expect("nothing waits in memory")
        .map(Box::new);
    (rig, before, outcome)
}

#[test]
fn a_cancel_as_the_clearing_begins_stops_it_and_the_logs_are_unchanged() {
    let (rig, before, outcome) = cancelled_as(Phase::Clearing);
    assert_eq!(outcome.unwrap_err(), CompactionError::Aborted);
    assert_eq!(rig.dump(), before, "nothing was written");
    assert!(!holds_an_archive(&rig.memory));
    assert_eq!(rig.compactor.metrics().unwrap().clearings, 0);
}

#[test]
fn a_cancel_after_the_clearing_stood_says_so_and_the_clearing_is_counted() {
    for phase in [Phase::BuildingPrompt, Phase::Compacting, Phase::Validating] {
        let (rig, _, outcome) = cancelled_as(phase);
        let err = outcome.unwrap_err();
        assert_eq!(err.code(), ErrorCode::Aborted, "{phase:?}");
        let stood = err.clearing_stood().expect("the clearing is named");
        let listed = archives_now(&rig.compactor).with(|a| a.list()).unwrap();
        assert_eq!(
            (listed.len(), listed[0].rung, listed[0].key.as_str()),
            (1, Rung::Clear, stood.archive_key.as_str()),
            "{phase:?}"
        );
        assert_eq!(stood.cleared.len(), 4, "{phase:?}");
        assert_eq!(execution_text(&rig).matches(MARK).count(), 2, "{phase:?}");
        let message = err.to_string();
        // It said "cancelled before anything was written; the logs are unchanged" before.
        assert!(!message.contains("unchanged"), "{phase:?}: {message}");
        assert!(
            message.starts_with("The compaction was cancelled after its clearing, before a summary (the clearing that ran first stands: "),
            "{phase:?}: {message}"
        );
        let metrics = rig.compactor.metrics().unwrap();
        assert_eq!(
            (metrics.clearings, metrics.failed_compactions),
            (1, 0),
            "{phase:?}"
        );
    }
}
