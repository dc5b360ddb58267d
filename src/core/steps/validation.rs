//! Checking a summary: required sections as `###` headings, length, no refusal; and rewriting
//! its headings to their canonical form.

use serde::Serialize;

/// The six sections of a summary, in order: emoji and title.
pub const SECTIONS: [(&str, &str); 6] = [
    ("🎯", "OBJECTIVE ACHIEVED"),
    ("📊", "KEY DISCOVERIES"),
    ("✅", "SUCCESSFUL SOLUTIONS"),
    ("🔧", "TOOLS USED SUCCESSFULLY"),
    ("💡", "CRITICAL INSIGHTS"),
    ("📝", "IMPORTANT CONTEXT FOR FUTURE REASONING"),
];

/// The sections a summary must have to be accepted.
pub const REQUIRED_SECTIONS: [&str; 3] = [
    "OBJECTIVE ACHIEVED",
    "KEY DISCOVERIES",
    "SUCCESSFUL SOLUTIONS",
];

/// The shortest acceptable summary, in characters.
pub const MIN_SUMMARY_CHARS: usize = 100;

const REFUSALS: [&str; 5] = [
    "i cannot",
    "i can't",
    "i am unable",
    "i'm unable",
    "as an ai",
];

/// The verdict on one summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Validation {
    /// Whether the summary can be used.
    pub valid: bool,
    /// What is wrong with it, one sentence each.
    pub errors: Vec<String>,
    /// The required sections it lacks (titles).
    #[serde(skip)]
    pub missing_sections: Vec<&'static str>,
}

/// The canonical heading of a section: `### 🎯 OBJECTIVE ACHIEVED`.
pub(crate) fn canonical_heading(emoji: &str, title: &str) -> String {
    format!("### {emoji} {title}")
}

/// The canonical heading of the section titled `title` (emoji included when it is one of the
/// six).
pub(crate) fn heading_of(title: &str) -> String {
    let emoji = SECTIONS
        .iter()
        .find(|(_, name)| *name == title)
        .map_or("", |(emoji, _)| emoji);
    canonical_heading(emoji, title)
}

/// The section a line heads, if it is a `###` heading of one of the six (emoji optional,
/// case and trailing punctuation ignored).
pub(crate) fn heading_section(line: &str) -> Option<usize> {
    let rest = line.trim().strip_prefix("###")?;
    if rest.starts_with('#') {
        return None;
    }
    let title: String = rest
        .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
        .trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
        .replace("**", "")
        .to_ascii_uppercase();
    SECTIONS.iter().position(|(_, name)| title == *name)
}

/// Checks `text` against the rules of the README ("Free functions"): the three required sections as `###` headings,
/// at least [`MIN_SUMMARY_CHARS`] characters, and no refusal in its opening.
pub fn validate_summary(text: &str) -> Validation {
    let found: Vec<usize> = text.lines().filter_map(heading_section).collect();
    let missing_sections: Vec<&'static str> = REQUIRED_SECTIONS
        .iter()
        .copied()
        .filter(|title| {
            let index = SECTIONS.iter().position(|(_, name)| name == title);
            !index.is_some_and(|i| found.contains(&i))
        })
        .collect();
    let mut errors: Vec<String> = missing_sections
        .iter()
        .map(|title| format!("Missing required section: {}", heading_of(title)))
        .collect();
    let length = text.trim().chars().count();
    if length < MIN_SUMMARY_CHARS {
        errors.push(format!(
            "Summary is too short: {length} characters, at least {MIN_SUMMARY_CHARS} are needed"
        ));
    }
    if let Some(phrase) = refusal(text) {
        errors.push(format!(
            "The model refused instead of summarising (\"{phrase}\")"
        ));
    }
    Validation {
        valid: errors.is_empty(),
        errors,
        missing_sections,
    }
}

/// A refusal phrase in the opening of the answer: the text before its first heading, or its
/// first 200 characters. Quoted log text further down ("I cannot find the file") is not one.
fn refusal(text: &str) -> Option<&'static str> {
    let opening_end = text
        .lines()
        .scan(0usize, |offset, line| {
            let start = *offset;
            *offset += line.len() + 1;
            Some((start, line))
        })
        .find(|(_, line)| heading_section(line).is_some())
        .map_or(text.len(), |(start, _)| start);
    let mut cut = opening_end.min(200).min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let opening = text[..cut].to_ascii_lowercase();
    REFUSALS.into_iter().find(|phrase| opening.contains(phrase))
}

/// `text` with every section heading in canonical form and surrounding blank space trimmed.
pub(crate) fn canonicalize(text: &str) -> String {
    text.trim()
        .lines()
        .map(|line| match heading_section(line) {
            Some(i) => canonical_heading(SECTIONS[i].0, SECTIONS[i].1),
            None => line.trim_end().to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(headings: &[&str]) -> String {
        headings
            .iter()
            .map(|h| format!("{h}\n- a true and verified fact about the work done so far\n"))
            .collect()
    }

    #[test]
    fn all_sections_with_or_without_emoji_are_valid() {
        let with = summary(&[
            "### 🎯 OBJECTIVE ACHIEVED",
            "### 📊 KEY DISCOVERIES",
            "### ✅ SUCCESSFUL SOLUTIONS",
        ]);
        assert!(validate_summary(&with).valid);
        let without = summary(&[
            "### Objective Achieved:",
            "###KEY DISCOVERIES",
            "### **SUCCESSFUL SOLUTIONS**",
        ]);
        assert_eq!(validate_summary(&without).errors, Vec::<String>::new());
    }

    #[test]
    fn missing_sections_are_named() {
        let v = validate_summary(&summary(&[
            "### 🎯 OBJECTIVE ACHIEVED",
            "## KEY DISCOVERIES",
        ]));
        assert!(!v.valid);
        assert_eq!(
            v.missing_sections,
            vec!["KEY DISCOVERIES", "SUCCESSFUL SOLUTIONS"]
        );
        assert!(v.errors[0].contains("### 📊 KEY DISCOVERIES"));
        let v = validate_summary(&summary(&["#### OBJECTIVE ACHIEVED"]));
        assert_eq!(v.missing_sections.len(), 3);
    }

    #[test]
    fn short_text_and_refusals_are_invalid() {
        let v = validate_summary(
            "### OBJECTIVE ACHIEVED\n### KEY DISCOVERIES\n### SUCCESSFUL SOLUTIONS",
        );
        assert!(v.errors.iter().any(|e| e.contains("too short")));
        let refusal = format!(
            "I cannot help with that.\n{}",
            summary(&[
                "### OBJECTIVE ACHIEVED",
                "### KEY DISCOVERIES",
                "### SUCCESSFUL SOLUTIONS"
            ])
        );
        assert!(validate_summary(&refusal)
            .errors
            .iter()
            .any(|e| e.contains("refused")));
        let quoted = summary(&[
            "### OBJECTIVE ACHIEVED",
            "### KEY DISCOVERIES",
            "### SUCCESSFUL SOLUTIONS",
        ])
        .replace(
            "a true and verified fact",
            "the log said \"I cannot open data.csv\", fixed by a path change; a fact",
        );
        assert!(validate_summary(&quoted).valid);
    }

    #[test]
    fn canonicalize_rewrites_headings_only() {
        let text = "\n### objective achieved\n- kept as is  \n###  💡 Critical Insights:\n";
        assert_eq!(
            canonicalize(text),
            "### 🎯 OBJECTIVE ACHIEVED\n- kept as is\n### 💡 CRITICAL INSIGHTS"
        );
    }
}
