//! The log model: what the app's entries are (kept as the exact JSON text it stored), which
//! iteration each belongs to, a snapshot of the three logs, and what they cost in tokens.
//! Knows no storage key.

pub mod entries;
pub mod entry_facts;
pub mod ids;
pub mod iteration;
pub mod new_entries;
pub mod placement;
pub mod reasoning_entry;
pub mod snapshot;
pub mod stored_entry;
pub mod text_hash;
pub mod tokens;
