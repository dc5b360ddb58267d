//! The app's own records each iteration was written from, where a front keeps them beside the
//! logs (a message front: each message of the list, exactly as the app gave it), so that what
//! a summary folds comes back exactly: a JSON array of `[iteration, record]` pairs under
//! [`StorageKeys::originals`](crate::core::store::keys::StorageKeys::originals), iteration `0`
//! for a summary of ours the records begin with. An archive keeps those of the iterations it
//! took ([`pairs_of`]: a summary's with the summary of ours it folded, a clearing's of the
//! iterations whose bodies it cleared), and a summary's rollback puts them back
//! ([`LogStore::set_originals`]).

use crate::core::error::StorageError;
use crate::core::json::scan::array_document;
use crate::core::json::write::ToJson;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::store::log_store::LogStore;

/// The pairs of `text` (as [`push_pair`] writes them), in
/// order; none when it does not read.
pub fn pairs(text: &str) -> Vec<(u32, &str)> {
    (array_document(text).unwrap_or_default().into_iter())
        .filter_map(|pair| match array_document(pair)?.as_slice() {
            [n, record] => Some((n.parse().ok()?, *record)),
            _ => None,
        })
        .collect()
}

/// The pairs of `text` whose iteration `keep` takes, as the text stored (what an archive
/// keeps of them: those of the iterations it took).
pub fn pairs_of(text: &str, keep: &dyn Fn(u32) -> bool) -> String {
    let mut out = String::from("[");
    for (n, record) in pairs(text) {
        if keep(n) {
            push_pair(&mut out, n, record);
        }
    }
    out.push(']');
    out
}

/// Appends the pair `(n, record)` to `out`, the text of pairs begun with `[` (a comma before
/// all but the first).
pub fn push_pair(out: &mut String, n: u32, record: &str) {
    if out.len() > 1 {
        out.push(',');
    }
    out.push('[');
    n.write_json(out);
    out.push(',');
    out.push_str(record);
    out.push(']');
}

impl<S: KeyValueStore, C: Clock> LogStore<S, C> {
    /// The stored pairs, as their text; `None` where no front keeps records.
    pub fn originals(&self) -> Result<Option<String>, StorageError> {
        self.store().get(&self.keys().originals())
    }

    /// Stores `text` (pairs) as the records the logs were written from.
    pub fn set_originals(&self, text: &str) -> Result<(), StorageError> {
        self.store().set(&self.keys().originals(), text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_read_back_as_written_and_a_broken_pair_is_passed_over() {
        let mut text = String::from("[");
        push_pair(&mut text, 0, "{\"a\":[1,2]}");
        push_pair(&mut text, 3, "\"x\"");
        text.push(']');
        assert_eq!(text, "[[0,{\"a\":[1,2]}],[3,\"x\"]]");
        assert_eq!(pairs(&text), vec![(0, "{\"a\":[1,2]}"), (3, "\"x\"")]);
        assert_eq!(pairs("[[1],[\"x\",{}],[2,{}]]"), vec![(2, "{}")]);
        assert!(pairs("not json").is_empty());
    }
}
