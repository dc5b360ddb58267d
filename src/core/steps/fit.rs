//! Holding a summary to its budget, whatever the provider wrote: the lines that keep no fact of
//! the ledger go first (the longest first, a fenced block as one; the model's newest point under
//! each required section stays), the facts a cut took are put back in the ledger's words, and
//! at last the summary is the facts under their headings with those points, or the facts alone.
//! What goes is still in the archive the summary names.

use crate::core::log::tokens::estimate_tokens;
use crate::core::model::facts::{Fact, Ledger};
use crate::core::order::join::Joined;
use crate::core::order::sort::sort_by;
use crate::core::order::text_search::TextSearch;
use crate::core::steps::provenance::INJECTED_MARK;
use crate::core::steps::repair::{repair, section_of};
use crate::core::steps::terms::{identifiers_in, Normalised};
use crate::core::steps::validation::{
    canonical_heading, filled, heading_section, REQUIRED_SECTIONS, SECTIONS, SEE_THE_ARCHIVE,
};
use crate::core::steps::verify::UNVERIFIED_MARK;

/// `summary` (canonical, repaired) within `max_tokens`, and how many of its lines went.
pub fn fit(summary: &str, ledger: &Ledger, max_tokens: usize) -> (String, usize) {
    if estimate_tokens(summary) <= max_tokens {
        return (summary.to_owned(), 0);
    }
    let lines: Vec<&str> = summary.lines().collect();
    let headings: Vec<Option<usize>> = lines.iter().map(|line| heading_section(line)).collect();
    let units = units_of(&lines, &headings);
    let mut protected = protected_lines(&lines, ledger);
    let sections = sections_of(&headings);
    // The model's newest points stay after the facts and the marked lines, as they fit.
    let mut taken: usize = (0..lines.len())
        .filter(|at| protected[*at] || sections[*at].is_none() || headings[*at].is_some())
        .map(|at| estimate_tokens(lines[at]) + 1)
        .sum();
    let mut newest = newest_points(&sections, &units, &protected, max_tokens / 8);
    newest.retain(|at| {
        taken += estimate_tokens(lines[*at]) + 1;
        taken <= max_tokens
    });
    newest.iter().for_each(|at| protected[*at] = true);
    let terms = fact_terms(ledger);
    let mentions = |unit: &Unit| {
        lines[unit.start..unit.end]
            .iter()
            .any(|line| terms.iter().any(|term| line.contains_text(term.as_str())))
    };
    let mut removable: Vec<(bool, &Unit)> = units
        .iter()
        .filter(|unit| !(unit.start..unit.end).any(|at| protected[at]))
        .map(|unit| (mentions(unit), unit))
        .collect();
    // Lines that name nothing a fact names go first, then the rest; the longest first.
    sort_by(&mut removable, |(a_names, a), (b_names, b)| {
        (a_names, b.tokens).cmp(&(b_names, a.tokens))
    });
    let removable = removable.into_iter().map(|(_, unit)| unit);
    let mut gone = vec![false; lines.len()];
    let kept_text = |gone: &[bool]| -> String {
        let kept: Vec<&str> = lines
            .iter()
            .zip(gone)
            .filter(|(_, gone)| !**gone)
            .map(|(line, _)| *line)
            .collect();
        kept.joined("\n")
    };
    // Units are counted line by line; the whole is counted again once they seem to fit.
    let mut total = estimate_tokens(summary);
    let mut cut = 0;
    for unit in removable {
        if total <= max_tokens && estimate_tokens(&filled(&kept_text(&gone))) <= max_tokens {
            break;
        }
        (unit.start..unit.end).for_each(|at| gone[at] = true);
        total = total.saturating_sub(unit.tokens);
        cut += unit.end - unit.start;
    }
    let trimmed = kept_text(&gone);
    // A fact the cut took, or whose id, file or figure it took (a task's file named only in a
    // code block that went), is put back in the ledger's words.
    let took_a_name = |fact: &Fact| {
        identifiers_in(&fact.text).iter().any(|name| {
            summary.contains_text(name.as_str()) && !trimmed.contains_text(name.as_str())
        })
    };
    let lost = ledger.missing_in(&trimmed);
    let missing: Vec<&Fact> = ledger
        .facts
        .iter()
        .filter(|fact| took_a_name(fact) || lost.iter().any(|m| m.id == fact.id))
        .collect();
    let trimmed = filled(&repair(&trimmed, &missing));
    if estimate_tokens(&trimmed) <= max_tokens {
        return (trimmed, cut);
    }
    let points: Vec<(usize, &str)> = newest
        .iter()
        .filter_map(|at| Some((sections[*at]?, lines[*at])))
        .collect();
    let alone = facts_and(ledger, &points);
    if estimate_tokens(&alone) <= max_tokens {
        return (alone, lines.len() - points.len());
    }
    (facts_alone(ledger), lines.len())
}

