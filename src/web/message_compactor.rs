//! `MessageCompactor` for JavaScript: the message front over a `Compactor` whose logs live in
//! this page's memory (written from the app's list before each question) and whose archives
//! go to IndexedDB under the conversation's name.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::clock::BrowserClock;
use super::compactor::{compact_request, JsCompactor};
use super::convert::{invalid, json_to_js, options_copy, to_js};
use super::js_error::ContextCompactorError;
use super::local_storage::BrowserStorage;
use super::recall_tool::JsRecallTool;
use super::shelves::{archive_call, ArchiveCall};
use super::typescript::{CompactOptionsJs, RecallToolOptionsJs};
use crate::core::error::{CompactionError, ErrorCode};
use crate::core::log::iteration::Unit;
use crate::core::messages::front::{default_clearing, FrontError, MessageFront};
use crate::core::messages::rebuild::Out;
use crate::core::messages::report::{MessagePlan, MessageReport};
use crate::core::messages::shape::Shape;
use crate::core::messages::stitch::Stitched;
use crate::core::model::reasons::BusyReason;
use crate::core::model::settings::Trigger;
use crate::core::store::keys::StorageKeys;
use crate::core::store::log_store::LogStore;

type JsResult<T> = Result<T, JsValue>;
type Front = MessageFront<BrowserStorage, BrowserClock>;

#[wasm_bindgen]
extern "C" {
    /// `MessageCompactorOptions` in TypeScript.
    #[wasm_bindgen(typescript_type = "MessageCompactorOptions")]
    pub type MessageCompactorOptionsJs;
    /// The app's message list (typed in `types.d.ts`, with the methods that take it).
    pub type MessageListJs;
}

fn get(object: &JsValue, field: &str) -> JsValue {
    js_sys::Reflect::get(object, &JsValue::from_str(field)).unwrap_or(JsValue::UNDEFINED)
}

/// The longest `conversation` name, in characters.
const MAX_CONVERSATION_CHARS: usize = 64;

/// Keeps the lists of an agent within its context window: the same ladder, checks, archives
/// and events as `Compactor`, over a message list of one shape; see the README.
#[wasm_bindgen(js_name = MessageCompactor)]
pub struct JsMessageCompactor {
    inner: JsCompactor,
    front: Rc<Front>,
}

