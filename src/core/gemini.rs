//! The Gemini `generateContent` protocol: the request body and the reading of the reply.
//! Transport (fetch, headers, abort) lives in the web layer; everything here is plain data.

use serde_json::{json, Value};

use super::prompt::SYSTEM_INSTRUCTION;
use super::provider::{GenerationSettings, ProviderError, TokenUsage};

/// The public endpoint.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";
/// The default model (current and cheap; 2.0 and older are retired).
pub const DEFAULT_MODEL: &str = "gemini-2.5-flash-lite";
/// The longest `retryDelay` of a 429 that is honoured, in ms.
pub const MAX_RETRY_DELAY_MS: u32 = 60_000;

/// `POST {base}/v1beta/models/{model}:generateContent`; the key never goes into the URL.
pub fn endpoint(base_url: &str, model: &str) -> String {
    let model = model.trim().trim_start_matches("models/");
    format!(
        "{}/v1beta/models/{}:generateContent",
        base_url.trim().trim_end_matches('/'),
        encode_path_segment(model)
    )
}

fn encode_path_segment(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The request body. Thinking is switched off where the model family allows it: 2.5 Flash and
/// Flash-Lite take `thinkingBudget: 0`; 2.5 Pro cannot switch it off and 3.x models take
/// `thinkingLevel`, so those get no thinking setting (their thinking tokens count against
/// `maxOutputTokens`).
pub fn request_body(prompt: &str, settings: &GenerationSettings) -> Value {
    let mut generation = json!({
        "temperature": settings.temperature,
        "maxOutputTokens": settings.max_output_tokens,
    });
    let model = settings.model.to_ascii_lowercase();
    if model.contains("2.5-flash") {
        generation["thinkingConfig"] = json!({ "thinkingBudget": 0 });
    } else if model.starts_with("gemini-3") {
        generation["thinkingConfig"] = json!({ "thinkingLevel": "low" });
    }
    json!({
        "contents": [{ "role": "user", "parts": [{ "text": prompt }] }],
        "systemInstruction": { "parts": [{ "text": SYSTEM_INSTRUCTION }] },
        "generationConfig": generation,
    })
}

fn count(value: &Value, field: &str) -> u64 {
    value.get(field).and_then(Value::as_u64).unwrap_or(0)
}

/// Reads a reply: the first candidate's non-thought text, or why there is none.
pub fn read_reply(
    status: u16,
    body: &str,
    model: &str,
) -> Result<(String, TokenUsage), ProviderError> {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    if !(200..300).contains(&status) {
        return Err(http_error(status, parsed.as_ref(), body, model));
    }
    let reply = parsed.ok_or_else(|| ProviderError::Http {
        status: 502,
        message: "the reply was not JSON".into(),
        retry_after_ms: None,
    })?;
    let usage = reply
        .get("usageMetadata")
        .map(|u| TokenUsage {
            prompt_tokens: count(u, "promptTokenCount"),
            output_tokens: count(u, "candidatesTokenCount"),
            thinking_tokens: count(u, "thoughtsTokenCount"),
        })
        .unwrap_or_default();
    let candidate = reply.get("candidates").and_then(|c| c.get(0));
    let Some(candidate) = candidate else {
        let reason = reply
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str);
        return Err(match reason {
            Some(reason) => ProviderError::Blocked(format!("the prompt was blocked ({reason})")),
            None => ProviderError::Incomplete("the reply had no candidates".into()),
        });
    };
    let finish = candidate
        .get("finishReason")
        .and_then(Value::as_str)
        .unwrap_or("STOP");
    if matches!(
        finish,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
    ) {
        return Err(ProviderError::Blocked(format!(
            "the answer was stopped ({finish})"
        )));
    }
    let text: String = candidate
        .pointer("/content/parts")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    if finish == "MAX_TOKENS" {
        return Err(ProviderError::Incomplete(format!(
            "the answer hit maxOutputTokens and was cut off after {} characters",
            text.chars().count()
        )));
    }
    if text.trim().is_empty() {
        return Err(ProviderError::Incomplete(format!(
            "the answer had no text (finishReason {finish})"
        )));
    }
    Ok((text, usage))
}

