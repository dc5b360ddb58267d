//! Recall as a tool the app's model calls, and rehydration (#41): the declaration, and the answers to a range,
//! a search text, a call past the budget (paginated, whole iterations), an archive that is
//! gone, a live iteration and arguments a model gets wrong (a sentence each, never an error).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod common;

use common::*;
use context_compactor::core::json::read::FromJson;
use context_compactor::core::log::tokens::estimate_tokens;
use context_compactor::core::model::clearing::Rung;
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::cancel::Cancel;
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::run::compactor::Compactor;
use std::rc::Rc;

use context_compactor::core::ports::archive_store::{ArchiveStore, MemoryArchiveStore};
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::store::recall_tool::{
    RecallArgs, DECLARATION, DEFAULT_RECALL_TOKENS, RECALL_TOOL_NAME,
};
use context_compactor::core::store::rehydrate::{named_ranges, Cooldown, Rehydrated};

/// A session of 12 iterations whose first 11 were compacted; the archive's key.
fn compacted() -> (Rig, String) {
    let rig = Rig::with(
        MemoryStore::new(),
        vec![Answer::Text(valid_summary("the totals per region"))],
        small_window(),
    );
    grow_session(&rig.logs, &rig.clock, 12, 42);
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    assert_eq!(result.iterations, [1, 11]);
    (rig, result.archive_key)
}

fn call(rig: &Rig, args: &str, max_tokens: usize) -> String {
    let args = RecallArgs::from_json(args).unwrap();
    rig.compactor
        .shelf()
        .with_archives(|a| a.recall_text(&args, max_tokens))
        .unwrap()
}

