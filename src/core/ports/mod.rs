//! Every port of the core in one place: the traits the browser layer implements (and the tests
//! replace), with the values that cross them.
//!
//! | port | browser implementation |
//! | --- | --- |
//! | [`KeyValueStore`] | `localStorage` |
//! | [`Clock`] | `Date.now()` |
//! | [`Timer`] | `setTimeout` |
//! | [`SummaryProvider`] | Gemini over `fetch`, the app's `generate` |
//! | [`EventSink`] | an `EventTarget` |
//! | [`StoreLock`] | a Web Lock plus a write number in IndexedDB |
//! | [`UsageMeasure`] | the app's `promptTokens()` |

pub mod clock;
pub mod events;
pub mod provider;
pub mod storage;
pub mod store_lock;
pub mod usage;

pub use clock::Clock;
pub use events::EventSink;
pub use provider::{SummaryProvider, Timer};
pub use storage::KeyValueStore;
pub use store_lock::StoreLock;
pub use usage::UsageMeasure;
