//! Checking a summary: required sections under any heading shape models write, length, no
//! refusal; and rewriting an answer to its canonical form (no fence, preamble or closing remark
//! around it; `### emoji TITLE` headings).

use crate::core::json::record::json_record;
use crate::core::order::join::Joined;
use crate::core::order::text_search::TextSearch;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validation {
    /// Whether the summary can be used.
    pub valid: bool,
    /// What is wrong with it, one sentence each.
    pub errors: Vec<String>,
    /// The required sections it lacks (titles).
    pub missing_sections: Vec<&'static str>,
}

// Written as `{ valid, errors }` (the missing titles are in the errors).
json_record! {
    write Validation {
        valid: "valid" req,
        errors: "errors" req,
    }
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

/// The section a line heads, if it names one of the six the way models write a heading: a
/// heading of any level (`#` to `######`), a line in bold (`**Objective Achieved:**`), a
/// numbered line (`1. Objective Achieved`, `### 1. …`), or the title alone on its line
/// (`OBJECTIVE ACHIEVED:`), emoji, case and a trailing colon ignored; or a section's emoji
/// opening a short title in any language (`## 🎯 Objetivo logrado`). A line of text that only
/// mentions a title (`- Key discoveries: …`) heads nothing.
pub(crate) fn heading_section(line: &str) -> Option<usize> {
    heading_parts(line).map(|(section, _)| section)
}

/// Words a heading in another language may have, its emoji included (a longer line is text).
const MAX_TITLE_WORDS: usize = 9;

/// The section whose title `text` spells, case, spaces, punctuation and emoji ignored
/// (`Key Discoveries:`, `key_discoveries`, `keyDiscoveries`).
pub(crate) fn titled_section(text: &str) -> Option<usize> {
    let letters = text
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_uppercase());
    SECTIONS
        .iter()
        .position(|(_, title)| letters.clone().eq(title.chars().filter(|c| *c != ' ')))
}

/// [`heading_section`], and the text after a bold label that opens a line of text
/// (`**Key Discoveries:** the north region …` heads 📊 and keeps `the north region …`).
pub(crate) fn heading_parts(line: &str) -> Option<(usize, &str)> {
    let line = line.trim();
    let rest = line.trim_start_matches('#');
    let hashes = line.len() - rest.len();
    if hashes > 6 {
        return None;
    }
    let rest = rest.trim();
    let bold = ["**", "__"]
        .into_iter()
        .find_map(|mark| rest.strip_prefix(mark)?.split_once_text(mark));
    let (rest, after) = match bold {
        Some((label, after)) => (label.trim(), after.trim_start_matches(':').trim()),
        None => (rest, ""),
    };
    let unnumbered = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let numbered = (unnumbered.len() < rest.len())
        .then(|| {
            unnumbered
                .strip_prefix('.')
                .or_else(|| unnumbered.strip_prefix(')'))
        })
        .flatten()
        .filter(|after| after.starts_with(' '));
    let marked = hashes > 0 || bold.is_some() || numbered.is_some();
    let label = numbered.unwrap_or(rest).trim();
    // A bare line is a title only when it is nothing else (no list marker, quote or table).
    let bare = !matches!(
        label.as_bytes().first(),
        Some(b'-' | b'*' | b'+' | b'>' | b'|' | b'`')
    );
    let by_emoji = || {
        let section = SECTIONS
            .iter()
            .position(|(emoji, _)| label.starts_with(emoji))?;
        let words = label.split_whitespace().count();
        let short = words <= MAX_TITLE_WORDS && !label.bytes().any(|b| b.is_ascii_digit());
        (short && (marked || words <= 5 && !label.ends_with('.'))).then_some(section)
    };
    let section = titled_section(label)
        .filter(|_| marked || bare)
        .or_else(by_emoji)?;
    Some((section, after))
}

/// Checks `text` against the rules of the README ("Free functions"): the three required sections as `###` headings,
/// each with a line under it, at least [`MIN_SUMMARY_CHARS`] characters, and no refusal in its
/// opening.
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
    for title in empty_sections(text) {
        errors.push(format!("Empty required section: {}", heading_of(title)));
    }
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

/// The line under a required section that keeps nothing of the model's or the ledger's.
pub(crate) const SEE_THE_ARCHIVE: &str = "- See the archive this summary names.";

