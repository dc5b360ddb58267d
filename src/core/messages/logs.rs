//! A conversation as the core's three logs: each turn an iteration of the reasoning log (the
//! user's words, the model's, the calls it made), each call with its result one tool entry
//! whose id is the call's id and whose `details` is the result's body, so that the clearing
//! rung's placeholder goes back where the body was. The execution log stays empty. Beside
//! them, each message of the list exactly as the app gave it, by its turn's iteration
//! (`store::originals`): what a summary folds comes back as it was.

use crate::core::json::scan::{array_document, field, string};
use crate::core::json::write::{write_string, ObjectOut};
use crate::core::log::iteration::{iteration_header, user_wrote};
use crate::core::messages::conversation::{Conversation, Turn};
use crate::core::order::join::Joined;
use crate::core::store::originals::push_pair;

/// The longest part of a call's arguments the reasoning log repeats, in characters.
const ARGS_SHOWN: usize = 300;

/// How a turn's reasoning entry begins a line that names one of its calls.
pub const CALLED: &str = "Called ";

/// The reasoning log (`string[]` JSON) of `conversation`.
pub fn reasoning_log(conversation: &Conversation) -> String {
    let mut entries: Vec<String> = Vec::new();
    match (&conversation.earlier, &conversation.goal) {
        (Some(earlier), _) => entries.push(earlier.entry.clone()),
        (None, Some(goal)) => entries.push(format!(
            "=== SESSION START ===\nQuery: {}",
            goal.split_whitespace().collect::<Vec<_>>().joined(" ")
        )),
        (None, None) => {}
    }
    for turn in &conversation.turns {
        entries.push(turn_entry(turn));
    }
    let mut out = String::from("[");
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(&mut out, entry);
    }
    out.push(']');
    out
}

/// One turn's reasoning entry: its header, the user's words, the model's, the calls.
fn turn_entry(turn: &Turn) -> String {
    let mut entry = iteration_header(turn.iteration);
    for words in &turn.user_words {
        entry.push('\n');
        entry.push_str(&user_wrote(words));
    }
    if !turn.model_text.trim().is_empty() {
        entry.push('\n');
        entry.push_str(turn.model_text.trim());
    }
    for call in &turn.calls {
        let args: String = call.args.chars().take(ARGS_SHOWN).collect();
        entry.push_str(&format!(
            "\n{CALLED}{} (call {}) with {args}",
            call.name, call.id
        ));
    }
    entry
}

/// The tool log (`ToolActivityEntry[]` JSON) of `conversation`, read from `messages`, stamped
/// `timestamp`.
pub fn tool_log(conversation: &Conversation, messages: &[String], timestamp: &str) -> String {
    let mut out = String::from("[");
    let mut first = true;
    for turn in &conversation.turns {
        for call in &turn.calls {
            if !first {
                out.push(',');
            }
            first = false;
            let status = match call.result {
                None => "pending",
                Some(at) if at.error => "error",
                Some(_) => "success",
            };
            let mut entry = ObjectOut::new(&mut out);
            entry
                .field("id", &call.id)
                .field("timestamp", timestamp)
                .field("iteration", &turn.iteration)
                .field("type", &call.name)
                .field("action", "call")
                .field("status", status)
                .raw("args", args_json(&call.args));
            if let Some(at) = call.result {
                entry.raw("details", &messages[at.message][at.start..at.end]);
            }
        }
    }
    out.push(']');
    out
}

/// The messages a summary may fold (an earlier summary of ours, `0`, and each turn's), each
/// by its iteration, as `store::originals` keeps them.
pub fn originals(conversation: &Conversation, messages: &[String]) -> String {
    let mut out = String::from("[");
    if let Some(earlier) = &conversation.earlier {
        push_pair(&mut out, 0, &messages[earlier.message]);
    }
    for turn in &conversation.turns {
        for message in &messages[turn.messages.clone()] {
            push_pair(&mut out, turn.iteration, message);
        }
    }
    out.push(']');
    out
}

/// `args` when it is JSON text, else `{}`.
fn args_json(args: &str) -> &str {
    if crate::core::json::scan::document(args).is_ok() {
        args
    } else {
        "{}"
    }
}

/// A tool entry [`tool_log`] wrote (or the core left in its place: a cleared `details`), as the
/// front reads it back.
pub struct ToolEntry<'a> {
    /// The call's id.
    pub id: String,
    /// Its turn's iteration.
    pub iteration: u32,
    /// The tool's name.
    pub name: String,
    /// Whether the result reported a failure.
    pub error: bool,
    /// The arguments' JSON text.
    pub args: &'a str,
    /// The result's body, when the call has one.
    pub details: Option<&'a str>,
}

impl<'a> ToolEntry<'a> {
    /// The entry whose JSON text is `entry`.
    pub fn read(entry: &'a str) -> Self {
        let text = |name| {
            field(entry, name)
                .and_then(string)
                .unwrap_or_default()
                .into_owned()
        };
        ToolEntry {
            id: text("id"),
            iteration: field(entry, "iteration")
                .and_then(|n| n.parse().ok())
                .unwrap_or(0),
            name: text("type"),
            error: text("status") == "error",
            args: field(entry, "args").unwrap_or("{}"),
            details: field(entry, "details"),
        }
    }

    /// Every entry of `tools` (the tool log's JSON text).
    pub fn all(tools: &'a str) -> Vec<Self> {
        array_document(tools)
            .unwrap_or_default()
            .into_iter()
            .map(ToolEntry::read)
            .collect()
    }
}
