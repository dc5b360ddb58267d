//! The archive store port over IndexedDB (`archive_database.js`): the archives of every prefix
//! in one object store, listed in memory so that the core reads them synchronously. The copy
//! lists every key and holds only the texts an operation fetched (and the writes not yet
//! committed); its list is brought up to date only when another writer raised the database's
//! generation, and a commit writes the keys changed since the last one in a single
//! transaction. The texts are JavaScript strings: wasm memory, which never shrinks, holds an
//! archive only while it is read or until its write is committed.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, JsString};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::js_error::thrown_message;
use super::lone_surrogates;
use super::storage_estimate::storage_estimate;
use crate::core::error::StorageError;
use crate::core::order::sorted_map::SortedMap;
use crate::core::ports::archive_store::{unfetched, ArchiveStore, StorageEstimate};
use crate::core::ports::storage::KeyValueStore;
use crate::core::ports::timer::LocalBoxFuture;

#[wasm_bindgen(module = "/src/web/archive_database.js")]
extern "C" {
    #[wasm_bindgen(js_name = archiveDatabaseAvailable)]
    fn archive_database_available() -> bool;
    #[wasm_bindgen(js_name = loadArchives)]
    fn load_archives(known: f64, prefix: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = fetchArchives)]
    fn fetch_archives(keys: Array) -> js_sys::Promise;
    #[wasm_bindgen(js_name = commitArchives)]
    fn commit_archives(known: f64, keys: Array, values: Array) -> js_sys::Promise;
    #[wasm_bindgen(js_name = readCommitted)]
    fn read_committed(key: &str) -> js_sys::Promise;
}

/// The generation of a copy that was never loaded (the database's start at 0).
const NEVER_LOADED: f64 = -1.0;

/// The archives in IndexedDB under one key prefix, as this compactor last read them plus its
/// uncommitted writes.
#[derive(Clone)]
pub struct ArchiveDatabase {
    prefix: Rc<str>,
    copy: Rc<RefCell<DatabaseCopy>>,
}

struct DatabaseCopy {
    /// The database's generation this copy shows.
    generation: f64,
    /// Every key, with its text once fetched or written.
    entries: SortedMap<String, Option<Text>>,
    /// Keys written or removed since the last commit.
    pending: SortedMap<String, ()>,
    /// Keys whose texts a `get` lacked since the core last asked.
    unfetched: Vec<String>,
}

impl ArchiveDatabase {
    /// Whether this browser has IndexedDB.
    pub fn available() -> bool {
        archive_database_available()
    }

    /// The archives under `prefix` in the database, when this browser provides IndexedDB.
    pub fn open(prefix: &str) -> Option<Self> {
        archive_database_available().then(|| Self {
            prefix: Rc::from(prefix),
            copy: Rc::new(RefCell::new(DatabaseCopy {
                generation: NEVER_LOADED,
                entries: SortedMap::new(),
                pending: SortedMap::new(),
                unfetched: Vec::new(),
            })),
        })
    }
}

fn failed(err: &JsValue) -> StorageError {
    let quota = js_sys::Reflect::get(err, &"quota".into()).is_ok_and(|quota| quota.is_truthy());
    StorageError::ArchiveDatabase {
        reason: thrown_message(err),
        quota,
    }
}

/// An archive's text in the copy: a JavaScript string (as the database gave it, or as this
/// copy committed it), converted each time it is read; or written here and not committed yet;
/// or a stored value that does not decompress, and why.
enum Text {
    Loaded(JsString),
    Written(String),
    Damaged(String),
}

fn field(object: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(object, &name.into()).unwrap_or(JsValue::UNDEFINED)
}

fn text_of(value: JsValue) -> Option<String> {
    value
        .dyn_into::<JsString>()
        .ok()
        .map(|js| lone_surrogates::from_js(&js))
}

impl KeyValueStore for ArchiveDatabase {
    fn get(&self, key: &str) -> Result<Option<String>, StorageError> {
        let mut copy = self.copy.borrow_mut();
        match copy.entries.get(key) {
            None => Ok(None),
            Some(Some(Text::Written(text))) => Ok(Some(text.clone())),
            Some(Some(Text::Loaded(js))) => Ok(Some(lone_surrogates::from_js(js))),
            Some(Some(Text::Damaged(reason))) => Err(StorageError::Corrupt {
                key: key.to_owned(),
                reason: reason.clone(),
            }),
            Some(None) => {
                copy.unfetched.push(key.to_owned());
                Err(unfetched(key))
            }
        }
    }

    fn contains(&self, key: &str) -> Result<bool, StorageError> {
        Ok(self.copy.borrow().entries.get(key).is_some())
    }

    fn set(&self, key: &str, value: &str) -> Result<(), StorageError> {
        let mut copy = self.copy.borrow_mut();
        copy.entries
            .insert(key.to_owned(), Some(Text::Written(value.to_owned())));
        copy.pending.insert(key.to_owned(), ());
        Ok(())
    }

    fn remove(&self, key: &str) -> Result<(), StorageError> {
        let mut copy = self.copy.borrow_mut();
        copy.entries.remove(key);
        copy.pending.insert(key.to_owned(), ());
        Ok(())
    }

    fn keys(&self) -> Result<Vec<String>, StorageError> {
        Ok(self.copy.borrow().entries.keys().cloned().collect())
    }
}

