//! Where summaries come from: the provider port ([`port::SummaryProvider`]), the built-in
//! offline summariser and the Gemini protocol (request bodies per model family, the reading of
//! replies).

pub mod attempts;
pub mod gemini;
pub mod offline;
pub mod parts;
pub mod port;
