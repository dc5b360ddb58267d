//! The store lock port over Web Locks and IndexedDB (see `store_lock.js` for why both).

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::js_error::thrown_message;
use crate::core::error::StorageError;
use crate::core::ports::store_lock::{LockHeld, StoreLock};
use crate::core::ports::timer::LocalBoxFuture;
use crate::core::store::keys::StorageKeys;

#[wasm_bindgen(module = "/src/web/store_lock.js")]
extern "C" {
    #[wasm_bindgen(js_name = acquireStoreLock)]
    fn acquire_store_lock(name: &str, version_key: &str) -> js_sys::Promise;
}

/// The lock every tab of the origin takes before it changes the keys under one prefix.
#[derive(Debug, Clone)]
pub struct BrowserStoreLock {
    name: String,
    version_key: String,
}

impl BrowserStoreLock {
    /// The lock over `keys`.
    pub fn over(keys: &StorageKeys) -> Self {
        Self {
            name: keys.lock_name(),
            version_key: keys.store_version(),
        }
    }
}

impl StoreLock for BrowserStoreLock {
    fn acquire(&self) -> LocalBoxFuture<'static, Result<LockHeld, StorageError>> {
        let acquiring = JsFuture::from(acquire_store_lock(&self.name, &self.version_key));
        Box::pin(async move {
            let release = acquiring.await.map_err(|err| StorageError::Unavailable {
                reason: format!("the cross-tab lock was refused: {}", thrown_message(&err)),
            })?;
            let release: js_sys::Function = release.unchecked_into();
            Ok(LockHeld::new(move || {
                // Releasing only writes a number and ends the lock's callback.
                let _ = release.call0(&JsValue::NULL);
            }))
        })
    }
}
