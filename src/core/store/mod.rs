//! The store: the only code that knows key names. The three logs (`log_store`), and the
//! protocols of the package's own keys, each owning its keys and its I/O: the journal, the
//! lease, the archives and the metrics.

pub mod archive_digests;
pub mod archive_record;
pub mod archives;
pub mod journal;
pub mod keys;
pub mod last_compaction;
pub mod lease;
pub mod log_store;
pub mod metrics;
pub mod migration;
pub mod originals;
pub mod page;
pub mod raw_logs;
pub mod recall_tool;
pub mod rehydrate;
pub mod shelf;
pub mod stored_json;
pub mod summary_cache;
