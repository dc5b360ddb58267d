//! The summaries providers wrote, by what produced them: a compaction whose input was
//! summarised before (a rollback followed by the same compaction, a retry after a storage
//! failure) takes that summary without a call. One localStorage entry under the logs' prefix,
//! a few summaries, each expiring with the archives.

use crate::core::error::StorageError;
use crate::core::json::read::{FromJson, Object, ReadError};
use crate::core::json::write::{to_json, ObjectOut, ToJson};
use crate::core::log::text_hash::text_hash;
use crate::core::ports::storage::KeyValueStore;

/// The version of the prompt and of the reading of answers: a cached summary of an older one
/// is not used.
pub const PROMPT_VERSION: &str = "p40";

/// Summaries kept at most (the newest); each is at most its budget in size.
pub const MAX_CACHED_SUMMARIES: usize = 4;

/// One cached summary.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedSummary {
    /// [`input_hash`] of what it summarised.
    pub input: String,
    /// The summary as it was accepted.
    pub summary: String,
    /// When it expires (ms since the epoch), with the archive of its compaction.
    pub expires_at: f64,
}

impl ToJson for CachedSummary {
    fn write_json(&self, out: &mut String) {
        ObjectOut::new(out)
            .field("input", &self.input)
            .field("summary", &self.summary)
            .field("expiresAt", &self.expires_at);
    }
}

impl FromJson for CachedSummary {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        let cached = Object::read(json)?;
        Ok(CachedSummary {
            input: cached.req("input")?,
            summary: cached.req("summary")?,
            expires_at: cached.req("expiresAt")?,
        })
    }
}

/// The hash a summary is cached under: the exact prompt (the selection, the facts it must keep,
/// the budget), the model that answers (and with it the output format) and [`PROMPT_VERSION`].
pub fn input_hash(prompt: &str, model: &str) -> String {
    text_hash(Some(&format!("{PROMPT_VERSION}\n{model}\n{prompt}")))
}

/// The cache in `store` under `key`.
pub struct SummaryCache<'a, S: KeyValueStore + ?Sized> {
    store: &'a S,
    key: String,
}

impl<'a, S: KeyValueStore + ?Sized> SummaryCache<'a, S> {
    /// The cache kept in `store` under `key`.
    pub fn new(store: &'a S, key: String) -> Self {
        SummaryCache { store, key }
    }

    /// What the store holds that has not expired at `now`; an unreadable entry holds nothing
    /// (a cache may always be empty).
    fn live(&self, now: f64) -> Vec<CachedSummary> {
        let stored = self.store.get(&self.key).ok().flatten();
        let cached: Vec<CachedSummary> = stored
            .and_then(|text| Vec::from_json(&text).ok())
            .unwrap_or_default();
        cached.into_iter().filter(|c| c.expires_at > now).collect()
    }

    /// The summary cached for `input`, if one has not expired at `now`.
    pub fn get(&self, input: &str, now: f64) -> Option<String> {
        self.live(now)
            .into_iter()
            .find(|cached| cached.input == input)
            .map(|cached| cached.summary)
    }

    /// Keeps `summary` for `input` until `expires_at`, beside the newest others that have not
    /// expired at `now`.
    pub fn put(
        &self,
        input: String,
        summary: String,
        expires_at: f64,
        now: f64,
    ) -> Result<(), StorageError> {
        let mut cached = self.live(now);
        cached.retain(|c| c.input != input);
        cached.insert(
            0,
            CachedSummary {
                input,
                summary,
                expires_at,
            },
        );
        cached.truncate(MAX_CACHED_SUMMARIES);
        self.store.set(&self.key, &to_json(&cached))
    }

    /// Forgets every cached summary.
    pub fn clear(&self) -> Result<(), StorageError> {
        self.store.remove(&self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::ports::storage::MemoryStore;

    #[test]
    fn a_summary_is_found_by_its_input_until_it_expires_and_the_newest_few_are_kept() {
        let store = MemoryStore::new();
        let cache = SummaryCache::new(&store, "gdrs_summary_cache".into());
        let input = input_hash("PROMPT", "gemini-3.5-flash-lite");
        assert_eq!(cache.get(&input, 0.0), None);
        cache.put(input.clone(), "S".into(), 100.0, 0.0).unwrap();
        assert_eq!(cache.get(&input, 99.0).as_deref(), Some("S"));
        assert_eq!(cache.get(&input, 100.0), None, "expired with its archive");
        // Another model or another prompt is another input.
        assert_ne!(input_hash("PROMPT", "gemini-2.5-pro"), input);
        assert_ne!(input_hash("PROMPT ", "gemini-3.5-flash-lite"), input);
        for n in 0..6 {
            let other = input_hash(&format!("P{n}"), "m");
            cache.put(other, format!("S{n}"), 100.0, 0.0).unwrap();
        }
        let kept: Vec<CachedSummary> =
            Vec::from_json(&store.get("gdrs_summary_cache").unwrap().unwrap()).unwrap();
        assert_eq!(kept.len(), MAX_CACHED_SUMMARIES);
        assert_eq!(kept[0].summary, "S5");
        // An unreadable entry is an empty cache, and the next put replaces it.
        store.set("gdrs_summary_cache", "{not json").unwrap();
        assert_eq!(cache.get(&input, 0.0), None);
        cache.put(input.clone(), "S".into(), 100.0, 0.0).unwrap();
        assert_eq!(cache.get(&input, 0.0).as_deref(), Some("S"));
        cache.clear().unwrap();
        assert_eq!(cache.get(&input, 0.0), None);
    }
}
