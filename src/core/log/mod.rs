//! The log model: what the app's entries are (kept as the exact JSON text it stored), which
//! iteration each belongs to, and what they cost in tokens. Knows no storage key.

pub mod entries;
pub mod entry_facts;
pub mod ids;
pub mod iteration;
pub mod new_entries;
pub mod placement;
pub mod stored_entry;
pub mod stored_json;
pub mod tokens;
