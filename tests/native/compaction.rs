//! The compaction engine natively: rules, retry, archive, swap, rollback, events, metrics.
#![cfg(not(target_arch = "wasm32"))]
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::future::Future;

use common::*;
use context_compactor::core::error::ProviderError;
use context_compactor::core::error::{CompactionError, ErrorCode};
use context_compactor::core::log::iteration::parse_summary_header;
use context_compactor::core::log::stored_entry::Stored;
use context_compactor::core::log::tokens::estimate_tokens;
use context_compactor::core::model::clearing::Rung;
use context_compactor::core::model::fallback::FallbackPolicy;
use context_compactor::core::model::phase::Phase;
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::cancel::Cancel;
use context_compactor::core::ports::events::CompactionEvent;
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::steps::validation::validate_summary;

fn compact(
    rig: &Rig,
    trigger: Trigger,
) -> Result<context_compactor::core::model::outcome::CompactionResult, CompactionError> {
    run_ready(rig.compactor.compact(trigger)).expect("the compaction waited on nothing")
}

fn session(iterations: u32, answers: Vec<Answer>) -> Rig {
    let rig = Rig::with(MemoryStore::new(), answers, small_window());
    grow_session(&rig.logs, &rig.clock, iterations, 42);
    rig
}

#[test]
fn a_valid_summary_replaces_iterations_before_the_current_one() {
    let rig = session(
        6,
        vec![Answer::Text(valid_summary("north region leads with 91k."))],
    );
    let before = rig.logs.borrow().snapshot().unwrap();
    let selection = context_compactor::core::steps::selection::Selection::of(&before);
    let result = compact(&rig, Trigger::User).unwrap();

    assert_eq!(result.iterations, [1, 5]);
    assert_eq!(result.attempts, 1);
    assert!(result.tokens_after < result.tokens_before);
    assert_eq!(
        result.tokens_saved,
        result.tokens_before - result.tokens_after
    );
    assert!(
        (result.reduction - result.tokens_saved as f64 / result.tokens_before as f64).abs() < 1e-9
    );

    let after = rig.logs.borrow().snapshot().unwrap();
    assert_eq!(
        result.tokens_after,
        after.estimate_tokens(),
        "counted by difference, exactly"
    );
    assert_eq!(result.tokens_before, before.estimate_tokens());
    assert_eq!(parse_summary_header(&after.reasoning[0]), Some((1, 5)));
    assert!(after.reasoning[0].ends_with("=== END COMPACTED SUMMARY ==="));
    assert!(after.reasoning[0].contains("north region leads with 91k."));
    // Iteration 6 is kept verbatim, in all three logs.
    assert_eq!(after.reasoning[1..], selection.kept.reasoning[..]);
    assert_eq!(after.execution, selection.kept.execution);
    assert_eq!(after.tool_activity, selection.kept.tool_activity);
    assert!(after.reasoning[1].starts_with("=== ITERATION 6 ==="));

    // The archive holds the originals exactly.
    let archive = rig
        .compactor
        .shelf()
        .with_archives(|a| a.read(&result.archive_key))
        .unwrap();
    let originals = selection.originals();
    assert_eq!(archive.data.reasoning_log, originals.reasoning);
    assert_eq!(archive.data.execution_log, originals.execution);
    assert_eq!(archive.data.tool_activity_log, originals.tool_activity);
    assert_eq!(archive.iterations, vec![1, 2, 3, 4, 5]);
    assert_eq!(archive.trigger, "user");
    assert_eq!(rig.compactor.phase(), Phase::Complete);
    assert!(!rig.compactor.frozen());

    let metrics = rig.compactor.metrics().unwrap();
    assert_eq!(
        (metrics.total_compactions, metrics.successful_compactions),
        (1, 1)
    );
    assert_eq!(metrics.total_tokens_saved, result.tokens_saved);
}

#[test]
fn events_follow_the_api_order_and_progress_never_goes_down() {
    let rig = session(
        5,
        vec![
            Answer::Text("no sections".into()),
            Answer::Text(valid_summary("ok after retry, 12 rows")),
        ],
    );
    let result = compact(&rig, Trigger::User).unwrap();
    let events = rig.events.events();
    let names = rig.events.names();
    assert_eq!(names.first(), Some(&"compaction_start"));
    assert_eq!(names.last(), Some(&"compaction_complete"));
    let archived = names
        .iter()
        .position(|n| *n == "compaction_archived")
        .unwrap();
    let phases: Vec<Phase> = events
        .iter()
        .filter_map(|e| match e {
            CompactionEvent::PhaseChange { phase, .. } => Some(*phase),
            _ => None,
        })
        .collect();
    use Phase::*;
    assert_eq!(
        phases,
        vec![
            Freezing,
            Gathering,
            BuildingPrompt,
            Compacting,
            Validating,
            Retrying,
            Compacting,
            Validating,
            Archiving,
            Replacing,
            RecordingMetrics,
            Unfreezing,
            Complete
        ]
    );
    let replacing = events
        .iter()
        .position(|e| {
            matches!(
                e,
                CompactionEvent::PhaseChange {
                    phase: Replacing,
                    ..
                }
            )
        })
        .unwrap();
    assert!(archived < replacing, "archive before replace");
    let percents: Vec<u8> = events
        .iter()
        .filter_map(|e| match e {
            CompactionEvent::Progress { percent, .. } => Some(*percent),
            _ => None,
        })
        .collect();
    assert!(percents.windows(2).all(|w| w[0] <= w[1]), "{percents:?}");
    assert_eq!(percents.last(), Some(&100));
    match events.last().unwrap() {
        CompactionEvent::Complete { result: r } => assert_eq!(**r, result),
        other => panic!("{other:?}"),
    }
    // The phase-change chain is consistent: each previous is the last phase.
    let mut last = Idle;
    for e in &events {
        if let CompactionEvent::PhaseChange { phase, previous } = e {
            assert_eq!(*previous, last);
            last = *phase;
        }
    }
}

