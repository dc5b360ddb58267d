//! The three logs of a reasoning loop in a key-value store: appends, iterations, reads.

use super::clock::{iso_timestamp, Clock};
use super::entries::{
    js_number, normalise_error, ExecutionEntry, ExecutionInput, ToolActivityEntry,
    ToolActivityInput,
};
use super::error::StorageError;
use super::ids::IdGenerator;
use super::iteration::{
    highest_reasoning_iteration, infer_iterations, iteration_header, reasoning_iterations,
};
use super::journal::{text_hash, LogHashes};
use super::keys::StorageKeys;
use super::storage::KeyValueStore;
use super::stored_json::{encode, parse_list, read_list, write_json};
use super::tokens::estimate_tokens;

/// All three logs exactly as stored at one moment (iterations not filled in).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LogSnapshot {
    /// Reasoning entries, headers included.
    pub reasoning: Vec<String>,
    /// Execution entries as stored.
    pub execution: Vec<ExecutionEntry>,
    /// Tool entries as stored.
    pub tool_activity: Vec<ToolActivityEntry>,
}

/// The three logs as the exact texts stored (`None` for an absent key).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawLogs {
    /// `<prefix>reasoning_log`.
    pub reasoning: Option<String>,
    /// `<prefix>execution_log`.
    pub execution: Option<String>,
    /// `<prefix>tool_activity_log`.
    pub tool_activity: Option<String>,
}

impl RawLogs {
    /// The texts `logs` is stored as under `keys`.
    pub fn encode(logs: &LogSnapshot, keys: &StorageKeys) -> Result<RawLogs, StorageError> {
        Ok(RawLogs {
            reasoning: Some(encode(&keys.reasoning(), &logs.reasoning)?),
            execution: Some(encode(&keys.execution(), &logs.execution)?),
            tool_activity: Some(encode(&keys.tool_activity(), &logs.tool_activity)?),
        })
    }

    /// The three logs these texts hold; corrupt text is an error naming its key.
    pub fn parse(&self, keys: &StorageKeys) -> Result<LogSnapshot, StorageError> {
        Ok(LogSnapshot {
            reasoning: parse_list(&keys.reasoning(), self.reasoning.as_deref())?,
            execution: parse_list(&keys.execution(), self.execution.as_deref())?,
            tool_activity: parse_list(&keys.tool_activity(), self.tool_activity.as_deref())?,
        })
    }

    /// FNV-1a hashes of the three texts.
    pub fn hashes(&self) -> LogHashes {
        LogHashes {
            reasoning: text_hash(self.reasoning.as_deref()),
            execution: text_hash(self.execution.as_deref()),
            tool_activity: text_hash(self.tool_activity.as_deref()),
        }
    }
}

/// The logs as read at one moment: the stored texts and what they hold.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReadLogs {
    /// The texts as stored.
    pub raw: RawLogs,
    /// The entries those texts hold.
    pub parsed: LogSnapshot,
}

/// The iteration of every entry of a [`LogSnapshot`], stated or inferred.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlacedIterations {
    /// One per reasoning entry.
    pub reasoning: Vec<u32>,
    /// One per execution entry.
    pub execution: Vec<u32>,
    /// One per tool entry.
    pub tool_activity: Vec<u32>,
}

impl LogSnapshot {
    /// Where every entry belongs: reasoning by the headers before it, execution and tool
    /// entries by what they state, else by position (see [`infer_iterations`]).
    pub fn placed_iterations(&self) -> PlacedIterations {
        let fallback = highest_reasoning_iteration(&self.reasoning);
        let execution: Vec<_> = self
            .execution
            .iter()
            .map(ExecutionEntry::stated_iteration)
            .collect();
        let tools: Vec<_> = self
            .tool_activity
            .iter()
            .map(ToolActivityEntry::stated_iteration)
            .collect();
        PlacedIterations {
            reasoning: reasoning_iterations(&self.reasoning),
            execution: infer_iterations(&execution, fallback),
            tool_activity: infer_iterations(&tools, fallback),
        }
    }

    /// A copy in which every execution and tool entry carries its placed iteration.
    pub fn with_iterations(&self) -> LogSnapshot {
        let placed = self.placed_iterations();
        let mut filled = self.clone();
        for (entry, n) in filled.execution.iter_mut().zip(placed.execution) {
            entry.iteration = Some(n);
        }
        for (entry, n) in filled.tool_activity.iter_mut().zip(placed.tool_activity) {
            entry.iteration = Some(n);
        }
        filled
    }

    /// The highest iteration any log names, 0 when all are empty.
    pub fn current_iteration(&self) -> u32 {
        let reasoning = highest_reasoning_iteration(&self.reasoning);
        let execution = self
            .execution
            .iter()
            .filter_map(|e| e.stated_iteration())
            .max();
        let tools = self
            .tool_activity
            .iter()
            .filter_map(|e| e.stated_iteration())
            .max();
        reasoning
            .max(execution.unwrap_or(0))
            .max(tools.unwrap_or(0))
    }

    /// Estimated tokens of all three logs: reasoning text, and each entry as its JSON.
    pub fn estimate_tokens(&self) -> usize {
        let reasoning: usize = self.reasoning.iter().map(|e| estimate_tokens(e)).sum();
        let mut buffer = Vec::new();
        let execution: usize = self
            .execution
            .iter()
            .map(|e| json_tokens(e, &mut buffer))
            .sum();
        let tools: usize = self
            .tool_activity
            .iter()
            .map(|e| json_tokens(e, &mut buffer))
            .sum();
        reasoning + execution + tools
    }
}

