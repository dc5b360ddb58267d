//! Shared fixtures of the native tests: a seeded session generator and scripted ports.
#![allow(dead_code)]

pub mod census;
pub mod hostile;
pub mod locked;
pub mod seeded;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use context_compactor::core::error::{ProviderError, ProviderFailure};
use context_compactor::core::json::read::RawJson;
use context_compactor::core::log::entries::{ExecutionInput, ToolActivityInput};
use context_compactor::core::model::settings::CompactorSettings;
use context_compactor::core::model::token_usage::TokenUsage;
use context_compactor::core::ports::clock::{Clock, ManualClock};
use context_compactor::core::ports::events::RecordingSink;
use context_compactor::core::ports::storage::{KeyValueStore, MemoryStore};
use context_compactor::core::ports::timer::{LocalBoxFuture, Timer};
use context_compactor::core::providers::port::{Generation, SummaryProvider, SummaryRequest};
use context_compactor::core::run::compactor::Compactor;
use context_compactor::core::store::keys::StorageKeys;
use context_compactor::core::store::log_store::LogStore;
use context_compactor::core::store::shelf::{Refreshed, Shelf};
use serde_json::json;

/// `value` as the JSON text an app would give.
pub fn raw(value: serde_json::Value) -> RawJson {
    RawJson(value.to_string())
}

pub const NOV_22_2026: f64 = 1_795_373_767_000.0;

pub type Logs = Rc<RefCell<LogStore<MemoryStore, ManualClock>>>;

pub fn logs_over(memory: &MemoryStore, clock: &ManualClock) -> Logs {
    logs_under(memory, clock, StorageKeys::default())
}

/// Logs over `memory` under `keys`.
pub fn logs_under(memory: &MemoryStore, clock: &ManualClock, keys: StorageKeys) -> Logs {
    Rc::new(RefCell::new(LogStore::new(
        memory.clone(),
        clock.clone(),
        keys,
        11,
    )))
}

/// A tiny deterministic generator, so sessions replay exactly.
pub struct Seeded(u64);

impl Seeded {
    pub fn new(seed: u64) -> Self {
        Seeded(seed)
    }
    pub fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below
    }
}

const TOPICS: [&str; 5] = [
    "sales.csv",
    "users.json",
    "events.log",
    "inventory.xlsx",
    "orders.parquet",
];

/// Appends `iterations` realistic iterations: reasoning, executions (some failing, then
/// fixed), tool operations. Every iteration is finished.
pub fn grow_session(logs: &Logs, clock: &ManualClock, iterations: u32, seed: u64) {
    let mut rng = Seeded::new(seed);
    for _ in 0..iterations {
        let mut store = logs.borrow_mut();
        let n = store.start_iteration().unwrap();
        let topic = TOPICS[(n as usize) % TOPICS.len()];
        let rows = 1000 + rng.next(90_000);
        store
            .append_reasoning(&format!(
                "Iteration {n}: I looked at {topic} and found {rows} rows with {} columns. \
                 The totals do not match the report from step {}, so I will recompute them by \
                 grouping on region and month, then compare against the reference of {} units. \
                 A likely cause is duplicated order ids after the merge of 2026-0{}-1{}.",
                3 + rng.next(20),
                n.saturating_sub(1),
                rng.next(50_000),
                1 + rng.next(8),
                rng.next(9)
            ))
            .unwrap();
        if rng.next(3) == 0 {
            store
                .append_execution(ExecutionInput {
                    success: false,
                    code: format!(
                        "const data = load('{topic}');\nreturn data.rows.groupBy('region');"
                    ),
                    error: Some(raw(
                        json!({"message": "TypeError: data.rows.groupBy is not a function"}),
                    )),
                    execution_time: Some(3.0 + rng.next(20) as f64),
                    metadata: Some(raw(json!({"task": format!("group {topic}")}))),
                    ..Default::default()
                })
                .unwrap();
        }
        store
            .append_execution(ExecutionInput {
                success: true,
                code: format!(
                    "const data = load('{topic}');\nconst byRegion = {{}};\nfor (const row of data.rows) {{\n  byRegion[row.region] = (byRegion[row.region] ?? 0) + row.amount;\n}}\nreturn byRegion;"
                ),
                result: Some(raw(json!({"north": rng.next(100_000), "south": rng.next(100_000), "rows": rows}))),
                execution_time: Some(10.0 + rng.next(300) as f64),
                metadata: Some(raw(json!({"task": format!("group {topic}")}))),
                ..Default::default()
            })
            .unwrap();
        store
            .append_tool_activity(ToolActivityInput {
                kind: if n % 2 == 0 {
                    "vfs".into()
                } else {
                    "fetch".into()
                },
                action: if n % 2 == 0 {
                    "write".into()
                } else {
                    "get".into()
                },
                status: "success".into(),
                details: Some(raw(json!(format!("notes/iteration-{n}.md")))),
                extra: Default::default(),
            })
            .unwrap();
        store.finish_iteration();
        drop(store);
        clock.advance(60_000.0);
    }
}