#[test]
fn a_summary_missing_sections_is_retried_once_telling_the_model_what_was_missing() {
    let missing = "### 🎯 OBJECTIVE ACHIEVED\n- done with the grouping of all the regional totals for the report\n### 🔧 TOOLS USED SUCCESSFULLY\n- vfs";
    let provider = ScriptedProvider::new(vec![
        Answer::Text(missing.into()),
        Answer::Text(valid_summary("second try")),
    ]);
    let rig = Rig::scripted(MemoryStore::new(), provider.clone(), small_window());
    grow_session(&rig.logs, &rig.clock, 5, 1);
    let result = compact(&rig, Trigger::User).unwrap();
    assert_eq!(result.attempts, 2);
    assert_eq!(provider.calls(), 2);
    let prompts = provider.prompts.borrow();
    assert!(prompts[1].starts_with(&prompts[0]));
    assert!(prompts[1].contains("YOUR PREVIOUS ANSWER WAS REJECTED"));
    assert!(
        prompts[1].contains("### 📊 KEY DISCOVERIES")
            && prompts[1].contains("### ✅ SUCCESSFUL SOLUTIONS")
    );
    assert_eq!(
        rig.timer.waits_as_told(),
        vec![2000],
        "one retry after retryDelayMs"
    );
    let usage = result.usage.expect("the provider reported tokens");
    assert_eq!(
        (usage.prompt_tokens, usage.output_tokens),
        (2000, 200),
        "summed over both attempts"
    );
    let metrics = rig.compactor.metrics().unwrap();
    assert_eq!(
        (metrics.total_prompt_tokens, metrics.total_output_tokens),
        (2000, 200)
    );
}

#[test]
fn missing_sections_twice_fails_with_invalid_summary_and_leaves_everything_as_it_was() {
    let bad = "### 🎯 OBJECTIVE ACHIEVED\n- only this section, which is long enough to pass the length rule easily";
    let rig = session(
        5,
        vec![
            Answer::Text(bad.into()),
            Answer::Text(bad.into()),
            Answer::Text(valid_summary("never asked")),
        ],
    );
    let before = rig.dump();
    let err = compact(&rig, Trigger::User).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidSummary);
    assert!(err.to_string().contains("KEY DISCOVERIES"));
    assert_eq!(rig.dump(), before, "logs and archives untouched");
    assert_eq!(rig.compactor.phase(), Phase::Error);
    let metrics = rig.compactor.metrics().unwrap();
    assert_eq!((metrics.failed_compactions, metrics.total_attempts), (1, 2));
    assert!(matches!(
        rig.events.events().last(),
        Some(CompactionEvent::Error {
            code: "invalid_summary",
            phase: Phase::Validating,
            ..
        })
    ));
}

#[test]
fn a_provider_error_is_retried_once_and_then_reported_with_its_code() {
    let down = ProviderError::Http {
        status: 503,
        message: "overloaded".into(),
        retry_after_ms: None,
        lasting: false,
    };
    let rig = session(
        5,
        vec![
            Answer::fail(down.clone()),
            Answer::Text(valid_summary("recovered")),
        ],
    );
    assert_eq!(compact(&rig, Trigger::User).unwrap().attempts, 2);

    let rig = session(5, vec![Answer::fail(down.clone()), Answer::fail(down)]);
    let before = rig.dump();
    assert_eq!(
        compact(&rig, Trigger::User).unwrap_err().code(),
        ErrorCode::LlmHttp
    );
    assert_eq!(rig.dump(), before);
}

#[test]
fn a_rejected_key_is_not_retried_and_a_429_waits_as_told() {
    let forbidden = ProviderError::Http {
        status: 403,
        message: "API key not valid".into(),
        retry_after_ms: None,
        lasting: false,
    };
    let provider = ScriptedProvider::new(vec![
        Answer::fail(forbidden),
        Answer::Text(valid_summary("x")),
    ]);
    let rig = Rig::scripted(MemoryStore::new(), provider.clone(), small_window());
    grow_session(&rig.logs, &rig.clock, 5, 3);
    assert_eq!(
        compact(&rig, Trigger::User).unwrap_err().code(),
        ErrorCode::LlmHttp
    );
    assert_eq!(provider.calls(), 1);

    let limited = ProviderError::Http {
        status: 429,
        message: "quota".into(),
        retry_after_ms: Some(26_000),
        lasting: false,
    };
    let rig = session(
        5,
        vec![
            Answer::fail(limited),
            Answer::Text(valid_summary("after the wait")),
        ],
    );
    compact(&rig, Trigger::User).unwrap();
    assert_eq!(rig.timer.waits_as_told(), vec![26_000]);
    // The app hears progress at least every 250 ms of the wait.
    let told = rig.events.events();
    let progress = told
        .iter()
        .filter(|e| matches!(e, CompactionEvent::Progress { .. }));
    assert!(progress.count() >= 26_000 / 250);
}

