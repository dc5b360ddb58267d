//! context-compactor: compacts the reasoning, execution and tool logs that a browser LLM loop
//! keeps in localStorage.
//!
//! [`core`] holds every rule in plain Rust behind small ports (storage, clock); [`web`] wires the
//! browser implementations of those ports and exposes the `#[wasm_bindgen]` API described in the
//! README.
#![warn(missing_docs)]

pub mod core;
pub mod web;