/// A fetched page of about 6,000 characters (1,500 tokens) whose last paragraph holds `figure`.
pub fn fetched_page(n: u32, figure: &str) -> String {
    let mut page = format!("<html><head><title>Regional report {n}</title></head><body>");
    for row in 0..110 {
        page.push_str(&format!(
            "<p>Row {row}: the region moved as expected this week.</p>"
        ));
    }
    page.push_str(&format!(
        "<p>Net revenue {figure} in report_{n}.csv</p></body></html>"
    ));
    page
}

/// The figure iteration `n` of [`bulky_session`] fetches.
pub fn bulky_figure(n: u32) -> String {
    format!("{}.{}", 7_000 + n * 37, n % 10)
}

/// Appends `iterations` iterations of an agent whose context is mostly tool output: a line of
/// reasoning, an execution whose result is a fetched page (a string) and a tool entry whose
/// details hold the page and a short URL. Every iteration is finished.
pub fn bulky_session(logs: &Logs, clock: &ManualClock, iterations: u32) {
    for _ in 0..iterations {
        let mut store = logs.borrow_mut();
        let n = store.start_iteration().unwrap();
        let page = fetched_page(n, &bulky_figure(n));
        store
            .append_reasoning(&format!(
                "Iteration {n}: I read report {n} for its net revenue."
            ))
            .unwrap();
        store
            .append_execution(ExecutionInput {
                success: true,
                code: format!("return await fetchPage('https://example.com/report/{n}');"),
                result: Some(raw(json!(page))),
                source: Some("fetch".into()),
                ..Default::default()
            })
            .unwrap();
        store
            .append_tool_activity(ToolActivityInput {
                kind: "browser".into(),
                action: "fetch".into(),
                status: "success".into(),
                details: Some(raw(
                    json!({"url": format!("https://example.com/report/{n}"), "html": page}),
                )),
                extra: Default::default(),
            })
            .unwrap();
        store.finish_iteration();
        drop(store);
        clock.advance(60_000.0);
    }
}

/// A settable callback shared between a test and a scripted port.
pub type Hook<F> = Rc<RefCell<Option<Box<F>>>>;

/// A provider that answers from a script, one answer per call, and records every prompt.
#[derive(Clone, Default)]
pub struct ScriptedProvider {
    pub answers: Rc<RefCell<VecDeque<Answer>>>,
    pub prompts: Rc<RefCell<Vec<String>>>,
    pub on_call: Hook<dyn Fn()>,
}

#[derive(Clone)]
pub enum Answer {
    /// This text, plus every fact of the ledger it does not already keep (a model that does
    /// what the prompt's fact list asks).
    Text(String),
    /// Exactly this text (a model that may lose facts).
    Verbatim(String),
    Fail(ProviderFailure),
    Hang,
    /// Exactly this text, cut at the model's output limit (Gemini's `MAX_TOKENS`).
    Cut(String),
}

impl Answer {
    /// A failed call (with the usage its answer reported, when given a `ProviderFailure`).
    pub fn fail(failure: impl Into<ProviderFailure>) -> Self {
        Answer::Fail(failure.into())
    }
}

impl ScriptedProvider {
    pub fn new(answers: Vec<Answer>) -> Self {
        Self {
            answers: Rc::new(RefCell::new(answers.into())),
            ..Default::default()
        }
    }
    pub fn calls(&self) -> usize {
        self.prompts.borrow().len()
    }
}

