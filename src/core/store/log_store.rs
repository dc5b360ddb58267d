//! The three logs of a reasoning loop in a key-value store: appends, iterations, reads.

use std::rc::Rc;

use crate::core::error::StorageError;
use crate::core::json::read::FromJson;
use crate::core::json::scan::{document, field};
use crate::core::json::write::write_number;
use crate::core::log::entries::{
    js_number, normalise_error, ExecutionInput, NewExecution, NewToolActivity, StoredExecution,
    StoredReasoning, StoredToolActivity, ToolActivityInput,
};
use crate::core::log::ids::IdGenerator;
use crate::core::log::iteration::{
    iteration_header, named_iteration, parse_summary_header, user_wrote, Unit,
};
use crate::core::log::reasoning_entry::ReasoningEntry;
use crate::core::log::snapshot::{with_placed_iterations, LogSnapshot};
use crate::core::log::stored_entry::{join_entries, join_items, parse_entries, Stored};
use crate::core::model::facts::{Pin, PinTextError};
use crate::core::model::set_aside::SetAside;
use crate::core::ports::clock::{iso_timestamp, Clock};
use crate::core::ports::storage::KeyValueStore;
use crate::core::store::keys::StorageKeys;
use crate::core::store::page::PageState;
use crate::core::store::raw_logs::{RawLogs, ReadLogs};
use crate::core::store::stored_json::{read_value, set_aside, write_json};
use crate::core::store::summary_cache::SummaryCache;

/// How long a stored "iteration running" mark holds compactions back without being renewed.
pub const RUNNING_MARK_MS: f64 = 10.0 * 60_000.0;

/// The reasoning, execution and tool-activity logs of one app, stored under [`StorageKeys`].
///
/// Every read goes to the store, so entries written by other code or another tab are seen.
/// Every write replaces one key at once; a failed write leaves the key as it was.
pub struct LogStore<S, C> {
    store: S,
    clock: C,
    keys: StorageKeys,
    ids: IdGenerator,
    running: bool,
    /// Iterations this page finished: a compaction in the background swaps in at a boundary.
    finished_here: u32,
    page: Rc<PageState>,
    unit: Unit,
    /// The first iteration no summary may fold (see [`LogStore::set_verbatim_from`]).
    verbatim_from: Option<u32>,
}

impl<S: KeyValueStore, C: Clock> LogStore<S, C> {
    /// A store over `store` with keys under `keys`; `id_seed` makes this instance's ids unique.
    pub fn new(store: S, clock: C, keys: StorageKeys, id_seed: u64) -> Self {
        Self {
            store,
            clock,
            keys,
            ids: IdGenerator::new(id_seed),
            running: false,
            finished_here: 0,
            page: Rc::default(),
            unit: Unit::Iteration,
            verbatim_from: None,
        }
    }

    /// These logs with their iterations called `unit` in what a model reads of them (a message
    /// list's turns).
    pub fn with_unit(mut self, unit: Unit) -> Self {
        self.unit = unit;
        self
    }

    /// What a model reads an iteration of these logs called.
    pub fn unit(&self) -> Unit {
        self.unit
    }

    /// The keys this store uses.
    pub fn keys(&self) -> &StorageKeys {
        &self.keys
    }

