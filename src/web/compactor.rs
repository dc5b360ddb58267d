//! `Compactor` for JavaScript: the core engine wired to localStorage, `setTimeout`, an
//! `EventTarget` and the chosen provider.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::clock::BrowserClock;
use super::convert::{invalid, options_copy, options_from_js, to_js, whole_arg};
use super::custom_provider::CustomProvider;
use super::event_sink::EventTargetSink;
use super::js_error::ContextCompactorError;
use super::local_storage::BrowserStorage;
use super::log_store::JsLogStore;
use super::lone_surrogates;
use super::recall_tool::{recall_tool, JsRecallTool};
use super::shelves::{archive_call, rollback_call, shelf_of, ArchiveCall, BrowserLogs};
use super::timer::BrowserTimer;
use super::typescript::{
    CanCompactJs, CompactOptionsJs, CompactionMetricsJs, CompactionPlanJs, CompactorOptionsJs,
    PhaseJs, RecallToolOptionsJs, RehydrateOptionsJs,
};
use super::usage_measure::PromptTokensFunction;
use crate::core::error::ErrorCode;
use crate::core::model::call_options::{
    AskedRung, CanCompact, CompactOptions, PROMPT_TOKENS_OPTION, PROVIDER_OPTION, SIGNAL_OPTION,
};
use crate::core::model::clearing::{Clearing, Rung};
use crate::core::model::option_rows::Range;
use crate::core::model::outcome::CompactionResult;
use crate::core::model::settings::Trigger;
use crate::core::model::settings::{CompactorSettings, MAX_TOKENS_OPTION};
use crate::core::ports::cancel::Cancel;
use crate::core::providers::offline::OfflineProvider;
use crate::core::providers::port::SummaryProvider;
use crate::core::run::compactor::Started;
use crate::core::store::journal::Recovered;
use crate::core::store::rehydrate::Cooldown;

#[wasm_bindgen(module = "/src/web/boundary.js")]
extern "C" {
    /// What `compact({ background: true })` resolves to, as the compaction goes.
    #[derive(Clone)]
    type BackgroundStart;
    #[wasm_bindgen(constructor)]
    fn new() -> BackgroundStart;
    #[wasm_bindgen(method)]
    fn tell(this: &BackgroundStart, first: u32, last: u32);
    #[wasm_bindgen(method)]
    fn follow(this: &BackgroundStart, done: &js_sys::Promise) -> js_sys::Promise;
}

/// The core compactor over the browser's storage and clock.
pub(super) type Engine = crate::core::run::compactor::Compactor<BrowserStorage, BrowserClock>;
type JsResult<T> = Result<T, JsValue>;

fn get(object: &JsValue, field: &str) -> JsValue {
    js_sys::Reflect::get(object, &JsValue::from_str(field)).unwrap_or(JsValue::UNDEFINED)
}

/// The provider named by `options.provider`.
fn provider_from(options: &JsValue) -> JsResult<Box<dyn SummaryProvider>> {
    let provider = get(options, PROVIDER_OPTION);
    if !provider.is_object() {
        return Err(invalid(
            "CompactorOptions.provider",
            "give { type: \"offline\" }, { type: \"custom\", generate } or { type: \"gemini\", apiKey }",
        ));
    }
    match get(&provider, "type").as_string().as_deref() {
        Some("offline") => Ok(Box::new(OfflineProvider)),
        Some("custom") => {
            let generate = get(&provider, "generate")
                .dyn_into::<js_sys::Function>()
                .map_err(|_| invalid("CompactorOptions.provider.generate", "must be a function"))?;
            let model = get(&provider, "model").as_string();
            Ok(Box::new(CustomProvider::new(provider, generate, model)))
        }
        Some("gemini") => super::gemini::provider_from(&provider),
        Some(other) => Err(invalid(
            "CompactorOptions.provider.type",
            format!("\"{other}\" is not one of \"offline\", \"custom\", \"gemini\""),
        )),
        None => Err(invalid(
            "CompactorOptions.provider.type",
            "is required: \"offline\", \"custom\" or \"gemini\"",
        )),
    }
}

/// Compacts the logs of a `LogStore` into a validated summary; see the README.
#[wasm_bindgen(js_name = Compactor)]
pub struct JsCompactor {
    pub(super) engine: Rc<Engine>,
    events: web_sys::EventTarget,
    /// The iterations `rehydrate` offered lately, not offered again by its next two calls.
    cooldown: Rc<RefCell<Cooldown>>,
}

