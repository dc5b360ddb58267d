//! The facts a summary must keep, as values: each fact, the app's pins, the ledger of one
//! compaction, the coverage a summary achieved and the lines it could not back. `steps::ledger` draws and checks them.

use crate::core::json::record::{json_names, json_record};

/// What kind of fact a ledger line is, which decides how it is drawn and carried forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactKind {
    /// The session's query, or the goal its first iteration states.
    Goal,
    /// The final value of a successful computation (the last success of its task).
    Result,
    /// A failure no later iteration resolved.
    Failure,
    /// An id, file name, URL or number that iteration N refers to and 1..N-1 defined.
    Identifier,
    /// A fact the app pinned (`LogStore.pin`).
    Pin,
}

/// One fact a summary must keep: its text, and the terms that show it was kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// Stable across compactions: `goal`, `result:<task>`, `failure:<subject>`,
    /// `identifier:<token>`, `pin:<id>`.
    pub id: String,
    /// What kind of fact it is.
    pub kind: FactKind,
    /// The fact as the prompt lists it and a person reads it.
    pub text: String,
    /// Numbers and identifiers that must appear exactly (digit-group commas ignored).
    pub exact: Vec<String>,
    /// Key words of a text fact; at least half must appear (any case).
    pub words: Vec<String>,
    /// The iterations whose originals hold it (first, last), where known: what `recall` is
    /// asked for once the fact has left the summary for its index.
    pub iterations: Option<[u32; 2]>,
}

/// A fact the app pinned: every later summary must keep it until it is unpinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// The id `pin()` returned.
    pub id: String,
    /// The fact, as the app wrote it.
    pub text: String,
}

impl Pin {
    /// The longest fact `pin()` takes, in characters: every later summary must hold it.
    pub const MAX_CHARS: usize = 1_000;

    /// Whether `text` can be pinned: 1 to [`Pin::MAX_CHARS`] characters once trimmed.
    pub fn check_text(text: &str) -> Result<(), PinTextError> {
        let length = text.trim().chars().count();
        if length == 0 || length > Pin::MAX_CHARS {
            return Err(PinTextError { length });
        }
        Ok(())
    }
}

/// A text `pin()` refuses: empty, or longer than [`Pin::MAX_CHARS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinTextError {
    /// Its length in characters, trimmed.
    pub length: usize,
}

impl std::fmt::Display for PinTextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "must hold 1 to {} characters, not {}",
            Pin::MAX_CHARS,
            self.length
        )
    }
}

impl std::error::Error for PinTextError {}

/// The facts one compaction's summary must keep, in the order the prompt lists them, and
/// those that leave the summary for its index (see `steps::tiers`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    /// The facts the summary must keep.
    pub facts: Vec<Fact>,
    /// The facts that leave the summary with this compaction: its archive holds them, and an
    /// index line points there.
    pub demoted: Vec<Fact>,
    /// The summary's index lines: where everything that left it earlier, and now, is.
    pub index: Vec<IndexLine>,
}

/// What the earlier summaries of a selection carry into its compaction, read from their
/// archives: the facts they had to keep, and their index lines (naming those archives).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Carried {
    /// The facts.
    pub facts: Vec<Fact>,
    /// The index lines.
    pub index: Vec<IndexLine>,
}

/// One line of a summary's index: a range of iterations whose facts left the summary, the
/// archive that holds them, and what is there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexLine {
    /// The first iteration of the range.
    pub first: u32,
    /// The last iteration of the range.
    pub last: u32,
    /// The archive that holds them; `None` in an archive's own record: that archive.
    pub archive: Option<String>,
    /// The newest archive of a line folded from several (the oldest is `archive`).
    pub last_archive: Option<String>,
    /// Results that left.
    pub results: usize,
    /// Failures that a later iteration resolved.
    pub failures_resolved: usize,
    /// Failures still open that the budget could not hold.
    pub failures_open: usize,
    /// Identifiers the current iteration no longer refers to.
    pub identifiers: usize,
    /// Other facts that left.
    pub others: usize,
    /// What the first and the last of them name (a task's label, an id).
    pub names: Vec<String>,
    /// The runs of iterations whose facts it counts, oldest first, when they are not the one
    /// run `first..=last` (empty then): its recall asks for these and no other.
    pub spans: Vec<[u32; 2]>,
    /// The open failures it counts, each named with its iteration: `readMetrics(shard_5) (5)`.
    pub open: Vec<String>,
}

/// A fact that left the summary for its index, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Demoted {
    /// The fact, as the ledger words it.
    pub fact: String,
    /// The iterations whose originals hold it (what `recall` is asked for).
    pub iterations: [u32; 2],
    /// The archive of the compaction it left with: it holds the fact (in the originals, or in
    /// the earlier summary that kept it).
    pub archive_key: String,
}

/// Which of the ledger's facts a summary kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Every fact the summary had to keep (their texts).
    pub required: Vec<String>,
    /// Those the model's own answer kept.
    pub kept: Vec<String>,
    /// Those the answer lacked and the package added, in the ledger's words.
    pub repaired: Vec<String>,
    /// Those the summary lost (none in a summary that was swapped in).
    pub missing: Vec<String>,
    /// Those that left the summary for its index with this compaction.
    pub demoted: Vec<Demoted>,
}

impl Coverage {
    /// This coverage with the facts that left the summary held by the archive under `key`
    /// (the compaction's own, chosen after the summary was checked).
    pub fn in_archive(&self, key: &str) -> Coverage {
        let mut coverage = self.clone();
        for demoted in &mut coverage.demoted {
            demoted.archive_key = key.to_owned();
        }
        coverage
    }
}

/// A line of a summary that names what none of the compaction's sources holds: a number, id,
/// file name or URL found nowhere in the compacted originals, earlier summaries, pins or ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnverifiedLine {
    /// The line as the model wrote it.
    pub line: String,
    /// What it names that no source holds, in the order it names them.
    pub items: Vec<String>,
}

json_names! {
    FactKind {
        Goal = "goal",
        Result = "result",
        Failure = "failure",
        Identifier = "identifier",
        Pin = "pin",
    }
}

json_record! {
    read write Fact {
        id: "id" req,
        kind: "kind" req,
        text: "text" req,
        exact: "exact" req,
        words: "words" req,
        iterations: "iterations" opt,
    }
}

json_record! {
    read write Pin {
        id: "id" req,
        text: "text" req,
    }
}

json_record! {
    read write Coverage {
        required: "required" req,
        kept: "kept" req,
        repaired: "repaired" default,
        missing: "missing" req,
        demoted: "demoted" default,
    }
}

json_record! {
    read write UnverifiedLine {
        line: "line" req,
        items: "items" req,
    }
}

json_record! {
    read write Demoted {
        fact: "fact" req,
        iterations: "iterations" req,
        archive_key: "archiveKey" req,
    }
}

json_record! {
    read write IndexLine {
        first: "first" req,
        last: "last" req,
        archive: "archive" opt,
        last_archive: "lastArchive" opt,
        results: "results" default,
        failures_resolved: "failuresResolved" default,
        failures_open: "failuresOpen" default,
        identifiers: "identifiers" default,
        others: "others" default,
        names: "names" default,
        spans: "spans" default,
        open: "open" default,
    }
}

/// A line that gives the user words only data said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injection {
    /// The line as the summary has it, without the mark.
    pub line: String,
    /// The entry its content came from (`tool activity tool_… (iteration 2)`).
    pub source: String,
}

json_record! {
    read write Injection {
        line: "line" req,
        source: "source" req,
    }
}
