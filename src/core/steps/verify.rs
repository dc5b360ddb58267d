//! Catching what the model made up: the numbers, ids, file names and URLs a summary names that
//! none of its sources holds (the compacted originals, earlier summaries among them, and the
//! ledger, pins included). Digit grouping is not a difference, and neither is a rounding of a
//! number that does appear (`991.4` for `991.402745709`, `98,800` for `98,765`), and the
//! session's own figures (its iteration numbers, the counts of its entries) need no source.

use crate::core::order::join::Joined;
use crate::core::order::text_search::TextSearch;
use std::borrow::Cow;

use crate::core::model::facts::{Ledger, UnverifiedLine};
use crate::core::order::sort::{sort_unique, unique_in_order};
use crate::core::order::sorted_map::SortedMap;
use crate::core::steps::own_figures::OwnFigures;
use crate::core::steps::selection::Selection;
use crate::core::steps::terms::{
    byte_set, each_candidate, is_identifier, is_url, trim_ascii_matching, without_digit_commas,
    MAX_TOKEN_LEN,
};
use crate::core::steps::validation::heading_section;

/// The byte a number is trimmed of.
const POINT: [bool; 256] = byte_set(b".");

/// The mark a line that names what no source holds ends with.
pub const UNVERIFIED_MARK: &str = " [unverified]";

/// A line of the summary (its index) and what it names that no source holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unbacked {
    /// The line's index in the summary.
    pub index: usize,
    /// The line and its items.
    pub line: UnverifiedLine,
}

/// The lines of `summary` that name what neither the compacted entries of `selection` nor
/// `ledger` hold, in order.
pub fn unbacked_lines(summary: &str, selection: &Selection, ledger: &Ledger) -> Vec<Unbacked> {
    let claimed: Vec<(usize, &str, Vec<String>)> = summary
        .lines()
        .enumerate()
        .filter(|(_, line)| heading_section(line).is_none())
        .map(|(index, line)| (index, line, items_in(line)))
        .filter(|(_, _, items)| !items.is_empty())
        .collect();
    let mut pending = Pending::default();
    let mut items: Vec<&str> = claimed
        .iter()
        .flat_map(|(_, _, items)| items.iter().map(String::as_str))
        .collect();
    sort_unique(&mut items);
    for item in items {
        pending.add(item);
    }
    // The ledger's facts are few and back most items; the entries are read only for the rest.
    let facts = ledger
        .facts
        .iter()
        .map(|fact| without_digit_commas(&fact.text));
    pending.find_in(&facts.collect::<Vec<_>>());
    if !pending.is_done() {
        pending.find_in(&entry_texts(selection));
    }
    let unbacked = pending.left();
    // Only a number no source holds is looked for among the session's own figures.
    let own = unbacked
        .iter()
        .any(|item| is_number(item))
        .then(|| OwnFigures::of(selection));
    claimed
        .into_iter()
        .filter_map(|(index, line, items)| {
            let mut items: Vec<String> = items
                .into_iter()
                .filter(|item| unbacked.binary_search(&item.as_str()).is_ok())
                .collect();
            // Only a line left with an unbacked number is read for the session's own.
            if let Some(own) = own.as_ref().filter(|_| items.iter().any(|i| is_number(i))) {
                let own_here = own.in_line(line);
                items.retain(|item| !own_here.contains(item));
            }
            (!items.is_empty()).then(|| Unbacked {
                index,
                line: UnverifiedLine {
                    line: line.trim().to_owned(),
                    items,
                },
            })
        })
        .collect()
}