/// Tokens of `entry` as JSON, written into `buffer` (reused from entry to entry).
fn json_tokens<T: serde::Serialize>(entry: &T, buffer: &mut Vec<u8>) -> usize {
    buffer.clear();
    if serde_json::to_writer(&mut *buffer, entry).is_err() {
        return 0;
    }
    std::str::from_utf8(buffer).map_or(0, estimate_tokens)
}

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
        }
    }

    /// The keys this store uses.
    pub fn keys(&self) -> &StorageKeys {
        &self.keys
    }

    /// The underlying key-value store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The clock stamping entries.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Appends the header of the next iteration, marks it running and returns its number.
    pub fn start_iteration(&mut self) -> Result<u32, StorageError> {
        let next = self.current_iteration()? + 1;
        self.append_reasoning(&iteration_header(next))?;
        self.running = true;
        Ok(next)
    }

    /// Marks the running iteration finished.
    pub fn finish_iteration(&mut self) {
        self.running = false;
    }

    /// Whether an iteration was started and not yet finished.
    pub fn iteration_running(&self) -> bool {
        self.running
    }

    /// The highest iteration any log names, 0 when all are empty.
    pub fn current_iteration(&self) -> Result<u32, StorageError> {
        Ok(self.snapshot()?.current_iteration())
    }

    /// Appends reasoning text to the current iteration.
    pub fn append_reasoning(&mut self, text: &str) -> Result<(), StorageError> {
        let key = self.keys.reasoning();
        let mut log: Vec<String> = read_list(&self.store, &key)?;
        log.push(text.to_owned());
        write_json(&self.store, &key, &log)
    }

    /// Appends an execution, stamped with id, timestamp and the current iteration.
    pub fn append_execution(
        &mut self,
        input: ExecutionInput,
    ) -> Result<ExecutionEntry, StorageError> {
        // One read serves both the iteration number and the log appended to.
        let mut logs = self.snapshot()?;
        let iteration = logs.current_iteration();
        let now = self.clock.now_ms();
        let entry = ExecutionEntry {
            id: Some(self.ids.next("exec", now)),
            timestamp: Some(iso_timestamp(now)),
            iteration: Some(iteration),
            success: Some(input.success),
            code: Some(input.code),
            result: input.result,
            error: Some(normalise_error(input.error)),
            execution_time: Some(js_number(input.execution_time.unwrap_or(0.0))),
            source: Some(input.source.unwrap_or_else(|| "auto".to_owned())),
            metadata: input.metadata,
            extra: input.extra,
        };
        logs.execution.push(entry.clone());
        write_json(&self.store, &self.keys.execution(), &logs.execution)?;
        Ok(entry)
    }

    /// Appends a tool operation, stamped with id, timestamp and the current iteration.
    pub fn append_tool_activity(
        &mut self,
        input: ToolActivityInput,
    ) -> Result<ToolActivityEntry, StorageError> {
        let mut logs = self.snapshot()?;
        let iteration = logs.current_iteration();
        let now = self.clock.now_ms();
        let entry = ToolActivityEntry {
            id: Some(self.ids.next("tool", now)),
            timestamp: Some(iso_timestamp(now)),
            iteration: Some(iteration),
            kind: Some(input.kind),
            action: Some(input.action),
            status: Some(input.status),
            details: input.details,
            extra: input.extra,
        };
        logs.tool_activity.push(entry.clone());
        write_json(&self.store, &self.keys.tool_activity(), &logs.tool_activity)?;
        Ok(entry)
    }

    /// The reasoning log as stored.
    pub fn reasoning_log(&self) -> Result<Vec<String>, StorageError> {
        read_list(&self.store, &self.keys.reasoning())
    }

    /// The execution log; entries that do not state their iteration get the inferred one.
    pub fn execution_log(&self) -> Result<Vec<ExecutionEntry>, StorageError> {
        Ok(self.snapshot()?.with_iterations().execution)
    }

    /// The tool-activity log; entries that do not state their iteration get the inferred one.
    pub fn tool_activity_log(&self) -> Result<Vec<ToolActivityEntry>, StorageError> {
        Ok(self.snapshot()?.with_iterations().tool_activity)
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
    pub fn raw_logs(&self) -> Result<RawLogs, StorageError> {
        Ok(RawLogs {
            reasoning: self.store.get(&self.keys.reasoning())?,
            execution: self.store.get(&self.keys.execution())?,
            tool_activity: self.store.get(&self.keys.tool_activity())?,
        })
    }

    /// Writes the three texts, one key at a time: execution, tool activity, then reasoning
    /// (after a compaction the first two only shrink, so a full store fails on the last, if at
    /// all). An absent text removes its key.
    pub fn write_raw(&self, logs: &RawLogs) -> Result<(), StorageError> {
        for (key, text) in [
            (self.keys.execution(), &logs.execution),
            (self.keys.tool_activity(), &logs.tool_activity),
            (self.keys.reasoning(), &logs.reasoning),
        ] {
            match text {
                Some(text) => self.store.set(&key, text)?,
                None => self.store.remove(&key)?,
            }
        }
        Ok(())
    }

    /// Replaces all three logs by `logs`.
    pub fn write_all(&self, logs: &LogSnapshot) -> Result<(), StorageError> {
        self.write_raw(&RawLogs::encode(logs, &self.keys)?)
    }

    /// Estimated tokens of all three logs.
    pub fn estimate_tokens(&self) -> Result<usize, StorageError> {
        Ok(self.snapshot()?.estimate_tokens())
    }

    /// Removes the three logs (archives and metrics stay) and ends any running iteration.
    pub fn clear(&mut self) -> Result<(), StorageError> {
        self.store.remove(&self.keys.reasoning())?;
        self.store.remove(&self.keys.execution())?;
        self.store.remove(&self.keys.tool_activity())?;
        self.running = false;
        Ok(())
    }
}