impl SummaryProvider for ScriptedProvider {
    fn model(&self) -> String {
        "scripted".into()
    }
    fn generate(
        &self,
        request: &SummaryRequest<'_>,
    ) -> LocalBoxFuture<'static, Result<Generation, ProviderFailure>> {
        self.prompts.borrow_mut().push(request.prompt.to_owned());
        if let Some(hook) = self.on_call.borrow().as_ref() {
            hook();
        }
        let answer = self
            .answers
            .borrow_mut()
            .pop_front()
            .unwrap_or(Answer::fail(ProviderError::Failed(
                "script exhausted".into(),
            )));
        let answer = match answer {
            Answer::Text(mut text) => {
                for fact in request.ledger.missing_in(&text) {
                    text.push_str(&format!("\n- {}", fact.text));
                }
                Answer::Verbatim(text)
            }
            other => other,
        };
        match answer {
            Answer::Text(_) => unreachable!("answered as Verbatim"),
            Answer::Cut(text) => Box::pin(async move {
                Ok(Generation {
                    cut: true,
                    ..Generation::from(text)
                })
            }),
            Answer::Verbatim(text) => Box::pin(async move {
                Ok(Generation {
                    text,
                    usage: Some(TokenUsage {
                        prompt_tokens: 1000,
                        output_tokens: 100,
                        thinking_tokens: 0,
                        cached_tokens: 0,
                    }),
                    model: Some("scripted-1".into()),
                    cut: false,
                })
            }),
            Answer::Fail(err) => Box::pin(async move { Err(err) }),
            Answer::Hang => Box::pin(std::future::pending()),
        }
    }
}

/// A timer whose sleeps end at once, moving the clock; it records each wait and can run a
/// hook on every sleep (to finish an iteration, say).
#[derive(Clone)]
pub struct InstantTimer {
    clock: ManualClock,
    pub waits: Rc<RefCell<Vec<u32>>>,
    pub on_sleep: Hook<dyn Fn(usize)>,
    pub never: Rc<Cell<bool>>,
}

impl InstantTimer {
    /// How many breaks (sleeps of 0 ms, a new task in the browser) the package took.
    pub fn breaks(&self) -> usize {
        self.waits.borrow().iter().filter(|ms| **ms == 0).count()
    }

    /// The waits as the package was told them: a retry's wait is slept in steps of at most
    /// `PROGRESS_EVERY_MS` (the app hears progress between them), summed back here.
    pub fn waits_as_told(&self) -> Vec<u32> {
        let step = context_compactor::core::providers::attempts::PROGRESS_EVERY_MS;
        let mut told: Vec<u32> = Vec::new();
        let mut continues = false;
        for &ms in self.waits.borrow().iter() {
            match told.last_mut() {
                Some(last) if continues && ms <= step => *last += ms,
                _ => told.push(ms),
            }
            continues = ms == step;
        }
        told
    }

    pub fn new(clock: &ManualClock) -> Self {
        Self {
            clock: clock.clone(),
            waits: Default::default(),
            on_sleep: Default::default(),
            never: Default::default(),
        }
    }
}

impl Timer for InstantTimer {
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'static, ()> {
        // Nothing happens until the sleep is awaited: a deadline that the work beats never
        // moves the clock and is not recorded.
        let (clock, waits, hook, never) = (
            self.clock.clone(),
            self.waits.clone(),
            self.on_sleep.clone(),
            self.never.get(),
        );
        Box::pin(async move {
            waits.borrow_mut().push(ms);
            let count = waits.borrow().len();
            if let Some(hook) = hook.borrow().as_ref() {
                hook(count);
            }
            if never {
                std::future::pending::<()>().await;
            }
            clock.advance(f64::from(ms));
        })
    }
}

/// Everything one compaction test needs.
pub struct Rig {
    pub memory: MemoryStore,
    pub clock: ManualClock,
    pub logs: Logs,
    pub provider: ScriptedProvider,
    pub timer: InstantTimer,
    pub events: RecordingSink,
    pub compactor: Compactor<MemoryStore, ManualClock>,
}

/// Settings that let small test sessions compact: a window they fill past 60%, and a summary
/// budget as large as the window (the default, 15% of it, would be 300 tokens: the tests of the
/// budget set it themselves).
pub fn small_window() -> CompactorSettings {
    CompactorSettings {
        context_window_tokens: 2_000,
        summary_budget_tokens: Some(2_000),
        ..Default::default()
    }
}

impl Rig {
    pub fn with(memory: MemoryStore, answers: Vec<Answer>, settings: CompactorSettings) -> Rig {
        Self::scripted(memory, ScriptedProvider::new(answers), settings)
    }

    pub fn offline(memory: MemoryStore, clock: ManualClock, settings: CompactorSettings) -> Rig {
        Self::build(
            memory,
            clock,
            Box::new(context_compactor::core::providers::offline::OfflineProvider),
            settings,
        )
    }

    /// A rig whose compactor asks `provider`.
    pub fn with_provider(
        memory: MemoryStore,
        provider: Box<dyn SummaryProvider>,
        settings: CompactorSettings,
    ) -> Rig {
        Self::build(memory, ManualClock::new(NOV_22_2026), provider, settings)
    }

