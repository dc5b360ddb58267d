//! The Gemini `generateContent` protocol: the request body and the reading of the reply.
//! Transport (fetch, headers, abort) lives in the web layer; everything here is plain data.

use crate::core::order::join::Joined;
use crate::core::order::text_search::TextSearch;
use std::borrow::Cow;

use crate::core::error::redact::redact;
use crate::core::error::{ProviderError, ProviderFailure};
use crate::core::json::read::FromJson;
use crate::core::json::scan::{document, field, items, string};
use crate::core::json::write::ObjectOut;
use crate::core::model::token_usage::TokenUsage;
use crate::core::providers::port::GenerationSettings;
use crate::core::steps::prompt::SYSTEM_INSTRUCTION;
use crate::core::steps::validation::SECTIONS;

/// The public endpoint.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";
/// The default model: Gemini 3.5 Flash-Lite, the current stable model of the cheap, fast tier
/// (Google names it the replacement of 2.5 Flash; 2.5 Flash-Lite has an announced shutdown).
pub const DEFAULT_MODEL: &str = "gemini-3.5-flash-lite";
/// The longest `retryDelay` of a 429 that is honoured, in ms.
pub(crate) const MAX_RETRY_DELAY_MS: u32 = 60_000;
/// The smallest thinking budget Gemini 2.5 Pro accepts (it cannot switch thinking off).
pub(crate) const PRO_25_MIN_THINKING_BUDGET: u32 = 128;

/// Input tokens a Gemini model takes in one call (Google's model pages: 1,048,576).
pub const GEMINI_INPUT_LIMIT: usize = 1_048_576;

/// The model families the Gemini API serves, as far as a request must differ between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `gemini-2.5-flash`, `-flash-lite`, …: thinking switched off with `thinkingBudget: 0`.
    Flash25,
    /// `gemini-2.5-pro`: thinking cannot be switched off; the smallest budget, 128.
    Pro25,
    /// `gemini-3…` and later: `thinkingLevel`, and temperature 1.0 as Google's guide advises.
    Gemini3,
    /// `gemma-…`: no system instruction (a 400 "Developer instruction is not enabled"), no thinking.
    Gemma,
    /// `gemini-flash-latest` and the other aliases: whatever model they point to today, so
    /// nothing model-specific is sent.
    Alias,
    /// Anything else (a proxy's or a test's name): temperature only.
    Other,
}

impl Family {
    /// The family of a model id, with or without the `models/` prefix ListModels returns.
    pub fn of(model: &str) -> Family {
        let id = model.trim().trim_start_text("models/").to_ascii_lowercase();
        if id.starts_with("gemma") {
            return Family::Gemma;
        }
        if id.ends_with("-latest") {
            return Family::Alias;
        }
        if id.starts_with("gemini-2.5-pro") {
            return Family::Pro25;
        }
        if id.starts_with("gemini-2.5-flash") {
            return Family::Flash25;
        }
        let major: Option<u32> = id
            .strip_prefix("gemini-")
            .map(|rest| {
                rest.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
            })
            .and_then(|digits| digits.parse().ok());
        match major {
            Some(major) if major >= 3 => Family::Gemini3,
            _ => Family::Other,
        }
    }

    /// The input token limit Google publishes for the family (1,048,576 for every current
    /// Gemini model); none for Gemma and unknown names.
    pub fn input_limit(self) -> Option<usize> {
        match self {
            Family::Flash25 | Family::Pro25 | Family::Gemini3 | Family::Alias => {
                Some(GEMINI_INPUT_LIMIT)
            }
            Family::Gemma | Family::Other => None,
        }
    }

    /// The `thinkingConfig` this family gets, as JSON: as little thinking as it allows.
    pub fn thinking_config(self) -> Option<String> {
        let mut config = String::new();
        match self {
            Family::Flash25 => ObjectOut::new(&mut config).field("thinkingBudget", &0u32),
            Family::Pro25 => {
                ObjectOut::new(&mut config).field("thinkingBudget", &PRO_25_MIN_THINKING_BUDGET)
            }
            Family::Gemini3 => ObjectOut::new(&mut config).field("thinkingLevel", "low"),
            Family::Gemma | Family::Alias | Family::Other => return None,
        };
        Some(config)
    }

