//! The records the package writes when the app appends through it: the app's fields, stamped
//! with id, timestamp and iteration (the input's own stamps give way).

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Number, Value};

/// Deserializes a field that is present, keeping an explicit `null` as `Some(Value::Null)`
/// so that it is written back as `null` rather than dropped.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// The execution entry `appendExecution` writes: the app's fields, stamped.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NewExecution {
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
pub(crate) struct NewToolActivity {
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
pub(crate) const STAMPED_FIELDS: [&str; 3] = ["id", "timestamp", "iteration"];

/// `extra` without the fields the store stamps itself.
pub(crate) fn without_stamped(mut extra: Map<String, Value>) -> Map<String, Value> {
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
pub(crate) fn js_number(value: f64) -> Number {
    if value.fract() == 0.0 && value.abs() < 9_007_199_254_740_992.0 {
        Number::from(value as i64)
    } else {
        Number::from_f64(value).unwrap_or_else(|| Number::from(0))
    }
}

/// Normalises an execution error to the stored shape: `{ "message": … }` or `null`.
pub(crate) fn normalise_error(error: Option<Value>) -> Value {
    match error {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(message)) => serde_json::json!({ "message": message }),
        Some(other) => other,
    }
}
