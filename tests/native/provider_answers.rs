//! What the engine makes of a provider's answers (issue #14): usage summed over every answer
//! that reported it, retries that say why, quotas that last the day, cancellation.
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod common;

use std::future::Future;
use std::task::{Context, Poll, Waker};

use common::*;
use context_compactor::core::error::{CompactionError, ErrorCode};
use context_compactor::core::error::{ProviderError, ProviderFailure, ThrownSays};
use context_compactor::core::model::outcome::{AnswerFormat, CompactionResult};
use context_compactor::core::model::settings::Trigger;
use context_compactor::core::model::token_usage::TokenUsage;
use context_compactor::core::ports::cancel::Cancel;
use context_compactor::core::ports::events::CompactionEvent;
use context_compactor::core::ports::storage::MemoryStore;
use context_compactor::core::ports::timer::run_ready;

fn session(answers: Vec<Answer>) -> Rig {
    let rig = Rig::with(MemoryStore::new(), answers, small_window());
    grow_session(&rig.logs, &rig.clock, 5, 7);
    rig
}

fn billed(error: ProviderError, prompt_tokens: u64) -> ProviderFailure {
    error.with_usage(Some(TokenUsage {
        prompt_tokens,
        thinking_tokens: 4000,
        ..Default::default()
    }))
}

#[test]
fn usage_adds_up_over_every_answer_that_reported_it_and_names_the_model() {
    let cut_off = billed(
        ProviderError::Incomplete("hit maxOutputTokens".into()),
        1200,
    );
    let rig = session(vec![
        Answer::fail(cut_off),
        Answer::Text(valid_summary("after a cut-off answer")),
    ]);
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    let usage = result.usage.expect("both answers reported usage");
    assert_eq!(usage.prompt_tokens, 1200 + 1000);
    assert_eq!(usage.thinking_tokens, 4000);
    assert_eq!(usage.output_tokens, 100);
    assert_eq!(result.model.as_deref(), Some("scripted-1"));

    // A provider that reports nothing gives null, not zeros.
    let memory = MemoryStore::new();
    let rig = Rig::offline(memory, rig.clock.clone(), small_window());
    grow_session(&rig.logs, &rig.clock, 5, 7);
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    assert_eq!(result.usage, None);
}

#[test]
fn a_retry_says_why_which_attempt_and_after_how_long() {
    let overloaded = ProviderError::Http {
        status: 503,
        message: "The model is overloaded.".into(),
        retry_after_ms: None,
        lasting: false,
    };
    let rig = session(vec![
        Answer::fail(overloaded),
        Answer::Text(valid_summary("second time lucky")),
    ]);
    run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    let events = rig.events.events();
    let retry = events
        .iter()
        .find_map(|e| match e {
            CompactionEvent::Retry {
                reason,
                attempt,
                wait_ms,
                message,
            } => Some((reason.clone(), *attempt, *wait_ms, message.clone())),
            _ => None,
        })
        .expect("a retry event");
    assert_eq!((retry.0.as_str(), retry.1, retry.2), ("http_503", 2, 2000));
    assert_eq!(
        retry.3,
        "The model's API answered HTTP 503; attempt 2 of 2 in 2.0 s"
    );
    let progress = events
        .iter()
        .any(|e| matches!(e, CompactionEvent::Progress { message, .. } if *message == retry.3));
    assert!(progress, "the phase message follows the retry's reason");
    assert!(!events.iter().any(|e| matches!(
        e,
        CompactionEvent::Progress { message, .. } if message.contains("incomplete")
    )));
}

#[test]
fn a_quota_used_up_for_the_day_is_not_retried() {
    let daily = ProviderError::Http {
        status: 429,
        message: "the quota is used up for today".into(),
        retry_after_ms: Some(47_000),
        lasting: true,
    };
    let provider = ScriptedProvider::new(vec![
        Answer::fail(daily),
        Answer::Text(valid_summary("never asked")),
    ]);
    let rig = Rig::scripted(MemoryStore::new(), provider.clone(), small_window());
    grow_session(&rig.logs, &rig.clock, 5, 7);
    let err = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmHttp);
    assert_eq!(err.retryable(), Some(false));
    assert_eq!(provider.calls(), 1);
    assert!(rig.timer.waits_as_told().iter().all(|&ms| ms != 47_000));
}