#[test]
fn a_provider_that_never_answers_times_out() {
    let rig = session(5, vec![Answer::Hang, Answer::Hang]);
    let before = rig.dump();
    let err = compact(&rig, Trigger::User).unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmTimeout);
    assert_eq!(rig.timer.waits_as_told(), vec![30_000, 2_000, 30_000]);
    assert_eq!(rig.dump(), before);
    // The message names the option that sets the limit, and the limit.
    assert_eq!(
        err.to_string(),
        "the model did not answer within timeoutMs (30000 ms)"
    );
    assert_eq!(
        retry_message(&rig).as_deref(),
        Some("The model did not answer in time; attempt 2 of 2 in 2.0 s")
    );
}

/// The message of the first retry the app was told of.
fn retry_message(rig: &Rig) -> Option<String> {
    rig.events.events().into_iter().find_map(|e| match e {
        CompactionEvent::Retry { message, .. } => Some(message),
        _ => None,
    })
}

#[test]
fn a_failed_custom_provider_is_announced_in_plain_words() {
    let thrown = ProviderError::Failed("Error: socket hang up".into());
    let rig = session(
        5,
        vec![Answer::fail(thrown), Answer::Text(valid_summary("again"))],
    );
    compact(&rig, Trigger::User).unwrap();
    assert_eq!(
        retry_message(&rig).as_deref(),
        Some("The summary provider failed; attempt 2 of 2 in 2.0 s")
    );
}

#[test]
fn a_summary_over_its_budget_is_cut_to_it_with_one_call_and_keeps_every_fact() {
    let huge = valid_summary(&"every detail repeated at length, 12345 67890. ".repeat(400));
    let rig = session(5, vec![Answer::Text(huge.clone()), Answer::Text(huge)]);
    let ledger = rig.compactor.plan().unwrap().ledger;
    let result = compact(&rig, Trigger::User).unwrap();
    assert_eq!(result.attempts, 1);
    let budget = rig.compactor.plan().unwrap().summary_budget_tokens;
    assert!(
        estimate_tokens(&result.summary) <= budget,
        "{}",
        result.summary
    );
    assert!(result.tokens_after < result.tokens_before);
    assert_eq!(result.coverage.required, ledger);
    assert!(result.coverage.missing.is_empty());
}

#[test]
fn rules_refuse_with_reasons_and_context_limit_errors_skip_the_usage_rule() {
    let rig = session(2, vec![Answer::Text(valid_summary("x"))]);
    let err = compact(&rig, Trigger::User).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotAllowed);
    assert!(rig
        .compactor
        .can_compact()
        .unwrap()
        .unwrap()
        .to_string()
        .contains("at least 3 completed"));
    assert_eq!(
        rig.compactor.phase(),
        Phase::Idle,
        "a refused request changes no phase"
    );

    let roomy = CompactorSettings {
        context_window_tokens: 1_000_000,
        ..Default::default()
    };
    let rig = Rig::with(
        MemoryStore::new(),
        vec![Answer::Text(valid_summary("limit hit"))],
        roomy,
    );
    grow_session(&rig.logs, &rig.clock, 5, 9);
    assert!(rig
        .compactor
        .can_compact()
        .unwrap()
        .unwrap()
        .to_string()
        .contains("worth it from 60%"));
    assert_eq!(
        compact(&rig, Trigger::User).unwrap_err().code(),
        ErrorCode::NotAllowed
    );
    compact(&rig, Trigger::ContextLimitError).unwrap();
}

#[test]
fn a_second_compaction_while_one_runs_is_busy() {
    let rig = session(5, vec![Answer::Hang]);
    rig.timer.never.set(true);
    let mut first = Box::pin(rig.compactor.compact(Trigger::User));
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    assert!(first.as_mut().poll(&mut cx).is_pending());
    assert!(rig.compactor.frozen());
    assert_eq!(rig.compactor.phase(), Phase::Compacting);
    let err = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Busy);
    assert!(rig
        .compactor
        .can_compact()
        .unwrap()
        .unwrap()
        .to_string()
        .contains("already running"));
    assert_eq!(
        run_ready(rig.compactor.rollback("gdrs_archived_logs_1"))
            .unwrap()
            .unwrap_err()
            .code(),
        ErrorCode::Busy
    );
}

