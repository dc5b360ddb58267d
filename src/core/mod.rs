//! The pure-Rust core: no JavaScript, no browser. Everything here runs under plain `cargo test`
//! (`--no-default-features`: not even the JS crates are built).
//!
//! It is cut into wings that read like the pipeline (ARCHITECTURE.md has the map):
//! [`log`] what an entry and an iteration are, [`store`] the only code that knows key names,
//! [`steps`] the steps of one compaction, [`providers`] where summaries come from, [`ports`]
//! the traits the browser (or a test) implements, and [`run`] the orchestrator.

pub mod error;
pub mod log;
pub mod ports;
pub mod providers;
pub mod run;
pub mod steps;
pub mod store;

// Each module stays reachable as `core::<module>`, the paths the tests and the web layer use.
pub use log::{
    entries, entry_facts, ids, iteration, new_entries, placement, stored_entry, stored_json, tokens,
};
pub use ports::{clock, events, provider, storage, store_lock, usage};
pub use providers::{gemini, offline, redact};
pub use run::{cancel, compactor, settings};
pub use steps::{ledger, outcome, phase, prompt, rules, selection, swap, validation};
pub use store::{archive, journal, keys, lease, log_store, metrics, snapshot};

#[cfg(any(test, feature = "testing"))]
pub use clock::ManualClock;
pub use compactor::Compactor;
pub use entries::{ExecutionEntry, ExecutionInput, ToolActivityEntry, ToolActivityInput};
pub use error::{CompactionError, ErrorCode, StorageError};
pub use keys::StorageKeys;
pub use log_store::LogStore;
pub use ports::{Clock, EventSink, KeyValueStore, StoreLock, SummaryProvider, Timer, UsageMeasure};
pub use settings::{CompactorSettings, Trigger};
#[cfg(any(test, feature = "testing"))]
pub use storage::MemoryStore;