fn poll<F: Future + ?Sized>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn a_cancelled_compaction_stops_waiting_and_changes_nothing() {
    let rig = session(vec![Answer::Hang]);
    rig.timer.never.set(true);
    let before = rig.dump();
    let cancel = Cancel::default();
    let mut running = Box::pin(rig.compactor.compact_until(Trigger::User, cancel.clone()));
    assert!(poll(running.as_mut()).is_pending(), "the model hangs");
    rig.compactor.abort();
    let Poll::Ready(outcome) = poll(running.as_mut()) else {
        panic!("abort() ends the wait at once");
    };
    assert!(matches!(outcome, Err(CompactionError::Aborted)));
    assert_eq!(rig.dump(), before);
    assert!(!holds_an_archive(&rig.memory));
    assert!(!rig.compactor.busy());
    let last = rig.events.events().pop();
    assert!(matches!(
        last,
        Some(CompactionEvent::Error {
            code: "aborted",
            ..
        })
    ));

    // A token already tripped refuses at once; abort() with nothing running does nothing.
    rig.compactor.abort();
    let tripped = Cancel::default();
    tripped.cancel();
    let err = run_ready(rig.compactor.compact_until(Trigger::User, tripped))
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Aborted);
}

#[test]
fn a_cancel_during_the_retry_wait_ends_it() {
    let rig = session(vec![
        Answer::fail(ProviderError::Network("offline".into())),
        Answer::Text(valid_summary("too late")),
    ]);
    rig.timer.never.set(true);
    let before = rig.dump();
    let cancel = Cancel::default();
    let mut running = Box::pin(rig.compactor.compact_until(Trigger::User, cancel.clone()));
    assert!(poll(running.as_mut()).is_pending(), "waiting to retry");
    cancel.cancel();
    assert!(matches!(
        poll(running.as_mut()),
        Poll::Ready(Err(CompactionError::Aborted))
    ));
    assert_eq!(rig.dump(), before);
}

/// The canonical `summary` with its six headings written by `heading(index, emoji, title)`.
fn reshaped(summary: &str, heading: impl Fn(usize, &str, &str) -> String) -> String {
    const TITLES: [(&str, &str); 6] = [
        ("🎯", "OBJECTIVE ACHIEVED"),
        ("📊", "KEY DISCOVERIES"),
        ("✅", "SUCCESSFUL SOLUTIONS"),
        ("🔧", "TOOLS USED SUCCESSFULLY"),
        ("💡", "CRITICAL INSIGHTS"),
        ("📝", "IMPORTANT CONTEXT FOR FUTURE REASONING"),
    ];
    let mut text = summary.to_owned();
    for (i, (emoji, title)) in TITLES.iter().enumerate() {
        text = text.replace(&format!("### {emoji} {title}"), &heading(i, emoji, title));
    }
    text
}