#[test]
fn a_running_iteration_is_waited_for_and_appends_during_compaction_survive() {
    let rig = session(5, vec![Answer::Text(valid_summary("with appends"))]);
    rig.logs.borrow_mut().start_iteration().unwrap();
    rig.logs
        .borrow_mut()
        .append_reasoning("iteration 6 is thinking")
        .unwrap();
    let logs = rig.logs.clone();
    *rig.timer.on_sleep.borrow_mut() = Some(Box::new(move |count| {
        if count == 3 {
            logs.borrow_mut().finish_iteration();
        }
    }));
    let logs = rig.logs.clone();
    *rig.provider.on_call.borrow_mut() = Some(Box::new(move || {
        let mut logs = logs.borrow_mut();
        logs.start_iteration().unwrap();
        logs.append_reasoning("appended while compacting").unwrap();
        logs.append_execution(context_compactor::core::log::entries::ExecutionInput {
            success: true,
            code: "late()".into(),
            ..Default::default()
        })
        .unwrap();
    }));
    let result = compact(&rig, Trigger::User).unwrap();
    assert_eq!(result.iterations, [1, 5]);
    let after = rig.logs.borrow().snapshot().unwrap();
    assert_eq!(
        result.tokens_after,
        after.estimate_tokens(),
        "appends counted too"
    );
    assert_eq!(rig.timer.waits.borrow()[..3], [50, 50, 50]);
    assert!(rig.events.events().iter().any(|e| matches!(
        e,
        CompactionEvent::PhaseChange {
            phase: Phase::Waiting,
            ..
        }
    )));
    let reasoning = rig.logs.borrow().reasoning_log().unwrap();
    assert_eq!(
        &reasoning[1..],
        [
            "=== ITERATION 6 ===",
            "iteration 6 is thinking",
            "=== ITERATION 7 ===",
            "appended while compacting"
        ]
    );
    let executions = rig.logs.borrow().snapshot().unwrap().execution;
    assert_eq!(executions.last().unwrap().fields().code(), "late()");
    assert_eq!(executions.last().unwrap().stated_iteration(), Some(7));
}

#[test]
fn rollback_restores_the_originals_exactly_and_keeps_later_appends() {
    let rig = session(6, vec![Answer::Text(valid_summary("to be rolled back"))]);
    let before = rig.logs.borrow().snapshot().unwrap();
    let result = compact(&rig, Trigger::User).unwrap();
    rig.logs
        .borrow_mut()
        .append_reasoning("written after the compaction")
        .unwrap();
    rig.events.clear();
    run_ready(rig.compactor.rollback(&result.archive_key))
        .unwrap()
        .unwrap();
    let after = rig.logs.borrow().snapshot().unwrap();
    let mut expected = before.clone();
    expected
        .reasoning
        .push(Stored::encode("written after the compaction"));
    assert_eq!(after, expected);
    assert!(
        rig.memory.get(&result.archive_key).unwrap().is_none(),
        "a restored archive is removed"
    );
    assert_eq!(rig.events.names().last(), Some(&"compaction_rolled_back"));
    // A second rollback finds no archive (restored archives are removed).
    let err = run_ready(rig.compactor.rollback(&result.archive_key))
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ArchiveMissing);
    assert_eq!(rig.logs.borrow().snapshot().unwrap(), expected);
}

#[test]
fn plan_reports_without_calling_the_provider() {
    let provider = ScriptedProvider::new(vec![]);
    let rig = Rig::scripted(MemoryStore::new(), provider.clone(), small_window());
    grow_session(&rig.logs, &rig.clock, 6, 5);
    let plan = rig.compactor.plan().unwrap();
    assert_eq!(plan.iterations, [1, 5]);
    let snapshot = rig.logs.borrow().snapshot().unwrap();
    let selection = context_compactor::core::steps::selection::Selection::of(&snapshot);
    assert_eq!(plan.entries.reasoning, selection.reasoning.len());
    assert_eq!(plan.entries.execution, selection.execution.len());
    assert_eq!(
        plan.tokens_to_compact,
        selection.originals().estimate_tokens()
    );
    assert!(plan.prompt_tokens > plan.tokens_to_compact / 2);
    assert!(plan.estimated_tokens_after < snapshot.estimate_tokens());
    assert_eq!(provider.calls(), 0);
    assert!(rig
        .compactor
        .build_prompt()
        .unwrap()
        .contains("## REASONING HISTORY"));
}

#[test]
fn a_full_store_at_the_archive_write_gives_storage_quota_and_changes_nothing() {
    let memory = MemoryStore::with_quota(9_000);
    let rig = Rig::with(
        memory,
        vec![Answer::Text(valid_summary("no room"))],
        small_window(),
    );
    grow_session(&rig.logs, &rig.clock, 5, 8);
    let before = rig.dump();
    let err = compact(&rig, Trigger::User).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StorageQuota, "{err}");
    assert_eq!(rig.dump(), before);
}

#[test]
fn archives_beyond_the_limit_or_expired_are_removed_at_the_next_compaction() {
    let settings = CompactorSettings {
        max_archives: 2,
        archive_expiry_days: 1.0,
        ..small_window()
    };
    let rig = Rig::offline(
        MemoryStore::new(),
        context_compactor::core::ports::clock::ManualClock::new(NOV_22_2026),
        settings,
    );
    for round in 0..3 {
        grow_session(&rig.logs, &rig.clock, 4, round);
        compact(&rig, Trigger::User).unwrap();
    }
    let archives = rig.compactor.shelf().with_archives(|a| a.list()).unwrap();
    assert_eq!(archives.len(), 2);
    assert!(
        archives[0].timestamp > archives[1].timestamp,
        "newest first"
    );
    rig.clock.advance(2.0 * 86_400_000.0);
    assert_eq!(
        rig.compactor
            .shelf()
            .with_archives(|a| a.list())
            .unwrap()
            .len(),
        0,
        "expired archives are not listed"
    );
    assert_eq!(
        rig.compactor.shelf().with_archives(|a| a.purge()).unwrap(),
        2
    );
}

