//! The pure-Rust core: no JavaScript, no browser. Everything here runs under plain `cargo test`
//! (`--no-default-features`: not even the JS crates are built).
//!
//! It is cut into wings, bottom to top; a file imports only from its own wing and the wings
//! below it (`tests/native/layering.rs` holds the table and fails on anything else, and on any import
//! cycle between files). ARCHITECTURE.md has the map.
//!
//! 0. [`order`]: the crate's one sort;
//! 1. [`json`]: JSON text read as spans and written field by field;
//! 2. [`model`]: the values every step shares (settings, outcome, facts, phases, reasons);
//! 3. [`error`]: typed errors and their stable codes;
//! 4. [`log`]: what an entry, an iteration and a snapshot of the logs are;
//! 5. [`ports`]: the traits of the outside world (storage, clock, timer, events, lock, usage);
//! 6. [`steps`]: the steps of one compaction as functions of their inputs;
//! 7. [`store`]: every key name and the protocols that read and write them;
//! 8. [`providers`]: the summary provider port and where summaries come from;
//! 9. [`run`]: the orchestrator;
//! 10. [`messages`]: the message front, lists of messages in and out.
//!
//! Every function here reads in one screen: clippy refuses one over 100 lines.

#![warn(clippy::too_many_lines)]

pub mod error;
pub mod json;
pub mod log;
pub mod messages;
pub mod model;
pub mod order;
pub mod ports;
pub mod providers;
pub mod run;
pub mod steps;
pub mod store;
