//! A summary's index: one line per range of iterations whose facts left the summary, naming
//! the archive that holds them, what is there, and the `recall` that brings them back. The
//! package writes these lines itself (a model's copy of them is dropped) and folds the oldest
//! into wider ranges, so that the index stays as small as the summary around it.

use crate::core::order::join::Joined;
use crate::core::order::text_search::TextSearch;
use std::fmt::Write;

use crate::core::log::tokens::estimate_tokens;
use crate::core::model::facts::{Fact, FactKind, IndexLine};
use crate::core::steps::label::{label_of, label_range};
use crate::core::steps::repair::insert_at_section_end;

/// The section the index lines go in: 📝 IMPORTANT CONTEXT FOR FUTURE REASONING.
const INDEX_SECTION: usize = 5;

/// Index lines a summary holds at most: the oldest fold first.
pub const MAX_INDEX_LINES: usize = 8;

/// How an index line names the archive of the summary it is in (its source line names it).
const THIS_ARCHIVE: &str = "this summary's archive";

/// Characters an index line takes at most: what it cannot name within them it counts.
pub const MAX_LINE_CHARS: usize = 239;

/// Lines naming open failures a summary holds at most (their share of the budget bounds them
/// first in all but the largest windows).
pub const MAX_OPEN_LINES: usize = 12;

/// How a line of open failures starts.
const OPEN_FAILURES: &str = "- Open failures, recall(n) each:";

/// Runs of iterations a line's recall names at most: beyond, the two nearest runs join.
const MAX_SPANS: usize = 3;

impl IndexLine {
    /// The lines for `demoted`, the facts that leave with this compaction (none when none
    /// does), of which the failures `resolved` names were resolved; their archive is the one
    /// this compaction writes. A fact of unknown iterations counts in `fallback`. Open failures
    /// have a line of their own, each named with its recall; the other facts a line over the
    /// runs of iterations that hold them.
    pub fn of(demoted: &[Fact], resolved: &[String], fallback: [u32; 2]) -> Vec<IndexLine> {
        let mut line = IndexLine::default();
        let mut open = IndexLine::default();
        let mut names: Vec<String> = Vec::new();
        let mut spans: Vec<[u32; 2]> = Vec::new();
        for fact in demoted {
            let [first, last] = fact.iterations.unwrap_or(fallback);
            match fact.kind {
                FactKind::Failure if !resolved.contains(&fact.id) => {
                    open.failures_open += 1;
                    open.open.push(format!("{} ({first})", name_of(fact)));
                    open.widen(first, last);
                    continue;
                }
                FactKind::Result => line.results += 1,
                FactKind::Failure => line.failures_resolved += 1,
                FactKind::Identifier => line.identifiers += 1,
                FactKind::Goal | FactKind::Pin => line.others += 1,
            }
            spans.push([first, last]);
            if matches!(fact.kind, FactKind::Result | FactKind::Identifier) {
                names.push(name_of(fact));
            }
        }
        line.names = ends(names);
        line.set_spans(spans);
        [open, line]
            .into_iter()
            .filter(|line| line.first > 0)
            .collect()
    }

    /// This line with `archive` for the archive of the summary it was read from.
    pub fn in_archive(mut self, archive: &str) -> IndexLine {
        if self.archive.is_none() {
            self.archive = Some(archive.to_owned());
        }
        self
    }

    /// The runs of iterations it counts, oldest first.
    pub fn spans(&self) -> Vec<[u32; 2]> {
        match self.spans.is_empty() {
            true => vec![[self.first, self.last]],
            false => self.spans.clone(),
        }
    }

    /// The line as the summary states it, within [`MAX_LINE_CHARS`].
    pub fn render(&self) -> String {
        match self.holds_open_failures_only() {
            true => self.render_open(),
            false => self.render_range(),
        }
    }

    /// Whether it names open failures and nothing else.
    fn holds_open_failures_only(&self) -> bool {
        self.failures_open > 0
            && self.results + self.failures_resolved + self.identifiers + self.others == 0
    }

