//! Who holds which entry: the live logs and every archive, counted, so that a test can prove
//! nothing was lost or doubled.

use std::collections::HashMap;

use context_compactor::core::log::iteration::parse_summary_header;
use context_compactor::core::log::snapshot::LogSnapshot;
use context_compactor::core::ports::clock::ManualClock;
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::store::archive_record::read_archive;
use context_compactor::core::store::keys::StorageKeys;
use context_compactor::core::store::log_store::LogStore;

/// Identities of every entry: reasoning text, execution and tool entries as JSON.
pub fn identities(logs: &LogSnapshot) -> Vec<String> {
    logs.reasoning
        .iter()
        .filter(|r| parse_summary_header(r).is_none())
        .map(|r| format!("r:{}", r.as_str()))
        .chain(logs.execution.iter().map(|e| format!("e:{}", e.json())))
        .chain(logs.tool_activity.iter().map(|e| format!("t:{}", e.json())))
        .collect()
}

/// Identities in the live logs and every readable archive, with their counts.
pub fn census(memory: &MemoryStore) -> HashMap<String, usize> {
    let keys = StorageKeys::default();
    let logs = LogStore::new(memory.clone(), ManualClock::new(0.0), keys.clone(), 1);
    let mut seen: HashMap<String, usize> = HashMap::new();
    // A clearing's archive holds the originals its placeholders stand for: a placeholder (live,
    // or archived by a later summary) counts as its original, and the clearing's archive itself
    // counts nothing, so that an original reachable twice, or from nowhere, shows.
    let clearings: Vec<_> = memory
        .keys()
        .unwrap()
        .into_iter()
        .filter(|key| keys.archive_timestamp(key).is_some())
        .filter_map(|key| read_archive(memory, &key).ok().flatten())
        .filter(|archive| archive.placeholders.is_some())
        .collect();
    let count = |seen: &mut HashMap<String, usize>, logs: &LogSnapshot| {
        let mut logs = logs.clone();
        for clearing in &clearings {
            clearing.restore_into(&mut logs.execution, &mut logs.tool_activity);
        }
        for id in identities(&logs) {
            *seen.entry(id).or_default() += 1;
        }
    };
    match logs.snapshot() {
        Ok(snapshot) => count(&mut seen, &snapshot),
        // A corrupt log counts as its raw text: it must survive untouched.
        Err(_) => {
            for key in [keys.reasoning(), keys.execution(), keys.tool_activity()] {
                let text = memory.get(&key).unwrap().unwrap_or_default();
                *seen.entry(format!("raw:{key}:{text}")).or_default() += 1;
            }
        }
    }
    for key in memory.keys().unwrap() {
        if keys.archive_timestamp(&key).is_some() {
            if let Ok(Some(archive)) = read_archive(memory, &key) {
                if archive.placeholders.is_none() {
                    count(&mut seen, &archive.data.into());
                }
            }
        }
    }
    seen
}

/// Asserts every entry of `before` is held exactly once now, and nothing else is.
pub fn assert_nothing_lost(case: &str, before: &HashMap<String, usize>, memory: &MemoryStore) {
    let after = census(memory);
    for id in before.keys() {
        assert_eq!(
            after.get(id),
            Some(&1),
            "{case}: entry {id:.80} must be held exactly once"
        );
    }
    let extra: Vec<_> = after
        .keys()
        .filter(|id| !before.contains_key(*id))
        .collect();
    assert!(
        extra.is_empty(),
        "{case}: entries appeared from nowhere: {extra:?}"
    );
}
