//! The records the package writes when the app appends through it: the app's fields, stamped
//! with id, timestamp and iteration (the input's own stamps give way).

use crate::core::json::read::{both, FromJson, Object, RawJson, ReadError};
use crate::core::json::write::{ObjectOut, ToJson};
use crate::core::log::entry_facts::Part;

/// The execution entry `appendExecution` writes: the app's fields, stamped.
#[derive(Debug, Clone, PartialEq)]
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
    pub result: Option<RawJson>,
    /// `{ message }` when the code threw, else `null`.
    pub error: RawJson,
    /// Run time in milliseconds, written as JavaScript writes it (`3`, not `3.0`).
    pub execution_time: RawJson,
    /// Who ran it.
    pub source: String,
    /// Free-form data of the app.
    pub metadata: Option<RawJson>,
    /// Any further fields of the input, in the input's order.
    pub extra: Vec<(String, RawJson)>,
}

impl ToJson for NewExecution {
    fn write_json(&self, out: &mut String) {
        let stamp = (self.id.as_str(), self.timestamp.as_str(), self.iteration);
        write_appended(out, stamp, &self.extra, |entry| {
            entry
                .field(Part::Success.name(), &self.success)
                .field(Part::Code.name(), &self.code)
                .field_opt(Part::Result.name(), &self.result)
                .field(Part::Error.name(), &self.error)
                .field(Part::ExecutionTime.name(), &self.execution_time)
                .field(Part::Source.name(), &self.source)
                .field_opt(Part::Metadata.name(), &self.metadata);
        });
    }
}

/// Writes an appended entry: the store's stamp (`id`, `timestamp`, `iteration`), then the
/// entry's own fields, then the input's further fields in the input's order.
fn write_appended(
    out: &mut String,
    (id, timestamp, iteration): (&str, &str, u32),
    extra: &[(String, RawJson)],
    own_fields: impl FnOnce(&mut ObjectOut<'_>),
) {
    let mut entry = ObjectOut::new(out);
    entry
        .field("id", id)
        .field("timestamp", timestamp)
        .field("iteration", &iteration);
    own_fields(&mut entry);
    for (name, value) in extra {
        entry.field(name, value);
    }
}

/// The tool entry `appendToolActivity` writes: the app's fields, stamped.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NewToolActivity {
    /// Unique id, `tool_…`.
    pub id: String,
    /// ISO-8601 time of the append.
    pub timestamp: String,
    /// The iteration it belongs to.
    pub iteration: u32,
    /// The kind of tool (`type`).
    pub kind: String,
    /// What the tool did.
    pub action: String,
    /// How it ended.
    pub status: String,
    /// Free-form details.
    pub details: Option<RawJson>,
    /// Any further fields of the input, in the input's order.
    pub extra: Vec<(String, RawJson)>,
}

impl ToJson for NewToolActivity {
    fn write_json(&self, out: &mut String) {
        let stamp = (self.id.as_str(), self.timestamp.as_str(), self.iteration);
        write_appended(out, stamp, &self.extra, |entry| {
            entry
                .field(Part::Kind.name(), &self.kind)
                .field(Part::Action.name(), &self.action)
                .field(Part::Status.name(), &self.status)
                .field_opt(Part::Details.name(), &self.details);
        });
    }
}

/// The fields the store stamps on every appended entry; an input's own copies give way, so an
/// entry read back and appended again is not stored with two `id`s.
pub const STAMPED_FIELDS: [&str; 3] = ["id", "timestamp", "iteration"];

/// The fields of `input` that are neither in `own` nor stamped by the store.
fn unstamped_rest(input: &Object<'_>, own: &[&str]) -> Vec<(String, RawJson)> {
    let known: Vec<&str> = own.iter().chain(&STAMPED_FIELDS).copied().collect();
    input.rest(&known)
}

/// What an app passes to `appendExecution`; the store adds id, timestamp and iteration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExecutionInput {
    /// Whether the code ran without throwing.
    pub success: bool,
    /// The code that was run.
    pub code: String,
    /// What the code returned (an explicit `null` kept).
    pub result: Option<RawJson>,
    /// The error: `{ message }`, a plain string, or `null`.
    pub error: Option<RawJson>,
    /// Run time in milliseconds (0 when not given).
    pub execution_time: Option<f64>,
    /// Who ran it; `"auto"` when not given.
    pub source: Option<String>,
    /// Free-form data of the app (an explicit `null` kept).
    pub metadata: Option<RawJson>,
    /// Any further fields, stored as given (less the stamped ones).
    pub extra: Vec<(String, RawJson)>,
}

impl FromJson for ExecutionInput {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        let input = Object::read(json)?;
        let raw = |part: Part| input.get(part.name()).map(RawJson::from);
        let (success, code) = both(
            input.req(Part::Success.name()),
            input.req(Part::Code.name()),
        )?;
        Ok(ExecutionInput {
            success,
            code,
            result: raw(Part::Result),
            error: raw(Part::Error),
            execution_time: input.opt(Part::ExecutionTime.name())?,
            source: input.opt(Part::Source.name())?,
            metadata: raw(Part::Metadata),
            extra: unstamped_rest(&input, &Part::EXECUTION_NAMES),
        })
    }
}

/// What an app passes to `appendToolActivity`; the store adds id, timestamp and iteration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolActivityInput {
    /// The kind of tool (`type`).
    pub kind: String,
    /// What the tool did.
    pub action: String,
    /// How it ended.
    pub status: String,
    /// Free-form details (an explicit `null` kept).
    pub details: Option<RawJson>,
    /// Any further fields, stored as given (less the stamped ones).
    pub extra: Vec<(String, RawJson)>,
}

impl FromJson for ToolActivityInput {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        let input = Object::read(json)?;
        let ((kind, action), status) = both(
            both(input.req(Part::Kind.name()), input.req(Part::Action.name())),
            input.req(Part::Status.name()),
        )?;
        Ok(ToolActivityInput {
            kind,
            action,
            status,
            details: input.get(Part::Details.name()).map(RawJson::from),
            extra: unstamped_rest(&input, &Part::TOOL_ACTIVITY_NAMES),
        })
    }
}

/// `value` as JavaScript writes the number (`3`, not `3.0`; `0` for what JSON cannot hold).
pub(crate) fn js_number(value: f64) -> RawJson {
    if !value.is_finite() || value == 0.0 {
        return RawJson::from("0");
    }
    RawJson(crate::core::json::write::to_json(&value))
}

/// Normalises an execution error to the stored shape: `{ "message": … }` or `null`.
pub(crate) fn normalise_error(error: Option<RawJson>) -> RawJson {
    match error {
        None => RawJson::from("null"),
        Some(error) if error.get().starts_with('"') => {
            let mut out = String::new();
            ObjectOut::new(&mut out).raw("message", error.get());
            RawJson(out)
        }
        Some(other) => other,
    }
}
