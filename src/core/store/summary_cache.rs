//! The summaries providers wrote, by what produced them: a compaction whose input was
//! summarised before (a rollback followed by the same compaction, a retry after a storage
//! failure) takes that summary without a call. One localStorage entry under the logs' prefix,
//! a few summaries, each expiring with the archives.

use crate::core::error::StorageError;
use crate::core::json::read::FromJson;
use crate::core::json::record::json_record;
use crate::core::json::write::to_json;
use crate::core::log::text_hash::text_hash;
use crate::core::log::tokens::estimate_tokens;
use crate::core::model::facts::{Injection, UnverifiedLine};
use crate::core::model::outcome::AnswerFormat;
use crate::core::model::settings::CompactorSettings;
use crate::core::ports::storage::KeyValueStore;
use crate::core::steps::check::{Accepted, SummaryCheck};

/// The version of the prompt and of the reading of answers: a cached summary of an older one
/// is not used.
pub const PROMPT_VERSION: &str = "p42";

/// Summaries kept at most (the newest); each is at most its budget in size.
pub const MAX_CACHED_SUMMARIES: usize = 4;

/// A summary is kept only where it takes at most a quarter of the room its compaction freed,
/// so that a compaction frees what it says (a summary about as long as what it replaced,
/// cached too, freed nothing).
const ROOM_SHARE: usize = 4;

/// One cached summary: the answer as the check accepted it.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedSummary {
    /// [`input_hash`] of what it summarised.
    pub input: String,
    /// The summary as it was accepted.
    pub summary: String,
    /// The facts the package added to the answer (the rest of its coverage is the ledger's,
    /// the same for the same input: not stored twice).
    pub repaired: Vec<String>,
    /// Its lines marked ` [unverified]`.
    pub unverified: Vec<UnverifiedLine>,
    /// Its lines marked ` [from tool output]`.
    pub injections: Vec<Injection>,
    /// The form of the answer it was read from.
    pub answer_format: AnswerFormat,
    /// When it expires (ms since the epoch), with the archive of its compaction.
    pub expires_at: f64,
}

impl CachedSummary {
    /// `accepted` cached for `input` until `expires_at`.
    pub fn of(input: String, accepted: &Accepted, expires_at: f64) -> Self {
        CachedSummary {
            input,
            summary: accepted.summary.clone(),
            repaired: accepted.coverage.repaired.clone(),
            unverified: accepted.unverified.clone(),
            injections: accepted.injections.clone(),
            answer_format: accepted.answer_format,
            expires_at,
        }
    }

    /// Whether it is worth its room after a compaction that saved `tokens_saved`; `None`: the
    /// compaction failed, freed nothing, and the cache spares its retry a call.
    pub fn worth_keeping(&self, tokens_saved: Option<usize>) -> bool {
        tokens_saved.is_none_or(|saved| estimate_tokens(&self.summary) * ROOM_SHARE <= saved)
    }

    /// The answer as the check accepted it, its coverage drawn again by `check`.
    pub fn accepted(self, check: &SummaryCheck) -> Accepted {
        Accepted {
            coverage: check.coverage_of(&self.repaired),
            summary: self.summary,
            unverified: self.unverified,
            injections: self.injections,
            lines_cut: 0,
            answer_format: self.answer_format,
            salvaged: false,
        }
    }
}

json_record! {
    read write CachedSummary {
        input: "input" req,
        summary: "summary" req,
        repaired: "repaired" req,
        unverified: "unverified" req,
        injections: "injections" req,
        answer_format: "answerFormat" req,
        expires_at: "expiresAt" req,
    }
}

