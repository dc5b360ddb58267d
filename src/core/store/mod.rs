//! The store: the only code that knows key names — the three logs, archives, the journal, the
//! lease, the metrics — and how each is read and written.

pub mod archive;
pub mod journal;
pub mod keys;
pub mod lease;
pub mod log_store;
pub mod metrics;
pub mod snapshot;