#[wasm_bindgen(js_class = Compactor)]
impl JsCompactor {
    /// A compactor over `logs` with `options` (provider required, every other option has its
    /// documented default).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "LogStore")] logs: JsValue,
        options: CompactorOptionsJs,
    ) -> JsResult<JsCompactor> {
        let logs = JsLogStore::shared_from(&logs).ok_or_else(|| {
            invalid(
                "new Compactor(logs, options): logs",
                "must be a LogStore (new LogStore()) that has not been freed",
            )
        })?;
        Self::over(logs, options, None)
    }
}

/// What `compact(options)` asks for (`options` read once, its `signal` wired to a `Cancel`),
/// and whether it named a trigger.
pub(super) fn compact_request(
    options: Option<CompactOptionsJs>,
) -> JsResult<(CompactOptions, Cancel, bool)> {
    let options: JsValue = options.map_or(JsValue::UNDEFINED, Into::into);
    let (parsed, signal, named): (CompactOptions, JsValue, bool) =
        if options.is_undefined() || options.is_null() {
            (CompactOptions::default(), JsValue::UNDEFINED, false)
        } else {
            let copy = options_copy(&options, "compact(options)")?;
            let signal = get(&options, SIGNAL_OPTION);
            let named = !get(&options, "trigger").is_undefined();
            let _ = js_sys::Reflect::delete_property(&copy, &SIGNAL_OPTION.into());
            (
                options_from_js(copy.into(), "compact(options)")?,
                signal,
                named,
            )
        };
    let cancel = Cancel::default();
    if !signal.is_undefined() && !signal.is_null() {
        let signal: web_sys::AbortSignal = signal
            .dyn_into()
            .map_err(|_| invalid("compact(options).signal", "must be an AbortSignal"))?;
        if signal.aborted() {
            cancel.cancel();
        } else {
            let tripped = cancel.clone();
            let listener = Closure::once_into_js(move || tripped.cancel());
            let _ = signal.add_event_listener_with_callback("abort", listener.unchecked_ref());
        }
    }
    Ok((parsed, cancel, named))
}

impl JsCompactor {
    fn start_compaction(&self, options: Option<CompactOptionsJs>) -> JsResult<js_sys::Promise> {
        let (parsed, cancel, _) = compact_request(options)?;
        let to_result = Box::new(|result| Ok(to_js::<_, JsValue>(&result)?));
        let start = parsed.background.then(BackgroundStart::new);
        let started = start
            .clone()
            .map(|told| Started::new(move |[first, last]| told.tell(first, last)));
        let done = self.compaction(parsed.trigger, parsed.rung, cancel, started, to_result);
        Ok(match start {
            Some(start) => start.follow(&done),
            None => done,
        })
    }

    /// A compaction with `trigger` (only `rung`, when asked; in the background when `started`
    /// is given), claimed now (a `compact()` called while another runs is busy, whenever it is
    /// awaited), whose result `finish` turns into what the Promise resolves to: one async body
    /// for `Compactor` and `MessageCompactor`.
    pub(super) fn compaction(
        &self,
        trigger: Trigger,
        rung: Option<AskedRung>,
        cancel: Cancel,
        started: Option<Started>,
        finish: Box<dyn FnOnce(CompactionResult) -> JsResult<JsValue>>,
    ) -> js_sys::Promise {
        let engine = Rc::clone(&self.engine);
        let claim = engine.claim(trigger, cancel).map(|claim| {
            let claim = claim.with_rung(rung.map(Rung::from));
            match started {
                Some(started) => claim.in_background(started),
                None => claim,
            }
        });
        future_to_promise(async move {
            let outcome = match claim {
                Ok(claim) => engine.compact_claimed(claim).await,
                Err(err) => Err(err),
            };
            digest_while_idle(&engine);
            finish(
                outcome
                    .map_err(|err| ContextCompactorError::from(err).with_model(engine.model()))?,
            )
        })
    }

