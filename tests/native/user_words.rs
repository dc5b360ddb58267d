//! What the user said survives every compaction (#79): the user's statements (recorded as
//! `The user wrote: …`) kept word for word in every summary, carried from summary to summary
//! whatever the model keeps, replaced by a later statement on the same subject, and bounded
//! without stopping compaction.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;
use common::*;
use context_compactor::core::model::outcome::CompactionResult;
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::model::user_items::UserItemKind;
use context_compactor::core::ports::storage::MemoryStore;
use context_compactor::core::ports::timer::run_ready;

/// The statements of the session, one every few iterations: `(iteration, words, value)`.
fn said() -> Vec<(u32, String, String)> {
    let mut out = Vec::new();
    for k in 0..12u32 {
        let n = 1 + k * 3;
        let value = format!("{}", 4000 + k * 37);
        let words = match k % 6 {
            0 => format!("Never run the deploy tool without the code word ember{value}."),
            1 => format!("Spend at most ${value} on cloud resources for this."),
            2 => format!("My customer id is quartz-{value}."),
            3 => format!("The migration of table t_{value} is done; next is the report."),
            4 => format!("I prefer tables of {value} rows, with Welsh headers."),
            _ => format!("Keep every answer under {value} words."),
        };
        out.push((n, words, value));
    }
    out
}

/// A model that keeps only its last lines: a valid summary that states none of the user's words.
fn lossy() -> Answer {
    Answer::Verbatim(valid_summary("Read the pages; the totals are pending."))
}

/// `iterations` iterations on `rig`, the user saying `words(n)` in iteration `n`, compacted
/// every `every` iterations: each compaction's result.
fn chained(
    rig: &Rig,
    iterations: u32,
    every: u32,
    words: impl Fn(u32) -> Vec<String>,
) -> Vec<CompactionResult> {
    let mut results = Vec::new();
    for n in 1..=iterations {
        {
            let mut logs = rig.logs.borrow_mut();
            logs.start_iteration().unwrap();
            for said in words(n) {
                logs.append_user_message(&said).unwrap();
            }
            logs.append_reasoning(&format!("Step {n}: read page {n}; {}", "rows ".repeat(40)))
                .unwrap();
            logs.finish_iteration();
        }
        if n % every == 0 {
            let done = run_ready(rig.compactor.compact(Trigger::ContextLimitError)).unwrap();
            results.push(done.unwrap());
        }
    }
    results
}

/// A session of `iterations` with the statements of [`said`] (and small talk) recorded as the
/// user's, compacted by a lossy model every `every` iterations: each compaction's result.
fn session(
    iterations: u32,
    every: u32,
    settings: CompactorSettings,
) -> (Rig, Vec<CompactionResult>) {
    let rounds = (iterations / every) as usize;
    let rig = Rig::with(MemoryStore::new(), vec![lossy(); rounds * 2], settings);
    let statements = said();
    let results = chained(&rig, iterations, every, |n| {
        let mut words: Vec<String> = (statements.iter())
            .filter(|(at, ..)| *at == n)
            .map(|(_, words, _)| words.clone())
            .collect();
        if n % 4 == 0 {
            words.push("Thanks, go on.".into());
        }
        if n == 30 {
            words.push("Change of plan: spend at most $9100 on cloud resources for this.".into());
        }
        words
    });
    (rig, results)
}

/// What the model reads next: the newest summary.
fn summary_now(rig: &Rig) -> String {
    rig.logs.borrow().recent_reasoning(0).unwrap()[0].to_string()
}

