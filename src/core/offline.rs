//! The built-in `offline` provider: a deterministic summary drawn from the logs themselves,
//! with no network. It keeps the last successful code per task, results and numbers,
//! successful tool operations, resolved and open failures, and the latest conclusions, and it
//! carries an earlier summary's points forward.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::entries::ExecutionEntry;
use super::iteration::{parse_iteration_header, parse_summary_header};
use super::prompt::{fence_for, value_text};
use super::provider::{Generation, LocalBoxFuture, ProviderError, SummaryProvider, SummaryRequest};
use super::selection::Selection;
use super::tokens::estimate_tokens;
use super::validation::{canonical_heading, heading_section, SECTIONS};

/// The share of the compacted tokens the offline summary aims to stay under.
pub const TARGET_SHARE: f64 = 0.28;

/// The `offline` provider.
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineProvider;

impl SummaryProvider for OfflineProvider {
    fn model(&self) -> String {
        "offline".into()
    }

    fn generate(
        &self,
        request: &SummaryRequest<'_>,
    ) -> LocalBoxFuture<'static, Result<Generation, ProviderError>> {
        let summary = offline_summary(request.selection);
        Box::pin(async move { Ok(summary.into()) })
    }
}

/// How much of each kind of point to keep; shrunk until the summary fits its share.
#[derive(Debug, Clone, Copy)]
struct Caps {
    points: usize,
    chars: usize,
    code_lines: usize,
    solutions: usize,
}

const CAPS: [Caps; 4] = [
    Caps {
        points: 6,
        chars: 180,
        code_lines: 8,
        solutions: 3,
    },
    Caps {
        points: 4,
        chars: 140,
        code_lines: 6,
        solutions: 2,
    },
    Caps {
        points: 3,
        chars: 110,
        code_lines: 4,
        solutions: 1,
    },
    Caps {
        points: 2,
        chars: 90,
        code_lines: 3,
        solutions: 1,
    },
];

/// The offline summary of `selection`: all six sections, deterministic.
pub fn offline_summary(selection: &Selection) -> String {
    let source = Source::of(selection);
    let compacted: usize = selection.originals().estimate_tokens();
    let mut summary = String::new();
    for caps in CAPS {
        summary = render(&source, caps);
        if (estimate_tokens(&summary) as f64) <= compacted as f64 * TARGET_SHARE {
            break;
        }
    }
    summary
}

/// Points an offline summary writes about its own range ("Iterations 1-4 are compacted…");
/// a later summary states them afresh instead of carrying stale ones forward.
fn is_bookkeeping(point: &str) -> bool {
    point.starts_with("Iterations ")
        || point.starts_with("Reached by iteration")
        || point.starts_with("Latest conclusion")
        || point.contains(" code executions in iterations ")
}

/// One line of log text as a bullet's content: one line, no markup at its start, cut.
fn clip(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = flat.trim_start_matches(['#', '>', '-', '*', '=', ' ']);
    if flat.chars().count() <= max {
        flat.to_owned()
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    }
}

fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let end = text
        .char_indices()
        .find(|&(i, c)| {
            c == '\n' || (matches!(c, '.' | '!' | '?') && text[i + 1..].starts_with(' '))
        })
        .map_or(text.len(), |(i, c)| if c == '\n' { i } else { i + 1 });
    &text[..end]
}

fn last_sentence(text: &str) -> &str {
    let text = text.trim();
    let start = text
        .char_indices()
        .rfind(|&(i, c)| {
            c == '\n'
                || (matches!(c, '.' | '!' | '?')
                    && text[i + 1..].starts_with(' ')
                    && i + 2 < text.len())
        })
        .map_or(0, |(i, _)| i + 1);
    text[start..].trim()
}

fn code_of(entry: &ExecutionEntry) -> &str {
    entry.code.as_deref().unwrap_or("").trim()
}

