//! A reasoning entry as an app shows it: its text, what kind of entry it is (an iteration's
//! header, a compacted summary, or the model's text) and where it belongs, so that no app has
//! to parse the package's header formats.

use crate::core::json::record::{json_names, json_record};
use crate::core::order::join::Joined;

use crate::core::log::iteration::{
    parse_iteration_header, parse_summary_header, parse_summary_source, SUMMARY_END,
};

/// What a reasoning entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningKind {
    /// `=== ITERATION n ===`: the start of iteration n.
    Header,
    /// A compacted summary of iterations `first..=last`.
    Summary,
    /// Anything else: the model's reasoning, markers such as `=== ITERATION n ERROR ===`.
    Text,
}

/// One entry of the reasoning log, described.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReasoningEntry {
    /// The entry as stored.
    pub text: String,
    /// What it is.
    pub kind: ReasoningKind,
    /// The iteration a header starts or a text belongs to (none for a summary, or for text
    /// before any iteration).
    pub iteration: Option<u32>,
    /// The iterations a summary replaced, first and last.
    pub iterations: Option<[u32; 2]>,
    /// The archive that holds the originals a summary replaced, when it names one.
    pub archive_key: Option<String>,
    /// A summary's own text: without its header line, the line naming its archive and its
    /// end line.
    pub summary: Option<String>,
}

json_names! {
    ReasoningKind {
        Header = "header",
        Summary = "summary",
        Text = "text",
    }
}

json_record! {
    write ReasoningEntry {
        text: "text" req,
        kind: "kind" req,
        iteration: "iteration" opt,
        iterations: "iterations" opt,
        archive_key: "archiveKey" opt,
        summary: "summary" opt,
    }
}

impl ReasoningEntry {
    /// Describes `text`, an entry the placement put in iteration `placed` (0: before any).
    pub fn describe(text: &str, placed: u32) -> Self {
        let (kind, iteration, iterations) = if let Some(n) = parse_iteration_header(text) {
            (ReasoningKind::Header, Some(n), None)
        } else if let Some((first, last)) = parse_summary_header(text) {
            (ReasoningKind::Summary, None, Some([first, last]))
        } else {
            (ReasoningKind::Text, (placed > 0).then_some(placed), None)
        };
        let archive_key = (kind == ReasoningKind::Summary)
            .then(|| parse_summary_source(text).map(str::to_owned))
            .flatten();
        let summary = (kind == ReasoningKind::Summary).then(|| {
            let framed = archive_key.is_some();
            let body = text.trim().lines().skip(if framed { 2 } else { 1 });
            let body: Vec<&str> = body.collect();
            let body = match body.split_last() {
                Some((last, rest)) if last.trim() == SUMMARY_END => rest,
                _ => &body[..],
            };
            body.joined("\n").trim().to_owned()
        });
        Self {
            text: text.to_owned(),
            kind,
            iteration,
            iterations,
            archive_key,
            summary,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::log::iteration::{iteration_header, summary_header, summary_source_line};
    use crate::core::order::text_search::TextSearch;

    #[test]
    fn headers_summaries_and_text_are_told_apart() {
        let header = ReasoningEntry::describe(&iteration_header(7), 7);
        assert_eq!(
            (header.kind, header.iteration, header.iterations),
            (ReasoningKind::Header, Some(7), None)
        );
        let summary_text = format!(
            "{}\n{}\n### 🎯 OBJECTIVE ACHIEVED\n- done",
            summary_header(1, 6),
            summary_source_line(1, 6, "gdrs_archived_logs_1795373767000", None)
        );
        let summary = ReasoningEntry::describe(&summary_text, 6);
        assert_eq!(summary.kind, ReasoningKind::Summary);
        assert_eq!(summary.iterations, Some([1, 6]));
        assert_eq!(summary.iteration, None);
        assert_eq!(
            summary.summary.as_deref(),
            Some("### 🎯 OBJECTIVE ACHIEVED\n- done")
        );
        assert_eq!(
            summary.archive_key.as_deref(),
            Some("gdrs_archived_logs_1795373767000")
        );
        // A summary GDRS wrote itself names no archive.
        let bare = ReasoningEntry::describe(&format!("{}\nbody", summary_header(1, 2)), 2);
        assert_eq!(
            (bare.kind, bare.archive_key),
            (ReasoningKind::Summary, None)
        );
        assert_eq!(bare.summary.as_deref(), Some("body"));
        let ended = format!("{}\nline\n{SUMMARY_END}", summary_header(1, 2));
        assert_eq!(
            ReasoningEntry::describe(&ended, 2).summary.as_deref(),
            Some("line")
        );
        let marker = ReasoningEntry::describe("=== ITERATION 3 ERROR ===\nboom", 3);
        assert_eq!(
            (marker.kind, marker.iteration),
            (ReasoningKind::Text, Some(3))
        );
        let before_any = ReasoningEntry::describe("Session start", 0);
        assert_eq!(before_any.iteration, None);
        let json = crate::core::json::write::to_json(&summary);
        assert!(
            json.contains_text(r#""kind":"summary","iterations":[1,6],"archiveKey":"#),
            "{json}"
        );
    }
}
