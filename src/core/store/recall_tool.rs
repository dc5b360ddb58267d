//! Recall as a tool the app's model calls: its Gemini function declaration, and its answer,
//! the archived originals of a range of iterations or of the entries a search text finds,
//! as text the model reads, within a token budget and paginated. A bad range or an archive
//! that is gone is answered with a sentence, never an error the model cannot read.

use crate::core::error::StorageError;
use crate::core::json::record::json_record;
use crate::core::log::iteration::{parse_summary_header, Unit};
use crate::core::log::tokens::{estimate_tokens, head_within};
use crate::core::order::join::Joined;
use crate::core::order::text_search::TextSearch;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::steps::clearing::{placeholder_naming, CLEARED_MARK};
use crate::core::steps::item_search::MAX_ITEM_LEN;
use crate::core::steps::selection::{recalled_with, EntryIterations};
use crate::core::store::archives::StoredArchives;

/// The tool's name in the declaration.
pub const RECALL_TOOL_NAME: &str = "recall_archived_iterations";

/// The tokens an answer takes at most when the app sets none.
pub const DEFAULT_RECALL_TOKENS: usize = 4_000;

/// The widest range one call reads (a model's `to: 1e9` is cut to it).
const MAX_RANGE: u32 = 10_000;

/// The words of a query a search looks for; the rest are not read.
const MAX_QUERY_WORDS: usize = 32;

/// The characters of a query an answer quotes.
const MAX_QUOTED: usize = 80;

/// The function declaration (Gemini's `FunctionDeclaration`, in `tools[].functionDeclarations`).
pub const DECLARATION: &str = concat!(
    r#"{"name":"recall_archived_iterations","description":"Reads back the original reasoning, "#,
    r#"code executions and tool activity of iterations that were compacted into the summary. "#,
    r#"The summary's index lines name them: recall(a..b) means from a to b. Give from (and to) "#,
    r#"for a range of iterations, or query for words, ids, file names or numbers to find in "#,
    r#"every archived iteration (both to search within a range). A long answer ends with how "#,
    r#"to call again for the rest; what is longer than one answer comes in parts (part).","#,
    r#""parameters":{"type":"OBJECT","properties":{"from":"#,
    r#"{"type":"INTEGER","description":"The first iteration, from 1."},"to":{"type":"INTEGER","#,
    r#""description":"The last iteration (default: from)."},"query":{"type":"STRING","#,
    r#""description":"Words, an id, a file name or a number the entries must all contain "#,
    r#"(ASCII case ignored; the first 32 words)."},"part":{"type":"INTEGER","description":"#,
    r#""The part to read, from 1, of an answer that comes in parts (default 1)."}}}}"#
);

/// [`DECLARATION`] for logs whose iterations a model reads as `unit` (a message list's turns:
/// every "iteration" of its text a "turn"; the tool's name stays).
pub fn declaration(unit: Unit) -> String {
    match unit {
        Unit::Iteration => DECLARATION.to_owned(),
        Unit::Turn => DECLARATION.replace_text(" iteration", " turn", usize::MAX),
    }
}

/// [`declaration`] with its parameters in JSON Schema (`object`, `integer`, `string`), for the
/// tools of OpenAI (`function.parameters`), Anthropic (`input_schema`) and the AI SDK.
pub fn declaration_json_schema(unit: Unit) -> String {
    declaration(unit)
        .replace_text("\"OBJECT\"", "\"object\"", usize::MAX)
        .replace_text("\"INTEGER\"", "\"integer\"", usize::MAX)
        .replace_text("\"STRING\"", "\"string\"", usize::MAX)
}

/// The key of the arguments' schema in [`declaration_json_schema`].
const PARAMETERS_KEY: &str = "\"parameters\":";

/// The tool for each SDK: [`declaration_json_schema`] as the SDK's own tool type takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdkTool {
    /// The arguments alone, as JSON Schema.
    Parameters,
    /// OpenAI's `{ "type": "function", "function": { name, description, parameters } }`.
    OpenAi,
    /// Anthropic's `{ name, description, input_schema }`.
    Anthropic,
    /// The AI SDK's `tool()` options less `execute`: `{ description, inputSchema }`.
    AiSdk,
}