    /// The underlying key-value store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The summary cache kept beside these logs, under their prefix.
    pub fn summary_cache(&self) -> SummaryCache<'_, S> {
        SummaryCache::new(&self.store, self.keys.summary_cache())
    }

    /// What this page knows of the compactions over these logs, shared by every compactor and
    /// archive shelf built over them.
    pub fn page(&self) -> &Rc<PageState> {
        &self.page
    }

    /// The clock stamping entries.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Appends the header of the next iteration, marks it running and returns its number.
    pub fn start_iteration(&mut self) -> Result<u32, StorageError> {
        let current = self.current_iteration()?;
        let next = current
            .checked_add(1)
            .ok_or_else(|| StorageError::Corrupt {
                key: self.keys.reasoning(),
                reason: format!(
                    "the logs name iteration {current}, after which none can be numbered"
                ),
            })?;
        self.push_reasoning(&iteration_header(next))?;
        self.mark_iteration_running();
        Ok(next)
    }

    /// Marks an iteration running without writing a header, for apps that write their own;
    /// [`LogStore::finish_iteration`] ends it. The mark is stored, so compactions in other tabs
    /// wait too; one older than [`RUNNING_MARK_MS`] (a tab closed mid-iteration) no longer
    /// holds them.
    pub fn mark_iteration_running(&mut self) {
        self.running = true;
        let mut mark = String::from("{\"since\":");
        write_number(&mut mark, self.clock.now_ms().max(0.0).floor());
        mark.push('}');
        // Where storage refuses the mark, this tab still knows (other tabs cannot).
        let _ = self.store.set(&self.keys.iteration_running(), &mark);
    }

    /// Keeps `iteration` and every later one out of a summary, where a front knows why (a
    /// message list's turn with a call still awaiting its result: folded, its result would
    /// answer no call); `None` lifts it. Held by this page's store only, for the logs it wrote.
    pub fn set_verbatim_from(&mut self, iteration: Option<u32>) {
        self.verbatim_from = iteration;
    }

    /// The first iteration no summary may fold, if a front set one.
    pub fn verbatim_from(&self) -> Option<u32> {
        self.verbatim_from
    }

    /// Marks the running iteration finished.
    pub fn finish_iteration(&mut self) {
        self.running = false;
        self.finished_here = self.finished_here.wrapping_add(1);
        let _ = self.store.remove(&self.keys.iteration_running());
    }

    /// Whether an iteration was started (in this tab or another) and not yet finished.
    pub fn iteration_running(&self) -> bool {
        let stored = self
            .store
            .get(&self.keys.iteration_running())
            .ok()
            .flatten();
        let fresh = stored
            .and_then(|text| f64::from_json(field(document(&text).ok()?, "since")?).ok())
            .is_some_and(|since| self.clock.now_ms() - since < RUNNING_MARK_MS);
        self.running || fresh
    }

    /// Whether this page started the running iteration (and has not finished it): a compaction
    /// this page's loop asks for in the middle of it must not wait for it.
    pub fn iteration_running_here(&self) -> bool {
        self.running
    }

    /// How many times this page finished an iteration (wrapping): a compaction in the
    /// background waits for the next boundary by it, even when the loop starts the next
    /// iteration in the same task.
    pub fn iterations_finished_here(&self) -> u32 {
        self.finished_here
    }

    /// The highest iteration any log names or implies, 0 when all are empty.
    pub fn current_iteration(&self) -> Result<u32, StorageError> {
        Ok(self.raw_logs()?.items(&self.keys)?.current_iteration())
    }

    /// Appends reasoning text to the current iteration. It never starts an iteration or poses as
    /// a summary: text whose first line is an iteration header or marker
    /// (`=== ITERATION 7 ===`, a model echoing one) or a summary header is stored quoted (`> `).
    pub fn append_reasoning(&mut self, text: &str) -> Result<(), StorageError> {
        if named_iteration(text).is_some() || parse_summary_header(text).is_some() {
            return self.push_reasoning(&format!("> {}", text.trim_start()));
        }
        self.push_reasoning(text)
    }

    /// Appends a user's message to the current iteration as the user's words: each of its lines
    /// after `The user wrote: ` ([`user_wrote`]), which the summary keeps as the user's and never
    /// as tool output's.
    pub fn append_user_message(&mut self, text: &str) -> Result<(), StorageError> {
        self.push_reasoning(&user_wrote(text))
    }

    fn push_reasoning(&mut self, text: &str) -> Result<(), StorageError> {
        let key = self.keys.reasoning();
        let mut log = self.stored_reasoning()?;
        log.push(Stored::encode(text));
        self.append_to(&key, &join_entries(&log))
    }

    /// Writes `text`, a log with one entry more, under `key`; where storage is full, the
    /// summary cache (the package's own, a saving only) gives its room first.
    fn append_to(&self, key: &str, text: &str) -> Result<(), StorageError> {
        match self.store.set(key, text) {
            Err(StorageError::Quota { .. }) if self.summary_cache().give_room() => {
                self.store.set(key, text)
            }
            written => written,
        }
    }

    /// Appends an execution, stamped with id, timestamp and the current iteration; returns
    /// the stored entry.
    pub fn append_execution(
        &mut self,
        input: ExecutionInput,
    ) -> Result<StoredExecution, StorageError> {
        // One read serves both the iteration number and the log appended to; the entries
        // stay slices of the stored text, written back as they were.
        let raw = self.raw_logs()?;
        let logs = raw.items(&self.keys)?;
        let now = self.clock.now_ms();
        let key = self.keys.execution();
        let entry: StoredExecution = Stored::encode(&NewExecution {
            id: self.ids.next("exec", now),
            timestamp: iso_timestamp(now),
            iteration: logs.current_iteration(),
            success: input.success,
            code: input.code,
            result: input.result,
            error: normalise_error(input.error),
            execution_time: js_number(input.execution_time.unwrap_or(0.0)),
            source: input.source.unwrap_or_else(|| "auto".to_owned()),
            metadata: input.metadata,
            extra: input.extra,
        });
        let appended = join_items(logs.execution.iter().copied().chain([entry.json()]));
        self.append_to(&key, &appended)?;
        Ok(entry)
    }

    /// Appends a tool operation, stamped with id, timestamp and the current iteration; returns
    /// the stored entry.
    pub fn append_tool_activity(
        &mut self,
        input: ToolActivityInput,
    ) -> Result<StoredToolActivity, StorageError> {
        let raw = self.raw_logs()?;
        let logs = raw.items(&self.keys)?;
        let now = self.clock.now_ms();
        let key = self.keys.tool_activity();
        let entry: StoredToolActivity = Stored::encode(&NewToolActivity {
            id: self.ids.next("tool", now),
            timestamp: iso_timestamp(now),
            iteration: logs.current_iteration(),
            kind: input.kind,
            action: input.action,
            status: input.status,
            details: input.details,
            extra: input.extra,
        });
        let appended = join_items(logs.tool_activity.iter().copied().chain([entry.json()]));
        self.append_to(&key, &appended)?;
        Ok(entry)
    }

    /// The reasoning log's entries, as stored (the other logs are not read).
    pub(crate) fn stored_reasoning(&self) -> Result<Vec<StoredReasoning>, StorageError> {
        let key = self.keys.reasoning();
        parse_entries(&key, self.store.get(&key)?.as_deref())
    }

    /// The reasoning log: the text of every entry (a lone surrogate reads as U+FFFD).
    pub fn reasoning_log(&self) -> Result<Vec<String>, StorageError> {
        let log = self.stored_reasoning()?;
        Ok(log.into_iter().map(|entry| entry.view().clone()).collect())
    }

    /// The reasoning log, every entry described: an iteration's header, a summary (with the
    /// iterations it replaced and its archive) or text (with the iteration it belongs to).
    pub fn reasoning_entries(&self) -> Result<Vec<ReasoningEntry>, StorageError> {
        let logs = self.snapshot()?;
        let placed = logs.placed_iterations();
        let described = logs.reasoning.iter().zip(&placed.entries.reasoning);
        Ok(described
            .map(|(entry, iteration)| ReasoningEntry::describe(entry.view(), *iteration))
            .collect())
    }

    /// The latest compacted summary (if any) plus the last `k` reasoning entries after it: what
    /// an app's prompt should hold of the reasoning log, so the summary never drops out of it.
    pub fn recent_reasoning(&self, k: usize) -> Result<Vec<StoredReasoning>, StorageError> {
        let log = self.stored_reasoning()?;
        let summary_at = log
            .iter()
            .rposition(|entry| parse_summary_header(entry).is_some());
        let after = summary_at.map_or(0, |i| i + 1);
        let start = log.len().saturating_sub(k).max(after);
        let mut recent: Vec<StoredReasoning> =
            summary_at.map(|i| log[i].clone()).into_iter().collect();
        recent.extend_from_slice(&log[start..]);
        Ok(recent)
    }

    /// The reasoning log as a JSON array of the stored entries.
    pub fn reasoning_log_json(&self) -> Result<String, StorageError> {
        let log = self.stored_reasoning()?;
        Ok(join_entries(&log))
    }

    /// The execution log as a JSON array of the stored entries, each given its placed
    /// `iteration` where it has none of its own.
    pub fn execution_log_json(&self) -> Result<String, StorageError> {
        let logs = self.snapshot()?;
        let placed = logs.placed_iterations();
        Ok(with_placed_iterations(
            &logs.execution,
            &placed.entries.execution,
        ))
    }

    /// The tool-activity log as a JSON array of the stored entries, each given its placed
    /// `iteration` where it has none of its own.
    pub fn tool_activity_log_json(&self) -> Result<String, StorageError> {
        let logs = self.snapshot()?;
        let placed = logs.placed_iterations();
        Ok(with_placed_iterations(
            &logs.tool_activity,
            &placed.entries.tool_activity,
        ))
    }

    /// All three logs exactly as stored.
    pub fn snapshot(&self) -> Result<LogSnapshot, StorageError> {
        self.raw_logs()?.parse(&self.keys)
    }

    /// The three stored texts and the entries they hold.
    pub fn read(&self) -> Result<ReadLogs, StorageError> {
        let raw = self.raw_logs()?;
        let parsed = raw.parse(&self.keys)?;
        Ok(ReadLogs { raw, parsed })
    }

    /// The three stored texts.
    pub(crate) fn raw_logs(&self) -> Result<RawLogs, StorageError> {
        Ok(RawLogs {
            reasoning: self.store.get(&self.keys.reasoning())?,
            execution: self.store.get(&self.keys.execution())?,
            tool_activity: self.store.get(&self.keys.tool_activity())?,
        })
    }

    /// Writes the texts of `logs` that differ from `stored` (the texts last read), one key at
    /// a time: execution, tool activity, then reasoning (after a compaction the first two only
    /// shrink, so a full store fails on the last, if at all). An absent text removes its key.
    pub(crate) fn write_changed(
        &self,
        logs: &RawLogs,
        stored: &RawLogs,
    ) -> Result<(), StorageError> {
        for (key, text, old) in [
            (self.keys.execution(), &logs.execution, &stored.execution),
            (
                self.keys.tool_activity(),
                &logs.tool_activity,
                &stored.tool_activity,
            ),
            (self.keys.reasoning(), &logs.reasoning, &stored.reasoning),
        ] {
            if text == old {
                continue;
            }
            match text {
                Some(text) => self.store.set(&key, text)?,
                None => self.store.remove(&key)?,
            }
        }
        Ok(())
    }

    /// Estimated tokens of all three logs.
    pub fn estimate_tokens(&self) -> Result<usize, StorageError> {
        self.raw_logs()?.estimate_tokens(&self.keys)
    }

    /// Pins `text`: every later summary must keep it until [`LogStore::unpin`]. Returns its id.
    pub fn pin(&mut self, text: &str) -> Result<String, PinError> {
        Pin::check_text(text).map_err(PinError::Text)?;
        let mut pins = self.pins()?;
        let id = self.ids.next("pin", self.clock.now_ms());
        pins.push(Pin {
            id: id.clone(),
            text: text.to_owned(),
        });
        write_json(&self.store, &self.keys.pins(), &pins)?;
        Ok(id)
    }

    /// Unpins the fact `id`; returns whether it was pinned.
    pub fn unpin(&mut self, id: &str) -> Result<bool, StorageError> {
        let mut pins = self.pins()?;
        let before = pins.len();
        pins.retain(|pin| pin.id != id);
        if pins.len() == before {
            return Ok(false);
        }
        if pins.is_empty() {
            self.store.remove(&self.keys.pins())?;
        } else {
            write_json(&self.store, &self.keys.pins(), &pins)?;
        }
        Ok(true)
    }

    /// Sets the pins aside where they do not read (kept under `<key>_corrupt`): a damaged key
    /// would stop every compaction until removed by hand. What it did, if anything.
    pub fn settle_pins(&self) -> Result<Option<SetAside>, StorageError> {
        match self.pins() {
            Err(StorageError::Corrupt { reason, .. }) => {
                set_aside(&self.store, &self.keys.pins(), reason).map(Some)
            }
            other => other.map(|_| None),
        }
    }

    /// The pinned facts, oldest first.
    pub fn pins(&self) -> Result<Vec<Pin>, StorageError> {
        Ok(read_value(&self.store, &self.keys.pins())?.unwrap_or_default())
    }

    /// The pinned facts as the rules and a summary see them: a pins key that does not read is
    /// none (a compaction sets it aside first, [`LogStore::settle_pins`]; a question of the loop
    /// answers as that compaction would, never throwing over it).
    pub fn pins_in_force(&self) -> Result<Vec<Pin>, StorageError> {
        match self.pins() {
            Err(StorageError::Corrupt { .. }) => Ok(Vec::new()),
            other => other,
        }
    }

    /// Sets the task every later summary keeps as its goal (in place of a `SESSION START`
    /// query or the first words of the logs); an empty text unsets it.
    pub fn set_goal(&mut self, text: &str) -> Result<(), StorageError> {
        match text.trim() {
            "" => self.store.remove(&self.keys.goal()),
            goal => write_json(&self.store, &self.keys.goal(), goal),
        }
    }

    /// The task the app set, if it set one.
    pub fn goal(&self) -> Result<Option<String>, StorageError> {
        read_value(&self.store, &self.keys.goal())
    }

    /// Writes the logs whole, as a front that holds the app's state elsewhere does before each
    /// question: the reasoning log's and the tool log's JSON texts, no execution log.
    pub fn replace(&self, reasoning: &str, tool_activity: &str) -> Result<(), StorageError> {
        self.store.set(&self.keys.reasoning(), reasoning)?;
        self.store.remove(&self.keys.execution())?;
        self.store.set(&self.keys.tool_activity(), tool_activity)
    }

    /// Removes the three logs and the goal (archives and metrics stay; the pins too unless
    /// `pins`) and ends any running iteration.
    pub fn clear(&mut self, pins: bool) -> Result<(), StorageError> {
        self.store.remove(&self.keys.reasoning())?;
        self.store.remove(&self.keys.execution())?;
        self.store.remove(&self.keys.tool_activity())?;
        self.store.remove(&self.keys.goal())?;
        if pins {
            self.store.remove(&self.keys.pins())?;
        }
        self.finish_iteration();
        Ok(())
    }
}

/// Why `pin()` pinned nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum PinError {
    /// The text is empty or too long.
    Text(PinTextError),
    /// The pins could not be read or written.
    Storage(StorageError),
}

impl From<StorageError> for PinError {
    fn from(err: StorageError) -> Self {
        PinError::Storage(err)
    }
}

impl std::fmt::Display for PinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PinError::Text(err) => write!(f, "pin(text) {err}"),
            PinError::Storage(err) => err.fmt(f),
        }
    }
}

impl std::error::Error for PinError {}
