use super::*;
use crate::core::order::text_search::TextSearch;
use serde_json::Value;

/// The request body as a value, to look into.
fn body(prompt: &str, settings: &GenerationSettings) -> Value {
    serde_json::from_str(&request_body(prompt, settings)).unwrap()
}

const KEY: &str = "AIzaSyTEST-0123456789abcdefghijklmnopq";

fn settings(model: &str) -> GenerationSettings {
    GenerationSettings {
        model: model.into(),
        temperature: 0.1,
        temperature_set: false,
        max_output_tokens: 4000,
        timeout_ms: 30_000,
    }
}

/// The reply to a 200 with `body`; a failure without the usage beside it.
fn reply(body: &str) -> Result<Reply, ProviderError> {
    failed(200, body, "m", KEY)
}

/// `read_reply`, a failure without the usage beside it.
fn failed(status: u16, body: &str, model: &str, key: &str) -> Result<Reply, ProviderError> {
    read_reply(status, body, model, key).map_err(|failure| failure.error)
}

#[test]
fn each_family_gets_its_thinking_temperature_and_instruction() {
    let config = |model: &str| body("P", &settings(model))["generationConfig"].clone();
    let lite = config("gemini-2.5-flash-lite");
    assert_eq!(lite["thinkingConfig"]["thinkingBudget"], 0);
    assert_eq!(lite["temperature"], 0.1);
    assert_eq!(lite["maxOutputTokens"], 4000);
    assert_eq!(
        config("gemini-2.5-pro")["thinkingConfig"]["thinkingBudget"],
        128
    );
    for three in [
        "gemini-3-flash",
        "models/gemini-3.5-flash-lite",
        "gemini-3.1-pro-preview",
    ] {
        let c = config(three);
        assert_eq!(c["thinkingConfig"]["thinkingLevel"], "low", "{three}");
        assert!(c["thinkingConfig"].get("thinkingBudget").is_none());
        assert_eq!(c["temperature"], 1.0, "{three}");
    }
    let alias = config("gemini-flash-latest");
    assert!(alias.get("thinkingConfig").is_none() && alias.get("temperature").is_none());
    let gemma = body("P", &settings("gemma-3-27b-it"));
    assert!(gemma.get("systemInstruction").is_none());
    let text = gemma["contents"][0]["parts"][0]["text"].as_str().unwrap();
    assert!(text.starts_with(SYSTEM_INSTRUCTION) && text.ends_with("\n\nP"));
    assert!(gemma["generationConfig"].get("thinkingConfig").is_none());
    // The app's own temperature wins.
    let mut own = settings("gemini-3-flash");
    own.temperature = 0.3;
    own.temperature_set = true;
    assert_eq!(body("P", &own)["generationConfig"]["temperature"], 0.3);
    assert_eq!(Family::of(DEFAULT_MODEL), Family::Gemini3);
}

#[test]
fn the_families_that_take_it_are_asked_for_the_six_sections_as_json() {
    let keys: Vec<String> = SECTIONS.iter().map(|(_, t)| section_key(t)).collect();
    assert_eq!(keys[1], "key_discoveries");
    for model in [
        "gemini-2.5-flash-lite",
        "gemini-2.5-pro",
        "gemini-3.5-flash-lite",
    ] {
        let config = body("P", &settings(model))["generationConfig"].clone();
        assert_eq!(config["responseMimeType"], "application/json", "{model}");
        let schema = &config["responseSchema"];
        assert_eq!(schema["type"], "OBJECT");
        assert_eq!(schema["required"], serde_json::json!(keys));
        assert_eq!(schema["propertyOrdering"], serde_json::json!(keys));
        for key in &keys {
            assert_eq!(
                schema["properties"][key],
                serde_json::json!({"type": "ARRAY", "items": {"type": "STRING"}})
            );
        }
    }
    for model in ["gemma-3-27b-it", "gemini-flash-latest", "my-proxy-model"] {
        let config = body("P", &settings(model))["generationConfig"].clone();
        assert!(config.get("responseMimeType").is_none(), "{model}");
        assert!(config.get("responseSchema").is_none(), "{model}");
    }
    // The answer to that schema is read as the six sections.
    let answer = serde_json::json!({
        "objective_achieved": ["Counted 12,140 rows."],
        "key_discoveries": ["North leads."],
        "successful_solutions": ["rows.filter(Boolean)"],
        "tools_used_successfully": [],
        "critical_insights": [],
        "important_context_for_future_reasoning": ["Continue at iteration 5."]
    });
    let (summary, format) = crate::core::steps::answer_text::read_answer(&answer.to_string());
    assert_eq!(format, crate::core::model::outcome::AnswerFormat::Json);
    assert_eq!(
        summary,
        "### 🎯 OBJECTIVE ACHIEVED\n- Counted 12,140 rows.\n\n### 📊 KEY DISCOVERIES\n- North leads.\n\n\
         ### ✅ SUCCESSFUL SOLUTIONS\n- rows.filter(Boolean)\n\n\
         ### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING\n- Continue at iteration 5."
    );
}