/// The recall tool of logs whose iterations a model reads as `unit`, as `sdk` takes it (JSON).
pub fn sdk_tool(unit: Unit, sdk: SdkTool) -> String {
    let declaration = declaration_json_schema(unit);
    match sdk {
        SdkTool::Parameters => {
            let at = declaration
                .find_text(PARAMETERS_KEY)
                .map_or(0, |at| at + PARAMETERS_KEY.len());
            declaration[at..declaration.len() - 1].to_owned()
        }
        SdkTool::OpenAi => {
            let mut tool = String::from("{\"type\":\"function\",\"function\":");
            tool.push_str(&declaration);
            tool.push('}');
            tool
        }
        SdkTool::Anthropic => declaration.replace_text(PARAMETERS_KEY, "\"input_schema\":", 1),
        SdkTool::AiSdk => declaration
            .replace_text(PARAMETERS_KEY, "\"inputSchema\":", 1)
            .replace_text("\"name\":\"recall_archived_iterations\",", "", 1),
    }
}

/// What the model asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecallArgs {
    /// The first iteration.
    pub from: Option<f64>,
    /// The last iteration.
    pub to: Option<f64>,
    /// Words every entry found must contain.
    pub query: Option<String>,
    /// The part to read of an answer longer than the budget.
    pub part: Option<f64>,
}

// Lenient where models are: numbers may come as `3.0`, absent or `null` fields are absent.
json_record! {
    read RecallArgs {
        from: "from" opt,
        to: "to" opt,
        query: "query" opt,
        part: "part" opt,
    }
}

/// One archived entry found: its iteration, its text (which log it is in named by its label).
pub(crate) struct Found {
    pub(crate) iteration: u32,
    /// `[iteration 3 · execution] ` and the entry as stored.
    pub(crate) text: String,
    /// Where the entry as stored starts in `text`.
    body: usize,
}

impl Found {
    /// The entry as stored.
    pub(crate) fn body(&self) -> &str {
        &self.text[self.body..]
    }
}

/// An iteration number from a model's argument: a whole number from 1, else `None`.
fn iteration_of(value: f64) -> Option<u32> {
    (value >= 1.0 && value.fract() == 0.0 && value <= f64::from(u32::MAX)).then_some(value as u32)
}

/// What a call asks for, its arguments read: a range, the words to find, the part.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallQuery {
    first: u32,
    last: u32,
    /// Whether the model gave a range (`from`).
    ranged: bool,
    words: Vec<String>,
    /// The query as an answer quotes it, when there is one.
    quoted: Option<String>,
    part: Option<u32>,
}

impl RecallQuery {
    /// `args` read for logs whose iterations a model reads as `unit`; a sentence for the
    /// model (within `max_tokens`) when they ask for nothing or for a range that is not one.
    pub fn read(args: &RecallArgs, unit: Unit, max_tokens: usize) -> Result<Self, String> {
        Self::of(args, unit).map_err(|sentence| head_within(&sentence, max_tokens).to_owned())
    }

    /// [`RecallQuery::read`], the sentence whole.
    fn of(args: &RecallArgs, unit: Unit) -> Result<Self, String> {
        let how = format!(
            "Call recall_archived_iterations with from ({} from 1, and to for a range) or with \
             query (words, ids or numbers to find).",
            unit.a_number()
        );
        let number = |name: &str| format!("{name} must be {} from 1. {how}", unit.a_number());
        let words = query_words(args.query.as_deref().unwrap_or(""));
        let from = match args.from.map(iteration_of) {
            Some(None) => return Err(number("from")),
            Some(Some(from)) => Some(from),
            None => None,
        };
        let to = match args.to.map(iteration_of) {
            Some(None) => return Err(number("to")),
            Some(to) => to,
            None => from,
        };
        let part = match args.part.map(iteration_of) {
            Some(None) => return Err(format!("part must be a whole number from 1. {how}")),
            Some(part) => part,
            None => None,
        };
        if from.is_none() && words.is_empty() {
            return Err(format!("Nothing was asked for. {how}"));
        }
        let first = from.unwrap_or(1);
        let last = to.unwrap_or(u32::MAX).min(first.saturating_add(MAX_RANGE));
        if first > last {
            return Err(format!("from ({first}) is after to ({last}). {how}"));
        }
        Ok(Self {
            first,
            last,
            ranged: from.is_some(),
            words,
            quoted: args
                .query
                .as_deref()
                .filter(|q| !q.trim().is_empty())
                .map(quoted),
            part,
        })
    }

