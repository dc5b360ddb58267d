//! The orchestrator: one [`compactor::Compactor`] drives a compaction through the steps, holds
//! the per-run state, the cross-tab lease and the journal, and recovers or rolls back.

pub mod cancel;
pub mod compactor;
pub mod settings;