#[test]
fn eviction_chooses_by_the_heads_and_removes_only_archives_that_read_whole() {
    let settings = CompactorSettings {
        max_archives: 1,
        ..small_window()
    };
    let rig = Rig::offline(
        MemoryStore::new(),
        context_compactor::core::ports::clock::ManualClock::new(NOV_22_2026),
        settings,
    );
    grow_session(&rig.logs, &rig.clock, 4, 0);
    let first = compact(&rig, Trigger::User).unwrap().archive_key;
    // The first archive's entries no longer read (its head still does); a second archive
    // has its fields in another order than the package writes them.
    let text = rig.memory.get(&first).unwrap().unwrap();
    let cut = text.find("\"data\"").unwrap() + 20;
    rig.memory.set(&first, &text[..cut]).unwrap();
    let timestamp: u64 = first.rsplit('_').next().unwrap().parse().unwrap();
    let older = |by: u64| first.replace(&timestamp.to_string(), &(timestamp - by).to_string());
    let reordered_key = older(10);
    let (head, rest) = text.split_at(text.find(",\"data\"").unwrap());
    let reordered = format!("{{{},{}}}", &rest[1..rest.len() - 1], &head[1..]);
    assert!(serde_json::from_str::<serde_json::Value>(&reordered).is_ok());
    rig.memory.set(&reordered_key, &reordered).unwrap();
    // A third covers so many iterations that its head is longer than the start read of it.
    let long_key = older(20);
    let listed = text.split("\"iterations\":").nth(1).unwrap();
    let listed = &listed[..=listed.find(']').unwrap()];
    let many: Vec<String> = (1..=1_500).map(|n| n.to_string()).collect();
    let long = text.replacen(listed, &format!("[{}]", many.join(",")), 1);
    assert!(long.find("\"data\"").unwrap() > 4_096);
    rig.memory.set(&long_key, &long).unwrap();

    rig.clock.advance(1_000.0);
    grow_session(&rig.logs, &rig.clock, 4, 1);
    let newest = compact(&rig, Trigger::User).unwrap().archive_key;
    assert!(rig.memory.get(&newest).unwrap().is_some());
    assert!(
        rig.memory.get(&reordered_key).unwrap().is_none(),
        "an archive in another field order is read whole and evicted"
    );
    assert!(
        rig.memory.get(&long_key).unwrap().is_none(),
        "an archive whose head is longer than its start is read whole and evicted"
    );
    assert_eq!(
        rig.memory.get(&first).unwrap().as_deref(),
        Some(&text[..cut]),
        "an archive whose entries do not read is left alone"
    );
}

#[test]
fn a_failed_auto_compaction_is_not_repeated_until_the_logs_grow() {
    // Without the fallback rung, which would store the package's own summary instead.
    let settings = CompactorSettings {
        fallback: FallbackPolicy::Off,
        ..small_window()
    };
    let answers = vec![Answer::Text("bad".into()), Answer::Text("bad".into())];
    let rig = Rig::with(MemoryStore::new(), answers, settings);
    grow_session(&rig.logs, &rig.clock, 8, 42);
    assert!(rig.compactor.should_auto_compact().unwrap());
    assert!(compact(&rig, Trigger::Auto).is_err());
    assert!(!rig.compactor.should_auto_compact().unwrap());
    grow_session(&rig.logs, &rig.clock, 2, 77);
    assert!(rig.compactor.should_auto_compact().unwrap());
}

/// A rollback takes no lease: before, entering its phase renewed the lease of the compaction
/// before it, and that lease, never given back, kept every other tab's compactions `busy` for
/// minutes.
#[test]
fn a_rollback_leaves_no_lease_that_holds_other_tabs_back() {
    let memory = MemoryStore::new();
    let clock = context_compactor::core::ports::clock::ManualClock::new(NOV_22_2026);
    let rig = Rig::offline(memory.clone(), clock.clone(), small_window());
    grow_session(&rig.logs, &clock, 5, 1);
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    clock.advance(5_000.0);
    run_ready(rig.compactor.rollback(&result.archive_key))
        .unwrap()
        .unwrap();
    assert_eq!(memory.get("gdrs_compaction_lock").unwrap(), None);
    let other_tab = Rig::offline(memory.clone(), clock.clone(), small_window());
    let other_tab = shelved(other_tab.compactor, |shelf| shelf.with_owner("another-tab"));
    let refusal = other_tab.can_compact().unwrap().map(|r| r.to_string());
    assert!(
        !refusal.as_deref().unwrap_or("").contains("another tab"),
        "{refusal:?}"
    );
}