    /// The search of the archives this call needs.
    pub fn search(&self) -> Search {
        Search::new(self.first, self.last, self.words.clone())
    }
}

/// A search of the archives for the entries of iterations `first..=last` that contain every
/// word of `words`, made an archive at a time ([`StoredArchives::search_step`]), so that a
/// caller sharing the page can let it run between two steps.
#[derive(Default)]
pub struct Search {
    first: u32,
    last: u32,
    words: Vec<String>,
    /// The archives still to read, the next one last; `None` before the first step.
    left: Option<Vec<String>>,
    found: Vec<Found>,
    damaged: Vec<String>,
}

/// What one step of a [`Search`] read.
pub struct SearchStep {
    found: Vec<Found>,
    damaged: Vec<String>,
    left: Vec<String>,
}

impl Search {
    fn new(first: u32, last: u32, words: Vec<String>) -> Self {
        Self {
            first,
            last,
            words,
            ..Self::default()
        }
    }

    /// Adds what `step` read; whether the search is over. (A step reads and never writes, so
    /// one that lacked a text can be run again.)
    pub fn take(&mut self, step: SearchStep) -> bool {
        self.found.extend(step.found);
        self.damaged.extend(step.damaged);
        let done = step.left.is_empty();
        self.left = Some(step.left);
        if done {
            // Stable: within an iteration the logs keep their order.
            crate::core::order::sort::sort_by_key(&mut self.found, |entry| entry.iteration);
        }
        done
    }
}