    /// The temperature sent when the app set none (`None`: the model's own default).
    pub fn default_temperature(self) -> Option<f64> {
        match self {
            Family::Gemini3 => Some(1.0),
            Family::Alias => None,
            Family::Flash25 | Family::Pro25 | Family::Gemma | Family::Other => {
                Some(crate::core::model::settings::DEFAULT_TEMPERATURE)
            }
        }
    }

    /// Whether the family takes a `systemInstruction` (Gemma gets it at the head of the prompt).
    pub fn takes_system_instruction(self) -> bool {
        self != Family::Gemma
    }

    /// Whether the family is asked for structured output ([`response_schema`]): the 2.5 and
    /// 3.x models, which Google lists as supporting it. Gemma refuses JSON mode, and an alias
    /// may point to any model.
    pub fn takes_response_schema(self) -> bool {
        matches!(self, Family::Flash25 | Family::Pro25 | Family::Gemini3)
    }
}

/// The JSON key of a section in the structured answer: its title in snake case
/// (`key_discoveries`).
pub fn section_key(title: &str) -> String {
    title.to_ascii_lowercase().replace(' ', "_")
}

/// The `responseSchema` of a structured answer: an object with one list of points per
/// section, every key required and in the summary's order.
pub fn response_schema() -> String {
    let keys: Vec<String> = SECTIONS
        .iter()
        .map(|(_, title)| format!("\"{}\"", section_key(title)))
        .collect();
    let list = r#"{"type":"ARRAY","items":{"type":"STRING"}}"#;
    let properties: Vec<String> = keys.iter().map(|key| format!("{key}:{list}")).collect();
    let keys = keys.joined(",");
    format!(
        r#"{{"type":"OBJECT","properties":{{{}}},"required":[{keys}],"propertyOrdering":[{keys}]}}"#,
        properties.joined(",")
    )
}

/// `POST {base}/v1beta/models/{model}:generateContent`; the key never goes into the URL.
pub fn endpoint(base_url: &str, model: &str) -> String {
    let model = model.trim().trim_start_text("models/");
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

/// The request body (JSON), shaped for the model's [`Family`]; an app's own `temperature` wins.
pub fn request_body(prompt: &str, settings: &GenerationSettings) -> String {
    let family = Family::of(&settings.model);
    let temperature = if settings.temperature_set {
        Some(settings.temperature)
    } else {
        family.default_temperature()
    };
    let mut generation = String::new();
    {
        let mut config = ObjectOut::new(&mut generation);
        config.field("maxOutputTokens", &settings.max_output_tokens);
        config.field_opt("temperature", &temperature);
        if let Some(thinking) = family.thinking_config() {
            config.raw("thinkingConfig", &thinking);
        }
        if family.takes_response_schema() {
            config.field("responseMimeType", "application/json");
            config.raw("responseSchema", &response_schema());
        }
    }
    let text_parts = |text: &str| {
        let mut part = String::new();
        ObjectOut::new(&mut part).field("text", text);
        format!("[{part}]")
    };
    let mut body = String::new();
    {
        let mut request = ObjectOut::new(&mut body);
        if family.takes_system_instruction() {
            let mut user = String::new();
            ObjectOut::new(&mut user)
                .field("role", "user")
                .raw("parts", &text_parts(prompt));
            request.raw("contents", &format!("[{user}]"));
            let mut system = String::new();
            ObjectOut::new(&mut system).raw("parts", &text_parts(SYSTEM_INSTRUCTION));
            request.raw("systemInstruction", &system);
        } else {
            let mut user = String::new();
            ObjectOut::new(&mut user).field("role", "user").raw(
                "parts",
                &text_parts(&format!("{SYSTEM_INSTRUCTION}\n\n{prompt}")),
            );
            request.raw("contents", &format!("[{user}]"));
        }
        request.raw("generationConfig", &generation);
    }
    body
}

/// The value at `path` (field names) under the object `json`.
fn at<'a>(json: &'a str, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(json, |value, name| field(value, name))
}

/// A whole count at `name` of `json`, 0 when absent or not one.
fn count(json: &str, name: &str) -> u64 {
    field(json, name)
        .and_then(|value| u64::from_json(value).ok())
        .unwrap_or(0)
}

/// The non-blank text at `path` under `json`.
fn text_at<'a>(json: &'a str, path: &[&str]) -> Option<Cow<'a, str>> {
    at(json, path)
        .and_then(string)
        .filter(|s| !s.trim().is_empty())
}

