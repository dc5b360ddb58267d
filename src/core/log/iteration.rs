//! Iteration boundaries: the reasoning-log header lines and where un-numbered entries belong.

use crate::core::order::text_search::TextSearch;

/// How a record of the user's own words begins a line of the reasoning: the form the README
/// gives apps (`appendReasoning(\`The user wrote: …\`)`), and the line of each user message
/// in a message list's turn. Such a line is the user's, whatever data says the same.
pub const USER_WROTE: &str = "The user wrote: ";

/// `words` (a user's message) as reasoning lines that record them: each of its lines after
/// [`USER_WROTE`], so that every line of a message of several reads as the user's.
pub fn user_wrote(words: &str) -> String {
    let mut out = String::new();
    for line in words.trim().lines() {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(USER_WROTE);
        out.push_str(line.trim_end());
    }
    out
}

/// What the texts a model reads (placeholders, the recall tool's answers) call an iteration:
/// the logs' own word, or a message list's turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unit {
    /// An iteration of the agent's loop (a `LogStore`'s logs).
    #[default]
    Iteration,
    /// A model turn of a message list (the message front's logs).
    Turn,
}

impl Unit {
    /// The word, in the singular.
    pub fn word(self) -> &'static str {
        match self {
            Unit::Iteration => "iteration",
            Unit::Turn => "turn",
        }
    }

    /// "an iteration number", "a turn number".
    pub fn a_number(self) -> &'static str {
        match self {
            Unit::Iteration => "an iteration number",
            Unit::Turn => "a turn number",
        }
    }
}

/// The reasoning-log entry that starts iteration `n`.
pub fn iteration_header(n: u32) -> String {
    format!("=== ITERATION {n} ===")
}

/// The iteration number of a header entry (`=== ITERATION N ===` as its first line).
pub(crate) fn parse_iteration_header(entry: &str) -> Option<u32> {
    let first_line = header_line(entry)?;
    let inner = first_line
        .strip_prefix("=== ITERATION ")?
        .strip_suffix(" ===")?;
    inner.trim().parse().ok()
}

/// The first line of `entry`, trimmed, when it starts like a header (`===`); most entries
/// are not headers and are rejected without looking for the end of their first line.
fn header_line(entry: &str) -> Option<&str> {
    let entry = entry.trim_start_matches(|c: char| c.is_whitespace() && c != '\n');
    if !entry.starts_with("===") {
        return None;
    }
    Some(entry.lines().next()?.trim())
}

/// The first line of a compacted-summary entry covering iterations `first..=last`.
pub(crate) fn summary_header(first: u32, last: u32) -> String {
    format!("=== COMPACTED SUMMARY (Iterations {first}-{last}) ===")
}

/// The second line of a compacted-summary entry: where the originals it replaced are, and,
/// for the package's own summary (the fallback rung), the code of the model's failure.
pub(crate) fn summary_source_line(
    first: u32,
    last: u32,
    archive_key: &str,
    failed: Option<&str>,
) -> String {
    let note = failed
        .map(|code| {
            format!(" {WITHOUT_MODEL} ({code}): the next summary the model writes replaces it.")
        })
        .unwrap_or_default();
    format!(
        "(Originals of iterations {first}-{last}: archive {archive_key}; the recall tool reads them back.{note})"
    )
}

/// What the source line of the package's own summary says of it.
const WITHOUT_MODEL: &str = "Summarised without the model, which failed";

/// Whether a compacted-summary entry is the package's own summary (the fallback rung's).
pub fn written_without_model(entry: &str) -> bool {
    let second = entry.trim_start().lines().nth(1).unwrap_or_default();
    second.starts_with("(Originals of iterations ") && second.contains_text(WITHOUT_MODEL)
}

/// The archive key a compacted-summary entry's second line names, if it names one.
pub fn parse_summary_source(entry: &str) -> Option<&str> {
    let second = entry.trim_start().lines().nth(1)?.trim();
    let rest = second.strip_prefix("(Originals of iterations ")?;
    let (_, rest) = rest.split_once_text(": archive ")?;
    let (key, _) = rest.split_once(';')?;
    Some(key.trim())
}

/// The range `(first, last)` of a compacted-summary entry, read from its first line.
pub fn parse_summary_header(entry: &str) -> Option<(u32, u32)> {
    let first_line = header_line(entry)?;
    let inner = first_line
        .strip_prefix("=== COMPACTED SUMMARY (Iterations ")?
        .strip_suffix(") ===")?;
    let (first, last) = inner.split_once('-')?;
    Some((first.trim().parse().ok()?, last.trim().parse().ok()?))
}

/// The iteration a reasoning entry's first line names: `=== ITERATION n ===`, or a marker
/// about it such as `=== ITERATION n ERROR ===` or `=== ITERATION n OPERATION WARNINGS ===`.
pub(crate) fn named_iteration(entry: &str) -> Option<u32> {
    let first_line = header_line(entry)?;
    let inner = first_line
        .strip_prefix("=== ITERATION ")?
        .strip_suffix("===")?
        .trim();
    let digits = inner.split_once(' ').map_or(inner, |(n, _)| n);
    digits.parse().ok()
}

/// The last line of a compacted-summary entry.
pub(crate) const SUMMARY_END: &str = "=== END COMPACTED SUMMARY ===";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_of_a_users_message_is_recorded_as_the_users() {
        assert_eq!(
            user_wrote("  Cap the spend at $900.\nAnswer in French.  \n"),
            "The user wrote: Cap the spend at $900.\nThe user wrote: Answer in French."
        );
    }

    #[test]
    fn headers_round_trip() {
        assert_eq!(parse_iteration_header(&iteration_header(12)), Some(12));
        assert_eq!(
            parse_iteration_header("=== ITERATION 3 ===\nthinking"),
            Some(3)
        );
        assert_eq!(parse_iteration_header("=== ITERATION x ==="), None);
        assert_eq!(parse_iteration_header("text === ITERATION 3 ==="), None);
        assert_eq!(
            parse_iteration_header("  === ITERATION 4 ===  \r\nx"),
            Some(4)
        );
        assert_eq!(parse_iteration_header("\n=== ITERATION 5 ==="), None);
        assert_eq!(parse_summary_header(&summary_header(1, 7)), Some((1, 7)));
        assert_eq!(
            parse_summary_header("=== COMPACTED SUMMARY (Iterations 1-7) ===\nbody"),
            Some((1, 7))
        );
    }

    #[test]
    fn markers_name_their_iteration() {
        assert_eq!(named_iteration("=== ITERATION 5 ===\nthinking"), Some(5));
        assert_eq!(
            named_iteration("=== ITERATION 5 ERROR ===\nError: x"),
            Some(5)
        );
        assert_eq!(
            named_iteration("=== ITERATION 12 OPERATION WARNINGS ===\n- [vault] a: b"),
            Some(12)
        );
        assert_eq!(named_iteration("=== ITERATION x ERROR ==="), None);
        assert_eq!(named_iteration("=== VAULT READ ==="), None);
        assert_eq!(named_iteration("text\n=== ITERATION 3 ==="), None);
    }
}
