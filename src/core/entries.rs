//! The entries of the execution and tool-activity logs: what the package reads from them,
//! and the records it writes when the app appends through it.
//!
//! Entries may have been written by other code (the app itself, an older version, another
//! tab). They are kept as their stored text ([`Stored`]); the views below read the fields the
//! package needs, leniently: any field may be absent or of another type.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

use super::stored_entry::{
    decode_string, field_bool, field_iteration, field_text, read_object, EntryView, Stored,
};

/// Deserializes a field that is present, keeping an explicit `null` as `Some(Value::Null)`
/// so that it is written back as `null` rather than dropped.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A field as stored: any JSON value, read on demand.
type Field = Option<Box<RawValue>>;

/// The fields of an execution entry the package reads, as stored.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecutionFields {
    id: Field,
    timestamp: Field,
    iteration: Field,
    context: Field,
    success: Field,
    code: Field,
    result: Field,
    error: Field,
    execution_time: Field,
    source: Field,
    metadata: Field,
}

/// The fields of a tool entry the package reads, as stored.
#[derive(Debug, Clone, Default, Deserialize)]
struct ToolFields {
    id: Field,
    timestamp: Field,
    iteration: Field,
    context: Field,
    #[serde(rename = "type")]
    kind: Field,
    action: Field,
    status: Field,
    details: Field,
    error: Field,
}

/// `{ "iteration": … }` inside an entry's `context`.
#[derive(Debug, Clone, Default, Deserialize)]
struct ContextFields {
    iteration: Field,
}

/// `iteration`, else `context.iteration`.
fn stated(iteration: &Field, context: &Field) -> Option<u32> {
    field_iteration(iteration.as_deref()).or_else(|| {
        let context: ContextFields = read_object(context.as_deref()?);
        field_iteration(context.iteration.as_deref())
    })
}

/// What identifies an entry and places it in time, read once when the log is read.
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
}

impl EntryFacts {
    fn read(id: &Field, timestamp: &Field, iteration: &Field, context: &Field) -> Self {
        EntryFacts {
            id: field_text(id.as_deref()),
            timestamp: field_text(timestamp.as_deref()),
            iteration: stated(iteration, context),
            has_iteration: iteration.is_some(),
        }
    }
}

/// A view that knows its entry's [`EntryFacts`].
pub trait HasFacts {
    /// Id, timestamp and stated iteration.
    fn facts(&self) -> &EntryFacts;
}

/// One code execution of the reasoning loop (`gdrs_execution_log`), as the package reads it.
#[derive(Debug, Clone, Default)]
pub struct ExecutionEntry {
    fields: ExecutionFields,
    /// Id, timestamp and stated iteration.
    pub facts: EntryFacts,
}

impl EntryView for ExecutionEntry {
    fn read(raw: &RawValue) -> Self {
        let fields: ExecutionFields = read_object(raw);
        let facts = EntryFacts::read(
            &fields.id,
            &fields.timestamp,
            &fields.iteration,
            &fields.context,
        );
        ExecutionEntry { fields, facts }
    }
}

impl HasFacts for ExecutionEntry {
    fn facts(&self) -> &EntryFacts {
        &self.facts
    }
}

impl ExecutionEntry {
    /// The iteration this entry names itself: `iteration`, else `context.iteration`.
    pub fn stated_iteration(&self) -> Option<u32> {
        self.facts.iteration
    }

    /// Whether the code ran without throwing, when the entry says.
    pub fn success(&self) -> Option<bool> {
        field_bool(self.fields.success.as_deref())
    }

    /// The code that was run (empty when absent).
    pub fn code(&self) -> String {
        field_text(self.fields.code.as_deref()).unwrap_or_default()
    }

    /// What the code returned, as its stored JSON (`None` when absent or `null`).
    pub fn result_json(&self) -> Option<&str> {
        self.fields
            .result
            .as_deref()
            .map(RawValue::get)
            .filter(|text| *text != "null")
    }

    /// The error message of a failed execution: `error.message`, or `error` as text.
    pub fn error_message(&self) -> Option<String> {
        error_text(self.fields.error.as_deref())
    }

    /// The run time in milliseconds, as stored.
    pub fn execution_time(&self) -> Option<&str> {
        self.fields.execution_time.as_deref().map(RawValue::get)
    }

    /// Who ran it (`"auto"`, `"manual"`, …).
    pub fn source(&self) -> Option<String> {
        field_text(self.fields.source.as_deref())
    }

