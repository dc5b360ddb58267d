//! The coverage ledger: facts a summary must keep are checked, repaired or retried by name,
//! never lost in silence; what the model made up is marked, asked about or refused; pins survive
//! chained compactions; `recall` gives back the originals byte for byte.
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use common::*;
use context_compactor::core::error::{CompactionError, ErrorCode};
use context_compactor::core::log::entries::ExecutionInput;
use context_compactor::core::model::facts::{Fact, FactKind, Ledger};
use context_compactor::core::model::outcome::CompactionResult;
use context_compactor::core::model::reasons::Refusal;
use context_compactor::core::model::settings::{
    CompactorSettings, LinePolicy, MissingFacts, Trigger,
};
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::events::CompactionEvent;
use context_compactor::core::ports::storage::MemoryStore;
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::store::archive_record::read_archive;

fn compact(rig: &Rig) -> Result<CompactionResult, CompactionError> {
    run_ready(rig.compactor.compact(Trigger::User)).expect("the compaction waited on nothing")
}

fn session(iterations: u32, answers: Vec<Answer>) -> Rig {
    session_with(iterations, answers, small_window())
}

fn session_with(iterations: u32, answers: Vec<Answer>, settings: CompactorSettings) -> Rig {
    let rig = Rig::with(MemoryStore::new(), answers, settings);
    grow_session(&rig.logs, &rig.clock, iterations, 42);
    rig
}

/// `missingFacts: "fail"`: a lost fact is asked for again while retries allow, then the
/// compaction fails naming it.
fn failing_on_missing_facts() -> CompactorSettings {
    CompactorSettings {
        missing_facts: MissingFacts::Fail,
        ..small_window()
    }
}

/// The ledger the archive of `result` recorded.
fn ledger_of(rig: &Rig, result: &CompactionResult) -> Vec<Fact> {
    read_archive(&rig.memory, &result.archive_key)
        .unwrap()
        .expect("the archive exists")
        .ledger
        .expect("the archive records its ledger")
}

