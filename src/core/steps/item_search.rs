//! Items (ids, file names, URLs, figures) looked for in long texts all at once: each text read
//! once, whatever the number of items, and an item found only where it stands whole (`8685` is
//! not in `48685`, `exec_12` not in `exec_123`; `sales.csv` is in `data/sales.csv`), ASCII case
//! ignored.

use crate::core::order::sort::sort_unique;

/// The longest item looked for, in bytes; a longer one is never found.
pub const MAX_ITEM_LEN: usize = 256;

/// A set of items to look for, kept sorted so that the items a text's bytes could begin narrow
/// to a range with each byte read.
#[derive(Debug, Clone, Default)]
pub struct ItemSearch {
    items: Vec<Vec<u8>>,
}

/// Bytes that join an item to its neighbour: a match next to one is part of a longer word.
fn joins(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80
}

impl ItemSearch {
    /// The items to look for (ASCII case ignored, each once; empty and overlong ones left out).
    pub fn new(items: impl IntoIterator<Item = String>) -> Self {
        let mut items: Vec<Vec<u8>> = items
            .into_iter()
            .filter(|item| (1..=MAX_ITEM_LEN).contains(&item.len()))
            .map(|mut item| {
                item.make_ascii_lowercase();
                item.into_bytes()
            })
            .collect();
        sort_unique(&mut items);
        Self { items }
    }

    /// Keeps the items `keep` says yes to (by index, in their order).
    pub fn retain(&mut self, mut keep: impl FnMut(usize) -> bool) {
        let mut at = 0;
        self.items.retain(|_| {
            at += 1;
            keep(at - 1)
        });
    }

    /// Whether there is nothing to look for.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The items, lower-cased, in their sorted order: the indices [`ItemSearch::each_in`] gives.
    #[cfg(test)]
    fn items(&self) -> impl Iterator<Item = &str> {
        self.items
            .iter()
            .map(|item| std::str::from_utf8(item).unwrap_or_default())
    }

    /// The item at `index` (lower-cased), as [`ItemSearch::each_in`] numbers them.
    pub fn item(&self, index: usize) -> Option<&[u8]> {
        self.items.get(index).map(Vec::as_slice)
    }

    /// How many items there are.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Calls `found` with the index of every item that stands whole in `text` (once per place).
    pub fn each_in(&self, text: &str, mut found: impl FnMut(usize)) {
        if self.items.is_empty() {
            return;
        }
        let bytes = text.as_bytes();
        let lower = |at: usize| bytes[at].to_ascii_lowercase();
        // A digit after `1.` continues a number: `350` is not in `1.350`. The letter of a JSON
        // escape (`\n`, `\t`) joins nothing: stored entries are JSON text.
        let joined_before = |at: usize| {
            let escape = at > 1 && bytes[at - 2] == b'\\' && b"ntrbf".contains(&bytes[at - 1]);
            at > 0
                && !escape
                && (joins(bytes[at - 1])
                    || (bytes[at - 1] == b'.'
                        && at > 1
                        && bytes[at - 2].is_ascii_digit()
                        && bytes[at].is_ascii_digit()))
        };
        let joined_after = |end: usize| {
            bytes.get(end).is_some_and(|&next| {
                joins(next)
                    || (next == b'.'
                        && bytes[end - 1].is_ascii_digit()
                        && bytes.get(end + 1).is_some_and(u8::is_ascii_digit))
            })
        };
        for start in 0..bytes.len() {
            if joined_before(start) {
                continue;
            }
            let (mut low, mut high) = (0, self.items.len());
            let mut end = start;
            while end < bytes.len() && end - start < MAX_ITEM_LEN {
                let byte = lower(end);
                let depth = end - start;
                let range = &self.items[low..high];
                let first = range.partition_point(|item| item.get(depth).is_none_or(|b| *b < byte));
                let past = range.partition_point(|item| item.get(depth).is_none_or(|b| *b <= byte));
                (low, high) = (low + first, low + past);
                if low == high {
                    break;
                }
                end += 1;
                // The items of the range are sorted: one exactly `end - start` long is the first.
                if self.items[low].len() == end - start && !joined_after(end) {
                    found(low);
                }
            }
        }
    }

    /// Whether any item stands whole in `text`.
    pub fn any_in(&self, text: &str) -> bool {
        let mut any = false;
        self.each_in(text, |_| any = true);
        any
    }
}

#[cfg(test)]
// The standard library's search is the oracle here.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    fn found(items: &[&str], text: &str) -> Vec<String> {
        let search = ItemSearch::new(items.iter().map(|s| s.to_string()));
        let names: Vec<String> = search.items().map(str::to_owned).collect();
        let mut seen = Vec::new();
        search.each_in(text, |at| seen.push(names[at].clone()));
        seen
    }

    #[test]
    fn an_item_is_found_only_where_it_stands_whole() {
        let items = ["8685", "exec_12", "sales.csv", "1.5", "350", "Report-7A"];
        assert_eq!(
            found(&items, "48685 rows, 86850 more"),
            Vec::<String>::new()
        );
        assert_eq!(found(&items, "exec_123 and exec_12."), ["exec_12"]);
        assert_eq!(found(&items, r#"{"file":"data/sales.csv"}"#), ["sales.csv"]);
        assert_eq!(
            found(&items, "1.350 and 21.5 and 1.55"),
            Vec::<String>::new()
        );
        assert_eq!(found(&items, "took 1.5 s; 350."), ["1.5", "350"]);
        assert_eq!(found(&items, "see REPORT-7a, report-7ab"), ["report-7a"]);
        assert_eq!(found(&items, "8685"), ["8685"]);
        assert_eq!(found(&items, r#"{"log":"ok\nexec_12\tdone"}"#), ["exec_12"]);
        assert_eq!(found(&[], "8685"), Vec::<String>::new());
    }

    #[test]
    fn items_that_share_a_head_are_each_found() {
        let items = ["shard_1", "shard_10", "shard_1/a", "s"];
        assert_eq!(
            found(&items, "shard_10 shard_1/a s shard_1"),
            ["shard_10", "shard_1", "shard_1/a", "s", "shard_1"]
        );
    }

    #[test]
    fn agrees_with_a_search_item_by_item() {
        let texts = [
            "exec_1 exec_12 x.csv 12.5 9999 99999 a_b-c",
            "ab.ab.ab ab_ab 1.2.3 é9999 9999é",
        ];
        let items = [
            "exec_1", "exec_12", "x.csv", "12.5", "9999", "ab", "ab.ab", "2.3", "a_b",
        ];
        for text in texts {
            let mut ours = found(&items, text);
            ours.sort_unstable();
            ours.dedup();
            let mut expected: Vec<String> = items
                .iter()
                .filter(|item| {
                    text.match_indices(*item).any(|(at, m)| {
                        let before = text[..at].chars().next_back();
                        let after = text[at + m.len()..].chars().next();
                        let word =
                            |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                        let decimal_before = text[..at].ends_with('.')
                            && text[..at - 1].ends_with(|c: char| c.is_ascii_digit())
                            && m.starts_with(|c: char| c.is_ascii_digit());
                        let rest = &text[at + m.len()..];
                        let decimal_after = rest.starts_with('.')
                            && rest[1..].starts_with(|c: char| c.is_ascii_digit())
                            && m.ends_with(|c: char| c.is_ascii_digit());
                        !word(before) && !word(after) && !decimal_before && !decimal_after
                    })
                })
                .map(|s| s.to_string())
                .collect();
            expected.sort_unstable();
            assert_eq!(ours, expected, "{text}");
        }
    }
}
