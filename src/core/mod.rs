//! The pure-Rust core: no JavaScript, no browser. Everything here runs under plain `cargo test`.

pub mod clock;
pub mod entries;
pub mod error;
pub mod ids;
pub mod iteration;
pub mod keys;
pub mod log_store;
pub mod storage;
pub mod stored_json;
pub mod tokens;

pub use clock::{Clock, ManualClock};
pub use entries::{ExecutionEntry, ExecutionInput, ToolActivityEntry, ToolActivityInput};
pub use error::{ErrorCode, StorageError};
pub use keys::StorageKeys;
pub use log_store::LogStore;
pub use storage::{KeyValueStore, MemoryStore};
