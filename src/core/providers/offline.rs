//! The built-in `offline` provider: a deterministic summary drawn from the logs themselves,
//! with no network. It keeps the last successful code per task, results and numbers,
//! successful tool operations, resolved and open failures, and the latest conclusions, and it
//! carries an earlier summary's points forward.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::core::entries::StoredToolActivity;
use crate::core::iteration::{parse_iteration_header, parse_summary_header};
use crate::core::prompt::fence_for;
use crate::core::provider::{
    Generation, LocalBoxFuture, ProviderError, SummaryProvider, SummaryRequest,
};
use crate::core::selection::Selection;
use crate::core::tokens::estimate_tokens;
use crate::core::validation::{canonical_heading, heading_section, SECTIONS};

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
        || point.starts_with("Question: ")
}

/// One line of log text as a bullet's content: one line, no markup at its start, cut at a
/// word's end (never inside a word, a number or an id).
fn clip(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = flat.trim_start_matches(['#', '>', '-', '*', '=', ' ']);
    if flat.chars().count() <= max {
        return flat.to_owned();
    }
    let limit = flat.char_indices().nth(max).map_or(flat.len(), |(i, _)| i);
    // A first word longer than `max` is kept whole.
    let cut = flat[..limit]
        .rfind(' ')
        .unwrap_or_else(|| flat.find(' ').unwrap_or(flat.len()));
    if cut == flat.len() {
        return flat.to_owned();
    }
    format!("{}…", flat[..cut].trim_end())
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

/// What a piece of code is for: `metadata.task` when the app says, else its first line.
fn task_of(code: &str, task: Option<String>) -> String {
    task.unwrap_or_else(|| first_line(code).to_owned())
}

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// `text` cut to about `max` characters, never inside a word, a number or a JSON token: the cut
/// falls after a separator (space, comma, bracket) and is marked with `…`.
fn cut_whole(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let limit = flat.char_indices().nth(max).map_or(flat.len(), |(i, _)| i);
    let cut = flat[..limit]
        .rfind([' ', ',', '[', '{', ';'])
        .map_or(0, |i| i + 1);
    format!("{} …", flat[..cut].trim_end())
}

/// One code execution as the summary sees it, from the execution log or the reasoning log's
/// `=== JAVASCRIPT EXECUTION ===` entry.
struct Run {
    iteration: u32,
    id: Option<String>,
    code: String,
    task: String,
    success: Option<bool>,
    /// The returned value as stored (JSON), `None` when nothing was returned.
    result: Option<String>,
    error: Option<String>,
}

/// A failure: of a run, a tool operation, or an iteration.
struct Failure {
    iteration: u32,
    /// What failed: `exec_…`, `vault:<id>`, `iteration`…
    subject: String,
    message: String,
    /// The iteration that resolved it, if a later one did.
    resolved_in: Option<u32>,
}

/// The facts the summary is drawn from.
struct Source {
    first: u32,
    last: u32,
    current: u32,
    query: Option<String>,
    reasoning: Vec<(u32, String)>,
    runs: Vec<Run>,
    failures: Vec<Failure>,
    earlier: BTreeMap<usize, Vec<String>>,
    tools: BTreeMap<String, (BTreeMap<String, usize>, Option<String>)>,
    /// Successful tool operations as `(iteration, "kind:id")`.
    tool_successes: Vec<(u32, String)>,
    tool_count: usize,
}

/// The first line of a marker entry (`=== SESSION START ===`), and the text after it.
fn marker(entry: &str) -> Option<(&str, &str)> {
    let entry = entry.trim_start();
    if !entry.starts_with("===") {
        return None;
    }
    let (first, rest) = entry.split_once('\n').unwrap_or((entry, ""));
    let name = first.trim().trim_matches('=').trim();
    first.trim().ends_with("===").then_some((name, rest))
}

/// The block of a `=== JAVASCRIPT EXECUTION ===` entry that follows `label:` up to the next
/// label.
fn block<'t>(text: &'t str, label: &str, next: &[&str]) -> Option<&'t str> {
    let start = text.find(&format!("{label}:\n"))? + label.len() + 2;
    let rest = &text[start..];
    let end = next
        .iter()
        .filter_map(|n| rest.find(&format!("\n{n}:\n")))
        .min()
        .unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// A value from a log as compact text: JSON compacted where it parses, else as written.
fn compact_value(text: &str) -> String {
    match serde_json::from_str::<Box<serde_json::value::RawValue>>(text) {
        Ok(_) => {
            let mut out = String::with_capacity(text.len());
            let mut in_string = false;
            let mut escaped = false;
            for c in text.chars() {
                if in_string {
                    out.push(c);
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        in_string = false;
                    }
                } else if c == '"' {
                    in_string = true;
                    out.push(c);
                } else if !c.is_whitespace() {
                    out.push(c);
                }
            }
            out
        }
        Err(_) => text.trim().to_owned(),
    }
}