/// A compaction whose steps take time lets the page run between them (a zero-length sleep, a
/// new task in the browser), so that a big one is no long task; one whose steps take no time
/// never waits. Both compact the same iterations.
#[test]
fn slow_steps_are_cut_into_short_tasks_and_fast_ones_never_wait() {
    let run = |clock: context_compactor::core::ports::clock::ManualClock| {
        let rig = Rig::offline(MemoryStore::new(), clock.clone(), small_window());
        grow_session(&rig.logs, &clock, 6, 3);
        let result = run_ready(rig.compactor.compact(Trigger::User))
            .unwrap()
            .unwrap();
        (result.iterations, rig.timer.breaks())
    };
    let (iterations, breaks) = run(context_compactor::core::ports::clock::ManualClock::new(
        NOV_22_2026,
    ));
    assert_eq!(breaks, 0);
    let slow = context_compactor::core::ports::clock::ManualClock::ticking(NOV_22_2026, 7.0);
    let (slow_iterations, slow_breaks) = run(slow);
    assert!(slow_breaks >= 2, "{slow_breaks} breaks");
    assert_eq!(slow_iterations, iterations);
}

/// `reasoningEntries()` describes the log a compaction left: the summary with the iterations
/// it replaced and its archive, then the kept iteration's header and text.
#[test]
fn reasoning_entries_name_the_summary_its_archive_and_the_kept_iteration() {
    use context_compactor::core::log::reasoning_entry::ReasoningKind;
    let rig = session(5, vec![Answer::Text(valid_summary("- Totals per region."))]);
    let result = compact(&rig, Trigger::User).unwrap();
    let entries = rig.logs.borrow().reasoning_entries().unwrap();
    let kinds: Vec<_> = entries
        .iter()
        .map(|e| (e.kind, e.iteration, e.iterations))
        .collect();
    assert_eq!(kinds[0], (ReasoningKind::Summary, None, Some([1, 4])));
    assert_eq!(
        entries[0].archive_key.as_deref(),
        Some(result.archive_key.as_str())
    );
    assert_eq!(kinds[1], (ReasoningKind::Header, Some(5), None));
    assert!(kinds[2..]
        .iter()
        .all(|k| *k == (ReasoningKind::Text, Some(5), None)));
    assert_eq!(
        kinds.len(),
        rig.logs.borrow().reasoning_log().unwrap().len()
    );
}

/// A compaction asked for while another runs is refused `busy`, even when the other has ended
/// by the time the new one is first polled (in the browser: `compact()` called by a listener of
/// `compaction_complete` started a second compaction once the first had finished). A
/// compaction dropped before it was polled leaves the compactor free.
#[test]
fn a_compaction_asked_for_while_another_runs_is_busy_whenever_it_is_awaited() {
    let rig = session(5, vec![Answer::Text(valid_summary("- Totals per region."))]);
    let first = rig.compactor.compact(Trigger::User);
    let second = rig.compactor.compact(Trigger::User);
    assert!(run_ready(first).unwrap().is_ok());
    let err = run_ready(second).unwrap().unwrap_err();
    assert_eq!(err.code(), ErrorCode::Busy);
    assert_eq!(rig.provider.calls(), 1);
    drop(rig.compactor.compact(Trigger::User));
    assert!(!rig.compactor.busy());
}

/// An archive the live summary names that is gone (deleted by other code, expired, evicted) is
/// reported, never met with a crash or an empty answer: `archives_lost` when a compactor
/// recovers, `archive_missing` naming the key from `recall`, `read` and `rollback`; recall
/// follows the chain of summaries to the archive that held the iteration.
#[test]
fn a_lost_archive_is_reported_by_event_and_by_archive_missing() {
    let rig = session(5, vec![Answer::Text(valid_summary("- Totals per region."))]);
    let first = compact(&rig, Trigger::User).unwrap();
    assert!(rig
        .compactor
        .shelf()
        .with_archives(|a| a.recall(2))
        .unwrap()
        .is_some());
    assert_eq!(
        rig.compactor.shelf().with_archives(|a| a.lost()).unwrap(),
        Vec::<String>::new()
    );
    rig.memory.remove(&first.archive_key).unwrap();

    let missing = |err: CompactionError| match err {
        CompactionError::ArchiveMissing { key } => key,
        other => panic!("expected archive_missing, got {other:?}"),
    };
    let err = rig
        .compactor
        .shelf()
        .with_archives(|a| a.recall(2))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ArchiveMissing);
    assert_eq!(missing(err), first.archive_key);
    let err = rig
        .compactor
        .shelf()
        .with_archives(|a| a.read(&first.archive_key))
        .unwrap_err();
    assert_eq!(missing(err), first.archive_key);
    let err = run_ready(rig.compactor.rollback(&first.archive_key))
        .unwrap()
        .unwrap_err();
    assert_eq!(err.key(), Some(first.archive_key.as_str()));
    // The live iteration is no archive's: nothing to report.
    assert_eq!(
        rig.compactor
            .shelf()
            .with_archives(|a| a.recall(5))
            .unwrap(),
        None
    );

    rig.events.clear();
    run_ready(rig.compactor.recover()).unwrap().unwrap();
    assert!(rig
        .events
        .events()
        .contains(&CompactionEvent::ArchivesLost {
            keys: vec![first.archive_key.clone()]
        }));
}

