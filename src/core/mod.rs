//! The pure-Rust core: no JavaScript, no browser. Everything here runs under plain `cargo test`
//! (`--no-default-features`: not even the JS crates are built).
//!
//! It is cut into wings, bottom to top; a file imports only from its own wing and the wings
//! below it (`tests/layering.rs` holds the table and fails on anything else, and on any import
//! cycle between files). ARCHITECTURE.md has the map.
//!
//! 0. [`json`]: JSON text read as spans and written field by field;
//! 1. [`model`]: the values every step shares (settings, outcome, facts, phases, reasons);
//! 2. [`error`]: typed errors and their stable codes;
//! 3. [`log`]: what an entry, an iteration and a snapshot of the logs are;
//! 4. [`ports`]: the traits of the outside world (storage, clock, timer, events, lock, usage);
//! 5. [`steps`]: the steps of one compaction as functions of their inputs;
//! 6. [`store`]: every key name and the protocols that read and write them;
//! 7. [`providers`]: the summary provider port and where summaries come from;
//! 8. [`run`]: the orchestrator.

pub mod error;
pub mod json;
pub mod log;
pub mod model;
pub mod ports;
pub mod providers;
pub mod run;
pub mod steps;
pub mod store;