/// `text` (canonical) with [`SEE_THE_ARCHIVE`] under each required section it left empty.
pub(crate) fn filled(text: &str) -> String {
    let empty = empty_sections(text);
    if empty.is_empty() {
        return text.to_owned();
    }
    let mut out: Vec<&str> = Vec::new();
    for line in text.lines() {
        out.push(line);
        let empty_here = heading_section(line)
            .and_then(|at| REQUIRED_SECTIONS.get(at))
            .is_some_and(|title| empty.contains(title));
        if empty_here {
            out.push(SEE_THE_ARCHIVE);
        }
    }
    out.joined("\n")
}

/// The required sections whose heading has no line under it before the next heading.
fn empty_sections(text: &str) -> Vec<&'static str> {
    let mut empty: Vec<&'static str> = Vec::new();
    // The section whose heading came last, while no line has come under it.
    let mut open: Option<usize> = None;
    for line in text.lines().map(Some).chain([None]) {
        let section = line.and_then(heading_section);
        if section.is_none() && line.is_some_and(|line| line.trim().is_empty()) {
            continue;
        }
        if section.is_some() || line.is_none() {
            // `REQUIRED_SECTIONS` are the first of `SECTIONS`, in order.
            if let Some(title) = open.and_then(|at| REQUIRED_SECTIONS.get(at)) {
                if !empty.contains(title) {
                    empty.push(title);
                }
            }
        }
        open = section;
    }
    empty
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
    REFUSALS
        .into_iter()
        .find(|phrase| opening.contains_text(phrase))
}

/// The longest text before the first section that is dropped as a preamble ("Here is the
/// summary:"), in characters; a longer one stays (it may be content).
const MAX_PREAMBLE_CHARS: usize = 300;

/// How a closing remark after the last point begins ("Let me know if …").
const CLOSING_REMARKS: [&str; 7] = [
    "let me know",
    "hope this",
    "i hope",
    "feel free",
    "if you need",
    "if you'd like",
    "happy to help",
];

/// Whether `line` is blank or a closing remark.
pub(crate) fn is_closing(line: &str) -> bool {
    let lower = line.trim().to_ascii_lowercase();
    lower.is_empty()
        || CLOSING_REMARKS
            .iter()
            .any(|remark| lower.starts_with(remark))
}

/// Whether `line` opens or closes a fenced block.
fn is_fence(line: &str) -> bool {
    line.trim_start().starts_with("```")
}

