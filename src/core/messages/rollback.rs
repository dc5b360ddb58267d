//! A compaction of a list undone. Once the core has put an archive back into the logs
//! (`Compactor::rollback`), the list is read back from them: the lead without a summary message
//! the logs no longer hold (an older one they hold again comes back), each turn the list still
//! has as the app's own messages with every restored body spliced back in, and each turn the
//! summary had folded made again from its entries (the user's words, the model's words and
//! calls, the results as the app gave them; fields of those messages the logs do not keep are
//! not restored: a call's `thoughtSignature` is the one Gemini documents for history it did
//! not write, `write::REBUILT_SIGNATURE`); a turn's results in one message where the shape
//! requires it.

use crate::core::log::iteration::{named_iteration, parse_summary_header};
use crate::core::messages::conversation::Conversation;
use crate::core::messages::logs::{ToolEntry, CALLED, USER_WROTE};
use crate::core::messages::rebuild::{rebuild_turn, Compacted, Out};
use crate::core::messages::shape::Shape;
use crate::core::messages::write::{
    model_message, result_part, results_message, user_message, CallOut,
};

/// The list after the rollback of the compaction of `messages` (read as `conversation`): the
/// logs hold `reasoning` and `tools` (the tool log's JSON text) again.
pub fn rolled_back(
    shape: Shape,
    conversation: &Conversation,
    messages: &[String],
    reasoning: &[String],
    tools: &str,
) -> Vec<Out> {
    let entries = ToolEntry::all(tools);
    let compacted = Compacted {
        summary: None,
        details: Compacted::details_of(&entries),
    };
    let earlier = conversation.earlier.as_ref().map(|e| e.message);
    let mut out: Vec<Out> = conversation
        .lead
        .clone()
        .filter(|index| Some(*index) != earlier)
        .map(Out::Keep)
        .collect();
    for entry in reasoning {
        if parse_summary_header(entry).is_some() {
            out.push(Out::New(user_message(shape, entry)));
            continue;
        }
        let Some(n) = named_iteration(entry) else {
            continue;
        };
        match conversation.turns.iter().find(|turn| turn.iteration == n) {
            Some(turn) => out.extend(rebuild_turn(turn, messages, &compacted)),
            None => out.extend(turn_again(shape, n, entry, &entries)),
        }
    }
    out
}

/// The messages of turn `n` made again from its reasoning entry and its tool entries.
fn turn_again(shape: Shape, n: u32, entry: &str, tools: &[ToolEntry<'_>]) -> Vec<Out> {
    let mut out = Vec::new();
    let mut said: Vec<&str> = Vec::new();
    for line in entry.lines().skip(1) {
        if let Some(words) = line.strip_prefix(USER_WROTE) {
            out.push(Out::New(user_message(shape, words)));
        } else if !(line.starts_with(CALLED) && line.contains(" (call ")) {
            said.push(line);
        }
    }
    let mine: Vec<&ToolEntry<'_>> = tools.iter().filter(|t| t.iteration == n).collect();
    let calls: Vec<CallOut<'_>> = mine
        .iter()
        .map(|t| CallOut {
            id: &t.id,
            name: &t.name,
            args: t.args,
        })
        .collect();
    out.push(Out::New(model_message(shape, &said.join("\n"), &calls)));
    // OpenAI's results are messages of their own; the other shapes answer in one message.
    let mut parts = String::new();
    for t in mine {
        let Some(body) = t.details else { continue };
        let part = result_part(shape, &t.id, &t.name, body, t.error);
        if shape == Shape::OpenAi {
            out.push(Out::New(part));
            continue;
        }
        if !parts.is_empty() {
            parts.push(',');
        }
        parts.push_str(&part);
    }
    if !parts.is_empty() {
        out.push(Out::New(results_message(shape, &parts)));
    }
    out
}
