//! The pure-Rust core: no JavaScript, no browser. Everything here runs under plain `cargo test`.

pub mod archive;
pub mod clock;
pub mod compactor;
pub mod entries;
pub mod error;
pub mod events;
pub mod gemini;
pub mod ids;
pub mod iteration;
pub mod journal;
pub mod keys;
pub mod lease;
pub mod log_store;
pub mod metrics;
pub mod offline;
pub mod outcome;
pub mod phase;
pub mod prompt;
pub mod provider;
pub mod rules;
pub mod selection;
pub mod settings;
pub mod storage;
pub mod stored_json;
pub mod swap;
pub mod tokens;
pub mod validation;

pub use clock::{Clock, ManualClock};
pub use compactor::Compactor;
pub use entries::{ExecutionEntry, ExecutionInput, ToolActivityEntry, ToolActivityInput};
pub use error::{CompactionError, ErrorCode, StorageError};
pub use keys::StorageKeys;
pub use log_store::LogStore;
pub use settings::{CompactorSettings, Trigger};
pub use storage::{KeyValueStore, MemoryStore};
