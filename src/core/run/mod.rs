//! The orchestrator: one [`compactor::Compactor`] drives a compaction through the steps and the
//! store's protocols, and recovers or rolls back.

pub mod compactor;