    /// `- Open failures, recall(n) each: readMetrics(shard_5) (5), …`: each open failure named
    /// with its iteration, the newest first; those it cannot name are counted with the recall
    /// of their range.
    fn render_open(&self) -> String {
        let mut line = String::from(OPEN_FAILURES);
        let mut shown = 0;
        // Room for a count of those left, unless every one is named.
        let all_named =
            self.failures_open == self.open.len() && self.named_chars() <= MAX_LINE_CHARS;
        let reserve = if all_named { 0 } else { 40 };
        for piece in self.open.iter().rev() {
            if line.chars().count() + piece.chars().count() + 2 + reserve > MAX_LINE_CHARS {
                break;
            }
            let _ = write!(line, "{} {piece}", if shown == 0 { "" } else { "," });
            shown += 1;
        }
        let left = self.failures_open.saturating_sub(shown);
        if left > 0 {
            let _ = write!(
                line,
                "{} {left} more in recall({}..{})",
                if shown == 0 { "" } else { ";" },
                self.first,
                self.last
            );
        }
        line
    }

    /// Characters of the line that names every open failure it holds.
    fn named_chars(&self) -> usize {
        let pieces: usize = self.open.iter().map(|p| p.chars().count() + 2).sum();
        OPEN_FAILURES.len() + pieces
    }

