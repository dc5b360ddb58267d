//! `Archives` for JavaScript: the archives of a `LogStore` without a provider — list, read,
//! delete, purge, recall, rollback — and the storage they live in (estimate, persist). Every
//! method returns a Promise (IndexedDB answers asynchronously). Here too is the page's one
//! shelf per `LogStore` and archive place, which every `Compactor` and `Archives` over those
//! logs shares, and the archive calls both make of it.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::archive_database::ArchiveDatabase;
use super::convert::{count_arg, from_js, string_arg, to_js};
use super::js_error::{thrown_message, ContextCompactorError};
use super::log_store::{BrowserLogStore, JsLogStore};
use super::store_lock::BrowserStoreLock;
use super::typescript::ArchivesOptionsJs;
use crate::core::model::settings::{ArchiveBackend, CompactorSettings};
use crate::core::ports::storage::free_units;
use crate::core::store::shelf::Shelf;

type JsResult<T> = Result<T, JsValue>;
/// The core log store over the browser's storage, shared by a `LogStore` and its compactors.
pub(super) type BrowserLogs = RefCell<BrowserLogStore>;

#[wasm_bindgen(module = "/src/web/storage_estimate.js")]
extern "C" {
    #[wasm_bindgen(js_name = storageEstimate)]
    fn storage_estimate() -> js_sys::Promise;
    #[wasm_bindgen(js_name = storagePersist)]
    fn storage_persist() -> js_sys::Promise;
}

#[wasm_bindgen]
extern "C" {
    /// `Object.assign(target, source)`, its exceptions (a throwing getter) caught.
    #[wasm_bindgen(js_namespace = Object, js_name = assign, catch)]
    pub(super) fn copy_object(
        target: &js_sys::Object,
        source: &JsValue,
    ) -> Result<js_sys::Object, JsValue>;
}

pub(super) fn invalid(what: &str, detail: impl std::fmt::Display) -> JsValue {
    ContextCompactorError::invalid_input(what, detail).into()
}

/// One shelf of the page: the logs it is over, where its archives are, and the shelf.
struct Shelved {
    logs: Weak<BrowserLogs>,
    prefix: String,
    in_database: bool,
    shelf: Weak<Shelf>,
}

thread_local! {
    /// The shelves alive in this page: one per `LogStore`, archive prefix and archive place.
    static SHELVES: RefCell<Vec<Shelved>> = const { RefCell::new(Vec::new()) };
}

/// This tab's name in the cross-tab lease. It lives in sessionStorage, so a reloaded tab is
/// the same tab and takes over the lease its previous page left behind.
fn tab_id() -> String {
    const KEY: &str = "context-compactor:tab-id";
    let session = web_sys::window().and_then(|w| w.session_storage().ok().flatten());
    if let Some(id) = session
        .as_ref()
        .and_then(|s| s.get_item(KEY).ok().flatten())
    {
        return id;
    }
    let id = format!(
        "tab-{:x}",
        (js_sys::Math::random() * 9_007_199_254_740_992.0) as u64
    );
    if let Some(session) = session {
        // Without sessionStorage a reload counts as a new tab; the lease then just expires.
        let _ = session.set_item(KEY, &id);
    }
    id
}

