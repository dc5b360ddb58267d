//! A message list read as turns: the lead (instructions, the goal, an earlier summary of ours),
//! then one turn per model message, with the user's messages before it and the tool results
//! answering it. A turn is the core's iteration; a cut between turns never parts a call from
//! its result.

use crate::core::order::join::Joined;
use std::ops::Range;

use crate::core::log::iteration::parse_summary_header;
use crate::core::messages::shape::{MessageRead, Role, Shape};
use crate::core::messages::wording::in_iterations;

/// Where a tool result's body stands: its message and its bytes in that message's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyAt {
    /// The message's index in the list.
    pub message: usize,
    /// The body's bytes in the message's text.
    pub start: usize,
    /// The end of those bytes.
    pub end: usize,
    /// Whether the result reports a failure.
    pub error: bool,
}

/// One tool call of a turn, and where its result is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnCall {
    /// The call's id: the shape's own, or `name#iteration.k` where the shape gives none.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments' JSON text.
    pub args: String,
    /// Where its result's body is; `None` while the call awaits its result.
    pub result: Option<BodyAt>,
}

/// One model message, the user's messages before it and the results that answer it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// The core's iteration number of this turn (1 for the first turn of a new list).
    pub iteration: u32,
    /// Its messages in the list.
    pub messages: Range<usize>,
    /// What the user wrote in it, message by message.
    pub user_words: Vec<String>,
    /// What the model wrote.
    pub model_text: String,
    /// Its tool calls, in order.
    pub calls: Vec<TurnCall>,
}

/// An earlier summary of ours at the head of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Earlier {
    /// Its message's index.
    pub message: usize,
    /// The summary entry it carries, as the core wrote it.
    pub entry: String,
    /// The last iteration it covers.
    pub last: u32,
}

/// A message list read as turns.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Conversation {
    /// The messages before the first turn (instructions, the goal, an earlier summary).
    pub lead: Range<usize>,
    /// The first message of the user: the task.
    pub goal: Option<String>,
    /// An earlier summary of ours in the lead.
    pub earlier: Option<Earlier>,
    /// The turns, in order.
    pub turns: Vec<Turn>,
}

/// Why a list cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAMessage {
    /// The index of the first message that is not an object.
    pub index: usize,
}

impl Conversation {
    /// `messages` (each message's JSON text) read as a list of `shape`.
    pub fn read(shape: Shape, messages: &[String]) -> Result<Conversation, NotAMessage> {
        let mut reading = Reading::default();
        for (index, json) in messages.iter().enumerate() {
            let read = shape.read(json).ok_or(NotAMessage { index })?;
            reading.take(index, json, read);
        }
        Ok(reading.finish(messages.len()))
    }

    /// The iteration of the first turn.
    pub fn first_iteration(&self) -> u32 {
        self.earlier.as_ref().map_or(1, |e| e.last + 1)
    }
}

#[derive(Default)]
struct Reading {
    conversation: Conversation,
    /// The user's messages not yet in a turn: where they begin, and their words.
    pending: Option<(usize, Vec<String>)>,
}

impl Reading {
    fn take(&mut self, index: usize, json: &str, read: MessageRead<'_>) {
        let words = read.texts.joined("\n");
        let started = !self.conversation.turns.is_empty();
        match read.role {
            Role::Model => self.start_turn(index, &words, &read),
            Role::System if !started && self.pending.is_none() => {}
            _ if !started && self.pending.is_none() && read.results.is_empty() => {
                self.take_lead(index, words)
            }
            _ => {
                // A tool message answers the turn's calls even when it holds no result (an
                // approval answered: the result comes in the next one).
                let answers =
                    !read.results.is_empty() || (read.role == Role::Tool && self.pending.is_none());
                if answers && started {
                    self.answer(index, json, &read);
                    if !words.trim().is_empty() {
                        if let Some(turn) = self.conversation.turns.last_mut() {
                            turn.user_words.push(words);
                        }
                    }
                } else {
                    let pending = self.pending.get_or_insert((index, Vec::new()));
                    if !words.trim().is_empty() {
                        pending.1.push(words);
                    }
                }
            }
        }
    }

    /// A user message before the first turn: the goal, an earlier summary of ours, or the
    /// start of the first turn.
    fn take_lead(&mut self, index: usize, words: String) {
        // Ours in a list's words ("Turns 1-40"), or as the core wrote it (lists of 0.x).
        let words = in_iterations(&words).unwrap_or(words);
        if let Some((_, last)) = parse_summary_header(&words) {
            if self.conversation.earlier.is_none() {
                self.conversation.earlier = Some(Earlier {
                    message: index,
                    entry: words,
                    last,
                });
                return;
            }
        }
        if self.conversation.goal.is_none() && !words.trim().is_empty() {
            self.conversation.goal = Some(words);
            return;
        }
        self.pending = Some((index, vec![words]));
    }

    fn start_turn(&mut self, index: usize, words: &str, read: &MessageRead<'_>) {
        let (start, user_words) = self.pending.take().unwrap_or((index, Vec::new()));
        let iteration = self.conversation.first_iteration()
            + u32::try_from(self.conversation.turns.len()).unwrap_or(u32::MAX - 1);
        if let Some(last) = self.conversation.turns.last_mut() {
            last.messages.end = start;
        }
        let calls = read
            .calls
            .iter()
            .enumerate()
            .map(|(k, call)| TurnCall {
                id: call
                    .id
                    .as_deref()
                    .map_or_else(|| format!("{}#{iteration}.{k}", call.name), str::to_owned),
                name: call.name.clone().into_owned(),
                args: call.args.to_owned(),
                result: None,
            })
            .collect();
        self.conversation.turns.push(Turn {
            iteration,
            messages: start..index + 1,
            user_words,
            model_text: words.to_owned(),
            calls,
        });
    }

    /// The results of `read` (message `index`) given to the calls of the last turn: by id to
    /// the first call of that id without a result (two calls may have one id), or, where the
    /// result names no call, by name to the first call of that name without a result.
    fn answer(&mut self, index: usize, json: &str, read: &MessageRead<'_>) {
        let Some(turn) = self.conversation.turns.last_mut() else {
            return;
        };
        turn.messages.end = index + 1;
        for result in &read.results {
            // A result that names its call answers the first call of that id still without one
            // (never a call of another id); one that names none, by the tool's name.
            let at = match result.call_id.as_deref() {
                Some(id) => (turn.calls.iter()).position(|c| c.result.is_none() && c.id == id),
                None => turn.calls.iter().position(|c| {
                    c.result.is_none() && result.name.as_deref().is_none_or(|n| n == c.name)
                }),
            };
            let (Some(at), Some(body)) = (at, result.body) else {
                continue;
            };
            let start = body.as_ptr() as usize - json.as_ptr() as usize;
            turn.calls[at].result = Some(BodyAt {
                message: index,
                start,
                end: start + body.len(),
                error: result.error,
            });
        }
    }

    fn finish(mut self, length: usize) -> Conversation {
        if let Some(last) = self.conversation.turns.last_mut() {
            last.messages.end = length;
        }
        let lead_end = self.conversation.turns.first();
        self.conversation.lead = 0..lead_end.map_or(length, |first| first.messages.start);
        self.conversation
    }
}

#[cfg(test)]
mod tests;