/// A readable answer: its text, the tokens it reported and the model that gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The first candidate's non-thought text.
    pub text: String,
    /// `usageMetadata`, when the answer had it.
    pub usage: Option<TokenUsage>,
    /// `modelVersion`, when the answer had it.
    pub model_version: Option<String>,
    /// Whether `maxOutputTokens` cut the text (`MAX_TOKENS`): it is kept as far as it is whole.
    pub cut: bool,
}

/// Finish reasons after which the answer is withheld for policy reasons: a retry of the same
/// prompt would meet the same policy.
const BLOCKING_FINISHES: [&str; 7] = [
    "SAFETY",
    "RECITATION",
    "LANGUAGE",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
];

/// Reads a reply: the first candidate's non-thought text, or why there is none. `secret` (the
/// API key) and anything shaped like a Google key never reach a message.
pub fn read_reply(
    status: u16,
    body: &str,
    model: &str,
    secret: &str,
) -> Result<Reply, ProviderFailure> {
    read(status, body, model).map_err(|failure| scrub(failure, secret))
}

/// `failure` with `secret` and every Google-key-shaped text removed from its messages.
pub fn scrub(failure: ProviderFailure, secret: &str) -> ProviderFailure {
    ProviderFailure {
        error: scrub_error(failure.error, secret),
        usage: failure.usage,
    }
}

fn scrub_error(err: ProviderError, secret: &str) -> ProviderError {
    let clean = |text: String| redact(&text, Some(secret)).into_owned();
    match err {
        ProviderError::Http {
            status,
            message,
            retry_after_ms,
            lasting,
        } => ProviderError::Http {
            status,
            message: clean(message),
            retry_after_ms,
            lasting,
        },
        ProviderError::Blocked(reason) => ProviderError::Blocked(clean(reason)),
        ProviderError::Incomplete(reason) => ProviderError::Incomplete(clean(reason)),
        ProviderError::Network(reason) => ProviderError::Network(clean(reason)),
        ProviderError::Failed(reason) => ProviderError::Failed(clean(reason)),
        ProviderError::Refused(reason) => ProviderError::Refused(clean(reason)),
        ProviderError::NotText(what) => ProviderError::NotText(clean(what)),
        other @ (ProviderError::Timeout { .. } | ProviderError::Aborted) => other,
    }
}

fn read(status: u16, body: &str, model: &str) -> Result<Reply, ProviderFailure> {
    let parsed = document(body).ok();
    if !(200..300).contains(&status) {
        return Err(http_error(status, parsed, body, model).into());
    }
    let reply = parsed.ok_or_else(|| ProviderError::Http {
        status: 502,
        message: "the reply was not JSON".into(),
        retry_after_ms: None,
        lasting: false,
    })?;
    let usage = field(reply, "usageMetadata").map(|u| TokenUsage {
        prompt_tokens: count(u, "promptTokenCount"),
        output_tokens: count(u, "candidatesTokenCount"),
        thinking_tokens: count(u, "thoughtsTokenCount"),
        cached_tokens: count(u, "cachedContentTokenCount"),
    });
    let model_version = text_at(reply, &["modelVersion"]).map(Cow::into_owned);
    let failed = |err: ProviderError| err.with_usage(usage);
    let candidate = field(reply, "candidates")
        .and_then(items)
        .and_then(|mut c| c.next());
    let Some(candidate) = candidate else {
        // Google's SDKs read a reply without candidates but with promptFeedback as a block.
        return Err(failed(match field(reply, "promptFeedback") {
            Some(feedback) => {
                let reason =
                    text_at(feedback, &["blockReason"]).unwrap_or(Cow::Borrowed("no reason given"));
                let explained = text_at(feedback, &["blockReasonMessage"])
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default();
                ProviderError::Blocked(format!("the prompt was blocked ({reason}){explained}"))
            }
            None => ProviderError::Incomplete("the reply had no candidates".into()),
        }));
    };
    let finish = text_at(candidate, &["finishReason"]).unwrap_or(Cow::Borrowed("STOP"));
    let finish = finish.as_ref();
    let finish_message = text_at(candidate, &["finishMessage"])
        .map(|m| format!(": {m}"))
        .unwrap_or_default();
    if BLOCKING_FINISHES.contains(&finish) {
        return Err(failed(ProviderError::Blocked(format!(
            "the answer was stopped ({finish}){finish_message}"
        ))));
    }
    let text: String = at(candidate, &["content", "parts"])
        .and_then(items)
        .map(|parts| {
            parts
                .filter(|p| field(p, "thought") != Some("true"))
                .filter_map(|p| field(p, "text").and_then(string))
                .collect()
        })
        .unwrap_or_default();
    let cut = finish == "MAX_TOKENS";
    if cut && text.trim().is_empty() {
        return Err(failed(ProviderError::Incomplete(format!(
            "the answer hit maxOutputTokens before any text (thinking counts against it){finish_message}"
        ))));
    }
    if text.trim().is_empty() {
        return Err(failed(ProviderError::Incomplete(format!(
            "the answer had no text (finishReason {finish}){finish_message}"
        ))));
    }
    if !cut && !matches!(finish, "STOP" | "FINISH_REASON_UNSPECIFIED") {
        return Err(failed(ProviderError::Incomplete(format!(
            "the answer ended early (finishReason {finish}){finish_message}"
        ))));
    }
    Ok(Reply {
        text,
        usage,
        model_version,
        cut,
    })
}

