//! `LogStore` for JavaScript: the core log store over localStorage.

use crate::core::model::call_options::LogStoreOptions;
use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::clock::BrowserClock;
use super::convert::{count_arg, from_js, json_to_js, options_from_js, string_arg, to_js};
use super::js_error::ContextCompactorError;
use super::local_storage::BrowserStorage;
use super::store_lock::BrowserStoreLock;
use super::typescript::{
    ExecutionEntryJs, ExecutionEntryList, ExecutionInputJs, LogStoreOptionsJs, PinList,
    ReasoningEntryList, StringList, ToolActivityEntryJs, ToolActivityEntryList,
    ToolActivityInputJs,
};
use crate::core::log::stored_entry::join_entries;
use crate::core::order::sorted_map::SortedMap;
use crate::core::ports::store_lock::StoreLock;
use crate::core::store::keys::StorageKeys;
use crate::core::store::keys::DEFAULT_PREFIX;
use crate::core::store::log_store::{LogStore, PinError};

/// The core store as the browser uses it.
pub type BrowserLogStore = LogStore<BrowserStorage, BrowserClock>;

/// The property through which a `Compactor` finds the store of a `LogStore` it is given.
const STORE_ID: &str = "__contextCompactorStoreId";

thread_local! {
    /// The stores of the `LogStore`s alive in this module, by id: a `Compactor` is given a
    /// plain JavaScript value and must tell a `LogStore` from anything else.
    static OPEN: RefCell<SortedMap<u32, Weak<RefCell<BrowserLogStore>>>> = RefCell::new(SortedMap::new());
    static NEXT_ID: Cell<u32> = const { Cell::new(1) };
}

/// The reasoning, execution and tool-activity logs of an app, kept in localStorage.
#[wasm_bindgen(js_name = LogStore)]
pub struct JsLogStore {
    inner: Rc<RefCell<BrowserLogStore>>,
    lock: BrowserStoreLock,
    id: u32,
}

impl JsLogStore {
    /// The shared core store, for a `Compactor` built on it from Rust.
    pub fn shared(&self) -> Rc<RefCell<BrowserLogStore>> {
        Rc::clone(&self.inner)
    }

    /// The core store of `value` when it is a live `LogStore` of this module.
    pub fn shared_from(value: &JsValue) -> Option<Rc<RefCell<BrowserLogStore>>> {
        // Reflect.get throws on a primitive, a revoked proxy or a throwing getter: not a store.
        let id = js_sys::Reflect::get(value, &JsValue::from_str(STORE_ID))
            .ok()?
            .as_f64()?;
        OPEN.with(|open| open.borrow().get(&(id as u32))?.upgrade())
    }

    fn register(inner: &Rc<RefCell<BrowserLogStore>>) -> u32 {
        let id = NEXT_ID.with(|next| {
            let id = next.get();
            next.set(id.wrapping_add(1).max(1));
            id
        });
        OPEN.with(|open| open.borrow_mut().insert(id, Rc::downgrade(inner)));
        id
    }
}

impl Drop for JsLogStore {
    fn drop(&mut self) {
        OPEN.with(|open| open.borrow_mut().remove(&self.id));
    }
}

type JsResult<T> = Result<T, JsValue>;

#[wasm_bindgen]
extern "C" {
    /// The options of `LogStore.clear` in TypeScript.
    #[wasm_bindgen(typescript_type = "{ pins?: boolean }")]
    pub type ClearOptionsJs;
}

