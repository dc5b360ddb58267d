//! The six sections of an offline summary, each drawn from the [`Digest`] within its caps.

use crate::core::order::join::Joined;
use crate::core::order::text_search::TextSearch;
use std::fmt::Write;

use super::caps::Caps;
use crate::core::steps::digest::text::{
    clip, cut_whole, first_line, first_sentence, is_bookkeeping, last_sentence,
};
use crate::core::steps::digest::Digest;
use crate::core::steps::prompt::fence_for;
use crate::core::steps::user_words::task_of;
use crate::core::steps::validation::{canonical_heading, SECTIONS};

fn objective(digest: &Digest, caps: Caps) -> Vec<String> {
    let mut points = Vec::new();
    if let Some(query) = &digest.query {
        points.push(format!("Question: {}", task_of(query.trim())));
    }
    points.extend(earlier_points(digest, 0, caps));
    if points.is_empty() {
        if let Some((n, text)) = digest.reasoning.first() {
            points.push(format!(
                "Goal (iteration {n}): {}",
                clip(first_sentence(text), caps.chars)
            ));
        }
    }
    if let Some((n, text)) = digest.reasoning.last() {
        points.push(format!(
            "Reached by iteration {n}: {}",
            clip(first_sentence(text), caps.chars)
        ));
    }
    // Said only of a session that runs code: "0 of 0 code executions" tells a model that only
    // called tools of runs that never were.
    let ok = digest
        .runs
        .iter()
        .filter(|run| run.success == Some(true))
        .count();
    if !digest.runs.is_empty() {
        points.push(format!(
            "{ok} of {} code executions in iterations {}-{} succeeded.",
            digest.runs.len(),
            digest.first,
            digest.last
        ));
    }
    points
}

/// The prefix of a result point, which later summaries carry forward whole.
const RESULT_POINT: &str = "Result of ";

fn discoveries(digest: &Digest, caps: Caps) -> Vec<String> {
    let mut points = earlier_keeping(digest, 1, RESULT_POINT, caps);
    for run in &digest.runs {
        let (Some(true), Some(result)) = (run.success, run.result.as_deref()) else {
            continue;
        };
        let what = run.id.as_deref().map_or_else(
            || format!("`{}`", clip(first_line(&run.code), caps.chars / 3)),
            str::to_owned,
        );
        points.push(format!(
            "{RESULT_POINT}{what} (iteration {}): {}",
            run.iteration,
            cut_whole(result, MAX_VALUE_CHARS)
        ));
    }
    let facts: Vec<String> = digest
        .reasoning
        .iter()
        .rev()
        .flat_map(|(n, text)| {
            text.split('\n')
                .flat_map(|line| line.split_text(". "))
                .filter(|s| s.chars().any(|c| c.is_ascii_digit()) && s.trim().len() > 12)
                .map(move |s| format!("Iteration {n}: {}", clip(s, caps.chars)))
        })
        .take(caps.points / 2)
        .collect();
    points.extend(facts.into_iter().rev());
    if points.is_empty() {
        points.push("No results were recorded in these iterations.".into());
    }
    points
}

/// Longest value a result point keeps before it is cut (at a token boundary).
pub(crate) const MAX_VALUE_CHARS: usize = 400;

fn solutions(digest: &Digest, caps: Caps) -> (Vec<String>, Vec<String>) {
    let points = earlier_points(digest, 2, caps);
    let mut seen = Vec::new();
    let mut blocks = Vec::new();
    for run in digest.runs.iter().rev() {
        let code = run.code.trim();
        if run.success != Some(true) || code.is_empty() || seen.contains(&run.task) {
            continue;
        }
        seen.push(run.task.clone());
        let lines: Vec<&str> = code.lines().collect();
        let mut shown = lines
            .iter()
            .take(caps.code_lines)
            .copied()
            .collect::<Vec<_>>()
            .joined("\n");
        if lines.len() > caps.code_lines {
            let _ = write!(
                shown,
                "\n// … {} more lines in the archive",
                lines.len() - caps.code_lines
            );
        }
        let fence = fence_for(&shown);
        blocks.push(format!(
            "Final working code (iteration {}):\n{fence}js\n{shown}\n{fence}",
            run.iteration
        ));
        if blocks.len() == caps.solutions {
            break;
        }
    }
    blocks.reverse();
    (points, blocks)
}