/// The newest point (a line of its own, not a fenced block, of at most `max_tokens`) the model
/// wrote under each required section that keeps no fact: it stays while anything else can go,
/// so that no required section is left with nothing of the model's.
fn newest_points(
    sections: &[Option<usize>],
    units: &[Unit],
    protected: &[bool],
    max_tokens: usize,
) -> Vec<usize> {
    let mut newest: Vec<(usize, usize)> = Vec::new();
    let kept: Vec<usize> = (0..sections.len())
        .filter(|at| protected[*at])
        .filter_map(|at| sections[at])
        .collect();
    for unit in units.iter().filter(|unit| unit.end - unit.start == 1) {
        let Some(section) = sections[unit.start] else {
            continue;
        };
        if section >= REQUIRED_SECTIONS.len() || kept.contains(&section) || unit.tokens > max_tokens
        {
            continue;
        }
        match newest.iter().position(|(s, _)| *s == section) {
            Some(k) => newest[k].1 = unit.start,
            None => newest.push((section, unit.start)),
        }
    }
    newest.into_iter().map(|(_, at)| at).collect()
}

/// For each line, the section of the heading above it (a heading's own for a heading), from
/// the section each line heads.
fn sections_of(headings: &[Option<usize>]) -> Vec<Option<usize>> {
    let mut section = None;
    headings
        .iter()
        .map(|heading| {
            section = heading.or(section);
            section
        })
        .collect()
}

/// The ledger's facts under their sections' headings, and nothing else.
pub fn facts_alone(ledger: &Ledger) -> String {
    facts_and(ledger, &[])
}

/// The ledger's facts under their sections' headings, each of `points` (a section and a line
/// of the model's) first under its own.
fn facts_and(ledger: &Ledger, points: &[(usize, &str)]) -> String {
    let mut sections: Vec<Vec<String>> = vec![Vec::new(); SECTIONS.len()];
    for (section, line) in points {
        sections[*section].push((*line).to_owned());
    }
    for fact in &ledger.facts {
        sections[section_of(fact.kind)].push(format!("- {}", fact.one_line()));
    }
    let mut out: Vec<String> = Vec::new();
    for (at, (emoji, title)) in SECTIONS.iter().enumerate() {
        // The first three sections are required: they stay even when empty of facts.
        if sections[at].is_empty() && at >= 3 {
            continue;
        }
        out.push(canonical_heading(emoji, title));
        if sections[at].is_empty() {
            out.push(SEE_THE_ARCHIVE.to_owned());
        }
        out.append(&mut sections[at]);
    }
    out.joined("\n")
}

/// The ids, file names, URLs and long numbers the ledger's facts name (a task's file, say, that
/// no exact term of its fact holds).
fn fact_terms(ledger: &Ledger) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for fact in &ledger.facts {
        for term in fact.exact.iter().cloned().chain(identifiers_in(&fact.text)) {
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
    }
    terms
}

/// A line, or a fenced block, that can go as one.
struct Unit {
    start: usize,
    end: usize,
    tokens: usize,
}

/// Every line's unit: a heading or a blank line stays (it is not a unit), a fenced block is one.
fn units_of(lines: &[&str], headings: &[Option<usize>]) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        let start = at;
        at += 1;
        if headings[start].is_some() || line.trim().is_empty() {
            continue;
        }
        if line.trim_start().starts_with("```") {
            while at < lines.len() && !lines[at].trim_start().starts_with("```") {
                at += 1;
            }
            at = (at + 1).min(lines.len());
        }
        let tokens = lines[start..at]
            .iter()
            .map(|line| estimate_tokens(line) + 1)
            .sum();
        units.push(Unit {
            start,
            end: at,
            tokens,
        });
    }
    units
}