/// `ALL CAPS` as a model writes a title: `All Caps`.
fn title_case(title: &str) -> String {
    title
        .split(' ')
        .map(|word| word[..1].to_owned() + &word[1..].to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A session of 5 iterations compacted by a model that answers the canonical summary keeping
/// every ledger fact, written by `shape`: the rig, that canonical summary, and the result.
fn answered_in_shape(
    name: &str,
    shape: impl Fn(&str) -> String,
) -> (Rig, String, CompactionResult) {
    let memory = MemoryStore::new();
    let probe = Rig::with(memory.clone(), Vec::new(), small_window());
    grow_session(&probe.logs, &probe.clock, 5, 7);
    let facts = probe.compactor.plan().unwrap().ledger;
    let canonical = valid_summary(&facts.join("\n- "));
    let rig = Rig::with(
        memory,
        vec![Answer::Verbatim(shape(&canonical))],
        small_window(),
    );
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap_or_else(|err| panic!("{name}: {err}"));
    (rig, canonical, result)
}

/// Answers in the shapes models write — other heading levels, bold or numbered headings, no
/// emoji, a fence around the answer, a preamble, a closing remark — keep every fact and are
/// taken at the first attempt, stored with canonical headings and without the wrapping.
#[test]
fn answers_in_the_shapes_models_write_are_taken_at_once_and_stored_canonical() {
    type Shape = Box<dyn Fn(&str) -> String>;
    let shapes: Vec<(&str, Shape)> = vec![
        (
            "## with emoji",
            Box::new(|s| reshaped(s, |_, e, t| format!("## {e} {}", title_case(t)))),
        ),
        (
            "bold lines",
            Box::new(|s| reshaped(s, |_, _, t| format!("**{t}**"))),
        ),
        (
            "numbered",
            Box::new(|s| reshaped(s, |i, _, t| format!("### {}. {}", i + 1, title_case(t)))),
        ),
        (
            "numbered, no heading mark, trailing colon",
            Box::new(|s| reshaped(s, |i, _, t| format!("{}. {}:", i + 1, title_case(t)))),
        ),
        ("fenced", Box::new(|s| format!("```markdown\n{s}\n```"))),
        (
            "preamble and closing remark",
            Box::new(|s| {
                format!("Here is the structured summary you asked for:\n\n{s}\n\nLet me know if you need more detail.")
            }),
        ),
    ];
    for (name, shape) in shapes {
        let (_, canonical, result) = answered_in_shape(name, shape);
        assert_eq!(result.attempts, 1, "{name}");
        assert_eq!(result.summary, canonical, "{name}");
        assert_eq!(result.coverage.missing, Vec::<String>::new(), "{name}");
    }
}

/// The canonical `summary` as a JSON object with one snake_case key per section, each the list
/// of its points (what Gemini's structured output, or a model asked for JSON, writes).
fn as_json(summary: &str) -> String {
    let mut object = serde_json::Map::new();
    let mut key = String::new();
    for line in summary.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            let title = heading.split_once(' ').map_or(heading, |(_, t)| t);
            key = title.to_ascii_lowercase().replace(' ', "_");
            object.insert(key.clone(), serde_json::json!([]));
        } else if let Some(list) = object.get_mut(&key).and_then(|v| v.as_array_mut()) {
            list.push(line.trim_start_matches("- ").into());
        }
    }
    serde_json::Value::Object(object).to_string()
}

/// The shapes other models and apps write (#40): plain title lines, headings in the user's
/// language keeping their emoji, bold labels that open a line of text, a JSON object (bare,
/// fenced, after a reasoning block), and reasoning before a markdown answer. Each is taken at
/// the first attempt with every fact, and what is stored is the six sections, canonical, with
/// no reasoning and no JSON.
#[test]
fn answers_in_other_shapes_in_json_or_after_reasoning_are_read_as_the_six_sections() {
    const SPANISH: [&str; 6] = [
        "Objetivo logrado",
        "Descubrimientos clave",
        "Soluciones exitosas",
        "Herramientas usadas con éxito",
        "Ideas críticas",
        "Contexto importante para el razonamiento futuro",
    ];
    const THINK: &str =
        "<think>\nThe user wants the six sections. I cannot drop a listed fact.\n</think>\n";
    type Shape = Box<dyn Fn(&str) -> String>;
    let shapes: Vec<(&str, Shape, AnswerFormat)> = vec![
        (
            "plain title lines",
            Box::new(|s| reshaped(s, |_, _, t| format!("{t}:"))),
            AnswerFormat::Markdown,
        ),
        (
            "Spanish headings with their emoji",
            Box::new(|s| reshaped(s, |i, e, _| format!("## {e} {}", SPANISH[i]))),
            AnswerFormat::Markdown,
        ),
        (
            "bold labels opening a line",
            Box::new(|s| {
                reshaped(s, |_, _, t| format!("**{}:**", title_case(t)))
                    .replace(":**\n- ", ":** - ")
            }),
            AnswerFormat::Markdown,
        ),
        (
            "<think> block",
            Box::new(|s| format!("{THINK}{s}")),
            AnswerFormat::Markdown,
        ),
        (
            "Thinking: paragraph",
            Box::new(|s| {
                format!("Thinking: I am unable to skip the figures, so they stay.\n\n{s}")
            }),
            AnswerFormat::Markdown,
        ),
        ("JSON, bare", Box::new(as_json), AnswerFormat::Json),
        (
            "JSON, fenced",
            Box::new(|s| format!("```json\n{}\n```", as_json(s))),
            AnswerFormat::Json,
        ),
        (
            "JSON after a <think> block",
            Box::new(|s| format!("{THINK}{}", as_json(s))),
            AnswerFormat::Json,
        ),
    ];
    for (name, shape, format) in shapes {
        let (rig, canonical, result) = answered_in_shape(name, shape);
        assert_eq!(result.attempts, 1, "{name}");
        assert_eq!(result.answer_format, format, "{name}");
        assert_eq!(result.coverage.missing, Vec::<String>::new(), "{name}");
        assert_eq!(result.summary.replace("\n\n", "\n"), canonical, "{name}");
        let stored = rig.logs.borrow().reasoning_log().unwrap()[0].clone();
        assert!(stored.contains(&result.summary), "{name}");
        for wrapper in ["<think>", "Thinking:", "objective_achieved", "```"] {
            assert!(!stored.contains(wrapper), "{name}: {wrapper} stored");
        }
        assert!(
            result.summary.starts_with("### 🎯 OBJECTIVE ACHIEVED"),
            "{name}"
        );
    }
}