fn tools_used(digest: &Digest, caps: Caps) -> Vec<String> {
    let mut points = earlier_points(digest, 3, caps);
    for (kind, (actions, last)) in digest.tools.iter().take(caps.points) {
        let actions = actions
            .iter()
            .map(|(a, c)| format!("{a} ×{c}"))
            .collect::<Vec<_>>()
            .joined(", ");
        let last = last
            .as_deref()
            .map(|d| format!(" (last: {})", clip(d, caps.chars / 2)))
            .unwrap_or_default();
        points.push(format!("{kind}: {actions}{last}"));
    }
    if points.is_empty() {
        points.push(format!(
            "No successful tool operations among {} recorded.",
            digest.tool_count
        ));
    }
    points
}

/// The prefix of an open failure, which later summaries carry forward whole.
const OPEN_POINT: &str = "Still failing";

fn insights(digest: &Digest, caps: Caps) -> Vec<String> {
    let mut points = earlier_keeping(digest, 4, OPEN_POINT, caps);
    let mut resolved = 0;
    for failure in &digest.failures {
        let message = cut_whole(&failure.message, caps.chars);
        match failure.resolved_in {
            Some(m) if resolved < caps.points => {
                resolved += 1;
                points.push(format!(
                    "{} failed in iteration {} ({message}); resolved in iteration {m}.",
                    failure.subject, failure.iteration
                ));
            }
            Some(_) => {}
            None => points.push(format!(
                "{OPEN_POINT} (iteration {}): {} → {message}",
                failure.iteration,
                digest.failed(failure).1
            )),
        }
    }
    if points.is_empty() {
        points.push("No failures needed fixing in these iterations.".into());
    }
    points
}

fn context(digest: &Digest, caps: Caps) -> Vec<String> {
    let mut points = earlier_points(digest, 5, caps);
    points.push(format!(
        "Iterations {}-{} are compacted here; iteration {} continues verbatim after this summary.",
        digest.first, digest.last, digest.current
    ));
    if let Some((n, text)) = digest.reasoning.last() {
        points.push(format!(
            "Latest conclusion (iteration {n}): {}",
            clip(last_sentence(text), caps.chars)
        ));
    }
    points
}

pub(super) fn render(digest: &Digest, caps: Caps) -> String {
    let (solution_points, code_blocks) = solutions(digest, caps);
    let sections: [(Vec<String>, Vec<String>); 6] = [
        (objective(digest, caps), Vec::new()),
        (discoveries(digest, caps), Vec::new()),
        (solution_points, code_blocks),
        (tools_used(digest, caps), Vec::new()),
        (insights(digest, caps), Vec::new()),
        (context(digest, caps), Vec::new()),
    ];
    let mut out = String::new();
    for ((emoji, title), (points, blocks)) in SECTIONS.iter().zip(sections) {
        let _ = writeln!(out, "{}", canonical_heading(emoji, title));
        let mut points = points;
        points.dedup();
        if points.is_empty() && blocks.is_empty() {
            points.push("Nothing recorded.".into());
        }
        for point in points {
            let _ = writeln!(out, "- {point}");
        }
        for block in blocks {
            let _ = writeln!(out, "{block}");
        }
        out.push('\n');
    }
    out.trim_end().to_owned()
}

/// The earlier summary's points of `section` (bookkeeping left out), within `caps`.
fn earlier_points(digest: &Digest, section: usize, caps: Caps) -> Vec<String> {
    digest
        .earlier
        .get(&section)
        .map(|points| {
            points
                .iter()
                .filter(|point| !is_bookkeeping(point))
                .take(caps.points)
                .map(|p| clip(p, caps.chars))
                .collect()
        })
        .unwrap_or_default()
}

/// The earlier summary's points of `section`: those starting with `whole` (results, open
/// failures) carried forward whole, then the others as [`earlier_points`] gives them.
fn earlier_keeping(digest: &Digest, section: usize, whole: &str, caps: Caps) -> Vec<String> {
    let mut points: Vec<String> = digest
        .earlier
        .get(&section)
        .into_iter()
        .flatten()
        .filter(|p| p.starts_with(whole))
        .cloned()
        .collect();
    points.extend(
        earlier_points(digest, section, caps)
            .into_iter()
            .filter(|p| !p.starts_with(whole)),
    );
    points
}
