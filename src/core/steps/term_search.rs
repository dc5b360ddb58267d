//! Which of many terms one long text holds, found in one pass over it (an Aho–Corasick
//! automaton) instead of one pass per term: the facts a compaction's archive holds are looked
//! up in the whole text of the iterations it compacts, and a pass per term made the cost grow
//! with the facts times the text.

use crate::core::steps::terms::{is_number, number_stands_alone, without_digit_commas, Normalised};

/// What a text must hold for a fact to count as kept there: its exact terms (digit-group
/// commas ignored, numbers standing alone) and its key words (any case).
pub trait HoldsTerms {
    /// Whether the text holds `term` exactly.
    fn has_exact(&self, term: &str) -> bool;
    /// Whether the text holds `word` in any case.
    fn has_word(&self, word: &str) -> bool;
}

impl HoldsTerms for Normalised {
    fn has_exact(&self, term: &str) -> bool {
        Normalised::has_exact(self, term)
    }

    fn has_word(&self, word: &str) -> bool {
        Normalised::has_word(self, word)
    }
}

/// The terms asked for that one text holds, answered as [`Normalised`] would answer them.
pub struct TermsFound {
    terms: Vec<Term>,
    /// The automaton of the terms (how a term asked about is found again).
    nodes: Vec<Node>,
    /// For each term, the next one (plus one) that ends at the same node.
    same_end: Vec<u32>,
    /// Whether the text holds each term.
    found: Vec<bool>,
}

impl TermsFound {
    /// Whether the text holds the term `text` matched as `exact` or not (asked about only).
    fn holds(&self, text: &str, exact: bool) -> bool {
        let mut at = 0u32;
        for byte in text.bytes() {
            match child(&self.nodes, at, byte.to_ascii_lowercase()) {
                Some(next) => at = next,
                None => return false,
            }
        }
        let mut term = self.nodes[at as usize].term;
        while term != 0 {
            let index = term as usize - 1;
            let asked = &self.terms[index];
            if (asked.how != Match::Word) == exact && asked.text == text {
                return self.found[index];
            }
            term = self.same_end[index];
        }
        false
    }
}

impl HoldsTerms for TermsFound {
    fn has_exact(&self, term: &str) -> bool {
        self.holds(&without_digit_commas(term), true)
    }

    fn has_word(&self, word: &str) -> bool {
        self.holds(&word.to_ascii_lowercase(), false)
    }
}

/// How a term is matched where the automaton finds its lower-case bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Match {
    /// Any case.
    Word,
    /// The same bytes in the text itself.
    Exact,
    /// The same bytes, with no digit joined to either end.
    Number,
}

/// One term to look for: its text as the answer names it, and how it matches.
struct Term {
    text: String,
    how: Match,
}

/// A trie node of the automaton (index 0 is the root, never anyone's child: 0 means none).
#[derive(Default, Clone, Copy)]
struct Node {
    /// The byte that leads here from the parent.
    byte: u8,
    /// The first child.
    child: u32,
    /// The parent's next child.
    sibling: u32,
    /// The node of the longest proper suffix of this node's path that is also a path.
    fail: u32,
    /// The first term whose lower-case bytes end here, plus one (0: none).
    term: u32,
    /// The nearest node along the fail links where a term ends.
    next_end: u32,
}

/// The child of `at` by `byte`.
fn child(nodes: &[Node], at: u32, byte: u8) -> Option<u32> {
    let mut next = nodes[at as usize].child;
    while next != 0 && nodes[next as usize].byte != byte {
        next = nodes[next as usize].sibling;
    }
    (next != 0).then_some(next)
}

/// The trie of the terms' lower-case bytes with its fail links (breadth first), and for each
/// term the next one (plus one) that ends at the same node.
fn automaton(terms: &[Term]) -> (Vec<Node>, Vec<u32>) {
    let mut nodes = vec![Node::default()];
    let mut same_end = vec![0u32; terms.len()];
    for (index, term) in terms.iter().enumerate() {
        let mut at = 0u32;
        for byte in term.text.bytes().map(|b| b.to_ascii_lowercase()) {
            at = child(&nodes, at, byte).unwrap_or_else(|| {
                let added = nodes.len() as u32;
                let sibling = nodes[at as usize].child;
                nodes.push(Node {
                    byte,
                    sibling,
                    ..Node::default()
                });
                nodes[at as usize].child = added;
                added
            });
        }
        same_end[index] = nodes[at as usize].term;
        nodes[at as usize].term = index as u32 + 1;
    }
    let mut queue = vec![0u32];
    let mut head = 0;
    while let Some(&parent) = queue.get(head) {
        head += 1;
        let mut next = nodes[parent as usize].child;
        while next != 0 {
            let byte = nodes[next as usize].byte;
            let mut fail = nodes[parent as usize].fail;
            let target = loop {
                if parent == 0 {
                    break 0;
                }
                if let Some(found) = child(&nodes, fail, byte) {
                    break found;
                }
                if fail == 0 {
                    break 0;
                }
                fail = nodes[fail as usize].fail;
            };
            let target_node = nodes[target as usize];
            let node = &mut nodes[next as usize];
            node.fail = target;
            node.next_end = if target_node.term != 0 {
                target
            } else {
                target_node.next_end
            };
            queue.push(next);
            next = node.sibling;
        }
    }
    (nodes, same_end)
}

/// A search of one text in parts: [`TermScan::advance`] reads it a slice at a time (a caller
/// that shares the page runs other tasks between slices), [`TermScan::found`] answers once it is
/// read whole.
pub struct TermScan {
    text: Normalised,
    found: TermsFound,
    /// The first byte not read yet, and the automaton's state there.
    at: usize,
    state: u32,
    /// The root's children by byte.
    root: [u32; 256],
}

