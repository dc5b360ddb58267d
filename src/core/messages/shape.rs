//! The four shapes of a message list, and what the front reads of one message in each: its
//! role, its words, the tool calls it makes and the tool results it answers with. A result's
//! body is a slice of the message's own text, so that a writer can replace it and leave every
//! other byte (a `thoughtSignature`, a provider's options) as the app gave it.

use std::borrow::Cow;

use crate::core::json::record::json_names;
use crate::core::json::scan::{field, items, string};

/// The shape of the app's message list (`shape`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Gemini `contents`: `parts` with `text`, `functionCall`, `functionResponse`.
    Gemini,
    /// OpenAI chat: `tool_calls` on the assistant's message, role `"tool"` for results.
    OpenAi,
    /// Anthropic Messages: `tool_use` and `tool_result` blocks.
    Anthropic,
    /// The AI SDK's `ModelMessage[]`: `tool-call` and `tool-result` parts.
    AiSdk,
}

json_names! {
    all Shape {
        Gemini = "gemini",
        OpenAi = "openai",
        Anthropic = "anthropic",
        AiSdk = "ai-sdk",
    }
}

/// Who wrote a message, as the front groups them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Instructions before the conversation (`system`, `developer`).
    System,
    /// The user, or the app answering tool calls on the user's side.
    User,
    /// The model (`model`, `assistant`).
    Model,
    /// The app answering tool calls in messages of their own (`tool`): results, and the AI
    /// SDK's answers to tool approvals.
    Tool,
}

/// A tool call a model message makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRead<'a> {
    /// The call's id, when the shape gives one.
    pub id: Option<Cow<'a, str>>,
    /// The tool's name.
    pub name: Cow<'a, str>,
    /// The arguments as their JSON text.
    pub args: &'a str,
}

/// A tool result a message answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultRead<'a> {
    /// The id of the call it answers, when the shape gives one.
    pub call_id: Option<Cow<'a, str>>,
    /// The tool's name, when the shape gives one.
    pub name: Option<Cow<'a, str>>,
    /// The body (a slice of the message's text), when there is one.
    pub body: Option<&'a str>,
    /// Whether the result reports a failure.
    pub error: bool,
}

/// What the front reads of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageRead<'a> {
    /// Who wrote it.
    pub role: Role,
    /// Its words (text parts, in order; a model's hidden thoughts left out).
    pub texts: Vec<Cow<'a, str>>,
    /// The tool calls it makes.
    pub calls: Vec<CallRead<'a>>,
    /// The tool results it answers with.
    pub results: Vec<ResultRead<'a>>,
}

/// The text of the string field `name` of `json`.
fn text<'a>(json: &'a str, name: &str) -> Option<Cow<'a, str>> {
    string(field(json, name)?)
}

/// `role` of `json`, read as `system`, `model` and `assistant` name them.
fn role_of(json: &str) -> Role {
    match text(json, "role").as_deref() {
        Some("system" | "developer") => Role::System,
        Some("model" | "assistant") => Role::Model,
        Some("tool") => Role::Tool,
        _ => Role::User,
    }
}

impl Shape {
    /// What `json`, one message of a list of this shape, holds; `None` when it is not an
    /// object.
    pub fn read<'a>(self, json: &'a str) -> Option<MessageRead<'a>> {
        if !json.starts_with('{') {
            return None;
        }
        let mut read = MessageRead {
            role: role_of(json),
            texts: Vec::new(),
            calls: Vec::new(),
            results: Vec::new(),
        };
        match self {
            Shape::Gemini => read_gemini(json, &mut read),
            Shape::OpenAi => read_openai(json, &mut read),
            Shape::Anthropic | Shape::AiSdk => read_blocks(self, json, &mut read),
        }
        Some(read)
    }
}

fn read_gemini<'a>(json: &'a str, read: &mut MessageRead<'a>) {
    for part in field(json, "parts").and_then(items).into_iter().flatten() {
        if field(part, "thought") != Some("true") {
            read.texts.extend(text(part, "text"));
        }
        if let Some(call) = field(part, "functionCall") {
            read.calls.push(CallRead {
                id: text(call, "id"),
                name: text(call, "name").unwrap_or_default(),
                args: field(call, "args").unwrap_or("{}"),
            });
        }
        if let Some(answer) = field(part, "functionResponse") {
            read.results.push(ResultRead {
                call_id: text(answer, "id"),
                name: text(answer, "name"),
                body: field(answer, "response"),
                error: false,
            });
        }
    }
}

fn read_openai<'a>(json: &'a str, read: &mut MessageRead<'a>) {
    let content = field(json, "content");
    if text(json, "role").as_deref() == Some("tool") {
        read.results.push(ResultRead {
            call_id: text(json, "tool_call_id"),
            name: text(json, "name"),
            body: content,
            error: false,
        });
        return;
    }
    read_content_text(content, read);
    for call in field(json, "tool_calls")
        .and_then(items)
        .into_iter()
        .flatten()
    {
        let function = field(call, "function").unwrap_or("{}");
        read.calls.push(CallRead {
            id: text(call, "id"),
            name: text(function, "name").unwrap_or_default(),
            args: field(function, "arguments").unwrap_or("{}"),
        });
    }
}

/// The words of `content`: a string, or the `text` of its parts of type `text`.
fn read_content_text<'a>(content: Option<&'a str>, read: &mut MessageRead<'a>) {
    let Some(content) = content else { return };
    if let Some(words) = string(content) {
        read.texts.push(words);
        return;
    }
    for part in items(content).into_iter().flatten() {
        if text(part, "type").as_deref() == Some("text") {
            read.texts.extend(text(part, "text"));
        }
    }
}

/// Anthropic's blocks and the AI SDK's parts: the same walk, each shape's names.
fn read_blocks<'a>(shape: Shape, json: &'a str, read: &mut MessageRead<'a>) {
    let content = field(json, "content");
    read_content_text(content, read);
    let (call_type, result_type) = match shape {
        Shape::Anthropic => ("tool_use", "tool_result"),
        _ => ("tool-call", "tool-result"),
    };
    for block in content.and_then(items).into_iter().flatten() {
        let kind = text(block, "type");
        if kind.as_deref() == Some(call_type) {
            read.calls.push(match shape {
                Shape::Anthropic => CallRead {
                    id: text(block, "id"),
                    name: text(block, "name").unwrap_or_default(),
                    args: field(block, "input").unwrap_or("{}"),
                },
                _ => CallRead {
                    id: text(block, "toolCallId"),
                    name: text(block, "toolName").unwrap_or_default(),
                    args: field(block, "input").unwrap_or("{}"),
                },
            });
        } else if kind.as_deref() == Some(result_type) {
            read.results.push(match shape {
                Shape::Anthropic => ResultRead {
                    call_id: text(block, "tool_use_id"),
                    name: None,
                    body: field(block, "content"),
                    error: field(block, "is_error") == Some("true"),
                },
                _ => {
                    let output = field(block, "output").unwrap_or("{}");
                    ResultRead {
                        call_id: text(block, "toolCallId"),
                        name: text(block, "toolName"),
                        body: field(output, "value"),
                        error: text(output, "type").is_some_and(|t| t.starts_with("error")),
                    }
                }
            });
        }
    }
}

#[cfg(test)]
mod tests;