impl<S: KeyValueStore, C: Clock> StoredArchives<'_, S, C> {
    /// The tool's answer to `args`, at most `max_tokens` tokens by the package's estimate.
    pub fn recall_text(
        &self,
        args: &RecallArgs,
        max_tokens: usize,
    ) -> Result<String, StorageError> {
        let query = match RecallQuery::read(args, self.logs.unit(), max_tokens) {
            Ok(query) => query,
            Err(sentence) => return Ok(sentence),
        };
        let search = self.search_all(query.search())?;
        self.recall_answer(&query, &search, max_tokens)
    }

    /// The answer to `query` from its `search`, over, at most `max_tokens` tokens.
    pub fn recall_answer(
        &self,
        query: &RecallQuery,
        search: &Search,
        max_tokens: usize,
    ) -> Result<String, StorageError> {
        let answer = self.answer(query, search, max_tokens)?;
        Ok(head_within(&answer, max_tokens).to_owned())
    }

    /// The tool's answer, its entries within `max_tokens` tokens.
    fn answer(
        &self,
        query: &RecallQuery,
        search: &Search,
        max_tokens: usize,
    ) -> Result<String, StorageError> {
        let (found, damaged) = (&search.found, &search.damaged);
        // A damaged archive does not stop the search over the others; the answer names it
        // first, where no cut to the budget takes it.
        let left_out = match damaged.is_empty() {
            true => String::new(),
            false => format!(
                "Left out: {} damaged (its stored text is not an archive).\n",
                damaged.joined(", ")
            ),
        };
        if found.is_empty() {
            let none = self.nothing_found(query)?;
            return Ok(left_out + &none);
        }
        let again = |next: u32| match query.words.is_empty() {
            false => format!("from: {next} and the same query"),
            true => format!("from: {next}, to: {}", query.last),
        };
        // The first iteration found, in parts when it alone is over the budget (or a part is
        // asked for); the rest is one call away, never cut into parts with it.
        let alone = found
            .iter()
            .take_while(|entry| entry.iteration == found[0].iteration)
            .count();
        let first_tokens: usize = found[..alone]
            .iter()
            .map(|entry| estimate_tokens(&entry.text))
            .sum();
        if query.part.is_some() || first_tokens > max_tokens {
            let text: Vec<&str> = found[..alone].iter().map(|e| e.text.as_str()).collect();
            let rest = found.get(alone).map(|next| {
                let more = found.len() - alone;
                format!(
                    "… {more} more entries after it: call again with {}.",
                    again(next.iteration)
                )
            });
            let part = query.part.unwrap_or(1);
            return Ok(left_out + &part_of(&text.joined("\n"), max_tokens, part, rest));
        }
        let paged = page(found, max_tokens, self.logs.unit().word(), again);
        Ok(left_out + &paged)
    }

    /// The archived entries of iterations `first..=last` that contain every word of `query`,
    /// in iteration order (reasoning, executions, tool activity within one), each as text; and
    /// the keys of the archives left out because their stored text is not an archive.
    pub(crate) fn entries_in(
        &self,
        first: u32,
        last: u32,
        query: &[String],
    ) -> Result<(Vec<Found>, Vec<String>), StorageError> {
        let search = self.search_all(Search::new(first, last, query.to_vec()))?;
        Ok((search.found, search.damaged))
    }

    /// `search` made to its end in one go.
    fn search_all(&self, mut search: Search) -> Result<Search, StorageError> {
        while !search.take(self.search_step(&search, f64::INFINITY)?) {}
        Ok(search)
    }

    /// The next step of `search`: the archives it has still to read, one after another, until
    /// one has taken the step past `slice_ms`.
    pub fn search_step(&self, search: &Search, slice_ms: f64) -> Result<SearchStep, StorageError> {
        let until = self.now() + slice_ms;
        let (first, last) = (search.first, search.last);
        let (heads, _) = self.heads(None)?;
        // A placeholder whose clearing's archive is stored: its original is found there.
        let named: Vec<String> = heads.iter().map(|h| placeholder_naming(&h.key)).collect();
        let followed = |text: &str| {
            text.contains_text(CLEARED_MARK) && named.iter().any(|named| text.contains_text(named))
        };
        let (mut left, mut damaged) = match &search.left {
            Some(left) => (left.clone(), Vec::new()),
            None => (
                heads
                    .iter()
                    .rev()
                    .filter(|head| head.iterations.iter().any(|n| (first..=last).contains(n)))
                    .map(|head| head.key.clone())
                    .collect(),
                self.unreadable()?,
            ),
        };
        let mut found = Vec::new();
        while let Some(key) = left.pop() {
            let archive = match self.read_stored(&key) {
                Ok(Some(archive)) => archive,
                Ok(None) => continue,
                Err(StorageError::Corrupt { .. }) => {
                    damaged.push(key);
                    continue;
                }
                Err(other) => return Err(other),
            };
            let numbers = archive
                .entry_iterations
                .clone()
                .unwrap_or_else(|| EntryIterations::placed(&archive.data));
            let data = &archive.data;
            let mut keep = |placed: u32, log: &'static str, text: &str| {
                let iteration = recalled_with(placed);
                let lower = text.to_ascii_lowercase();
                if (first..=last).contains(&iteration)
                    && search.words.iter().all(|w| lower.contains_text(w))
                    && !followed(text)
                {
                    let label = format!("[{} {iteration} · {log}] ", self.logs.unit().word());
                    found.push(Found {
                        iteration,
                        body: label.len(),
                        text: label + text,
                    });
                }
            };
            for (entry, n) in data.reasoning_log.iter().zip(&numbers.reasoning_log) {
                if parse_summary_header(entry).is_none() {
                    keep(*n, "reasoning", entry);
                }
            }
            for (entry, n) in data.execution_log.iter().zip(&numbers.execution_log) {
                keep(*n, "execution", entry.json());
            }
            for (entry, n) in data
                .tool_activity_log
                .iter()
                .zip(&numbers.tool_activity_log)
            {
                keep(*n, "tool activity", entry.json());
            }
            if self.now() >= until {
                break;
            }
        }
        Ok(SearchStep {
            found,
            damaged,
            left,
        })
    }

    /// The sentence for a call that found nothing: the iterations are live, their archive is
    /// gone, or no archived entry holds the words.
    fn nothing_found(&self, query: &RecallQuery) -> Result<String, StorageError> {
        let (first, last) = (query.first, query.last);
        let unit = self.logs.unit().word();
        let range = if first == last {
            format!("{unit} {first}")
        } else {
            format!("{unit}s {first}–{last}")
        };
        if let Some(quoted) = &query.quoted {
            let within = if query.ranged {
                format!(" in {range}")
            } else {
                String::new()
            };
            return Ok(format!(
                "No archived entry{within} contains \"{quoted}\" (every word, ASCII case ignored)."
            ));
        }
        match self.missing_for(first) {
            Ok(Some(key)) => {
                return Ok(format!(
                    "The archive that held {range} ({key}) is no longer stored: it expired, \
                     was deleted or was evicted by the browser, so its originals cannot be read \
                     back."
                ))
            }
            Ok(None) => {}
            Err(StorageError::Corrupt { key, .. }) => {
                return Ok(format!(
                    "The archive that held {range} ({key}) is damaged, so its originals cannot \
                     be read back."
                ))
            }
            Err(other) => return Err(other),
        }
        Ok(format!(
            "No archive holds {range}: it was never compacted (it is in the live logs) or does \
             not exist yet."
        ))
    }
}