impl TermScan {
    /// A search of `text` for the `exact` terms and key `words`, not begun.
    pub fn new(text: Normalised, exact: &[&str], words: &[&str]) -> TermScan {
        let mut terms: Vec<Term> = Vec::new();
        for term in exact {
            let text = without_digit_commas(term).into_owned();
            let how = if is_number(&text) {
                Match::Number
            } else {
                Match::Exact
            };
            terms.push(Term { text, how });
        }
        for word in words {
            let text = word.to_ascii_lowercase();
            terms.push(Term {
                text,
                how: Match::Word,
            });
        }
        let (nodes, same_end) = automaton(&terms);
        let mut root = [0u32; 256];
        let mut next = nodes[0].child;
        while next != 0 {
            root[usize::from(nodes[next as usize].byte)] = next;
            next = nodes[next as usize].sibling;
        }
        let found = terms.iter().map(|term| term.text.is_empty()).collect();
        TermScan {
            text,
            found: TermsFound {
                terms,
                nodes,
                same_end,
                found,
            },
            at: 0,
            state: 0,
            root,
        }
    }

    /// Reads up to `bytes` more of the text; whether it is read whole.
    pub fn advance(&mut self, bytes: usize) -> bool {
        let TermsFound {
            terms,
            nodes,
            same_end,
            found,
        } = &mut self.found;
        let (original, lower) = (self.text.text().as_bytes(), self.text.lower().as_bytes());
        let end = self.at.saturating_add(bytes).min(lower.len());
        let mut state = self.state;
        for (at, byte) in lower.iter().enumerate().take(end).skip(self.at) {
            state = loop {
                if state == 0 {
                    break self.root[usize::from(*byte)];
                }
                if let Some(next) = child(nodes, state, *byte) {
                    break next;
                }
                state = nodes[state as usize].fail;
            };
            let mut end_node = match nodes[state as usize].term {
                0 => nodes[state as usize].next_end,
                _ => state,
            };
            while end_node != 0 {
                let mut term = nodes[end_node as usize].term;
                while term != 0 {
                    let index = term as usize - 1;
                    found[index] = found[index] || matches_at(&terms[index], original, at + 1);
                    term = same_end[index];
                }
                end_node = nodes[end_node as usize].next_end;
            }
        }
        (self.at, self.state) = (end, state);
        end == lower.len()
    }

    /// What the text holds of the terms (all of it once [`TermScan::advance`] read it whole).
    pub fn found(self) -> TermsFound {
        self.found
    }

    /// What the whole text holds of the terms, read in one pass.
    pub fn whole(mut self) -> TermsFound {
        self.advance(usize::MAX);
        self.found
    }
}

/// Whether `term`, whose lower-case bytes end at `end` of the text, is there as it must be.
fn matches_at(term: &Term, original: &[u8], end: usize) -> bool {
    let start = end - term.text.len();
    match term.how {
        Match::Word => true,
        Match::Exact => &original[start..end] == term.text.as_bytes(),
        Match::Number => {
            &original[start..end] == term.text.as_bytes()
                && number_stands_alone(original, start, end)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small generator of texts and terms over a few letters, so that terms overlap, nest
    /// and repeat.
    struct Draw(u64);

    impl Draw {
        fn next(&mut self, below: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % below
        }

        fn text(&mut self, len: u64) -> String {
            let alphabet = ['a', 'B', 'b', '1', '2', ',', '.', ' ', '_', 'é'];
            (0..self.next(len) + 1)
                .map(|_| alphabet[self.next(alphabet.len() as u64) as usize])
                .collect()
        }
    }

    #[test]
    fn it_answers_as_a_search_per_term_does() {
        let mut draw = Draw(0x9e37_79b9_7f4a_7c15);
        for _ in 0..400 {
            let raw = draw.text(200);
            let text = Normalised::of(&raw);
            let exact: Vec<String> = (0..12).map(|_| draw.text(5)).collect();
            let words: Vec<String> = (0..12).map(|_| draw.text(4)).collect();
            let exact_terms: Vec<&str> = exact.iter().map(String::as_str).collect();
            let word_terms: Vec<&str> = words.iter().map(String::as_str).collect();
            let found = TermScan::new(Normalised::of(&raw), &exact_terms, &word_terms).whole();
            // Read in slices of any size, the search answers alike.
            let mut sliced = TermScan::new(Normalised::of(&raw), &exact_terms, &word_terms);
            while !sliced.advance(1 + draw.next(9) as usize) {}
            let sliced = sliced.found();
            let asked = exact.iter().map(|t| (t, false));
            for (term, word) in asked.chain(words.iter().map(|w| (w, true))) {
                let answer = |holds: &dyn HoldsTerms| match word {
                    true => holds.has_word(term),
                    false => holds.has_exact(term),
                };
                let expected = answer(&text);
                assert_eq!(answer(&found), expected, "{term:?} in {raw:?}");
                assert_eq!(answer(&sliced), expected, "sliced: {term:?} in {raw:?}");
            }
        }
    }

    #[test]
    fn numbers_stand_alone_and_commas_between_digits_do_not_count() {
        let text = Normalised::of("rows: 3,125,206 of 13125 (41.8%); id ABC_7");
        let exact = [
            "3125206",
            "3,125,206",
            "125",
            "41.8",
            "1.8",
            "ABC_7",
            "abc_7",
            "",
        ];
        let found = TermScan::new(text, &exact, &["ROWS", "of 1", "missing"]).whole();
        let held: Vec<bool> = exact.iter().map(|term| found.has_exact(term)).collect();
        assert_eq!(held, [true, true, false, true, false, true, false, true]);
        assert!(found.has_word("rows") && found.has_word("OF 1") && !found.has_word("missing"));
    }
}
