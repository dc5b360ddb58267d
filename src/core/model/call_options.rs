//! The small values the JavaScript calls take and give besides the settings: the options of
//! `new LogStore()`, `compact()`, `rehydrate()` and `recallTool()`, and what `canCompact()`
//! answers.

use crate::core::json::record::{json_names, json_record};
use crate::core::model::clearing::Rung;
use crate::core::model::option_rows::Range;
use crate::core::model::outcome::Wait;
use crate::core::model::settings::Trigger;

/// `CompactorOptions.provider`, which the web layer reads before the settings
/// ([`CompactorSettings`](super::settings::CompactorSettings)) are read from the rest.
pub const PROVIDER_OPTION: &str = "provider";

/// `CompactorOptions.promptTokens`, the app's own token count, read by the web layer like the
/// provider.
pub const PROMPT_TOKENS_OPTION: &str = "promptTokens";

/// The `AbortSignal` JavaScript passes beside the options of `compact()` and the settings a
/// custom provider gets.
pub const SIGNAL_OPTION: &str = "signal";

/// Options of `new LogStore()` (`LogStoreOptions`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogStoreOptions {
    /// Prefix of every key; the default when absent.
    pub prefix: Option<String>,
}

json_record! {
    read LogStoreOptions [deny] {
        prefix: "prefix" opt,
    }
}

/// Options of `compact()` (`CompactOptions`), less the abort signal JavaScript passes beside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CompactOptions {
    /// What started the compaction.
    pub trigger: Trigger,
    /// The one rung to run, if asked for.
    pub rung: Option<AskedRung>,
    /// Whether `compact()` resolves as the summary is asked for, the loop going on meanwhile
    /// (see [`Claim::in_background`](crate::core::run::compactor::Claim::in_background)).
    pub background: bool,
}

/// The rungs `compact({ rung })` runs alone (the fallback rung runs only when the model fails).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskedRung {
    /// `"clear"`.
    Clear,
    /// `"summarize"`.
    Summarize,
}

json_names! {
    AskedRung {
        Clear = "clear",
        Summarize = "summarize",
    }
}

impl From<AskedRung> for Rung {
    fn from(asked: AskedRung) -> Self {
        match asked {
            AskedRung::Clear => Rung::Clear,
            AskedRung::Summarize => Rung::Summarize,
        }
    }
}

json_record! {
    read CompactOptions [deny] {
        trigger: "trigger" default,
        rung: "rung" opt,
        background: "background" default,
    }
}

/// The range of a token budget a call takes (`budgetTokens`, `maxTokens`) and of an iteration
/// number asked for (`recall(iteration)`).
pub const FROM_ONE: Range = Range::AtLeast(1);

/// Options of `rehydrate(text, options)` (`RehydrateOptions`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RehydrateOptions {
    /// The tokens the originals take at most (a whole number from 1, checked where the
    /// option is read); the default when absent.
    pub budget_tokens: Option<f64>,
}

json_record! {
    read RehydrateOptions [deny] {
        budget_tokens: "budgetTokens" opt,
    }
}

/// Options of `recallTool(options)` (`RecallToolOptions`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RecallToolOptions {
    /// The tokens an answer takes at most (a whole number from 1, checked where the option
    /// is read); the default when absent.
    pub max_tokens: Option<f64>,
}

json_record! {
    read RecallToolOptions [deny] {
        max_tokens: "maxTokens" opt,
    }
}

/// What `canCompact()` answers (`CanCompactResult`).
#[derive(Debug, Clone, PartialEq)]
pub struct CanCompact {
    /// Whether a compaction the user asks for would go ahead now.
    pub ok: bool,
    /// Why not, when it would not.
    pub reason: Option<String>,
    /// The running iteration a compaction would wait for.
    pub waits_for: Option<Wait>,
}

json_record! {
    write CanCompact {
        ok: "ok" req,
        reason: "reason" opt,
        waits_for: "waitsFor" opt,
    }
}