/// Whether a 429's quota cannot come back within a retry: a per-day quota, or a limit of 0
/// (the model is not in the project's tier).
fn lasting_quota(error: Option<&str>, message: &str) -> bool {
    let violations = error
        .and_then(|e| field(e, "details"))
        .and_then(items)
        .into_iter()
        .flatten()
        .filter(|d| {
            text_at(d, &["@type"]).as_deref() == Some("type.googleapis.com/google.rpc.QuotaFailure")
        })
        .filter_map(|d| field(d, "violations").and_then(items))
        .flatten();
    let mut lasting = false;
    for violation in violations {
        let id = text_at(violation, &["quotaId"]).unwrap_or_default();
        let value = field(violation, "quotaValue").and_then(|v| match string(v) {
            Some(s) => Some(
                s.as_bytes().contains(&b'0') && s.trim().bytes().all(|b| b == b'0' || b == b'.'),
            ),
            None => f64::from_json(v).ok().map(|n| n == 0.0),
        });
        lasting |= id.contains_text("PerDay") || value == Some(true);
    }
    lasting || message.contains_text("limit: 0") || message.contains_text("per day")
}

fn http_error(status: u16, parsed: Option<&str>, body: &str, model: &str) -> ProviderError {
    let error = parsed.and_then(|v| field(v, "error"));
    let google_message = error
        .and_then(|e| field(e, "message"))
        .and_then(string)
        .map(Cow::into_owned)
        .unwrap_or_else(|| body.chars().take(200).collect());
    let lasting = status == 429 && lasting_quota(error, &google_message);
    let message = match status {
        404 => format!("the model id \"{model}\" is unknown or retired ({google_message})"),
        400 if google_message.contains_text("API key") => {
            format!("the API key was rejected ({google_message})")
        }
        403 => format!("the API key was rejected or lacks access ({google_message})"),
        429 if lasting => format!(
            "the quota for {model} is used up for today or is 0 in this project's tier; retrying \
             cannot help: wait for the daily reset, choose another model or enable billing \
             ({google_message})"
        ),
        _ => google_message,
    };
    let retry_after_ms = error
        .and_then(|e| field(e, "details"))
        .and_then(items)
        .and_then(|mut details| {
            details.find_map(|d| {
                let is_retry_info = text_at(d, &["@type"]).as_deref()
                    == Some("type.googleapis.com/google.rpc.RetryInfo");
                is_retry_info.then(|| text_at(d, &["retryDelay"])).flatten()
            })
        })
        .and_then(|delay| parse_duration_ms(&delay))
        .map(|ms| ms.min(MAX_RETRY_DELAY_MS));
    ProviderError::Http {
        status,
        message,
        retry_after_ms,
        lasting,
    }
}

/// `"26s"` or `"1.5s"` in milliseconds (digits read by hand: a float parser is 4 KB of wasm).
fn parse_duration_ms(text: &str) -> Option<u32> {
    let seconds = text.trim().strip_suffix('s')?;
    let (whole, fraction) = seconds.split_once('.').unwrap_or((seconds, ""));
    let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !digits(whole) || !digits(fraction) {
        return None;
    }
    let mut ms: u64 = 0;
    for digit in whole.bytes() {
        ms = (ms * 10 + u64::from(digit - b'0')).min(u64::from(u32::MAX));
    }
    ms *= 1000;
    for (scale, digit) in [100, 10, 1].into_iter().zip(fraction.bytes()) {
        ms += scale * u64::from(digit - b'0');
    }
    Some(u32::try_from(ms).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests;