/// The hash a summary is cached under: the exact prompt (the selection, the facts it must keep,
/// the budget), the model that answers (and with it the output format), what the check does
/// with missing facts, unverified lines and lines only tool output gave the user's voice, and
/// [`PROMPT_VERSION`]: what decides the answer and every policy that judges it.
pub fn input_hash(prompt: &str, model: &str, settings: &CompactorSettings) -> String {
    let policies = [
        settings.missing_facts as u8,
        settings.unverified as u8,
        settings.injections as u8,
    ];
    text_hash(Some(&format!(
        "{PROMPT_VERSION}\n{model}\n{}{}{}\n{prompt}",
        policies[0], policies[1], policies[2]
    )))
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
    pub fn get(&self, input: &str, now: f64) -> Option<CachedSummary> {
        self.live(now)
            .into_iter()
            .find(|cached| cached.input == input)
    }

    /// Keeps `summary` beside the newest others that have not expired at `now`.
    pub fn put(&self, summary: CachedSummary, now: f64) -> Result<(), StorageError> {
        let mut cached = self.live(now);
        cached.retain(|c| c.input != summary.input);
        cached.insert(0, summary);
        cached.truncate(MAX_CACHED_SUMMARIES);
        self.store.set(&self.key, &to_json(&cached))
    }

    /// Forgets every cached summary.
    pub fn clear(&self) -> Result<(), StorageError> {
        self.store.remove(&self.key)
    }

    /// Forgets every cached summary to give its room to the logs: whether it held any.
    pub fn give_room(&self) -> bool {
        self.store.contains(&self.key).unwrap_or(false) && self.clear().is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::ports::storage::MemoryStore;

    fn cached(input: &str, summary: &str, expires_at: f64) -> CachedSummary {
        CachedSummary {
            input: input.into(),
            summary: summary.into(),
            repaired: Vec::new(),
            unverified: Vec::new(),
            injections: Vec::new(),
            answer_format: AnswerFormat::Json,
            expires_at,
        }
    }

    #[test]
    fn a_summary_is_found_by_its_input_until_it_expires_and_the_newest_few_are_kept() {
        let store = MemoryStore::new();
        let cache = SummaryCache::new(&store, "gdrs_summary_cache".into());
        let settings = CompactorSettings::default();
        let input = input_hash("PROMPT", "gemini-3.5-flash-lite", &settings);
        assert_eq!(cache.get(&input, 0.0), None);
        cache.put(cached(&input, "S", 100.0), 0.0).unwrap();
        let found = cache.get(&input, 99.0).unwrap();
        assert_eq!(
            (found.summary.as_str(), found.answer_format),
            ("S", AnswerFormat::Json)
        );
        assert_eq!(cache.get(&input, 100.0), None, "expired with its archive");
        // Another model, prompt or check is another input.
        assert_ne!(input_hash("PROMPT", "gemini-2.5-pro", &settings), input);
        assert_ne!(
            input_hash("PROMPT ", "gemini-3.5-flash-lite", &settings),
            input
        );
        let failing = CompactorSettings {
            unverified: crate::core::model::settings::LinePolicy::Fail,
            ..CompactorSettings::default()
        };
        assert_ne!(
            input_hash("PROMPT", "gemini-3.5-flash-lite", &failing),
            input
        );
        let refusing_injections = CompactorSettings {
            injections: crate::core::model::settings::LinePolicy::Fail,
            ..CompactorSettings::default()
        };
        assert_ne!(
            input_hash("PROMPT", "gemini-3.5-flash-lite", &refusing_injections),
            input
        );
        for n in 0..6 {
            let other = input_hash(&format!("P{n}"), "m", &settings);
            cache
                .put(cached(&other, &format!("S{n}"), 100.0), 0.0)
                .unwrap();
        }
        let stored = store.get("gdrs_summary_cache").unwrap().unwrap();
        let kept: Vec<CachedSummary> = Vec::from_json(&stored).unwrap();
        assert_eq!(kept.len(), MAX_CACHED_SUMMARIES);
        assert_eq!(kept[0].summary, "S5");
        // An unreadable entry is an empty cache, and the next put replaces it.
        store.set("gdrs_summary_cache", "{not json").unwrap();
        assert_eq!(cache.get(&input, 0.0), None);
        cache.put(cached(&input, "S", 100.0), 0.0).unwrap();
        assert_eq!(
            cache.get(&input, 0.0).map(|c| c.summary).as_deref(),
            Some("S")
        );
        cache.clear().unwrap();
        assert_eq!(cache.get(&input, 0.0), None);
    }
}
