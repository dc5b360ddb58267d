//! The entries of the execution and tool-activity logs: what the package reads from them,
//! and the records it writes when the app appends through it.
//!
//! Entries may have been written by other code (the app itself, an older version, another
//! tab). They are kept as their stored text ([`Stored`]); the views below read the fields the
//! package needs, leniently: any field may be absent or of another type.

use std::borrow::Cow;

use serde::de::DeserializeSeed;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

use crate::core::stored_entry::{
    decode_string, field_bool, field_iteration, field_text, object_field, EntryView, Key, Stored,
};

/// Deserializes a field that is present, keeping an explicit `null` as `Some(Value::Null)`
/// so that it is written back as `null` rather than dropped.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

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
        if !text.starts_with('{') {
            return EntryFacts::default();
        }
        let mut reader = serde_json::Deserializer::from_str(text);
        FactsSeed { text }
            .deserialize(&mut reader)
            .unwrap_or_default()
    }

    fn take(&mut self, text: &str, slot: Slot, value: &RawValue) {
        let json = value.get();
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

/// Reads [`EntryFacts`] from an entry's text in one pass: every value is captured as its JSON
/// text, borrowed, and only the facts are decoded.
struct FactsSeed<'a> {
    text: &'a str,
}

impl<'de> serde::de::DeserializeSeed<'de> for FactsSeed<'de> {
    type Value = EntryFacts;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<EntryFacts, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for FactsSeed<'de> {
    type Value = EntryFacts;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an entry object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<EntryFacts, A::Error> {
        let mut facts = EntryFacts::default();
        // A key given twice keeps its last value, as in `JSON.parse`.
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match Slot::of_key(key.as_str()) {
                Some(slot) => {
                    let value: &RawValue = map.next_value()?;
                    facts.take(self.text, slot, value);
                }
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        facts.iteration = facts.iteration.or(facts.context_iteration);
        facts.vault_read = facts.parts.get(self.text, Part::Kind) == Some("\"vault\"")
            && facts.parts.get(self.text, Part::Action) == Some("\"read\"");
        Ok(facts)
    }
}

/// The fields of an execution entry the prompt and the summary read, as stored.
#[derive(Debug, Clone, Copy)]
pub struct ExecutionFields<'a> {
    text: &'a str,
    parts: &'a Parts,
}

impl<'a> ExecutionFields<'a> {
    fn part(&self, part: Part) -> Option<&'a str> {
        self.parts.get(self.text, part)
    }

    /// Whether the code ran without throwing, when the entry says.
    pub fn success(&self) -> Option<bool> {
        field_bool(self.part(Part::Success))
    }

    /// The code that was run (empty when absent).
    pub fn code(&self) -> Cow<'a, str> {
        field_text(self.part(Part::Code)).unwrap_or_default()
    }

    /// What the code returned, as its stored JSON (`None` when absent or `null`).
    pub fn result_json(&self) -> Option<&'a str> {
        self.part(Part::Result).filter(|json| *json != "null")
    }

    /// The error message of a failed execution: `error.message`, or `error` as text.
    pub fn error_message(&self) -> Option<String> {
        error_text(self.part(Part::Error))
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
pub struct ToolFields<'a> {
    text: &'a str,
    parts: &'a Parts,
}

impl<'a> ToolFields<'a> {
    fn part(&self, part: Part) -> Option<&'a str> {
        self.parts.get(self.text, part)
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

    /// Free-form details, as text.
    pub fn details(&self) -> Option<Cow<'a, str>> {
        field_text(self.part(Part::Details))
    }

    /// The error message of a failed operation.
    pub fn error_message(&self) -> Option<String> {
        error_text(self.part(Part::Error))
    }
}

/// `{ message }` or a string (its JSON), as text.
fn error_text(json: Option<&str>) -> Option<String> {
    let json = json?;
    decode_string(json).or_else(|| field_text(object_field(json, "message")).map(Cow::into_owned))
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
    fn read(raw: &RawValue) -> Self {
        ExecutionEntry {
            facts: EntryFacts::read(raw.get()),
        }
    }
}