#[wasm_bindgen(js_class = MessageCompactor)]
impl JsMessageCompactor {
    /// A compactor of lists of `options.shape` (`"gemini"`, `"openai"`, `"anthropic"`,
    /// `"ai-sdk"`), with the options of `Compactor`; archives under `options.conversation`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: MessageCompactorOptionsJs) -> JsResult<JsMessageCompactor> {
        let what = "MessageCompactorOptions";
        let options: JsValue = options.into();
        let copy = options_copy(&options, what)?;
        let shape_name = get(&copy, "shape").as_string().unwrap_or_default();
        let shape = Shape::ALL
            .into_iter()
            .find(|shape| shape.as_str() == shape_name)
            .ok_or_else(|| {
                invalid(
                    "MessageCompactorOptions.shape",
                    "must be \"gemini\", \"openai\", \"anthropic\" or \"ai-sdk\"",
                )
            })?;
        let conversation = match get(&copy, "conversation") {
            absent if absent.is_undefined() || absent.is_null() => String::from("default"),
            name => name
                .as_string()
                .filter(|n| (1..=MAX_CONVERSATION_CHARS).contains(&n.chars().count()))
                .ok_or_else(|| {
                    invalid(
                        "MessageCompactorOptions.conversation",
                        "must be a name of 1 to 64 characters",
                    )
                })?,
        };
        for field in ["shape", "conversation"] {
            let _ = js_sys::Reflect::delete_property(&copy, &field.into());
        }
        let seed = (js_sys::Math::random() * 9_007_199_254_740_992.0) as u64;
        let keys = StorageKeys::new(&format!("cc_messages_{conversation}_"));
        let logs = Rc::new(RefCell::new(
            LogStore::new(BrowserStorage::memory(), BrowserClock, keys, seed).with_unit(Unit::Turn),
        ));
        let inner = JsCompactor::over(logs, copy.unchecked_into(), Some(default_clearing()))?;
        // The last compaction lasts across reloads where the page has localStorage (a worker
        // keeps it for its own life).
        let kept = BrowserStorage::local().unwrap_or_else(|_| BrowserStorage::memory());
        let front = Rc::new(MessageFront::new(shape, Rc::clone(&inner.engine), kept));
        Ok(JsMessageCompactor { inner, front })
    }

    /// Where the compaction events are dispatched: the same as `Compactor`'s.
    #[wasm_bindgen(getter, unchecked_return_type = "CompactorEvents")]
    pub fn events(&self) -> web_sys::EventTarget {
        self.inner.events()
    }

    /// Share (0..1, can exceed 1) of `contextWindowTokens` that `messages` take.
    #[wasm_bindgen(skip_typescript)]
    pub fn usage(&self, messages: MessageListJs) -> JsResult<f64> {
        let (_, Stitched { working: texts, .. }) = self.stitched(&messages, "usage(messages)")?;
        if self.front.engine().busy() {
            return Err(ContextCompactorError::new(
                ErrorCode::Busy,
                "usage(messages): a compaction of this conversation is running; measure the list it resolves to",
            )
            .into());
        }
        self.front.load(&texts).map_err(front_error)?;
        Ok(self.front.engine().context_usage()?)
    }

    /// Whether the loop should compact `messages` now (false while a compaction runs).
    #[wasm_bindgen(js_name = shouldCompact, skip_typescript)]
    pub fn should_compact(&self, messages: MessageListJs) -> JsResult<bool> {
        let (_, Stitched { working: texts, .. }) =
            self.stitched(&messages, "shouldCompact(messages)")?;
        self.front.should_compact(&texts).map_err(front_error)
    }

    /// What `compact(messages)` would do now: no provider call, nothing written.
    #[wasm_bindgen(skip_typescript)]
    pub fn plan(&self, messages: MessageListJs) -> JsResult<JsValue> {
        let (_, Stitched { working: texts, .. }) = self.stitched(&messages, "plan(messages)")?;
        let due = self.front.should_compact(&texts).map_err(front_error)?;
        let engine = self.front.engine();
        let tokens = engine.logs().borrow().estimate_tokens()?;
        Ok(to_js(&MessagePlan::of(&engine.plan()?, tokens, due))?)
    }

    /// The list to send: `messages` itself when nothing is due (`rung` `"none"`), else the
    /// ladder's: old bulky tool results cleared, then the older turns folded into one summary
    /// message after the first user message; the newest turns as the app wrote them. The
    /// trigger is `"auto"` unless `options.trigger` says otherwise.
    #[wasm_bindgen(skip_typescript)]
    pub fn compact(
        &self,
        messages: MessageListJs,
        options: Option<CompactOptionsJs>,
    ) -> js_sys::Promise {
        match self.start_compaction(&messages, options) {
            Ok(promise) => promise,
            Err(err) => js_sys::Promise::reject(&err),
        }
    }

    /// Recall as a tool for the app's model (see `Compactor.recallTool`).
    #[wasm_bindgen(js_name = recallTool)]
    pub fn recall_tool(&self, options: Option<RecallToolOptionsJs>) -> JsResult<JsRecallTool> {
        self.inner.recall_tool(options)
    }

    /// The archived results of a call (its id) or of a turn (from 0): the messages that held
    /// them, exactly as the app gave them; empty when the list still holds them.
    #[wasm_bindgen(skip_typescript)]
    pub fn recall(&self, call_id_or_turn: JsValue) -> js_sys::Promise {
        archive_call(
            self.front.engine().shelf(),
            ArchiveCall::Messages(call_id_or_turn, self.front.shape()),
        )
    }

    /// The archives of this conversation, newest first, expired ones excluded.
    #[wasm_bindgen(unchecked_return_type = "Promise<ArchiveInfo[]>")]
    pub fn archives(&self) -> js_sys::Promise {
        self.inner.archives()
    }

    /// Undoes the compaction that wrote `archiveKey` in `messages` (the list it gave, perhaps
    /// grown since): resolves to the list with its originals back (see the types).
    #[wasm_bindgen(skip_typescript)]
    pub fn rollback(&self, archive_key: JsValue, messages: MessageListJs) -> js_sys::Promise {
        match self.start_rollback(&archive_key, &messages) {
            Ok(promise) => promise,
            Err(err) => js_sys::Promise::reject(&err),
        }
    }

    /// Cancels the running compaction (see `Compactor.abort`).
    pub fn abort(&self) {
        self.inner.abort();
    }
}

impl JsMessageCompactor {
    /// The list to work on for `messages` (`what` names the method in an error), as texts
    /// with the list in the app's own terms (see `messages::stitch`), and the array given.
    fn stitched(&self, messages: &JsValue, what: &str) -> JsResult<(js_sys::Array, Stitched)> {
        let (array, given) = message_texts(messages, what)?;
        Ok((array, self.front.working(given)))
    }

    /// [`Self::stitched`], with the list to work on as an array.
    fn working(&self, messages: &JsValue, what: &str) -> JsResult<(js_sys::Array, Stitched)> {
        let (array, stitched) = self.stitched(messages, what)?;
        let array = match stitched.made {
            true => list_of(&array, &stitched.to_app)?,
            false => array,
        };
        Ok((array, stitched))
    }