#[test]
fn a_summary_that_omits_a_required_fact_is_retried_naming_exactly_that_fact() {
    let rig = session_with(
        6,
        vec![
            Answer::Verbatim(valid_summary("north region leads.")),
            Answer::Text(valid_summary("north region leads.")),
        ],
        failing_on_missing_facts(),
    );
    let plan = rig.compactor.plan().unwrap();
    assert!(
        plan.ledger.len() >= 3,
        "goal and results: {:?}",
        plan.ledger
    );
    let result = compact(&rig).unwrap();
    assert_eq!(result.attempts, 2);
    let prompts = rig.provider.prompts.borrow();
    for fact in &plan.ledger {
        assert!(
            prompts[0].contains(&format!("- {fact}")),
            "the prompt lists {fact}"
        );
        assert!(
            prompts[1].contains(&format!("- Missing required fact: {fact}")),
            "the retry names {fact}"
        );
    }
    assert_eq!(result.coverage.required, plan.ledger);
    assert_eq!(result.coverage.kept, plan.ledger);
    assert!(result.coverage.missing.is_empty());
    let progress: Vec<String> = rig
        .events
        .events()
        .into_iter()
        .filter_map(|event| match event {
            CompactionEvent::Progress { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    let checking = format!("Checking the sections and {} facts", plan.ledger.len());
    assert!(progress.contains(&checking), "{progress:?}");
}

#[test]
fn a_retry_names_only_the_facts_still_missing() {
    let rig = session(6, vec![Answer::Verbatim(String::new())]);
    let ledger = rig.compactor.plan().unwrap().ledger;
    // Keeps every fact but the last result (whose numbers no other fact repeats).
    let dropped = ledger
        .iter()
        .rev()
        .find(|fact| fact.starts_with("Result of "))
        .expect("a result fact")
        .clone();
    let mut partial = valid_summary("north region leads.");
    for fact in ledger.iter().filter(|fact| **fact != dropped) {
        partial.push_str(&format!("\n- {fact}"));
    }
    let rig = session_with(
        6,
        vec![Answer::Verbatim(partial), Answer::Text(valid_summary("x"))],
        failing_on_missing_facts(),
    );
    compact(&rig).unwrap();
    let retry = rig.provider.prompts.borrow()[1].clone();
    let named: Vec<&str> = retry
        .lines()
        .filter_map(|l| l.strip_prefix("- Missing required fact: "))
        .collect();
    assert_eq!(named, vec![dropped.as_str()]);
}

#[test]
fn a_summary_that_omits_a_fact_twice_fails_naming_it_and_the_logs_stay() {
    let rig = session_with(
        6,
        vec![
            Answer::Verbatim(valid_summary("north region leads.")),
            Answer::Verbatim(valid_summary("north region leads, again.")),
        ],
        failing_on_missing_facts(),
    );
    let ledger = rig.compactor.plan().unwrap().ledger;
    let before = rig.dump();
    let err = compact(&rig).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidSummary);
    let message = err.to_string();
    for fact in &ledger {
        assert!(message.contains(fact), "{message} names {fact}");
    }
    assert_eq!(rig.dump(), before, "the logs and every other key unchanged");
    assert!(!holds_an_archive(&rig.memory));
}

#[test]
fn pinned_facts_survive_three_chained_compactions_until_unpinned() {
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let rig = Rig::offline(memory, clock.clone(), small_window());
    let euros = rig
        .logs
        .borrow_mut()
        .pin("Report every amount in euros; the customer reads ledger LGR-2026-0042.")
        .unwrap();
    let vault = rig
        .logs
        .borrow_mut()
        .pin("The API token lives in vault key api_token_v3, never in code.")
        .unwrap();
    for round in 1..=3u64 {
        grow_session(&rig.logs, &clock, 6, round);
        let result = compact(&rig).unwrap_or_else(|e| panic!("round {round}: {e}"));
        for pin in ["LGR-2026-0042", "api_token_v3"] {
            assert!(result.summary.contains(pin), "round {round} keeps {pin}");
            assert!(
                result.coverage.kept.iter().any(|fact| fact.contains(pin)),
                "round {round} checked {pin}"
            );
        }
        let live = rig.logs.borrow().reasoning_log().unwrap();
        assert!(live[0].contains("LGR-2026-0042") && live[0].contains("api_token_v3"));
    }
    assert!(rig.logs.borrow_mut().unpin(&euros).unwrap());
    assert!(
        !rig.logs.borrow_mut().unpin(&euros).unwrap(),
        "unpinned once"
    );
    assert_eq!(rig.logs.borrow().pins().unwrap().len(), 1);
    assert_eq!(rig.logs.borrow().pins().unwrap()[0].id, vault);
    let ledger = rig.compactor.plan().unwrap().ledger;
    assert!(ledger.iter().any(|fact| fact.contains("api_token_v3")));
    assert!(!ledger
        .iter()
        .any(|fact| fact.starts_with("Report every amount")));
}

#[test]
fn a_fact_kept_by_one_summary_is_required_of_the_next() {
    let rig = session_with(
        6,
        vec![
            Answer::Text(valid_summary("first")),
            // The second summary has the new facts but not the first one's goal.
            Answer::Verbatim(String::new()),
            Answer::Text(valid_summary("second, with everything")),
        ],
        failing_on_missing_facts(),
    );
    let first = compact(&rig).unwrap();
    let first_ledger = ledger_of(&rig, &first);
    let goal = first_ledger
        .iter()
        .find(|f| f.kind == FactKind::Goal)
        .expect("a goal")
        .clone();
    grow_session(&rig.logs, &rig.clock, 5, 7);
    let second_plan = rig.compactor.plan().unwrap();
    for fact in &first_ledger {
        // An identifier is drawn again, with the iteration that now uses it.
        let again = |text: &String| {
            fact.kind == FactKind::Identifier && text.starts_with(&format!("`{}`", fact.exact[0]))
        };
        assert!(
            fact.kind == FactKind::Failure
                || fact.kind == FactKind::Result
                || second_plan.ledger.contains(&fact.text)
                || second_plan.ledger.iter().any(again),
            "{} is carried forward",
            fact.text
        );
    }
    assert!(second_plan.ledger.contains(&goal.text));
    let second = compact(&rig).unwrap();
    assert_eq!(second.attempts, 2, "the empty answer was retried");
    let retry = rig.provider.prompts.borrow()[2].clone();
    assert!(retry.contains(&format!("- Missing required fact: {}", goal.text)));
    // Results of a task carry their id forward: the newer value replaces the older one.
    let second_ledger = ledger_of(&rig, &second);
    for fact in first_ledger.iter().filter(|f| f.kind == FactKind::Result) {
        assert!(second_ledger.iter().any(|g| g.id == fact.id), "{}", fact.id);
    }
}

/// The entries of iteration `n`, as stored (JSON text), log by log.
fn stored_entries_of(rig: &Rig, n: u32) -> [Vec<String>; 3] {
    let snapshot = rig.logs.borrow().snapshot().unwrap();
    let placed = snapshot.placed_iterations();
    let texts = |entries: Vec<String>, numbers: &[u32]| -> Vec<String> {
        entries
            .into_iter()
            .zip(numbers)
            .filter(|(_, m)| **m == n)
            .map(|(e, _)| e)
            .collect()
    };
    [
        texts(
            snapshot
                .reasoning
                .iter()
                .map(|e| e.json().to_owned())
                .collect(),
            &placed.entries.reasoning,
        ),
        texts(
            snapshot
                .execution
                .iter()
                .map(|e| e.json().to_owned())
                .collect(),
            &placed.entries.execution,
        ),
        texts(
            snapshot
                .tool_activity
                .iter()
                .map(|e| e.json().to_owned())
                .collect(),
            &placed.entries.tool_activity,
        ),
    ]
}

fn recalled(rig: &Rig, n: u32) -> [Vec<String>; 3] {
    let data = rig
        .compactor
        .shelf()
        .with_archives(|a| a.recall(n))
        .unwrap()
        .unwrap_or_else(|| panic!("iteration {n} is archived"));
    [
        data.reasoning_log
            .iter()
            .map(|e| e.json().to_owned())
            .collect(),
        data.execution_log
            .iter()
            .map(|e| e.json().to_owned())
            .collect(),
        data.tool_activity_log
            .iter()
            .map(|e| e.json().to_owned())
            .collect(),
    ]
}

#[test]
fn recall_returns_the_originals_byte_for_byte_after_two_chained_compactions() {
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let rig = Rig::offline(memory, clock.clone(), small_window());
    grow_session(&rig.logs, &clock, 6, 3);
    let iteration_2 = stored_entries_of(&rig, 2);
    assert!(iteration_2.iter().all(|log| !log.is_empty()));
    let first = compact(&rig).unwrap();
    grow_session(&rig.logs, &clock, 5, 4);
    let iteration_8 = stored_entries_of(&rig, 8);
    assert!(!iteration_8[0].is_empty());
    let second = compact(&rig).unwrap();
    assert_eq!(second.iterations, [1, 10]);

    assert_eq!(recalled(&rig, 2), iteration_2, "from the first archive");
    assert_eq!(recalled(&rig, 8), iteration_8, "from the second archive");
    // The summary names where its originals are.
    let live = rig.logs.borrow().reasoning_log().unwrap();
    assert!(live[0].contains(&format!("archive {}", second.archive_key)));
    let archived_summary = read_archive(&rig.memory, &second.archive_key)
        .unwrap()
        .unwrap()
        .data
        .reasoning_log[0]
        .to_string();
    assert!(archived_summary.contains(&format!("archive {}", first.archive_key)));
    // The live iteration is not archived; a deleted archive is named, never an empty answer
    // (it recalled `None` before #27).
    assert_eq!(
        rig.compactor
            .shelf()
            .with_archives(|a| a.recall(11))
            .unwrap(),
        None
    );
    context_compactor::core::ports::timer::run_ready(
        rig.compactor.shelf().delete(&first.archive_key),
    )
    .unwrap()
    .unwrap();
    let err = rig
        .compactor
        .shelf()
        .with_archives(|a| a.recall(2))
        .unwrap_err();
    assert_eq!(err.key(), Some(first.archive_key.as_str()));
}

/// The earlier text is read for the identifiers the current iteration names a slice at a time
/// (at 736K tokens, at once, it was one task of 55 ms): slices of 64 bytes find what one pass
/// finds, in many steps.
#[test]
fn the_identifiers_scan_in_slices_finds_what_one_pass_finds() {
    use context_compactor::core::steps::ledger::{referenced_identifiers, IdentifierScan};
    use context_compactor::core::steps::selection::Selection;
    let rig = session(40, vec![]);
    {
        let mut logs = rig.logs.borrow_mut();
        logs.start_iteration().unwrap();
        logs.append_reasoning("Iteration 41: users.json, sales.csv and events.log again.")
            .unwrap();
    }
    let snapshot = rig.logs.borrow().snapshot().unwrap();
    let selection = Selection::of(&snapshot);
    let at_once = referenced_identifiers(&selection);
    assert!(at_once.len() >= 3, "{at_once:?}");
    let mut scan = IdentifierScan::of(&selection);
    let mut steps = 1;
    while !scan.advance(&selection, 64) {
        steps += 1;
    }
    assert_eq!(scan.found(), at_once);
    assert!(steps > 1, "{steps} steps");
}

#[test]
fn the_ledger_holds_identifiers_the_current_iteration_still_uses() {
    let rig = session(5, vec![Answer::Text(valid_summary("x"))]);
    {
        let mut logs = rig.logs.borrow_mut();
        logs.start_iteration().unwrap();
        logs.append_reasoning(
            "Iteration 6: back to notes/iteration-2.md and users.json to finish the report.",
        )
        .unwrap();
        logs.finish_iteration();
    }
    let ledger = rig.compactor.ledger().unwrap();
    let identifiers: Vec<&str> = ledger
        .facts
        .iter()
        .filter(|f| f.kind == FactKind::Identifier)
        .map(|f| f.text.as_str())
        .collect();
    // Each with its use, never a bare token.
    assert_eq!(
        identifiers,
        vec![
            "`notes/iteration-2.md`: named in iteration 2, still in use at iteration 6",
            "`users.json`: named in iteration 1, still in use at iteration 6"
        ]
    );
    let result = compact(&rig).unwrap();
    assert!(result.summary.contains("notes/iteration-2.md"));
}

/// Pins that do not read are set aside, never lost and never a stop: before, every compaction
/// failed `storage_corrupt` until the key was removed by hand, and the window stayed full.
#[test]
fn unreadable_pins_are_set_aside_kept_and_named_and_the_compaction_runs() {
    use context_compactor::core::model::set_aside::SetAside;
    use context_compactor::core::ports::events::CompactionEvent;
    use context_compactor::core::ports::storage::KeyValueStore;
    let rig = session(6, vec![Answer::Text(valid_summary("x"))]);
    let damaged = "[{\"id\":";
    rig.memory.set("gdrs_pinned_facts", damaged).unwrap();
    // The loop's questions answer over it, as the compaction goes on over it (before, #80: each
    // threw storage_corrupt, and a loop that asks before it compacts stopped there).
    assert!(rig.compactor.should_auto_compact().is_ok());
    assert!(rig.compactor.can_compact().is_ok());
    assert!(rig.compactor.plan().is_ok());
    assert!(rig.compactor.context_usage().is_ok());
    compact(&rig).expect("the compaction runs");
    assert_eq!(rig.memory.get("gdrs_pinned_facts").unwrap(), None);
    assert_eq!(
        rig.memory
            .get("gdrs_pinned_facts_corrupt")
            .unwrap()
            .as_deref(),
        Some(damaged),
        "kept byte for byte"
    );
    assert!(rig.events.events().iter().any(|event| matches!(event,
        CompactionEvent::SetAside(SetAside { key, kept_as: Some(kept), .. })
            if key == "gdrs_pinned_facts" && kept == "gdrs_pinned_facts_corrupt")));
    rig.logs
        .borrow_mut()
        .pin("Region 7 stays out.")
        .expect("pins work again");
}

#[test]
fn a_short_session_still_compacts_offline_with_every_fact_kept() {
    // The no-bundler consumer page's session: five short iterations in an 800-token window, at
    // many clock readings (ids and the archive key change length and digits with the time).
    for start in (0..40).map(|k| NOV_22_2026 + f64::from(k) * 7_919_333.0) {
        short_session_compacts(start);
    }
}

fn short_session_compacts(start_ms: f64) {
    let memory = MemoryStore::new();
    let clock = ManualClock::new(start_ms);
    let settings = context_compactor::core::model::settings::CompactorSettings {
        context_window_tokens: 800,
        ..Default::default()
    };
    let rig = Rig::offline(memory, clock, settings);
    for i in 1..=5u32 {
        let mut logs = rig.logs.borrow_mut();
        logs.start_iteration().unwrap();
        logs.append_reasoning(&format!(
            "Step {i}: loaded orders.csv with {} rows and checked the totals against the report of the finance team.",
            1000 * i
        ))
        .unwrap();
        logs.append_execution(context_compactor::core::log::entries::ExecutionInput {
            success: true,
            code: format!("const rows = load(\"orders.csv\");\nreturn rows.length * {i};"),
            result: Some(context_compactor::core::json::read::RawJson(
                (1000 * i).to_string(),
            )),
            ..Default::default()
        })
        .unwrap();
        logs.finish_iteration();
    }
    let result = compact(&rig).unwrap_or_else(|e| panic!("at {start_ms}: {e}"));
    assert_eq!(result.iterations, [1, 4]);
    assert!(!result.coverage.required.is_empty());
    assert!(result.coverage.missing.is_empty());
}

#[test]
fn archives_say_which_one_can_be_restored_now() {
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let rig = Rig::offline(memory, clock.clone(), small_window());
    grow_session(&rig.logs, &clock, 6, 3);
    let first = compact(&rig).unwrap();
    grow_session(&rig.logs, &clock, 5, 4);
    let second = compact(&rig).unwrap();
    let restorable = |rig: &Rig| -> Vec<(String, bool)> {
        rig.compactor
            .shelf()
            .with_archives(|a| a.list())
            .unwrap()
            .into_iter()
            .map(|info| (info.key, info.restorable))
            .collect()
    };
    assert_eq!(
        restorable(&rig),
        vec![
            (second.archive_key.clone(), true),
            (first.archive_key.clone(), false)
        ]
    );
    run_ready(rig.compactor.rollback(&second.archive_key))
        .unwrap()
        .unwrap();
    assert_eq!(restorable(&rig), vec![(first.archive_key, true)]);
}

#[test]
fn recall_places_the_entries_of_an_archive_written_before_iterations_were_recorded() {
    use context_compactor::core::ports::storage::KeyValueStore;
    let memory = MemoryStore::new();
    let clock = ManualClock::new(NOV_22_2026);
    let rig = Rig::offline(memory, clock.clone(), small_window());
    grow_session(&rig.logs, &clock, 6, 3);
    let iteration_2 = stored_entries_of(&rig, 2);
    let result = compact(&rig).unwrap();
    let text = rig.memory.get(&result.archive_key).unwrap().unwrap();
    // The field cut out of the text, so that every entry keeps its bytes.
    let start = text.find(",\"entryIterations\":").unwrap();
    let end = text.find(",\"ledger\":").unwrap();
    let older = format!("{}{}", &text[..start], &text[end..]);
    assert!(!older.contains("entryIterations"));
    rig.memory.set(&result.archive_key, &older).unwrap();
    assert_eq!(recalled(&rig, 2), iteration_2);
}

#[test]
fn lost_facts_are_repaired_in_the_ledgers_words_with_no_further_call() {
    let rig = session(
        6,
        vec![Answer::Verbatim(valid_summary("north region leads."))],
    );
    let ledger = rig.compactor.plan().unwrap().ledger;
    let result = compact(&rig).unwrap();
    assert_eq!(result.attempts, 1, "no call beyond the first");
    assert_eq!(rig.provider.prompts.borrow().len(), 1);
    assert_eq!(result.coverage.required, ledger);
    assert!(result.coverage.missing.is_empty());
    let mut every: Vec<String> = result.coverage.kept.clone();
    every.extend(result.coverage.repaired.iter().cloned());
    every.sort();
    let mut expected = ledger.clone();
    expected.sort();
    assert_eq!(every, expected, "each fact kept by the model or repaired");
    assert!(!result.coverage.repaired.is_empty());
    for fact in &result.coverage.repaired {
        let line = format!(
            "- {}",
            fact.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        assert!(result.summary.contains(&line), "{line} added");
    }
    // The goal under the objective, results under the discoveries.
    let discoveries = result
        .summary
        .split("### 📊 KEY DISCOVERIES")
        .nth(1)
        .unwrap();
    let discoveries = discoveries.split("\n### ").next().unwrap();
    for fact in result
        .coverage
        .repaired
        .iter()
        .filter(|f| f.starts_with("Result of "))
    {
        assert!(
            discoveries.contains(fact.as_str()),
            "{fact} under KEY DISCOVERIES"
        );
    }
    let live = rig.logs.borrow().reasoning_log().unwrap();
    assert!(live[0].contains(&result.summary));
    let said = format!(
        "Markdown answer read; the model kept {} of {} facts; {} added in the ledger's words",
        result.coverage.kept.len(),
        ledger.len(),
        result.coverage.repaired.len()
    );
    assert!(progress_messages(&rig).contains(&said), "{said}");
    let metrics = rig.compactor.metrics().unwrap();
    let repaired = result.coverage.repaired.len() as u32;
    assert_eq!(metrics.total_repaired_facts, repaired);
    let last = metrics.last_compaction.expect("the last compaction's cost");
    assert_eq!((last.calls, last.repaired_facts), (1, repaired));
}

#[test]
fn missing_facts_retry_asks_once_naming_them_then_repairs() {
    let settings = CompactorSettings {
        missing_facts: MissingFacts::Retry,
        max_retries: 3,
        ..small_window()
    };
    let rig = session_with(
        6,
        vec![
            Answer::Verbatim(valid_summary("north region leads.")),
            Answer::Verbatim(valid_summary("north region leads, again.")),
            Answer::Text(valid_summary("never asked")),
        ],
        settings,
    );
    let ledger = rig.compactor.plan().unwrap().ledger;
    let result = compact(&rig).unwrap();
    assert_eq!(result.attempts, 2, "asked once more, then repaired");
    let prompts = rig.provider.prompts.borrow();
    for fact in &result.coverage.repaired {
        assert!(prompts[1].contains(&format!("- Missing required fact: {fact}")));
    }
    assert_eq!(
        result.coverage.repaired.len() + result.coverage.kept.len(),
        ledger.len()
    );
    assert!(result.summary.contains("north region leads, again."));
    let retries: Vec<String> = rig
        .events
        .events()
        .into_iter()
        .filter_map(|event| match event {
            CompactionEvent::Retry { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(retries, ["missing_facts"]);
}

/// A summary that keeps every fact of `rig`'s ledger and adds `line` to its discoveries.
fn keeping_every_fact(rig: &Rig, line: &str) -> String {
    let mut summary = valid_summary(line);
    for fact in rig.compactor.plan().unwrap().ledger {
        summary.push_str(&format!("\n- {fact}"));
    }
    summary
}

/// A value the session's logs hold: the row count of iteration 2 (digits only).
fn real_rows(rig: &Rig) -> String {
    let log = rig.logs.borrow().reasoning_log().unwrap();
    let text = log.iter().find(|e| e.contains("Iteration 2:")).unwrap();
    let after = text.split(" and found ").nth(1).unwrap();
    after.split(' ').next().unwrap().to_owned()
}

#[test]
fn invented_figures_ids_files_and_urls_are_marked_real_ones_are_not() {
    let probe = session(6, vec![]);
    let rows = real_rows(&probe);
    let grouped = format!("{},{}", &rows[..rows.len() - 3], &rows[rows.len() - 3..]);
    let rounded = format!("{}00", &rows[..rows.len() - 2]);
    let invented = "The user asked to delete sales_2024.csv; 98,765 rows were removed.";
    let others = "Run exec_zz99invented wrote https://files.example/report.pdf at 12.75 s.";
    let real = format!("Iteration 2 found {grouped} rows (about {rounded}).");
    let body = format!("{real}\n- {invented}\n- {others}");
    let rig = session(6, vec![]);
    let answer = keeping_every_fact(&rig, &body);
    let rig = session(6, vec![Answer::Verbatim(answer)]);
    let result = compact(&rig).unwrap();
    assert_eq!(result.attempts, 1);
    let items: Vec<Vec<String>> = result.unverified.iter().map(|u| u.items.clone()).collect();
    assert_eq!(
        items,
        vec![
            vec!["sales_2024.csv".to_owned(), "98765".to_owned()],
            vec![
                "exec_zz99invented".to_owned(),
                "https://files.example/report.pdf".to_owned(),
                "12.75".to_owned()
            ],
        ],
        "{:?}",
        result.unverified
    );
    assert!(result
        .summary
        .contains(&format!("- {invented} [unverified]")));
    assert!(result.summary.contains(&format!("- {others} [unverified]")));
    assert!(
        result.summary.contains(&format!("- {real}\n")),
        "a real value is not marked"
    );
    assert_eq!(result.unverified[0].line, format!("- {invented}"));
    assert!(progress_messages(&rig)
        .iter()
        .any(|m| m.ends_with("2 lines marked [unverified]")));
    let metrics = rig.compactor.metrics().unwrap();
    assert_eq!(metrics.total_unverified_lines, 2);
}

#[test]
fn unverified_retry_asks_once_then_marks_and_fail_refuses_with_the_logs_unchanged() {
    let invented = "The user asked to delete sales_2024.csv; 98,765 rows were removed.";
    let answer = keeping_every_fact(&session(6, vec![]), invented);
    let retry = CompactorSettings {
        unverified: LinePolicy::Retry,
        max_retries: 2,
        ..small_window()
    };
    let rig = session_with(6, vec![Answer::Verbatim(answer.clone()); 3], retry);
    let result = compact(&rig).unwrap();
    assert_eq!(result.attempts, 2, "asked once more, then marked");
    assert!(rig.provider.prompts.borrow()[1]
        .contains("- Found nowhere in the logs: sales_2024.csv, 98765"));
    assert_eq!(result.unverified.len(), 1);

    let fail = CompactorSettings {
        unverified: LinePolicy::Fail,
        ..small_window()
    };
    let rig = session_with(6, vec![Answer::Verbatim(answer); 2], fail);
    let before = rig.dump();
    let err = compact(&rig).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidSummary);
    assert!(err.to_string().contains("sales_2024.csv, 98765"), "{err}");
    assert_eq!(rig.dump(), before, "the logs and every other key unchanged");
}

#[test]
fn a_refused_compaction_leaves_the_logs_byte_identical_in_every_mode() {
    for (missing_facts, unverified) in [
        (MissingFacts::Repair, LinePolicy::Mark),
        (MissingFacts::Retry, LinePolicy::Retry),
        (MissingFacts::Fail, LinePolicy::Fail),
    ] {
        let settings = CompactorSettings {
            missing_facts,
            unverified,
            ..small_window()
        };
        let refusal =
            "I cannot summarise these logs, sorry; the request is not something I can do.";
        let rig = session_with(6, vec![Answer::Verbatim(refusal.into()); 2], settings);
        let before = rig.dump();
        let err = compact(&rig).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidSummary);
        assert_eq!(rig.dump(), before, "{missing_facts:?}/{unverified:?}");
    }
}

#[test]
fn a_marked_line_repeated_by_the_next_summary_is_marked_again() {
    let invented = "The user asked to delete sales_2024.csv; 98,765 rows were removed.";
    let answer = Answer::Text(valid_summary(invented));
    let rig = session(6, vec![answer.clone(), answer]);
    let result = compact(&rig).unwrap();
    assert_eq!(result.unverified.len(), 1);
    grow_session(&rig.logs, &rig.clock, 5, 9);
    let result = compact(&rig).unwrap();
    assert_eq!(
        result
            .unverified
            .iter()
            .map(|u| u.items.clone())
            .collect::<Vec<_>>(),
        vec![vec!["sales_2024.csv".to_owned(), "98765".to_owned()]],
        "the earlier summary's marked line backs nothing"
    );
}

#[test]
fn the_core_refuses_an_empty_or_overlong_pin_for_every_caller() {
    use context_compactor::core::model::facts::{Pin, PinTextError};
    use context_compactor::core::store::log_store::PinError;
    let rig = session(1, vec![]);
    let mut logs = rig.logs.borrow_mut();
    assert_eq!(
        logs.pin("   "),
        Err(PinError::Text(PinTextError { length: 0 }))
    );
    let long = "x".repeat(Pin::MAX_CHARS + 1);
    let err = logs.pin(&long).unwrap_err();
    assert_eq!(
        err.to_string(),
        "pin(text) must hold 1 to 1000 characters, not 1001"
    );
    assert!(logs.pins().unwrap().is_empty(), "nothing was pinned");
    assert!(logs.pin(&"é".repeat(Pin::MAX_CHARS)).is_ok());
}

/// A pin's short numbers are the fact: "latency_p95 <= 350 ms" is not kept by a summary that
/// names latency_p95 without 350 (half its key words matched, and coverage called it kept), and
/// the offline summary, which appends what the ledger lacks, now states it whole.
#[test]
fn a_pinned_fact_keeps_its_short_numbers_in_every_summary() {
    let pins = [
        "latency_p95 <= 350 ms",
        "Use port 443 and at most 3 retries, backoff factor 0.2",
        "Reply with \"APPROVED-FINAL\" only when the audit passes",
    ];
    let lossy = valid_summary("latency_p95 stays low on port 4430 with retries; audit pending.");
    let rig = session(6, vec![Answer::Verbatim(lossy)]);
    for pin in pins {
        rig.logs.borrow_mut().pin(pin).unwrap();
    }
    let result = compact(&rig).unwrap();
    for pin in pins {
        let (kept, repaired) = (&result.coverage.kept, &result.coverage.repaired);
        assert!(
            !kept.iter().any(|k| k == pin),
            "{pin} is not kept: {kept:?}"
        );
        assert!(
            repaired.iter().any(|r| r == pin),
            "{pin} is repaired: {repaired:?}"
        );
        assert!(result.summary.contains(pin), "{pin} in\n{}", result.summary);
    }

    let offline = Rig::offline(
        MemoryStore::new(),
        ManualClock::new(NOV_22_2026),
        small_window(),
    );
    grow_session(&offline.logs, &offline.clock, 6, 42);
    for pin in pins {
        offline.logs.borrow_mut().pin(pin).unwrap();
    }
    for round in 0..3 {
        let result = compact(&offline).unwrap();
        for pin in pins {
            assert!(
                result.summary.contains(pin),
                "round {round}: {pin} in\n{}",
                result.summary
            );
        }
        grow_session(&offline.logs, &offline.clock, 8, 43 + round);
    }
}

#[test]
fn a_short_number_counts_only_as_a_number_of_its_own() {
    let rig = session(6, vec![]);
    rig.logs.borrow_mut().pin("retry after 350 ms").unwrap();
    let ledger = rig.compactor.ledger().unwrap();
    let pin = ledger
        .facts
        .iter()
        .find(|f| f.kind == FactKind::Pin)
        .unwrap();
    assert!(pin.exact.contains(&"350".to_owned()), "{:?}", pin.exact);
    for (summary, kept) in [
        ("- retry after 350 ms", true),
        ("- retry after 350ms.", true),
        ("- retry after 3500 ms", false),
        ("- retry after 1.350 s", false),
        ("- retry after 350.5 ms", false),
    ] {
        let coverage = Ledger {
            facts: vec![pin.clone()],
            ..Ledger::default()
        }
        .coverage(summary);
        assert_eq!(coverage.kept.len() == 1, kept, "{summary}");
    }
}

/// Pins over the summary's budget: the user's compaction is refused before any call (the
/// message says what to change, and so does `plan()`), but the loop's own goes on — its summary
/// holds every pin, over its budget by them, and `user_items_over_budget` says so — rather than
/// leave the window full for good. (Before, `context_limit_error` was refused too, and
/// `shouldAutoCompact()` said no at any usage.)
#[test]
fn pins_over_the_summarys_budget_refuse_the_users_compaction_and_the_loops_goes_on() {
    let settings = CompactorSettings {
        summary_budget_tokens: Some(200),
        ..small_window()
    };
    let answers = vec![Answer::Text(valid_summary("the loop's own"))];
    let rig = Rig::with(MemoryStore::new(), answers, settings);
    grow_session(&rig.logs, &rig.clock, 6, 7);
    let mut pins = Vec::new();
    for n in 0..4 {
        let long = format!(
            "Pinned fact {n}: {}",
            "every amount is in euros; ".repeat(12)
        );
        rig.logs.borrow_mut().pin(&long).unwrap();
        pins.push(long);
    }
    let before = rig.dump();
    let refused = run_ready(rig.compactor.compact(Trigger::User)).unwrap();
    let Err(CompactionError::NotAllowed(Refusal::PinsOverBudget { needed, budget })) = refused
    else {
        panic!("{refused:?}")
    };
    assert_eq!(budget, 200);
    assert!(needed > 200, "{needed}");
    assert_eq!(rig.provider.calls(), 0, "no call paid");
    assert_eq!(rig.dump(), before, "the logs unchanged");
    let said = rig
        .compactor
        .can_compact()
        .unwrap()
        .map(|r| r.to_string())
        .unwrap_or_default();
    assert!(
        said.contains("raise summaryBudgetTokens to at least"),
        "{said}"
    );
    let plan = rig.compactor.plan().unwrap();
    assert!(plan.refused.unwrap_or_default().contains("unpin"));
    assert!(rig.compactor.should_auto_compact().unwrap());
    let result = run_ready(rig.compactor.compact(Trigger::ContextLimitError)).unwrap();
    let result = result.unwrap_or_else(|err| panic!("{err:?} {:?}", rig.events.events()));
    for pin in &pins {
        assert!(result.summary.contains(pin.trim()), "{}", result.summary);
    }
    assert!(rig.events.names().contains(&"user_items_over_budget"));
}

#[test]
fn keep_recent_iterations_keeps_the_newest_finished_iterations_verbatim() {
    let settings = CompactorSettings {
        keep_recent_iterations: 2,
        ..small_window()
    };
    let answers = vec![Answer::Text(valid_summary("the first five"))];
    let rig = Rig::with(MemoryStore::new(), answers, settings);
    grow_session(&rig.logs, &rig.clock, 8, 11);
    let plan = rig.compactor.plan().unwrap();
    assert_eq!((plan.iterations, plan.verbatim), ([1, 5], [6, 8]));
    let tail = |rig: &Rig| -> Vec<String> {
        let reasoning = rig.logs.borrow().reasoning_log().unwrap();
        reasoning
            .into_iter()
            .skip_while(|entry| !entry.contains("Iteration 6"))
            .collect()
    };
    let before = tail(&rig);
    assert!(!before.is_empty());
    let result = run_ready(rig.compactor.compact(Trigger::ContextLimitError))
        .unwrap()
        .unwrap();
    assert_eq!(result.iterations, [1, 5]);
    assert_eq!(tail(&rig), before, "iterations 6 to 8 stay as they were");
    // Too short a session for the tail asked for: refused before any call.
    let settings = CompactorSettings {
        keep_recent_iterations: 7,
        ..small_window()
    };
    let rig = Rig::with(MemoryStore::new(), Vec::new(), settings);
    grow_session(&rig.logs, &rig.clock, 8, 11);
    let refused = run_ready(rig.compactor.compact(Trigger::ContextLimitError)).unwrap();
    let Err(CompactionError::NotAllowed(Refusal::TooFewIterations { needed, completed })) = refused
    else {
        panic!("{refused:?}")
    };
    assert_eq!((needed, completed), (9, 8));
}

/// A session of `iterations` whose texts name no figure: each iteration reasons in words and
/// runs two shards, one in nine failing; the compacted executions are more than the iterations,
/// so that no iteration header names their counts.
fn wordy_session(iterations: u32, answers: Vec<Answer>) -> Rig {
    let rig = Rig::with(MemoryStore::new(), answers, small_window());
    let mut run = 0;
    for _ in 0..iterations {
        let mut store = rig.logs.borrow_mut();
        store.start_iteration().unwrap();
        store
            .append_reasoning("I checked the next shards and compared them with the report.")
            .unwrap();
        for _ in 0..2 {
            run += 1;
            store
                .append_execution(ExecutionInput {
                    success: run % 9 != 0,
                    code: "return checkShard(nextShard());".into(),
                    ..Default::default()
                })
                .unwrap();
        }
        store.finish_iteration();
        rig.clock.advance(1000.0);
    }
    rig
}

#[test]
fn the_sessions_own_iteration_numbers_and_counts_are_not_marked_invented_ones_are() {
    let probe = wordy_session(130, vec![]);
    let plan = probe.compactor.plan().unwrap();
    let current = plan.iterations[1] + 1;
    let total = 2 * (current - 1);
    let ok = total - total / 9;
    let continues = format!("Continue with iteration {current}.");
    let counted = format!("{ok} of {total} executions succeeded.");
    let beyond = format!("Continue from iteration {}.", current + 848);
    let miscounted = format!("{} of {total} executions failed.", ok + 3);
    let body = format!("{continues}\n- {counted}\n- {beyond}\n- {miscounted}");
    let answer = keeping_every_fact(&probe, &body);
    let rig = wordy_session(130, vec![Answer::Verbatim(answer)]);
    let result = compact(&rig).unwrap();
    let marked: Vec<&str> = result.unverified.iter().map(|u| u.line.as_str()).collect();
    assert_eq!(marked, [format!("- {beyond}"), format!("- {miscounted}")]);
    assert!(result.summary.contains(&format!("- {counted}\n")));
    assert!(result.summary.contains(&format!("{continues}\n")));
}

#[test]
fn the_goal_the_app_sets_is_every_summarys_goal_and_clear_forgets_it() {
    let rig = Rig::offline(
        MemoryStore::new(),
        ManualClock::new(NOV_22_2026),
        small_window(),
    );
    grow_session(&rig.logs, &rig.clock, 6, 3);
    let goal = "Find which regions missed the Q3 target in sales_q3.csv.";
    let before = rig.compactor.plan().unwrap().ledger;
    assert!(!before.iter().any(|fact| fact.contains(goal)));
    rig.logs.borrow_mut().set_goal(goal).unwrap();
    let plan = rig.compactor.plan().unwrap();
    assert!(
        plan.ledger.contains(&format!("Question: {goal}")),
        "{:?}",
        plan.ledger
    );
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    assert!(result.summary.contains(goal), "{}", result.summary);
    rig.logs.borrow_mut().clear(false).unwrap();
    assert_eq!(rig.logs.borrow().goal().unwrap(), None);
}
