//! The steps of one compaction, each a plain function of its inputs: the rules that allow it,
//! the selection of iterations 1..N-1, the prompt, the validation of a summary, the swap, and
//! the values a compaction reports (phases, outcome).

pub mod ledger;
pub mod outcome;
pub mod phase;
pub mod prompt;
pub mod rules;
pub mod selection;
pub mod swap;
pub mod validation;
