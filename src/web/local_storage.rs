//! The storage port over `window.localStorage`.
//!
//! Every call is fallible: localStorage can be missing (workers), blocked (privacy settings)
//! or full, and none of that may become a panic.

use wasm_bindgen::JsValue;

use super::js_error::thrown_message;
use crate::core::storage::{utf16_units, LOCAL_STORAGE_QUOTA_UNITS};
use crate::core::{KeyValueStore, StorageError};

/// `window.localStorage`, obtained once.
#[derive(Debug, Clone)]
pub struct BrowserStorage {
    storage: web_sys::Storage,
}

impl BrowserStorage {
    /// The page's localStorage, or why it cannot be used.
    pub fn local() -> Result<Self, StorageError> {
        let window = web_sys::window().ok_or_else(|| StorageError::Unavailable {
            reason: "there is no window (a worker or a non-browser host)".into(),
        })?;
        match window.local_storage() {
            Ok(Some(storage)) => Ok(Self { storage }),
            Ok(None) => Err(StorageError::Unavailable {
                reason: "the browser provides no localStorage".into(),
            }),
            Err(err) => Err(StorageError::Unavailable {
                reason: thrown_message(&err),
            }),
        }
    }
}

fn is_quota_error(err: &JsValue) -> bool {
    js_sys::Reflect::get(err, &"name".into())
        .ok()
        .and_then(|name| name.as_string())
        .is_some_and(|name| name == "QuotaExceededError" || name == "NS_ERROR_DOM_QUOTA_REACHED")
}

fn unavailable(err: JsValue) -> StorageError {
    StorageError::Unavailable {
        reason: thrown_message(&err),
    }
}

impl KeyValueStore for BrowserStorage {
    fn get(&self, key: &str) -> Result<Option<String>, StorageError> {
        self.storage.get_item(key).map_err(unavailable)
    }

    fn set(&self, key: &str, value: &str) -> Result<(), StorageError> {
        self.storage.set_item(key, value).map_err(|err| {
            if is_quota_error(&err) {
                StorageError::Quota {
                    key: key.to_owned(),
                    units_needed: utf16_units(value),
                    free_units: None,
                }
            } else {
                unavailable(err)
            }
        })
    }

    fn remove(&self, key: &str) -> Result<(), StorageError> {
        self.storage.remove_item(key).map_err(unavailable)
    }

    fn quota_units(&self) -> Option<usize> {
        Some(LOCAL_STORAGE_QUOTA_UNITS)
    }

    fn keys(&self) -> Result<Vec<String>, StorageError> {
        let length = self.storage.length().map_err(unavailable)?;
        let mut keys = Vec::with_capacity(length as usize);
        for index in 0..length {
            if let Some(key) = self.storage.key(index).map_err(unavailable)? {
                keys.push(key);
            }
        }
        Ok(keys)
    }
}