fn http_error(status: u16, parsed: Option<&Value>, body: &str, model: &str) -> ProviderError {
    let error = parsed.and_then(|v| v.get("error"));
    let google_message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| body.chars().take(200).collect());
    let message = match status {
        404 => format!("the model id \"{model}\" is unknown or retired ({google_message})"),
        400 if google_message.contains("API key") => {
            format!("the API key was rejected ({google_message})")
        }
        403 => format!("the API key was rejected or lacks access ({google_message})"),
        _ => google_message,
    };
    let retry_after_ms = error
        .and_then(|e| e.get("details"))
        .and_then(Value::as_array)
        .and_then(|details| {
            details.iter().find_map(|d| {
                let is_retry_info = d.get("@type").and_then(Value::as_str)
                    == Some("type.googleapis.com/google.rpc.RetryInfo");
                is_retry_info
                    .then(|| d.get("retryDelay").and_then(Value::as_str))
                    .flatten()
            })
        })
        .and_then(parse_duration_ms)
        .map(|ms| ms.min(MAX_RETRY_DELAY_MS));
    ProviderError::Http {
        status,
        message,
        retry_after_ms,
    }
}

/// `"26s"` or `"1.5s"` in milliseconds.
fn parse_duration_ms(text: &str) -> Option<u32> {
    let seconds: f64 = text.trim().strip_suffix('s')?.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0)
        .then(|| (seconds * 1000.0).min(f64::from(u32::MAX)) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(model: &str) -> GenerationSettings {
        GenerationSettings {
            model: model.into(),
            temperature: 0.1,
            max_output_tokens: 4000,
            timeout_ms: 30_000,
        }
    }

    #[test]
    fn the_body_carries_prompt_settings_and_thinking_off_for_flash() {
        let body = request_body("P", &settings("gemini-2.5-flash-lite"));
        assert_eq!(body["contents"][0]["parts"][0]["text"], "P");
        assert_eq!(body["generationConfig"]["temperature"], 0.1);
        assert_eq!(body["generationConfig"]["maxOutputTokens"], 4000);
        assert_eq!(
            body["generationConfig"]["thinkingConfig"]["thinkingBudget"],
            0
        );
        let pro = request_body("P", &settings("gemini-2.5-pro"));
        assert!(pro["generationConfig"].get("thinkingConfig").is_none());
        let three = request_body("P", &settings("gemini-3-flash"));
        assert_eq!(
            three["generationConfig"]["thinkingConfig"]["thinkingLevel"],
            "low"
        );
        assert!(three["generationConfig"]["thinkingConfig"]
            .get("thinkingBudget")
            .is_none());
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
    fn text_is_joined_from_non_thought_parts() {
        let body = r####"{"candidates":[{"content":{"parts":[{"text":"thinking...","thought":true},{"text":"### A"},{"text":"\nB"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"thoughtsTokenCount":3,"totalTokenCount":18}}"####;
        let (text, usage) = read_reply(200, body, "m").unwrap();
        assert_eq!(text, "### A\nB");
        assert_eq!(
            usage,
            TokenUsage {
                prompt_tokens: 10,
                output_tokens: 5,
                thinking_tokens: 3
            }
        );
    }

    #[test]
    fn failures_map_to_their_kinds() {
        let blocked = r#"{"promptFeedback":{"blockReason":"SAFETY"}}"#;
        assert!(
            matches!(read_reply(200, blocked, "m"), Err(ProviderError::Blocked(r)) if r.contains("SAFETY"))
        );
        let safety = r#"{"candidates":[{"finishReason":"SAFETY"}]}"#;
        assert!(matches!(
            read_reply(200, safety, "m"),
            Err(ProviderError::Blocked(_))
        ));
        let cut = r####"{"candidates":[{"content":{"parts":[{"text":"### 🎯 OBJ"}]},"finishReason":"MAX_TOKENS"}]}"####;
        assert!(matches!(
            read_reply(200, cut, "m"),
            Err(ProviderError::Incomplete(_))
        ));
        let empty = r#"{"candidates":[{"finishReason":"MAX_TOKENS"}]}"#;
        assert!(matches!(
            read_reply(200, empty, "m"),
            Err(ProviderError::Incomplete(_))
        ));
        assert!(matches!(
            read_reply(200, "<html>", "m"),
            Err(ProviderError::Http { status: 502, .. })
        ));
        let gone = r#"{"error":{"code":404,"message":"models/gemini-1.5-pro is not found for API version v1beta","status":"NOT_FOUND"}}"#;
        match read_reply(404, gone, "gemini-1.5-pro") {
            Err(ProviderError::Http {
                status: 404,
                message,
                ..
            }) => assert!(message.contains("unknown or retired")),
            other => panic!("{other:?}"),
        }
        let limited = r#"{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"26s"}]}}"#;
        assert!(matches!(
            read_reply(429, limited, "m"),
            Err(ProviderError::Http {
                retry_after_ms: Some(26_000),
                ..
            })
        ));
        assert!(matches!(
            read_reply(502, "Bad Gateway", "m"),
            Err(ProviderError::Http { status: 502, .. })
        ));
    }
}
