//! The messages the front writes, in each shape: a user's message (the summary's), a result
//! message (a recalled result). Every other message of the list is the app's own.

use crate::core::json::write::write_string;
use crate::core::messages::shape::Shape;

/// A string as JSON.
fn quoted(text: &str) -> String {
    let mut out = String::new();
    write_string(&mut out, text);
    out
}

/// The user's message of `shape` that says `text` (the summary's message is one).
pub fn user_message(shape: Shape, text: &str) -> String {
    let mut out = String::new();
    match shape {
        Shape::Gemini => {
            out.push_str("{\"role\":\"user\",\"parts\":[{\"text\":");
            write_string(&mut out, text);
            out.push_str("}]}");
        }
        Shape::OpenAi | Shape::Anthropic | Shape::AiSdk => {
            out.push_str("{\"role\":\"user\",\"content\":");
            write_string(&mut out, text);
            out.push('}');
        }
    }
    out
}

/// What answers call `id` of tool `name` with `body` (JSON) in `shape`: a part of a message
/// (Gemini's `functionResponse`, Anthropic's `tool_result`, the AI SDK's `tool-result`), or for
/// OpenAI, whose results have no parts, a message of its own.
pub fn result_part(shape: Shape, id: &str, name: &str, body: &str, error: bool) -> String {
    let (id, name) = (quoted(id), quoted(name));
    match shape {
        Shape::Gemini => {
            let response = match body.starts_with('{') {
                true => body.to_owned(),
                false => format!("{{\"result\":{body}}}"),
            };
            format!(
                "{{\"functionResponse\":{{\"id\":{id},\"name\":{name},\"response\":{response}}}}}"
            )
        }
        Shape::OpenAi => format!("{{\"role\":\"tool\",\"tool_call_id\":{id},\"content\":{body}}}"),
        Shape::Anthropic => format!(
            "{{\"type\":\"tool_result\",\"tool_use_id\":{id},\"content\":{body}{}}}",
            if error { ",\"is_error\":true" } else { "" }
        ),
        Shape::AiSdk => {
            let kind = match (error, body.starts_with('"')) {
                (false, true) => "text",
                (false, false) => "json",
                (true, true) => "error-text",
                (true, false) => "error-json",
            };
            format!(
                "{{\"type\":\"tool-result\",\"toolCallId\":{id},\"toolName\":{name},\"output\":{{\"type\":\"{kind}\",\"value\":{body}}}}}"
            )
        }
    }
}

/// The message of `shape` that holds `parts`, the [`result_part`]s of one turn apart by
/// commas: the answers to one model message in one message, as Gemini and Anthropic require;
/// for OpenAI, whose results are messages, `parts` itself (items of the same JSON array).
pub fn results_message(shape: Shape, parts: &str) -> String {
    let (role, field) = match shape {
        Shape::OpenAi => return parts.to_owned(),
        Shape::Gemini => ("user", "parts"),
        Shape::Anthropic => ("user", "content"),
        Shape::AiSdk => ("tool", "content"),
    };
    format!("{{\"role\":\"{role}\",\"{field}\":[{parts}]}}")
}
