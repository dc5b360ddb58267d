//! The ports of the outside world below the pipeline: the traits the browser layer implements
//! (and the tests replace), with the values that cross them. The summary provider's port is
//! `providers::port`: its request is made of the steps' values.
//!
//! | port | browser implementation |
//! | --- | --- |
//! | [`storage::KeyValueStore`] | `localStorage` |
//! | [`archive_store::ArchiveStore`] | IndexedDB, copied in memory |
//! | [`clock::Clock`] | `Date.now()` |
//! | [`timer::Timer`] | `setTimeout` |
//! | [`events::EventSink`] | an `EventTarget` |
//! | [`store_lock::StoreLock`] | a Web Lock plus a write number in IndexedDB |
//! | [`usage::UsageMeasure`] | the app's `promptTokens()` |
//! | [`cancel::Cancel`] | tripped by the app's `AbortSignal` or `abort()` |

pub mod archive_store;
pub mod cancel;
pub mod clock;
pub mod events;
pub mod storage;
pub mod store_lock;
pub mod timer;
pub mod usage;
