//! The message front (#67): an agent whose state is a message list, in each of the four
//! shapes, driven by its own loop (`should_compact`, `compact`, send what it returns) over 60
//! turns of bulky tool results at a 32K window.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::seeded::Seeded;
use common::{InstantTimer, NOV_22_2026};
use context_compactor::core::json::read::FromJson;
use context_compactor::core::log::iteration::Unit;
use context_compactor::core::log::tokens::estimate_tokens;
use context_compactor::core::messages::front::{default_settings, MessageCompaction, MessageFront};
use context_compactor::core::messages::rebuild::Out;
use context_compactor::core::messages::recalled::{recalled_results, Asked};
use context_compactor::core::messages::shape::Shape;
use context_compactor::core::model::clearing::{ByName, Clearing, Rung, ToolRule};
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::cancel::Cancel;
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::events::RecordingSink;
use context_compactor::core::ports::storage::MemoryStore;
use context_compactor::core::ports::timer::run_ready;
use context_compactor::core::providers::offline::OfflineProvider;
use context_compactor::core::run::compactor::Compactor;
use context_compactor::core::steps::clearing::CLEARED_MARK;
use context_compactor::core::store::keys::StorageKeys;
use context_compactor::core::store::log_store::LogStore;
use context_compactor::core::store::recall_tool::RecallArgs;
use serde_json::{json, Value};

const SHAPES: [Shape; 4] = [Shape::Gemini, Shape::OpenAi, Shape::Anthropic, Shape::AiSdk];
const GOAL: &str =
    "Find which regions missed the Q3 target in sales_q3.csv and write a short report.";
const LATER: &str = "Leave region 7 out of the report, ticket DQ-2291.";
const SIGNATURE: &str = "c2lnbmF0dXJlLW9mLXRoZS1jYWxs";

fn user(shape: Shape, text: &str) -> Value {
    match shape {
        Shape::Gemini => json!({ "role": "user", "parts": [{ "text": text }] }),
        _ => json!({ "role": "user", "content": text }),
    }
}

fn model_call(shape: Shape, text: &str, id: &str, name: &str, args: Value) -> Value {
    match shape {
        Shape::Gemini => json!({ "role": "model", "parts": [
            { "text": text },
            { "functionCall": { "id": id, "name": name, "args": args }, "thoughtSignature": SIGNATURE },
        ] }),
        Shape::OpenAi => json!({ "role": "assistant", "content": text, "tool_calls": [
            { "id": id, "type": "function", "function": { "name": name, "arguments": args.to_string() } },
        ] }),
        Shape::Anthropic => json!({ "role": "assistant", "content": [
            { "type": "text", "text": text },
            { "type": "tool_use", "id": id, "name": name, "input": args },
        ] }),
        Shape::AiSdk => json!({ "role": "assistant", "content": [
            { "type": "text", "text": text },
            { "type": "tool-call", "toolCallId": id, "toolName": name, "input": args,
              "providerOptions": { "google": { "thoughtSignature": SIGNATURE } } },
        ] }),
    }
}

fn tool_result(shape: Shape, id: &str, name: &str, body: &str) -> Value {
    match shape {
        Shape::Gemini => json!({ "role": "user", "parts": [
            { "functionResponse": { "id": id, "name": name, "response": { "content": body } } },
        ] }),
        Shape::OpenAi => json!({ "role": "tool", "tool_call_id": id, "content": body }),
        Shape::Anthropic => json!({ "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": id, "content": body },
        ] }),
        Shape::AiSdk => json!({ "role": "tool", "content": [
            { "type": "tool-result", "toolCallId": id, "toolName": name, "output": { "type": "text", "value": body } },
        ] }),
    }
}

/// A page or a table of about `words` words, distinct for `turn`.
fn bulky(turn: u32, words: u32) -> String {
    let mut out = format!("region,quarter,revenue,target (page {turn})\n");
    for row in 0..words / 4 {
        out.push_str(&format!(
            "r{},{},{},{}\n",
            row % 12,
            turn,
            1000 + row * 7 + turn,
            1200 + row
        ));
    }
    out
}