impl ArchiveStore for ArchiveDatabase {
    fn refresh(&self) -> LocalBoxFuture<'static, Result<(), StorageError>> {
        let (copy, prefix) = (Rc::clone(&self.copy), Rc::clone(&self.prefix));
        Box::pin(async move {
            // Uncommitted writes stay until their commit, which reloads when it fails.
            if !copy.borrow().pending.is_empty() {
                return Ok(());
            }
            let known = copy.borrow().generation;
            let loaded = JsFuture::from(load_archives(known, &prefix))
                .await
                .map_err(|err| failed(&err))?;
            if loaded.is_null() || loaded.is_undefined() {
                return Ok(());
            }
            let keys: Array = field(&loaded, "keys").unchecked_into();
            let entries = keys
                .iter()
                .filter_map(|key| Some((key.as_string()?, None)))
                .collect();
            let mut copy = copy.borrow_mut();
            if copy.pending.is_empty() {
                copy.entries = entries;
                copy.generation = field(&loaded, "generation")
                    .as_f64()
                    .unwrap_or(NEVER_LOADED);
            }
            Ok(())
        })
    }

    fn commit(&self) -> LocalBoxFuture<'static, Result<(), StorageError>> {
        let this = self.clone();
        Box::pin(async move {
            let (keys, values, known) = {
                let mut copy = this.copy.borrow_mut();
                let pending = std::mem::take(&mut copy.pending);
                let (keys, values) = (Array::new(), Array::new());
                for (key, ()) in pending {
                    let value = match copy.entries.get_mut(&key) {
                        Some(Some(text)) => {
                            // From here the copy holds the string the database gets.
                            let js = match text {
                                Text::Written(written) => lone_surrogates::to_js(written),
                                Text::Loaded(js) => js.clone(),
                                Text::Damaged(_) => continue,
                            };
                            *text = Text::Loaded(js.clone());
                            js.into()
                        }
                        // A text never fetched here is not this copy's to write.
                        Some(None) => continue,
                        None => JsValue::NULL,
                    };
                    keys.push(&key.into());
                    values.push(&value);
                }
                (keys, values, copy.generation)
            };
            if keys.length() == 0 {
                return Ok(());
            }
            let committed = JsFuture::from(commit_archives(known, keys, values)).await;
            this.copy.borrow_mut().generation = match &committed {
                // Another writer committed in between: read everything again next time.
                Ok(done) if field(done, "stale").is_truthy() => NEVER_LOADED,
                Ok(done) => field(done, "generation").as_f64().unwrap_or(NEVER_LOADED),
                Err(_) => NEVER_LOADED,
            };
            if let Err(err) = committed {
                // None of the writes is stored: the copy goes back to what the database holds.
                let _ = this.refresh().await;
                return Err(failed(&err));
            }
            Ok(())
        })
    }

    fn read_committed(
        &self,
        key: &str,
    ) -> LocalBoxFuture<'static, Result<Option<String>, StorageError>> {
        let reading = JsFuture::from(read_committed(key));
        Box::pin(async move {
            let value = reading.await.map_err(|err| failed(&err))?;
            Ok(match field(&value, "damaged").is_string() {
                true => Some(String::new()),
                false => text_of(value),
            })
        })
    }

    fn fetch(&self, keys: Vec<String>) -> LocalBoxFuture<'static, Result<(), StorageError>> {
        let copy = Rc::clone(&self.copy);
        let wanted: Array = {
            let copy = copy.borrow();
            keys.iter()
                .filter(|key| matches!(copy.entries.get(key.as_str()), Some(None)))
                .map(|key| JsValue::from(key.as_str()))
                .collect()
        };
        Box::pin(async move {
            if wanted.length() == 0 {
                return Ok(());
            }
            let values: Array = JsFuture::from(fetch_archives(wanted.clone()))
                .await
                .map_err(|err| failed(&err))?
                .unchecked_into();
            let mut copy = copy.borrow_mut();
            for (key, value) in wanted.iter().zip(values.iter()) {
                let Some(key) = key.as_string() else { continue };
                // Only a text still unfetched here: a write since the request wins.
                let Some(entry @ None) = copy.entries.get_mut(&key) else {
                    continue;
                };
                let damaged = field(&value, "damaged").as_string();
                match value.dyn_into::<JsString>() {
                    Ok(js) => *entry = Some(Text::Loaded(js)),
                    Err(_) => match damaged {
                        Some(reason) => *entry = Some(Text::Damaged(reason)),
                        // Another tab removed it since this copy was listed.
                        None => {
                            copy.entries.remove(&key);
                        }
                    },
                }
            }
            Ok(())
        })
    }

    fn release(&self, keep: &[String]) {
        let mut copy = self.copy.borrow_mut();
        let DatabaseCopy {
            entries, pending, ..
        } = &mut *copy;
        for (key, text) in entries.iter_mut() {
            if pending.get(key).is_none() && !keep.contains(key) {
                *text = None;
            }
        }
    }

    fn take_unfetched(&self) -> Vec<String> {
        std::mem::take(&mut self.copy.borrow_mut().unfetched)
    }

    /// `navigator.storage.estimate()`: `None` where the browser has none or knows no quota.
    fn estimate(&self) -> LocalBoxFuture<'static, Option<StorageEstimate>> {
        Box::pin(async {
            let estimate = JsFuture::from(storage_estimate()).await.ok()?;
            let number = |name| field(&estimate, name).as_f64().unwrap_or(0.0);
            let (usage, quota) = (number("usage"), number("quota"));
            (quota > 0.0).then_some(StorageEstimate { usage, quota })
        })
    }
}
