//! The coverage ledger: facts a summary must keep are checked, retried by name, never lost in
//! silence; pins survive chained compactions; `recall` gives back the originals byte for byte.

mod common;

use common::*;
use context_compactor::core::error::{CompactionError, ErrorCode};
use context_compactor::core::model::facts::{Fact, FactKind};
use context_compactor::core::model::outcome::CompactionResult;
use context_compactor::core::model::settings::Trigger;
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::events::CompactionEvent;
use context_compactor::core::ports::storage::MemoryStore;
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::steps::digest::Digest;
use context_compactor::core::steps::selection::Selection;
use context_compactor::core::store::archive::read_archive;

fn compact(rig: &Rig) -> Result<CompactionResult, CompactionError> {
    run_ready(rig.compactor.compact(Trigger::User)).expect("the compaction waited on nothing")
}

fn session(iterations: u32, answers: Vec<Answer>) -> Rig {
    let rig = Rig::with(MemoryStore::new(), answers, small_window());
    grow_session(&rig.logs, &rig.clock, iterations, 42);
    rig
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
    let rig = session(
        6,
        vec![
            Answer::Verbatim(valid_summary("north region leads.")),
            Answer::Text(valid_summary("north region leads.")),
        ],
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
    let rig = session(
        6,
        vec![Answer::Verbatim(partial), Answer::Text(valid_summary("x"))],
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
    let rig = session(
        6,
        vec![
            Answer::Verbatim(valid_summary("north region leads.")),
            Answer::Verbatim(valid_summary("north region leads, again.")),
        ],
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
    let rig = session(
        6,
        vec![
            Answer::Text(valid_summary("first")),
            // The second summary has the new facts but not the first one's goal.
            Answer::Verbatim(String::new()),
            Answer::Text(valid_summary("second, with everything")),
        ],
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
        assert!(
            fact.kind == FactKind::Failure
                || fact.kind == FactKind::Result
                || second_plan.ledger.contains(&fact.text),
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
            &placed.reasoning,
        ),
        texts(
            snapshot
                .execution
                .iter()
                .map(|e| e.json().to_owned())
                .collect(),
            &placed.execution,
        ),
        texts(
            snapshot
                .tool_activity
                .iter()
                .map(|e| e.json().to_owned())
                .collect(),
            &placed.tool_activity,
        ),
    ]
}

fn recalled(rig: &Rig, n: u32) -> [Vec<String>; 3] {
    let data = rig
        .compactor
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
    // The live iteration is not archived; a deleted archive recalls nothing.
    assert_eq!(rig.compactor.with_archives(|a| a.recall(11)).unwrap(), None);
    rig.compactor.delete_archive(&first.archive_key).unwrap();
    assert_eq!(rig.compactor.with_archives(|a| a.recall(2)).unwrap(), None);
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
    let snapshot = rig.logs.borrow().snapshot().unwrap();
    let selection = Selection::of(&snapshot);
    let ledger = rig
        .compactor
        .ledger_of(&selection, &Digest::of(&selection))
        .unwrap();
    let identifiers: Vec<&str> = ledger
        .facts
        .iter()
        .filter(|f| f.kind == FactKind::Identifier)
        .map(|f| f.text.as_str())
        .collect();
    assert_eq!(identifiers, vec!["notes/iteration-2.md", "users.json"]);
    let result = compact(&rig).unwrap();
    assert!(result.summary.contains("notes/iteration-2.md"));
}

#[test]
fn unreadable_pins_stop_the_compaction_naming_their_key_rather_than_losing_them() {
    use context_compactor::core::ports::storage::KeyValueStore;
    let rig = session(6, vec![Answer::Text(valid_summary("x"))]);
    rig.memory.set("gdrs_pinned_facts", "[{\"id\":").unwrap();
    let before = rig.dump();
    let err = compact(&rig).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StorageCorrupt);
    assert!(err.to_string().contains("gdrs_pinned_facts"), "{err}");
    assert_eq!(rig.dump(), before);
    assert_eq!(rig.provider.calls(), 0, "no provider call was paid for");
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
            result: Some(serde_json::json!(1000 * i)),
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
