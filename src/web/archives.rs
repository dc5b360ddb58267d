//! `Archives` for JavaScript: the archives of a `LogStore` without a provider — list, read,
//! delete, purge, recall, rollback — and the storage they live in (estimate, persist). Every
//! method returns a Promise (IndexedDB answers asynchronously). It wraps the page's shelf of
//! those logs (`shelves.rs`), the one every `Compactor` over them uses too.

use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::convert::{invalid, options_copy, options_from_js};
use super::js_error::ContextCompactorError;
use super::log_store::JsLogStore;
use super::recall_tool::{recall_tool, JsRecallTool};
use super::shelves::{archive_call, rollback_call, shelf_of, ArchiveCall, BrowserShelf};
use super::storage_estimate::{storage_estimate, storage_persist};
use super::typescript::{ArchivesOptionsJs, RecallToolOptionsJs};
use crate::core::model::settings::CompactorSettings;
use crate::core::ports::storage::free_units;

type JsResult<T> = Result<T, JsValue>;

/// The archives of one `LogStore`.
#[wasm_bindgen(js_name = Archives)]
pub struct JsArchives {
    shelf: Rc<BrowserShelf>,
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
        let source = options_copy(&options, "ArchivesOptions")?;
        let settings: CompactorSettings = options_from_js(source.into(), "ArchivesOptions")?;
        settings
            .validate()
            .map_err(|reason| invalid("ArchivesOptions", reason))?;
        Ok(Self {
            shelf: shelf_of(&logs, &settings, "ArchivesOptions")?,
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
        archive_call(&self.shelf, ArchiveCall::List)
    }

    /// One archive, whole; rejects `archive_missing` when it is no longer stored.
    #[wasm_bindgen(unchecked_return_type = "Promise<Archive>")]
    pub fn read(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> js_sys::Promise {
        archive_call(&self.shelf, ArchiveCall::Read(key, "read(key)"))
    }

    /// Removes one archive (refused while a compaction runs here or in another tab).
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn delete(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> js_sys::Promise {
        archive_call(&self.shelf, ArchiveCall::Delete(key, "delete(key)"))
    }

    /// Removes the expired archives; resolves to how many.
    #[wasm_bindgen(js_name = purgeExpired, unchecked_return_type = "Promise<number>")]
    pub fn purge_expired(&self) -> js_sys::Promise {
        archive_call(&self.shelf, ArchiveCall::Purge)
    }

    /// Recall as a tool for the app's model, as `Compactor.recallTool` (no provider needed).
    #[wasm_bindgen(js_name = recallTool)]
    pub fn recall_tool(
        &self,
        options: Option<RecallToolOptionsJs>,
    ) -> Result<JsRecallTool, JsValue> {
        recall_tool(&self.shelf, options, "Archives.recallTool(options)")
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
        let shelf = Rc::clone(&self.shelf);
        rollback_call(&self.shelf, key, "rollback(key)", move |key| async move {
            shelf.rollback(&key, || {}).await
        })
    }

    /// The origin's storage as the browser reports it (`usage`, `quota` in bytes; whether it
    /// is `persisted`) and `localStorageFree`, the bytes of localStorage's 5 MiB the package
    /// finds unused (keys and values of every script of the origin counted).
    #[wasm_bindgen(unchecked_return_type = "Promise<StorageEstimate>")]
    pub fn estimate(&self) -> js_sys::Promise {
        let free = free_units(self.shelf.logs().borrow().store()).unwrap_or(0);
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
