//! The orchestrator: one [`compactor::Compactor`] drives a compaction through the steps and the
//! store's protocols, and recovers or rolls back; [`view`] is what it reads before it acts.

pub mod compactor;
pub mod view;