/// The execution ids of `iteration` in the live logs before the compaction.
fn ids_of(text: &str) -> Vec<String> {
    text.split('"')
        .filter(|part| part.starts_with("exec_"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_declaration_is_a_gemini_function_declaration() {
    let declared: serde_json::Value = serde_json::from_str(DECLARATION).unwrap();
    assert_eq!(declared["name"], RECALL_TOOL_NAME);
    assert!(declared["description"]
        .as_str()
        .unwrap()
        .contains("recall(a..b)"));
    let parameters = &declared["parameters"];
    assert_eq!(parameters["type"], "OBJECT");
    assert_eq!(parameters["properties"]["from"]["type"], "INTEGER");
    assert_eq!(parameters["properties"]["to"]["type"], "INTEGER");
    assert_eq!(parameters["properties"]["query"]["type"], "STRING");
    assert!(parameters.get("required").is_none(), "a range or a query");
}

#[test]
fn a_range_answers_the_originals_of_those_iterations_only() {
    let (rig, _) = compacted();
    let three = call(&rig, r#"{"from": 3}"#, DEFAULT_RECALL_TOKENS);
    assert!(
        three.starts_with("[iteration 3 · reasoning] === ITERATION 3 ==="),
        "{three}"
    );
    assert!(three.contains("[iteration 3 · execution] {"));
    assert!(three.contains("[iteration 3 · tool activity] {"));
    assert!(!three.contains("[iteration 2 ") && !three.contains("[iteration 4 "));
    // The same entries recall(3) gives, each in full.
    let originals = rig
        .compactor
        .shelf()
        .with_archives(|a| a.recall(3))
        .unwrap()
        .unwrap();
    for entry in &originals.execution_log {
        assert!(three.contains(entry.json()));
    }
    let span = call(&rig, r#"{"from": 2.0, "to": 4}"#, DEFAULT_RECALL_TOKENS);
    for n in 2..=4 {
        assert!(
            span.contains(&format!("[iteration {n} · reasoning]")),
            "{n}"
        );
    }
    assert!(!span.contains("call again"));
}

#[test]
fn past_the_budget_whole_iterations_are_answered_and_the_rest_is_one_call_away() {
    let (rig, _) = compacted();
    let first = call(&rig, r#"{"from": 1, "to": 11}"#, 600);
    let tail = first.lines().last().unwrap();
    assert!(
        tail.starts_with("… ") && tail.contains("call again with from: "),
        "{tail}"
    );
    let next: u32 = tail
        .split("from: ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(next > 1 && next <= 11, "{tail}");
    assert!(tail.ends_with(", to: 11."), "{tail}");
    // Whole iterations: the next page starts where this one stopped, nothing twice.
    assert!(!first.contains(&format!("[iteration {next} ")));
    assert!(first.contains(&format!("[iteration {} · reasoning]", next - 1)));
    let second = call(&rig, &format!(r#"{{"from": {next}, "to": 11}}"#), 600);
    assert!(second.starts_with(&format!("[iteration {next} · reasoning]")));
    // The answer stays about its budget (an estimate of 4 characters a token, give or take).
    assert!(first.len() < 600 * 4 + 400, "{}", first.len());
}

#[test]
fn a_search_finds_an_id_a_figure_or_words_across_the_archive() {
    let (rig, _) = compacted();
    let five = call(&rig, r#"{"from": 5}"#, DEFAULT_RECALL_TOKENS);
    let id = ids_of(&five)
        .into_iter()
        .next()
        .expect("iteration 5 ran code");
    let found = call(
        &rig,
        &format!(r#"{{"query": "{id}"}}"#),
        DEFAULT_RECALL_TOKENS,
    );
    assert!(found.starts_with("[iteration 5 · execution]"), "{found}");
    assert_eq!(found.lines().count(), 1, "{found}");
    // A figure of a result and words of reasoning, case ignored.
    let figure = figure_of(&rig, 5);
    let found = call(
        &rig,
        &format!(r#"{{"query": "{figure}"}}"#),
        DEFAULT_RECALL_TOKENS,
    );
    assert!(
        found.contains(&figure) && found.contains("[iteration 5 "),
        "{found}"
    );
    let words = call(
        &rig,
        r#"{"query": "TOTALS DO NOT match", "from": 2, "to": 3}"#,
        4000,
    );
    assert!(words
        .lines()
        .all(|l| l.starts_with("[iteration 2 ") || l.starts_with("[iteration 3 ")));
    assert!(words.contains("[iteration 2 · reasoning]"));
    let none = call(&rig, r#"{"query": "quarterly_purge_7731.csv"}"#, 4000);
    assert_eq!(
        none,
        "No archived entry contains \"quarterly_purge_7731.csv\" (every word, ASCII case ignored)."
    );
}

#[test]
fn a_gone_archive_a_live_iteration_and_wrong_arguments_are_answered_with_a_sentence() {
    let (rig, key) = compacted();
    let live = call(&rig, r#"{"from": 12}"#, 4000);
    assert!(live.starts_with("No archive holds iteration 12"), "{live}");
    for (args, says) in [
        (r#"{}"#, "Nothing was asked for."),
        (r#"{"from": 0}"#, "from must be an iteration number from 1."),
        (
            r#"{"from": 2.5}"#,
            "from must be an iteration number from 1.",
        ),
        (
            r#"{"from": 3, "to": -1}"#,
            "to must be an iteration number from 1.",
        ),
        (r#"{"from": 5, "to": 2}"#, "from (5) is after to (2)."),
        (r#"{"from": null, "query": "  "}"#, "Nothing was asked for."),
    ] {
        let answer = call(&rig, args, 4000);
        assert!(answer.starts_with(says), "{args}: {answer}");
        assert!(
            answer.contains("Call recall_archived_iterations with from"),
            "{answer}"
        );
    }
    rig.memory.remove(&key).unwrap();
    let gone = call(&rig, r#"{"from": 3}"#, 4000);
    assert_eq!(
        gone,
        format!(
            "The archive that held iteration 3 ({key}) is no longer stored: it expired, was \
             deleted or was evicted by the browser, so its originals cannot be read back."
        )
    );
}

#[test]
fn a_damaged_archive_is_named_and_left_out_and_the_search_goes_on_over_the_others() {
    let answers = ["the totals per region", "the totals per region, again"];
    let rig = Rig::with(
        MemoryStore::new(),
        answers.map(|body| Answer::Text(valid_summary(body))).into(),
        small_window(),
    );
    let mut keys = Vec::new();
    let mut second = None;
    for (iterations, seed) in [(12, 42), (8, 43)] {
        grow_session(&rig.logs, &rig.clock, iterations, seed);
        let result = run_ready(rig.compactor.compact(Trigger::User))
            .unwrap()
            .unwrap();
        keys.push(result.archive_key.clone());
        second = Some(result);
    }
    let (first, second) = (keys[0].clone(), second.unwrap());
    assert_ne!(second.archive_key, first);
    let later = second.iterations[1];
    let id = ids_of(&call(&rig, &format!(r#"{{"from": {later}}}"#), 4000))
        .into_iter()
        .next()
        .expect("the later iteration ran code");
    // The first archive's stored text is damaged: a write cut short, its head still whole.
    let text = rig.memory.get(&first).unwrap().unwrap();
    let cut = text.char_indices().nth(text.chars().count() / 2).unwrap().0;
    rig.memory.set(&first, &text[..cut]).unwrap();
    let found = call(&rig, &format!(r#"{{"query": "{id}"}}"#), 4000);
    // It was storage_corrupt for the whole search before.
    assert!(
        found.starts_with(&format!(
            "Left out: {first} damaged (its stored text is not an archive).\n[iteration {later} · execution]"
        )),
        "{found}"
    );
    let range = call(&rig, r#"{"from": 3}"#, 4000);
    assert_eq!(
        range,
        format!(
            "Left out: {first} damaged (its stored text is not an archive).\nThe archive that \
             held iteration 3 ({first}) is damaged, so its originals cannot be read back."
        )
    );
}

/// A figure of five digits or more that the archived originals of `iteration` hold.
fn figure_of(rig: &Rig, iteration: u32) -> String {
    let text = call(
        rig,
        &format!(r#"{{"from": {iteration}}}"#),
        DEFAULT_RECALL_TOKENS,
    );
    text.split(|c: char| !c.is_ascii_digit())
        .find(|digits| digits.len() >= 5)
        .unwrap()
        .to_owned()
}

fn rehydrate(rig: &Rig, text: &str, budget: usize, cooldown: &mut Cooldown) -> Rehydrated {
    rig.compactor
        .shelf()
        .with_archives(|a| a.rehydrate(text, budget, cooldown))
        .unwrap()
}

#[test]
fn rehydrate_names_what_it_left_out_for_the_budget_with_its_size() {
    let (rig, _) = compacted();
    let mut cooldown = Cooldown::default();
    let whole = rehydrate(&rig, "Look at iteration 3.", 100_000, &mut cooldown);
    assert_eq!(whole.iterations, [3]);
    assert!(whole.too_large.is_empty());
    // A budget under iteration 3's originals: nothing in the text, and no silence about it
    // (it returned an empty answer with no hint before).
    let mut cooldown = Cooldown::default();
    let small = rehydrate(&rig, "Look at iteration 3.", 10, &mut cooldown);
    assert_eq!((small.text.as_str(), small.tokens), ("", 0));
    assert_eq!(small.iterations, Vec::<u32>::new());
    assert_eq!(small.too_large.len(), 1);
    assert_eq!(
        (small.too_large[0].iteration, small.too_large[0].tokens),
        (3, whole.tokens)
    );
}

#[test]
fn rehydrate_brings_back_what_a_message_names_newest_first_within_its_budget() {
    let (rig, _) = compacted();
    let before = rig.dump();
    let mut cooldown = Cooldown::default();
    // An iteration named in the model's words (and the live one, which no archive holds).
    let named = rehydrate(
        &rig,
        "Let me look at Iteration 3 again, and at iteration 12.",
        4000,
        &mut cooldown,
    );
    assert_eq!(named.iterations, [3]);
    assert!(
        named.text.starts_with("[iteration 3 · reasoning]"),
        "{}",
        named.text
    );
    assert_eq!(named.tokens, estimate_tokens(&named.text));
    // An execution id and a figure only the archive still holds.
    let five = call(&rig, r#"{"from": 5}"#, DEFAULT_RECALL_TOKENS);
    let id = ids_of(&five).into_iter().next().unwrap();
    let by_id = rehydrate(
        &rig,
        &format!("The result of {id} looked off."),
        4000,
        &mut cooldown,
    );
    assert_eq!(by_id.iterations, [5]);
    let figure = figure_of(&rig, 2);
    let by_figure = rehydrate(&rig, &format!("Was it {figure} rows?"), 4000, &mut cooldown);
    assert!(
        by_figure.iterations.contains(&2),
        "{figure}: {:?}",
        by_figure.iterations
    );
    // A range, newest first, whole iterations within the budget.
    let mut fresh = Cooldown::default();
    let range = rehydrate(&rig, "recall(1..11)", 700, &mut fresh);
    assert!(
        !range.iterations.is_empty() && range.tokens <= 700,
        "{range:?}"
    );
    assert_eq!(range.iterations[0], 11, "newest first");
    assert!(range.iterations.windows(2).all(|w| w[0] > w[1]));
    // Nothing was written.
    assert_eq!(rig.dump(), before);
}

#[test]
fn an_iteration_offered_is_not_offered_again_by_the_next_two_calls() {
    let (rig, _) = compacted();
    let mut cooldown = Cooldown::default();
    let asked = "What did iterations 3-4 find?";
    assert_eq!(
        rehydrate(&rig, asked, 4000, &mut cooldown).iterations,
        [4, 3]
    );
    assert_eq!(
        rehydrate(&rig, asked, 4000, &mut cooldown).iterations,
        Vec::<u32>::new()
    );
    // Another iteration is still offered while 3 and 4 cool down.
    assert_eq!(
        rehydrate(&rig, "iteration 6", 4000, &mut cooldown).iterations,
        [6]
    );
    assert_eq!(
        rehydrate(&rig, asked, 4000, &mut cooldown).iterations,
        [4, 3]
    );
}

#[test]
fn the_iterations_a_message_names_are_read_in_every_way_models_write_them() {
    assert_eq!(named_ranges("see iteration 7"), [(7, 7)]);
    assert_eq!(
        named_ranges("Iterations 3–5 and ITERATION 9"),
        [(3, 5), (9, 9)]
    );
    assert_eq!(
        named_ranges("iterations 2 to 3, recall(10..12), iteration 4"),
        [(2, 4), (10, 12)]
    );
    assert_eq!(
        named_ranges("iteration 0, iteration x, iterations 5-2"),
        [(5, 5)]
    );
    assert_eq!(
        named_ranges("iterations 1-100000"),
        [(1, 51)],
        "a wide range is cut"
    );
    // A name said a hundred thousand times is one range.
    assert_eq!(named_ranges(&"iteration 12, ".repeat(100_000)), [(12, 12)]);
}

#[test]
fn the_whole_answer_stays_within_max_tokens_whatever_the_query() {
    let (rig, _) = compacted();
    let thousand_words: Vec<String> = (0..1_000).map(|n| format!("word{n}x")).collect();
    let query = thousand_words.join(" ");
    for (args, max_tokens) in [
        (format!(r#"{{"query": "{query}"}}"#), 1_000),
        (
            format!(r#"{{"query": "{query}", "from": 2, "to": 3}}"#),
            1_000,
        ),
        (r#"{"query": "rows"}"#.to_owned(), 300),
        (r#"{"from": 1, "to": 11}"#.to_owned(), 150),
        (r#"{"from": 1, "to": 11}"#.to_owned(), 40),
        (r#"{"from": 3}"#.to_owned(), 10),
        (r#"{}"#.to_owned(), 12),
    ] {
        let answer = call(&rig, &args, max_tokens);
        assert!(
            estimate_tokens(&answer) <= max_tokens,
            "{} tokens over {max_tokens}: {}",
            estimate_tokens(&answer),
            &answer[..answer.len().min(300)]
        );
    }
    // The query is quoted clipped, and a page names no query to call again with.
    let none = call(&rig, &format!(r#"{{"query": "{query}"}}"#), 1_000);
    assert!(
        none.starts_with("No archived entry contains \"word0x word1x"),
        "{none}"
    );
    assert!(none.len() < 300, "{none}");
    let paged = call(&rig, r#"{"query": "rows"}"#, 300);
    assert!(
        paged.ends_with(" and the same query."),
        "{}",
        &paged[paged.len().saturating_sub(200)..]
    );
}

#[test]
fn a_query_s_words_are_read_once_each_and_only_the_first_32() {
    let (rig, _) = compacted();
    let five = call(&rig, r#"{"from": 5}"#, DEFAULT_RECALL_TOKENS);
    let id = ids_of(&five).into_iter().next().unwrap();
    // The id a million times is the id once; words past the 32nd are not read.
    let repeated = format!("{id} ").repeat(200_000);
    let found = call(&rig, &format!(r#"{{"query": "{repeated}"}}"#), 4000);
    assert!(found.starts_with("[iteration 5 · execution]"), "{found}");
    // 31 distinct words the entry holds (heads of its id), then one it does not: read as the
    // 32nd, unread as the 33rd.
    let entry = call(&rig, &format!(r#"{{"query": "{id}"}}"#), 4000).to_ascii_lowercase();
    let mut heads: Vec<&str> = Vec::new();
    for at in 0..entry.len() - 4 {
        let Some(piece) = entry.get(at..at + 4) else {
            continue;
        };
        if piece.bytes().all(|b| b.is_ascii_alphanumeric())
            && !heads.contains(&piece)
            && piece != id
        {
            heads.push(piece);
        }
    }
    assert!(heads.len() >= 31);
    let words = |held: usize| format!("{} absent_word", heads[..held].join(" "));
    assert!(
        call(&rig, &format!(r#"{{"query": "{}"}}"#, words(31)), 4000).starts_with("No archived")
    );
    let found = call(&rig, &format!(r#"{{"query": "{} {id}"}}"#, words(31)), 4000);
    assert!(found.starts_with("No archived"), "{found}");
    let found = call(&rig, &format!(r#"{{"query": "{id} {}"}}"#, words(31)), 4000);
    assert!(found.starts_with("[iteration 5 · execution]"), "{found}");
}

#[test]
fn rehydrate_matches_whole_ids_and_figures_and_reads_a_megabyte_once() {
    let (rig, _) = compacted();
    let figure = figure_of(&rig, 2);
    let mut cooldown = Cooldown::default();
    // Its tail is a figure of its own, not the archived one.
    let tail = &figure[1..];
    let archived_text = call(&rig, r#"{"from": 1, "to": 11}"#, 1_000_000);
    let tail_alone = archived_text
        .match_indices(tail)
        .any(|(at, _)| !archived_text.as_bytes()[at - 1].is_ascii_digit());
    if !tail_alone {
        let by_tail = rehydrate(&rig, &format!("Was it {tail} rows?"), 4000, &mut cooldown);
        assert!(
            by_tail.iterations.is_empty(),
            "{tail}: {:?}",
            by_tail.iterations
        );
    }
    // A megabyte naming 20,000 ids and figures no log holds, with the figure among them.
    let mut message: String = (0..20_000)
        .map(|n| format!("exec_{n:06}_zz and {} ", 100_000 + n))
        .collect();
    message.push_str(&format!("and was it {figure} rows?"));
    let found = rehydrate(&rig, &message, 4000, &mut Cooldown::default());
    assert!(found.iterations.contains(&2), "{:?}", found.iterations);
    // Past the first 100,000 items a message names, nothing more is looked for.
    let flood: String = (0..100_000).map(|n| format!("exec_{n:06}_zz ")).collect();
    let past = rehydrate(
        &rig,
        &format!("{flood} was it {figure} rows?"),
        4000,
        &mut Cooldown::default(),
    );
    assert!(past.iterations.is_empty(), "{:?}", past.iterations);
}

#[test]
fn rehydrate_over_an_archive_store_counts_each_call_once_however_many_fetches_it_takes() {
    let rig = Rig::with(
        MemoryStore::new(),
        vec![Answer::Text(valid_summary("the totals per region")); 2],
        small_window(),
    );
    let database = Rc::new(MemoryArchiveStore::new());
    let compactor = shelved(rig.compactor, |shelf| {
        shelf.with_archive_store(Rc::clone(&database) as Rc<dyn ArchiveStore>)
    });
    // Iterations 3 and 4 are in the first archive, which the live summary no longer names:
    // the copy lets go of its text at every refresh.
    for (grow, seed) in [(12, 42), (6, 43)] {
        grow_session(&rig.logs, &rig.clock, grow, seed);
        run_ready(compactor.compact(Trigger::User))
            .unwrap()
            .unwrap();
    }
    let asked = "What did iterations 3-4 find?";
    let mut cooldown = Cooldown::default();
    let mut ask = || {
        let fetched = database.values_fetched();
        let found = archives_now(&compactor)
            .with(|a| a.rehydrate(asked, 4000, &mut cooldown))
            .unwrap();
        (found.iterations, database.values_fetched() - fetched)
    };
    // Every call reads an archive the copy let go of: the run that lacked it is not a call.
    let (first, fetched) = ask();
    assert_eq!((first, fetched > 0), (vec![4, 3], true));
    assert_eq!(ask().0, Vec::<u32>::new());
    assert_eq!(
        ask().0,
        Vec::<u32>::new(),
        "still cooling at the third call"
    );
    assert_eq!(ask().0, [4, 3]);
}

/// A loop's clearing makes an archive an iteration: `count` of them after 3 iterations, in an
/// archive store that holds no text until fetched (IndexedDB's double), over `rig`'s logs.
fn cleared_into_archives(rig: Rig, count: usize) -> Compactor<MemoryStore, ManualClock> {
    let database = Rc::new(MemoryArchiveStore::new());
    let compactor = shelved(rig.compactor, |shelf| {
        shelf.with_archive_store(Rc::clone(&database) as Rc<dyn ArchiveStore>)
    });
    bulky_session(&rig.logs, &rig.clock, 3);
    for _ in 0..count {
        bulky_session(&rig.logs, &rig.clock, 1);
        let claim = compactor.claim(Trigger::Auto, Cancel::default()).unwrap();
        let result = run_ready(compactor.compact_claimed(claim.with_rung(Some(Rung::Clear))))
            .unwrap()
            .unwrap();
        assert_eq!(result.rung, Rung::Clear);
    }
    compactor
}

/// A search of iteration 1's figure over every archive (iterations 1 to 93).
fn first_figure_searched() -> RecallArgs {
    let figure = bulky_figure(1);
    RecallArgs::from_json(&format!(r#"{{"from":1,"to":93,"query":"{figure}"}}"#)).unwrap()
}

#[test]
fn a_search_over_more_archives_than_fetch_rounds_reads_them_all() {
    // 90 archives: a search must bring their texts in one round, not one a round.
    let rig = Rig::with(MemoryStore::new(), vec![], CompactorSettings::default());
    let compactor = cleared_into_archives(rig, 90);
    let archives = archives_now(&compactor);
    assert!(archives.with(|a| a.list()).unwrap().len() >= 90);
    // Iteration 1's figure, found by a search over every archive and by the recall of its
    // range, both with every text let go of first.
    let found = archives
        .with(|a| a.recall_text(&first_figure_searched(), 100_000))
        .unwrap();
    assert!(
        found.contains(&format!("Net revenue {}", bulky_figure(1))),
        "{}",
        &found[..found.len().min(400)]
    );
}

#[test]
fn a_search_over_every_archive_is_short_steps_with_the_page_s_turn_between_them() {
    // #66: at 300 archives the tool's query was one task of 63–110 ms. Here every reading of
    // the clock takes 1 ms, so reading the 60 archives takes several slices of 10 ms.
    let clock = ManualClock::ticking(NOV_22_2026, 1.0);
    let rig = Rig::offline(MemoryStore::new(), clock, CompactorSettings::default());
    let timer = rig.timer.clone();
    let compactor = cleared_into_archives(rig, 60);
    let archives = archives_now(&compactor);
    let args = first_figure_searched();
    let at_once = archives.with(|a| a.recall_text(&args, 100_000)).unwrap();
    let breaks = timer.breaks();
    let in_steps = archives.recall_text_in_steps(&args, 100_000, &timer);
    assert_eq!(in_steps, at_once, "the same answer, step by step");
    assert!(at_once.contains(&format!("Net revenue {}", bulky_figure(1))));
    assert!(
        timer.breaks() - breaks >= 3,
        "{} breaks over 60 archives",
        timer.breaks() - breaks
    );
    // A range of every archive, and a query nothing holds: the same answers too.
    for args in [r#"{"from":1,"to":93}"#, r#"{"query":"no-such-word"}"#] {
        let args = RecallArgs::from_json(args).unwrap();
        let at_once = archives.with(|a| a.recall_text(&args, 2_000)).unwrap();
        assert_eq!(archives.recall_text_in_steps(&args, 2_000, &timer), at_once);
    }
}

#[test]
fn a_query_whose_first_iteration_is_over_the_budget_is_that_iteration_in_parts_then_the_rest() {
    // #66: a query every archived iteration matched, its first over the budget, was all of
    // them joined and cut into parts (7 MB at 300 archives: hundreds of parts, 16 s in one
    // task). Now the parts are the first iteration's, and the last says how to read on.
    let rig = Rig::with(MemoryStore::new(), vec![], CompactorSettings::default());
    let compactor = cleared_into_archives(rig, 6);
    let archives = archives_now(&compactor);
    let ask = |part: u32| {
        let args = format!(r#"{{"query":"example.com/report","part":{part}}}"#);
        let args = RecallArgs::from_json(&args).unwrap();
        archives.with(|a| a.recall_text(&args, 1_000)).unwrap()
    };
    let first = ask(1);
    let count: u32 = first["Part 1 of ".len()..]
        .split(':')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{first}"));
    let whole: String = (1..=count).map(ask).collect();
    assert!(whole.contains(&format!("Net revenue {}", bulky_figure(1))));
    assert!(
        !whole.contains(&bulky_figure(2)),
        "only the first iteration in its parts"
    );
    let last = ask(count);
    assert!(
        last.ends_with("more entries after it: call again with from: 2 and the same query."),
        "{}",
        &last[last.len().saturating_sub(200)..]
    );
    for part in 1..=count {
        assert!(estimate_tokens(&ask(part)) <= 1_000, "part {part}");
    }
}

#[test]
fn the_sessions_preamble_is_recalled_with_iteration_1_and_found_by_the_recall_tool() {
    // GDRS writes the user's query before the first iteration's header.
    let rig = Rig::with(
        MemoryStore::new(),
        vec![Answer::Text(valid_summary("the totals per region"))],
        small_window(),
    );
    let query =
        "Query (2026-12-08T09:00:00Z): find which regions missed the Q3 target of quillwort-77";
    rig.logs.borrow_mut().append_reasoning(query).unwrap();
    grow_session(&rig.logs, &rig.clock, 12, 42);
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    assert_eq!(result.iterations, [1, 11]);
    let first = (rig.compactor.shelf())
        .with_archives(|a| a.recall(1))
        .unwrap()
        .unwrap();
    assert!(
        first
            .reasoning_log
            .iter()
            .any(|entry| entry.contains(query)),
        "recall(1): {:?}",
        first.reasoning_log
    );
    let found = call(&rig, r#"{"query":"quillwort-77"}"#, DEFAULT_RECALL_TOKENS);
    assert!(found.contains(query), "{found}");
}
