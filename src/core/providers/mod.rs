//! Where summaries come from: the built-in offline summariser and the Gemini protocol (request
//! bodies per model family, the reading of replies); plus the redaction of secrets from any
//! text a provider returns.

pub mod gemini;
pub mod offline;
pub mod redact;