/// For each line, whether it stays while anything else can go: it keeps one of the ledger's
/// facts on its own (every such line: two results of the same value are told apart only by the
/// lines that name them), or it is marked ` [unverified]` or ` [from tool output]` (the reader
/// must see the mark; the model's text is never cut for being doubtful).
fn protected_lines(lines: &[&str], ledger: &Ledger) -> Vec<bool> {
    lines
        .iter()
        .map(|line| {
            if line.ends_with(UNVERIFIED_MARK) || line.ends_with(INJECTED_MARK) {
                return true;
            }
            let line = Normalised::of(line);
            ledger.facts.iter().any(|fact| fact.kept_in(&line))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::model::facts::FactKind;

    /// A fact of `kind` under `id`, kept by a summary that holds each of `exact`.
    fn fact(id: &str, kind: FactKind, text: &str, exact: &[&str]) -> Fact {
        Fact {
            id: id.into(),
            kind,
            text: text.into(),
            exact: exact.iter().map(|t| (*t).to_owned()).collect(),
            words: Vec::new(),
            iterations: None,
        }
    }

    fn pin(text: &str, exact: &[&str]) -> Fact {
        fact(&format!("pin:{text}"), FactKind::Pin, text, exact)
    }

    /// A result whose file only a line of code names.
    fn read_result() -> Fact {
        fact(
            "result:read",
            FactKind::Result,
            "Result of exec_a1 (task read ledger_1.csv): 28776",
            &["28776"],
        )
    }

    #[test]
    fn prose_goes_longest_first_and_the_facts_stay() {
        let ledger = Ledger {
            facts: vec![pin("latency_p95 <= 350 ms", &["latency_p95", "350"])],
            ..Ledger::default()
        };
        let filler = "word ".repeat(60);
        let summary = format!(
            "### 🎯 OBJECTIVE ACHIEVED\n- short point\n- {filler}\n### 📊 KEY DISCOVERIES\n\
             - latency_p95 stays at or under 350 ms\n```js\n{filler}\n```\n\
             ### ✅ SUCCESSFUL SOLUTIONS\n- {filler}"
        );
        let (fitted, cut) = fit(&summary, &ledger, 50);
        assert!(estimate_tokens(&fitted) <= 50, "{fitted}");
        assert!(
            fitted.contains_text("latency_p95 stays at or under 350 ms"),
            "{fitted}"
        );
        assert!(!fitted.contains_text("```"), "{fitted}");
        assert_eq!(cut, 5);
        assert!(fitted.contains_text("- short point"));
        // The one point of ✅ was too long to keep: the section says where it went.
        assert!(
            fitted.ends_with("### ✅ SUCCESSFUL SOLUTIONS\n- See the archive this summary names."),
            "{fitted}"
        );
        assert_eq!(fit(&fitted, &ledger, 50), (fitted.clone(), 0));
    }

    #[test]
    fn two_results_of_the_same_value_each_keep_the_line_that_names_them() {
        let result = |id: &str| {
            fact(
                &format!("result:{id}"),
                FactKind::Result,
                &format!("Result of {id}: 0.30000000000000004"),
                &["0.30000000000000004"],
            )
        };
        let ledger = Ledger {
            facts: vec![result("exec_a1"), result("exec_b2")],
            ..Ledger::default()
        };
        // The second result's line is the longest: only its value tells it from the first.
        let summary = format!(
            "### 🎯 OBJECTIVE ACHIEVED\n- checked both runs\n### 📊 KEY DISCOVERIES\n\
             - exec_a1 returned 0.30000000000000004\n\
             - exec_b2 returned 0.30000000000000004 {}",
            "after a long detour through the logs ".repeat(6)
        );
        let room = estimate_tokens(&facts_alone(&ledger)) + 1;
        let (fitted, _) = fit(&summary, &ledger, room);
        assert!(estimate_tokens(&fitted) <= room, "{fitted}");
        assert!(
            fitted.contains_text("exec_a1") && fitted.contains_text("exec_b2"),
            "{fitted}"
        );
    }

    #[test]
    fn lines_that_name_what_a_fact_names_go_after_those_that_name_nothing() {
        let ledger = Ledger {
            facts: vec![read_result()],
            ..Ledger::default()
        };
        let code = "```js\nconst rows = read('ledger_1.csv');\nreturn sum(rows);\n```";
        let summary = format!(
            "### 🎯 OBJECTIVE ACHIEVED\n- exec_a1 gave 28776\n- {}\n### ✅ SUCCESSFUL \
             SOLUTIONS\n{code}",
            "filler words here ".repeat(3)
        );
        let room = estimate_tokens(&summary) - 5;
        let (fitted, cut) = fit(&summary, &ledger, room);
        assert_eq!(cut, 1, "{fitted}");
        assert!(fitted.contains_text("ledger_1.csv"), "{fitted}");
    }

    #[test]
    fn a_fact_whose_file_only_a_cut_block_named_is_put_back_in_the_ledgers_words() {
        let ledger = Ledger {
            facts: vec![read_result()],
            ..Ledger::default()
        };
        let code = format!(
            "```js\nconst rows = read('ledger_1.csv');\n{}\n```",
            "rows.map((row) => row.amount * 2);\n".repeat(8)
        );
        let summary = format!("### 🎯 OBJECTIVE ACHIEVED\n- exec_a1 gave 28776\n{code}");
        let repaired = "### 🎯 OBJECTIVE ACHIEVED\n- exec_a1 gave 28776\n### 📊 KEY DISCOVERIES\n\
                        - Result of exec_a1 (task read ledger_1.csv): 28776";
        let room = estimate_tokens(repaired) + 2;
        let (fitted, cut) = fit(&summary, &ledger, room);
        assert_eq!(fitted, repaired);
        assert!(cut > 1);
    }

    #[test]
    fn a_summary_whose_fact_lines_are_too_long_becomes_the_facts_alone() {
        let ledger = Ledger {
            facts: vec![pin("port 443", &["443"])],
            ..Ledger::default()
        };
        let summary = format!(
            "### 🎯 OBJECTIVE ACHIEVED\n- port 443 {}",
            "and more words ".repeat(50)
        );
        let (fitted, _) = fit(&summary, &ledger, 60);
        assert!(fitted.starts_with("### 🎯 OBJECTIVE ACHIEVED"), "{fitted}");
        assert!(fitted.contains_text("- port 443"), "{fitted}");
        assert!(estimate_tokens(&fitted) <= 60, "{fitted}");
    }
}
