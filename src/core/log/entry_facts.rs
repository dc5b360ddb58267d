//! What the package reads from an entry in one pass over its text: id, timestamp, iteration,
//! whether it is a vault read, and where each field the prompt needs sits in the text.

use std::borrow::Cow;

use crate::core::json::scan::members;
use crate::core::log::stored_entry::{field_iteration, field_text, object_field};

/// A field the prompt and the summary read, located in the entry's text when it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// `success`.
    Success,
    /// `code`.
    Code,
    /// `result`.
    Result,
    /// `error`.
    Error,
    /// `executionTime`.
    ExecutionTime,
    /// `source`.
    Source,
    /// `metadata`.
    Metadata,
    /// `type`.
    Kind,
    /// `action`.
    Action,
    /// `status`.
    Status,
    /// `details`.
    Details,
}

const PARTS: usize = 11;

impl Part {
    /// The fields of an execution entry the app gives (`ExecutionInput`), in the order written.
    pub const EXECUTION: [Part; 7] = [
        Part::Success,
        Part::Code,
        Part::Result,
        Part::Error,
        Part::ExecutionTime,
        Part::Source,
        Part::Metadata,
    ];

    /// The fields of a tool entry the app gives (`ToolActivityInput`), in the order written.
    pub const TOOL_ACTIVITY: [Part; 4] = [Part::Kind, Part::Action, Part::Status, Part::Details];

    /// The names of [`Part::EXECUTION`].
    pub const EXECUTION_NAMES: [&'static str; 7] = names(Part::EXECUTION);
    /// The names of [`Part::TOOL_ACTIVITY`].
    pub const TOOL_ACTIVITY_NAMES: [&'static str; 4] = names(Part::TOOL_ACTIVITY);

    /// The field's JSON name: the one place it is spelled.
    pub const fn name(self) -> &'static str {
        match self {
            Part::Success => "success",
            Part::Code => "code",
            Part::Result => "result",
            Part::Error => "error",
            Part::ExecutionTime => "executionTime",
            Part::Source => "source",
            Part::Metadata => "metadata",
            Part::Kind => "type",
            Part::Action => "action",
            Part::Status => "status",
            Part::Details => "details",
        }
    }

    /// The part named `key`: a match on the names (a search through `name()` made every
    /// append 10% slower, reading each entry's keys), tied to `name()` by a test.
    fn of_key(key: &str) -> Option<Part> {
        Some(match key {
            "success" => Part::Success,
            "code" => Part::Code,
            "result" => Part::Result,
            "error" => Part::Error,
            "executionTime" => Part::ExecutionTime,
            "source" => Part::Source,
            "metadata" => Part::Metadata,
            "type" => Part::Kind,
            "action" => Part::Action,
            "status" => Part::Status,
            "details" => Part::Details,
            _ => return None,
        })
    }
}

/// The names of `parts`, worked out when the crate is compiled.
const fn names<const N: usize>(parts: [Part; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = parts[i].name();
        i += 1;
    }
    out
}

/// Where the [`Part`]s of an entry stand in its text (byte ranges of their JSON values).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parts([Option<(u32, u32)>; PARTS]);

impl Parts {
    /// The JSON of `part` in `text` (the entry's text these parts were located in).
    pub fn get<'a>(&self, text: &'a str, part: Part) -> Option<&'a str> {
        let (start, end) = self.0[part as usize]?;
        text.get(start as usize..end as usize)
    }
}

/// What identifies an entry, places it in time and locates its parts, read in one pass when
/// the log is read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EntryFacts {
    /// `id` as text.
    pub id: Option<String>,
    /// `timestamp` as text.
    pub timestamp: Option<String>,
    /// `iteration`, else `context.iteration`.
    pub iteration: Option<u32>,
    /// Whether the entry has an `iteration` field of its own.
    pub has_iteration: bool,
    /// Whether it is a tool entry `{ type: "vault", action: "read" }`.
    pub vault_read: bool,
    /// Where the other fields the package reads stand.
    pub parts: Parts,
    /// `context.iteration`, which `iteration` overrides.
    context_iteration: Option<u32>,
}

impl EntryFacts {
    /// The facts of the entry whose stored JSON is `text`; an entry that is not an object (or
    /// has a key that is not valid text) has none.
    pub fn read(text: &str) -> Self {
        let Some(fields) = members(text) else {
            return EntryFacts::default();
        };
        let mut facts = EntryFacts::default();
        // A key given twice keeps its last value, as in `JSON.parse`.
        for (key, value) in fields {
            if let Some(slot) = Slot::of_key(&key) {
                facts.take(text, slot, value);
            }
        }
        facts.iteration = facts.iteration.or(facts.context_iteration);
        facts.vault_read = facts.parts.get(text, Part::Kind) == Some("\"vault\"")
            && facts.parts.get(text, Part::Action) == Some("\"read\"");
        facts
    }

    /// `iteration`, else `context.iteration`, of the entry whose stored JSON is `text`: what
    /// [`EntryFacts::read`] gives as `iteration`, without reading the other fields.
    pub fn stated_iteration(text: &str) -> Option<u32> {
        let mut facts = EntryFacts::default();
        for (key, value) in members(text)? {
            if let Some(slot @ (Slot::Iteration | Slot::Context)) = Slot::of_key(&key) {
                facts.take(text, slot, value);
            }
        }
        facts.iteration.or(facts.context_iteration)
    }

    fn take(&mut self, text: &str, slot: Slot, json: &str) {
        match slot {
            Slot::Id => self.id = field_text(Some(json)).map(Cow::into_owned),
            Slot::Timestamp => self.timestamp = field_text(Some(json)).map(Cow::into_owned),
            Slot::Iteration => {
                self.has_iteration = true;
                self.iteration = field_iteration(Some(json));
            }
            Slot::Context => {
                self.context_iteration = field_iteration(object_field(json, "iteration"));
            }
            Slot::Part(part) => {
                let Some(start) = offset_in(text, json) else {
                    return;
                };
                let end = start + json.len();
                if let (Ok(start), Ok(end)) = (u32::try_from(start), u32::try_from(end)) {
                    self.parts.0[part as usize] = Some((start, end));
                }
            }
        }
    }
}

/// What a key of an entry is to the package.
#[derive(Clone, Copy)]
enum Slot {
    Id,
    Timestamp,
    Iteration,
    Context,
    Part(Part),
}

impl Slot {
    fn of_key(key: &str) -> Option<Slot> {
        Some(match key {
            "id" => Slot::Id,
            "timestamp" => Slot::Timestamp,
            "iteration" => Slot::Iteration,
            "context" => Slot::Context,
            other => Slot::Part(Part::of_key(other)?),
        })
    }
}

/// Where `inner` (a slice of `text`) starts in it.
fn offset_in(text: &str, inner: &str) -> Option<usize> {
    let start = (inner.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let same = text
        .get(start..start + inner.len())
        .is_some_and(|slice| std::ptr::eq(slice, inner));
    same.then_some(start)
}

#[cfg(test)]
mod part_names {
    use super::Part;

    #[test]
    fn every_part_is_read_by_the_name_it_is_written_with() {
        for part in Part::EXECUTION.into_iter().chain(Part::TOOL_ACTIVITY) {
            assert_eq!(Part::of_key(part.name()), Some(part));
        }
        assert_eq!(
            Part::EXECUTION.len() + Part::TOOL_ACTIVITY.len(),
            super::PARTS
        );
    }
}
