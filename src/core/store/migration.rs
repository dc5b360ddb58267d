//! Archives kept in localStorage (the logs' own store) moved into the archive database, one at
//! a time: each is committed there and read back byte for byte before its localStorage key is
//! removed, so a migration stopped at any step (a closed tab, a refused write) loses and
//! doubles nothing, and the next one resumes where it stopped.

use std::cell::RefCell;

use crate::core::error::StorageError;
use crate::core::order::sort::sort_by;
use crate::core::ports::archive_store::ArchiveStore;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::store::keys::StorageKeys;
use crate::core::store::log_store::LogStore;

/// The archive keys of `keys` still in the logs' own store.
pub fn waiting<S: KeyValueStore, C: Clock>(
    logs: &LogStore<S, C>,
    keys: &StorageKeys,
) -> Result<Vec<String>, StorageError> {
    let mut waiting: Vec<String> = logs
        .store()
        .keys()?
        .into_iter()
        .filter(|key| keys.archive_timestamp(key).is_some())
        .collect();
    sort_by(&mut waiting, Ord::cmp);
    Ok(waiting)
}

/// Moves every archive of `keys` from the logs' own store into `database`; how many moved.
/// The caller holds the store lock. The logs are borrowed only between the awaits.
pub async fn migrate<S: KeyValueStore, C: Clock>(
    logs: &RefCell<LogStore<S, C>>,
    database: &dyn ArchiveStore,
    keys: &StorageKeys,
) -> Result<usize, StorageError> {
    let waiting = waiting(&logs.borrow(), keys)?;
    let mut moved = 0;
    for key in waiting {
        let Some(text) = logs.borrow().store().get(&key)? else {
            continue;
        };
        database.set(&key, &text)?;
        database.commit().await?;
        let stored = database.read_committed(&key).await?;
        if stored.as_deref() != Some(text.as_str()) {
            return Err(StorageError::ArchiveDatabase {
                reason: format!(
                    "the archive \"{key}\" read back from IndexedDB differs from the one in \
                     localStorage, which keeps it"
                ),
                quota: false,
            });
        }
        logs.borrow().store().remove(&key)?;
        moved += 1;
    }
    Ok(moved)
}