    /// A scripted rig whose logs are under `prefix`.
    pub fn with_prefix(
        memory: MemoryStore,
        prefix: &str,
        answers: Vec<Answer>,
        settings: CompactorSettings,
    ) -> Rig {
        let provider = ScriptedProvider::new(answers);
        let clock = ManualClock::new(NOV_22_2026);
        let logs = logs_under(&memory, &clock, StorageKeys::new(prefix));
        let mut rig = Self::over(memory, clock, logs, Box::new(provider.clone()), settings);
        rig.provider = provider;
        rig
    }

    fn build(
        memory: MemoryStore,
        clock: ManualClock,
        provider: Box<dyn SummaryProvider>,
        settings: CompactorSettings,
    ) -> Rig {
        let logs = logs_over(&memory, &clock);
        Self::over(memory, clock, logs, provider, settings)
    }

    fn over(
        memory: MemoryStore,
        clock: ManualClock,
        logs: Logs,
        provider: Box<dyn SummaryProvider>,
        settings: CompactorSettings,
    ) -> Rig {
        let scripted = ScriptedProvider::default();
        let timer = InstantTimer::new(&clock);
        let events = RecordingSink::default();
        let provider: Box<dyn SummaryProvider> = provider;
        let compactor = Compactor::new(
            logs.clone(),
            provider,
            Box::new(timer.clone()),
            Box::new(events.clone()),
            settings,
        )
        .unwrap();
        Rig {
            memory,
            clock,
            logs,
            provider: scripted,
            timer,
            events,
            compactor,
        }
    }

    /// A rig whose provider is the given scripted one (kept to inspect its prompts).
    pub fn scripted(
        memory: MemoryStore,
        provider: ScriptedProvider,
        settings: CompactorSettings,
    ) -> Rig {
        let clock = ManualClock::new(NOV_22_2026);
        let mut rig = Self::build(memory, clock, Box::new(provider.clone()), settings);
        rig.provider = provider;
        rig
    }

    /// Raw values of every key, to compare the store before and after.
    pub fn dump(&self) -> Vec<(String, String)> {
        use context_compactor::core::ports::storage::KeyValueStore;
        let mut keys = self.memory.keys().unwrap();
        keys.sort();
        keys.into_iter()
            // The metrics and the summary cache change with every compaction that got an
            // answer, whatever became of it.
            .filter(|k| !k.ends_with("compaction_metrics") && !k.ends_with("summary_cache"))
            .map(|k| (k.clone(), self.memory.get(&k).unwrap().unwrap()))
            .collect()
    }
}

/// Whether `memory` holds an archive (a key with `archived` in its name, as the default
/// archive keys have).
pub fn holds_an_archive(memory: &MemoryStore) -> bool {
    use context_compactor::core::ports::storage::KeyValueStore;
    memory
        .keys()
        .unwrap()
        .iter()
        .any(|k| k.contains("archived"))
}

/// A summary that passes validation, with `body` in its discoveries.
pub fn valid_summary(body: &str) -> String {
    format!(
        "### 🎯 OBJECTIVE ACHIEVED\n- Grouped the sales by region.\n### 📊 KEY DISCOVERIES\n- {body}\n\
         ### ✅ SUCCESSFUL SOLUTIONS\n- byRegion loop over data.rows.\n### 🔧 TOOLS USED SUCCESSFULLY\n- vfs write\n\
         ### 💡 CRITICAL INSIGHTS\n- groupBy does not exist on arrays.\n### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING\n- Continue with the monthly view."
    )
}

/// A store that can crash (every operation fails from the n-th write on, as if the tab closed)
/// or refuse writes to some keys with a quota error. Clones share state.
#[derive(Clone, Default)]
pub struct FaultyStore {
    pub inner: MemoryStore,
    writes: Rc<Cell<usize>>,
    /// The key of every write (set or remove), in order.
    pub written: Rc<RefCell<Vec<String>>>,
    crash_after_writes: Rc<Cell<Option<usize>>>,
    quota_on_prefix: Rc<RefCell<Option<String>>>,
}

impl FaultyStore {
    pub fn over(inner: MemoryStore) -> Self {
        Self {
            inner,
            ..Default::default()
        }
    }
    /// Every operation fails once `n` more writes (set or remove) have succeeded.
    pub fn crash_after(&self, n: usize) {
        self.writes.set(0);
        self.crash_after_writes.set(Some(n));
    }
    /// Writes to keys starting with `prefix` fail with a quota error.
    pub fn quota_on(&self, prefix: &str) {
        *self.quota_on_prefix.borrow_mut() = Some(prefix.to_owned());
    }
    pub fn crashed(&self) -> bool {
        self.crash_after_writes
            .get()
            .is_some_and(|n| self.writes.get() >= n)
    }
    pub fn writes(&self) -> usize {
        self.writes.get()
    }
    fn check(&self) -> Result<(), context_compactor::core::error::StorageError> {
        if self.crashed() {
            return Err(context_compactor::core::error::StorageError::Unavailable {
                reason: "the tab was closed".into(),
            });
        }
        Ok(())
    }
    fn wrote(&self) {
        self.writes.set(self.writes.get() + 1);
    }
}

