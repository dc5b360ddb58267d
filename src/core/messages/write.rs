//! The messages the front writes, in each shape: a user's message (the summary's), a model's
//! message with its calls, a result message. Every other message of the list is the app's own.

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

/// A call a model's message makes: its id, the tool's name, the arguments as JSON text (for
/// OpenAI, the JSON string `arguments` is).
pub struct CallOut<'a> {
    /// The call's id.
    pub id: &'a str,
    /// The tool's name.
    pub name: &'a str,
    /// The arguments' JSON text.
    pub args: &'a str,
}

/// The thought signature Gemini documents for a call it did not answer with itself (history
/// made again, another model's turns): a Gemini 3 model refuses a step whose first call has
/// none (400), and the archive does not keep the one the app had.
pub const REBUILT_SIGNATURE: &str = "skip_thought_signature_validator";

/// [`REBUILT_SIGNATURE`] as a field of a Gemini part.
const GEMINI_SIGNED: &str = ",\"thoughtSignature\":\"skip_thought_signature_validator\"";

/// [`REBUILT_SIGNATURE`] as a field of an AI SDK tool call.
const AI_SDK_SIGNED: &str =
    ",\"providerOptions\":{\"google\":{\"thoughtSignature\":\"skip_thought_signature_validator\"}}";

/// The model's message of `shape` that says `text` (none when empty) and makes `calls`, made
/// again from the logs: its first call carries [`REBUILT_SIGNATURE`] where a Gemini model
/// reads one (Gemini `contents`, the AI SDK's `providerOptions.google`).
pub fn model_message(shape: Shape, text: &str, calls: &[CallOut<'_>]) -> String {
    let text = text.trim();
    let mut parts: Vec<String> = Vec::new();
    if !text.is_empty() && shape != Shape::OpenAi {
        parts.push(match shape {
            Shape::Gemini => format!("{{\"text\":{}}}", quoted(text)),
            _ => format!("{{\"type\":\"text\",\"text\":{}}}", quoted(text)),
        });
    }
    for (i, call) in calls.iter().enumerate() {
        let (id, name, args) = (quoted(call.id), quoted(call.name), call.args);
        let signature = match (i, shape) {
            (0, Shape::Gemini) => GEMINI_SIGNED,
            (0, Shape::AiSdk) => AI_SDK_SIGNED,
            _ => "",
        };
        parts.push(match shape {
            Shape::Gemini => format!("{{\"functionCall\":{{\"id\":{id},\"name\":{name},\"args\":{args}}}{signature}}}"),
            Shape::OpenAi => format!("{{\"id\":{id},\"type\":\"function\",\"function\":{{\"name\":{name},\"arguments\":{args}}}}}"),
            Shape::Anthropic => format!("{{\"type\":\"tool_use\",\"id\":{id},\"name\":{name},\"input\":{args}}}"),
            Shape::AiSdk => format!("{{\"type\":\"tool-call\",\"toolCallId\":{id},\"toolName\":{name},\"input\":{args}{signature}}}"),
        });
    }
    let parts = parts.join(",");
    match shape {
        Shape::Gemini => format!("{{\"role\":\"model\",\"parts\":[{parts}]}}"),
        Shape::OpenAi => {
            let content = if text.is_empty() {
                "null".to_owned()
            } else {
                quoted(text)
            };
            let calls = if calls.is_empty() {
                String::new()
            } else {
                format!(",\"tool_calls\":[{parts}]")
            };
            format!("{{\"role\":\"assistant\",\"content\":{content}{calls}}}")
        }
        _ => format!("{{\"role\":\"assistant\",\"content\":[{parts}]}}"),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signed_fields_carry_the_rebuilt_signature() {
        for field in [GEMINI_SIGNED, AI_SDK_SIGNED] {
            assert!(
                field.contains(&format!("\"{REBUILT_SIGNATURE}\"")),
                "{field}"
            );
        }
    }
}
