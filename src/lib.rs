//! context-compactor: compacts the reasoning, execution and tool logs that a browser LLM loop
//! keeps in localStorage.
//!
//! `core` holds every rule in plain Rust behind small ports (storage, clock, timer, provider,
//! events, the store lock) and depends on no JavaScript crate; `web` (the default `web` feature)
//! wires the browser implementations of those ports and exposes the `#[wasm_bindgen]` API
//! described in the README. See ARCHITECTURE.md.
#![warn(missing_docs)]

pub mod core;
#[cfg(feature = "web")]
pub mod web;