impl Source {
    fn of(selection: &Selection) -> Self {
        let mut source = Source {
            first: 1,
            last: selection.last,
            current: selection.current,
            query: None,
            reasoning: Vec::new(),
            runs: Vec::new(),
            failures: Vec::new(),
            earlier: BTreeMap::new(),
            tools: BTreeMap::new(),
            tool_successes: Vec::new(),
            tool_count: 0,
        };
        for (n, entry) in &selection.execution {
            let fields = entry.fields();
            let code = fields.code().into_owned();
            source.runs.push(Run {
                iteration: *n,
                id: entry.facts.id.clone(),
                task: task_of(&code, fields.task()),
                code,
                success: fields.success(),
                result: fields.result_json().map(str::to_owned),
                error: fields.error_message(),
            });
        }
        for (n, entry) in &selection.reasoning {
            source.read_reasoning(*n, entry);
        }
        source.runs.sort_by_key(|run| run.iteration);
        for (n, entry) in &selection.tool_activity {
            source.read_tool(*n, entry);
        }
        source.resolve();
        source
    }

    fn read_reasoning(&mut self, n: u32, entry: &str) {
        if parse_summary_header(entry).is_some() {
            let mut section = None;
            for line in entry.lines() {
                if let Some(i) = heading_section(line) {
                    section = Some(i);
                } else if let (Some(i), Some(point)) = (section, line.trim().strip_prefix("- ")) {
                    if i == 0 && self.query.is_none() {
                        if let Some(query) = point.strip_prefix("Question: ") {
                            self.query = Some(query.to_owned());
                            continue;
                        }
                    }
                    self.earlier.entry(i).or_default().push(point.to_owned());
                }
            }
            return;
        }
        let Some((name, body)) = marker(entry) else {
            if !entry.trim().is_empty() {
                self.reasoning.push((n, entry.to_owned()));
            }
            return;
        };
        if parse_iteration_header(entry).is_some() {
            if !body.trim().is_empty() {
                self.reasoning.push((n, body.to_owned()));
            }
        } else if name == "SESSION START" {
            let query = body.lines().find_map(|l| l.strip_prefix("Query: "));
            if let Some(query) = query.filter(|q| !q.trim().is_empty()) {
                self.query.get_or_insert_with(|| query.trim().to_owned());
            }
        } else if name == "JAVASCRIPT EXECUTION" {
            self.read_execution_entry(n, body);
        } else if name.ends_with("OPERATION WARNINGS") {
            for line in body.lines() {
                let Some(item) = line.trim().strip_prefix("- [") else {
                    continue;
                };
                let Some((kind, rest)) = item.split_once("] ") else {
                    continue;
                };
                let (id, message) = rest.split_once(": ").unwrap_or((rest, ""));
                let subject = if kind == "execution" {
                    id.to_owned()
                } else {
                    format!("{kind}:{id}")
                };
                self.failures.push(Failure {
                    iteration: n,
                    subject,
                    message: message.trim().to_owned(),
                    resolved_in: None,
                });
            }
        } else if name.ends_with(" ERROR") && name.starts_with("ITERATION ") {
            let message = body
                .lines()
                .find_map(|l| l.strip_prefix("Error: "))
                .unwrap_or(body.trim());
            self.failures.push(Failure {
                iteration: n,
                subject: "iteration".into(),
                message: message.trim().to_owned(),
                resolved_in: None,
            });
        }
        // Other markers (VAULT READ, SESSION COMPLETE, …) are bookkeeping the tool log and
        // the reasoning already tell.
    }

    /// A `=== JAVASCRIPT EXECUTION ===` entry: a successful run the execution log may also
    /// hold (then that one is kept, it has the value as stored).
    fn read_execution_entry(&mut self, n: u32, body: &str) {
        let id = body
            .lines()
            .find_map(|l| l.strip_prefix("ID: "))
            .map(|id| id.trim().to_owned());
        if id.is_some() && self.runs.iter().any(|run| run.id == id) {
            return;
        }
        let labels = ["CODE", "CONSOLE OUTPUT", "RETURN VALUE"];
        let code = block(body, "CODE", &labels).unwrap_or("").to_owned();
        let result = block(body, "RETURN VALUE", &labels)
            .filter(|v| !v.is_empty() && *v != "undefined" && *v != "null")
            .map(compact_value);
        self.runs.push(Run {
            iteration: n,
            id,
            task: task_of(&code, None),
            code,
            success: Some(true),
            result,
            error: None,
        });
    }

