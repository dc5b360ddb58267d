//! The storage port over `window.localStorage`.
//!
//! Every call is fallible: localStorage can be missing (workers), blocked (privacy settings)
//! or full, and none of that may become a panic.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::JsString;

use super::lone_surrogates;
use wasm_bindgen::prelude::*;

use super::js_error::thrown_message;
use super::text_cache;
use crate::core::error::StorageError;
use crate::core::order::sorted_map::SortedMap;
use crate::core::ports::storage::KeyValueStore;
use crate::core::ports::storage::{utf16_units, LOCAL_STORAGE_QUOTA_UNITS};

/// `window.localStorage`, obtained once; or a store in this page's memory, for the logs a
/// `MessageCompactor` writes from the app's list before each question (the list is the app's
/// to keep; its archives still go to IndexedDB).
#[derive(Debug, Clone)]
pub struct BrowserStorage {
    storage: Option<web_sys::Storage>,
    memory: Rc<RefCell<SortedMap<String, String>>>,
}

impl BrowserStorage {
    /// The host's `globalThis.localStorage` (a page's; in Node, one the app gave it), or why it
    /// cannot be used. Its methods are called by name, so a `Storage` of another make serves.
    pub fn local() -> Result<Self, StorageError> {
        let global = js_sys::global();
        match js_sys::Reflect::get(&global, &JsValue::from_str("localStorage")) {
            Ok(storage) if storage.is_object() => Ok(Self {
                storage: Some(storage.unchecked_into()),
                memory: Rc::default(),
            }),
            Ok(_) => Err(StorageError::Unavailable {
                reason: "this host provides no localStorage (in Node, give \
                         globalThis.localStorage a Storage)"
                    .into(),
            }),
            Err(err) => Err(StorageError::Unavailable {
                reason: thrown_message(&err),
            }),
        }
    }

    /// A store in this page's memory, empty.
    pub fn memory() -> Self {
        Self {
            storage: None,
            memory: Rc::default(),
        }
    }
}

#[wasm_bindgen]
extern "C" {
    /// A `Storage` whose values cross into wasm as JavaScript strings, unconverted, so that
    /// [`text_cache`] can recognise a text it already holds.
    #[wasm_bindgen(js_name = Storage)]
    type StorageOfStrings;

    #[wasm_bindgen(method, catch, js_name = getItem)]
    fn get_item(this: &StorageOfStrings, key: &str) -> Result<Option<JsString>, JsValue>;

    #[wasm_bindgen(method, catch, js_name = setItem)]
    fn set_item(this: &StorageOfStrings, key: &str, value: &JsString) -> Result<(), JsValue>;
}

/// Whether `err` is a full storage in any engine's words: the standard `QuotaExceededError`,
/// Firefox's `NS_ERROR_DOM_QUOTA_REACHED`, or either's code alone (22, which WebKit's older
/// `QUOTA_EXCEEDED_ERR` also carries; 1014).
fn is_quota_error(err: &JsValue) -> bool {
    let name = js_sys::Reflect::get(err, &"name".into())
        .ok()
        .and_then(|name| name.as_string());
    let code = js_sys::Reflect::get(err, &"code".into())
        .ok()
        .and_then(|code| code.as_f64());
    name.is_some_and(|name| name == "QuotaExceededError" || name == "NS_ERROR_DOM_QUOTA_REACHED")
        || code.is_some_and(|code| code == 22.0 || code == 1014.0)
}

fn unavailable(err: JsValue) -> StorageError {
    StorageError::Unavailable {
        reason: thrown_message(&err),
    }
}

impl KeyValueStore for BrowserStorage {
    fn get(&self, key: &str) -> Result<Option<String>, StorageError> {
        let Some(storage) = &self.storage else {
            return Ok(self.memory.borrow().get(key).cloned());
        };
        let of_strings: &StorageOfStrings = storage.unchecked_ref();
        let value = of_strings.get_item(key).map_err(unavailable)?;
        Ok(value.map(|js| text_cache::text_of(key, &js)))
    }

    fn set(&self, key: &str, value: &str) -> Result<(), StorageError> {
        let Some(storage) = &self.storage else {
            self.memory
                .borrow_mut()
                .insert(key.to_owned(), value.to_owned());
            return Ok(());
        };
        let js = lone_surrogates::to_js(value);
        let of_strings: &StorageOfStrings = storage.unchecked_ref();
        match of_strings.set_item(key, &js) {
            Ok(()) => {
                text_cache::remember(key, &js, value);
                Ok(())
            }
            Err(err) => Err(if is_quota_error(&err) {
                StorageError::Quota {
                    key: key.to_owned(),
                    units_needed: utf16_units(key) + utf16_units(value),
                    free_units: None,
                }
            } else {
                unavailable(err)
            }),
        }
    }

    fn remove(&self, key: &str) -> Result<(), StorageError> {
        let Some(storage) = &self.storage else {
            self.memory.borrow_mut().remove(key);
            return Ok(());
        };
        text_cache::forget(key);
        storage.remove_item(key).map_err(unavailable)
    }

    fn quota_units(&self) -> Option<usize> {
        self.storage.as_ref().map(|_| LOCAL_STORAGE_QUOTA_UNITS)
    }

    fn keys(&self) -> Result<Vec<String>, StorageError> {
        let Some(storage) = &self.storage else {
            return Ok(self.memory.borrow().keys().cloned().collect());
        };
        let length = storage.length().map_err(unavailable)?;
        let mut keys = Vec::with_capacity(length as usize);
        for index in 0..length {
            if let Some(key) = storage.key(index).map_err(unavailable)? {
                keys.push(key);
            }
        }
        Ok(keys)
    }
}
