//! Reading and writing JSON values under one key, with typed errors for corrupt data.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::core::error::StorageError;
use crate::core::storage::KeyValueStore;

/// The list stored under `key`; an absent key (or `null`) is an empty list.
///
/// Invalid JSON, or JSON of another shape, is [`StorageError::Corrupt`] and the key is not
/// touched.
pub fn read_list<T: DeserializeOwned>(
    store: &impl KeyValueStore,
    key: &str,
) -> Result<Vec<T>, StorageError> {
    parse_list(key, store.get(key)?.as_deref())
}

/// The list `text` holds (stored under `key`); absent text or `null` is an empty list.
pub fn parse_list<T: DeserializeOwned>(
    key: &str,
    text: Option<&str>,
) -> Result<Vec<T>, StorageError> {
    match text {
        None => Ok(Vec::new()),
        Some(text) => parse::<Option<Vec<T>>>(key, text).map(Option::unwrap_or_default),
    }
}

/// The value stored under `key`, or `None` when the key is absent.
pub fn read_value<T: DeserializeOwned>(
    store: &impl KeyValueStore,
    key: &str,
) -> Result<Option<T>, StorageError> {
    store.get(key)?.map(|text| parse(key, &text)).transpose()
}

/// Parses the text stored under `key`.
pub fn parse<T: DeserializeOwned>(key: &str, text: &str) -> Result<T, StorageError> {
    serde_json::from_str(text).map_err(|err| StorageError::Corrupt {
        key: key.to_owned(),
        reason: err.to_string(),
    })
}

/// `value` as the compact JSON stored under `key`.
pub fn encode<T: Serialize + ?Sized>(key: &str, value: &T) -> Result<String, StorageError> {
    serde_json::to_string(value).map_err(|err| StorageError::Unavailable {
        reason: format!("could not encode the value for \"{key}\": {err}"),
    })
}

/// Writes `value` as compact JSON under `key`.
pub fn write_json<T: Serialize + ?Sized>(
    store: &impl KeyValueStore,
    key: &str,
    value: &T,
) -> Result<(), StorageError> {
    store.set(key, &encode(key, value)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::storage::MemoryStore;

    #[test]
    fn absent_and_null_are_empty_lists() {
        let store = MemoryStore::new();
        assert_eq!(
            read_list::<String>(&store, "k").unwrap(),
            Vec::<String>::new()
        );
        store.set("k", "null").unwrap();
        assert_eq!(
            read_list::<String>(&store, "k").unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn invalid_json_and_wrong_shape_are_corrupt() {
        let store = MemoryStore::new();
        for text in ["{not json", "{\"a\":1}", "[1,2]", "\"text\""] {
            store.set("k", text).unwrap();
            let err = read_list::<String>(&store, "k").unwrap_err();
            assert!(
                matches!(&err, StorageError::Corrupt { key, .. } if key == "k"),
                "{text}: {err:?}"
            );
        }
    }
}
