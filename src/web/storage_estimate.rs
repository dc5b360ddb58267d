//! What the browser says of the origin's storage (`navigator.storage`), bound once for the
//! archive database and `Archives`.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/web/storage_estimate.js")]
extern "C" {
    /// `{ usage, quota, persisted }` in bytes; zeros and `false` where unknown.
    #[wasm_bindgen(js_name = storageEstimate)]
    pub(super) fn storage_estimate() -> js_sys::Promise;
    /// `navigator.storage.persist()`: whether the origin's storage is now kept from eviction.
    #[wasm_bindgen(js_name = storagePersist)]
    pub(super) fn storage_persist() -> js_sys::Promise;
}
