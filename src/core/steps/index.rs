//! A summary's index: one line per range of iterations whose facts left the summary, naming
//! the archive that holds them, what is there, and the `recall` that brings them back. The
//! package writes these lines itself (a model's copy of them is dropped) and folds the oldest
//! into wider ranges, so that the index stays as small as the summary around it.

use std::fmt::Write;

use crate::core::log::tokens::estimate_tokens;
use crate::core::model::facts::{Fact, FactKind, IndexLine};
use crate::core::steps::repair::insert_at_section_end;

/// The section the index lines go in: 📝 IMPORTANT CONTEXT FOR FUTURE REASONING.
const INDEX_SECTION: usize = 5;

/// Index lines a summary holds at most: the oldest fold first.
pub const MAX_INDEX_LINES: usize = 8;

/// How an index line names the archive of the summary it is in (its source line names it).
const THIS_ARCHIVE: &str = "this summary's archive";

/// Characters of a name an index line shows.
const NAME_CHARS: usize = 40;

impl IndexLine {
    /// The line for `demoted`, the facts that leave with this compaction (`None` when none
    /// does), of which the failures `resolved` names were resolved; its archive is the one this
    /// compaction writes. A fact of unknown iterations counts in `fallback`.
    pub fn of(demoted: &[Fact], resolved: &[String], fallback: [u32; 2]) -> Option<IndexLine> {
        if demoted.is_empty() {
            return None;
        }
        let mut line = IndexLine {
            first: u32::MAX,
            ..IndexLine::default()
        };
        let mut names: Vec<String> = Vec::new();
        for fact in demoted {
            let [first, last] = fact.iterations.unwrap_or(fallback);
            line.first = line.first.min(first);
            line.last = line.last.max(last);
            match fact.kind {
                FactKind::Result => line.results += 1,
                FactKind::Failure if resolved.contains(&fact.id) => line.failures_resolved += 1,
                FactKind::Failure => line.failures_open += 1,
                FactKind::Identifier => line.identifiers += 1,
                FactKind::Goal | FactKind::Pin => line.others += 1,
            }
            if matches!(fact.kind, FactKind::Result | FactKind::Identifier) {
                names.push(name_of(fact));
            }
        }
        line.names = ends(names);
        Some(line)
    }

    /// This line with `archive` for the archive of the summary it was read from.
    pub fn in_archive(mut self, archive: &str) -> IndexLine {
        if self.archive.is_none() {
            self.archive = Some(archive.to_owned());
        }
        self
    }

    /// The line as the summary states it.
    pub fn render(&self) -> String {
        let range = if self.first == self.last {
            format!("Iteration {}", self.first)
        } else {
            format!("Iterations {}–{}", self.first, self.last)
        };
        let archive = match (&self.archive, &self.last_archive) {
            (None, _) => THIS_ARCHIVE.to_owned(),
            (Some(one), None) => format!("archive {one}"),
            (Some(oldest), Some(newest)) => format!("archives {oldest}…{newest}"),
        };
        let mut what: Vec<String> = Vec::new();
        if self.results > 0 {
            let mut results = counted(self.results, "result", "results");
            match self.names.as_slice() {
                [one] => {
                    let _ = write!(results, " of {one}");
                }
                [first, last, ..] => {
                    let _ = write!(results, " of {first}…{last}");
                }
                [] => {}
            }
            what.push(results);
        }
        if self.failures_resolved > 0 {
            let failures = counted(self.failures_resolved, "failure", "failures");
            what.push(format!("{failures} resolved"));
        }
        if self.failures_open > 0 {
            let failures = counted(self.failures_open, "open failure", "open failures");
            what.push(failures);
        }
        if self.identifiers > 0 {
            let ids = counted(self.identifiers, "identifier", "identifiers");
            what.push(format!("{ids} no longer referred to"));
        }
        if self.others > 0 {
            what.push(counted(self.others, "other fact", "other facts"));
        }
        format!(
            "- {range} ({archive}): {}; recall({}..{})",
            what.join(", "),
            self.first,
            self.last
        )
    }

    /// `self` and the line after it as one line over both ranges.
    fn folded_with(self, newer: IndexLine) -> IndexLine {
        let mut names = self.names;
        names.extend(newer.names);
        IndexLine {
            first: self.first.min(newer.first),
            last: self.last.max(newer.last),
            last_archive: newer
                .last_archive
                .or(newer.archive)
                .filter(|newest| self.archive.as_ref() != Some(newest)),
            archive: self.archive,
            results: self.results + newer.results,
            failures_resolved: self.failures_resolved + newer.failures_resolved,
            failures_open: self.failures_open + newer.failures_open,
            identifiers: self.identifiers + newer.identifiers,
            others: self.others + newer.others,
            names: ends(names),
        }
    }
}

/// `carried` (an earlier summary's index) and `new` (this compaction's line), oldest first,
/// the oldest folded together until at most [`MAX_INDEX_LINES`] remain and they fit
/// `max_tokens` (two lines always stay: the newest is never folded).
pub fn index_of(
    carried: &[IndexLine],
    new: Option<IndexLine>,
    max_tokens: usize,
) -> Vec<IndexLine> {
    let mut lines: Vec<IndexLine> = carried
        .iter()
        .filter(|l| l.archive.is_some())
        .cloned()
        .collect();
    lines.extend(new);
    while lines.len() > 2 && (lines.len() > MAX_INDEX_LINES || index_tokens(&lines) > max_tokens) {
        let oldest = lines.remove(0);
        let next = lines.remove(0);
        lines.insert(0, oldest.folded_with(next));
    }
    lines
}