/// The shelf of `logs` for `settings` (archive prefix and store): the one this page already
/// has, else a new one over IndexedDB or localStorage; `what` names the options in errors.
pub(super) fn shelf_of(
    logs: &Rc<BrowserLogs>,
    settings: &CompactorSettings,
    what: &str,
) -> JsResult<Rc<Shelf>> {
    let keys = logs.borrow().keys().for_settings(settings);
    let prefix = keys.archive_prefix().to_owned();
    let database = match settings.archive_store {
        Some(ArchiveBackend::LocalStorage) => false,
        Some(ArchiveBackend::IndexedDb) => true,
        // IndexedDB where the browser has it; else beside the logs, as before.
        None => ArchiveDatabase::available(),
    };
    let found = SHELVES.with(|shelves| {
        let mut shelves = shelves.borrow_mut();
        shelves.retain(|s| s.logs.strong_count() > 0 && s.shelf.strong_count() > 0);
        shelves
            .iter()
            .find(|s| {
                s.logs.upgrade().is_some_and(|l| Rc::ptr_eq(&l, logs))
                    && s.prefix == prefix
                    && s.in_database == database
            })
            .and_then(|s| s.shelf.upgrade())
    });
    if let Some(shelf) = found {
        return Ok(shelf);
    }
    let page = Rc::clone(logs.borrow().page());
    let lock = BrowserStoreLock::over(logs.borrow().keys());
    let mut shelf = Shelf::new(page, keys)
        .with_lock(Rc::new(lock))
        .with_owner(tab_id());
    if database {
        let opened = ArchiveDatabase::open(&prefix).ok_or_else(|| {
            invalid(
                &format!("{what}.archiveStore"),
                "\"indexedDB\" is not available in this browser; use \"localStorage\"",
            )
        })?;
        shelf = shelf.with_archive_store(Rc::new(opened));
    }
    let shelf = Rc::new(shelf);
    SHELVES.with(|shelves| {
        shelves.borrow_mut().push(Shelved {
            logs: Rc::downgrade(logs),
            prefix,
            in_database: database,
            shelf: Rc::downgrade(&shelf),
        })
    });
    Ok(shelf)
}

/// The archives of one `LogStore`.
#[wasm_bindgen(js_name = Archives)]
pub struct JsArchives {
    shelf: Rc<Shelf>,
    logs: Rc<BrowserLogs>,
}