    fn start_rollback(&self, key: &JsValue, messages: &JsValue) -> JsResult<js_sys::Promise> {
        let (array, Stitched { working: texts, .. }) =
            self.working(messages, "rollback(archiveKey, messages)")?;
        // Refused as called: the logs hold the list of the compaction running.
        self.front
            .engine()
            .shelf()
            .may_roll_back()
            .map_err(ContextCompactorError::from)?;
        let conversation = self.front.load(&texts).map_err(front_error)?;
        let front = Rc::clone(&self.front);
        // `Compactor.rollback`'s own Promise, then the list read back: no async body of its own.
        let finish = Closure::once_into_js(move |_: JsValue| -> JsResult<JsValue> {
            let outs = front.rolled_back(&texts, &conversation)?;
            front.forget()?;
            Ok(list_of(&array, &outs)?.into())
        });
        let rolled: JsValue = self.inner.rollback(key.clone()).into();
        let then: js_sys::Function =
            js_sys::Reflect::get(&rolled, &"then".into())?.unchecked_into();
        Ok(then.call1(&rolled, &finish)?.unchecked_into())
    }

    fn start_compaction(
        &self,
        messages: &JsValue,
        options: Option<CompactOptionsJs>,
    ) -> JsResult<js_sys::Promise> {
        let (array, stitched) = self.working(messages, "compact(messages)")?;
        let (asked, cancel, named) = compact_request(options)?;
        let trigger = if named { asked.trigger } else { Trigger::Auto };
        if asked.background {
            return Err(invalid(
                "compact(messages, options).background",
                "is for Compactor: a message list is given whole to each call, so its compaction \
                 resolves to the list to send",
            ));
        }
        let front = Rc::clone(&self.front);
        if front.engine().busy() {
            // The logs hold the list of the compaction running: they are not written over.
            let busy = CompactionError::Busy(BusyReason::Compacting);
            return Err(ContextCompactorError::from(busy).into());
        }
        // The list written into the logs once: what decides whether anything is due, and what
        // the compaction reads.
        let conversation = front.load(&stitched.working).map_err(front_error)?;
        if trigger == Trigger::Auto
            && asked.rung.is_none()
            && !front.engine().should_auto_compact()?
        {
            let tokens = front.engine().logs().borrow().estimate_tokens()?;
            let report: js_sys::Object = to_js(&MessageReport::nothing(tokens))?;
            let _ = js_sys::Reflect::set(&report, &"messages".into(), &array);
            let report: JsValue = report.into();
            return Ok(js_sys::Promise::resolve(&report));
        }
        let finish = move |result| {
            let done = front.finish(&stitched.working, &conversation, result)?;
            let report: js_sys::Object = to_js(&MessageReport::of(&done))?;
            front.remember(&stitched, &done.list);
            let list = list_of(&array, &done.list)?;
            let _ = js_sys::Reflect::set(&report, &"messages".into(), &list);
            Ok(report.into())
        };
        Ok(self
            .inner
            .compaction(trigger, asked.rung, cancel, None, Box::new(finish)))
    }
}

/// The list `outs` names over `array`.
fn list_of(array: &js_sys::Array, outs: &[Out]) -> JsResult<js_sys::Array> {
    let list = js_sys::Array::new();
    for out in outs {
        match out {
            Out::Keep(index) => list.push(&array.get(*index as u32)),
            Out::New(json) => list.push(&json_to_js::<JsValue>(json)?),
        };
    }
    Ok(list)
}

/// `messages` as an array and each message's JSON text; `invalid_input` naming `what` for
/// anything but an array of JSON objects.
fn message_texts(messages: &JsValue, what: &str) -> JsResult<(js_sys::Array, Vec<String>)> {
    if !js_sys::Array::is_array(messages) {
        return Err(invalid(what, "must be the array of messages the app sends"));
    }
    let array: js_sys::Array = messages.clone().unchecked_into();
    let mut texts = Vec::with_capacity(array.length() as usize);
    for (index, message) in array.iter().enumerate() {
        let text = message
            .is_object()
            .then(|| js_sys::JSON::stringify(&message).ok())
            .flatten()
            .and_then(|text| text.as_string());
        match text {
            Some(text) => texts.push(text),
            None => {
                return Err(invalid(
                    &format!("{what}[{index}]"),
                    "must be a message object that JSON can hold",
                ))
            }
        }
    }
    Ok((array, texts))
}

/// A list that could not be taken, as the JS error of its code.
fn front_error(err: FrontError) -> JsValue {
    match err {
        FrontError::NotAMessage(at) => invalid(
            &format!("messages[{}]", at.index),
            "must be a message object",
        ),
        FrontError::Storage(err) => ContextCompactorError::from(err).into(),
    }
}