    /// `metadata.task`, when the app names the task.
    pub fn task(&self) -> Option<String> {
        #[derive(Deserialize, Default)]
        struct Metadata {
            task: Field,
        }
        let metadata: Metadata = read_object(self.fields.metadata.as_deref()?);
        metadata.task.as_deref().and_then(decode_string)
    }
}

/// `{ message }` or a string, as text.
fn error_text(raw: Option<&RawValue>) -> Option<String> {
    #[derive(Deserialize, Default)]
    struct ErrorFields {
        message: Field,
    }
    let raw = raw?;
    if let Some(text) = decode_string(raw) {
        return Some(text);
    }
    let fields: ErrorFields = read_object(raw);
    field_text(fields.message.as_deref())
}

/// One tool operation of the reasoning loop (`gdrs_tool_activity_log`), as the package reads
/// it.
#[derive(Debug, Clone, Default)]
pub struct ToolActivityEntry {
    fields: ToolFields,
    /// Id, timestamp and stated iteration.
    pub facts: EntryFacts,
}

impl EntryView for ToolActivityEntry {
    fn read(raw: &RawValue) -> Self {
        let fields: ToolFields = read_object(raw);
        let facts = EntryFacts::read(
            &fields.id,
            &fields.timestamp,
            &fields.iteration,
            &fields.context,
        );
        ToolActivityEntry { fields, facts }
    }
}

impl HasFacts for ToolActivityEntry {
    fn facts(&self) -> &EntryFacts {
        &self.facts
    }
}

impl ToolActivityEntry {
    /// The iteration this entry names itself: `iteration`, else `context.iteration`.
    pub fn stated_iteration(&self) -> Option<u32> {
        self.facts.iteration
    }

    /// The kind of tool (`"vfs"`, `"vault"`, `"js_execute"`, …).
    pub fn kind(&self) -> Option<String> {
        field_text(self.fields.kind.as_deref())
    }

    /// What the tool did (`"write"`, `"read"`, `"auto_run"`, …).
    pub fn action(&self) -> Option<String> {
        field_text(self.fields.action.as_deref())
    }

    /// How it ended (`"success"`, `"error"`, …).
    pub fn status(&self) -> Option<String> {
        field_text(self.fields.status.as_deref())
    }

    /// Free-form details, as text.
    pub fn details(&self) -> Option<String> {
        field_text(self.fields.details.as_deref())
    }

    /// The error message of a failed operation.
    pub fn error_message(&self) -> Option<String> {
        error_text(self.fields.error.as_deref())
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
mod tests {
    use super::*;

    fn execution(text: &str) -> ExecutionEntry {
        ExecutionEntry::read(&RawValue::from_string(text.to_owned()).unwrap())
    }

    #[test]
    fn execution_fields_are_read_leniently() {
        let entry = execution(
            r#"{"id":"exec_1_a","success":true,"code":"1+1","result":1.1805916207174113e+21,"context":{"iteration":4},"metadata":{"task":"sum"}}"#,
        );
        assert_eq!(entry.stated_iteration(), Some(4));
        assert_eq!(entry.facts.id.as_deref(), Some("exec_1_a"));
        assert_eq!(entry.result_json(), Some("1.1805916207174113e+21"));
        assert_eq!(entry.task().as_deref(), Some("sum"));
        let odd = execution(r#"{"id":7,"success":"yes","code":null,"iteration":"3"}"#);
        assert_eq!(odd.facts.id.as_deref(), Some("7"));
        assert_eq!(odd.success(), None);
        assert_eq!(odd.code(), "");
        assert_eq!(odd.stated_iteration(), Some(3));
    }

    #[test]
    fn explicit_iteration_wins_over_context() {
        let entry = execution(r#"{"iteration":2,"context":{"iteration":9}}"#);
        assert_eq!(entry.stated_iteration(), Some(2));
    }

    #[test]
    fn error_message_reads_objects_and_strings() {
        assert_eq!(
            execution(r#"{"error":{"message":"boom"}}"#)
                .error_message()
                .as_deref(),
            Some("boom")
        );
        assert_eq!(
            execution(r#"{"error":"bang"}"#).error_message().as_deref(),
            Some("bang")
        );
    }

    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        assert_eq!(js_number(3.0).to_string(), "3");
        assert_eq!(js_number(2.5).to_string(), "2.5");
        assert_eq!(js_number(f64::NAN).to_string(), "0");
    }

    #[test]
    fn stamped_fields_of_an_input_give_way() {
        let mut extra = Map::new();
        extra.insert("id".into(), Value::from("old"));
        extra.insert("keep".into(), Value::from(1));
        let kept = without_stamped(extra);
        assert_eq!(kept.len(), 1);
        assert!(kept.contains_key("keep"));
    }
}
