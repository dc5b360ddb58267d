//! The ladder's last rung as values: when it runs (the `fallback` option) and why it ran.

use crate::core::json::read::{FromJson, ReadError};
use crate::core::json::record::json_record;
use crate::core::model::option_rows::{OptionValue, Range};

/// The `fallback` option: whether the package stores its own summary when every attempt of the
/// model's fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FallbackPolicy {
    /// `false`: a failed compaction is refused, whoever asked for it.
    Off,
    /// `"loop"`: for the compactions the loop asks for (`auto`, `context_limit_error`).
    #[default]
    Loop,
    /// `"always"`: for the user's as well.
    Always,
}

impl FallbackPolicy {
    fn name(self) -> &'static str {
        match self {
            FallbackPolicy::Off => "false",
            FallbackPolicy::Loop => "loop",
            FallbackPolicy::Always => "always",
        }
    }
}

impl FromJson for FallbackPolicy {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        match json {
            "false" => Ok(FallbackPolicy::Off),
            "\"loop\"" => Ok(FallbackPolicy::Loop),
            "\"always\"" => Ok(FallbackPolicy::Always),
            _ => Err(ReadError::invalid(json, "false, \"loop\" or \"always\"")),
        }
    }
}

impl OptionValue for FallbackPolicy {
    fn in_range(&self, _: &Range) -> bool {
        true
    }
    fn shown(&self) -> String {
        format!("\"{}\"", self.name())
    }
}

/// Why the model's summary could not be used, when the fallback rung stored the package's own
/// (`result.fallback`, the `compaction_fallback` event).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FallbackReason {
    /// The code the compaction would have failed with (`llm_http`, `invalid_summary`, …).
    pub code: String,
    /// Its message, redacted as every error message is.
    pub message: String,
}

json_record! {
    read write FallbackReason {
        code: "code" req,
        message: "message" req,
    }
}
