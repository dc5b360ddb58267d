//! Where a message list's last compaction is kept: its text (`messages::stitch::LastCompaction`)
//! under [`StorageKeys::last_compaction`], read once by the front and written after every
//! compaction.

use crate::core::error::StorageError;
use crate::core::ports::storage::KeyValueStore;
use crate::core::store::keys::StorageKeys;

/// A message list's kept last compaction.
pub struct StoredLast<S> {
    store: S,
    key: String,
}

impl<S: KeyValueStore> StoredLast<S> {
    /// The record of the list whose keys are `keys`, kept in `store`.
    pub fn new(store: S, keys: &StorageKeys) -> Self {
        StoredLast {
            store,
            key: keys.last_compaction(),
        }
    }

    /// The record's text, when one is stored and can be read.
    pub fn read(&self) -> Option<String> {
        self.store.get(&self.key).ok().flatten()
    }

    /// Stores `text` as the record.
    pub fn write(&self, text: &str) -> Result<(), StorageError> {
        self.store.set(&self.key, text)
    }

    /// Forgets the record.
    pub fn remove(&self) -> Result<(), StorageError> {
        self.store.remove(&self.key)
    }
}
