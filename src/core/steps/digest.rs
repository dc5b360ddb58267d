//! The digest of a selection: what the selected entries say, read once per compaction
//! (GDRS-aware: its markers, executions, vault reads and failures) and handed to the ledger and
//! the offline summary. Its text helpers are in [`text`].

use crate::core::log::entries::StoredToolActivity;
use crate::core::log::iteration::{parse_iteration_header, parse_summary_header};
use crate::core::model::user_items::USER_HEADING;
use crate::core::order::sort::sort_by_key;
use crate::core::order::sorted_map::SortedMap;
use crate::core::order::text_search::TextSearch;
use crate::core::steps::label::label_of;
use crate::core::steps::selection::Selection;
use crate::core::steps::validation::heading_section;

use text::task_of;

pub mod text;

/// One code execution as the summary sees it, from the execution log or the reasoning log's
/// `=== JAVASCRIPT EXECUTION ===` entry.
pub(crate) struct Execution {
    pub(crate) iteration: u32,
    pub(crate) id: Option<String>,
    pub(crate) code: String,
    pub(crate) task: String,
    pub(crate) success: Option<bool>,
    /// The returned value as stored (JSON), `None` when nothing was returned.
    pub(crate) result: Option<String>,
    pub(crate) error: Option<String>,
}

/// A failure: of a run, a tool operation, or an iteration.
pub(crate) struct Failure {
    pub(crate) iteration: u32,
    /// What failed: `exec_…`, `vault:<id>`, `iteration`…
    pub(crate) subject: String,
    pub(crate) message: String,
    /// The iteration that resolved it, if a later one did.
    pub(crate) resolved_in: Option<u32>,
}

/// What the selected entries say: the runs, their tasks and results, failures and what resolved
/// them, tool operations, and the points of earlier summaries.
pub struct Digest {
    pub(crate) first: u32,
    pub(crate) last: u32,
    pub(crate) current: u32,
    pub(crate) query: Option<String>,
    pub(crate) reasoning: Vec<(u32, String)>,
    pub(crate) runs: Vec<Execution>,
    pub(crate) failures: Vec<Failure>,
    pub(crate) earlier: SortedMap<usize, Vec<String>>,
    /// The lines of the earlier summaries' sections of the user's words, in order.
    pub(crate) user_lines: Vec<String>,
    pub(crate) tools: SortedMap<String, (SortedMap<String, usize>, Option<String>)>,
    /// Successful tool operations as `(iteration, "kind:id")`.
    pub(crate) tool_successes: Vec<(u32, String)>,
    pub(crate) tool_count: usize,
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
    let start = text.find_text(&format!("{label}:\n"))? + label.len() + 2;
    let rest = &text[start..];
    let end = next
        .iter()
        .filter_map(|n| rest.find_text(&format!("\n{n}:\n")))
        .min()
        .unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// A value from a log as compact text: JSON compacted where it parses, else as written.
fn compact_value(text: &str) -> String {
    match crate::core::json::scan::document(text) {
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

/// The run whose id is `subject` (`exec_…`), if one is.
fn run_named<'a>(runs: &'a [Execution], subject: &str) -> Option<&'a Execution> {
    runs.iter().find(|run| run.id.as_deref() == Some(subject))
}

impl Digest {
    /// The task of the run `subject` names (`exec_…`), or `subject` itself.
    pub(crate) fn task_of_subject<'a>(&'a self, subject: &'a str) -> &'a str {
        run_named(&self.runs, subject).map_or(subject, |run| run.task.as_str())
    }

    /// The task `failure` failed (its run's, or its subject), and what it is as a summary
    /// names it: its subject and, for a run, its task's label (`exec_… readMetrics(shard_0035)`).
    pub(crate) fn failed<'a>(&'a self, failure: &'a Failure) -> (&'a str, String) {
        let task = self.task_of_subject(&failure.subject);
        let named = match task == failure.subject {
            true => failure.subject.clone(),
            false => format!("{} {}", failure.subject, label_of(task)),
        };
        (task, named)
    }

    /// Reads `selection` once.
    pub fn of(selection: &Selection) -> Self {
        let mut source = Digest {
            first: 1,
            last: selection.last,
            current: selection.current,
            query: None,
            reasoning: Vec::new(),
            runs: Vec::new(),
            failures: Vec::new(),
            earlier: SortedMap::new(),
            user_lines: Vec::new(),
            tools: SortedMap::new(),
            tool_successes: Vec::new(),
            tool_count: 0,
        };
        for (n, entry) in &selection.execution {
            let fields = entry.fields();
            let code = fields.code().into_owned();
            source.runs.push(Execution {
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
        sort_by_key(&mut source.runs, |run| run.iteration);
        for (n, entry) in &selection.tool_activity {
            source.read_tool(*n, entry);
        }
        source.resolve();
        source
    }

    pub(crate) fn read_reasoning(&mut self, n: u32, entry: &str) {
        if parse_summary_header(entry).is_some() {
            let mut section = None;
            let mut user = false;
            for line in entry.lines() {
                if line.trim() == USER_HEADING {
                    (section, user) = (None, true);
                } else if user {
                    self.user_lines.push(line.trim().to_owned());
                } else if let Some(i) = heading_section(line) {
                    section = Some(i);
                } else if let (Some(i), Some(point)) = (section, line.trim().strip_prefix("- ")) {
                    if i == 0 && self.query.is_none() {
                        if let Some(query) = point.strip_prefix("Question: ") {
                            self.query = Some(query.to_owned());
                            continue;
                        }
                    }
                    self.earlier.entry_or_default(i).push(point.to_owned());
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
                let Some((kind, rest)) = item.split_once_text("] ") else {
                    continue;
                };
                let (id, message) = rest.split_once_text(": ").unwrap_or((rest, ""));
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
    pub(crate) fn read_execution_entry(&mut self, n: u32, body: &str) {
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
        self.runs.push(Execution {
            iteration: n,
            id,
            task: task_of(&code, None),
            code,
            success: Some(true),
            result,
            error: None,
        });
    }

    pub(crate) fn read_tool(&mut self, n: u32, entry: &StoredToolActivity) {
        self.tool_count += 1;
        let fields = entry.fields();
        let outcome = fields.outcome();
        let kind = fields.kind().unwrap_or_else(|| "tool".into());
        let action = fields.action().unwrap_or_else(|| "use".into());
        if outcome == Some(false) {
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
        if outcome != Some(true) {
            return;
        }
        if let Some(id) = &entry.facts.id {
            self.tool_successes.push((n, format!("{kind}:{id}")));
        }
        let slot = self.tools.entry_or_default(kind.into_owned());
        *slot.0.entry_or_default(action.into_owned()) += 1;
        if let Some(details) = fields.details() {
            slot.1 = Some(details.into_owned());
        } else if let Some(id) = &entry.facts.id {
            slot.1 = Some(id.clone());
        }
    }

    /// Marks each failure a later iteration resolved: a run of the same task that succeeded,
    /// the same tool operation done successfully, an iteration that completed after an
    /// iteration error.
    pub(crate) fn resolve(&mut self) {
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
            let failed_run = run_named(&self.runs, &failure.subject);
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
        sort_by_key(&mut self.failures, |f| f.iteration);
    }
}
