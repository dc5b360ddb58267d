//! The entries of the execution and tool-activity logs: what the package reads from them,
//! and the records it writes when the app appends through it.
//!
//! Entries may have been written by other code (the app itself, an older version, another
//! tab). They are kept as their stored text ([`Stored`]); the views below read the fields the
//! package needs, leniently: any field may be absent or of another type.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

use super::stored_entry::{decode_string, field_bool, field_text, read_object, EntryView, Stored};

/// Deserializes a field that is present, keeping an explicit `null` as `Some(Value::Null)`
/// so that it is written back as `null` rather than dropped.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A field as stored: any JSON value, read on demand.
type Field = Option<Box<RawValue>>;
/// A field borrowed from the stored text.
type Borrowed<'a> = Option<&'a RawValue>;

/// The fields of an execution entry the package reads, as stored (read on demand, for the
/// prompt and the offline summary).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionFields<'a> {
    #[serde(borrow)]
    success: Borrowed<'a>,
    #[serde(borrow)]
    code: Borrowed<'a>,
    #[serde(borrow)]
    result: Borrowed<'a>,
    #[serde(borrow)]
    error: Borrowed<'a>,
    #[serde(borrow)]
    execution_time: Borrowed<'a>,
    #[serde(borrow)]
    source: Borrowed<'a>,
    #[serde(borrow)]
    metadata: Borrowed<'a>,
}

impl ExecutionFields<'_> {
    /// Whether the code ran without throwing, when the entry says.
    pub fn success(&self) -> Option<bool> {
        field_bool(self.success)
    }

    /// The code that was run (empty when absent).
    pub fn code(&self) -> String {
        field_text(self.code).unwrap_or_default()
    }

    /// What the code returned, as its stored JSON (`None` when absent or `null`).
    pub fn result_json(&self) -> Option<&str> {
        self.result
            .map(RawValue::get)
            .filter(|text| *text != "null")
    }

    /// The error message of a failed execution: `error.message`, or `error` as text.
    pub fn error_message(&self) -> Option<String> {
        error_text(self.error)
    }

    /// The run time in milliseconds, as stored.
    pub fn execution_time(&self) -> Option<&str> {
        self.execution_time.map(RawValue::get)
    }

    /// Who ran it (`"auto"`, `"manual"`, …).
    pub fn source(&self) -> Option<String> {
        field_text(self.source)
    }

    /// `metadata.task`, when the app names the task.
    pub fn task(&self) -> Option<String> {
        #[derive(Deserialize, Default)]
        struct Metadata {
            task: Field,
        }
        let metadata: Metadata = read_object(self.metadata?);
        metadata.task.as_deref().and_then(decode_string)
    }
}

/// The fields of a tool entry the package reads, as stored (read on demand).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ToolFields<'a> {
    #[serde(borrow, rename = "type")]
    kind: Borrowed<'a>,
    #[serde(borrow)]
    action: Borrowed<'a>,
    #[serde(borrow)]
    status: Borrowed<'a>,
    #[serde(borrow)]
    details: Borrowed<'a>,
    #[serde(borrow)]
    error: Borrowed<'a>,
}

impl ToolFields<'_> {
    /// The kind of tool (`"vfs"`, `"vault"`, `"js_execute"`, …).
    pub fn kind(&self) -> Option<String> {
        field_text(self.kind)
    }

    /// What the tool did (`"write"`, `"read"`, `"auto_run"`, …).
    pub fn action(&self) -> Option<String> {
        field_text(self.action)
    }

    /// How it ended (`"success"`, `"error"`, …).
    pub fn status(&self) -> Option<String> {
        field_text(self.status)
    }

    /// Free-form details, as text.
    pub fn details(&self) -> Option<String> {
        field_text(self.details)
    }

    /// The error message of a failed operation.
    pub fn error_message(&self) -> Option<String> {
        error_text(self.error)
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

/// What identifies an entry and places it in time, read once when the log is read (every read
/// places every entry, so this reader skips all other fields without building them).
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
}

impl EntryFacts {
    /// The facts of the entry stored as `raw`; an entry that is not an object has none.
    pub fn read(raw: &RawValue) -> Self {
        let text = raw.get();
        if !text.starts_with('{') {
            return EntryFacts::default();
        }
        serde_json::from_str::<facts::Facts>(text)
            .map(facts::Facts::into_entry_facts)
            // Text this reader refuses (a lone surrogate in a key or an id) is read the slow,
            // lenient way.
            .unwrap_or_else(|_| facts::lenient(raw))
    }
}

/// The fast reader of [`EntryFacts`].
mod facts {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    use serde::Deserialize;
    use serde_json::value::RawValue;

    use super::{EntryFacts, Field};
    use crate::core::stored_entry::{field_iteration, field_text, read_object};

    #[derive(Deserialize)]
    #[serde(field_identifier, rename_all = "camelCase")]
    enum Key {
        Id,
        Timestamp,
        Iteration,
        Context,
        #[serde(rename = "type")]
        Kind,
        Action,
        #[serde(other)]
        Other,
    }