#[wasm_bindgen(js_class = LogStore)]
impl JsLogStore {
    /// Opens the logs under `options.prefix` (default `"gdrs_"`).
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<LogStoreOptionsJs>) -> JsResult<JsLogStore> {
        let options: LogStoreOptions = match options {
            Some(value) if !value.is_undefined() && !value.is_null() => {
                options_from_js(value.into(), "LogStore options")?
            }
            _ => LogStoreOptions::default(),
        };
        let storage = BrowserStorage::local().map_err(ContextCompactorError::from)?;
        let keys = StorageKeys::new(options.prefix.as_deref().unwrap_or(DEFAULT_PREFIX));
        let seed = (js_sys::Math::random() * 9_007_199_254_740_992.0) as u64;
        let lock = BrowserStoreLock::over(&keys);
        let inner = Rc::new(RefCell::new(LogStore::new(
            storage,
            BrowserClock,
            keys,
            seed,
        )));
        Ok(JsLogStore {
            id: Self::register(&inner),
            inner,
            lock,
        })
    }

    /// The id by which a `Compactor` finds this store (not part of the API).
    #[wasm_bindgen(getter, js_name = __contextCompactorStoreId, skip_typescript)]
    pub fn store_id(&self) -> u32 {
        self.id
    }

    /// Runs `work` while this tab holds the lock every tab takes before it changes these logs
    /// (the compactor's swap and rollback take it too), with this tab's view of localStorage
    /// up to date; resolves to what `work` returns (awaited). Appends made inside it are never
    /// lost to another tab's write.
    #[wasm_bindgen(js_name = withLock, skip_typescript)]
    pub fn with_lock(&self, work: JsValue) -> js_sys::Promise {
        let lock = self.lock.clone();
        future_to_promise(async move {
            let work: js_sys::Function = work.dyn_into().map_err(|_| {
                JsValue::from(ContextCompactorError::invalid_input(
                    "withLock(work)",
                    "must be a function",
                ))
            })?;
            let held = lock.acquire().await.map_err(ContextCompactorError::from)?;
            let outcome = match work.call0(&JsValue::UNDEFINED) {
                Ok(value) => JsFuture::from(js_sys::Promise::resolve(&value)).await,
                Err(thrown) => Err(thrown),
            };
            drop(held);
            outcome
        })
    }

    /// Appends the header of the next iteration (`=== ITERATION N ===`), marks it running and
    /// returns N.
    #[wasm_bindgen(js_name = startIteration)]
    pub fn start_iteration(&self) -> JsResult<u32> {
        Ok(self.inner.borrow_mut().start_iteration()?)
    }

    /// Appends reasoning text to the current iteration.
    #[wasm_bindgen(js_name = appendReasoning)]
    pub fn append_reasoning(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    ) -> JsResult<()> {
        let text = string_arg(&text, "appendReasoning(text)")?;
        Ok(self.inner.borrow_mut().append_reasoning(&text)?)
    }

    /// Appends a user's later message to the current iteration as the user's words (each line
    /// after `The user wrote: `): summaries keep it as the user's, never as tool output's.
    #[wasm_bindgen(js_name = appendUserMessage)]
    pub fn append_user_message(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    ) -> JsResult<()> {
        let text = string_arg(&text, "appendUserMessage(text)")?;
        Ok(self.inner.borrow_mut().append_user_message(&text)?)
    }

    /// Appends an execution; returns it stamped with id, timestamp and iteration (the input's own
    /// stamps give way).
    ///
    /// @example
    /// await logs.withLock(() => logs.appendExecution({ success: true, code: "rows.length", result: 42 }));
    #[wasm_bindgen(js_name = appendExecution)]
    pub fn append_execution(&self, entry: ExecutionInputJs) -> JsResult<ExecutionEntryJs> {
        let input = from_js(entry.into(), "appendExecution(entry)")?;
        let stored = self.inner.borrow_mut().append_execution(input)?;
        Ok(json_to_js(stored.json())?)
    }

    /// Appends a tool operation; returns it stamped with id, timestamp and iteration.
    #[wasm_bindgen(js_name = appendToolActivity)]
    pub fn append_tool_activity(
        &self,
        entry: ToolActivityInputJs,
    ) -> JsResult<ToolActivityEntryJs> {
        let input = from_js(entry.into(), "appendToolActivity(entry)")?;
        let stored = self.inner.borrow_mut().append_tool_activity(input)?;
        Ok(json_to_js(stored.json())?)
    }

    /// Marks an iteration running without writing a header, for apps that write their own
    /// logs; `finishIteration()` ends it. A compaction waits for it.
    #[wasm_bindgen(js_name = markIterationRunning)]
    pub fn mark_iteration_running(&self) {
        self.inner.borrow_mut().mark_iteration_running();
    }

    /// Marks the running iteration finished (a waiting compaction may then start).
    #[wasm_bindgen(js_name = finishIteration)]
    pub fn finish_iteration(&self) {
        self.inner.borrow_mut().finish_iteration();
    }

    /// The highest iteration any log names, 0 when all are empty.
    #[wasm_bindgen(getter, js_name = currentIteration)]
    pub fn current_iteration(&self) -> JsResult<u32> {
        Ok(self.inner.borrow().current_iteration()?)
    }

    /// Whether an iteration was started and not yet finished.
    #[wasm_bindgen(getter, js_name = iterationRunning)]
    pub fn iteration_running(&self) -> bool {
        self.inner.borrow().iteration_running()
    }

    /// The reasoning log as stored.
    #[wasm_bindgen(js_name = reasoningLog)]
    pub fn reasoning_log(&self) -> JsResult<StringList> {
        Ok(json_to_js(&self.inner.borrow().reasoning_log_json()?)?)
    }

    /// The reasoning log, every entry described: an iteration's header, a compacted summary
    /// (the iterations it replaced, its archive) or text (the iteration it belongs to).
    ///
    /// @example
    /// for (const entry of logs.reasoningEntries()) {
    ///   if (entry.kind === "summary") console.log(`iterations ${entry.iterations?.join("-")} in ${entry.archiveKey}`);
    /// }
    #[wasm_bindgen(js_name = reasoningEntries)]
    pub fn reasoning_entries(&self) -> JsResult<ReasoningEntryList> {
        Ok(to_js(&self.inner.borrow().reasoning_entries()?)?)
    }

    /// The latest compacted summary (if any) and the last `k` reasoning entries after it: use
    /// it where a prompt takes `reasoningLog().slice(-k)`, so the summary stays in the prompt.
    #[wasm_bindgen(js_name = recentReasoning)]
    pub fn recent_reasoning(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] k: JsValue,
    ) -> JsResult<StringList> {
        let k = count_arg(&k, "recentReasoning(k)")?;
        let recent = self.inner.borrow().recent_reasoning(k as usize)?;
        Ok(json_to_js(&join_entries(&recent))?)
    }

    /// The execution log as stored, every entry given its iteration (placed where it states
    /// none).
    #[wasm_bindgen(js_name = executionLog)]
    pub fn execution_log(&self) -> JsResult<ExecutionEntryList> {
        Ok(json_to_js(&self.inner.borrow().execution_log_json()?)?)
    }

    /// The tool-activity log as stored, every entry given its iteration (placed where it states
    /// none).
    #[wasm_bindgen(js_name = toolActivityLog)]
    pub fn tool_activity_log(&self) -> JsResult<ToolActivityEntryList> {
        Ok(json_to_js(&self.inner.borrow().tool_activity_log_json()?)?)
    }

    /// Estimated tokens of all three logs.
    #[wasm_bindgen(js_name = estimateTokens)]
    pub fn estimate_tokens(&self) -> JsResult<usize> {
        Ok(self.inner.borrow().estimate_tokens()?)
    }

    /// Pins a fact every later summary must keep (its numbers and ids exactly), until
    /// `unpin(id)`; returns its id. Call it inside `withLock` when several tabs pin.
    ///
    /// @example
    /// const id = await logs.withLock(() => logs.pin("Amounts are in euros; the ledger is LGR-0042."));
    pub fn pin(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    ) -> JsResult<String> {
        let text = string_arg(&text, "pin(text)")?;
        match self.inner.borrow_mut().pin(&text) {
            Ok(id) => Ok(id),
            Err(PinError::Text(err)) => {
                Err(ContextCompactorError::invalid_input("pin(text)", err.to_string()).into())
            }
            Err(PinError::Storage(err)) => Err(err.into()),
        }
    }

    /// Unpins the fact `id` (an unknown id changes nothing).
    pub fn unpin(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
    ) -> JsResult<()> {
        let id = string_arg(&id, "unpin(id)")?;
        self.inner.borrow_mut().unpin(&id)?;
        Ok(())
    }

    /// The pinned facts, oldest first.
    pub fn pins(&self) -> JsResult<PinList> {
        Ok(to_js(&self.inner.borrow().pins()?)?)
    }

    /// Removes the three logs and the goal; archives and metrics stay, and the pins unless
    /// `options.pins` is true (a new task: `clear({ pins: true })`).
    pub fn clear(&self, options: Option<ClearOptionsJs>) -> JsResult<()> {
        let options: JsValue = options.map_or(JsValue::UNDEFINED, Into::into);
        let pins = match js_sys::Reflect::get(&options, &"pins".into()) {
            _ if options.is_undefined() || options.is_null() => false,
            Ok(pins) if pins.is_undefined() => false,
            Ok(pins) => pins.as_bool().ok_or_else(|| {
                super::convert::invalid("clear(options).pins", "must be true or false")
            })?,
            Err(_) => {
                return Err(super::convert::invalid(
                    "clear(options)",
                    "must be an object",
                ))
            }
        };
        Ok(self.inner.borrow_mut().clear(pins)?)
    }

    /// Sets the task every later summary keeps as its goal, in place of a `SESSION START`
    /// query or the first words of the logs (an empty text unsets it; `clear()` forgets it).
    #[wasm_bindgen(js_name = setGoal)]
    pub fn set_goal(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    ) -> JsResult<()> {
        let text = super::convert::string_arg(&text, "setGoal(text)")?;
        Ok(self.inner.borrow_mut().set_goal(&text)?)
    }

    /// The task `setGoal` set; `null` when none is set.
    #[wasm_bindgen(unchecked_return_type = "string | null")]
    pub fn goal(&self) -> JsResult<JsValue> {
        Ok(self
            .inner
            .borrow()
            .goal()?
            .map_or(JsValue::NULL, JsValue::from))
    }

    /// The key prefix in use.
    #[wasm_bindgen(getter)]
    pub fn prefix(&self) -> String {
        self.inner.borrow().keys().prefix().to_owned()
    }
}