/// `text` as a summary to store: a fence around the whole answer, a short preamble before its
/// first section (unless it refuses) and a closing remark after its last point removed; every
/// section heading in canonical form; surrounding blank space trimmed.
pub(crate) fn canonicalize(text: &str) -> String {
    let mut lines: Vec<&str> = text.trim().lines().collect();
    if let Some(first) = lines
        .iter()
        .position(|line| heading_section(line).is_some())
    {
        let preamble = lines[..first].joined("\n");
        let fenced = lines[..first].last().is_some_and(|line| is_fence(line));
        if preamble.chars().count() <= MAX_PREAMBLE_CHARS && refusal(&preamble).is_none() {
            lines.drain(..first);
            // The fence around the answer closes on its last bare ``` line, the one left
            // unpaired once the opening is gone.
            let fences = lines.iter().filter(|line| is_fence(line)).count();
            let closing = lines.iter().rposition(|line| line.trim() == "```");
            if let Some(at) = closing.filter(|_| fenced && fences % 2 == 1) {
                lines.remove(at);
            }
        }
    }
    while lines.last().is_some_and(|line| is_closing(line)) {
        lines.pop();
    }
    lines
        .iter()
        .map(|line| match heading_parts(line) {
            Some((i, "")) => canonical_heading(SECTIONS[i].0, SECTIONS[i].1),
            Some((i, text)) => format!(
                "{}\n{text}",
                canonical_heading(SECTIONS[i].0, SECTIONS[i].1)
            ),
            None => line.trim_end().to_owned(),
        })
        .collect::<Vec<_>>()
        .joined("\n")
        .trim()
        .to_owned()
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
    fn an_empty_required_section_is_not_valid() {
        let text = "### 🎯 OBJECTIVE ACHIEVED\n\n### 📊 KEY DISCOVERIES\n- the p95 is 212 ms on \
                    shard_0040, within the bound\n### ✅ SUCCESSFUL SOLUTIONS\n### 💡 CRITICAL \
                    INSIGHTS\n- a long enough insight to pass the length rule of a summary";
        let v = validate_summary(text);
        assert!(!v.valid);
        assert_eq!(
            v.errors,
            [
                "Empty required section: ### 🎯 OBJECTIVE ACHIEVED",
                "Empty required section: ### ✅ SUCCESSFUL SOLUTIONS"
            ]
        );
        let filled = text
            .replace("ACHIEVED\n", "ACHIEVED\n- done\n")
            .replace("SOLUTIONS\n", "SOLUTIONS\n```js\nreturn 1;\n```\n");
        assert!(validate_summary(&filled).valid, "{filled}");
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
            "Key discoveries were few",
        ]));
        assert!(!v.valid);
        assert_eq!(
            v.missing_sections,
            vec!["KEY DISCOVERIES", "SUCCESSFUL SOLUTIONS"]
        );
        assert!(v.errors[0].contains_text("### 📊 KEY DISCOVERIES"));
        let v = validate_summary(&summary(&[
            "####### OBJECTIVE ACHIEVED",
            "- Key discoveries: none yet",
            "12 successful solutions",
        ]));
        assert_eq!(v.missing_sections.len(), 3);
    }

    #[test]
    fn sections_count_in_every_shape_models_write_them() {
        for headings in [
            [
                "## 🎯 Objective Achieved",
                "## 📊 Key Discoveries",
                "## ✅ Successful Solutions",
            ],
            [
                "# OBJECTIVE ACHIEVED",
                "#### Key discoveries",
                "###### successful solutions",
            ],
            [
                "**OBJECTIVE ACHIEVED**",
                "**Key Discoveries:**",
                "__Successful Solutions__:",
            ],
            [
                "### 1. Objective Achieved",
                "### 2. KEY DISCOVERIES",
                "### 3) ✅ Successful Solutions",
            ],
            [
                "1. Objective Achieved",
                "2. Key Discoveries:",
                "3) **SUCCESSFUL SOLUTIONS**",
            ],
            [
                "**🎯 Objective Achieved**",
                "## **📊 KEY DISCOVERIES**",
                "### ✅ Successful solutions:",
            ],
        ] {
            let v = validate_summary(&summary(&headings));
            assert_eq!(v.errors, Vec::<String>::new(), "{headings:?}");
            assert_eq!(
                canonicalize(&summary(&headings))
                    .lines()
                    .filter(|line| line.starts_with("###"))
                    .collect::<Vec<_>>(),
                [
                    "### 🎯 OBJECTIVE ACHIEVED",
                    "### 📊 KEY DISCOVERIES",
                    "### ✅ SUCCESSFUL SOLUTIONS"
                ],
                "{headings:?}"
            );
        }
    }

    #[test]
    fn a_fence_a_preamble_and_a_closing_remark_are_unwrapped() {
        let body = summary(&[
            "### OBJECTIVE ACHIEVED",
            "### KEY DISCOVERIES",
            "### SUCCESSFUL SOLUTIONS",
        ]);
        let canonical = canonicalize(&body);
        for wrapped in [
            format!("```markdown\n{body}```"),
            format!("```\n{body}\n```\n"),
            format!("Here is the structured summary of iterations 1-4:\n\n{body}"),
            format!("Sure! Here is the summary.\n```md\n{body}```\nLet me know if you need more."),
            format!("{body}\nI hope this helps!\n"),
        ] {
            assert_eq!(canonicalize(&wrapped), canonical, "{wrapped}");
        }
    }

    #[test]
    fn unwrapping_keeps_content_refusals_and_code() {
        let with_code = format!(
            "{}### SUCCESSFUL SOLUTIONS\n```js\nrows.filter(Boolean)\n```",
            summary(&["### OBJECTIVE ACHIEVED", "### KEY DISCOVERIES"])
        );
        assert!(canonicalize(&with_code).ends_with("rows.filter(Boolean)\n```"));
        let fenced = format!("```markdown\n{with_code}\n```");
        assert_eq!(canonicalize(&fenced), canonicalize(&with_code));
        let refusing = format!("I cannot summarise all of it.\n{with_code}");
        assert!(!validate_summary(&canonicalize(&refusing)).valid);
        let long = format!(
            "{}\n{with_code}",
            "Context that is part of the answer. ".repeat(12)
        );
        assert!(canonicalize(&long).starts_with("Context that is part"));
    }

    #[test]
    fn short_text_and_refusals_are_invalid() {
        let v = validate_summary(
            "### OBJECTIVE ACHIEVED\n### KEY DISCOVERIES\n### SUCCESSFUL SOLUTIONS",
        );
        assert!(v.errors.iter().any(|e| e.contains_text("too short")));
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
            .any(|e| e.contains_text("refused")));
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