#[wasm_bindgen(js_class = Archives)]
impl JsArchives {
    /// The archives of `logs` (`archivePrefix`, `maxArchives`, `archiveExpiryDays` as the
    /// compactor that wrote them has them).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "LogStore")] logs: JsValue,
        options: Option<ArchivesOptionsJs>,
    ) -> JsResult<JsArchives> {
        let options: JsValue = options.map_or(JsValue::UNDEFINED, Into::into);
        let logs = JsLogStore::shared_from(&logs).ok_or_else(|| {
            JsValue::from(ContextCompactorError::invalid_input(
                "new Archives(logs, options): logs",
                "must be a LogStore (new LogStore()) that has not been freed",
            ))
        })?;
        let source = js_sys::Object::new();
        if !options.is_undefined() && !options.is_null() {
            copy_object(&source, &options)
                .map_err(|err| invalid("ArchivesOptions", thrown_message(&err)))?;
        }
        let settings: CompactorSettings = from_js(source.into(), "ArchivesOptions")?;
        settings
            .validate()
            .map_err(|reason| invalid("ArchivesOptions", reason))?;
        Ok(Self {
            shelf: shelf_of(&logs, &settings, "ArchivesOptions")?,
            logs,
        })
    }

    /// Where the archives are kept: `"indexedDB"` or `"localStorage"`.
    #[wasm_bindgen(getter, js_name = archiveStore, unchecked_return_type = "\"indexedDB\" | \"localStorage\"")]
    pub fn archive_store(&self) -> String {
        let store = if self.shelf.has_archive_store() {
            "indexedDB"
        } else {
            "localStorage"
        };
        store.to_owned()
    }

    /// The archives, newest first, expired ones excluded.
    #[wasm_bindgen(unchecked_return_type = "Promise<ArchiveInfo[]>")]
    pub fn list(&self) -> js_sys::Promise {
        archive_call(&self.logs, &self.shelf, ArchiveCall::List)
    }

    /// One archive, whole; rejects `archive_missing` when it is no longer stored.
    #[wasm_bindgen(unchecked_return_type = "Promise<Archive>")]
    pub fn read(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> js_sys::Promise {
        archive_call(&self.logs, &self.shelf, ArchiveCall::Read(key, "read(key)"))
    }

    /// Removes one archive (refused while a compaction runs here or in another tab).
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn delete(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> js_sys::Promise {
        archive_call(
            &self.logs,
            &self.shelf,
            ArchiveCall::Delete(key, "delete(key)"),
        )
    }

    /// Removes the expired archives; resolves to how many.
    #[wasm_bindgen(js_name = purgeExpired, unchecked_return_type = "Promise<number>")]
    pub fn purge_expired(&self) -> js_sys::Promise {
        archive_call(&self.logs, &self.shelf, ArchiveCall::Purge)
    }

    /// The archived originals of a compacted iteration; `null` when it was never compacted;
    /// rejects `archive_missing` (its `key` naming the archive) when the archive that held it
    /// is no longer stored.
    #[wasm_bindgen(unchecked_return_type = "Promise<ArchiveData | null>")]
    pub fn recall(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] iteration: JsValue,
    ) -> js_sys::Promise {
        archive_call(
            &self.logs,
            &self.shelf,
            ArchiveCall::Recall(iteration, "recall(iteration)"),
        )
    }

    /// Puts an archive's originals back in place of its summary; later appends stay.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn rollback(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> js_sys::Promise {
        // Refused as called: the archive of a compaction running now is its only copy.
        if let Err(err) = self.shelf.may_roll_back(&self.logs.borrow()) {
            return js_sys::Promise::reject(&err.into());
        }
        let (logs, shelf) = (Rc::clone(&self.logs), Rc::clone(&self.shelf));
        future_to_promise(async move {
            let key = string_arg(&key, "rollback(key)")?;
            shelf.rollback(&logs, &key, || {}).await?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// The origin's storage as the browser reports it (`usage`, `quota` in bytes; whether it
    /// is `persisted`) and `localStorageFree`, the bytes of localStorage's 5 MiB the package
    /// finds unused (keys and values of every script of the origin counted).
    #[wasm_bindgen(unchecked_return_type = "Promise<StorageEstimate>")]
    pub fn estimate(&self) -> js_sys::Promise {
        let free = free_units(self.logs.borrow().store()).unwrap_or(0);
        future_to_promise(async move {
            let estimate = JsFuture::from(storage_estimate()).await?;
            let bytes = free.saturating_mul(2) as f64;
            js_sys::Reflect::set(&estimate, &"localStorageFree".into(), &bytes.into())?;
            Ok(estimate)
        })
    }

    /// Asks the browser to keep this origin's storage from eviction
    /// (`navigator.storage.persist()`); resolves to whether it is kept.
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn persist(&self) -> js_sys::Promise {
        future_to_promise(async move { JsFuture::from(storage_persist()).await })
    }
}

/// One call of the archive API, with its argument and the method that took it.
pub(super) enum ArchiveCall {
    /// The archives, newest first, expired ones excluded.
    List,
    /// The archive under the key, whole.
    Read(JsValue, &'static str),
    /// The archived originals of the compacted iteration, or `null` when it was never compacted.
    Recall(JsValue, &'static str),
    /// Removes the archive under the key.
    Delete(JsValue, &'static str),
    /// Removes the expired archives; how many.
    Purge,
}

/// `call` over the archives of `logs` on `shelf`, answered as a Promise once the archive store
/// answered (one async body for every call: each adds its own state machine to the download).
pub(super) fn archive_call(
    logs: &Rc<BrowserLogs>,
    shelf: &Rc<Shelf>,
    call: ArchiveCall,
) -> js_sys::Promise {
    // Refused as called: the archive of a compaction running now is its only copy.
    if let (ArchiveCall::Delete(..), Err(err)) = (&call, shelf.may_delete(&logs.borrow())) {
        return js_sys::Promise::reject(&err.into());
    }
    let (logs, shelf) = (Rc::clone(logs), Rc::clone(shelf));
    future_to_promise(async move {
        let key = |value: &JsValue, what| string_arg(value, what);
        Ok(match call {
            ArchiveCall::Delete(value, what) => {
                shelf.delete(&logs, &key(&value, what)?).await?;
                JsValue::UNDEFINED
            }
            ArchiveCall::Purge => JsValue::from(shelf.purge(&logs).await?),
            ArchiveCall::List => {
                shelf.refresh(&logs).await?;
                to_js(&shelf.with_archives(&logs, |a| a.list())?)?
            }
            ArchiveCall::Read(value, what) => {
                let key = key(&value, what)?;
                shelf.refresh(&logs).await?;
                to_js(&shelf.with_archives(&logs, |a| a.read(&key))?)?
            }
            ArchiveCall::Recall(value, what) => {
                let iteration = count_arg(&value, what)?;
                shelf.refresh(&logs).await?;
                match shelf.with_archives(&logs, |a| a.recall(iteration))? {
                    Some(data) => to_js(&data)?,
                    None => JsValue::NULL,
                }
            }
        })
    })
}
