//! The ladder's clearing rung as values: its rules (the `clearing` option), the rung a
//! compaction ran and the bodies it cleared.

use crate::core::json::read::{FromJson, Object, ReadError};
use crate::core::json::record::{json_names, json_record};
use crate::core::json::scan::members;
use crate::core::model::option_rows::{OptionValue, Range};

/// What one tool (by type or name) gets: `keep` or `clear`, or the durability of what it
/// returns (the classes of the production design seed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolRule {
    /// Never cleared.
    Keep,
    /// Cleared whole once old enough, whatever its size, but for a body shorter than the
    /// placeholder that would replace it (clearing it would free nothing).
    Clear,
    /// Of no use once read (a status, a progress line): cleared whole, as `Clear`.
    Ephemeral,
    /// Holds what later steps stand on: cleared by size, its `keepFields` (and its short
    /// fields) staying inline.
    Anchoring,
    /// Can be fetched again: cleared whole, the placeholder saying the call can be repeated.
    Replayable,
    /// Cannot be fetched again: cleared by size, the placeholder saying the archive holds the
    /// only copy (the archive is written before any placeholder, as for every clearing).
    NonReplayable,
}

json_names! {
    all ToolRule {
        Keep = "keep",
        Clear = "clear",
        Ephemeral = "ephemeral",
        Anchoring = "anchoring",
        Replayable = "replayable",
        NonReplayable = "non-replayable",
    }
}

impl ToolRule {
    /// Whether a body of this tool leaves whole once old enough, whatever its size.
    pub fn whole(self) -> bool {
        matches!(
            self,
            ToolRule::Clear | ToolRule::Ephemeral | ToolRule::Replayable
        )
    }
}

/// A JSON object read as its members in order, each value read as `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct ByName<T>(pub Vec<(String, T)>);

impl<T> Default for ByName<T> {
    fn default() -> Self {
        ByName(Vec::new())
    }
}

impl<T: FromJson> FromJson for ByName<T> {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        let fields = members(json).ok_or_else(|| ReadError::invalid(json, "an object"))?;
        let mut read = Vec::new();
        for (name, value) in fields {
            let value = T::from_json(value).map_err(|err| ReadError::In("tool", Box::new(err)))?;
            read.push((name.into_owned(), value));
        }
        Ok(ByName(read))
    }
}

impl<T: PartialEq> ByName<T> {
    /// The values given for any of `names`, in order.
    pub fn of<'a>(&'a self, names: &'a [&str]) -> impl Iterator<Item = &'a T> + 'a {
        self.0
            .iter()
            .filter(|(name, _)| names.contains(&name.as_str()))
            .map(|(_, value)| value)
    }
}

/// What clearing does (the `clearing` option when it is not `false`).
#[derive(Debug, Clone, PartialEq)]
pub struct ClearingRules {
    /// The newest iterations keep their bodies whole (the running one always does); `None`:
    /// the newest, and the ones before it (up to [`KEEP_AT_MOST`] in all) while their bulky
    /// entries take together no more than what a clearing is due at ([`ClearingRules::due_at`]).
    pub keep_iterations: Option<u32>,
    /// A body larger than this, in tokens, is cleared.
    pub above_tokens: usize,
    /// By tool type or name (an execution's `source`): never clear, or always clear whole.
    pub tools: ByName<ToolRule>,
    /// By tool type or name: fields of the body that stay inline.
    pub keep_fields: ByName<Vec<String>>,
    /// The loop's compaction is due (`shouldAutoCompact()`) once clearing would free this many
    /// tokens; `None`: 5% of the context window.
    pub at_least_tokens: Option<usize>,
}

impl Default for ClearingRules {
    fn default() -> Self {
        ClearingRules {
            keep_iterations: None,
            above_tokens: 400,
            tools: ByName::default(),
            keep_fields: ByName::default(),
            at_least_tokens: None,
        }
    }
}

json_record! {
    read ClearingRules [deny defaults] {
        keep_iterations: "keepIterations" opt,
        above_tokens: "aboveTokens" fallback,
        tools: "tools" fallback,
        keep_fields: "keepFields" fallback,
        at_least_tokens: "atLeastTokens" opt,
    }
}

/// The `clearing` option: off, or on with its rules.
#[derive(Debug, Clone, PartialEq)]
pub enum Clearing {
    /// `false`: no entry is cleared; every compaction summarises.
    Off,
    /// An object of rules (`true` takes the defaults).
    On(ClearingRules),
}

/// When `atLeastTokens` is not given, the loop's compaction is due for a clearing once it frees
/// one part in this many of the context window (5%).
pub const CLEARING_DUE_PARTS: usize = 20;

/// When `keepIterations` is not given, at most this many of the newest iterations keep their
/// bodies whole.
pub const KEEP_AT_MOST: u32 = 3;

impl ClearingRules {
    /// The tokens a clearing frees at least before the loop's compaction is due for it, in a
    /// window of `window_tokens`.
    pub fn due_at(&self, window_tokens: usize) -> usize {
        self.at_least_tokens
            .unwrap_or(window_tokens / CLEARING_DUE_PARTS)
    }
}

impl Clearing {
    /// The rules, when clearing is on.
    pub fn rules(&self) -> Option<&ClearingRules> {
        match self {
            Clearing::Off => None,
            Clearing::On(rules) => Some(rules),
        }
    }
}

impl Default for Clearing {
    fn default() -> Self {
        Clearing::On(ClearingRules::default())
    }
}

impl FromJson for Clearing {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        match json {
            "false" => Ok(Clearing::Off),
            _ => {
                Object::read(json).map_err(|_| ReadError::invalid(json, "false or an object"))?;
                ClearingRules::from_json(json).map(Clearing::On)
            }
        }
    }
}

impl OptionValue for Clearing {
    fn in_range(&self, _: &Range) -> bool {
        self.rules()
            .and_then(|rules| rules.keep_iterations)
            .is_none_or(|keep| keep >= 1)
    }
    fn shown(&self) -> String {
        String::from("on: `keepIterations` by tokens, `aboveTokens` 400")
    }
}

/// The rung of the ladder a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rung {
    /// Bulky bodies of older iterations moved to an archive, no model call.
    Clear,
    /// A summary of iterations 1..N-1 (after any clearing).
    #[default]
    Summarize,
    /// The package's own summary of iterations 1..N-1, stored when every attempt of the model
    /// failed; the next compaction whose model answers replaces it.
    Fallback,
}

json_names! {
    Rung {
        Clear = "clear",
        Summarize = "summarize",
        Fallback = "fallback",
    }
}

/// One body a clearing moved to its archive.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClearedBody {
    /// The iteration of its entry.
    pub iteration: u32,
    /// The entry's id (empty when it has none).
    pub entry_id: String,
    /// Tokens the live logs lost: the entry's, less its placeholder's.
    pub tokens: usize,
}

json_record! {
    read write ClearedBody {
        iteration: "iteration" req,
        entry_id: "entryId" req,
        tokens: "tokens" req,
    }
}
