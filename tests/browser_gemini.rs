//! The gemini provider in real browsers against the mock of the Gemini REST API
//! (tests/gemini-mock/server.mjs, started by scripts/test.sh; its URL is baked in at compile
//! time through GEMINI_MOCK_URL). Every scenario of the mock, with its outcome.
#![cfg(target_arch = "wasm32")]

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

fn session(prefix: &str) -> JsLogStore {
    let logs = JsLogStore::new(Some(
        js(&format!(r#"{{"prefix":"{prefix}"}}"#)).unchecked_into(),
    ))
    .unwrap();
    logs.clear().unwrap();
    for n in 1..=5 {
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
    unchanged: bool,
    requests: Vec<serde_json::Value>,
    key: String,
    elapsed_ms: f64,
}

async fn run(scenario: &str) -> Outcome {
    let prefix = format!("gm_{scenario}_");
    let key = format!(
        "test-key-{scenario}-{}",
        (js_sys::Math::random() * 1e9) as u64
    );
    let logs = session(&prefix);
    let options = js(&format!(
        r#"{{"provider":{{"type":"gemini","apiKey":"{key}","model":"mock-{scenario}","baseUrl":"{}"}},"contextWindowTokens":1500,"retryDelayMs":10,"timeoutMs":600}}"#,
        mock_url()
    ));
    let compactor = JsCompactor::over(logs.shared(), options.unchecked_into()).unwrap();
    let before = dump(&prefix);
    let started = js_sys::Date::now();
    let settled = JsFuture::from(compactor.compact(None).unwrap()).await;
    let elapsed_ms = js_sys::Date::now() - started;
    let result = match settled {
        Ok(value) => Ok(json_of(&value)),
        Err(err) => {
            let get = |f: &str| {
                js_sys::Reflect::get(&err, &f.into())
                    .unwrap()
                    .as_string()
                    .unwrap_or_default()
            };
            Err((get("code"), get("message")))
        }
    };
    let unchanged = dump(&prefix) == before;
    Outcome {
        result,
        unchanged,
        requests: requests_for(&key).await,
        key,
        elapsed_ms,
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
}

async fn expect_success(scenario: &str, calls: usize) -> Outcome {
    let outcome = run(scenario).await;
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
        serde_json::json!({"promptTokens": 1200, "outputTokens": 180, "thinkingTokens": 0})
    );
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
async fn max_tokens_without_content_is_invalid_summary() {
    expect_failure("max_tokens_empty", "invalid_summary", 2).await;
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
async fn http_503_once_is_retried() {
    expect_success("http_503_once", 2).await;
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