    fn read_tool(&mut self, n: u32, entry: &StoredToolActivity) {
        self.tool_count += 1;
        let fields = entry.fields();
        let status = fields.status().unwrap_or_default();
        let kind = fields.kind().unwrap_or_else(|| "tool".into());
        let action = fields.action().unwrap_or_else(|| "use".into());
        if matches!(&*status, "error" | "failed" | "failure") {
            // A failed run is reported with its execution.
            if kind != "js_execute" {
                let id = entry.facts.id.clone().unwrap_or_default();
                self.failures.push(Failure {
                    iteration: n,
                    subject: format!("{kind}:{id}"),
                    message: fields
                        .error_message()
                        .unwrap_or_else(|| format!("{action} failed")),
                    resolved_in: None,
                });
            }
            return;
        }
        if !matches!(&*status, "success" | "ok" | "done" | "completed") {
            return;
        }
        if let Some(id) = &entry.facts.id {
            self.tool_successes.push((n, format!("{kind}:{id}")));
        }
        let slot = self.tools.entry(kind.into_owned()).or_default();
        *slot.0.entry(action.into_owned()).or_default() += 1;
        if let Some(details) = fields.details() {
            slot.1 = Some(details.into_owned());
        } else if let Some(id) = &entry.facts.id {
            slot.1 = Some(id.clone());
        }
    }

    /// Marks each failure a later iteration resolved: a run of the same task that succeeded,
    /// the same tool operation done successfully, an iteration that completed after an
    /// iteration error.
    fn resolve(&mut self) {
        for run in self.runs.iter().filter(|run| run.success == Some(false)) {
            if run.id.is_some()
                && self
                    .failures
                    .iter()
                    .any(|f| Some(&f.subject) == run.id.as_ref())
            {
                continue;
            }
            self.failures.push(Failure {
                iteration: run.iteration,
                subject: run.id.clone().unwrap_or_else(|| run.task.clone()),
                message: run.error.clone().unwrap_or_else(|| "error".into()),
                resolved_in: None,
            });
        }
        let latest_iteration = self.reasoning.iter().map(|(n, _)| *n).max().unwrap_or(0);
        for failure in &mut self.failures {
            let failed_run = self
                .runs
                .iter()
                .find(|run| run.id.as_deref() == Some(failure.subject.as_str()));
            let task = failed_run.map_or(failure.subject.as_str(), |run| run.task.as_str());
            let fixed_by_run = self
                .runs
                .iter()
                .filter(|run| run.success == Some(true) && run.task == task)
                .map(|run| run.iteration)
                .find(|m| {
                    *m > failure.iteration || (failed_run.is_some() && *m >= failure.iteration)
                });
            let fixed_by_tool = self
                .tool_successes
                .iter()
                .find(|(m, subject)| *m > failure.iteration && *subject == failure.subject)
                .map(|(m, _)| *m);
            failure.resolved_in = fixed_by_run.or(fixed_by_tool).or_else(|| {
                (failure.subject == "iteration" && latest_iteration > failure.iteration + 1)
                    .then_some(latest_iteration)
            });
        }
        self.failures.sort_by_key(|f| f.iteration);
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

    /// The earlier summary's points of `section`: those starting with `whole` (results, open
    /// failures) carried forward whole, then the others as [`Source::earlier_points`] gives them.
    fn earlier_keeping(&self, section: usize, whole: &str, caps: Caps) -> Vec<String> {
        let mut points: Vec<String> = self
            .earlier
            .get(&section)
            .into_iter()
            .flatten()
            .filter(|p| p.starts_with(whole))
            .cloned()
            .collect();
        points.extend(
            self.earlier_points(section, caps)
                .into_iter()
                .filter(|p| !p.starts_with(whole)),
        );
        points
    }
}

fn objective(source: &Source, caps: Caps) -> Vec<String> {
    let mut points = Vec::new();
    if let Some(query) = &source.query {
        points.push(format!("Question: {}", query.trim()));
    }
    points.extend(source.earlier_points(0, caps));
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
        .runs
        .iter()
        .filter(|run| run.success == Some(true))
        .count();
    points.push(format!(
        "{ok} of {} code executions in iterations {}-{} succeeded.",
        source.runs.len(),
        source.first,
        source.last
    ));
    points
}

/// The prefix of a result point, which later summaries carry forward whole.
const RESULT_POINT: &str = "Result of ";

fn discoveries(source: &Source, caps: Caps) -> Vec<String> {
    let mut points = source.earlier_keeping(1, RESULT_POINT, caps);
    for run in &source.runs {
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

/// Longest value a result point keeps before it is cut (at a token boundary).
pub const MAX_VALUE_CHARS: usize = 400;

fn solutions(source: &Source, caps: Caps) -> (Vec<String>, Vec<String>) {
    let points = source.earlier_points(2, caps);
    let mut seen = Vec::new();
    let mut blocks = Vec::new();
    for run in source.runs.iter().rev() {
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
            .join("\n");
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

fn tools_used(source: &Source, caps: Caps) -> Vec<String> {
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

/// The prefix of an open failure, which later summaries carry forward whole.
const OPEN_POINT: &str = "Still failing";

fn insights(source: &Source, caps: Caps) -> Vec<String> {
    let mut points = source.earlier_keeping(4, OPEN_POINT, caps);
    let mut resolved = 0;
    for failure in &source.failures {
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
                failure.iteration, failure.subject
            )),
        }
    }
    if points.is_empty() {
        points.push("No failures needed fixing in these iterations.".into());
    }
    points
}

fn context(source: &Source, caps: Caps) -> Vec<String> {
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

fn render(source: &Source, caps: Caps) -> String {
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
mod tests;
