//! The storage port: a string key-value store such as localStorage, and an in-memory one.

#[cfg(any(test, feature = "testing"))]
use std::cell::RefCell;
// A test double, never in the package: the standard map is fine here.
#[cfg(any(test, feature = "testing"))]
#[allow(clippy::disallowed_types)]
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::core::error::StorageError;

/// A string key-value store with the semantics of `window.localStorage`.
///
/// A failed `set` must leave the previous value in place, as browsers do on a quota error.
pub trait KeyValueStore {
    /// The value of `key`, or `None` when it is absent.
    fn get(&self, key: &str) -> Result<Option<String>, StorageError>;
    /// Stores `value` under `key`, replacing what was there.
    fn set(&self, key: &str, value: &str) -> Result<(), StorageError>;
    /// Removes `key`; removing an absent key is not an error.
    fn remove(&self, key: &str) -> Result<(), StorageError>;
    /// Every key currently stored, in no particular order.
    fn keys(&self) -> Result<Vec<String>, StorageError>;
    /// Whether `key` is stored, without reading its value (which a copy of another store may
    /// not hold yet).
    fn contains(&self, key: &str) -> Result<bool, StorageError> {
        Ok(self.get(key)?.is_some())
    }
    /// The store's capacity in UTF-16 code units (keys plus values), when known.
    fn quota_units(&self) -> Option<usize> {
        None
    }
}

/// Capacity of `window.localStorage` per origin in Chromium and Firefox, in UTF-16 code units.
pub const LOCAL_STORAGE_QUOTA_UNITS: usize = 5_242_880;

/// Free UTF-16 code units in `store`, when its capacity is known.
pub fn free_units(store: &impl KeyValueStore) -> Option<usize> {
    free_units_beside(store, None)
}

/// [`free_units`] counting the entry under `replaced` as free (a write there replaces it).
fn free_units_beside(store: &impl KeyValueStore, replaced: Option<&str>) -> Option<usize> {
    let quota = store.quota_units()?;
    let mut used = 0;
    for key in store.keys().ok()? {
        if Some(key.as_str()) != replaced {
            used += utf16_units(&key) + utf16_units(&store.get(&key).ok()??);
        }
    }
    Some(quota.saturating_sub(used))
}

/// `err` with the store's free space filled in, when it is a quota error.
pub(crate) fn with_free_space(store: &impl KeyValueStore, err: StorageError) -> StorageError {
    match err {
        StorageError::Quota {
            key, units_needed, ..
        } => StorageError::Quota {
            free_units: free_units_beside(store, Some(&key)),
            key,
            units_needed,
        },
        other => other,
    }
}

/// A store behind a reference or an `Rc` is the store itself.
macro_rules! forward_key_value_store {
    ($($pointer:ty),+) => {$(
        impl<T: KeyValueStore + ?Sized> KeyValueStore for $pointer {
            fn get(&self, key: &str) -> Result<Option<String>, StorageError> {
                (**self).get(key)
            }
            fn set(&self, key: &str, value: &str) -> Result<(), StorageError> {
                (**self).set(key, value)
            }
            fn remove(&self, key: &str) -> Result<(), StorageError> {
                (**self).remove(key)
            }
            fn keys(&self) -> Result<Vec<String>, StorageError> {
                (**self).keys()
            }
            fn contains(&self, key: &str) -> Result<bool, StorageError> {
                (**self).contains(key)
            }
            fn quota_units(&self) -> Option<usize> {
                (**self).quota_units()
            }
        }
    )+};
}

forward_key_value_store!(&T, Rc<T>);

/// Size of a string as localStorage's quota counts it: UTF-16 code units.
pub fn utf16_units(text: &str) -> usize {
    if text.is_ascii() {
        return text.len();
    }
    // Every UTF-8 sequence start is one unit; a four-byte sequence is a surrogate pair.
    text.bytes()
        .map(|byte| usize::from(byte & 0xC0 != 0x80) + usize::from(byte >= 0xF0))
        .sum()
}

