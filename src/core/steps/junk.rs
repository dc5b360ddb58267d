//! Junk is not a summary: what small models write when they cannot follow the prompt — a
//! point with no word in it (`- 1.1.0.1.1.0`), the prompt's own instructions echoed back, one
//! line repeated over and over under a heading — leaves an answer before it is checked. An answer left with
//! no point is invalid, and the retry says why in words the model can act on.

use crate::core::order::join::Joined;
use crate::core::order::text_search::TextSearch;
use crate::core::steps::validation::heading_section;

/// The shortest line taken for an echo of the prompt's instructions, in bytes: shorter ones
/// ("- none", "- done") are what summaries say in their own right.
const MIN_ECHO_BYTES: usize = 16;

/// What the retry of an answer of junk alone says.
const JUNK_ONLY: &str = "The answer held no summary: only points with no word in them, lines \
                         copied from the instructions or repeated lines. Under each heading write \
                         what the session found and did, in words, each point once";

/// An answer with its junk removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cleaned {
    /// The answer without its junk lines.
    pub text: String,
    /// Lines removed: with no word, echoed from the instructions, repeated.
    pub removed: [usize; 3],
    /// Lines left that are neither a heading nor empty.
    pub points: usize,
}

impl Cleaned {
    /// Why the answer is no summary, when only junk was in it: words for the retry.
    pub fn emptied(&self) -> Option<&'static str> {
        (self.points == 0 && self.removed != [0; 3]).then_some(JUNK_ONLY)
    }
}

/// `summary` (canonical) without its junk: outside code blocks, every point with no letter in
/// it, every line of at least 16 bytes (`MIN_ECHO_BYTES`) that the instructions of `prompt` hold, and
/// every line said before.
pub fn without_junk(summary: &str, prompt: &str) -> Cleaned {
    let instructions = instructions_of(prompt);
    let mut kept: Vec<&str> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut removed = [0; 3];
    let mut points = 0;
    let mut in_code = false;
    for line in summary.lines() {
        let fence = line.trim_start().starts_with("```");
        let heading = !in_code && heading_section(line).is_some();
        if heading {
            // A point may stand under two headings; a repeat under one is a loop.
            seen.clear();
        }
        if fence || in_code || heading || line.trim().is_empty() {
            in_code ^= fence;
            kept.push(line);
            continue;
        }
        let point = point_text(line);
        let junk = if !point.chars().any(char::is_alphabetic) {
            Some(0)
        } else if point.len() >= MIN_ECHO_BYTES
            && instructions.iter().any(|i| i.contains_text(point))
        {
            Some(1)
        } else if seen.contains(&point) {
            Some(2)
        } else {
            None
        };
        match junk {
            Some(kind) => removed[kind] += 1,
            None => {
                seen.push(point);
                points += 1;
                kept.push(line);
            }
        }
    }
    Cleaned {
        text: kept.joined("\n"),
        removed,
        points,
    }
}

/// A line without its list marker (`-`, `*`, `•`, `1.`, `2)`) and the space around it.
fn point_text(line: &str) -> &str {
    let line = line.trim();
    let unmarked = line.trim_start_matches(['-', '*', '•']);
    let unnumbered = unmarked.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = match unnumbered.strip_prefix(['.', ')']) {
        Some(rest) if unnumbered.len() < unmarked.len() => rest,
        _ => unmarked,
    };
    match rest.trim() {
        "" => line,
        point => point,
    }
}

/// The parts of `prompt` that are the package's instructions, not the session's data: what
/// comes before its first history section, and its output format and rules after the data.
fn instructions_of(prompt: &str) -> [&str; 2] {
    let data = [
        "\n## EARLIER COMPACTED SUMMARY",
        "\n## REASONING HISTORY",
        "\n## SUMMARY OF ITERATIONS",
    ];
    let head_end = data
        .iter()
        .filter_map(|heading| prompt.find_text(heading))
        .min()
        .unwrap_or(prompt.len());
    let tail = prompt
        .find_text("\n## OUTPUT FORMAT")
        .map_or("", |at| &prompt[at..]);
    [&prompt[..head_end], tail]
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = "# CONTEXT COMPACTION\n\nCompact iterations 1-4 of this reasoning \
        session into one structured summary.\n\n## WHAT TO INCLUDE\n- Successful solutions and \
        their results\n\n## REASONING HISTORY\n- Loaded shard_001 with 12,140 rows\n\n## OUTPUT \
        FORMAT\nWrite exactly these six sections\n## RULES\n- Be ruthlessly concise: bullet \
        points, no filler, no repetition.";

    #[test]
    fn points_with_no_word_echoes_and_repeats_leave_the_answer() {
        let answer = "### 🎯 OBJECTIVE ACHIEVED\n- 1.1.0.1.1.0\n- Loaded shard_001 with 12,140 rows\n\
                      ### 📊 KEY DISCOVERIES\n- 1.1.0.1.1.0\n- Successful solutions and their results\n\
                      - Loaded shard_001 with 12,140 rows\n- The mean is 4.2\n- The mean is 4.2\n\
                      ### ✅ SUCCESSFUL SOLUTIONS\n```js\n1.1\n1.1\n```";
        let cleaned = without_junk(answer, PROMPT);
        assert_eq!(
            cleaned.text,
            "### 🎯 OBJECTIVE ACHIEVED\n- Loaded shard_001 with 12,140 rows\n\
             ### 📊 KEY DISCOVERIES\n- Loaded shard_001 with 12,140 rows\n- The mean is 4.2\n\
             ### ✅ SUCCESSFUL SOLUTIONS\n```js\n1.1\n1.1\n```"
        );
        assert_eq!(cleaned.removed, [2, 1, 1]);
        assert_eq!(cleaned.points, 3);
        assert_eq!(cleaned.emptied(), None);
        // The data's own lines are the session's words, not an echo.
        assert_eq!(without_junk(answer, "").removed[1], 0);
    }

    #[test]
    fn an_answer_of_junk_alone_is_no_summary_and_says_why() {
        let echo =
            "Compact iterations 1-4 of this reasoning session into one structured summary.\n"
                .repeat(20);
        let cleaned = without_junk(&echo, PROMPT);
        assert_eq!(cleaned.points, 0);
        assert_eq!(cleaned.removed, [0, 20, 0]);
        let why = cleaned.emptied().expect("no summary");
        assert!(
            why.contains_text("lines copied from the instructions"),
            "{why}"
        );
        let loop_ = "### 🎯 OBJECTIVE ACHIEVED\n- 1.1.0\n- 1.1.0\n- 2.0.1";
        assert_eq!(without_junk(loop_, PROMPT).removed, [3, 0, 0]);
        // A clean answer is left as it is.
        let clean = "### 🎯 OBJECTIVE ACHIEVED\n- Done: 4 shards\n\n1. Next: shard 5";
        let cleaned = without_junk(clean, PROMPT);
        assert_eq!((cleaned.text.as_str(), cleaned.removed), (clean, [0, 0, 0]));
    }
}