/// The ids of the calls the list makes and of the results it answers with.
fn calls_and_results(list: &[Value]) -> (Vec<String>, Vec<String>) {
    let (mut calls, mut results) = (Vec::new(), Vec::new());
    let id = |v: &Value, name: &str| v[name].as_str().map(str::to_owned);
    for message in list {
        calls.extend(
            message["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| id(c, "id")),
        );
        results.extend(id(message, "tool_call_id"));
        let parts = message["parts"]
            .as_array()
            .or(message["content"].as_array());
        for part in parts.into_iter().flatten() {
            calls.extend(id(&part["functionCall"], "id"));
            results.extend(id(&part["functionResponse"], "id"));
            match part["type"].as_str() {
                Some("tool_use") => calls.extend(id(part, "id")),
                Some("tool-call") => calls.extend(id(part, "toolCallId")),
                Some("tool_result") => results.extend(id(part, "tool_use_id")),
                Some("tool-result") => results.extend(id(part, "toolCallId")),
                _ => {}
            }
        }
    }
    calls.sort();
    results.sort();
    (calls, results)
}

struct Run {
    front: MessageFront<MemoryStore, ManualClock>,
    requests: Vec<usize>,
    compactions: Vec<String>,
    summaries: Vec<String>,
    last: Vec<Value>,
}

/// A front for lists of `shape` over logs in memory under `prefix`, with the offline provider
/// and `settings`; and its clock.
fn front_of(
    shape: Shape,
    prefix: &str,
    settings: CompactorSettings,
) -> (MessageFront<MemoryStore, ManualClock>, ManualClock) {
    let memory = MemoryStore::default();
    let clock = ManualClock::new(NOV_22_2026);
    let logs = Rc::new(RefCell::new(
        LogStore::new(memory, clock.clone(), StorageKeys::new(prefix), 11).with_unit(Unit::Turn),
    ));
    let engine = Compactor::new(
        logs,
        Box::new(OfflineProvider),
        Box::new(InstantTimer::new(&clock)),
        Box::new(RecordingSink::default()),
        settings,
    )
    .unwrap();
    (
        MessageFront::new(shape, Rc::new(engine), MemoryStore::default()),
        clock,
    )
}

/// Sixty turns of an agent of `shape`, its loop compacting when told.
fn sixty_turns(shape: Shape) -> Run {
    sixty_turns_with(shape, default_settings())
}

/// [`sixty_turns`] with `settings`.
fn sixty_turns_with(shape: Shape, settings: CompactorSettings) -> Run {
    let window = settings.context_window_tokens;
    let (front, clock) = front_of(shape, "msgs_", settings);
    let mut list = vec![user(shape, GOAL)];
    let mut run = Run {
        front,
        requests: Vec::new(),
        compactions: Vec::new(),
        summaries: Vec::new(),
        last: Vec::new(),
    };
    for turn in 0..60u32 {
        let texts: Vec<String> = list.iter().map(Value::to_string).collect();
        if run.front.should_compact(&texts).unwrap() {
            let (sent, done) = compact_list(&run.front, &list, Trigger::Auto, None);
            run.compactions.push(format!("{:?}", done.result.rung));
            run.summaries.extend(done.summary.clone());
            list = sent;
        }
        let sent: usize = list.iter().map(|m| estimate_tokens(&m.to_string())).sum();
        assert!(
            sent <= window,
            "{shape:?} turn {turn}: a request of {sent} tokens"
        );
        run.requests.push(sent);
        let (calls, results) = calls_and_results(&list);
        assert_eq!(
            calls, results,
            "{shape:?} turn {turn}: every call with its result"
        );
        // The model answers with a call, the app runs it.
        let words = if turn == 40 {
            3_200
        } else {
            900 + (turn % 5) * 300
        };
        list.extend(call_and_result(shape, turn, words));
        if turn == 12 {
            list.push(user(shape, LATER));
        }
        clock.advance(60_000.0);
    }
    run.last = list;
    run
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn an_agent_of_each_shape_stays_within_its_window_with_calls_whole_and_the_users_words_kept() {
    for shape in SHAPES {
        let run = sixty_turns(shape);
        let window = CompactorSettings::default().context_window_tokens;
        let summaries = run
            .compactions
            .iter()
            .filter(|rung| *rung != "Clear")
            .count();
        let average = run.requests.iter().sum::<usize>() / run.requests.len();
        let peak = run.requests.iter().max().copied().unwrap_or_default();
        println!(
            "{shape:?}: {} compactions, {summaries} summary calls, requests {average} tokens on average, {peak} at most",
            run.compactions.len()
        );
        assert!(
            (1..=3).contains(&summaries),
            "{shape:?}: {:?}",
            run.compactions
        );
        assert!(
            average * 10 <= window * 6,
            "{shape:?}: {average} tokens on average"
        );
        assert!(
            run.last[0].to_string().contains(GOAL),
            "{shape:?}: the goal stays first"
        );
        for summary in &run.summaries {
            assert!(
                summary.contains("DQ-2291") && summary.contains("Q3 target"),
                "{shape:?}: {summary}"
            );
            // Its header, source and index lines speak of turns (#67, item 3).
            assert!(
                summary.starts_with("=== COMPACTED SUMMARY (Turns 1-")
                    && summary.contains("\n(Originals of turns 1-")
                    && summary.contains("\n- Turns ")
                    && !summary.contains("\n- Iteration"),
                "{shape:?}: {summary}"
            );
        }
        if shape == Shape::Gemini {
            for message in run.last.iter().filter(|m| m["role"] == "model") {
                assert_eq!(
                    message["parts"][1]["thoughtSignature"], SIGNATURE,
                    "{message}"
                );
            }
        }
    }
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_cleared_result_larger_than_the_recall_tools_budget_comes_back_whole_by_its_call_id_in_parts() {
    let run = sixty_turns(Shape::OpenAi);
    let ask = |part: u32| {
        let args =
            RecallArgs::from_json(&format!(r#"{{"query":"call_40","part":{part}}}"#)).unwrap();
        run.front
            .engine()
            .shelf()
            .with_archives(|a| a.recall_text(&args, 4_000))
            .unwrap()
    };
    let first = ask(1);
    let count: u32 = first
        .strip_prefix("Part 1 of ")
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{first}"));
    assert!(
        count >= 2,
        "an 8,000-token result at 4,000 tokens an answer: {first}"
    );
    let mut whole = String::new();
    for part in 1..=count {
        let answer = ask(part);
        assert!(
            estimate_tokens(&answer) <= 4_000,
            "part {part} within the budget"
        );
        let body = answer.split_once(":\n").unwrap().1;
        let body = body
            .rsplit_once("\n… call again")
            .map_or(body, |(body, _)| body);
        whole.push_str(body);
    }
    for row in 0..800u32 {
        let line = format!("r{},40,{},{}\\n", row % 12, 1000 + row * 7 + 40, 1200 + row);
        assert!(whole.contains(&line), "row {row} read back");
    }
    assert!(ask(count + 1).contains("does not exist"));
    // A message list's turns, not iterations, in what the model reads.
    assert!(first.contains("[turn 41 · tool activity]"), "{first}");
    let text = serde_json::to_string(&run.last).unwrap();
    assert!(text.contains("characters of turn ") && !text.contains("characters of iteration "));
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn recall_gives_a_cleared_result_back_as_a_message_of_the_lists_shape() {
    for shape in SHAPES {
        let run = sixty_turns(shape);
        let recall = |asked: &Asked| {
            let json = run
                .front
                .engine()
                .shelf()
                .with_archives(|a| recalled_results(a, shape, asked))
                .unwrap();
            serde_json::from_str::<Vec<Value>>(&json).unwrap()
        };
        let by_id = recall(&Asked::Call("call_40".into()));
        let expected = tool_result(shape, "call_40", "fetch_page", &bulky(40, 3_200));
        assert_eq!(by_id.len(), 1, "{shape:?}");
        assert_eq!(
            by_id[0], expected,
            "{shape:?}: the result message as the app gave it"
        );
        assert_eq!(
            recall(&Asked::Turn(40)),
            by_id,
            "{shape:?}: turn 40 is iteration 41"
        );
        assert_eq!(
            recall(&Asked::Call("call_59".into())),
            Vec::<Value>::new(),
            "{shape:?}: live"
        );
    }
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_tools_durability_class_reaches_the_placeholders_of_a_message_list() {
    let mut settings = default_settings();
    if let Clearing::On(rules) = &mut settings.clearing {
        rules.tools = ByName(vec![("fetch_page".into(), ToolRule::Replayable)]);
    }
    let run = sixty_turns_with(Shape::Anthropic, settings);
    // The tool results' placeholders (the summary message may quote one).
    let results: Vec<&Value> = run
        .last
        .iter()
        .filter(|m| !m.to_string().contains("COMPACTED SUMMARY"))
        .collect();
    let text = serde_json::to_string(&results).unwrap();
    let placeholders = text.matches(CLEARED_MARK).count();
    assert!(placeholders > 0);
    assert_eq!(
        text.matches("the call can be made again. recall(").count(),
        placeholders
    );
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_list_whose_last_turn_awaits_its_result_compacts_only_the_turns_before_it() {
    for shape in SHAPES {
        let (front, _) = front_of(shape, "pending_", default_settings());
        let mut list = session(shape, 8);
        // The model's latest call, its result not in yet.
        list.push(model_call(
            shape,
            "Step 8.",
            "call_8",
            "fetch_page",
            json!({}),
        ));
        let (sent, done) = compact_list(&front, &list, Trigger::User, None);
        assert!(
            done.summary.is_some(),
            "{shape:?}: the turns before it were folded"
        );
        assert_eq!(
            sent.last(),
            list.last(),
            "{shape:?}: the waiting call stays as it was"
        );
        let (calls, results) = calls_and_results(&sent);
        assert_eq!(
            calls.len(),
            results.len() + 1,
            "{shape:?}: only the waiting call lacks a result"
        );
        assert!(calls.contains(&"call_8".to_owned()));
    }
}

/// A call of `shape` the model made beside `message`'s own (a second call in its message).
fn with_second_call(shape: Shape, mut message: Value, id: &str) -> Value {
    let more = model_call(shape, "", id, "long_job", json!({ "job": id }));
    let (from, field) = match shape {
        Shape::Gemini => (&more["parts"][1], "parts"),
        Shape::OpenAi => (&more["tool_calls"][0], "tool_calls"),
        _ => (&more["content"][1], "content"),
    };
    let part = from.clone();
    message[field].as_array_mut().unwrap().push(part);
    message
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_call_still_awaiting_its_result_in_an_older_turn_starts_what_a_summary_keeps() {
    for shape in SHAPES {
        let (front, _) = front_of(shape, "long_", default_settings());
        // Turn 5 starts a long job (a Gemini long-running call) whose result is not in yet.
        let mut list = session(shape, 12);
        let turn_five = 1 + 2 * 5;
        list[turn_five] = with_second_call(shape, list[turn_five].clone(), "job_5");
        let (sent, done) = compact_list(&front, &list, Trigger::User, None);
        // Iterations: turn 5 is iteration 6.
        let [_, last] = done.turns.expect("the turns before it folded");
        assert_eq!(
            last, 5,
            "{shape:?}: folded to iteration {last}, not to the waiting call's"
        );
        assert!(
            sent.contains(&list[turn_five]),
            "{shape:?}: the waiting call's message stays as it was"
        );
        // Its result comes in: it answers a call the list still holds.
        let mut grown = sent.clone();
        grown.push(tool_result(
            shape,
            "job_5",
            "long_job",
            "job 5 done: 3 regions",
        ));
        let (calls, results) = calls_and_results(&grown);
        assert!(
            results.iter().all(|id| calls.contains(id)),
            "{shape:?}: every result with its call: {calls:?} {results:?}"
        );
    }
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_rollback_gives_the_list_back_with_every_result_as_the_app_gave_it() {
    for shape in SHAPES {
        let (front, _) = front_of(shape, "undo_", default_settings());
        let mut original = session(shape, 10);
        original.insert(9, user(shape, LATER));
        let (compacted, done) = compact_list(&front, &original, Trigger::User, None);
        assert!(compacted.len() < original.len(), "{shape:?}: folded");
        // What the model reads names what it can call: its recall tool, not the app's method.
        let summary = done.summary.as_deref().unwrap_or_default();
        assert!(
            summary.contains("; the recall tool reads them back.")
                && !summary.contains("compactor.recall"),
            "{shape:?}: {summary}"
        );
        // The offline summary of a list whose model only called tools speaks of no code run.
        assert!(!summary.contains("code executions"), "{shape:?}: {summary}");
        let back = rolled_back_list(&front, &compacted, &done.result.archive_key);
        assert_eq!(back[0], original[0], "{shape:?}: the goal first");
        let text = serde_json::to_string(&back).unwrap();
        assert!(
            !text.contains("COMPACTED SUMMARY") && !text.contains(CLEARED_MARK),
            "{shape:?}"
        );
        let (calls, results) = calls_and_results(&back);
        assert_eq!(calls.len(), 10, "{shape:?}");
        assert_eq!(calls, results, "{shape:?}");
        for turn in 0..10u32 {
            let body = serde_json::to_string(&bulky(turn, 900)).unwrap();
            assert!(
                text.contains(&body[1..body.len() - 1]),
                "{shape:?}: turn {turn}'s result whole"
            );
        }
        assert!(
            text.contains("DQ-2291") && text.contains("Step 7: fetching page 7."),
            "{shape:?}: words back"
        );
        // The folded turns come back as the app gave them: every call keeps its own signature
        // (before, they were made again from the logs, signed with Gemini's documented stand-in).
        assert_eq!(back, original, "{shape:?}: deep-equal");
        let signatures: Vec<Option<&str>> = back
            .iter()
            .filter_map(|message| first_call_signature(shape, message))
            .collect();
        if matches!(shape, Shape::Gemini | Shape::AiSdk) {
            assert_eq!(signatures, vec![Some(SIGNATURE); 10], "{shape:?}");
        }
    }
}

/// The signature a Gemini model reads on the first call `message` makes (`Some(None)`: a call
/// without one), or `None` when it makes no call.
fn first_call_signature(shape: Shape, message: &Value) -> Option<Option<&str>> {
    let (parts, call) = match shape {
        Shape::Gemini => (&message["parts"], "functionCall"),
        _ => (&message["content"], "tool-call"),
    };
    let first = parts
        .as_array()?
        .iter()
        .find(|part| part.get(call).is_some() || part["type"] == call)?;
    Some(match shape {
        Shape::Gemini => first["thoughtSignature"].as_str(),
        _ => first["providerOptions"]["google"]["thoughtSignature"].as_str(),
    })
}

/// Turn `turn` of `shape`: the model's call (`Step n`, its url) and its result of about
/// `words` words.
fn call_and_result(shape: Shape, turn: u32, words: u32) -> [Value; 2] {
    let id = format!("call_{turn}");
    let args = json!({ "url": format!("https://example.com/sales/{turn}") });
    let text = format!("Step {turn}: fetching page {turn}.");
    [
        model_call(shape, &text, &id, "fetch_page", args),
        tool_result(shape, &id, "fetch_page", &bulky(turn, words)),
    ]
}

/// The goal and `turns` turns of `shape` (see [`call_and_result`]).
fn session(shape: Shape, turns: u32) -> Vec<Value> {
    let mut list = vec![user(shape, GOAL)];
    for turn in 0..turns {
        list.extend(call_and_result(shape, turn, 900));
    }
    list
}

/// `list` compacted by `front` with `trigger` (only `rung`, when given): the list to send and
/// what the compaction gave.
fn compact_list(
    front: &MessageFront<MemoryStore, ManualClock>,
    list: &[Value],
    trigger: Trigger,
    rung: Option<Rung>,
) -> (Vec<Value>, MessageCompaction) {
    let texts: Vec<String> = list.iter().map(Value::to_string).collect();
    let conversation = front.load(&texts).unwrap();
    let claim = front
        .engine()
        .claim(trigger, Cancel::default())
        .unwrap()
        .with_rung(rung);
    let result = run_ready(front.engine().compact_claimed(claim))
        .unwrap()
        .unwrap();
    let done = front.finish(&texts, &conversation, result).unwrap();
    (resolve(list, &done.list), done)
}

/// `list` (a compaction's list) after `front` rolled back the archive `key`.
fn rolled_back_list(
    front: &MessageFront<MemoryStore, ManualClock>,
    list: &[Value],
    key: &str,
) -> Vec<Value> {
    let texts: Vec<String> = list.iter().map(Value::to_string).collect();
    let conversation = front.load(&texts).unwrap();
    run_ready(front.engine().rollback(key)).unwrap().unwrap();
    resolve(list, &front.rolled_back(&texts, &conversation).unwrap())
}

/// The list `outs` names, over `list`.
fn resolve(list: &[Value], outs: &[Out]) -> Vec<Value> {
    outs.iter()
        .map(|out| match out {
            Out::Keep(i) => list[*i].clone(),
            Out::New(json) => serde_json::from_str(json).unwrap(),
        })
        .collect()
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_clearing_rolled_back_gives_the_list_back_byte_for_byte() {
    let (front, _) = front_of(Shape::Gemini, "unclear_", default_settings());
    let original = session(Shape::Gemini, 6);
    let (cleared, done) = compact_list(&front, &original, Trigger::Auto, Some(Rung::Clear));
    assert!(done.result.cleared.len() >= 4 && done.summary.is_none());
    let back = rolled_back_list(&front, &cleared, &done.result.archive_key);
    assert_eq!(
        back, original,
        "every placeholder spliced back, every other byte kept"
    );
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_chatty_user_never_makes_the_pinned_words_outgrow_the_summary() {
    let settings = default_settings();
    let budget = settings.summary_budget();
    let (front, _) = front_of(Shape::OpenAi, "chatty_", settings);
    let mut list = vec![user(Shape::OpenAi, GOAL)];
    let mut summaries = 0;
    for turn in 0..60u32 {
        let texts: Vec<String> = list.iter().map(Value::to_string).collect();
        if front.should_compact(&texts).unwrap() {
            let (sent, done) = compact_list(&front, &list, Trigger::Auto, None);
            summaries += usize::from(done.summary.is_some());
            list = sent;
        }
        list.extend(call_and_result(Shape::OpenAi, turn, 900));
        // The user says something new every turn, a paragraph each time.
        list.push(user(
            Shape::OpenAi,
            &format!(
                "Note {turn}: {}",
                "also check the regional totals against the ledger ".repeat(8)
            ),
        ));
    }
    assert!(summaries >= 1);
    let pinned: usize = front
        .engine()
        .logs()
        .borrow()
        .pins()
        .unwrap()
        .iter()
        .map(|pin| estimate_tokens(&pin.text))
        .sum();
    assert!(
        pinned <= budget / 4,
        "{pinned} pinned tokens of a {budget}-token summary"
    );
}

#[test]
fn calls_with_one_id_in_every_turn_are_told_apart_by_position() {
    for shape in SHAPES {
        let (front, _) = front_of(shape, "same_id_", default_settings());
        // A local server that numbers its calls per request: `call_0` at every step.
        let mut list = vec![user(shape, GOAL)];
        for turn in 0..6u32 {
            let text = format!("Step {turn}.");
            let args = json!({ "page": turn });
            list.push(model_call(shape, &text, "call_0", "fetch_page", args));
            list.push(tool_result(
                shape,
                "call_0",
                "fetch_page",
                &bulky(turn, 900),
            ));
        }
        let (sent, done) = compact_list(&front, &list, Trigger::Auto, Some(Rung::Clear));
        assert!(done.result.cleared.len() >= 3, "{shape:?}");
        for turn in 0..6u32 {
            let at = 2 + 2 * turn as usize;
            let body = sent[at].to_string();
            let own = body.contains(&format!("(page {turn})"));
            let named = |end: char| body.contains(&format!(" of turn {}{end}", turn + 1));
            let placeholder = body.contains(CLEARED_MARK) && (named(';') || named('.'));
            assert!(
                (own && !body.contains(CLEARED_MARK)) || (placeholder && !own),
                "{shape:?} turn {turn}: {}",
                &body[..body.len().min(300)]
            );
        }
        assert_eq!(sent[12], list[12], "{shape:?}: the newest result whole");
        let mut turns: Vec<u32> = done.result.cleared.iter().map(|c| c.iteration).collect();
        turns.dedup();
        assert_eq!(
            turns.len(),
            done.result.cleared.len(),
            "{shape:?}: one result a turn"
        );
    }
}

/// What the page's `compact(list)` does, natively, over the JSON texts of the list given (as
/// the page reads them: `JSON.stringify` of the app's objects, the same for an object the
/// package wrote): the list stitched to what the last compaction returned, compacted when the
/// loop's rule says so (`None` otherwise), and remembered in the app's terms.
fn compact_like_the_page(
    front: &MessageFront<MemoryStore, ManualClock>,
    texts: &[String],
) -> (Vec<String>, Option<MessageCompaction>) {
    let stitched = front.working(texts.to_vec());
    let working = &stitched.working;
    if !front.should_compact(working).unwrap() {
        return (working.clone(), None);
    }
    let conversation = front.load(working).unwrap();
    let claim = front
        .engine()
        .claim(Trigger::Auto, Cancel::default())
        .unwrap();
    let result = run_ready(front.engine().compact_claimed(claim))
        .unwrap()
        .unwrap();
    let done = front.finish(working, &conversation, result).unwrap();
    front.remember(&stitched, &done.list);
    (resolve_texts(working, &done.list), Some(done))
}

/// An app that sends its own history at every call (the AI SDK 7's across calls), and the
/// list `compact` returned, grown by one step, in between (its `prepareStep` within a call),
/// for `turns` turns, its page reloaded every `reload` turns (a new front over the same
/// archives, what it keeps in a store that lasts): the compactions made.
fn own_history_session(shape: Shape, turns: u32, reload: u32) -> Vec<MessageCompaction> {
    let (mut front, clock) = front_of(shape, "own_", default_settings());
    let kept = MemoryStore::default();
    let mut history = vec![user(shape, GOAL).to_string()];
    let mut made = Vec::new();
    for turn in 0..turns {
        if turn % reload == 0 {
            front = MessageFront::new(shape, Rc::clone(front.engine()), kept.clone());
        }
        let (sent, done) = compact_like_the_page(&front, &history);
        made.extend(done.filter(|done| done.compacted));
        let step = call_and_result(shape, turn, 900 + (turn % 4) * 300).map(|m| m.to_string());
        history.extend(step.iter().cloned());
        if turn % 3 == 1 {
            // A step inside the call: the list returned, grown by that step.
            let mut within = sent;
            within.extend(step);
            let (_, done) = compact_like_the_page(&front, &within);
            made.extend(done.filter(|done| done.compacted));
        }
        if turn % 9 == 4 {
            history.push(user(shape, &format!("Also check region {turn}.")).to_string());
        }
        clock.advance(60_000.0);
    }
    made
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn an_app_that_sends_its_own_history_every_time_has_nothing_cleared_or_folded_twice() {
    for (shape, reload) in SHAPES.into_iter().zip([1, 7, 1_000, 13]) {
        let made = own_history_session(shape, 70, reload);
        let summaries = made.iter().filter(|done| done.summary.is_some()).count();
        assert!(
            summaries >= 1 && made.len() >= 4,
            "{shape:?}: {} compactions, {summaries} summaries",
            made.len()
        );
        // No result cleared twice, no turn folded twice.
        let mut cleared: Vec<u32> = Vec::new();
        let mut folded_to = 0;
        for done in &made {
            for body in &done.result.cleared {
                assert!(
                    !cleared.contains(&body.iteration),
                    "{shape:?}: turn {} cleared twice",
                    body.iteration
                );
                cleared.push(body.iteration);
            }
            if let Some([first, last]) = done.turns {
                assert!(
                    first > folded_to,
                    "{shape:?}: turns {first}-{last} after {folded_to}"
                );
                folded_to = last;
            }
        }
    }
}

/// A list of `shape` generated from `rng`: the goal, turns of one to three calls whose ids are
/// often shared (`call_0`), results one message each or (Anthropic, Gemini) one message a turn,
/// bodies as text, a content array of typed parts or an object, the user's words over several
/// lines between turns, now and then a result that answers no call and a newest call still
/// waiting for its result.
fn generated_list(shape: Shape, rng: &mut Seeded) -> Vec<Value> {
    let mut list = vec![user(
        shape,
        "Which regions missed the target?\nRead every page.",
    )];
    let turns = 3 + rng.next(5) as u32;
    for turn in 0..turns {
        match rng.next(6) {
            0 => list.push(user(shape, &format!("Also region {turn}.\nAnd its file."))),
            1 => list.push(with_image(shape, &format!("Region {turn}'s chart."))),
            _ => {}
        }
        let calls: Vec<String> = (0..1 + rng.next(3))
            .map(|k| match rng.next(3) {
                0 => "call_0".to_owned(),
                _ => format!("call_{turn}_{k}"),
            })
            .collect();
        let said = match rng.next(5) {
            0 => format!("The user wrote: region {turn} first.\nStep {turn}."),
            _ => format!("Step {turn}."),
        };
        let mut model = model_call(
            shape,
            &said,
            &calls[0],
            "fetch_page",
            json!({ "page": turn }),
        );
        for id in &calls[1..] {
            let more = model_call(shape, "", id, "fetch_page", json!({ "page": turn }));
            let (from, field) = match shape {
                Shape::Gemini => (&more["parts"][1], "parts"),
                Shape::OpenAi => (&more["tool_calls"][0], "tool_calls"),
                _ => (&more["content"][1], "content"),
            };
            let part = from.clone();
            model[field].as_array_mut().unwrap().push(part);
        }
        if rng.next(4) == 0 {
            // A field of the app's own, which no shape reader knows.
            model["x_trace"] = json!({ "span": turn, "tags": ["a", "b"] });
        }
        list.push(model);
        if turn == turns - 1 && rng.next(2) == 0 {
            break;
        }
        let mut results: Vec<Value> = Vec::new();
        for id in &calls {
            let text = bulky(turn, 300 + rng.next(600) as u32);
            let body = match rng.next(3) {
                0 => json!(text),
                1 => json!([{ "type": "text", "text": text }, { "type": "text", "text": "end" }]),
                _ => json!({ "page": turn, "rows": text }),
            };
            results.push(result_with(shape, id, body));
        }
        if rng.next(6) == 0 {
            results.push(result_with(shape, "call_orphan", json!("answers no call")));
        }
        match shape {
            Shape::Anthropic | Shape::Gemini => {
                let field = if shape == Shape::Gemini {
                    "parts"
                } else {
                    "content"
                };
                let mut one = results[0].clone();
                for more in &results[1..] {
                    let part = more[field][0].clone();
                    one[field].as_array_mut().unwrap().push(part);
                }
                list.push(one);
            }
            _ => list.extend(results),
        }
    }
    list
}

/// The user's message of `shape` saying `text` beside an image (a PNG of a few bytes).
fn with_image(shape: Shape, text: &str) -> Value {
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg==";
    match shape {
        Shape::Gemini => json!({ "role": "user", "parts": [
            { "text": text }, { "inlineData": { "mimeType": "image/png", "data": PNG } },
        ] }),
        Shape::OpenAi => json!({ "role": "user", "content": [
            { "type": "text", "text": text },
            { "type": "image_url", "image_url": { "url": format!("data:image/png;base64,{PNG}") } },
        ] }),
        Shape::Anthropic => json!({ "role": "user", "content": [
            { "type": "text", "text": text },
            { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": PNG } },
        ] }),
        Shape::AiSdk => json!({ "role": "user", "content": [
            { "type": "text", "text": text },
            { "type": "image", "image": PNG, "mediaType": "image/png" },
        ] }),
    }
}

/// The result message of `shape` answering `id` with `body` (any JSON, as the shape holds it).
fn result_with(shape: Shape, id: &str, body: Value) -> Value {
    match shape {
        Shape::Gemini => {
            let response = if body.is_object() {
                body
            } else {
                json!({ "output": body })
            };
            json!({ "role": "user", "parts": [{ "functionResponse": { "id": id, "name": "fetch_page", "response": response } }] })
        }
        Shape::OpenAi => {
            let content = if body.is_object() {
                json!(body.to_string())
            } else {
                body
            };
            json!({ "role": "tool", "tool_call_id": id, "content": content })
        }
        Shape::Anthropic => {
            let content = if body.is_object() {
                json!(body.to_string())
            } else {
                body
            };
            json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": id, "content": content }] })
        }
        Shape::AiSdk => {
            let output = match &body {
                Value::String(_) => json!({ "type": "text", "value": body }),
                Value::Array(_) => json!({ "type": "content", "value": body }),
                _ => json!({ "type": "json", "value": body }),
            };
            json!({ "role": "tool", "content": [{ "type": "tool-result", "toolCallId": id, "toolName": "fetch_page", "output": output }] })
        }
    }
}

/// The texts `outs` names over `texts`.
fn resolve_texts(texts: &[String], outs: &[Out]) -> Vec<String> {
    outs.iter()
        .map(|out| match out {
            Out::Keep(i) => texts[*i].clone(),
            Out::New(json) => json.clone(),
        })
        .collect()
}

#[test]
#[ignore = "a thousand lists, slow unoptimised: scripts/test.sh runs it optimised"]
fn every_clearing_of_a_generated_list_keeps_each_message_or_its_placeholder_and_rolls_back_byte_for_byte(
) {
    let mut cleared_lists = 0;
    for seed in 1..=1_000u64 {
        let mut rng = Seeded(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let shape = SHAPES[rng.next(4) as usize];
        let list: Vec<String> = (generated_list(shape, &mut rng).iter())
            .map(Value::to_string)
            .collect();
        let (front, _) = front_of(shape, &format!("gen_{seed}_"), default_settings());
        let engine = front.engine();
        let conversation = front.load(&list).unwrap();
        let claim = engine.claim(Trigger::User, Cancel::default()).unwrap();
        let claim = claim.with_rung(Some(Rung::Clear));
        let Ok(result) = run_ready(engine.compact_claimed(claim)).unwrap() else {
            continue;
        };
        cleared_lists += 1;
        let done = front.finish(&list, &conversation, result).unwrap();
        let sent = resolve_texts(&list, &done.list);
        assert_eq!(
            sent.len(),
            list.len(),
            "seed {seed} {shape:?}: no message added or dropped"
        );
        for (at, (now, was)) in sent.iter().zip(&list).enumerate() {
            assert!(
                now == was || now.contains(CLEARED_MARK),
                "seed {seed} {shape:?} message {at}: changed without a placeholder"
            );
            // Every result keeps the call it answers (its id where it was).
            let ids = |json: &str| calls_and_results(&[serde_json::from_str(json).unwrap()]);
            assert_eq!(ids(now), ids(was), "seed {seed} {shape:?} message {at}");
        }
        // Each cleared result recalled by its call id and by its turn: messages the app gave,
        // byte for byte, one of them the one that held it.
        for body in &done.result.cleared {
            for asked in [
                Asked::Call(body.entry_id.clone()),
                Asked::Turn(body.iteration - 1),
            ] {
                let recalled = engine
                    .shelf()
                    .with_archives(|a| recalled_results(a, shape, &asked))
                    .unwrap();
                let recalled: Vec<Value> = serde_json::from_str(&recalled).unwrap();
                assert!(!recalled.is_empty(), "seed {seed} {shape:?} {asked:?}");
                for message in &recalled {
                    assert!(
                        list.contains(&message.to_string()),
                        "seed {seed} {shape:?} {asked:?}: {message} is not one the app gave"
                    );
                }
            }
        }
        // The clearing rolled back: the app's texts, byte for byte.
        let conversation = front.load(&sent).unwrap();
        run_ready(engine.rollback(&done.result.archive_key))
            .unwrap()
            .unwrap();
        let back = resolve_texts(&sent, &front.rolled_back(&sent, &conversation).unwrap());
        assert!(
            back == list,
            "seed {seed} {shape:?}: the clearing rolled back, byte for byte"
        );
    }
    assert!(cleared_lists >= 500, "{cleared_lists} lists cleared");
}

#[test]
#[ignore = "a thousand lists, slow unoptimised: scripts/test.sh runs it optimised"]
fn every_summary_of_a_generated_list_keeps_the_rest_and_rolls_back_byte_for_byte() {
    let mut summarised = 0;
    for seed in 1..=1_000u64 {
        let mut rng = Seeded(seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
        let shape = SHAPES[rng.next(4) as usize];
        let list: Vec<String> = (generated_list(shape, &mut rng).iter())
            .map(Value::to_string)
            .collect();
        let settings = CompactorSettings {
            clearing: Clearing::Off,
            ..default_settings()
        };
        let (front, _) = front_of(shape, &format!("fold_{seed}_"), settings);
        let engine = front.engine();
        let conversation = front.load(&list).unwrap();
        let claim = engine.claim(Trigger::User, Cancel::default()).unwrap();
        let Ok(result) = run_ready(engine.compact_claimed(claim)).unwrap() else {
            continue;
        };
        let done = front.finish(&list, &conversation, result).unwrap();
        let Some([_, last]) = done.turns else {
            continue;
        };
        summarised += 1;
        let sent = resolve_texts(&list, &done.list);
        // The goal, the summary, then the app's own messages of the turns after it.
        let kept: Vec<&String> = (conversation.turns.iter())
            .filter(|turn| turn.iteration > last)
            .flat_map(|turn| &list[turn.messages.clone()])
            .collect();
        assert_eq!(sent[0], list[0], "seed {seed} {shape:?}");
        assert!(
            sent[1].contains("COMPACTED SUMMARY"),
            "seed {seed} {shape:?}"
        );
        assert_eq!(
            sent[2..].iter().collect::<Vec<_>>(),
            kept,
            "seed {seed} {shape:?}"
        );
        // The summary rolled back: the app's texts, byte for byte (its images, its own fields,
        // its signatures, who said each line), with a message appended since.
        let mut grown = sent.clone();
        grown.push(user(shape, "And now?").to_string());
        let conversation = front.load(&grown).unwrap();
        run_ready(engine.rollback(&done.result.archive_key))
            .unwrap()
            .unwrap();
        let back = resolve_texts(&grown, &front.rolled_back(&grown, &conversation).unwrap());
        let mut want = list.clone();
        want.push(grown[grown.len() - 1].clone());
        assert!(
            back == want,
            "seed {seed} {shape:?}: the summary rolled back, byte for byte"
        );
    }
    assert!(summarised >= 500, "{summarised} lists summarised");
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn an_approval_answered_on_its_own_keeps_its_result_with_the_call_through_a_summary() {
    let shape = Shape::AiSdk;
    let (front, _) = front_of(shape, "approve_", default_settings());
    let mut list = session(shape, 5);
    // Turn 5: a call that asked for approval, answered in a tool message of its own, its
    // result in the next one; then the model's answer (turn 6, kept whole).
    let [mut call, result] = call_and_result(shape, 5, 900);
    call["content"].as_array_mut().unwrap().push(
        json!({ "type": "tool-approval-request", "approvalId": "a5", "toolCallId": "call_5" }),
    );
    list.push(call);
    list.push(json!({ "role": "tool", "content": [
        { "type": "tool-approval-response", "approvalId": "a5", "approved": true },
    ] }));
    list.push(result);
    list.push(json!({ "role": "assistant", "content": [{ "type": "text", "text": "Done." }] }));
    let (sent, done) = compact_list(&front, &list, Trigger::User, None);
    assert!(done.summary.is_some(), "folded");
    let (calls, results) = calls_and_results(&sent);
    assert!(
        results.iter().all(|id| calls.contains(id)),
        "every result with its call: calls {calls:?}, results {results:?}"
    );
}

#[test]
#[ignore = "a thousand lists, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_list_compact_returned_compacted_again_changes_only_by_a_compaction_it_reports() {
    let mut again = 0;
    for seed in 1..=300u64 {
        let mut rng = Seeded(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5555);
        let shape = SHAPES[rng.next(4) as usize];
        let list = generated_list(shape, &mut rng);
        let (front, _) = front_of(shape, &format!("idem_{seed}_"), default_settings());
        let texts: Vec<String> = list.iter().map(Value::to_string).collect();
        let (sent, _) = compact_like_the_page(&front, &texts);
        // The loop's own question: nothing is due on what it returned.
        let (same, done) = compact_like_the_page(&front, &sent);
        assert!(
            done.is_none() && same == sent,
            "seed {seed} {shape:?}: auto again"
        );
        // The app's model says the context is too long: whatever comes back is what the
        // compaction says it did.
        let engine = front.engine();
        let archives = || engine.shelf().with_archives(|a| a.list().unwrap().len());
        for _ in 0..2 {
            let stitched = front.working(sent.clone());
            let conversation = front.load(&stitched.working).unwrap();
            let before = archives();
            let Ok(claim) = engine.claim(Trigger::ContextLimitError, Cancel::default()) else {
                break;
            };
            let Ok(result) = run_ready(engine.compact_claimed(claim)).unwrap() else {
                break;
            };
            let done = front
                .finish(&stitched.working, &conversation, result)
                .unwrap();
            let now = resolve_texts(&stitched.working, &done.list);
            assert_eq!(
                done.compacted,
                now != stitched.working,
                "seed {seed} {shape:?}: compacted says whether the list changed"
            );
            assert!(
                done.compacted || archives() == before,
                "seed {seed} {shape:?}: an archive written for a compaction that changed nothing"
            );
            again += usize::from(done.compacted);
            front.remember(&stitched, &done.list);
        }
    }
    println!("{again} compactions of returned lists changed them");
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_call_without_an_id_is_recalled_by_the_id_its_placeholder_names_as_the_app_gave_it() {
    let shape = Shape::Gemini;
    let (front, _) = front_of(shape, "noid_", default_settings());
    let mut list = vec![user(shape, GOAL)];
    for turn in 0..6u32 {
        list.push(json!({ "role": "model", "parts": [
            { "functionCall": { "name": "fetch_page", "args": { "page": turn } } },
        ] }));
        list.push(json!({ "role": "user", "parts": [
            { "functionResponse": { "name": "fetch_page", "response": { "rows": bulky(turn, 900) } } },
        ] }));
    }
    let (_, done) = compact_list(&front, &list, Trigger::Auto, Some(Rung::Clear));
    // The id the report gives the app for the first cleared call: the tool's name, its turn.
    let first = &done.result.cleared[0];
    assert_eq!(first.entry_id, format!("fetch_page#{}.0", first.iteration));
    let recalled = front
        .engine()
        .shelf()
        .with_archives(|a| recalled_results(a, shape, &Asked::Call(first.entry_id.clone())))
        .unwrap();
    let recalled: Vec<Value> = serde_json::from_str(&recalled).unwrap();
    let held = 2 * first.iteration as usize;
    assert_eq!(
        recalled,
        vec![list[held].clone()],
        "the message that held it, as given"
    );
}