impl EntryView for ToolActivityEntry {
    fn read(raw: &RawValue) -> Self {
        ToolActivityEntry {
            facts: EntryFacts::read(raw.get()),
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
        ExecutionFields {
            text: self.json(),
            parts: &self.facts.parts,
        }
    }
}

impl Stored<ToolActivityEntry> {
    /// The fields the prompt and the summary read, located when the entry was read.
    pub fn fields(&self) -> ToolFields<'_> {
        ToolFields {
            text: self.json(),
            parts: &self.facts.parts,
        }
    }
}

/// A stored execution entry.
pub type StoredExecution = Stored<ExecutionEntry>;
/// A stored tool entry.
pub type StoredToolActivity = Stored<ToolActivityEntry>;
/// A stored reasoning entry.
pub type StoredReasoning = Stored<String>;

/// The execution entry `appendExecution` writes: the app's fields, stamped.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewExecution {
    /// Unique id, `exec_…`.
    pub id: String,
    /// ISO-8601 time of the append.
    pub timestamp: String,
    /// The iteration it belongs to.
    pub iteration: u32,
    /// Whether the code ran without throwing.
    pub success: bool,
    /// The code that was run.
    pub code: String,
    /// What the code returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// `{ message }` when the code threw, else `null`.
    pub error: Value,
    /// Run time in milliseconds, written as JavaScript writes it (`3`, not `3.0`).
    pub execution_time: Number,
    /// Who ran it.
    pub source: String,
    /// Free-form data of the app.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Any further fields of the input.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The tool entry `appendToolActivity` writes: the app's fields, stamped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewToolActivity {
    /// Unique id, `tool_…`.
    pub id: String,
    /// ISO-8601 time of the append.
    pub timestamp: String,
    /// The iteration it belongs to.
    pub iteration: u32,
    /// The kind of tool.
    #[serde(rename = "type")]
    pub kind: String,
    /// What the tool did.
    pub action: String,
    /// How it ended.
    pub status: String,
    /// Free-form details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Any further fields of the input.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The fields the store stamps on every appended entry; an input's own copies give way, so an
/// entry read back and appended again is not stored with two `id`s.
pub const STAMPED_FIELDS: [&str; 3] = ["id", "timestamp", "iteration"];

/// `extra` without the fields the store stamps itself.
pub fn without_stamped(mut extra: Map<String, Value>) -> Map<String, Value> {
    for field in STAMPED_FIELDS {
        extra.remove(field);
    }
    extra
}

/// What an app passes to `appendExecution`; the store adds id, timestamp and iteration.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionInput {
    /// Whether the code ran without throwing.
    pub success: bool,
    /// The code that was run.
    pub code: String,
    /// What the code returned.
    #[serde(default, deserialize_with = "present")]
    pub result: Option<Value>,
    /// The error: `{ message }`, a plain string, or `null`.
    #[serde(default, deserialize_with = "present")]
    pub error: Option<Value>,
    /// Run time in milliseconds (0 when not given).
    #[serde(default)]
    pub execution_time: Option<f64>,
    /// Who ran it; `"auto"` when not given.
    #[serde(default)]
    pub source: Option<String>,
    /// Free-form data of the app.
    #[serde(default, deserialize_with = "present")]
    pub metadata: Option<Value>,
    /// Any further fields, stored as given.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What an app passes to `appendToolActivity`; the store adds id, timestamp and iteration.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
pub struct ToolActivityInput {
    /// The kind of tool.
    #[serde(rename = "type")]
    pub kind: String,
    /// What the tool did.
    pub action: String,
    /// How it ended.
    pub status: String,
    /// Free-form details.
    #[serde(default, deserialize_with = "present")]
    pub details: Option<Value>,
    /// Any further fields, stored as given.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A JSON number for `value` that is written as an integer when it is one, as JavaScript does.
pub fn js_number(value: f64) -> Number {
    if value.fract() == 0.0 && value.abs() < 9_007_199_254_740_992.0 {
        Number::from(value as i64)
    } else {
        Number::from_f64(value).unwrap_or_else(|| Number::from(0))
    }
}

/// Normalises an execution error to the stored shape: `{ "message": … }` or `null`.
pub fn normalise_error(error: Option<Value>) -> Value {
    match error {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(message)) => serde_json::json!({ "message": message }),
        Some(other) => other,
    }
}

#[cfg(test)]
mod tests;
