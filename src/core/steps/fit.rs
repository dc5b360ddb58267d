//! Holding a summary to its budget, whatever the provider wrote: the lines that keep no fact of
//! the ledger go first (the longest first, a fenced block as one), the facts a cut took are
//! put back in the ledger's words, and at last the summary is the facts alone under their
//! headings. What goes is still in the archive the summary names.

use crate::core::log::tokens::estimate_tokens;
use crate::core::model::facts::Ledger;
use crate::core::order::sort::sort_by;
use crate::core::steps::repair::{repair, section_of};
use crate::core::steps::terms::Normalised;
use crate::core::steps::validation::{canonical_heading, heading_section, SECTIONS};

/// `summary` (canonical, repaired) within `max_tokens`, and how many of its lines went.
pub fn fit(summary: &str, ledger: &Ledger, max_tokens: usize) -> (String, usize) {
    if estimate_tokens(summary) <= max_tokens {
        return (summary.to_owned(), 0);
    }
    let lines: Vec<&str> = summary.lines().collect();
    let units = units_of(&lines);
    let protected = protected_lines(&lines, ledger);
    let mut removable: Vec<&Unit> = units
        .iter()
        .filter(|unit| !(unit.start..unit.end).any(|at| protected[at]))
        .collect();
    sort_by(&mut removable, |a, b| b.tokens.cmp(&a.tokens));
    let mut gone = vec![false; lines.len()];
    let kept_text = |gone: &[bool]| -> String {
        let kept: Vec<&str> = lines
            .iter()
            .zip(gone)
            .filter(|(_, gone)| !**gone)
            .map(|(line, _)| *line)
            .collect();
        kept.join("\n")
    };
    // Units are counted line by line; the whole is counted again once they seem to fit.
    let mut total = estimate_tokens(summary);
    let mut cut = 0;
    for unit in removable {
        if total <= max_tokens && estimate_tokens(&kept_text(&gone)) <= max_tokens {
            break;
        }
        (unit.start..unit.end).for_each(|at| gone[at] = true);
        total = total.saturating_sub(unit.tokens);
        cut += unit.end - unit.start;
    }
    let trimmed = kept_text(&gone);
    let missing = ledger.missing_in(&trimmed);
    let trimmed = repair(&trimmed, &missing);
    if estimate_tokens(&trimmed) <= max_tokens {
        return (trimmed, cut);
    }
    (facts_alone(ledger), lines.len())
}

/// The ledger's facts under their sections' headings, and nothing else.
pub fn facts_alone(ledger: &Ledger) -> String {
    let mut sections: Vec<Vec<String>> = vec![Vec::new(); SECTIONS.len()];
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
            out.push("- See the archive this summary names.".to_owned());
        }
        out.append(&mut sections[at]);
    }
    out.join("\n")
}

/// A line, or a fenced block, that can go as one.
struct Unit {
    start: usize,
    end: usize,
    tokens: usize,
}

/// Every line's unit: a heading or a blank line stays (it is not a unit), a fenced block is one.
fn units_of(lines: &[&str]) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        let start = at;
        at += 1;
        if heading_section(line).is_some() || line.trim().is_empty() {
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

/// For each line, whether it is the first line that keeps one of the ledger's facts on its own.
fn protected_lines(lines: &[&str], ledger: &Ledger) -> Vec<bool> {
    let normalised: Vec<Normalised> = lines.iter().map(|line| Normalised::of(line)).collect();
    let mut protected = vec![false; lines.len()];
    for fact in &ledger.facts {
        if let Some(at) = normalised.iter().position(|line| fact.kept_in(line)) {
            protected[at] = true;
        }
    }
    protected
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::model::facts::{Fact, FactKind};

    fn pin(text: &str, exact: &[&str]) -> Fact {
        Fact {
            id: format!("pin:{text}"),
            kind: FactKind::Pin,
            text: text.into(),
            exact: exact.iter().map(|t| (*t).to_owned()).collect(),
            words: Vec::new(),
            iterations: None,
        }
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
        let (fitted, cut) = fit(&summary, &ledger, 40);
        assert!(estimate_tokens(&fitted) <= 40, "{fitted}");
        assert!(
            fitted.contains("latency_p95 stays at or under 350 ms"),
            "{fitted}"
        );
        assert!(!fitted.contains("```"), "{fitted}");
        assert_eq!(cut, 5);
        assert!(fitted.contains("- short point"));
        assert_eq!(fit(&fitted, &ledger, 40), (fitted.clone(), 0));
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
        assert!(fitted.contains("- port 443"), "{fitted}");
        assert!(estimate_tokens(&fitted) <= 60, "{fitted}");
    }
}
