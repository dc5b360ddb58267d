//! The gemini provider in real browsers against the mock of the Gemini REST API
//! (tests/gemini-mock/server.mjs, started by scripts/test.sh; its URL is baked in at compile
//! time through GEMINI_MOCK_URL). Every scenario of the mock, with its outcome.
#![cfg(target_arch = "wasm32")]
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use context_compactor::web::{JsCompactor, JsLogStore};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

mod browser_support;

use browser_support::*;

wasm_bindgen_test_configure!(run_in_browser);

fn mock_url() -> &'static str {
    let url = option_env!("GEMINI_MOCK_URL").unwrap_or_default();
    assert!(
        !url.is_empty(),
        "GEMINI_MOCK_URL must be set at build time (scripts/test.sh starts the mock)"
    );
    url
}

fn session(prefix: &str, iterations: u32) -> JsLogStore {
    let logs = JsLogStore::new(Some(
        js(&format!(r#"{{"prefix":"{prefix}"}}"#)).unchecked_into(),
    ))
    .unwrap();
    logs.clear(None).unwrap();
    for n in 1..=iterations {
        logs.start_iteration().unwrap();
        logs.append_reasoning(JsValue::from(&format!("Iteration {n}: loaded orders.csv, 12{n}40 rows; grouped by region and compared with the finance report of 2026-0{n}-15."))).unwrap();
        logs.append_execution(js(&format!(r#"{{"success":true,"code":"const orders = load('orders.csv');\nreturn orders.length * {n};","result":{},"executionTime":{n}}}"#, 12_000 + n)).unchecked_into()).unwrap();
        logs.append_tool_activity(
            js(r#"{"type":"vfs","action":"write","status":"success","details":"notes.md"}"#)
                .unchecked_into(),
        )
        .unwrap();
        logs.finish_iteration();
    }
    logs
}

/// The POST requests the mock saw with this key.
async fn requests_for(key: &str) -> Vec<serde_json::Value> {
    let response = JsFuture::from(
        web_sys::window()
            .unwrap()
            .fetch_with_str(&format!("{}/__requests", mock_url())),
    )
    .await
    .unwrap();
    let response: web_sys::Response = response.dyn_into().unwrap();
    let all = json_of(&JsFuture::from(response.json().unwrap()).await.unwrap());
    all.as_array()
        .unwrap()
        .iter()
        .filter(|r| r["method"] == "POST" && r["headers"]["x-goog-api-key"] == key)
        .cloned()
        .collect()
}

struct Outcome {
    result: Result<serde_json::Value, (String, String)>,
    /// The rejection's structured fields: status, retryable, retryAfterMs, model.
    error_fields: serde_json::Value,
    unchanged: bool,
    requests: Vec<serde_json::Value>,
    key: String,
    elapsed_ms: f64,
    /// Every event the compactor dispatched: [type, detail].
    events: Vec<serde_json::Value>,
    metrics: serde_json::Value,
}

/// A key shaped like Google's (`AIza` + 35), unique per run.
fn fresh_key() -> String {
    let digits = format!("{:035}", (js_sys::Math::random() * 1e15) as u64);
    format!("AIza{}", &digits[digits.len() - 35..])
}

async fn run(scenario: &str) -> Outcome {
    run_with(&format!("mock-{scenario}"), &fresh_key(), "").await
}

/// A compaction of a fresh session with `model` and `key`, `extra` appended to the options.
async fn run_with(model: &str, key: &str, extra: &str) -> Outcome {
    run_over(model, key, extra, 5).await
}

/// [`run_with`] over a session of `iterations` iterations.
async fn run_over(model: &str, key: &str, extra: &str, iterations: u32) -> Outcome {
    let prefix = format!(
        "gm_{}_{iterations}_",
        model.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    );
    let logs = session(&prefix, iterations);
    let options = js(&format!(
        r#"{{"provider":{{"type":"gemini","apiKey":"{key}","model":"{model}","baseUrl":"{}"}},"contextWindowTokens":1500,"retryDelayMs":10,"timeoutMs":600{extra}}}"#,
        mock_url()
    ));
    let compactor = JsCompactor::over(logs.shared(), options.unchecked_into(), None).unwrap();
    eval("globalThis.__gm_events = [];");
    let listen = js_sys::Function::new_with_args(
        "target",
        "for (const t of ['compaction_start','compaction_progress','compaction_retry','compaction_complete','compaction_error']) \
         target.addEventListener(t, e => globalThis.__gm_events.push([e.type, e.detail]));",
    );
    listen.call1(&JsValue::NULL, &compactor.events()).unwrap();
    let before = dump(&prefix);
    let started = js_sys::Date::now();
    let settled = JsFuture::from(compactor.compact(None)).await;
    let elapsed_ms = js_sys::Date::now() - started;
    let mut error_fields = serde_json::Value::Null;
    let result = match settled {
        Ok(value) => Ok(json_of(&value)),
        Err(err) => {
            let get = |f: &str| js_sys::Reflect::get(&err, &f.into()).unwrap();
            error_fields = serde_json::json!({
                "status": get("status").as_f64(),
                "retryable": get("retryable").as_bool(),
                "retryAfterMs": get("retryAfterMs").as_f64(),
                "model": get("model").as_string(),
            });
            Err((
                get("code").as_string().unwrap_or_default(),
                get("message").as_string().unwrap_or_default(),
            ))
        }
    };
    let unchanged = dump(&prefix) == before;
    let events = json_of(&eval("return globalThis.__gm_events;"))
        .as_array()
        .cloned()
        .unwrap_or_default();
    Outcome {
        result,
        error_fields,
        unchanged,
        requests: requests_for(key).await,
        key: key.to_owned(),
        elapsed_ms,
        events,
        metrics: json_of(&compactor.metrics().unwrap()),
    }
}

/// What every scenario must show: the key only in the header, the default settings in the
/// body, at most one retry, and the key in no error message.
fn common_checks(outcome: &Outcome, scenario: &str, calls: usize) {
    assert_eq!(outcome.requests.len(), calls, "{scenario}: provider calls");
    for request in &outcome.requests {
        let path = request["path"].as_str().unwrap();
        assert_eq!(
            path,
            format!("/v1beta/models/mock-{scenario}:generateContent")
        );
        assert!(
            !path.contains(&outcome.key) && !path.contains("key="),
            "key in URL: {path}"
        );
        assert_eq!(request["headers"]["x-goog-api-key"], outcome.key.as_str());
        assert_eq!(request["headers"]["content-type"], "application/json");
        assert_eq!(request["body"]["generationConfig"]["temperature"], 0.1);
        assert_eq!(request["body"]["generationConfig"]["maxOutputTokens"], 4000);
        assert!(request["body"]["contents"][0]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Compact iterations 1-4"));
    }
    if let Err((_, message)) = &outcome.result {
        assert!(
            !message.contains(&outcome.key),
            "{scenario}: key leaked into the message"
        );
    }
    let events = serde_json::to_string(&outcome.events).unwrap();
    assert!(
        !events.contains(&outcome.key),
        "{scenario}: key leaked into an event"
    );
}

async fn expect_success(scenario: &str, calls: usize) -> Outcome {
    expect_success_with(scenario, calls, "").await
}

/// [`expect_success`] with `extra` appended to the options.
async fn expect_success_with(scenario: &str, calls: usize, extra: &str) -> Outcome {
    let outcome = run_with(&format!("mock-{scenario}"), &fresh_key(), extra).await;
    common_checks(&outcome, scenario, calls);
    let result = outcome
        .result
        .as_ref()
        .unwrap_or_else(|e| panic!("{scenario}: {e:?}"));
    assert_eq!(result["attempts"], calls as u64);
    assert!(result["summary"]
        .as_str()
        .unwrap()
        .starts_with("### 🎯 OBJECTIVE ACHIEVED"));
    assert!(!outcome.unchanged, "{scenario}: logs were compacted");
    outcome
}

async fn expect_failure(scenario: &str, code: &str, calls: usize) -> Outcome {
    let outcome = run(scenario).await;
    common_checks(&outcome, scenario, calls);
    match &outcome.result {
        Err((actual, _)) => assert_eq!(actual, code, "{scenario}"),
        Ok(result) => panic!("{scenario}: expected {code}, compacted: {result}"),
    }
    assert!(
        outcome.unchanged,
        "{scenario}: logs and archives must be byte-for-byte as before"
    );
    outcome
}

#[wasm_bindgen_test]
async fn ok_compacts_with_a_summary_built_from_the_prompt() {
    let outcome = expect_success("ok", 1).await;
    let result = outcome.result.unwrap();
    assert_eq!(
        result["usage"],
        serde_json::json!({"promptTokens": 1200, "outputTokens": 180, "thinkingTokens": 0, "cachedTokens": 0})
    );
    assert_eq!(result["model"], "gemini-2.5-flash-lite");
    let summary = result["summary"].as_str().unwrap().to_owned();
    assert!(
        summary.contains("Worked through iterations 1-4"),
        "{summary}"
    );
    assert!(summary.contains("4 of 4 executions succeeded"), "{summary}");
}

#[wasm_bindgen_test]
async fn missing_sections_once_is_retried() {
    expect_success("missing_sections_once", 2).await;
}

#[wasm_bindgen_test]
async fn a_dropped_fact_is_repaired_without_another_call() {
    let outcome = expect_success("drops_facts_always", 1).await;
    let coverage = &outcome.result.as_ref().unwrap()["coverage"];
    let required = coverage["required"].as_array().unwrap();
    let repaired = coverage["repaired"].as_array().unwrap();
    assert!(!repaired.is_empty());
    assert_eq!(
        coverage["kept"].as_array().unwrap().len() + repaired.len(),
        required.len()
    );
    assert_eq!(coverage["missing"], serde_json::json!([]));
    let summary = outcome.result.as_ref().unwrap()["summary"]
        .as_str()
        .unwrap();
    for fact in repaired {
        assert!(summary.contains(fact.as_str().unwrap().split_whitespace().next().unwrap()));
    }
    assert_eq!(outcome.metrics["totalRepairedFacts"], repaired.len());
}

#[wasm_bindgen_test]
async fn with_missing_facts_retry_a_dropped_fact_is_asked_for_once() {
    let key = fresh_key();
    let outcome = run_with("mock-drops_facts_once", &key, r#","missingFacts":"retry""#).await;
    assert_eq!(outcome.requests.len(), 2);
    let coverage = &outcome.result.as_ref().unwrap()["coverage"];
    assert_eq!(coverage["kept"], coverage["required"]);
    assert_eq!(coverage["repaired"], serde_json::json!([]));
}

#[wasm_bindgen_test]
async fn a_history_over_max_prompt_tokens_is_summarised_in_parts_then_merged() {
    let key = fresh_key();
    let extra = r#","maxOutputTokens":300,"maxPromptTokens":2800"#;
    let outcome = run_over("mock-ok", &key, extra, 40).await;
    let result = outcome.result.as_ref().unwrap();
    let chunks = result["chunks"].as_u64().unwrap() as usize;
    assert!(chunks >= 2, "{result}");
    assert_eq!(
        outcome.requests.len(),
        chunks + 1,
        "one call per part, one merge"
    );
    let coverage = &result["coverage"];
    assert_eq!(
        coverage["kept"].as_array().unwrap().len() + coverage["repaired"].as_array().unwrap().len(),
        coverage["required"].as_array().unwrap().len()
    );
    let progress: Vec<&str> = outcome
        .events
        .iter()
        .filter(|e| e[0] == "compaction_progress")
        .filter_map(|e| e[1]["message"].as_str())
        .collect();
    assert!(
        progress
            .iter()
            .any(|m| m.starts_with("Summarising part 1 of ")),
        "{progress:?}"
    );
    assert!(
        progress.iter().any(|m| m.starts_with("Merging the parts")),
        "{progress:?}"
    );
}

#[wasm_bindgen_test]
async fn a_fenced_answer_with_level_two_headings_is_taken_at_once_and_stored_canonical() {
    let outcome = expect_success("fenced_hashes", 1).await;
    let summary = outcome.result.as_ref().unwrap()["summary"]
        .as_str()
        .unwrap();
    assert!(
        summary.starts_with("### 🎯 OBJECTIVE ACHIEVED"),
        "{summary}"
    );
    assert!(
        !summary.contains("```") && !summary.contains("Here is"),
        "{summary}"
    );
    assert!(!summary.contains("Let me know"), "{summary}");
    assert!(summary.contains("\n### 📊 KEY DISCOVERIES\n"), "{summary}");
}

#[wasm_bindgen_test]
async fn a_rounded_figure_is_repaired_and_not_marked() {
    let outcome = expect_success("rounded_figure", 1).await;
    let result = outcome.result.as_ref().unwrap();
    assert_eq!(result["coverage"]["repaired"].as_array().unwrap().len(), 1);
    assert_eq!(
        result["unverified"],
        serde_json::json!([]),
        "a rounding is not new"
    );
    let repaired = result["coverage"]["repaired"][0].as_str().unwrap();
    assert!(result["summary"].as_str().unwrap().contains(repaired));
}

#[wasm_bindgen_test]
async fn an_invented_figure_and_file_are_marked_unverified() {
    // The default budget of this small window (225 tokens) is about what this summary takes,
    // and a random entry id with many digits (a digit is a token) tipped it over: then only the
    // facts fit and the invented line was cut, not marked (seen once in CI). Room for the whole.
    let outcome = expect_success_with("invented_figure", 1, r#","summaryBudgetTokens":400"#).await;
    let result = outcome.result.as_ref().unwrap();
    assert_eq!(
        result["unverified"],
        serde_json::json!([{
            "line": "- The user asked to delete sales_2024.csv; 98,765 rows were removed.",
            "items": ["sales_2024.csv", "98765"]
        }])
    );
    assert!(result["summary"]
        .as_str()
        .unwrap()
        .contains("98,765 rows were removed. [unverified]"));
    assert_eq!(outcome.metrics["totalUnverifiedLines"], 1);
}

#[wasm_bindgen_test]
async fn missing_sections_always_is_invalid_summary() {
    expect_failure("missing_sections_always", "invalid_summary", 2).await;
}

#[wasm_bindgen_test]
async fn refusal_is_invalid_summary() {
    expect_failure("refusal", "invalid_summary", 2).await;
}

#[wasm_bindgen_test]
async fn empty_candidates_is_invalid_summary() {
    expect_failure("empty_candidates", "invalid_summary", 2).await;
}

#[wasm_bindgen_test]
async fn max_tokens_with_partial_text_is_invalid_summary() {
    expect_failure("max_tokens_partial", "invalid_summary", 2).await;
}

#[wasm_bindgen_test]
async fn max_tokens_without_content_is_invalid_summary_and_its_tokens_are_counted() {
    let outcome = expect_failure("max_tokens_empty", "invalid_summary", 2).await;
    // Both cut-off answers reported (and were billed for) 4,000 thinking tokens.
    assert_eq!(outcome.metrics["totalThinkingTokens"], 8000);
    assert_eq!(outcome.metrics["totalPromptTokens"], 2400);
}

#[wasm_bindgen_test]
async fn a_blocked_prompt_is_llm_blocked_without_retry() {
    let outcome = expect_failure("prompt_blocked", "llm_blocked", 1).await;
    assert!(outcome.result.unwrap_err().1.contains("SAFETY"));
}

#[wasm_bindgen_test]
async fn a_safety_finish_is_llm_blocked() {
    expect_failure("safety_finish", "llm_blocked", 1).await;
}

#[wasm_bindgen_test]
async fn a_429_waits_its_retry_delay_and_succeeds() {
    let outcome = expect_success("http_429_retryinfo_once", 2).await;
    assert!(
        outcome.elapsed_ms >= 1000.0,
        "waited {} ms, RetryInfo asked for 1 s",
        outcome.elapsed_ms
    );
}

#[wasm_bindgen_test]
async fn http_500_always_is_llm_http_after_one_retry() {
    expect_failure("http_500_always", "llm_http", 2).await;
}

#[wasm_bindgen_test]
async fn http_503_once_is_retried_and_the_retry_says_why() {
    let outcome = expect_success("http_503_once", 2).await;
    let retry = outcome
        .events
        .iter()
        .find(|e| e[0] == "compaction_retry")
        .expect("a compaction_retry event");
    assert_eq!(retry[1]["reason"], "http_503");
    assert_eq!(retry[1]["attempt"], 2);
    assert_eq!(retry[1]["waitMs"], 10);
    let message = retry[1]["message"].as_str().unwrap();
    assert!(
        message.contains("HTTP 503") && message.contains("attempt 2 of 2"),
        "{message}"
    );
    assert!(outcome
        .events
        .iter()
        .any(|e| e[0] == "compaction_progress" && e[1]["message"] == message));
}

#[wasm_bindgen_test]
async fn http_404_names_the_model_and_is_not_retried() {
    let outcome = expect_failure("http_404_model", "llm_http", 1).await;
    let message = outcome.result.unwrap_err().1;
    assert!(
        message.contains("mock-http_404_model") && message.contains("unknown or retired"),
        "{message}"
    );
}

#[wasm_bindgen_test]
async fn a_bad_key_is_not_retried_and_never_echoed() {
    let outcome = expect_failure("http_400_bad_key", "llm_http", 1).await;
    assert!(outcome.result.unwrap_err().1.contains("API key"));
}

#[wasm_bindgen_test]
async fn a_hanging_api_times_out_twice() {
    let outcome = expect_failure("hang", "llm_timeout", 2).await;
    assert!(
        outcome.elapsed_ms >= 1200.0 && outcome.elapsed_ms < 10_000.0,
        "{} ms",
        outcome.elapsed_ms
    );
}

#[wasm_bindgen_test]
async fn malformed_json_is_llm_http() {
    expect_failure("malformed_json", "llm_http", 2).await;
}

#[wasm_bindgen_test]
async fn a_non_json_502_is_llm_http() {
    expect_failure("non_json_502", "llm_http", 2).await;
}

#[wasm_bindgen_test]
async fn thought_parts_are_left_out_of_the_summary() {
    let outcome = expect_success("thought_parts", 1).await;
    assert!(!outcome.result.unwrap()["summary"]
        .as_str()
        .unwrap()
        .contains("SECRET THOUGHT"));
}

#[wasm_bindgen_test]
async fn the_key_is_never_written_to_local_storage() {
    let outcome = run("ok").await;
    let s = storage();
    for i in 0..s.length().unwrap() {
        let key = s.key(i).unwrap().unwrap();
        let value = s.get_item(&key).unwrap().unwrap_or_default();
        assert!(
            !value.contains(&outcome.key) && !key.contains(&outcome.key),
            "{key} holds the API key"
        );
    }
}

#[wasm_bindgen_test]
async fn a_403_that_quotes_the_key_leaks_it_into_no_message_or_event() {
    let outcome = expect_failure("http_403_key", "llm_http", 1).await;
    let message = outcome.result.as_ref().unwrap_err().1.clone();
    assert!(message.contains("api_key:[redacted]"), "{message}");
    let error_event = outcome
        .events
        .iter()
        .find(|e| e[0] == "compaction_error")
        .expect("a compaction_error event");
    assert!(error_event[1]["message"]
        .as_str()
        .unwrap()
        .contains("[redacted]"));
    assert_eq!(outcome.error_fields["status"].as_f64(), Some(403.0));
    assert_eq!(outcome.error_fields["retryable"], false);
    let outcome = expect_failure("http_400_debug_key", "llm_http", 1).await;
    assert!(outcome.result.unwrap_err().1.contains("[redacted]"));
}

#[wasm_bindgen_test]
async fn a_quota_used_up_for_the_day_is_not_retried_and_says_what_to_do() {
    let outcome = expect_failure("http_429_daily", "llm_http", 1).await;
    let message = outcome.result.as_ref().unwrap_err().1.clone();
    assert!(message.contains("for today"), "{message}");
    assert_eq!(
        outcome.error_fields,
        serde_json::json!({"status": 429.0, "retryable": false, "retryAfterMs": 47000.0, "model": "mock-http_429_daily"})
    );
    assert!(
        outcome.elapsed_ms < 5000.0,
        "no 47 s wait: {} ms",
        outcome.elapsed_ms
    );
}

#[wasm_bindgen_test]
async fn a_429_without_retry_info_waits_retry_delay_ms() {
    let outcome = expect_success("http_429_no_retryinfo_once", 2).await;
    let retry = outcome
        .events
        .iter()
        .find(|e| e[0] == "compaction_retry")
        .unwrap();
    assert_eq!(retry[1]["reason"], "http_429");
    assert_eq!(retry[1]["waitMs"], 10);
}

#[wasm_bindgen_test]
async fn blocks_are_read_as_google_reads_them_with_their_explanation() {
    let outcome = expect_failure("prompt_blocked_prohibited", "llm_blocked", 1).await;
    let message = outcome.result.unwrap_err().1;
    assert!(
        message.contains("PROHIBITED_CONTENT")
            && message.contains("may contain prohibited content"),
        "{message}"
    );
    assert_eq!(
        outcome.metrics["totalPromptTokens"], 1200,
        "a block is billed"
    );
    expect_failure("feedback_without_reason", "llm_blocked", 1).await;
    let outcome = expect_failure("recitation_finish", "llm_blocked", 1).await;
    assert!(outcome
        .result
        .unwrap_err()
        .1
        .contains("recited copyrighted material"));
    expect_success("other_finish_once", 2).await;
}

#[wasm_bindgen_test]
async fn an_answer_in_several_parts_is_joined_and_usage_is_read_as_reported() {
    let outcome = expect_success("split_parts", 1).await;
    assert!(outcome.result.unwrap()["summary"]
        .as_str()
        .unwrap()
        .contains("### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING"));
    let outcome = expect_success("no_usage", 1).await;
    assert_eq!(outcome.result.unwrap()["usage"], serde_json::Value::Null);
    let outcome = expect_success("usage_cached", 1).await;
    let result = outcome.result.unwrap();
    assert_eq!(result["usage"]["cachedTokens"], 800);
    assert_eq!(result["usage"]["thinkingTokens"], 12);
    assert_eq!(result["model"], "gemini-3.5-flash-lite-001");
}

/// A model id, the generation settings its request must carry, and whether it takes a system
/// instruction; the mock answers 400 to a shape the family refuses.
#[wasm_bindgen_test]
async fn each_model_family_gets_a_request_it_accepts() {
    let families = [
        (
            "gemini-2.5-flash-lite",
            serde_json::json!({"thinkingBudget": 0}),
            Some(0.1),
            true,
        ),
        (
            "gemini-2.5-pro",
            serde_json::json!({"thinkingBudget": 128}),
            Some(0.1),
            true,
        ),
        (
            "gemini-3.5-flash-lite",
            serde_json::json!({"thinkingLevel": "low"}),
            Some(1.0),
            true,
        ),
        (
            "models/gemini-3-flash",
            serde_json::json!({"thinkingLevel": "low"}),
            Some(1.0),
            true,
        ),
        ("gemini-flash-latest", serde_json::Value::Null, None, true),
        ("gemma-3-27b-it", serde_json::Value::Null, Some(0.1), false),
    ];
    for (model, thinking, temperature, system) in families {
        let key = format!("scenario:ok#{}", fresh_key());
        let outcome = run_with(model, &key, "").await;
        let result = outcome.result.as_ref();
        assert!(result.is_ok(), "{model}: {result:?}");
        let body = &outcome.requests[0]["body"];
        let config = &body["generationConfig"];
        // Gemma and the aliases stay on text; the mock refuses JSON mode for Gemma.
        let structured = !model.starts_with("gemma") && !model.ends_with("-latest");
        assert_eq!(
            config.get("responseSchema").is_some(),
            structured,
            "{model}"
        );
        let format = if structured { "json" } else { "markdown" };
        let summary = result.map(|r| r["summary"].to_string()).unwrap_or_default();
        assert_eq!(
            result.map(|r| &r["answerFormat"]).ok(),
            Some(&serde_json::json!(format))
        );
        assert!(
            !summary.contains("objective_achieved"),
            "{model}: {summary}"
        );
        assert!(
            serde_json::to_string(&outcome.events)
                .unwrap()
                .contains(&format!(
                    "{} answer read",
                    if structured { "JSON" } else { "Markdown" }
                )),
            "{model}: the progress says which"
        );
        assert_eq!(config["thinkingConfig"], thinking, "{model}");
        assert_eq!(config["temperature"].as_f64(), temperature, "{model}");
        assert_eq!(body.get("systemInstruction").is_some(), system, "{model}");
        let path = outcome.requests[0]["path"].as_str().unwrap();
        assert_eq!(
            path,
            format!(
                "/v1beta/models/{}:generateContent",
                model.trim_start_matches("models/")
            )
        );
    }
    // The app's own temperature wins over a family's advice.
    let key = format!("scenario:ok#{}", fresh_key());
    let outcome = run_with("gemini-3.5-flash-lite", &key, r#","temperature":0.4"#).await;
    assert_eq!(
        outcome.requests[0]["body"]["generationConfig"]["temperature"],
        0.4
    );
}

/// A structured answer (Gemini 3.x, JSON of the sections) cut at `maxOutputTokens` keeps what
/// it holds whole: the JSON closed after its last complete point, stored as the six sections,
/// with no second call.
#[wasm_bindgen_test]
async fn a_structured_answer_cut_at_max_tokens_keeps_its_whole_points_as_sections() {
    let key = format!("scenario:json_cut_once#{}", fresh_key());
    let outcome = run_with("gemini-3.5-flash-lite", &key, "").await;
    assert_eq!(outcome.requests.len(), 1);
    let config = &outcome.requests[0]["body"]["generationConfig"];
    assert_eq!(config["responseMimeType"], "application/json");
    assert_eq!(config["responseSchema"]["required"][1], "key_discoveries");
    let result = outcome.result.expect("the cut answer is taken");
    assert_eq!(result["answerFormat"], "json");
    assert_eq!(result["attempts"], 1);
    assert_eq!(result["salvaged"], true);
    let summary = result["summary"].as_str().unwrap();
    assert!(summary.starts_with("### 🎯 OBJECTIVE ACHIEVED\n- Worked through iterations 1-4"));
    assert!(summary.contains("### ✅ SUCCESSFUL SOLUTIONS"), "{summary}");
    assert!(
        !summary.contains("objective_achieved") && !summary.contains("\"]"),
        "no JSON is stored: {summary}"
    );
}

#[wasm_bindgen_test]
async fn a_compaction_is_cancelled_by_its_signal_or_abort_and_changes_nothing() {
    for by_signal in [true, false] {
        let prefix = if by_signal {
            "gm_cancel_signal_"
        } else {
            "gm_cancel_abort_"
        };
        let logs = session(prefix, 5);
        let options = js(&format!(
            r#"{{"provider":{{"type":"gemini","apiKey":"{}","model":"mock-hang","baseUrl":"{}"}},"contextWindowTokens":1500,"timeoutMs":20000}}"#,
            fresh_key(),
            mock_url()
        ));
        let compactor = JsCompactor::over(logs.shared(), options.unchecked_into(), None).unwrap();
        let before = dump(prefix);
        let controller = web_sys::AbortController::new().unwrap();
        let compact_options = js("{}");
        js_sys::Reflect::set(&compact_options, &"signal".into(), &controller.signal()).unwrap();
        let started = js_sys::Date::now();
        let pending = compactor.compact(Some(compact_options.unchecked_into()));
        // Let the request reach the hanging model, then cancel.
        sleep_ms(150).await;
        if by_signal {
            controller.abort();
        } else {
            compactor.abort();
        }
        let err = JsFuture::from(pending).await.unwrap_err();
        assert_eq!(error_code(&err), "aborted");
        assert!(js_sys::Date::now() - started < 5000.0);
        assert_eq!(dump(prefix), before, "the logs are as they were");
        assert_eq!(
            JsValue::from(compactor.phase()).as_string().as_deref(),
            Some("error")
        );
    }
}

/// The agent loop of the README's "Recall as a tool" section: the app asks its model with the
/// recall tool declared and answers each function call with `tool.call(args)`.
const AGENT_LOOP: &str = r#"
  const contents = [{ role: "user", parts: [{ text: question }] }];
  for (let turn = 0; turn < 4; turn++) {
    const response = await fetch(`${base}/v1beta/models/${model}:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": key },
      body: JSON.stringify({ contents, tools: [{ functionDeclarations: [tool.declaration] }] }),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error.message);
    const parts = answer.candidates[0].content.parts;
    contents.push({ role: "model", parts });
    const calls = parts.filter((part) => part.functionCall?.name === tool.declaration.name);
    if (calls.length === 0) return { text: parts.map((part) => part.text ?? "").join(""), turns: turn + 1 };
    const responses = [];
    for (const { functionCall } of calls) {
      responses.push({ functionResponse: { name: functionCall.name, response: { content: await tool.call(functionCall.args) } } });
    }
    contents.push({ role: "user", parts: responses });
  }
  throw new Error("the model kept calling the tool");
"#;

/// After a compaction through the mock, the app's model calls the recall tool (its declaration
/// accepted by the mock's request check) and gets the archived originals of iteration 1 back:
/// an execution id no live log holds any more.
#[wasm_bindgen_test]
async fn the_apps_model_calls_the_recall_tool_after_a_compaction_and_gets_the_fact_back() {
    let key = format!("scenario:recall_loop#{}", fresh_key());
    let prefix = "gm_recall_";
    let logs = session(prefix, 5);
    let options = js(&format!(
        r#"{{"provider":{{"type":"gemini","apiKey":"{key}","model":"gemini-3.5-flash-lite","baseUrl":"{}"}},"contextWindowTokens":1500,"retryDelayMs":10}}"#,
        mock_url()
    ));
    let compactor = JsCompactor::over(logs.shared(), options.unchecked_into(), None).unwrap();
    let result = json_of(&JsFuture::from(compactor.compact(None)).await.unwrap());
    assert_eq!(result["iterations"], serde_json::json!([1, 4]));
    let recalled = json_of(&JsFuture::from(compactor.recall(1.into())).await.unwrap());
    let id = recalled["executionLog"][0]
        .as_str()
        .and_then(|entry| serde_json::from_str::<serde_json::Value>(entry).ok())
        .map(|entry| entry["id"].as_str().unwrap_or_default().to_owned())
        .or_else(|| {
            recalled["executionLog"][0]["id"]
                .as_str()
                .map(str::to_owned)
        })
        .expect("iteration 1 ran code");
    let live = format!("{:?}", dump(prefix));
    assert!(!live.contains(&id), "the id left the live logs");

    let tool = compactor.recall_tool(None).unwrap();
    let declaration = json_of(&tool.declaration().unwrap());
    assert_eq!(declaration["name"], "recall_archived_iterations");
    let run = js_sys::Function::new_with_args(
        "tool, base, key, model, question",
        &format!("return (async () => {{{AGENT_LOOP}}})();"),
    );
    let args = js_sys::Array::of5(
        &JsValue::from(tool),
        &mock_url().into(),
        &key.as_str().into(),
        &"gemini-3.5-flash-lite".into(),
        &"Which execution id did iteration 1 produce?".into(),
    );
    let answered = run.apply(&JsValue::NULL, &args).unwrap();
    let answered = json_of(
        &JsFuture::from(js_sys::Promise::from(answered))
            .await
            .unwrap(),
    );
    assert_eq!(
        answered["turns"], 2,
        "one call of the tool, then the answer"
    );
    let text = answered["text"].as_str().unwrap();
    assert!(text.starts_with("From the archive: "), "{text}");
    assert!(text.contains(&id), "the fact came back: {text}");
    assert!(text.contains("[iteration 1 · execution]"), "{text}");
    // The mock saw the tool declared as Gemini takes it, and the function call answered.
    let requests = requests_for(&key).await;
    let turn = requests
        .iter()
        .find(|r| r["body"]["tools"].is_array())
        .expect("the agent's request");
    assert_eq!(
        turn["body"]["tools"][0]["functionDeclarations"][0],
        declaration
    );
    // Rehydration of the model's next message: iteration 2, once, then not for two calls.
    let asked = || JsValue::from("Let me check iteration 2 again.");
    let budget: JsValue = js(r#"{"budgetTokens": 1500}"#);
    let first = json_of(
        &JsFuture::from(compactor.rehydrate(asked(), Some(budget.clone().unchecked_into())))
            .await
            .unwrap(),
    );
    assert_eq!(first["iterations"], serde_json::json!([2]));
    assert!(first["text"]
        .as_str()
        .unwrap()
        .starts_with("[iteration 2 · reasoning]"));
    assert!(first["tokens"].as_u64().unwrap() <= 1500);
    let again = json_of(
        &JsFuture::from(compactor.rehydrate(asked(), None))
            .await
            .unwrap(),
    );
    assert_eq!(again["iterations"], serde_json::json!([]));
    // Nothing was written to the logs by the tool or by rehydration.
    assert_eq!(format!("{:?}", dump(prefix)), live);
}