impl context_compactor::core::ports::storage::KeyValueStore for FaultyStore {
    fn get(
        &self,
        key: &str,
    ) -> Result<Option<String>, context_compactor::core::error::StorageError> {
        self.check()?;
        self.inner.get(key)
    }
    fn set(
        &self,
        key: &str,
        value: &str,
    ) -> Result<(), context_compactor::core::error::StorageError> {
        self.check()?;
        if self
            .quota_on_prefix
            .borrow()
            .as_deref()
            .is_some_and(|p| key.starts_with(p))
        {
            return Err(context_compactor::core::error::StorageError::Quota {
                key: key.to_owned(),
                units_needed: value.encode_utf16().count(),
                free_units: None,
            });
        }
        self.inner.set(key, value)?;
        self.wrote();
        self.written.borrow_mut().push(key.to_owned());
        Ok(())
    }
    fn remove(&self, key: &str) -> Result<(), context_compactor::core::error::StorageError> {
        self.check()?;
        self.inner.remove(key)?;
        self.wrote();
        self.written.borrow_mut().push(key.to_owned());
        Ok(())
    }
    fn keys(&self) -> Result<Vec<String>, context_compactor::core::error::StorageError> {
        self.check()?;
        self.inner.keys()
    }
    fn quota_units(&self) -> Option<usize> {
        self.inner.quota_units()
    }
}

/// The progress messages a rig's compactions reported, in order.
pub fn progress_messages(rig: &Rig) -> Vec<String> {
    rig.events
        .events()
        .into_iter()
        .filter_map(|event| match event {
            context_compactor::core::ports::events::CompactionEvent::Progress {
                message, ..
            } => Some(message),
            _ => None,
        })
        .collect()
}

/// The archives of `compactor` refreshed now: its stores answer at once in the tests.
pub fn archives_now<S: KeyValueStore, C: Clock>(
    compactor: &Compactor<S, C>,
) -> ArchivesNow<'_, S, C> {
    ArchivesNow(
        context_compactor::core::ports::timer::run_ready(compactor.shelf().refreshed(true))
            .expect("an archive store in memory answers at once")
            .expect("the archive store refreshes"),
    )
}

/// Refreshed archives whose reads (fetching what they lack) answer at once.
pub struct ArchivesNow<'a, S, C>(Refreshed<'a, S, C>);

impl<S: KeyValueStore, C: Clock> ArchivesNow<'_, S, C> {
    /// Runs `read` as the app's reads run, fetching the texts it lacks.
    pub fn with<T, E: From<context_compactor::core::error::StorageError>>(
        &self,
        read: impl FnMut(
            &context_compactor::core::store::archives::StoredArchives<'_, S, C>,
        ) -> Result<T, E>,
    ) -> Result<T, E> {
        context_compactor::core::ports::timer::run_ready(self.0.with(read))
            .expect("an archive store in memory answers at once")
    }

    /// The recall tool's answer as the page gets it: its search in steps, `timer`'s breaks
    /// between them.
    pub fn recall_text_in_steps(
        &self,
        args: &context_compactor::core::store::recall_tool::RecallArgs,
        max_tokens: usize,
        timer: &dyn Timer,
    ) -> String {
        context_compactor::core::ports::timer::run_ready(
            self.0.recall_text(args, max_tokens, timer),
        )
        .expect("an archive store in memory answers at once")
        .expect("the archives are read")
    }
}

/// `compactor` over a shelf of its own that `build` gave another lock, archive store or lease
/// name (a second tab, IndexedDB's double).
pub fn shelved<S: KeyValueStore, C: Clock>(
    compactor: Compactor<S, C>,
    build: impl FnOnce(Shelf<S, C>) -> Shelf<S, C>,
) -> Compactor<S, C> {
    let shelf = Shelf::new(Rc::clone(compactor.logs()), compactor.settings());
    compactor.with_shelf(Rc::new(build(shelf)))
}

/// Every file under `dir`, in path order.
pub fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut entries: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    entries
        .into_iter()
        .flat_map(|path| match path.is_dir() {
            true => files_under(&path),
            false => vec![path],
        })
        .collect()
}
