//! The list to send after a compaction: the lead, the summary message where the shape expects
//! it, then the turns the summary did not cover, each message the app's own except where a
//! result's body was cleared (its placeholder spliced in, every other byte kept).

use crate::core::messages::conversation::{Conversation, Turn};
use crate::core::messages::logs::ToolEntry;
use crate::core::messages::shape::Shape;
use crate::core::messages::wording::in_turns;
use crate::core::messages::write::user_message;
use crate::core::order::sort::sort_by_key;

/// One message of the list to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Out {
    /// The app's own message at this index, unchanged.
    Keep(usize),
    /// A message written now, as JSON text.
    New(String),
}

/// What the core left in the logs after a compaction, as the rebuild reads it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Compacted {
    /// The summary entry at the head of the reasoning log, and the last iteration it covers.
    pub summary: Option<(String, u32)>,
    /// The iteration and the `details` of each tool entry, in the log's order: a turn's calls
    /// are its iteration's entries in order (told apart by position, never by an id two calls
    /// may share).
    pub details: Vec<(u32, Option<String>)>,
}

impl Compacted {
    /// The summary the compaction of `conversation` wrote, and the last iteration it covers:
    /// the one at the head of the logs unless it is the list's own earlier summary.
    pub fn new_summary(&self, conversation: &Conversation) -> Option<(&str, u32)> {
        let earlier = conversation.earlier.as_ref().map(|e| e.last);
        self.summary
            .as_ref()
            .filter(|(_, last)| Some(*last) != earlier)
            .map(|(entry, last)| (entry.as_str(), *last))
    }

    /// The iteration and `details` of each of `tools`.
    pub fn details_of(tools: &[ToolEntry<'_>]) -> Vec<(u32, Option<String>)> {
        (tools.iter())
            .map(|tool| (tool.iteration, tool.details.map(str::to_owned)))
            .collect()
    }
}

/// The list to send: `messages` as `conversation` read them, after the compaction that left
/// `compacted`.
pub fn rebuild(
    shape: Shape,
    conversation: &Conversation,
    messages: &[String],
    compacted: &Compacted,
) -> Vec<Out> {
    let earlier = conversation.earlier.as_ref().map(|e| e.message);
    let written = compacted.new_summary(conversation);
    let mut out: Vec<Out> = Vec::with_capacity(messages.len());
    for index in conversation.lead.clone() {
        if written.is_none() || Some(index) != earlier {
            out.push(Out::Keep(index));
        }
    }
    if let Some((entry, _)) = written {
        out.push(Out::New(user_message(shape, &in_turns(entry))));
    }
    for turn in &conversation.turns {
        if written.is_none_or(|(_, last)| turn.iteration > last) {
            out.extend(rebuild_turn(turn, messages, compacted));
        }
    }
    out
}

/// The messages of `turn`, each the app's own but where a result's body in `compacted` is no
/// longer the one the message holds (its new body spliced in).
pub fn rebuild_turn(turn: &Turn, messages: &[String], compacted: &Compacted) -> Vec<Out> {
    let mut bodies = (compacted.details.iter()).filter(|(n, _)| *n == turn.iteration);
    let mut splices: Vec<(usize, usize, usize, &str)> = Vec::new();
    for call in &turn.calls {
        let now = bodies.next().and_then(|(_, body)| body.as_deref());
        if let (Some(at), Some(body)) = (call.result, now) {
            if *body != messages[at.message][at.start..at.end] {
                splices.push((at.message, at.start, at.end, body));
            }
        }
    }
    (turn.messages.clone())
        .map(|index| {
            let mine = splices.iter().filter(|splice| splice.0 == index);
            let mine = mine
                .map(|&(_, start, end, body)| (start, end, body))
                .collect();
            spliced(index, &messages[index], mine)
        })
        .collect()
}

/// Message `index` with each `(start, end, body)` of `splices` in place of its bytes.
fn spliced(index: usize, text: &str, mut splices: Vec<(usize, usize, &str)>) -> Out {
    if splices.is_empty() {
        return Out::Keep(index);
    }
    sort_by_key(&mut splices, |(start, _, _)| *start);
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end, body) in splices {
        out.push_str(&text[copied..start]);
        out.push_str(body);
        copied = end;
    }
    out.push_str(&text[copied..]);
    Out::New(out)
}
