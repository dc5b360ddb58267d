//! The steps of one compaction, each a plain function of its inputs: the rules that allow it,
//! the selection of iterations 1..N-1, its digest, the ledger, the prompt, the check of a
//! summary, and the swap.

pub mod answer;
pub mod answer_text;
pub mod check;
pub mod clearing;
pub mod digest;
pub mod fit;
pub mod index;
pub mod item_search;
pub mod junk;
pub mod label;
pub mod ledger;
pub mod own_figures;
pub mod parts;
pub mod prompt;
pub mod provenance;
pub mod repair;
pub mod rest;
pub mod rules;
pub mod salvage;
pub mod selection;
pub mod summary_budget;
pub mod swap;
pub mod term_search;
pub mod terms;
pub mod tiers;
pub mod user_words;
pub mod validation;
pub mod verify;