    /// `- Iterations 1–40 (archive …): 38 results of compare(shard_1…shard_38), …; recall(1..40)`:
    /// the labels of its first and last results as they fit.
    fn render_range(&self) -> String {
        let spans = self.spans();
        let ranges: Vec<String> = spans
            .iter()
            .map(|[a, b]| match a == b {
                true => a.to_string(),
                false => format!("{a}–{b}"),
            })
            .collect();
        let range = match spans.as_slice() {
            [[a, b]] if a == b => format!("Iteration {a}"),
            _ => format!("Iterations {}", ranges.joined(", ")),
        };
        let recall: Vec<String> = spans
            .iter()
            .map(|[a, b]| format!("recall({a}..{b})"))
            .collect();
        let archive = match (&self.archive, &self.last_archive) {
            (None, _) => THIS_ARCHIVE.to_owned(),
            (Some(one), None) => format!("archive {one}"),
            (Some(oldest), Some(newest)) => {
                // `gdrs_archived_logs_17…` once: the newest by what differs.
                let same = oldest
                    .bytes()
                    .zip(newest.bytes())
                    .take_while(|(a, b)| a == b && a.is_ascii() && !a.is_ascii_digit())
                    .count();
                format!("archives {oldest}…{}", &newest[same..])
            }
        };
        let line = |label: bool, archive: &str| {
            let mut what: Vec<String> = Vec::new();
            if self.results > 0 {
                let mut results = counted(self.results, "result", "results");
                if let (true, [first, ..]) = (label, self.names.as_slice()) {
                    let last = self.names.last().unwrap_or(first);
                    let _ = write!(results, " of {}", label_range(first, last));
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
                "- {range} ({archive}): {}; {}",
                what.joined(", "),
                recall.joined(", ")
            )
        };
        // Within the bound: without the labels, then without the archives' keys (an app's
        // long prefix); `recall` finds the archives by iteration.
        let within = |line: &String| line.chars().count() <= MAX_LINE_CHARS;
        [line(true, &archive), line(false, &archive)]
            .into_iter()
            .find(within)
            .unwrap_or_else(|| line(false, "their archives"))
    }

    /// `spans` in order, adjacent runs joined, at most [`MAX_SPANS`] (the nearest joined
    /// first); `first` and `last` their ends (0 when there is none).
    fn set_spans(&mut self, spans: Vec<[u32; 2]>) {
        let mut joined: Vec<[u32; 2]> = Vec::new();
        for span in spans {
            let at = joined.iter().position(|j| j[0] > span[0]);
            joined.insert(at.unwrap_or(joined.len()), span);
        }
        let mut at = 1;
        while at < joined.len() {
            // Adjacent runs join, and beyond MAX_SPANS the nearest two.
            let nearest = (1..joined.len())
                .min_by_key(|k| joined[*k][0].saturating_sub(joined[*k - 1][1]))
                .unwrap_or(1);
            let touching = joined[at][0] <= joined[at - 1][1].saturating_add(1);
            let join = match touching {
                true => at,
                false if joined.len() > MAX_SPANS => nearest,
                false => {
                    at += 1;
                    continue;
                }
            };
            let [_, b] = joined.remove(join);
            joined[join - 1][1] = joined[join - 1][1].max(b);
        }
        self.first = 0;
        self.last = 0;
        for [a, b] in &joined {
            self.widen(*a, *b);
        }
        if joined.len() == 1 {
            joined.clear();
        }
        self.spans = joined;
    }

    /// Its range widened to hold `first..=last`.
    fn widen(&mut self, first: u32, last: u32) {
        self.first = match self.first {
            0 => first,
            mine => mine.min(first),
        };
        self.last = self.last.max(last);
    }

    /// `self` and the line after it as one line over both ranges.
    fn folded_with(&self, newer: &IndexLine) -> IndexLine {
        let mut names = self.names.clone();
        names.extend(newer.names.iter().cloned());
        let mut spans = self.spans();
        spans.extend(newer.spans());
        let mut line = IndexLine {
            last_archive: newer
                .last_archive
                .clone()
                .or(newer.archive.clone())
                .filter(|newest| self.archive.as_ref() != Some(newest)),
            archive: self.archive.clone(),
            results: self.results + newer.results,
            failures_resolved: self.failures_resolved + newer.failures_resolved,
            failures_open: self.failures_open + newer.failures_open,
            identifiers: self.identifiers + newer.identifiers,
            others: self.others + newer.others,
            names: ends(names),
            ..IndexLine::default()
        };
        line.set_spans(spans);
        line
    }
}

/// `carried` (an earlier summary's index) and `new` (this compaction's lines): the lines of
/// other facts within `max_tokens[0]`, the oldest folded into wider ranges, then those of open
/// failures within `max_tokens[1]`, packed newest first.
pub fn index_of(
    carried: &[IndexLine],
    new: Vec<IndexLine>,
    max_tokens: [usize; 2],
) -> Vec<IndexLine> {
    let lines = carried
        .iter()
        .filter(|l| l.archive.is_some())
        .cloned()
        .chain(new);
    let (open, lines): (Vec<IndexLine>, Vec<IndexLine>) =
        lines.partition(IndexLine::holds_open_failures_only);
    let mut lines = folded(lines, max_tokens[0]);
    lines.append(&mut packed(open, max_tokens[1]));
    lines
}

/// The open failures `lines` name, newest first, in as many lines as fit `max_tokens` and
/// [`MAX_OPEN_LINES`], each within [`MAX_LINE_CHARS`]; the oldest that do not fit are counted
/// by one line with the recall of their range. Oldest line first.
fn packed(lines: Vec<IndexLine>, max_tokens: usize) -> Vec<IndexLine> {
    // The line that counts what the others cannot name.
    let mut older = IndexLine::default();
    let mut pieces: Vec<(String, u32)> = Vec::new();
    for line in lines {
        let unnamed = line.failures_open.saturating_sub(line.open.len());
        if unnamed > 0 {
            older.failures_open += unnamed;
            older.widen(line.first, line.last);
        }
        for piece in line.open {
            let at = piece.rsplit('(').next().unwrap_or_default();
            let n = at.trim_end_matches(')').parse().unwrap_or(line.first);
            pieces.push((piece, n));
        }
    }
    let mut out: Vec<IndexLine> = Vec::new();
    let mut line = IndexLine::default();
    // Tokens taken so far, the counting line's included.
    let mut used = 24;
    while let Some((piece, n)) = pieces.pop() {
        let full = line.named_chars() + piece.chars().count() + 2 > MAX_LINE_CHARS;
        let cost = estimate_tokens(&piece) + if full { 12 } else { 2 };
        if used + cost > max_tokens || (full && out.len() + 2 > MAX_OPEN_LINES) {
            pieces.push((piece, n));
            break;
        }
        if full {
            out.push(std::mem::take(&mut line));
        }
        used += cost;
        line.open.insert(0, piece);
        line.failures_open += 1;
        line.widen(n, n);
    }
    out.push(line);
    for (_, n) in &pieces {
        older.widen(*n, *n);
    }
    older.failures_open += pieces.len();
    out.push(older);
    out.retain(|line| line.failures_open > 0);
    out.reverse();
    out
}

/// `lines`, oldest first, folded two neighbours at a time until at most [`MAX_INDEX_LINES`]
/// remain and they fit `max_tokens`; the newest is never folded. The fold that lists the
/// fewest runs of iterations goes first (the oldest of equals), so that no line's recall
/// spans iterations it does not count while another fold would do.
fn folded(mut lines: Vec<IndexLine>, max_tokens: usize) -> Vec<IndexLine> {
    while lines.len() > 2 && (lines.len() > MAX_INDEX_LINES || index_tokens(&lines) > max_tokens) {
        let runs = |at: usize| {
            let [older, newer] = [&lines[at], &lines[at + 1]];
            let touching = older.last.saturating_add(1) >= newer.first;
            older.spans.len().max(1) + newer.spans.len().max(1) - usize::from(touching)
        };
        let at = (0..lines.len() - 2).min_by_key(|at| runs(*at)).unwrap_or(0);
        let newer = lines.remove(at + 1);
        let older = lines.remove(at);
        lines.insert(at, older.folded_with(&newer));
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
    let ours = line.starts_with("- Iteration") || line.starts_with(OPEN_FAILURES);
    ours && line.contains_text(" recall(") && line.ends_with(')')
}

/// `summary` without any index line (a model may copy the earlier summary's).
pub fn without_index(summary: &str) -> String {
    if !summary.contains_text(" recall(") {
        return summary.to_owned();
    }
    summary
        .lines()
        .filter(|line| !is_index_line(line))
        .collect::<Vec<_>>()
        .joined("\n")
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

/// What a fact is named by in an index line: a result or a failure by its task's label, an
/// identifier by itself.
fn name_of(fact: &Fact) -> String {
    let name = fact
        .id
        .split_once(':')
        .map_or(fact.id.as_str(), |(_, name)| name);
    label_of(name)
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
        let mut failure = result("fetch", 39);
        failure.kind = FactKind::Failure;
        demoted.push(failure.clone());
        failure.iterations = Some([40, 40]);
        demoted.push(failure);
        let line = IndexLine::of(&demoted, &["result:fetch".into()], [1, 40]).remove(0);
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
        assert_eq!(IndexLine::of(&[], &[], [1, 2]), Vec::new());
    }

    /// The line of the results of iterations `first..=last`, each task `t{n}`.
    fn run_line(first: u32, last: u32) -> IndexLine {
        let demoted: Vec<Fact> = (first..=last)
            .map(|n| result(&format!("t{n}"), n))
            .collect();
        IndexLine::of(&demoted, &[], [1, 1]).remove(0)
    }

    #[test]
    fn the_oldest_lines_fold_into_wider_ranges_and_the_newest_stays() {
        let carried: Vec<IndexLine> = (0..12u32)
            .map(|k| run_line(k * 10 + 1, k * 10 + 10).in_archive(&format!("a{k}")))
            .collect();
        let index = index_of(&carried, vec![run_line(121, 125)], [10_000; 2]);
        assert_eq!(index.len(), MAX_INDEX_LINES);
        assert_eq!(
            index[0].render(),
            "- Iterations 1–60 (archives a0…5): 60 results of t1…t60; recall(1..60)"
        );
        assert_eq!(index.last().unwrap().archive, None);
        let tight = index_of(&carried, vec![run_line(121, 125)], [1; 2]);
        assert_eq!(tight.len(), 2);
        assert_eq!(
            (tight[0].first, tight[0].last, tight[0].results),
            (1, 120, 120)
        );
    }

    #[test]
    fn a_folded_lines_archives_are_named_whatever_their_prefixes() {
        let mut line = run_line(1, 2).in_archive("gdrs_archived_logs_17953");
        line.last_archive = Some("gdrs_archived_logs_17954".into());
        assert!(line
            .render()
            .contains_text("archives gdrs_archived_logs_17953…17954"));
        // Prefixes the app changed between compactions, alike in their first byte only.
        line.archive = Some("ü_archived_logs_1".into());
        line.last_archive = Some("ö_archived_logs_2".into());
        assert!(line
            .render()
            .contains_text("archives ü_archived_logs_1…ö_archived_logs_2"));
    }

    #[test]
    fn an_index_line_stays_under_its_bound_whatever_the_archive_prefix() {
        let prefix = "a_very_long_application_prefix_".repeat(6);
        let mut line = run_line(1, 40).in_archive(&format!("{prefix}archived_logs_17953"));
        line.last_archive = Some(format!("{prefix}archived_logs_17954"));
        let rendered = line.render();
        assert!(rendered.chars().count() <= MAX_LINE_CHARS, "{rendered}");
        assert_eq!(
            rendered,
            "- Iterations 1–40 (their archives): 40 results; recall(1..40)"
        );
    }

    #[test]
    fn a_recall_covers_only_the_iterations_a_line_counts() {
        // The issue's mixed range: a failure resolved at 79, results of 918–956.
        let mut demoted: Vec<Fact> = (918..=956).map(|n| result(&format!("t{n}"), n)).collect();
        let mut failure = result("fetch", 79);
        failure.kind = FactKind::Failure;
        demoted.push(failure);
        let line = IndexLine::of(&demoted, &["result:fetch".into()], [1, 1]).remove(0);
        assert!(
            line.render()
                .ends_with("; recall(79..79), recall(918..956)"),
            "{}",
            line.render()
        );
        // Lines of scattered iterations fold without a range over what they do not count.
        let sparse: Vec<IndexLine> = (0..12u32)
            .map(|k| run_line(k * 10 + 1, k * 10 + 2).in_archive(&format!("a{k}")))
            .collect();
        for line in index_of(&sparse, vec![run_line(200, 201)], [10_000; 2]) {
            let counted: u32 = line.spans().iter().map(|[a, b]| b - a + 1).sum();
            assert!(counted <= line.results as u32, "{}", line.render());
        }
    }

    #[test]
    fn open_failures_that_leave_are_each_named_with_their_recall() {
        let failure = |n: u32| {
            let mut fact = result(
                &format!(r#"const m = await readMetrics("shard_{n:04}", "p95");"#),
                n,
            );
            fact.kind = FactKind::Failure;
            fact
        };
        let lines = IndexLine::of(&[failure(35), result("t40", 40), failure(70)], &[], [1, 1]);
        let rendered: Vec<String> = lines.iter().map(IndexLine::render).collect();
        assert_eq!(
            rendered,
            [
                "- Open failures, recall(n) each: readMetrics(shard_0070) (70), \
                 readMetrics(shard_0035) (35)",
                "- Iteration 40 (this summary's archive): 1 result of t40; recall(40..40)",
            ]
        );
        assert!(rendered.iter().all(|line| is_index_line(line)));
        // More than a line can name: the newest named, the rest counted with their range.
        let many: Vec<Fact> = (1..=20).map(|n| failure(n * 35)).collect();
        let line = IndexLine::of(&many, &[], [1, 1]).remove(0).render();
        assert!(line.chars().count() <= MAX_LINE_CHARS, "{line}");
        assert!(
            line.contains_text("readMetrics(shard_0700) (700)"),
            "{line}"
        );
        assert!(line.ends_with(" more in recall(35..700)"), "{line}");
    }

    #[test]
    fn index_lines_are_dropped_from_an_answer_and_put_in_the_last_section() {
        let summary = "### 🎯 OBJECTIVE ACHIEVED\n- a\n### 📝 IMPORTANT CONTEXT FOR FUTURE \
                       REASONING\n- keep\n- Iterations 1–4 (archive x): 2 results; recall(1..4)";
        let stripped = without_index(summary);
        assert!(!stripped.contains_text("recall("));
        let line = IndexLine::of(&[result("t", 3)], &[], [1, 1]).remove(0);
        assert_eq!(
            with_index(&stripped, &[line]),
            "### 🎯 OBJECTIVE ACHIEVED\n- a\n### 📝 IMPORTANT CONTEXT FOR FUTURE \
             REASONING\n- keep\n- Iteration 3 (this summary's archive): 1 result of t; \
             recall(3..3)"
        );
    }
}
