//! The entries of the execution and tool-activity logs, as stored in localStorage.
//!
//! Entries may have been written by other code (an older app, another tab). Every field is
//! therefore optional on read, fields this package does not know are kept in `extra`, and a
//! field that was absent stays absent when the log is written back.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Number, Value};

/// Deserializes a field that is present, keeping an explicit `null` as `Some(Value::Null)`
/// so that it is written back as `null` rather than dropped.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// One code execution of the reasoning loop (`gdrs_execution_log`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionEntry {
    /// Unique id, `exec_…` for entries this package wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// ISO-8601 time of the append.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// The iteration the execution belongs to; absent in entries of older apps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u32>,
    /// Whether the code ran without throwing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success: Option<bool>,
    /// The code that was run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// What the code returned.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub result: Option<Value>,
    /// `{ message }` when the code threw, else `null`.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub error: Option<Value>,
    /// Run time in milliseconds, kept as written (`3` stays `3`, not `3.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_time: Option<Number>,
    /// Who ran it (`"auto"`, `"manual"`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Free-form data of the app.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this package does not know, kept as they were.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ExecutionEntry {
    /// The iteration this entry names itself: `iteration`, else `context.iteration`.
    pub fn stated_iteration(&self) -> Option<u32> {
        self.iteration.or_else(|| {
            self.extra
                .get("context")
                .and_then(|context| context.get("iteration"))
                .and_then(iteration_number)
        })
    }

    /// The error message of a failed execution, if any.
    pub fn error_message(&self) -> Option<&str> {
        match self.error.as_ref()? {
            Value::String(message) => Some(message),
            Value::Object(fields) => fields.get("message").and_then(Value::as_str),
            _ => None,
        }
    }
}

/// One tool operation of the reasoning loop (`gdrs_tool_activity_log`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ToolActivityEntry {
    /// Unique id, `tool_…` for entries this package wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// ISO-8601 time of the append.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// The iteration the operation belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u32>,
    /// The kind of tool (`"vfs"`, `"fetch"`, …).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// What the tool did (`"write"`, `"read"`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// How it ended (`"success"`, `"error"`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Free-form details of the operation.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub details: Option<Value>,
    /// Fields this package does not know, kept as they were.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolActivityEntry {
    /// The iteration this entry names itself: `iteration`, else `context.iteration`.
    pub fn stated_iteration(&self) -> Option<u32> {
        self.iteration.or_else(|| {
            self.extra
                .get("context")
                .and_then(|context| context.get("iteration"))
                .and_then(iteration_number)
        })
    }
}

/// Reads an iteration number written as a JSON number (or a numeric string, as some apps do).
fn iteration_number(value: &Value) -> Option<u32> {
    match value {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
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

    #[test]
    fn foreign_entry_round_trips_unknown_fields_and_nulls() {
        let text = r#"{"id":"x","success":true,"code":"1+1","result":null,"error":null,"context":{"iteration":4},"tags":["a"],"score":1.5}"#;
        let entry: ExecutionEntry = serde_json::from_str(text).unwrap();
        assert_eq!(entry.stated_iteration(), Some(4));
        assert_eq!(entry.result, Some(Value::Null));
        let back: Value = serde_json::to_value(&entry).unwrap();
        let original: Value = serde_json::from_str(text).unwrap();
        assert_eq!(back, original);
    }

    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        let text = r#"{"executionTime":1,"other":2}"#;
        let entry: ExecutionEntry = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&entry).unwrap(), text);
        assert_eq!(js_number(3.0).to_string(), "3");
        assert_eq!(js_number(2.5).to_string(), "2.5");
        assert_eq!(js_number(f64::NAN).to_string(), "0");
    }

    #[test]
    fn explicit_iteration_wins_over_context() {
        let entry: ExecutionEntry =
            serde_json::from_str(r#"{"iteration":2,"context":{"iteration":9}}"#).unwrap();
        assert_eq!(entry.stated_iteration(), Some(2));
    }

    #[test]
    fn error_message_reads_objects_and_strings() {
        let object: ExecutionEntry =
            serde_json::from_str(r#"{"error":{"message":"boom"}}"#).unwrap();
        let string: ExecutionEntry = serde_json::from_str(r#"{"error":"bang"}"#).unwrap();
        assert_eq!(object.error_message(), Some("boom"));
        assert_eq!(string.error_message(), Some("bang"));
    }

    #[test]
    fn tool_entry_keeps_type_field_name() {
        let entry: ToolActivityEntry =
            serde_json::from_str(r#"{"type":"vfs","action":"write","status":"ok","extra":1}"#)
                .unwrap();
        assert_eq!(entry.kind.as_deref(), Some("vfs"));
        let back = serde_json::to_string(&entry).unwrap();
        assert!(back.contains(r#""type":"vfs""#) && back.contains(r#""extra":1"#));
    }
}