    /// A compactor over the store of a `LogStore` (what the constructor builds, for callers in
    /// Rust that hold the `LogStore` itself).
    pub fn over(
        logs: Rc<BrowserLogs>,
        options: CompactorOptionsJs,
        default_clearing: Option<Clearing>,
    ) -> JsResult<JsCompactor> {
        let options: JsValue = options.into();
        let provider = provider_from(&options)?;
        // The settings are read from a copy without the provider (it holds functions and keys).
        let settings_source = options_copy(&options, "CompactorOptions")?;
        let _ = js_sys::Reflect::delete_property(&settings_source, &PROVIDER_OPTION.into());
        let prompt_tokens = get(&options, PROMPT_TOKENS_OPTION);
        let _ = js_sys::Reflect::delete_property(&settings_source, &PROMPT_TOKENS_OPTION.into());
        let clearing_given = !get(&settings_source, "clearing").is_undefined();
        let mut settings: CompactorSettings =
            options_from_js(settings_source.into(), "CompactorOptions")?;
        if let Some(clearing) = default_clearing.filter(|_| !clearing_given) {
            settings.clearing = clearing;
        }
        let (engine, events) = engine_over(logs, provider, settings, "CompactorOptions")?;
        let engine = match prompt_tokens {
            function if function.is_function() => engine.with_usage_measure(Box::new(
                PromptTokensFunction::new(options.clone(), function.unchecked_into()),
            )),
            absent if absent.is_undefined() || absent.is_null() => engine,
            _ => {
                return Err(invalid(
                    "CompactorOptions.promptTokens",
                    "must be a function",
                ))
            }
        };
        Ok(JsCompactor {
            engine: recovering(engine),
            events,
            cooldown: Rc::default(),
        })
    }
}

/// The engine over `logs` with `provider` and `settings`, its store lock, timer and event
/// target (returned beside it).
fn engine_over(
    logs: Rc<BrowserLogs>,
    provider: Box<dyn SummaryProvider>,
    settings: CompactorSettings,
    what: &str,
) -> JsResult<(Engine, web_sys::EventTarget)> {
    let shelf = shelf_of(&logs, &settings, what)?;
    let sink = EventTargetSink::new().ok_or_else(|| {
        ContextCompactorError::new(ErrorCode::InvalidInput, "this host has no EventTarget")
    })?;
    let events = sink.target().clone();
    let engine = Engine::new(
        logs,
        provider,
        Box::new(BrowserTimer),
        Box::new(sink),
        settings,
    )
    .map_err(|reason| invalid(what, reason))?
    .with_shelf(shelf);
    Ok((engine, events))
}

/// `engine`, shared, after scheduling the recovery of a compaction a closed tab left half
/// done: it runs once the caller has had the chance to add listeners (they hear the outcome,
/// and any archive found lost, as events); the kept archives' digests are read after it.
fn recovering(engine: Engine) -> Rc<Engine> {
    let engine = Rc::new(engine);
    let recovering = Rc::clone(&engine);
    wasm_bindgen_futures::spawn_local(async move {
        let _ = recovering.recover().await;
        digest_while_idle(&recovering);
    });
    engine
}

/// Starts reading the digests of the kept archives while the page runs no compaction
/// (`Compactor::digest_archives_while_idle`); an archive it cannot read now is read by the
/// next read that needs it.
fn digest_while_idle(engine: &Rc<Engine>) {
    let engine = Rc::clone(engine);
    wasm_bindgen_futures::spawn_local(async move {
        let _ = engine.digest_archives_while_idle().await;
    });
}

#[wasm_bindgen(js_class = Compactor)]
impl JsCompactor {
    /// Where the compaction events are dispatched (`CustomEvent`s, payload in `detail`; the
    /// types of `CompactorEventMap`).
    #[wasm_bindgen(getter, unchecked_return_type = "CompactorEvents")]
    pub fn events(&self) -> web_sys::EventTarget {
        self.events.clone()
    }

    /// The phase of the running or last compaction.
    #[wasm_bindgen(getter)]
    pub fn phase(&self) -> PhaseJs {
        JsValue::from_str(self.engine.phase().as_str()).unchecked_into()
    }

    /// Whether a compaction holds the logs frozen.
    #[wasm_bindgen(getter)]
    pub fn frozen(&self) -> bool {
        self.engine.frozen()
    }

    /// Share (0..1, can exceed 1) of the context window in use: the app's own measure when it
    /// gives one (`promptTokens()`, `reportPromptTokens()`), else the logs plus `baseTokens`.
    #[wasm_bindgen(js_name = contextUsage)]
    pub fn context_usage(&self) -> JsResult<f64> {
        Ok(self.engine.context_usage()?)
    }