/// `summary` with each of `lines` ending in [`UNVERIFIED_MARK`].
pub fn mark_unbacked(summary: &str, lines: &[Unbacked]) -> String {
    // `lines` are in the summary's order.
    summary
        .lines()
        .enumerate()
        .map(|(index, line)| {
            if lines
                .binary_search_by_key(&index, |unbacked| unbacked.index)
                .is_ok()
            {
                format!("{}{UNVERIFIED_MARK}", line.trim_end())
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .joined("\n")
}

/// What a line names that must be backed: URLs, ids and file names, numbers of three or more
/// digits or with a decimal point; each once, digit grouping removed.
pub(crate) fn items_in(line: &str) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    each_item(line, |item| items.push(item.to_owned()));
    unique_in_order(&mut items);
    items
}

/// Calls `each` with every item of `line` (as [`items_in`] reads them), in order, repeats
/// included: for a reader that collects them its own way.
pub(crate) fn each_item(line: &str, mut each: impl FnMut(&str)) {
    let line = without_digit_commas(line);
    each_candidate(&line, |token| {
        if is_url(token) || (is_identifier(token) && !is_number(token)) {
            each(token);
            return;
        }
        each_number(token, |run| {
            let digits = run.bytes().filter(u8::is_ascii_digit).count();
            if digits >= 3 || run.as_bytes().contains(&b'.') {
                each(run);
            }
        });
    });
}

/// Whether `token` is a plain number (digits, at most one decimal point).
fn is_number(token: &str) -> bool {
    let (mut digits, mut points) = (0, 0);
    for byte in token.bytes() {
        match byte {
            b'0'..=b'9' => digits += 1,
            b'.' => points += 1,
            _ => return false,
        }
    }
    digits > 0 && points <= 1
}

/// Calls `each` with the numbers inside `text`, in order: runs of digits and points, trimmed of
/// points; a run with two points or more (a version, a date) is split at them. One pass over
/// the bytes.
fn each_number<'t>(text: &'t str, mut each: impl FnMut(&'t str)) {
    let bytes = text.as_bytes();
    let numeric = |b: u8| b.is_ascii_digit() || b == b'.';
    let mut at = 0;
    while at < bytes.len() {
        if !numeric(bytes[at]) {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && numeric(bytes[at]) {
            at += 1;
        }
        // Digits and points are ASCII: both ends are character boundaries.
        let run = trim_ascii_matching(&text[start..at], &POINT);
        if run.bytes().filter(|b| *b == b'.').count() > 1 {
            run.split('.')
                .filter(|part| is_number(part))
                .for_each(&mut each);
        } else if is_number(run) {
            each(run);
        }
    }
}

/// The items still looking for a source.
#[derive(Default)]
struct Pending {
    /// Ids, file names and URLs: backed when a source contains them.
    names: Vec<String>,
    /// Numbers: backed when a source holds the same number or one that rounds to it.
    numbers: Vec<Number>,
}

/// A number of the summary (digits and at most one point), and how it was rounded, if it
/// was: to its decimals (`991.4`), or to its trailing zeros (`98800`; none: to units).
struct Number {
    text: String,
    /// Its whole digits (leading zeros not counted).
    digits: usize,
    /// Digits after the point.
    decimals: usize,
    /// Zeros at the end of a number without a point.
    zeros: usize,
}

impl Number {
    fn of(text: &str) -> Number {
        let (decimals, zeros) = match text.split_once('.') {
            Some((_, fraction)) => (fraction.len(), 0),
            None => (0, text.len() - text.trim_end_matches('0').len()),
        };
        Number {
            text: text.to_owned(),
            digits: whole_digits(text),
            decimals,
            zeros,
        }
    }

    /// How this number was rounded: its decimals and its trailing zeros.
    fn rounding(&self) -> (usize, usize) {
        (self.decimals, self.zeros)
    }
}

/// `source` (digits and at most one point) rounded half up to `decimals` places, or when none
/// to its `zeros` last whole digits: done on the digits, so that a long decimal is exact.
fn rounded(source: &str, (decimals, zeros): (usize, usize)) -> String {
    let (whole, fraction) = source.split_once('.').unwrap_or((source, ""));
    if decimals > 0 {
        let mut digits = format!("{whole}{fraction:0<width$}", width = decimals);
        let cut = whole.len() + decimals;
        let up = digits.as_bytes().get(cut).is_some_and(|d| *d >= b'5');
        digits.truncate(cut);
        if up {
            digits = incremented(&digits);
        }
        let point = digits.len() - decimals;
        format!("{}.{}", &digits[..point], &digits[point..])
    } else {
        let kept = whole.len().saturating_sub(zeros);
        let next = if zeros == 0 {
            fraction.as_bytes().first()
        } else if whole.len() >= zeros {
            whole.as_bytes().get(kept)
        } else {
            None // fewer digits than the zeros: it rounds to 0
        };
        let mut digits = whole[..kept].to_owned();
        if next.is_some_and(|d| *d >= b'5') {
            digits = incremented(&digits);
        }
        format!("{digits}{}", "0".repeat(zeros))
    }
}

/// How many digits `number` has before its point, leading zeros not counted.
fn whole_digits(number: &str) -> usize {
    let whole = number
        .as_bytes()
        .split(|b| *b == b'.')
        .next()
        .unwrap_or_default();
    whole.iter().skip_while(|b| **b == b'0').count()
}

/// `digits` plus one in its last place: `199` → `200`, `99` → `100`, `` → `1`.
fn incremented(digits: &str) -> String {
    let mut bytes = digits.as_bytes().to_vec();
    for byte in bytes.iter_mut().rev() {
        if *byte == b'9' {
            *byte = b'0';
        } else {
            *byte += 1;
            return String::from_utf8(bytes).unwrap_or_default();
        }
    }
    format!("1{}", String::from_utf8(bytes).unwrap_or_default())
}

/// `007.5` → `7.5`, `000` → `0`.
fn without_leading_zeros(number: &str) -> &str {
    let trimmed = number.trim_start_matches('0');
    if trimmed.is_empty() || trimmed.starts_with('.') {
        &number[number.len() - trimmed.len() - 1..]
    } else {
        trimmed
    }
}

impl Pending {
    fn add(&mut self, item: &str) {
        if is_number(item) {
            self.numbers.push(Number::of(item));
        } else {
            self.names.push(item.to_owned());
        }
    }

    /// The items no source backed, sorted, each once.
    fn left(&self) -> Vec<&str> {
        let mut left: Vec<&str> = self.names.iter().map(String::as_str).collect();
        left.extend(self.numbers.iter().map(|number| number.text.as_str()));
        sort_unique(&mut left);
        left
    }

    fn is_done(&self) -> bool {
        self.names.is_empty() && self.numbers.is_empty()
    }

    /// Drops every item one of `texts` backs. The texts are read once: each of their numbers
    /// and of the tokens that may be names is looked up among the few items, so that most
    /// items are found by a binary search; only the rest are looked for as roundings and
    /// inside longer tokens.
    fn find_in(&mut self, texts: &[Cow<'_, str>]) {
        if self.is_done() {
            return;
        }
        // Most of the sources' tokens are told apart from every item by their first byte and
        // length alone, and are not looked up.
        let mut first_bytes = [false; 256];
        let mut lengths = [false; MAX_TOKEN_LEN + 1];
        for name in &self.names {
            first_bytes[usize::from(name.as_bytes()[0])] = true;
            lengths[name.len().min(MAX_TOKEN_LEN)] = true;
        }
        // A source number can back a number with as many whole digits, or one more.
        let mut digit_counts = [false; MAX_TOKEN_LEN + 2];
        for number in &self.numbers {
            let digits = number.digits.min(MAX_TOKEN_LEN + 1);
            digit_counts[digits] = true;
            digit_counts[digits.saturating_sub(1)] = true;
        }
        let may_back = |run: &&str| digit_counts[whole_digits(run).min(MAX_TOKEN_LEN + 1)];
        // The items by text, each marked once a source shows it.
        let mut numbers: SortedMap<String, bool> = self
            .numbers
            .iter()
            .map(|number| (number.text.clone(), false))
            .collect();
        let mut names: SortedMap<String, bool> = self
            .names
            .iter()
            .map(|name| (name.clone(), false))
            .collect();
        let see = |items: &mut SortedMap<String, bool>, token: &str| {
            if let Some(seen) = items.get_mut(token) {
                *seen = true;
            }
        };
        let mut runs: Vec<&str> = Vec::new();
        for text in texts {
            each_number(text, |run| {
                if may_back(&run) {
                    see(&mut numbers, run);
                    runs.push(run);
                }
            });
            if !self.names.is_empty() {
                each_candidate(text, |token| {
                    let bytes = token.as_bytes();
                    if first_bytes[usize::from(bytes[0])] && lengths[bytes.len().min(MAX_TOKEN_LEN)]
                    {
                        see(&mut names, token);
                    }
                });
            }
        }
        let seen = |items: &SortedMap<String, bool>, item: &str| items.get(item) == Some(&true);
        self.numbers.retain(|number| !seen(&numbers, &number.text));
        self.names.retain(|name| !seen(&names, name));
        if !self.numbers.is_empty() {
            // Each source number rounded the few ways the summary's numbers were, and looked
            // up: runs × roundings, not runs × numbers.
            sort_unique(&mut runs);
            let mut roundings: Vec<(usize, usize)> =
                self.numbers.iter().map(Number::rounding).collect();
            sort_unique(&mut roundings);
            let mut by_value: SortedMap<String, bool> = self
                .numbers
                .iter()
                .map(|number| (without_leading_zeros(&number.text).to_owned(), false))
                .collect();
            for run in &runs {
                for rounding in &roundings {
                    see(
                        &mut by_value,
                        without_leading_zeros(&rounded(run, *rounding)),
                    );
                }
            }
            self.numbers
                .retain(|number| !seen(&by_value, without_leading_zeros(&number.text)));
        }
        if !self.names.is_empty() {
            for text in texts {
                self.names.retain(|name| !text.contains_text(name.as_str()));
            }
        }
    }
}

/// The compacted entries' texts, digit grouping removed, where a summary's items not in the
/// ledger may come from (the stored text of an execution or tool entry holds every field: its
/// id, metadata, result). A line an earlier summary marked backs nothing: a claim is not
/// verified by repeating it.
fn entry_texts<'a>(selection: &'a Selection) -> Vec<Cow<'a, str>> {
    let mut texts: Vec<Cow<'a, str>> = Vec::new();
    for (_, entry) in &selection.reasoning {
        let text: &str = entry;
        if text.bytes().any(|b| b == b'[') && text.contains_text(UNVERIFIED_MARK) {
            let lines = text.lines().filter(|line| !line.ends_with(UNVERIFIED_MARK));
            let kept = lines.collect::<Vec<_>>().joined("\n");
            texts.push(Cow::Owned(without_digit_commas(&kept).into_owned()));
        } else {
            texts.push(without_digit_commas(text));
        }
    }
    let stored = selection.execution.iter().map(|(_, e)| e.json());
    let stored = stored.chain(selection.tool_activity.iter().map(|(_, e)| e.json()));
    texts.extend(stored.map(without_digit_commas));
    texts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_long_numbers_decimals_ids_files_and_urls() {
        assert_eq!(
            items_in("- Loaded sales_2024.csv: 98,765 rows (12.5%) in 40 ms, see https://x.io/a"),
            ["sales_2024.csv", "98765", "12.5", "https://x.io/a"]
        );
        assert_eq!(items_in("- Step 1. Ran 12 checks on 2026-01-01"), ["2026"]);
        assert_eq!(
            items_in("- run exec_mi9x2k1c and v1.2.3"),
            ["exec_mi9x2k1c"]
        );
    }

    #[test]
    fn a_rounding_is_backed_and_a_different_number_is_not() {
        // What the search over every source decides for one pair.
        let backed = |item: &str, source: &str| {
            let rounded = rounded(source, Number::of(item).rounding());
            without_leading_zeros(&rounded) == without_leading_zeros(item)
        };
        assert!(backed("0.3", "0.30000000000000004"));
        assert!(backed("991.4", "991.402745709"));
        assert!(backed("98800", "98765"));
        assert!(backed("12000", "12004"));
        assert!(backed("100", "98"));
        assert!(backed("99", "98.6"));
        assert!(backed("1000", "999.7"));
        assert!(backed("0.5", "0.46"));
        assert!(backed("1234", "1234"));
        assert!(backed("1234", "01234"));
        assert!(backed("2.50", "2.5"));
        assert!(!backed("991.5", "991.402745709"));
        assert!(!backed("98765", "98766"));
        assert!(!backed("0.31", "0.30000000000000004"));
        assert!(!backed("98700", "98765"));
        assert!(!backed("5000", "12"));
        assert!(!backed("10000", "600"));
        assert!(!backed("0.3", "3"));
    }

    #[test]
    fn items_are_found_exactly_as_roundings_and_inside_longer_tokens_text_after_text() {
        let mut pending = Pending::default();
        let backed = ["98765", "12.5", "991.4", "sales_2024.csv", "exec_ab12"];
        for item in backed.iter().chain(&["98765", "4242", "ghost_file.csv"]) {
            pending.add(item);
        }
        pending.find_in(&[Cow::Borrowed("- loaded 98765 rows")]);
        assert!(!pending.left().contains(&"98765"));
        assert!(pending.left().contains(&"12.5"));
        pending.find_in(&[
            Cow::Borrowed(r#"{"result":991.402745709,"file":"/data/sales_2024.csv"}"#),
            Cow::Borrowed("12.5% of exec_ab12 in 4243 ms"),
        ]);
        for item in backed {
            assert!(!pending.left().contains(&item), "{item}");
        }
        assert_eq!(pending.left(), ["4242", "ghost_file.csv"]);
        assert!(!pending.is_done());
    }

    #[test]
    fn marking_appends_to_the_named_lines_only() {
        let summary = "### 🎯 OBJECTIVE ACHIEVED\n- a 123\n- b";
        let lines = [Unbacked {
            index: 1,
            line: UnverifiedLine {
                line: "- a 123".into(),
                items: vec!["123".into()],
            },
        }];
        assert_eq!(
            mark_unbacked(summary, &lines),
            "### 🎯 OBJECTIVE ACHIEVED\n- a 123 [unverified]\n- b"
        );
    }
}