/// Across chained compactions the archive that first compacted an iteration is the one
/// reported missing, not the later one that still holds its summary.
#[test]
fn recall_reports_the_missing_archive_down_the_chain() {
    let rig = session(
        5,
        vec![
            Answer::Text(valid_summary("- Totals per region.")),
            Answer::Text(valid_summary("- Totals per region, again.")),
        ],
    );
    let first = compact(&rig, Trigger::User).unwrap();
    grow_session(&rig.logs, &rig.clock, 5, 43);
    let second = compact(&rig, Trigger::User).unwrap();
    assert_ne!(first.archive_key, second.archive_key);
    rig.memory.remove(&first.archive_key).unwrap();
    let err = rig
        .compactor
        .shelf()
        .with_archives(|a| a.recall(2))
        .unwrap_err();
    assert_eq!(err.key(), Some(first.archive_key.as_str()));
    assert!(rig
        .compactor
        .shelf()
        .with_archives(|a| a.recall(7))
        .unwrap()
        .is_some());
    // Only the archive a live summary names counts as lost for the event.
    assert_eq!(
        rig.compactor.shelf().with_archives(|a| a.lost()).unwrap(),
        Vec::<String>::new()
    );
}

#[test]
fn an_entry_nested_deeper_than_a_parser_recursion_limit_is_compacted_and_put_back_exactly() {
    // `JSON.parse` reads an app's result nested 500 deep; the logs must not read as corrupt.
    let rig = session(
        6,
        vec![Answer::Text(valid_summary("deep results were kept."))],
    );
    let key = "gdrs_execution_log";
    let text = rig.memory.get(key).unwrap().unwrap();
    let deep = format!(
        r#"{{"iteration":2,"success":true,"code":"nest()","result":{}0{}}}"#,
        "[".repeat(500),
        "]".repeat(500)
    );
    let spliced = format!("[{deep},{}", &text[1..]);
    rig.memory.set(key, &spliced).unwrap();
    let before = rig.logs.borrow().snapshot().unwrap();
    let result = compact(&rig, Trigger::User).unwrap();
    let archived = rig.memory.get(&result.archive_key).unwrap().unwrap();
    assert!(
        archived.contains(&deep),
        "the archive holds the entry as stored"
    );
    run_ready(rig.compactor.rollback(&result.archive_key))
        .unwrap()
        .unwrap();
    assert_eq!(rig.memory.get(key).unwrap().unwrap(), spliced);
    assert_eq!(rig.logs.borrow().snapshot().unwrap(), before);
}

/// A session whose model is down for `calls` calls (HTTP 503 each), under `fallback`.
fn model_down(calls: usize, fallback: FallbackPolicy) -> Rig {
    let down = ProviderError::Http {
        status: 503,
        message: "overloaded".into(),
        retry_after_ms: None,
        lasting: false,
    };
    let answers = (0..calls).map(|_| Answer::fail(down.clone())).collect();
    let settings = CompactorSettings {
        fallback,
        ..small_window()
    };
    let rig = Rig::with(MemoryStore::new(), answers, settings);
    grow_session(&rig.logs, &rig.clock, 6, 42);
    rig
}

#[test]
fn the_loops_compaction_stores_the_packages_own_summary_when_the_model_fails() {
    let rig = model_down(2, FallbackPolicy::Loop);
    let result = compact(&rig, Trigger::ContextLimitError).unwrap();
    assert_eq!(result.rung, Rung::Fallback);
    assert_eq!(result.attempts, 2, "the model's calls");
    let reason = result.fallback.clone().expect("why");
    assert_eq!(reason.code, "llm_http");
    assert!(reason.message.contains("503"), "{reason:?}");
    assert!(validate_summary(&result.summary).valid);
    // The UI hears why before the compaction completes.
    let names = rig.events.names();
    let at = |name| names.iter().position(|n| *n == name).unwrap();
    assert!(
        at("compaction_fallback") < at("compaction_complete"),
        "{names:?}"
    );
    let fallback = rig
        .events
        .events()
        .into_iter()
        .find_map(|event| match event {
            CompactionEvent::Fallback { reason } => Some(reason),
            _ => None,
        });
    assert_eq!(fallback, Some(reason));
    // Its entry says whose summary it is; its archive is a summary's; the metrics count it.
    let entry = rig.logs.borrow().reasoning_log().unwrap()[0].clone();
    assert!(
        entry.contains("Summarised without the model, which failed (llm_http)"),
        "{entry}"
    );
    let info = archives_now(&rig.compactor).with(|a| a.list());
    assert_eq!(info.unwrap()[0].rung, Rung::Summarize);
    assert_eq!(rig.compactor.metrics().unwrap().fallbacks, 1);
    // A rollback puts the originals back as after any summary.
    run_ready(rig.compactor.rollback(&result.archive_key))
        .unwrap()
        .unwrap();
    assert!(rig
        .logs
        .borrow()
        .reasoning_log()
        .unwrap()
        .iter()
        .all(|entry| parse_summary_header(entry).is_none()));
}