    /// A scalar field: text, a number, or anything else (skipped).
    enum Scalar {
        Text(String),
        Number(f64),
        Other,
    }

    impl<'de> Deserialize<'de> for Scalar {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct ScalarVisitor;
            impl<'de> Visitor<'de> for ScalarVisitor {
                type Value = Scalar;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a JSON value")
                }
                fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
                    Ok(Scalar::Text(v.to_owned()))
                }
                fn visit_string<E>(self, v: String) -> Result<Scalar, E> {
                    Ok(Scalar::Text(v))
                }
                fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
                    Ok(Scalar::Number(v as f64))
                }
                fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
                    Ok(Scalar::Number(v as f64))
                }
                fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
                    Ok(Scalar::Number(v))
                }
                fn visit_bool<E>(self, _: bool) -> Result<Scalar, E> {
                    Ok(Scalar::Other)
                }
                fn visit_unit<E>(self) -> Result<Scalar, E> {
                    Ok(Scalar::Other)
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> Result<Scalar, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(Scalar::Other)
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(Scalar::Other)
                }
            }
            deserializer.deserialize_any(ScalarVisitor)
        }
    }

    impl Scalar {
        fn text(self) -> Option<String> {
            match self {
                Scalar::Text(text) => Some(text),
                Scalar::Number(n) => Some(super::js_number(n).to_string()),
                Scalar::Other => None,
            }
        }

        fn iteration(&self) -> Option<u32> {
            let number = match self {
                Scalar::Number(n) => *n,
                Scalar::Text(text) => text.trim().parse().ok()?,
                Scalar::Other => return None,
            };
            (number.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&number))
                .then_some(number as u32)
        }
    }

    /// The fields of an entry (or of its `context`) that facts are made of.
    #[derive(Default)]
    pub struct Facts {
        id: Option<Scalar>,
        timestamp: Option<Scalar>,
        iteration: Option<Scalar>,
        context_iteration: Option<u32>,
        kind: Option<Scalar>,
        action: Option<Scalar>,
    }

    impl<'de> Deserialize<'de> for Facts {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct FactsVisitor;
            impl<'de> Visitor<'de> for FactsVisitor {
                type Value = Facts;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an entry object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Facts, A::Error> {
                    let mut facts = Facts::default();
                    // A key given twice keeps its last value, as in `JSON.parse`.
                    while let Some(key) = map.next_key::<Key>()? {
                        match key {
                            Key::Id => facts.id = Some(map.next_value()?),
                            Key::Timestamp => facts.timestamp = Some(map.next_value()?),
                            Key::Iteration => facts.iteration = Some(map.next_value()?),
                            Key::Kind => facts.kind = Some(map.next_value()?),
                            Key::Action => facts.action = Some(map.next_value()?),
                            Key::Context => {
                                let context: ContextFacts = map.next_value()?;
                                facts.context_iteration = context.0;
                            }
                            Key::Other => {
                                map.next_value::<IgnoredAny>()?;
                            }
                        }
                    }
                    Ok(facts)
                }
            }
            deserializer.deserialize_map(FactsVisitor)
        }
    }

    /// `context.iteration`; a `context` that is not an object has none.
    struct ContextFacts(Option<u32>);

    impl<'de> Deserialize<'de> for ContextFacts {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct ContextVisitor;
            impl<'de> Visitor<'de> for ContextVisitor {
                type Value = ContextFacts;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a context")
                }
                fn visit_map<A: MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<ContextFacts, A::Error> {
                    let mut iteration = None;
                    while let Some(key) = map.next_key::<Key>()? {
                        if matches!(key, Key::Iteration) {
                            iteration = map.next_value::<Scalar>()?.iteration();
                        } else {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                    Ok(ContextFacts(iteration))
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> Result<ContextFacts, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(ContextFacts(None))
                }
                fn visit_str<E>(self, _: &str) -> Result<ContextFacts, E> {
                    Ok(ContextFacts(None))
                }
                fn visit_u64<E>(self, _: u64) -> Result<ContextFacts, E> {
                    Ok(ContextFacts(None))
                }
                fn visit_i64<E>(self, _: i64) -> Result<ContextFacts, E> {
                    Ok(ContextFacts(None))
                }
                fn visit_f64<E>(self, _: f64) -> Result<ContextFacts, E> {
                    Ok(ContextFacts(None))
                }
                fn visit_bool<E>(self, _: bool) -> Result<ContextFacts, E> {
                    Ok(ContextFacts(None))
                }
                fn visit_unit<E>(self) -> Result<ContextFacts, E> {
                    Ok(ContextFacts(None))
                }
            }
            deserializer.deserialize_any(ContextVisitor)
        }
    }

    impl Facts {
        pub fn into_entry_facts(self) -> EntryFacts {
            let is = |scalar: &Option<Scalar>, word: &str| matches!(scalar, Some(Scalar::Text(text)) if text == word);
            EntryFacts {
                vault_read: is(&self.kind, "vault") && is(&self.action, "read"),
                has_iteration: self.iteration.is_some(),
                iteration: self
                    .iteration
                    .as_ref()
                    .and_then(Scalar::iteration)
                    .or(self.context_iteration),
                id: self.id.and_then(Scalar::text),
                timestamp: self.timestamp.and_then(Scalar::text),
            }
        }
    }

    /// The facts read through raw fields, which accept anything `JSON.parse` does.
    pub fn lenient(raw: &RawValue) -> EntryFacts {
        #[derive(Deserialize, Default)]
        struct Raw {
            id: Field,
            timestamp: Field,
            iteration: Field,
            context: Field,
            #[serde(rename = "type")]
            kind: Field,
            action: Field,
        }
        #[derive(Deserialize, Default)]
        struct Context {
            iteration: Field,
        }
        let fields: Raw = read_object(raw);
        let context_iteration = fields.context.as_deref().and_then(|context| {
            let context: Context = read_object(context);
            field_iteration(context.iteration.as_deref())
        });
        let text = |field: &Field| field_text(field.as_deref());
        EntryFacts {
            vault_read: text(&fields.kind).as_deref() == Some("vault")
                && text(&fields.action).as_deref() == Some("read"),
            has_iteration: fields.iteration.is_some(),
            iteration: field_iteration(fields.iteration.as_deref()).or(context_iteration),
            id: text(&fields.id),
            timestamp: text(&fields.timestamp),
        }
    }
}