/// The words of a query: ASCII lower case, each once, the first [`MAX_QUERY_WORDS`], each cut
/// to [`MAX_ITEM_LEN`] bytes, so that a search costs the same for a megabyte of query as for a
/// line of it.
fn query_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in query.split_whitespace() {
        let mut end = word.len().min(MAX_ITEM_LEN);
        while !word.is_char_boundary(end) {
            end -= 1;
        }
        let word = word[..end].to_ascii_lowercase();
        if !words.contains(&word) {
            words.push(word);
            if words.len() == MAX_QUERY_WORDS {
                break;
            }
        }
    }
    words
}

/// A query as an answer quotes it: at most [`MAX_QUOTED`] characters, marked when cut.
fn quoted(query: &str) -> String {
    match query.char_indices().nth(MAX_QUOTED) {
        Some((at, _)) => format!("{}…", &query[..at]),
        None => query.to_owned(),
    }
}

/// As many whole iterations of `found` as `max_tokens` holds (the first one cut to fit when it
/// alone is larger), then how to ask for the rest (`again` gives the arguments from an
/// iteration on).
fn page(found: &[Found], max_tokens: usize, unit: &str, again: impl Fn(u32) -> String) -> String {
    // Room for the lines that end a page, at their longest.
    let end_lines = format!(
        "… {n} more entries of {unit} {n} do not fit.\n… {n} more entries: call again with {}.",
        again(u32::MAX),
        n = u32::MAX
    );
    let max_tokens = max_tokens.saturating_sub(estimate_tokens(&end_lines) + 2);
    let mut out = String::new();
    let mut used = 0usize;
    // Where the iteration being written began: the page ends there when it does not fit.
    let (mut iteration_start, mut iteration) = (0usize, 0u32);
    for (at, entry) in found.iter().enumerate() {
        if entry.iteration != iteration {
            iteration_start = out.len();
            iteration = entry.iteration;
        }
        let text = clip(&entry.text, max_tokens);
        let tokens = estimate_tokens(&text);
        if used.saturating_add(tokens) > max_tokens && at > 0 {
            // Whole iterations only, unless the first one alone is over the budget.
            let (next, rest) = if iteration_start > 0 {
                out.truncate(iteration_start);
                (
                    iteration,
                    found.iter().filter(|e| e.iteration >= iteration).count(),
                )
            } else {
                let next = iteration.saturating_add(1);
                let cut = found[at..]
                    .iter()
                    .filter(|e| e.iteration == iteration)
                    .count();
                out.push_str(&format!(
                    "… {cut} more entries of {unit} {iteration} do not fit.\n"
                ));
                (next, found.iter().filter(|e| e.iteration >= next).count())
            };
            if rest > 0 {
                out.push_str(&format!(
                    "… {rest} more {}: call again with {}.",
                    if rest == 1 { "entry" } else { "entries" },
                    again(next)
                ));
            }
            return out.trim_end().to_owned();
        }
        used = used.saturating_add(tokens);
        out.push_str(&text);
        out.push('\n');
    }
    out.trim_end().to_owned()
}