/// The loop over a provider that is down (HTTP 503 on every call): the first compaction asks
/// it (a call and its retry), the next ones within its rest fall back with no call and say
/// so, one after the rest asks again; the user's compaction always asks. Before, every
/// compaction of the loop asked twice, with the retry's wait between.
#[test]
fn a_provider_that_is_down_rests_instead_of_being_asked_at_every_compaction() {
    let rig = model_down(40, FallbackPolicy::Loop);
    let calls = || rig.provider.calls();
    let mut asked = Vec::new();
    for _ in 0..5 {
        let before = calls();
        let result = compact(&rig, Trigger::Auto).unwrap();
        assert_eq!(result.rung, Rung::Fallback);
        asked.push((calls() - before, result.fallback.unwrap().message));
        // Four iterations within ten seconds (the clock given does not move the logs' own).
        let standing = context_compactor::core::ports::clock::ManualClock::new(0.0);
        grow_session(&rig.logs, &standing, 4, asked.len() as u64);
        rig.clock.advance(10_000.0);
    }
    assert_eq!(asked[0].0, 2, "{asked:?}");
    for (calls, message) in &asked[1..5] {
        assert_eq!(*calls, 0, "{asked:?}");
        assert!(message.contains("503"), "{message}");
        assert!(
            message.contains("not asked: it failed before and rests for"),
            "{message}"
        );
    }
    rig.clock.advance(60_000.0);
    let before = calls();
    compact(&rig, Trigger::Auto).unwrap();
    assert_eq!(calls() - before, 2, "asked again after its rest");
    let before = calls();
    assert!(compact(&rig, Trigger::User).is_err());
    assert_eq!(calls() - before, 2, "the user's compaction asks");
}

#[test]
fn the_users_compaction_reports_the_failure_unless_fallback_is_always() {
    for (trigger, fallback) in [
        (Trigger::User, FallbackPolicy::Loop),
        (Trigger::Auto, FallbackPolicy::Off),
        (Trigger::ContextLimitError, FallbackPolicy::Off),
    ] {
        let rig = model_down(2, fallback);
        let before = rig.dump();
        let failed = compact(&rig, trigger);
        assert!(
            matches!(failed, Err(CompactionError::Provider(_))),
            "{trigger:?} {fallback:?}: {failed:?}"
        );
        assert_eq!(rig.dump(), before, "{trigger:?}: the logs byte for byte");
        assert!(!rig.events.names().contains(&"compaction_fallback"));
    }
    let rig = model_down(2, FallbackPolicy::Always);
    let result = compact(&rig, Trigger::User).unwrap();
    assert_eq!(result.rung, Rung::Fallback);
}

#[test]
fn a_refusal_or_a_cancel_is_never_covered_by_the_fallback() {
    // Too little to compact: refused, not summarised by the package.
    let rig = Rig::with(MemoryStore::new(), Vec::new(), small_window());
    grow_session(&rig.logs, &rig.clock, 1, 42);
    assert!(matches!(
        compact(&rig, Trigger::ContextLimitError),
        Err(CompactionError::NotAllowed(_))
    ));
    // Cancelled during the model's call: aborted, logs as before.
    let rig = Rig::with(MemoryStore::new(), vec![Answer::Hang], small_window());
    grow_session(&rig.logs, &rig.clock, 6, 42);
    rig.timer.never.set(true);
    let before = rig.dump();
    let cancel = Cancel::default();
    let compaction = rig
        .compactor
        .compact_until(Trigger::ContextLimitError, cancel.clone());
    let mut compaction = std::pin::pin!(compaction);
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    assert!(compaction.as_mut().poll(&mut cx).is_pending());
    cancel.cancel();
    let outcome = loop {
        if let std::task::Poll::Ready(outcome) = compaction.as_mut().poll(&mut cx) {
            break outcome;
        }
    };
    assert!(
        matches!(outcome, Err(CompactionError::Aborted)),
        "{outcome:?}"
    );
    assert_eq!(rig.dump(), before);
}

/// Four short iterations, compacted as the loop does after a context-limit error: no summary
/// of them could come out clearly smaller, so the compaction is refused saying so, with no
/// call. Before, the offline summary was judged and the compaction failed `invalid_summary`,
/// "the model's summary was rejected … do not fit in 0 tokens".
#[test]
fn too_little_to_compact_is_refused_not_summarised_and_rejected() {
    let clock = context_compactor::core::ports::clock::ManualClock::new(NOV_22_2026);
    let rig = Rig::offline(MemoryStore::new(), clock, CompactorSettings::default());
    {
        let mut logs = rig.logs.borrow_mut();
        for n in 1..=4 {
            logs.start_iteration().unwrap();
            logs.append_reasoning(&format!(
                "Step {n}: counted the rows of shard_{n}.csv and compared them with the report."
            ))
            .unwrap();
            logs.finish_iteration();
        }
    }
    let before = rig.dump();
    let refused = compact(&rig, Trigger::ContextLimitError).unwrap_err();
    let CompactionError::NotAllowed(reason) = &refused else {
        panic!("{refused:?}");
    };
    assert!(
        reason
            .to_string()
            .starts_with("Too little to compact: iterations 1-3 hold"),
        "{reason}"
    );
    assert_eq!(rig.dump(), before);
}
