//! The entries of the execution and tool-activity logs: what the package reads from them,
//! and the records it writes when the app appends through it.
//!
//! Entries may have been written by other code (the app itself, an older version, another
//! tab). They are kept as their stored text ([`Stored`]); the views below read the fields the
//! package needs, leniently: any field may be absent or of another type.

use crate::core::order::text_search::TextSearch;
use std::borrow::Cow;

use crate::core::log::stored_entry::{
    decode_string, field_bool, field_text, object_field, EntryView, Stored,
};

pub use crate::core::log::entry_facts::{EntryFacts, Part, Parts};
pub(crate) use crate::core::log::new_entries::{
    js_number, normalise_error, NewExecution, NewToolActivity,
};
pub use crate::core::log::new_entries::{ExecutionInput, ToolActivityInput, STAMPED_FIELDS};

/// An entry's stored text and where its parts stand in it: what both field readers read.
#[derive(Debug, Clone, Copy)]
struct Located<'a> {
    text: &'a str,
    parts: &'a Parts,
}

impl<'a> Located<'a> {
    fn of<V: EntryView + HasFacts>(entry: &'a Stored<V>) -> Self {
        Located {
            text: entry.json(),
            parts: &entry.facts().parts,
        }
    }

    fn part(&self, part: Part) -> Option<&'a str> {
        self.parts.get(self.text, part)
    }

    /// `error.message`, or `error` as text.
    fn error_message(&self) -> Option<String> {
        let json = self.part(Part::Error)?;
        decode_string(json)
            .or_else(|| field_text(object_field(json, "message")).map(Cow::into_owned))
    }
}

/// The fields of an execution entry the prompt and the summary read, as stored.
#[derive(Debug, Clone, Copy)]
pub struct ExecutionFields<'a>(Located<'a>);

impl<'a> ExecutionFields<'a> {
    fn part(&self, part: Part) -> Option<&'a str> {
        self.0.part(part)
    }

    /// Whether the code ran without throwing, when the entry says.
    pub fn success(&self) -> Option<bool> {
        field_bool(self.part(Part::Success))
    }

    /// The code that was run (empty when absent).
    pub fn code(&self) -> Cow<'a, str> {
        field_text(self.part(Part::Code)).unwrap_or_default()
    }

    /// The entry's stored text without its code: what the run gave back and what the app
    /// recorded around it, not the agent's own words.
    pub fn without_code(&self) -> Cow<'a, str> {
        match self.part(Part::Code) {
            Some(code) => Cow::Owned(self.0.text.replace_text(code, "\"\"", 1)),
            None => Cow::Borrowed(self.0.text),
        }
    }

    /// What the code returned, as its stored JSON (`None` when absent or `null`).
    pub(crate) fn result_json(&self) -> Option<&'a str> {
        self.part(Part::Result).filter(|json| *json != "null")
    }

    /// The error message of a failed execution: `error.message`, or `error` as text.
    pub fn error_message(&self) -> Option<String> {
        self.0.error_message()
    }

    /// The run time in milliseconds, as stored.
    pub fn execution_time(&self) -> Option<&'a str> {
        self.part(Part::ExecutionTime)
    }

    /// Who ran it (`"auto"`, `"manual"`, …).
    pub fn source(&self) -> Option<Cow<'a, str>> {
        field_text(self.part(Part::Source))
    }

    /// `metadata.task`, when the app names the task.
    pub fn task(&self) -> Option<String> {
        decode_string(object_field(self.part(Part::Metadata)?, "task")?)
    }
}

/// The fields of a tool entry the prompt and the summary read, as stored.
#[derive(Debug, Clone, Copy)]
pub struct ToolFields<'a>(Located<'a>);

impl<'a> ToolFields<'a> {
    fn part(&self, part: Part) -> Option<&'a str> {
        self.0.part(part)
    }

    /// The kind of tool (`"vfs"`, `"vault"`, `"js_execute"`, …).
    pub fn kind(&self) -> Option<Cow<'a, str>> {
        field_text(self.part(Part::Kind))
    }

    /// What the tool did (`"write"`, `"read"`, `"auto_run"`, …).
    pub fn action(&self) -> Option<Cow<'a, str>> {
        field_text(self.part(Part::Action))
    }

    /// How it ended (`"success"`, `"error"`, …).
    pub fn status(&self) -> Option<Cow<'a, str>> {
        field_text(self.part(Part::Status))
    }

    /// Whether it succeeded, as its `status` says: `success`, `ok`, `done` or `completed` is a
    /// success, `error`, `failed` or `failure` a failure; any other status (or none) says
    /// neither.
    pub fn outcome(&self) -> Option<bool> {
        match &*self.status()? {
            "success" | "ok" | "done" | "completed" => Some(true),
            "error" | "failed" | "failure" => Some(false),
            _ => None,
        }
    }

    /// Free-form details, as text.
    pub fn details(&self) -> Option<Cow<'a, str>> {
        field_text(self.part(Part::Details))
    }

    /// The error message of a failed operation.
    pub fn error_message(&self) -> Option<String> {
        self.0.error_message()
    }
}

/// A view that knows its entry's [`EntryFacts`].
pub trait HasFacts {
    /// Id, timestamp and stated iteration.
    fn facts(&self) -> &EntryFacts;
}

/// One code execution of the reasoning loop (`gdrs_execution_log`), as placed: its facts; the
/// other fields are read on demand (`Stored::fields`).
#[derive(Debug, Clone, Default)]
pub struct ExecutionEntry {
    /// Id, timestamp and stated iteration.
    pub facts: EntryFacts,
}

/// One tool operation of the reasoning loop (`gdrs_tool_activity_log`), as placed.
#[derive(Debug, Clone, Default)]
pub struct ToolActivityEntry {
    /// Id, timestamp and stated iteration.
    pub facts: EntryFacts,
}

impl EntryView for ExecutionEntry {
    fn read(json: &str) -> Self {
        ExecutionEntry {
            facts: EntryFacts::read(json),
        }
    }
}

impl EntryView for ToolActivityEntry {
    fn read(json: &str) -> Self {
        ToolActivityEntry {
            facts: EntryFacts::read(json),
        }
    }
}

impl HasFacts for ExecutionEntry {
    fn facts(&self) -> &EntryFacts {
        &self.facts
    }
}

impl HasFacts for ToolActivityEntry {
    fn facts(&self) -> &EntryFacts {
        &self.facts
    }
}

impl ExecutionEntry {
    /// The iteration this entry names itself: `iteration`, else `context.iteration`.
    pub fn stated_iteration(&self) -> Option<u32> {
        self.facts.iteration
    }
}

impl ToolActivityEntry {
    /// The iteration this entry names itself: `iteration`, else `context.iteration`.
    pub fn stated_iteration(&self) -> Option<u32> {
        self.facts.iteration
    }
}

impl Stored<ExecutionEntry> {
    /// The fields the prompt and the summary read, located when the entry was read.
    pub fn fields(&self) -> ExecutionFields<'_> {
        ExecutionFields(Located::of(self))
    }
}

impl Stored<ToolActivityEntry> {
    /// The fields the prompt and the summary read, located when the entry was read.
    pub fn fields(&self) -> ToolFields<'_> {
        ToolFields(Located::of(self))
    }
}

/// A stored execution entry.
pub(crate) type StoredExecution = Stored<ExecutionEntry>;
/// A stored tool entry.
pub(crate) type StoredToolActivity = Stored<ToolActivityEntry>;
/// A stored reasoning entry.
pub(crate) type StoredReasoning = Stored<String>;

#[cfg(test)]
mod tests;
