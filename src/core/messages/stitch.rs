//! A list given again from its start. An app that keeps its own list whole and sends what
//! `compact` returned for one request only (the AI SDK's `prepareStep`, and its own history
//! across calls in `ai` 7) gives, at the next step, the list it gave last time and what came
//! after it. The front then works on the list it returned last time followed by that tail, so
//! that no turn is cleared or folded twice. A list that begins with what the last compaction
//! returned is worked on as it is, and stands, in the app's own terms, for what that compaction
//! was given followed by the same tail: a compaction of it is remembered in those terms, so the
//! app's own history, given next, is recognised too. Any other list is taken as it is.
//!
//! What the last compaction was given is remembered by the hash of each message's exact JSON
//! and what it gave as messages of that list or written by it ([`Out`]): a record small enough
//! to be stored ([`LastCompaction::text`]), so that it holds across reloads.

use crate::core::json::write::to_json;
use crate::core::log::text_hash::text_hash;
use crate::core::messages::rebuild::Out;
use crate::core::store::originals::{pairs, push_pair};

/// The hash a message is known by: that of its exact JSON text.
fn message_hash(json: &str) -> String {
    text_hash(Some(json))
}

/// A list given, as the front works on it (see [`LastCompaction::stitch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stitched {
    /// The list to work on.
    pub working: Vec<String>,
    /// Whether the list to work on is made of the list given as `to_app` says (each message
    /// one of its own, or one the last compaction wrote); else it is that list itself.
    pub made: bool,
    /// Each message of the list to work on as a message of the app's own list (`app`) or one
    /// a compaction wrote.
    pub to_app: Vec<Out>,
    /// The hash of each message of the list in the app's own terms.
    app: Vec<String>,
}

/// What the last compaction that changed a list was given (the hash of each message, in the
/// app's own terms), and the list it gave back, over it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LastCompaction {
    given: Vec<String>,
    gave: Vec<Out>,
}

impl LastCompaction {
    /// The list to work on: what the last compaction gave, then `messages` after what it was
    /// given, when `messages` begins with that; else `messages` itself — in the app's own
    /// terms what the last compaction was given, then the rest, where `messages` begins with
    /// what it gave.
    pub fn stitch(&self, messages: Vec<String>) -> Stitched {
        let mut app: Vec<String> = Vec::with_capacity(messages.len());
        for json in &messages {
            app.push(message_hash(json));
        }
        let (n, m, len) = (self.given.len(), self.gave.len(), messages.len());
        let made = n > 0 && app.starts_with(&self.given);
        let gave_first = !made
            && m > 0
            && len >= m
            && self.gave.iter().zip(&app).all(|(out, hash)| match out {
                Out::Keep(index) => self.given[*index] == *hash,
                Out::New(json) => message_hash(json) == *hash,
            });
        // The messages of the list given that what the last compaction gave stands for, and
        // where the rest stand in the app's list.
        let (skip, base) = match (made, gave_first) {
            (true, _) => (n, n),
            (_, true) => {
                let rest = app.split_off(m);
                app.clone_from(&self.given);
                app.extend(rest);
                (m, n)
            }
            _ => (0, 0),
        };
        let mut to_app = match skip {
            0 => Vec::new(),
            _ => self.gave.clone(),
        };
        for k in 0..len - skip {
            to_app.push(Out::Keep(base + k));
        }
        let working = match made {
            false => messages,
            true => (to_app.iter())
                .map(|out| match out {
                    Out::Keep(index) => messages[*index].clone(),
                    Out::New(json) => json.clone(),
                })
                .collect(),
        };
        Stitched {
            working,
            made,
            to_app,
            app,
        }
    }

    /// A compaction of `stitched`'s list to work on gave `outs` over it.
    pub fn record(&mut self, stitched: &Stitched, outs: &[Out]) {
        self.gave.clear();
        for out in outs {
            self.gave.push(match out {
                Out::Keep(index) => stitched.to_app[*index].clone(),
                Out::New(json) => Out::New(json.clone()),
            });
        }
        self.given.clone_from(&stitched.app);
    }