#[test]
fn an_answer_that_is_not_text_is_the_apps_mistake_not_retried() {
    let rig = session(vec![
        Answer::fail(ProviderError::NotText("a value of type object".into())),
        Answer::Text(valid_summary("never asked for")),
    ]);
    let err = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert_eq!(err.retryable(), Some(false));
    assert_eq!(rig.provider.calls(), 1, "no second call");
    assert!(
        err.to_string()
            .contains("must resolve to the summary as a string"),
        "{err}"
    );
}

/// A compaction of a fresh session whose provider fails with what a custom provider's error
/// says of itself, then would answer well: the error and the calls made.
fn thrown(says: ThrownSays) -> (CompactionError, usize) {
    let failure = ProviderError::thrown("Error: quota exceeded for project my-proj".into(), says);
    let rig = session(vec![
        Answer::fail(failure),
        Answer::Text(valid_summary("asked again")),
    ]);
    let outcome = run_ready(rig.compactor.compact(Trigger::User)).unwrap();
    (outcome.unwrap_err(), rig.provider.calls())
}

#[test]
fn a_custom_providers_error_says_whether_to_retry_and_its_status() {
    // Nothing said: a failure of the app's call, retried once (and the retry succeeds).
    let rig = session(vec![
        Answer::fail(ProviderError::thrown(
            "Error: reset".into(),
            ThrownSays::default(),
        )),
        Answer::Text(valid_summary("asked again")),
    ]);
    assert!(run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .is_ok());
    assert_eq!(rig.provider.calls(), 2);

    // `retryable: false`: asked once, and the error says so.
    let (err, calls) = thrown(ThrownSays {
        retryable: Some(false),
        ..ThrownSays::default()
    });
    assert_eq!(
        (err.code(), err.retryable(), calls),
        (ErrorCode::LlmNetwork, Some(false), 1)
    );
    assert!(
        err.to_string()
            .contains("quota exceeded for project my-proj"),
        "{err}"
    );

    // An HTTP status: `llm_http` with it, retried as the API's own errors are.
    let status = |status: f64, retryable: Option<bool>| {
        thrown(ThrownSays {
            status: Some(status),
            retryable,
            retry_after_ms: Some(1500.0),
        })
    };
    let (err, calls) = status(403.0, None);
    assert_eq!(
        (err.code(), err.retryable(), calls),
        (ErrorCode::LlmHttp, Some(false), 1)
    );
    assert_eq!(err.provider().and_then(ProviderError::status), Some(403));
    let (err, calls) = status(429.0, Some(false));
    assert_eq!(
        (err.code(), err.retryable(), calls),
        (ErrorCode::LlmHttp, Some(false), 1)
    );
    assert_eq!(
        err.provider().and_then(ProviderError::retry_after_ms),
        Some(1500)
    );
    let rig = session(vec![
        Answer::fail(ProviderError::thrown(
            "Error: busy".into(),
            ThrownSays {
                status: Some(503.0),
                retry_after_ms: Some(1500.0),
                ..ThrownSays::default()
            },
        )),
        Answer::Text(valid_summary("asked again")),
    ]);
    assert!(run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .is_ok());
    assert_eq!(
        rig.timer.waits_as_told().first(),
        Some(&1500),
        "its retryAfterMs waited"
    );

    // A status that is no HTTP status is not taken for one.
    for odd in [99.0, 600.0, 429.5, f64::NAN] {
        let (err, _) = status(odd, Some(false));
        assert_eq!(err.code(), ErrorCode::LlmNetwork, "{odd}");
    }
}

