//! A map kept as a vector sorted by its keys, for the crate's maps of a few dozen to a few
//! thousand entries: iterated in key order as a `BTreeMap` is, without a copy of the tree's
//! code (or a hash table's) in the module for each key and value type.

use std::borrow::Borrow;
use std::cmp::Ordering;

use super::sort::sort_by;

/// Entries sorted by key, one per key.
#[derive(Debug, Clone, PartialEq)]
pub struct SortedMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<K: Ord, V> SortedMap<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.entries.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    /// The value of `key`.
    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        let at = self.find(key).ok()?;
        Some(&self.entries[at].1)
    }

    /// The value of `key`, to change.
    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        let at = self.find(key).ok()?;
        Some(&mut self.entries[at].1)
    }

    /// The value of `key`, inserted as `V::default()` when absent.
    pub fn entry_or_default(&mut self, key: K) -> &mut V
    where
        V: Default,
    {
        let at = match self.find(&key) {
            Ok(at) => at,
            Err(at) => {
                self.entries.insert(at, (key, V::default()));
                at
            }
        };
        &mut self.entries[at].1
    }

    /// Sets `key` to `value`; the value it replaced.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(at) => Some(std::mem::replace(&mut self.entries[at].1, value)),
            Err(at) => {
                self.entries.insert(at, (key, value));
                None
            }
        }
    }

    /// Removes `key`; its value.
    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        let at = self.find(key).ok()?;
        Some(self.entries.remove(at).1)
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.entries.iter().map(|(key, _)| key)
    }

    /// The entries, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.entries.iter().map(|(key, value)| (key, value))
    }

    /// The entries in key order, their values to change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut V)> {
        self.entries.iter_mut().map(|(key, value)| (&*key, value))
    }

    /// How many keys it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds no key.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<K: Ord, T> SortedMap<K, Vec<T>> {
    /// The map of `pairs`, grouped by key: each key's values in the order `pairs` gives them.
    pub fn grouped(pairs: impl IntoIterator<Item = (K, T)>) -> Self {
        let mut pairs: Vec<(K, T)> = pairs.into_iter().collect();
        sort_by(&mut pairs, |a, b| a.0.cmp(&b.0));
        let mut map = Self::new();
        for (key, value) in pairs {
            match map.entries.last_mut() {
                Some((last, values)) if *last == key => values.push(value),
                _ => map.entries.push((key, vec![value])),
            }
        }
        map
    }
}

/// The last value of a key wins, as in the standard maps.
impl<K: Ord, V> FromIterator<(K, V)> for SortedMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Self {
        let mut entries: Vec<(K, V)> = pairs.into_iter().collect();
        sort_by(&mut entries, |a, b| a.0.cmp(&b.0));
        let mut kept: Vec<(K, V)> = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            match kept.last_mut() {
                Some(last) if last.0.cmp(&key) == Ordering::Equal => *last = (key, value),
                _ => kept.push((key, value)),
            }
        }
        Self { entries: kept }
    }
}

impl<K, V> IntoIterator for SortedMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

#[cfg(test)]
// The standard library's collections and sorts are the oracle here.
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn behaves_as_a_btree_map_for_every_operation() {
        let mut ours: SortedMap<u32, u32> = SortedMap::new();
        let mut theirs: BTreeMap<u32, u32> = BTreeMap::new();
        let mut state: u64 = 7;
        for step in 0..3_000u32 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let key = (state >> 40) as u32 % 97;
            match step % 4 {
                0 => assert_eq!(ours.insert(key, step), theirs.insert(key, step)),
                1 => assert_eq!(ours.remove(&key), theirs.remove(&key)),
                2 => *ours.entry_or_default(key) += 1,
                _ => assert_eq!(ours.get(&key), theirs.get(&key)),
            }
            if step % 4 == 2 {
                *theirs.entry(key).or_default() += 1;
            }
            if let (Some(a), Some(b)) = (ours.get_mut(&key), theirs.get_mut(&key)) {
                *a += 1;
                *b += 1;
            }
        }
        assert_eq!(ours.len(), theirs.len());
        assert!(ours.iter().eq(theirs.iter()));
        ours.iter_mut().for_each(|(key, value)| *value += key);
        theirs.iter_mut().for_each(|(key, value)| *value += key);
        assert!(ours.iter().eq(theirs.iter()));
        assert!(ours.into_iter().eq(theirs));
    }

    #[test]
    fn collecting_keeps_the_last_value_and_grouping_keeps_the_order_given() {
        let pairs = [("b", 1), ("a", 2), ("b", 3), ("c", 4), ("a", 5)];
        let map: SortedMap<&str, i32> = pairs.into_iter().collect();
        assert_eq!(
            map.into_iter().collect::<Vec<_>>(),
            [("a", 5), ("b", 3), ("c", 4)]
        );
        let groups = SortedMap::grouped(pairs);
        assert_eq!(groups.get("a"), Some(&vec![2, 5]));
        assert_eq!(groups.get("b"), Some(&vec![1, 3]));
        assert_eq!(groups.keys().copied().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert!(SortedMap::<u8, u8>::new().is_empty());
    }
}
