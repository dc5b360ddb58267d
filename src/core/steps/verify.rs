//! Catching what the model made up: the numbers, ids, file names and URLs a summary names that
//! none of its sources holds (the compacted originals, earlier summaries among them, and the
//! ledger, pins included). Digit grouping is not a difference, and neither is a rounding of a
//! number that does appear (`991.4` for `991.402745709`, `98,800` for `98,765`).

use crate::core::model::facts::{Ledger, UnverifiedLine};
use crate::core::steps::selection::Selection;
use crate::core::steps::terms::{each_candidate, is_identifier, is_url, without_digit_commas};
use crate::core::steps::validation::heading_section;

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
    for (_, _, items) in &claimed {
        for item in items {
            pending.add(item);
        }
    }
    pending.find_in_sources(selection, ledger);
    claimed
        .into_iter()
        .filter_map(|(index, line, items)| {
            let items: Vec<String> = items
                .into_iter()
                .filter(|item| pending.is_unbacked(item))
                .collect();
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
    summary
        .lines()
        .enumerate()
        .map(|(index, line)| {
            if lines.iter().any(|unbacked| unbacked.index == index) {
                format!("{}{UNVERIFIED_MARK}", line.trim_end())
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a line names that must be backed: URLs, ids and file names, numbers of three or more
/// digits or with a decimal point; each once, digit grouping removed.
fn items_in(line: &str) -> Vec<String> {
    let line = without_digit_commas(line);
    let mut items: Vec<String> = Vec::new();
    let mut add = |item: &str| {
        if !items.iter().any(|known| known == item) {
            items.push(item.to_owned());
        }
    };
    each_candidate(&line, |token| {
        if is_url(token) || (is_identifier(token) && !is_number(token)) {
            add(token);
            return;
        }
        for run in numeric_runs(token) {
            let digits = run.bytes().filter(u8::is_ascii_digit).count();
            if digits >= 3 || run.contains('.') {
                add(run);
            }
        }
    });
    items
}

/// Whether `token` is a plain number (digits, at most one decimal point).
fn is_number(token: &str) -> bool {
    !token.is_empty()
        && token.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && token.matches('.').count() <= 1
        && token.bytes().any(|b| b.is_ascii_digit())
}

/// The numbers inside `text`: runs of digits and points, trimmed of points; a run with two
/// points or more (a version, a date) is split at them.
fn numeric_runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .flat_map(|run| {
            let run = run.trim_matches('.');
            let parts: Vec<&str> = if run.matches('.').count() <= 1 {
                vec![run]
            } else {
                run.split('.').collect()
            };
            parts
        })
        .filter(|run| is_number(run))
}

/// The items still looking for a source.
#[derive(Default)]
struct Pending {
    /// Ids, file names and URLs: backed when a source contains them.
    names: Vec<String>,
    /// Numbers: backed when a source holds the same number or one that rounds to it.
    numbers: Vec<Number>,
}

/// A number of the summary and how far a source's number may be from it to round to it.
struct Number {
    text: String,
    value: f64,
    tolerance: f64,
}

impl Number {
    fn of(text: &str) -> Option<Number> {
        let value: f64 = text.parse().ok()?;
        let tolerance = match text.split_once('.') {
            // 991.4 is 991.402745709 rounded to one decimal.
            Some((_, decimals)) => 0.5 / 10f64.powi(decimals.len().min(300) as i32),
            // 98800 is 98765 rounded to hundreds; 99 is 98.6 rounded.
            None => {
                let zeros = text.len() - text.trim_end_matches('0').len();
                0.5 * 10f64.powi(zeros.min(300) as i32)
            }
        };
        // The float of a long decimal is not exact: a rounding error is not a difference.
        let tolerance = tolerance + value.abs() * 1e-12;
        Some(Number {
            text: text.to_owned(),
            value,
            tolerance,
        })
    }

    /// Whether a source's number (`source`, its value when it parses) is this one or rounds
    /// to it.
    fn backed_by(&self, source: &str, value: Option<f64>) -> bool {
        source == self.text || value.is_some_and(|v| (v - self.value).abs() <= self.tolerance)
    }
}

impl Pending {
    fn add(&mut self, item: &str) {
        if is_number(item) {
            if let Some(number) = Number::of(item) {
                self.numbers.push(number);
                return;
            }
        }
        self.names.push(item.to_owned());
    }

    fn is_unbacked(&self, item: &str) -> bool {
        self.names.iter().any(|name| name == item)
            || self.numbers.iter().any(|number| number.text == item)
    }

    fn is_done(&self) -> bool {
        self.names.is_empty() && self.numbers.is_empty()
    }

    /// Drops every item a source backs; the scan stops once none is left.
    fn find_in_sources(&mut self, selection: &Selection, ledger: &Ledger) {
        let mut look = |text: &str| {
            if self.is_done() {
                return;
            }
            let text = without_digit_commas(text);
            self.names.retain(|name| !text.contains(name.as_str()));
            if !self.numbers.is_empty() {
                for run in numeric_runs(&text) {
                    let value = run.parse::<f64>().ok();
                    self.numbers.retain(|number| !number.backed_by(run, value));
                }
            }
        };
        // The stored text of an execution or tool entry holds every field (its id, metadata,
        // result); escapes do not hide a name or split a number.
        // A line an earlier summary marked backs nothing: a claim is not verified by repeating it.
        selection.reasoning.iter().for_each(|(_, e)| {
            let text: &str = e;
            if text.contains(UNVERIFIED_MARK) {
                let lines = text.lines().filter(|line| !line.ends_with(UNVERIFIED_MARK));
                look(&lines.collect::<Vec<_>>().join("\n"));
            } else {
                look(text);
            }
        });
        selection.execution.iter().for_each(|(_, e)| look(e.json()));
        selection
            .tool_activity
            .iter()
            .for_each(|(_, e)| look(e.json()));
        ledger.facts.iter().for_each(|fact| look(&fact.text));
    }
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
        let number = |text: &str| Number::of(text).map(|n| n.tolerance);
        assert!(number("0.3").is_some());
        let backed = |item: &str, source: &str| {
            Number::of(item).is_some_and(|n| n.backed_by(source, source.parse().ok()))
        };
        assert!(backed("0.3", "0.30000000000000004"));
        assert!(backed("991.4", "991.402745709"));
        assert!(backed("98800", "98765"));
        assert!(backed("99", "98.6"));
        assert!(backed("1234", "1234"));
        assert!(!backed("991.5", "991.402745709"));
        assert!(!backed("98765", "98766"));
        assert!(!backed("0.31", "0.30000000000000004"));
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