#[test]
fn the_same_invalid_answer_twice_is_not_called_retryable() {
    let refusal = "I cannot summarise this conversation.".to_owned();
    let rig = session(vec![
        Answer::Verbatim(refusal.clone()),
        Answer::Verbatim(refusal.clone()),
    ]);
    let err = failed(&rig);
    assert_eq!(
        (err.code(), err.retryable()),
        (ErrorCode::InvalidSummary, Some(false))
    );
    assert_eq!(rig.provider.calls(), 2);
    assert!(err.to_string().contains("same answer"), "{err}");

    // With more retries allowed, the repeat still ends the asking.
    let mut settings = small_window();
    settings.max_retries = 4;
    let rig = Rig::with(
        MemoryStore::new(),
        vec![Answer::Verbatim(refusal.clone()); 5],
        settings,
    );
    grow_session(&rig.logs, &rig.clock, 5, 7);
    let err = failed(&rig);
    assert_eq!((err.retryable(), rig.provider.calls()), (Some(false), 2));

    // Two different invalid answers: trying later may help.
    let rig = session(vec![
        Answer::Verbatim(refusal),
        Answer::Verbatim("No.".into()),
    ]);
    let err = failed(&rig);
    assert_eq!(
        (err.code(), err.retryable()),
        (ErrorCode::InvalidSummary, Some(true))
    );
}

/// The error the compaction of `rig` fails with.
fn failed(rig: &Rig) -> CompactionError {
    run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap_err()
}

#[test]
fn an_answer_cut_at_its_limit_keeps_its_whole_lines_and_a_lost_section_is_asked_for_once() {
    // Cut inside its last line: the line goes, the rest is the summary.
    let cut = format!(
        "{}\n- and then the loop wrote half a li",
        valid_summary("north leads")
    );
    let rig = session(vec![Answer::Cut(cut)]);
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    assert!(result.salvaged);
    assert_eq!(result.attempts, 1);
    assert!(!result.summary.contains("half a li"), "{}", result.summary);
    assert!(result.summary.contains("north leads"));

    // Cut before a required section: asked for once, naming the cut and the section.
    let head = "### 🎯 OBJECTIVE ACHIEVED\n- Grouped the sales by region.\n### 📊 KEY DISCOVERIES\n- north lea";
    let rig = session(vec![
        Answer::Cut(head.into()),
        Answer::Text(valid_summary("north leads")),
    ]);
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    assert_eq!(result.attempts, 2);
    assert!(!result.salvaged);
    let prompts = rig.provider.prompts.borrow();
    let retry = &prompts[1];
    assert!(retry.contains("cut off at the output limit"), "{retry}");
    assert!(retry.contains("SUCCESSFUL SOLUTIONS"), "{retry}");
}

#[test]
fn an_answer_of_junk_alone_is_asked_for_again_saying_why_and_junk_beside_points_goes() {
    let junk = "### 🎯 OBJECTIVE ACHIEVED\n- 1.1.0.1.1.0\n### 📊 KEY DISCOVERIES\n- 1.1.0.1\n\
                ### ✅ SUCCESSFUL SOLUTIONS\n- 1.1.0";
    let with_points =
        valid_summary("north leads with 91k.").replace("\n###", "\n- 1.1.0.1.1.0\n###");
    let rig = session(vec![
        Answer::Verbatim(junk.into()),
        Answer::Text(with_points),
    ]);
    let result = run_ready(rig.compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    assert_eq!(result.attempts, 2);
    assert!(!result.summary.contains("1.1.0"), "{}", result.summary);
    assert!(result.summary.contains("north leads with 91k."));
    let prompts = rig.provider.prompts.borrow();
    assert!(
        prompts[1].contains("The answer held no summary: only points with no word in them"),
        "{}",
        prompts[1]
    );
}