/// A view that knows its entry's [`EntryFacts`].
pub trait HasFacts {
    /// Id, timestamp and stated iteration.
    fn facts(&self) -> &EntryFacts;
}

/// One code execution of the reasoning loop (`gdrs_execution_log`), as placed: its facts; the
/// other fields are read on demand ([`Stored::fields`]).
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
            facts: EntryFacts::read(raw),
        }
    }
}

impl EntryView for ToolActivityEntry {
    fn read(raw: &RawValue) -> Self {
        ToolActivityEntry {
            facts: EntryFacts::read(raw),
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
    /// The fields the prompt and the summary read, parsed from the stored text.
    pub fn fields(&self) -> ExecutionFields<'_> {
        read_object(self.raw())
    }
}

impl Stored<ToolActivityEntry> {
    /// The fields the prompt and the summary read, parsed from the stored text.
    pub fn fields(&self) -> ToolFields<'_> {
        read_object(self.raw())
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

    fn execution(text: &str) -> Stored<ExecutionEntry> {
        Stored::from_raw(RawValue::from_string(text.to_owned()).unwrap())
    }

    #[test]
    fn execution_fields_are_read_leniently() {
        let entry = execution(
            r#"{"id":"exec_1_a","success":true,"code":"1+1","result":1.1805916207174113e+21,"context":{"iteration":4},"metadata":{"task":"sum"}}"#,
        );
        assert_eq!(entry.stated_iteration(), Some(4));
        assert_eq!(entry.facts.id.as_deref(), Some("exec_1_a"));
        assert_eq!(entry.fields().result_json(), Some("1.1805916207174113e+21"));
        assert_eq!(entry.fields().task().as_deref(), Some("sum"));
        let odd = execution(r#"{"id":7,"success":"yes","code":null,"iteration":"3"}"#);
        assert_eq!(odd.facts.id.as_deref(), Some("7"));
        assert_eq!(odd.fields().success(), None);
        assert_eq!(odd.fields().code(), "");
        assert_eq!(odd.stated_iteration(), Some(3));
    }

    #[test]
    fn facts_are_read_like_json_parse_reads_them() {
        let dup = execution(r#"{"id":"a","iteration":1,"id":"b","iteration":2,"x":[{"id":9}]}"#);
        assert_eq!(dup.facts.id.as_deref(), Some("b"));
        assert_eq!(dup.stated_iteration(), Some(2));
        let odd_context = execution(r#"{"context":[1],"timestamp":5}"#);
        assert_eq!(odd_context.stated_iteration(), None);
        assert_eq!(odd_context.facts.timestamp.as_deref(), Some("5"));
        let lone = execution(r#"{"id":"exec_\ud83d","context":{"iteration":"4"}}"#);
        assert_eq!(lone.facts.id.as_deref(), Some("exec_\u{fffd}"));
        assert_eq!(lone.stated_iteration(), Some(4));
        assert!(!lone.facts.has_iteration);
        let vault = ToolActivityEntry::read(
            &RawValue::from_string(r#"{"type":"vault","action":"read","id":"v"}"#.into()).unwrap(),
        );
        assert!(vault.facts.vault_read);
        assert_eq!(execution("[1]").facts, EntryFacts::default());
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
                .fields()
                .error_message()
                .as_deref(),
            Some("boom")
        );
        assert_eq!(
            execution(r#"{"error":"bang"}"#)
                .fields()
                .error_message()
                .as_deref(),
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