    /// The record as the text stored: `store::originals`' pairs, `[0, hash]` for each hash,
    /// then `[1, index]` for each message given back that is one of the app's, `[2, message]`
    /// for one written.
    pub fn text(&self) -> String {
        let mut out = String::from("[");
        for hash in &self.given {
            let mut quoted = String::from("\"");
            quoted.push_str(hash);
            quoted.push('"');
            push_pair(&mut out, 0, &quoted);
        }
        for given_back in &self.gave {
            match given_back {
                Out::Keep(index) => push_pair(&mut out, 1, &to_json(&(*index as u32))),
                Out::New(json) => push_pair(&mut out, 2, json),
            }
        }
        out.push(']');
        out
    }

    /// The record [`LastCompaction::text`] wrote as `text`; none (every list taken as it is)
    /// when it does not read.
    pub fn read(text: &str) -> LastCompaction {
        let mut last = LastCompaction::default();
        for (kind, item) in pairs(text) {
            let index = item.parse::<u32>().ok().map(|i| i as usize);
            match (kind, index.filter(|i| *i < last.given.len())) {
                (0, _) => last.given.push(item.trim_matches('"').to_owned()),
                (1, Some(index)) => last.gave.push(Out::Keep(index)),
                (2, _) => last.gave.push(Out::New(item.to_owned())),
                _ => return LastCompaction::default(),
            }
        }
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages as JSON texts, one for each name.
    fn texts(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| format!("{{\"m\":\"{n}\"}}")).collect()
    }

    fn new(name: &str) -> Out {
        Out::New(texts(&[name]).remove(0))
    }

    #[test]
    fn a_list_given_again_works_on_what_was_given_back_and_its_tail() {
        let mut last = LastCompaction::default();
        let ab = last.stitch(texts(&["a", "b"]));
        assert_eq!((ab.working, ab.made), (texts(&["a", "b"]), false));
        let abc = last.stitch(texts(&["a", "b", "c"]));
        // Given a, b, c; gave a and a summary S.
        last.record(&abc, &[Out::Keep(0), new("S")]);
        let grown = last.stitch(texts(&["a", "b", "c", "d"]));
        assert_eq!(grown.working, texts(&["a", "S", "d"]));
        assert!(grown.made);
        assert_eq!(grown.to_app, vec![Out::Keep(0), new("S"), Out::Keep(3)]);
        // The list it gave back, grown, is worked on as it is, and stands for the app's list:
        // a compaction of it (a clearing of d into D) is remembered in the app's terms.
        let returned = last.stitch(texts(&["a", "S", "d"]));
        assert_eq!(
            (returned.working.clone(), returned.made),
            (texts(&["a", "S", "d"]), false)
        );
        last.record(&returned, &[Out::Keep(0), Out::Keep(1), new("D")]);
        let history = last.stitch(texts(&["a", "b", "c", "d", "e"]));
        assert_eq!(history.working, texts(&["a", "S", "D", "e"]));
        // The record read back from its text stitches the same (a reload).
        let again = LastCompaction::read(&last.text());
        assert_eq!(again, last);
        assert_eq!(again.stitch(texts(&["a", "b", "c", "d", "e"])), history);
        // Another list is taken as it is.
        let other = last.stitch(texts(&["a", "x", "c", "d"]));
        assert_eq!(
            (other.working, other.made),
            (texts(&["a", "x", "c", "d"]), false)
        );
        // A record that does not read is none: an index past the hashes, a kind of its own.
        for junk in ["[[0,\"h\"],[1,7]]", "[[1,0]]", "[[3,{}]]"] {
            assert_eq!(
                LastCompaction::read(junk),
                LastCompaction::default(),
                "{junk}"
            );
        }
    }
}