/// Part `part` (from 1) of `text` cut into parts of at most `max_tokens` tokens each, with
/// how to ask for the next: an answer longer than one reply, whole across its parts; the last
/// part ends with `rest` (how to read on past `text`), when given.
fn part_of(text: &str, max_tokens: usize, part: u32, rest: Option<String>) -> String {
    const NEXT: &str = "\n… call again with the same arguments and part: 4294967295 for the rest.";
    let last_line = rest.as_deref().map_or(0, |rest| estimate_tokens(rest) + 1);
    let budget = max_tokens
        .saturating_sub(
            estimate_tokens(NEXT).max(last_line)
                + estimate_tokens("Part 4294967295 of 4294967295:\n"),
        )
        .max(1);
    let mut parts: Vec<&str> = Vec::new();
    let mut left = text;
    while !left.is_empty() {
        let mut head = head_within(left, budget);
        if head.is_empty() {
            let one = left.chars().next().map_or(left.len(), char::len_utf8);
            head = &left[..one];
        }
        parts.push(head);
        left = &left[head.len()..];
    }
    let count = parts.len();
    let Some(body) = parts.get(part as usize - 1) else {
        return format!("This answer has {count} parts: part {part} does not exist.");
    };
    let mut out = format!("Part {part} of {count}:\n{body}");
    if (part as usize) < count {
        out.push_str(&format!(
            "\n… call again with the same arguments and part: {} for the rest.",
            part + 1
        ));
    } else if let Some(rest) = rest {
        out.push('\n');
        out.push_str(&rest);
    }
    out
}

/// `text` cut to `max_tokens` tokens, saying so.
fn clip(text: &str, max_tokens: usize) -> String {
    const CUT: &str = " … (cut: the entry is longer than the answer's budget)";
    if estimate_tokens(text) <= max_tokens {
        return text.to_owned();
    }
    let head = head_within(text, max_tokens.saturating_sub(estimate_tokens(CUT) + 1));
    format!("{head}{CUT}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_sdks_tool_holds_the_json_schema_declarations_name_description_and_parameters() {
        use crate::core::json::scan::{document, field};
        let schema = declaration_json_schema(Unit::Turn);
        let schema = document(&schema).unwrap();
        let parameters = sdk_tool(Unit::Turn, SdkTool::Parameters);
        assert_eq!(
            Some(document(&parameters).unwrap()),
            field(schema, "parameters")
        );
        let openai = sdk_tool(Unit::Turn, SdkTool::OpenAi);
        let openai = document(&openai).unwrap();
        assert_eq!(field(openai, "type"), Some("\"function\""));
        assert_eq!(field(openai, "function"), Some(schema));
        let anthropic = sdk_tool(Unit::Turn, SdkTool::Anthropic);
        let anthropic = document(&anthropic).unwrap();
        let ai_sdk = sdk_tool(Unit::Turn, SdkTool::AiSdk);
        let ai_sdk = document(&ai_sdk).unwrap();
        for (tool, parameters_key) in [(anthropic, "input_schema"), (ai_sdk, "inputSchema")] {
            assert_eq!(field(tool, parameters_key), field(schema, "parameters"));
            assert_eq!(field(tool, "description"), field(schema, "description"));
            assert_eq!(field(tool, "parameters"), None);
        }
        assert_eq!(
            field(anthropic, "name"),
            Some("\"recall_archived_iterations\"")
        );
        assert_eq!(field(ai_sdk, "name"), None);
    }

    #[test]
    fn the_json_schema_declaration_is_the_gemini_one_with_json_schema_types() {
        let schema = declaration_json_schema(Unit::Iteration);
        assert_eq!(schema.len(), DECLARATION.len());
        let turns = declaration(Unit::Turn);
        assert!(turns.starts_with(r#"{"name":"recall_archived_iterations""#));
        assert!(
            turns.contains_text("The first turn, from 1.") && !turns.contains_text(" iteration")
        );
        assert!(schema.contains_text(
            r#""parameters":{"type":"object","properties":{"from":{"type":"integer""#
        ));
        for gemini in ["OBJECT", "INTEGER", "STRING"] {
            assert!(
                !schema.contains_text(&format!("\"{gemini}\"")),
                "{gemini} left"
            );
        }
        assert!(
            schema.contains_text(r#""query":{"type":"string""#)
                && schema.contains_text(r#""part":{"type":"integer""#)
        );
    }
}