/// Five chained compactions by a model that states none of the user's words: every statement
/// compacted so far is in every summary, word for word, under the package's own heading; the limit
/// replaced at iteration 30 is not shown any more. (Before, the user's words were never kept
/// on this front: a lossy model's summary held none of them.)
#[test]
fn the_users_words_survive_five_chained_compactions_by_a_lossy_model() {
    let (rig, results) = session(40, 8, small_window());
    assert_eq!(results.len(), 5);
    for (round, result) in results.iter().enumerate() {
        let upto = (round as u32 + 1) * 8;
        for (_, words, value) in said().iter().filter(|(at, ..)| *at < upto) {
            // Both earlier caps of the cloud spend are on the subject the change replaced.
            if words.starts_with("Spend at most") && upto > 30 {
                assert!(
                    !result.summary.contains(value.as_str()),
                    "round {round}: replaced {value} still shown\n{}",
                    result.summary
                );
                continue;
            }
            assert!(
                result.summary.contains(words.as_str()),
                "round {round}: lost {words:?}\n{}",
                result.summary
            );
        }
        assert!(
            !result.summary.contains("Thanks, go on"),
            "{}",
            result.summary
        );
    }
    let last = results.last().unwrap();
    assert_eq!(summary_now(&rig).matches("WHAT THE USER SAID").count(), 1);
    assert!(
        last.summary.contains("Change of plan: spend at most $9100"),
        "{}",
        last.summary
    );
    let kinds: Vec<UserItemKind> = last.user_items.kept.iter().map(|item| item.kind).collect();
    for kind in UserItemKind::ALL {
        assert!(kinds.contains(&kind), "{kind:?} missing from {kinds:?}");
    }
    // The replacement is said by the compaction that made it.
    let replaced: Vec<&CompactionResult> = results
        .iter()
        .filter(|r| !r.user_items.replaced.is_empty())
        .collect();
    assert_eq!(replaced.len(), 1);
    let texts: Vec<&str> = replaced[0]
        .user_items
        .replaced
        .iter()
        .map(|item| item.text.as_str())
        .collect();
    assert_eq!(
        texts,
        [
            "Spend at most $4037 on cloud resources for this.",
            "Spend at most $4259 on cloud resources for this."
        ]
    );
    // The lossy model stated none of them: the section alone holds them, but for the first rule,
    // which the summary's goal line (the package's) states too.
    let repaired: Vec<&str> = last
        .user_items
        .repaired
        .iter()
        .map(|item| item.source.as_str())
        .collect();
    let kept: Vec<&str> = last
        .user_items
        .kept
        .iter()
        .map(|item| item.source.as_str())
        .collect();
    assert_eq!(repaired, kept[1..]);
}

/// Items over their share (a summary budget of 200 tokens) leave for lines that name them and
/// their source, facts first and rules last, the event says so, and the compaction runs.
#[test]
fn items_over_their_share_leave_for_named_lines_and_the_compaction_runs() {
    let settings = CompactorSettings {
        summary_budget_tokens: Some(200),
        ..small_window()
    };
    let (rig, results) = session(40, 40, settings);
    let result = &results[0];
    assert!(!result.user_items.demoted.is_empty());
    assert!(result
        .user_items
        .demoted
        .iter()
        .all(|item| item.kind != UserItemKind::Rule));
    assert!(result
        .user_items
        .kept
        .iter()
        .any(|item| item.kind == UserItemKind::Rule));
    for item in &result.user_items.demoted {
        assert!(
            result
                .summary
                .contains(&format!("Left for recall ({})", item.source)),
            "{}",
            result.summary
        );
    }
    assert!(rig.events.names().contains(&"user_items_over_budget"));
}

/// A task given with its rules and limits in one message (a GDRS query, a first user message,
/// `setGoal`): the statements after the task itself are items of every summary from the first
/// on, and a later update replaces them for good. (Before, only the goal's first 160
/// characters stood in a summary, and a goal line quoting the query stated the replaced limit
/// again at every compaction after the one that replaced it.)
#[test]
fn the_statements_of_the_query_after_the_task_are_kept_by_every_summary() {
    let rig = Rig::with(MemoryStore::new(), vec![lossy(); 6], small_window());
    let query = "Research the Q3 churn of the EU shops and write a report for the board with a \
                 chart per region. Never cite the internal wiki. Spend at most 40 minutes on \
                 each region.";
    rig.logs.borrow_mut().set_goal(query).unwrap();
    let update = "Change of plan: spend at most 25 minutes on each region.";
    let results = chained(&rig, 24, 8, |n| match n {
        10 => vec![update.to_owned()],
        _ => Vec::new(),
    });
    let summaries: Vec<String> = results.into_iter().map(|r| r.summary).collect();
    for summary in &summaries {
        assert!(
            summary.contains("- Rule (the query): Never cite the internal wiki."),
            "{summary}"
        );
    }
    assert!(summaries[0].contains("- Limit (the query): Spend at most 40 minutes on each region."));
    // Replaced, it is stated nowhere any more: not in the section, nor in the goal's line, which
    // holds the task alone.
    for summary in &summaries[1..] {
        assert!(!summary.contains("40 minutes"), "{summary}");
        assert!(summary.contains("spend at most 25 minutes"), "{summary}");
    }
}
