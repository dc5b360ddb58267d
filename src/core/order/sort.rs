//! The crate's one sort. The standard library's sorts are copied into the module once per
//! element type and comparison: eight call sites made 41 functions and 20 KB of code. This
//! one sorts positions under a comparison behind `dyn`, so a call site adds only its
//! comparison and the loop that moves its elements into place.

use std::cmp::Ordering;

/// Sorts `items` by `order`, stably: items that compare equal keep their order.
pub fn sort_by<T>(items: &mut [T], order: impl Fn(&T, &T) -> Ordering) {
    let positions = sorted_positions(items.len(), &|a, b| order(&items[a], &items[b]));
    move_into_place(items, positions);
}

/// Sorts `items` by the key `key` gives each, stably.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` in ascending order and keeps one of each run of equal items.
pub fn sort_unique<T: Ord>(items: &mut Vec<T>) {
    sort_by(items, T::cmp);
    items.dedup();
}

/// Keeps the first of each group of equal items, in their order: `n · log₂ n` comparisons
/// where a search of the kept ones for each item would take `n²`.
pub fn unique_in_order<T: Ord>(items: &mut Vec<T>) {
    let positions = sorted_positions(items.len(), &|a, b| items[a].cmp(&items[b]));
    let mut first = vec![false; items.len()];
    for (k, &at) in positions.iter().enumerate() {
        first[at] = k == 0 || items[positions[k - 1]] != items[at];
    }
    let mut keep = first.into_iter();
    items.retain(|_| keep.next().unwrap_or(false));
}

/// The positions `0..len` in the order `order` puts them, equal ones in their own order: a
/// bottom-up merge sort, `len · log₂ len` comparisons at most.
fn sorted_positions(len: usize, order: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut from: Vec<usize> = (0..len).collect();
    let mut into = vec![0; len];
    let mut width = 1usize;
    while width < len {
        let mut start = 0;
        while start < len {
            let middle = start.saturating_add(width).min(len);
            let end = middle.saturating_add(width).min(len);
            let (mut left, mut right) = (start, middle);
            for slot in &mut into[start..end] {
                let take_left = right == end
                    || (left < middle && order(from[right], from[left]) != Ordering::Less);
                if take_left {
                    *slot = from[left];
                    left += 1;
                } else {
                    *slot = from[right];
                    right += 1;
                }
            }
            start = end;
        }
        std::mem::swap(&mut from, &mut into);
        width = width.saturating_mul(2);
    }
    from
}

/// Moves `items[positions[k]]` to `k` for every `k`, by swaps along each cycle of the
/// permutation.
fn move_into_place<T>(items: &mut [T], mut positions: Vec<usize>) {
    for start in 0..positions.len() {
        let mut current = start;
        loop {
            let next = positions[current];
            positions[current] = current;
            if next == start {
                break;
            }
            items.swap(current, next);
            current = next;
        }
    }
}

#[cfg(test)]
// The standard library's collections and sorts are the oracle here.
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use super::*;

    /// A few hundred pseudo-random lists of pairs, from a fixed seed.
    fn lists() -> Vec<Vec<(u8, usize)>> {
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        (0..300)
            .map(|round| {
                let len = round % 70;
                (0..len).map(|i| ((next() % 9) as u8, i)).collect()
            })
            .collect()
    }

    #[test]
    fn sorts_as_the_standard_stable_sort_does() {
        for list in lists() {
            let mut ours = list.clone();
            let mut std_sorted = list.clone();
            // The second field is the original position: equal keys must keep it ascending.
            sort_by_key(&mut ours, |item| item.0);
            std_sorted.sort_by_key(|item| item.0);
            assert_eq!(ours, std_sorted, "{list:?}");
        }
    }

    #[test]
    fn sorts_in_reverse_and_keeps_one_of_each() {
        for list in lists() {
            let mut ours = list.clone();
            sort_by(&mut ours, |a, b| b.cmp(a));
            let mut expected = list.clone();
            expected.sort_by(|a, b| b.cmp(a));
            assert_eq!(ours, expected);

            let mut keys: Vec<u8> = list.iter().map(|item| item.0).collect();
            let mut expected: Vec<u8> = keys.clone();
            sort_unique(&mut keys);
            expected.sort_unstable();
            expected.dedup();
            assert_eq!(keys, expected);
        }
    }

    #[test]
    fn keeps_the_first_of_each_in_order_as_a_search_of_the_kept_does() {
        for list in lists() {
            let keys: Vec<u8> = list.iter().map(|item| item.0).collect();
            let mut ours = keys.clone();
            unique_in_order(&mut ours);
            let mut expected: Vec<u8> = Vec::new();
            for key in keys {
                if !expected.contains(&key) {
                    expected.push(key);
                }
            }
            assert_eq!(ours, expected);
        }
    }
}
