//! The values a compaction is made of and reports, shared by every wing above: the settings and
//! trigger, one value per log, the outcome, token usage, phases, the facts a summary must keep, and the reasons a
//! compaction stops. Plain data with no I/O; it imports nothing else of the core.

pub mod call_options;
pub mod clearing;
pub mod facts;
pub mod fallback;
pub mod option_rows;
pub mod outcome;
pub mod per_log;
pub mod phase;
pub mod reasons;
pub mod set_aside;
pub mod settings;
pub mod token_usage;
pub mod user_items;