    /// Records the tokens of the prompt the app last sent (its model's `promptTokenCount`, say):
    /// `contextUsage()`, `shouldAutoCompact()` and the rules use them until the next compaction
    /// or report.
    #[wasm_bindgen(js_name = reportPromptTokens)]
    pub fn report_prompt_tokens(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] tokens: JsValue,
    ) -> JsResult<()> {
        // A whole number of tokens within the window's range, as the options' token counts are
        // (not the text "3", which wasm-bindgen would turn into 3, nor 2.5 or 1e308).
        let range = Range::Between(0, MAX_TOKENS_OPTION as u64);
        let tokens = whole_arg(&tokens, range, "reportPromptTokens(tokens)")?;
        self.engine.report_prompt_tokens(tokens as usize);
        Ok(())
    }

    /// Whether a compaction is allowed now, and if not, why.
    #[wasm_bindgen(js_name = canCompact)]
    pub fn can_compact(&self) -> JsResult<CanCompactJs> {
        let (refusal, waits_for) = self.engine.user_verdict()?;
        Ok(to_js(&CanCompact {
            ok: refusal.is_none(),
            reason: refusal.map(|refusal| refusal.to_string()),
            waits_for,
        })?)
    }

    /// Whether usage reached `autoTriggerUsage`, or clearing would free `clearing.atLeastTokens`
    /// (and no recent auto compaction failed).
    #[wasm_bindgen(js_name = shouldAutoCompact)]
    pub fn should_auto_compact(&self) -> JsResult<bool> {
        Ok(self.engine.should_auto_compact()?)
    }

    /// Exactly the prompt `compact()` would send now.
    #[wasm_bindgen(js_name = buildPrompt)]
    pub fn build_prompt(&self) -> JsResult<js_sys::JsString> {
        // The stored texts' lone surrogates come back as they were stored.
        Ok(lone_surrogates::to_js(&self.engine.build_prompt()?))
    }

    /// A dry run: what `compact()` would do now, without calling the provider.
    pub fn plan(&self) -> JsResult<CompactionPlanJs> {
        Ok(to_js(&self.engine.plan()?)?)
    }

    /// Runs one compaction; rejects with a `ContextCompactorError` whose `code` says why, the
    /// logs unchanged. `options.signal` (an `AbortSignal`) cancels it, as `abort()` does.
    /// `options.background: true` resolves as the summary is asked for instead
    /// (`CompactionStarted`: the loop goes on; see `BackgroundCompactOptions`).
    ///
    /// @example
    /// const compactor = new Compactor(logs, { provider: { type: "offline" } });
    /// if (compactor.canCompact().ok) {
    ///   const result = await compactor.compact();
    ///   console.log(`saved ${result.tokensSaved} tokens`);
    /// }
    #[wasm_bindgen(unchecked_return_type = "Promise<CompactionResult>")]
    pub fn compact(&self, options: Option<CompactOptionsJs>) -> js_sys::Promise {
        match self.start_compaction(options) {
            Ok(promise) => promise,
            // A promise-returning method rejects rather than throws, whatever went wrong.
            Err(err) => js_sys::Promise::reject(&err),
        }
    }

    /// Cancels the running compaction: it rejects with code `aborted` and the logs stay as they
    /// were (once its archive is written it completes instead). Does nothing when none runs.
    pub fn abort(&self) {
        self.engine.abort();
    }

    /// Puts an archive's originals back in place of its summary; later appends stay.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn rollback(
        &self,
        #[wasm_bindgen(js_name = "archiveKey", unchecked_param_type = "string")]
        archive_key: JsValue,
    ) -> js_sys::Promise {
        let engine = Rc::clone(&self.engine);
        rollback_call(
            self.engine.shelf(),
            archive_key,
            "rollback(archiveKey)",
            move |key| async move { engine.rollback(&key).await },
        )
    }

    /// Finishes or undoes a compaction that a closed tab left half done (this also runs by
    /// itself right after construction). Resolves to what it did (`"set_aside"`: the journal
    /// did not read and was set aside, see `key_set_aside`), or `null` when there was
    /// nothing to recover.
    #[wasm_bindgen(
        unchecked_return_type = "Promise<\"completed\" | \"rolled_back\" | \"set_aside\" | null>"
    )]
    pub fn recover(&self) -> js_sys::Promise {
        let engine = Rc::clone(&self.engine);
        future_to_promise(async move {
            Ok(match engine.recover().await? {
                Some(Recovered::Completed(_)) => JsValue::from_str("completed"),
                Some(Recovered::RolledBack(_)) => JsValue::from_str("rolled_back"),
                Some(Recovered::SetAside(_)) => JsValue::from_str("set_aside"),
                None => JsValue::NULL,
            })
        })
    }

    /// The archives, newest first, expired ones excluded.
    #[wasm_bindgen(unchecked_return_type = "Promise<ArchiveInfo[]>")]
    pub fn archives(&self) -> js_sys::Promise {
        archive_call(self.engine.shelf(), ArchiveCall::List)
    }

    /// One archive, whole; rejects `archive_missing` when it is no longer stored.
    #[wasm_bindgen(js_name = readArchive, unchecked_return_type = "Promise<Archive>")]
    pub fn read_archive(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> js_sys::Promise {
        archive_call(
            self.engine.shelf(),
            ArchiveCall::Read(key, "readArchive(key)"),
        )
    }

    /// The archived originals of a compacted iteration (also across chained compactions), for
    /// an app that lets its model read back what a summary left out; `null` when the iteration
    /// was never compacted (it is live). Rejects `archive_missing`, `key` naming it, when the
    /// archive that held it is no longer stored (deleted, expired, or evicted).
    ///
    /// @example
    /// const originals = await compactor.recall(3);
    /// if (originals) console.log(originals.reasoningLog.join("\n"));
    #[wasm_bindgen(unchecked_return_type = "Promise<ArchiveData | null>")]
    pub fn recall(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] iteration: JsValue,
    ) -> js_sys::Promise {
        archive_call(
            self.engine.shelf(),
            ArchiveCall::Recall(iteration, "recall(iteration)"),
        )
    }

    /// Recall as a tool for the app's model: a Gemini function declaration and `call(args)`,
    /// which answers with the archived originals of a range of iterations or of the entries a
    /// search text finds, at most `maxTokens` (default 4,000) tokens, paginated.
    ///
    /// @example
    /// const recall = compactor.recallTool();
    /// const tools = [{ functionDeclarations: [recall.declaration] }];
    /// // for each part.functionCall of that name in the model's answer:
    /// const text = await recall.call(part.functionCall.args);
    #[wasm_bindgen(js_name = recallTool)]
    pub fn recall_tool(
        &self,
        options: Option<RecallToolOptionsJs>,
    ) -> Result<JsRecallTool, JsValue> {
        recall_tool(self.engine.shelf(), options, "recallTool(options)")
    }

    /// The archived originals `text` (the model's latest message) refers to — an iteration it
    /// names, an execution id, file name or figure only an archive still holds — newest first,
    /// whole iterations within `budgetTokens` (default 2,000), for the app's next prompt only:
    /// nothing is written to the logs. An iteration offered is not offered again by the next
    /// two calls.
    #[wasm_bindgen(unchecked_return_type = "Promise<Rehydrated>")]
    pub fn rehydrate(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
        options: Option<RehydrateOptionsJs>,
    ) -> js_sys::Promise {
        let options: JsValue = options.map_or(JsValue::UNDEFINED, Into::into);
        archive_call(
            self.engine.shelf(),
            ArchiveCall::Rehydrate(text, options, Rc::clone(&self.cooldown)),
        )
    }

    /// Removes one archive (refused while a compaction runs here or in another tab).
    #[wasm_bindgen(js_name = deleteArchive, unchecked_return_type = "Promise<void>")]
    pub fn delete_archive(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> js_sys::Promise {
        archive_call(
            self.engine.shelf(),
            ArchiveCall::Delete(key, "deleteArchive(key)"),
        )
    }

    /// Removes expired archives; resolves to how many.
    #[wasm_bindgen(js_name = purgeExpiredArchives, unchecked_return_type = "Promise<number>")]
    pub fn purge_expired_archives(&self) -> js_sys::Promise {
        archive_call(self.engine.shelf(), ArchiveCall::Purge)
    }

    /// The persisted metrics.
    pub fn metrics(&self) -> JsResult<CompactionMetricsJs> {
        Ok(to_js(&self.engine.metrics()?)?)
    }
}