#[test]
fn the_endpoint_names_the_model_and_never_a_key() {
    assert_eq!(
        endpoint("http://127.0.0.1:9/", "models/gemini-2.5-flash-lite"),
        "http://127.0.0.1:9/v1beta/models/gemini-2.5-flash-lite:generateContent"
    );
    assert_eq!(
        endpoint("https://x", "a/b?c"),
        "https://x/v1beta/models/a%2Fb%3Fc:generateContent"
    );
}

#[test]
fn text_usage_and_model_version_are_read() {
    let body = r####"{"candidates":[{"content":{"parts":[{"text":"thinking...","thought":true},{"text":"### A"},{"text":"\nB"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"thoughtsTokenCount":3,"cachedContentTokenCount":4,"totalTokenCount":18},"modelVersion":"gemini-3.5-flash-lite-001"}"####;
    let read = reply(body).unwrap();
    assert_eq!(read.text, "### A\nB");
    assert_eq!(
        read.usage,
        Some(TokenUsage {
            prompt_tokens: 10,
            output_tokens: 5,
            thinking_tokens: 3,
            cached_tokens: 4,
        })
    );
    assert_eq!(
        read.model_version.as_deref(),
        Some("gemini-3.5-flash-lite-001")
    );
    let bare =
        reply(r#"{"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":"STOP"}]}"#);
    assert_eq!(
        bare.unwrap().usage,
        None,
        "no usageMetadata is no usage, not zeros"
    );
}

#[test]
fn blocks_are_read_as_google_reads_them_with_their_explanations() {
    let blocked = r#"{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT","blockReasonMessage":"The prompt violates policy."},"usageMetadata":{"promptTokenCount":9}}"#;
    let (err, usage) = read_reply(200, blocked, "m", KEY)
        .unwrap_err()
        .split_usage();
    assert!(
        matches!(&err, ProviderError::Blocked(r) if r.contains_text("PROHIBITED_CONTENT") && r.contains_text("violates policy")),
        "{err:?}"
    );
    assert_eq!(
        usage.map(|u| u.prompt_tokens),
        Some(9),
        "a blocked answer is still billed"
    );
    let feedback_only = r#"{"promptFeedback":{"safetyRatings":[]}}"#;
    assert!(matches!(
        reply(feedback_only),
        Err(ProviderError::Blocked(_))
    ));
    for finish in [
        "SAFETY",
        "LANGUAGE",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "RECITATION",
    ] {
        let body = format!(
            r#"{{"candidates":[{{"finishReason":"{finish}","finishMessage":"stopped here"}}]}}"#
        );
        assert!(
            matches!(reply(&body), Err(ProviderError::Blocked(r)) if r.contains_text(finish) && r.contains_text("stopped here")),
            "{finish}"
        );
    }
    let other = r#"{"candidates":[{"content":{"parts":[{"text":"half"}]},"finishReason":"OTHER","finishMessage":"internal"}]}"#;
    assert!(
        matches!(reply(other), Err(ProviderError::Incomplete(r)) if r.contains_text("OTHER") && r.contains_text("internal"))
    );
    let no_candidates = r#"{"candidates":[]}"#;
    assert!(matches!(
        reply(no_candidates),
        Err(ProviderError::Incomplete(_))
    ));
}

#[test]
fn cut_off_answers_are_incomplete_and_keep_their_usage() {
    let cut = r####"{"candidates":[{"content":{"role":"model"},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":1200,"thoughtsTokenCount":4000}}"####;
    let (err, usage) = read_reply(200, cut, "m", KEY).unwrap_err().split_usage();
    assert!(matches!(err, ProviderError::Incomplete(_)));
    assert_eq!(usage.map(|u| u.thinking_tokens), Some(4000));
    assert!(matches!(
        reply("<html>"),
        Err(ProviderError::Http { status: 502, .. })
    ));
}

#[test]
fn an_answer_cut_with_text_is_kept_as_cut_and_one_cut_before_any_text_is_incomplete() {
    let cut = r####"{"candidates":[{"content":{"role":"model","parts":[{"text":"### 🎯 OBJECTIVE ACHIEVED\n- Loaded 4 shards\n- Compa"}]},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":4000}}"####;
    let reply = read_reply(200, cut, "m", KEY).unwrap();
    assert!(reply.cut);
    assert!(reply.text.ends_with("- Compa"));
    assert_eq!(reply.usage.map(|u| u.output_tokens), Some(4000));
    let whole = r####"{"candidates":[{"content":{"role":"model","parts":[{"text":"### A\n- b"}]},"finishReason":"STOP"}]}"####;
    assert!(!read_reply(200, whole, "m", KEY).unwrap().cut);
    let blank = r####"{"candidates":[{"content":{"role":"model","parts":[{"text":"  "}]},"finishReason":"MAX_TOKENS"}]}"####;
    let err = read_reply(200, blank, "m", KEY)
        .unwrap_err()
        .split_usage()
        .0;
    assert!(err.to_string().contains_text("before any text"), "{err}");
}

#[test]
fn quotas_that_last_the_day_are_not_retried_and_short_ones_are() {
    let per_minute = r#"{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateContentInputTokensPerModelPerMinute-FreeTier","quotaValue":"250000"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"26s"}]}}"#;
    let err = failed(429, per_minute, "m", KEY).unwrap_err();
    assert!(err.is_retryable());
    assert_eq!(err.retry_after_ms(), Some(26_000));
    let per_day = r#"{"error":{"code":429,"message":"You exceeded your current quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"47s"}]}}"#;
    let err = failed(429, per_day, "gemini-3-pro", KEY).unwrap_err();
    assert!(!err.is_retryable());
    assert!(err.to_string().contains_text("for today"), "{err}");
    let zero = r#"{"error":{"code":429,"message":"Quota exceeded for metric: generate_content_free_tier_requests, limit: 0, model: gemini-3-pro. Please retry in 45.5s.","status":"RESOURCE_EXHAUSTED"}}"#;
    assert!(!failed(429, zero, "gemini-3-pro", KEY)
        .unwrap_err()
        .is_retryable());
    let help_only = r#"{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.Help","links":[]}]}}"#;
    let err = failed(429, help_only, "m", KEY).unwrap_err();
    assert!(err.is_retryable() && err.retry_after_ms().is_none());
}

#[test]
fn retry_delays_and_zero_quotas_are_read_without_a_float_parser() {
    for (text, ms) in [
        ("26s", Some(26_000)),
        ("1.5s", Some(1_500)),
        (" 0.25s ", Some(250)),
        ("1.2345s", Some(1_234)),
        (".5s", Some(500)),
        ("99999999999s", Some(u32::MAX)),
        ("s", None),
        ("-1s", None),
        ("1e3s", None),
        ("1.5", None),
    ] {
        assert_eq!(parse_duration_ms(text), ms, "{text:?}");
    }
    let quota = |value: &str| {
        format!(
            r#"{{"error":{{"code":429,"message":"Resource exhausted","details":[{{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{{"quotaId":"PerMinute","quotaValue":{value}}}]}}]}}}}"#
        )
    };
    for (value, lasting) in [
        ("\"0\"", true),
        ("\"0.0\"", true),
        ("0", true),
        ("\"10\"", false),
        ("\"\"", false),
        ("12", false),
    ] {
        let err = failed(429, &quota(value), "m", KEY).unwrap_err();
        assert_eq!(!err.is_retryable(), lasting, "quotaValue {value}");
    }
}

#[test]
fn http_errors_name_their_cause_and_never_the_key() {
    let gone = r#"{"error":{"code":404,"message":"models/gemini-1.5-pro is not found for API version v1beta","status":"NOT_FOUND"}}"#;
    let err = failed(404, gone, "gemini-1.5-pro", KEY).unwrap_err();
    assert!(err.to_string().contains_text("unknown or retired"));
    let suspended = format!(
        r#"{{"error":{{"code":403,"message":"Permission denied: Consumer 'api_key:{KEY}' has been suspended.","status":"PERMISSION_DENIED"}}}}"#
    );
    let err = failed(403, &suspended, "m", KEY).unwrap_err();
    assert!(!err.to_string().contains_text(KEY), "{err}");
    assert!(err.to_string().contains_text("api_key:[redacted]"), "{err}");
    let own_key = r#"{"error":{"code":400,"message":"Invalid API key: my-test-key-1234","status":"INVALID_ARGUMENT"}}"#;
    let err = failed(400, own_key, "m", "my-test-key-1234").unwrap_err();
    assert!(!err.to_string().contains_text("my-test-key-1234"), "{err}");
    assert!(matches!(
        failed(502, "Bad Gateway", "m", KEY),
        Err(ProviderError::Http { status: 502, .. })
    ));
}