/// Tokens the index lines take in a summary.
pub fn index_tokens(lines: &[IndexLine]) -> usize {
    lines
        .iter()
        .map(|line| estimate_tokens(&line.render()) + 1)
        .sum()
}

/// Whether `line` is one of the index lines the package writes.
pub fn is_index_line(line: &str) -> bool {
    // A copy a model ended with punctuation is an index line all the same.
    let line = line
        .trim()
        .trim_end_matches(|c: char| c.is_whitespace() || (c.is_ascii_punctuation() && c != ')'));
    line.starts_with("- Iteration") && line.contains("; recall(") && line.ends_with(')')
}

/// `summary` without any index line (a model may copy the earlier summary's).
pub fn without_index(summary: &str) -> String {
    if !summary.contains("; recall(") {
        return summary.to_owned();
    }
    summary
        .lines()
        .filter(|line| !is_index_line(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `summary` (canonical, without index lines) with `index` at the end of its 📝 section.
pub fn with_index(summary: &str, index: &[IndexLine]) -> String {
    if index.is_empty() {
        return summary.to_owned();
    }
    let rendered: Vec<String> = index.iter().map(IndexLine::render).collect();
    insert_at_section_end(summary, INDEX_SECTION, &rendered)
}

fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What a fact is named by in an index line: a result by its task, an identifier by itself.
fn name_of(fact: &Fact) -> String {
    let name = fact
        .id
        .split_once(':')
        .map_or(fact.id.as_str(), |(_, name)| name);
    let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
    if name.chars().count() > NAME_CHARS {
        let cut: String = name.chars().take(NAME_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        name
    }
}

/// The first and the last of `names` (one when they are the same).
fn ends(mut names: Vec<String>) -> Vec<String> {
    if names.len() > 2 {
        let last = names.pop();
        names.truncate(1);
        names.extend(last);
    }
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(task: &str, n: u32) -> Fact {
        Fact {
            id: format!("result:{task}"),
            kind: FactKind::Result,
            text: format!("Result of {task} (iteration {n}): 1"),
            exact: vec!["1".into()],
            words: Vec::new(),
            iterations: Some([n, n]),
        }
    }

    #[test]
    fn a_line_names_its_range_archive_counts_and_recall() {
        let mut demoted: Vec<Fact> = (1..=38)
            .map(|n| result(&format!("shard_{n:03}"), n))
            .collect();
        let mut failure = result("fetch", 40);
        failure.kind = FactKind::Failure;
        demoted.push(failure.clone());
        demoted.push(failure);
        let line = IndexLine::of(&demoted, &["result:fetch".into()], [1, 40]).unwrap();
        assert_eq!(
            line.render(),
            "- Iterations 1–40 (this summary's archive): 38 results of shard_001…shard_038, \
             2 failures resolved; recall(1..40)"
        );
        assert!(is_index_line(&line.render()));
        assert!(is_index_line(&format!("{}.", line.render())));
        assert!(is_index_line(&format!("  {} ;", line.render())));
        assert_eq!(
            line.clone().in_archive("gdrs_archived_logs_7").render(),
            "- Iterations 1–40 (archive gdrs_archived_logs_7): 38 results of \
             shard_001…shard_038, 2 failures resolved; recall(1..40)"
        );
        assert_eq!(IndexLine::of(&[], &[], [1, 2]), None);
    }

    #[test]
    fn the_oldest_lines_fold_into_wider_ranges_and_the_newest_stays() {
        let carried: Vec<IndexLine> = (0..12u32)
            .map(|k| {
                IndexLine::of(&[result(&format!("t{k}"), k * 10 + 1)], &[], [1, 1])
                    .unwrap()
                    .in_archive(&format!("a{k}"))
            })
            .collect();
        let new = IndexLine::of(&[result("t12", 121)], &[], [1, 1]);
        let index = index_of(&carried, new, 10_000);
        assert_eq!(index.len(), MAX_INDEX_LINES);
        assert_eq!(
            (index[0].first, index[0].last, index[0].results),
            (1, 51, 6)
        );
        assert_eq!(
            index[0].render(),
            "- Iterations 1–51 (archives a0…a5): 6 results of t0…t5; recall(1..51)"
        );
        assert_eq!(index.last().unwrap().archive, None);
        let tight = index_of(
            &carried,
            IndexLine::of(&[result("t12", 121)], &[], [1, 1]),
            1,
        );
        assert_eq!(tight.len(), 2);
        assert_eq!(tight[0].results, 12);
    }

    #[test]
    fn index_lines_are_dropped_from_an_answer_and_put_in_the_last_section() {
        let summary = "### 🎯 OBJECTIVE ACHIEVED\n- a\n### 📝 IMPORTANT CONTEXT FOR FUTURE \
                       REASONING\n- keep\n- Iterations 1–4 (archive x): 2 results; recall(1..4)";
        let stripped = without_index(summary);
        assert!(!stripped.contains("recall("));
        let line = IndexLine::of(&[result("t", 3)], &[], [1, 1]).unwrap();
        assert_eq!(
            with_index(&stripped, &[line]),
            "### 🎯 OBJECTIVE ACHIEVED\n- a\n### 📝 IMPORTANT CONTEXT FOR FUTURE \
             REASONING\n- keep\n- Iteration 3 (this summary's archive): 1 result of t; \
             recall(3..3)"
        );
    }
}