#[cfg(any(test, feature = "testing"))]
/// An in-memory store with an optional quota counted like localStorage's (UTF-16 code units of
/// keys plus values). Clones share the same entries.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    state: Rc<RefCell<MemoryState>>,
}

#[cfg(any(test, feature = "testing"))]
#[derive(Debug, Default)]
#[allow(clippy::disallowed_types)]
struct MemoryState {
    entries: BTreeMap<String, String>,
    quota_units: Option<usize>,
}

#[cfg(any(test, feature = "testing"))]
impl MemoryStore {
    /// An empty store without a quota.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store that refuses writes once keys plus values exceed `units` UTF-16 code units.
    pub fn with_quota(units: usize) -> Self {
        let store = Self::default();
        store.state.borrow_mut().quota_units = Some(units);
        store
    }

    /// Sets the quota (`None`: none), as when the user frees space.
    pub fn set_quota(&self, units: Option<usize>) {
        self.state.borrow_mut().quota_units = units;
    }

    /// UTF-16 code units used by all keys and values.
    pub fn used_units(&self) -> usize {
        self.state
            .borrow()
            .entries
            .iter()
            .map(|(k, v)| utf16_units(k) + utf16_units(v))
            .sum()
    }
}

#[cfg(any(test, feature = "testing"))]
impl KeyValueStore for MemoryStore {
    fn get(&self, key: &str) -> Result<Option<String>, StorageError> {
        Ok(self.state.borrow().entries.get(key).cloned())
    }

    fn set(&self, key: &str, value: &str) -> Result<(), StorageError> {
        let used_by_others = self.used_units()
            - self
                .state
                .borrow()
                .entries
                .get(key)
                .map_or(0, |old| utf16_units(key) + utf16_units(old));
        let needed = utf16_units(key) + utf16_units(value);
        let mut state = self.state.borrow_mut();
        if let Some(quota) = state.quota_units {
            if used_by_others + needed > quota {
                return Err(StorageError::Quota {
                    key: key.to_owned(),
                    units_needed: needed,
                    free_units: None,
                });
            }
        }
        state.entries.insert(key.to_owned(), value.to_owned());
        Ok(())
    }

    fn remove(&self, key: &str) -> Result<(), StorageError> {
        self.state.borrow_mut().entries.remove(key);
        Ok(())
    }

    fn keys(&self) -> Result<Vec<String>, StorageError> {
        Ok(self.state.borrow().entries.keys().cloned().collect())
    }

    fn quota_units(&self) -> Option<usize> {
        self.state.borrow().quota_units
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::order::text_search::TextSearch;

    #[test]
    fn utf16_units_match_javascript_length() {
        for text in [
            "",
            "ascii",
            "é ß ł",
            "日本語",
            "🎯📊✅ mixed é 日",
            "\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}",
        ] {
            assert_eq!(utf16_units(text), text.encode_utf16().count(), "{text}");
        }
    }

    #[test]
    fn quota_counts_utf16_units_and_keeps_the_old_value() {
        let store = MemoryStore::with_quota(10);
        store.set("k", "abc").unwrap();
        // "k" + 8 units of "😀😀😀😀" = 9 units: fits.
        store.set("k", "😀😀😀😀").unwrap();
        let err = store.set("k", "😀😀😀😀😀").unwrap_err();
        assert_eq!(
            err,
            StorageError::Quota {
                key: "k".into(),
                units_needed: 11,
                free_units: None
            }
        );
        assert_eq!(store.get("k").unwrap().as_deref(), Some("😀😀😀😀"));
        // The key counts in what the write needs; the value it replaces is free.
        let described = with_free_space(&store, err).to_string();
        assert!(
            described.contains_text("needs 22 bytes and only 20 bytes are free"),
            "{described}"
        );
    }

    #[test]
    fn clones_share_entries() {
        let a = MemoryStore::new();
        let b = a.clone();
        a.set("x", "1").unwrap();
        assert_eq!(b.get("x").unwrap().as_deref(), Some("1"));
        b.remove("x").unwrap();
        assert_eq!(a.keys().unwrap(), Vec::<String>::new());
    }
}
