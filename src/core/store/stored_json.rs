//! Reading and writing JSON values under one key, with typed errors for corrupt data.

use crate::core::error::StorageError;
use crate::core::json::read::{from_text, FromJson};
use crate::core::json::write::{to_json, ToJson};
use crate::core::model::set_aside::SetAside;
use crate::core::ports::storage::KeyValueStore;

/// The value stored under `key`, or `None` when the key is absent.
pub(crate) fn read_value<T: FromJson>(
    store: &impl KeyValueStore,
    key: &str,
) -> Result<Option<T>, StorageError> {
    store.get(key)?.map(|text| parse(key, &text)).transpose()
}

/// Parses the text stored under `key`.
pub fn parse<T: FromJson>(key: &str, text: &str) -> Result<T, StorageError> {
    from_text(text).map_err(|err| StorageError::Corrupt {
        key: key.to_owned(),
        reason: err.to_string(),
    })
}

/// Sets aside the text under `key`, which did not read for `reason` (see [`SetAside`]).
pub(crate) fn set_aside(
    store: &impl KeyValueStore,
    key: &str,
    reason: String,
) -> Result<SetAside, StorageError> {
    let kept_as = format!("{key}_corrupt");
    let text = store.get(key)?.unwrap_or_default();
    let kept = store.set(&kept_as, &text).is_ok();
    store.remove(key)?;
    Ok(SetAside {
        key: key.to_owned(),
        kept_as: kept.then_some(kept_as),
        reason,
    })
}

/// Writes `value` as compact JSON under `key`.
pub(crate) fn write_json<T: ToJson + ?Sized>(
    store: &impl KeyValueStore,
    key: &str,
    value: &T,
) -> Result<(), StorageError> {
    store.set(key, &to_json(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::ports::storage::MemoryStore;

    #[test]
    fn an_absent_key_is_none_and_a_value_round_trips() {
        let store = MemoryStore::new();
        assert_eq!(read_value::<Vec<String>>(&store, "k").unwrap(), None);
        write_json(&store, "k", &["a", "b"][..]).unwrap();
        assert_eq!(
            read_value::<Vec<String>>(&store, "k").unwrap(),
            Some(vec!["a".to_owned(), "b".to_owned()])
        );
    }

    #[test]
    fn invalid_json_and_wrong_shape_are_corrupt() {
        let store = MemoryStore::new();
        for text in ["{not json", "{\"a\":1}", "[1,2]", "\"text\""] {
            store.set("k", text).unwrap();
            let err = read_value::<Vec<String>>(&store, "k").unwrap_err();
            assert!(
                matches!(&err, StorageError::Corrupt { key, .. } if key == "k"),
                "{text}: {err:?}"
            );
        }
    }
}
