//! Repairing a summary that lost ledger facts: each is added in the ledger's own words, as a
//! point under the section it belongs to (the section is added when the answer has none).

use crate::core::model::facts::{Fact, FactKind};
use crate::core::order::join::Joined;
use crate::core::steps::validation::{canonical_heading, heading_section, SECTIONS};

/// The section (an index into [`SECTIONS`]) a fact of `kind` belongs under.
pub fn section_of(kind: FactKind) -> usize {
    match kind {
        FactKind::Goal => 0,
        FactKind::Result | FactKind::Identifier => 1,
        FactKind::Failure => 4,
        FactKind::Pin => 5,
    }
}

/// `summary` (canonical) with each of `facts` added as a point at the end of its section.
pub fn repair(summary: &str, facts: &[&Fact]) -> String {
    let mut summary = summary.to_owned();
    for fact in facts {
        let point = format!("- {}", fact.one_line());
        summary = insert_at_section_end(&summary, section_of(fact.kind), &[point]);
    }
    summary
}

/// `summary` (canonical) with `points` at the end of the section `section` (an index into
/// [`SECTIONS`]), which is added, in its place in the order, when the summary has none.
pub fn insert_at_section_end(summary: &str, section: usize, points: &[String]) -> String {
    let mut lines: Vec<String> = summary.lines().map(str::to_owned).collect();
    let at = match lines
        .iter()
        .position(|l| heading_section(l) == Some(section))
    {
        Some(heading) => end_of_section(&lines, heading),
        None => {
            // A new section goes before the first section that follows it in the order.
            let at = lines
                .iter()
                .position(|l| heading_section(l).is_some_and(|s| s > section))
                .unwrap_or(lines.len());
            let (emoji, title) = SECTIONS[section];
            lines.insert(at, canonical_heading(emoji, title));
            at + 1
        }
    };
    lines.splice(at..at, points.iter().cloned());
    lines.joined("\n")
}

/// Where a point added to the section headed at `heading` goes: after its last non-blank line.
fn end_of_section(lines: &[String], heading: usize) -> usize {
    let next = lines[heading + 1..]
        .iter()
        .position(|l| heading_section(l).is_some())
        .map_or(lines.len(), |offset| heading + 1 + offset);
    let mut at = next;
    while at > heading + 1 && lines[at - 1].trim().is_empty() {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(kind: FactKind, text: &str) -> Fact {
        Fact {
            id: text.into(),
            kind,
            text: text.into(),
            exact: Vec::new(),
            words: Vec::new(),
            iterations: None,
        }
    }

    #[test]
    fn facts_go_to_the_end_of_their_section_or_a_new_one_in_order() {
        let summary = "### 🎯 OBJECTIVE ACHIEVED\n- done\n\n### 📊 KEY DISCOVERIES\n- a\n\n\
                       ### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING\n- c";
        let result = fact(FactKind::Result, "Result of x: 42.5");
        let failure = fact(FactKind::Failure, "Still failing: fetch → 503");
        let pin = fact(FactKind::Pin, "Budget is 3 000 EUR");
        assert_eq!(
            repair(summary, &[&result, &failure, &pin]),
            "### 🎯 OBJECTIVE ACHIEVED\n- done\n\n### 📊 KEY DISCOVERIES\n- a\n\
             - Result of x: 42.5\n\n### 💡 CRITICAL INSIGHTS\n- Still failing: fetch → 503\n\
             ### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING\n- c\n- Budget is 3 000 EUR"
        );
    }
}