/// What a piece of code is for: `metadata.task` when the app says, else its first line.
fn task_of(entry: &ExecutionEntry) -> String {
    entry
        .metadata
        .as_ref()
        .and_then(|m| m.get("task"))
        .and_then(|t| t.as_str())
        .map_or_else(|| first_line(code_of(entry)).to_owned(), str::to_owned)
}

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The facts the summary is drawn from.
struct Source<'a> {
    first: u32,
    last: u32,
    current: u32,
    reasoning: Vec<(u32, &'a str)>,
    executions: Vec<(u32, &'a ExecutionEntry)>,
    earlier: BTreeMap<usize, Vec<String>>,
    tools: BTreeMap<String, (BTreeMap<String, usize>, Option<String>)>,
    tool_count: usize,
}

impl<'a> Source<'a> {
    fn of(selection: &'a Selection) -> Self {
        let mut reasoning = Vec::new();
        let mut earlier: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for (n, entry) in &selection.reasoning {
            if parse_summary_header(entry).is_some() {
                let mut section = None;
                for line in entry.lines() {
                    if let Some(i) = heading_section(line) {
                        section = Some(i);
                    } else if let (Some(i), Some(point)) = (section, line.trim().strip_prefix("- "))
                    {
                        earlier.entry(i).or_default().push(point.to_owned());
                    }
                }
                continue;
            }
            let text = if parse_iteration_header(entry).is_some() {
                entry.split_once('\n').map_or("", |(_, rest)| rest)
            } else {
                entry
            };
            if !text.trim().is_empty() {
                reasoning.push((*n, text));
            }
        }
        let mut tools: BTreeMap<String, (BTreeMap<String, usize>, Option<String>)> =
            BTreeMap::new();
        let mut tool_count = 0;
        for (_, entry) in &selection.tool_activity {
            tool_count += 1;
            let ok = matches!(
                entry.status.as_deref(),
                Some("success" | "ok" | "done" | "completed")
            );
            if !ok {
                continue;
            }
            let slot = tools
                .entry(entry.kind.clone().unwrap_or_else(|| "tool".into()))
                .or_default();
            *slot
                .0
                .entry(entry.action.clone().unwrap_or_else(|| "use".into()))
                .or_default() += 1;
            if let Some(details) = &entry.details {
                slot.1 = Some(value_text(details).into_owned());
            }
        }
        Source {
            first: 1,
            last: selection.last,
            current: selection.current,
            reasoning,
            executions: selection.execution.clone(),
            earlier,
            tools,
            tool_count,
        }
    }

    fn earlier_points(&self, section: usize, caps: Caps) -> Vec<String> {
        self.earlier
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
}

fn objective(source: &Source<'_>, caps: Caps) -> Vec<String> {
    let mut points = source.earlier_points(0, caps);
    if points.is_empty() {
        if let Some((n, text)) = source.reasoning.first() {
            points.push(format!(
                "Goal (iteration {n}): {}",
                clip(first_sentence(text), caps.chars)
            ));
        }
    }
    if let Some((n, text)) = source.reasoning.last() {
        points.push(format!(
            "Reached by iteration {n}: {}",
            clip(first_sentence(text), caps.chars)
        ));
    }
    let ok = source
        .executions
        .iter()
        .filter(|(_, e)| e.success == Some(true))
        .count();
    points.push(format!(
        "{ok} of {} code executions in iterations {}-{} succeeded.",
        source.executions.len(),
        source.first,
        source.last
    ));
    points
}

fn discoveries(source: &Source<'_>, caps: Caps) -> Vec<String> {
    let mut points = source.earlier_points(1, caps);
    let mut seen = Vec::new();
    let mut results = Vec::new();
    for (n, entry) in source.executions.iter().rev() {
        let (Some(true), Some(result)) = (entry.success, entry.result.as_ref()) else {
            continue;
        };
        let task = task_of(entry);
        if result.is_null() || seen.contains(&task) {
            continue;
        }
        seen.push(task);
        results.push(format!(
            "Iteration {n}: `{}` → {}",
            clip(first_line(code_of(entry)), caps.chars / 3),
            clip(&value_text(result), caps.chars / 2)
        ));
        if results.len() == caps.points {
            break;
        }
    }
    results.reverse();
    points.extend(results);
    let facts: Vec<String> = source
        .reasoning
        .iter()
        .rev()
        .flat_map(|(n, text)| {
            text.split('\n')
                .flat_map(|line| line.split(". "))
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

fn solutions(source: &Source<'_>, caps: Caps) -> (Vec<String>, Vec<String>) {
    let points = source.earlier_points(2, caps);
    let mut seen = Vec::new();
    let mut blocks = Vec::new();
    for (n, entry) in source.executions.iter().rev() {
        if entry.success != Some(true) || code_of(entry).is_empty() {
            continue;
        }
        let task = task_of(entry);
        if seen.contains(&task) {
            continue;
        }
        seen.push(task);
        let lines: Vec<&str> = code_of(entry).lines().collect();
        let mut code = lines
            .iter()
            .take(caps.code_lines)
            .copied()
            .collect::<Vec<_>>()
            .join("\n");
        if lines.len() > caps.code_lines {
            let _ = write!(
                code,
                "\n// … {} more lines in the archive",
                lines.len() - caps.code_lines
            );
        }
        let fence = fence_for(&code);
        blocks.push(format!(
            "Final working code (iteration {n}):\n{fence}js\n{code}\n{fence}"
        ));
        if blocks.len() == caps.solutions {
            break;
        }
    }
    blocks.reverse();
    (points, blocks)
}

fn tools_used(source: &Source<'_>, caps: Caps) -> Vec<String> {
    let mut points = source.earlier_points(3, caps);
    for (kind, (actions, last)) in source.tools.iter().take(caps.points) {
        let actions = actions
            .iter()
            .map(|(a, c)| format!("{a} ×{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let last = last
            .as_deref()
            .map(|d| format!(" (last: {})", clip(d, caps.chars / 2)))
            .unwrap_or_default();
        points.push(format!("{kind}: {actions}{last}"));
    }
    if points.is_empty() {
        points.push(format!(
            "No successful tool operations among {} recorded.",
            source.tool_count
        ));
    }
    points
}

fn insights(source: &Source<'_>, caps: Caps) -> Vec<String> {
    let mut points = source.earlier_points(4, caps);
    let mut resolved = 0;
    let mut open = Vec::new();
    for (i, (n, entry)) in source.executions.iter().enumerate() {
        if entry.success != Some(false) {
            continue;
        }
        let task = task_of(entry);
        let fixed = source.executions[i + 1..]
            .iter()
            .find(|(_, later)| later.success == Some(true) && task_of(later) == task);
        match fixed {
            Some((m, _)) if resolved < caps.points => {
                resolved += 1;
                points.push(format!(
                    "`{}` failed in iteration {n} ({}) and was fixed in iteration {m}.",
                    clip(first_line(code_of(entry)), caps.chars / 3),
                    clip(entry.error_message().unwrap_or("error"), caps.chars / 2)
                ));
            }
            Some(_) => {}
            None => open.push(format!(
                "Still failing (iteration {n}): `{}` → {}",
                clip(first_line(code_of(entry)), caps.chars / 3),
                clip(entry.error_message().unwrap_or("error"), caps.chars / 2)
            )),
        }
    }
    points.extend(open.into_iter().rev().take(caps.points / 2 + 1));
    if points.is_empty() {
        points.push("No failures needed fixing in these iterations.".into());
    }
    points
}

fn context(source: &Source<'_>, caps: Caps) -> Vec<String> {
    let mut points = source.earlier_points(5, caps);
    points.push(format!(
        "Iterations {}-{} are compacted here; iteration {} continues verbatim after this summary.",
        source.first, source.last, source.current
    ));
    if let Some((n, text)) = source.reasoning.last() {
        points.push(format!(
            "Latest conclusion (iteration {n}): {}",
            clip(last_sentence(text), caps.chars)
        ));
    }
    points
}

fn render(source: &Source<'_>, caps: Caps) -> String {
    let (solution_points, code_blocks) = solutions(source, caps);
    let sections: [(Vec<String>, Vec<String>); 6] = [
        (objective(source, caps), Vec::new()),
        (discoveries(source, caps), Vec::new()),
        (solution_points, code_blocks),
        (tools_used(source, caps), Vec::new()),
        (insights(source, caps), Vec::new()),
        (context(source, caps), Vec::new()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_cut_at_their_ends() {
        assert_eq!(first_sentence("Load the CSV. Then count."), "Load the CSV.");
        assert_eq!(first_sentence("v1.2 is out\nnext"), "v1.2 is out");
        assert_eq!(last_sentence("First. Second one."), "Second one.");
        assert_eq!(clip("### heading   text", 40), "heading text");
        assert_eq!(clip("abcdef", 4), "abc…");
    }
}
