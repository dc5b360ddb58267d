//! The page's archive shelves: one per `LogStore`, archive prefix and archive place (IndexedDB
//! or localStorage), found again by every `Compactor` and `Archives` built over those logs so
//! that they share one archive store and one "a compaction runs here" state; and the archive
//! calls both classes answer through it.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::archive_database::ArchiveDatabase;
use super::clock::BrowserClock;
use super::convert::{
    invalid, json_to_js, option_in, optional_options, options_from_js, string_arg, to_js, whole_arg,
};
use super::local_storage::BrowserStorage;
use super::log_store::BrowserLogStore;
use super::lone_surrogates;
use super::store_lock::BrowserStoreLock;
use super::timer::BrowserTimer;
use crate::core::error::CompactionError;
use crate::core::messages::recalled::{recalled_results, Asked};
use crate::core::messages::shape::Shape;
use crate::core::model::call_options::{RehydrateOptions, FROM_ONE};
use crate::core::model::option_rows::Range;
use crate::core::model::settings::{ArchiveBackend, CompactorSettings};
use crate::core::store::archives::StoredArchives;
use crate::core::store::recall_tool::RecallArgs;
use crate::core::store::rehydrate::{Cooldown, DEFAULT_REHYDRATE_TOKENS};
use crate::core::store::shelf::{Refreshed, Shelf};

type JsResult<T> = Result<T, JsValue>;
/// The core log store over the browser's storage, shared by a `LogStore` and its compactors.
pub(super) type BrowserLogs = RefCell<BrowserLogStore>;
/// The shelf of logs over the browser's storage.
pub(super) type BrowserShelf = Shelf<BrowserStorage, BrowserClock>;

/// One shelf of the page: the logs it is over, where its archives are, and the shelf.
struct Shelved {
    logs: Weak<BrowserLogs>,
    prefix: String,
    in_database: bool,
    shelf: Weak<BrowserShelf>,
}

thread_local! {
    /// The shelves alive in this page: one per `LogStore`, archive prefix and archive place.
    static SHELVES: RefCell<Vec<Shelved>> = const { RefCell::new(Vec::new()) };
}

/// This tab's name in the cross-tab lease. It lives in sessionStorage, so a reloaded tab is
/// the same tab and takes over the lease its previous page left behind.
fn tab_id() -> String {
    const KEY: &str = "context-compactor:tab-id";
    let session = web_sys::window().and_then(|w| w.session_storage().ok().flatten());
    if let Some(id) = session
        .as_ref()
        .and_then(|s| s.get_item(KEY).ok().flatten())
    {
        return id;
    }
    let id = format!(
        "tab-{:x}",
        (js_sys::Math::random() * 9_007_199_254_740_992.0) as u64
    );
    if let Some(session) = session {
        // Without sessionStorage a reload counts as a new tab; the lease then just expires.
        let _ = session.set_item(KEY, &id);
    }
    id
}

/// The shelf of `logs` for `settings` (archive prefix and store): the one this page already
/// has, else a new one over IndexedDB or localStorage; `what` names the options in errors.
pub(super) fn shelf_of(
    logs: &Rc<BrowserLogs>,
    settings: &CompactorSettings,
    what: &str,
) -> JsResult<Rc<BrowserShelf>> {
    let prefix = logs
        .borrow()
        .keys()
        .for_settings(settings)
        .archive_prefix()
        .to_owned();
    let database = match settings.archive_store {
        Some(ArchiveBackend::LocalStorage) => false,
        Some(ArchiveBackend::IndexedDb) => true,
        // IndexedDB where the browser has it; else beside the logs, as before.
        None => ArchiveDatabase::available(),
    };
    let found = SHELVES.with(|shelves| {
        let mut shelves = shelves.borrow_mut();
        shelves.retain(|s| s.logs.strong_count() > 0 && s.shelf.strong_count() > 0);
        shelves
            .iter()
            .find(|s| {
                s.logs.upgrade().is_some_and(|l| Rc::ptr_eq(&l, logs))
                    && s.prefix == prefix
                    && s.in_database == database
            })
            .and_then(|s| s.shelf.upgrade())
    });
    if let Some(shelf) = found {
        return Ok(shelf);
    }
    let lock = BrowserStoreLock::over(logs.borrow().keys());
    let mut shelf = Shelf::new(Rc::clone(logs), settings)
        .with_lock(Rc::new(lock))
        .with_owner(tab_id());
    if database {
        let opened = ArchiveDatabase::open(&prefix).ok_or_else(|| {
            invalid(
                &format!("{what}.archiveStore"),
                "\"indexedDB\" is not available in this browser; use \"localStorage\"",
            )
        })?;
        shelf = shelf.with_archive_store(Rc::new(opened));
    }
    let shelf = Rc::new(shelf);
    SHELVES.with(|shelves| {
        shelves.borrow_mut().push(Shelved {
            logs: Rc::downgrade(logs),
            prefix,
            in_database: database,
            shelf: Rc::downgrade(&shelf),
        })
    });
    Ok(shelf)
}

/// One call of the archive API, with its argument and the method that took it.
pub(super) enum ArchiveCall {
    /// The archives, newest first, expired ones excluded.
    List,
    /// The archive under the key, whole.
    Read(JsValue, &'static str),
    /// The archived originals of the compacted iteration, or `null` when it was never compacted.
    Recall(JsValue, &'static str),
    /// Removes the archive under the key.
    Delete(JsValue, &'static str),
    /// Removes the expired archives; how many.
    Purge,
    /// The recall tool's answer to the model's arguments, within the tokens given.
    RecallText(JsValue, usize),
    /// The originals a text refers to (`text`, `{ budgetTokens? }`), minding the cooldown.
    Rehydrate(JsValue, JsValue, Rc<RefCell<Cooldown>>),
    /// The archived results of a call (its id) or a turn (from 0), as messages of the shape.
    Messages(JsValue, Shape),
}

/// `call` over the archives on `shelf`, answered as a Promise once the archive store answered
/// (one async body for every call: each adds its own state machine to the download).
pub(super) fn archive_call(shelf: &Rc<BrowserShelf>, call: ArchiveCall) -> js_sys::Promise {
    // Refused as called: the archive of a compaction running now is its only copy.
    if let (ArchiveCall::Delete(..), Err(err)) = (&call, shelf.may_delete()) {
        return js_sys::Promise::reject(&err.into());
    }
    let shelf = Rc::clone(shelf);
    future_to_promise(async move {
        Ok(match call {
            ArchiveCall::Delete(value, what) => {
                shelf.delete(&string_arg(&value, what)?).await?;
                JsValue::UNDEFINED
            }
            ArchiveCall::Purge => JsValue::from(shelf.purge().await?),
            // One refresh for every read (each await adds to the download).
            read => read_call(&shelf.refreshed(true).await?, read).await?,
        })
    })
}

/// The read `call` over `archives`, refreshed (a delete or purge, answered before, is
/// `undefined` here): its arguments read first, then one run over the archives, repeated while
/// it lacks texts the archive store fetches.
async fn read_call(
    archives: &Refreshed<'_, BrowserStorage, BrowserClock>,
    call: ArchiveCall,
) -> JsResult<JsValue> {
    let read = match call {
        ArchiveCall::Delete(..) | ArchiveCall::Purge => return Ok(JsValue::UNDEFINED),
        ArchiveCall::List => Read::List,
        ArchiveCall::Read(value, what) => Read::Whole(string_arg(&value, what)?),
        ArchiveCall::RecallText(args, max_tokens) => {
            // Arguments of the wrong shape are the model's: it gets a sentence (a number JSON
            // cannot carry is named, as in an options object).
            match options_from_js::<RecallArgs>(args, "recall tool arguments") {
                // The app's own text: a lone surrogate is given back as it came.
                Ok(args) => {
                    let text = archives
                        .recall_text(&args, max_tokens, &BrowserTimer)
                        .await?;
                    return Ok(lone_surrogates::to_js(&text).into());
                }
                Err(err) => {
                    return Ok(JsValue::from(format!(
                        "The arguments could not be read ({}): give {{ from, to }} (iteration \
                         numbers) or {{ query }} (text).",
                        err.message()
                    )))
                }
            }
        }
        ArchiveCall::Rehydrate(text, options, cooldown) => {
            let text = string_arg(&text, "rehydrate(text, options): text")?;
            let what = "rehydrate(text, options)";
            let options: RehydrateOptions = optional_options(options, what)?;
            let budget = option_in(options.budget_tokens, "budgetTokens", FROM_ONE, what)?
                .unwrap_or(DEFAULT_REHYDRATE_TOKENS);
            Read::Rehydrate(text, budget, cooldown)
        }
        ArchiveCall::Recall(value, what) => {
            // An iteration number: none is larger than the log's last (`u32::MAX`).
            let iterations = Range::Between(1, u64::from(u32::MAX));
            Read::Recall(whole_arg(&value, iterations, what)?)
        }
        ArchiveCall::Messages(value, shape) => {
            let what = "recall(callIdOrTurn)";
            let asked = match value.as_string() {
                Some(id) => Asked::Call(id),
                None => Asked::Turn(whole_arg(
                    &value,
                    Range::Between(0, u64::from(u32::MAX - 1)),
                    what,
                )?),
            };
            Read::Messages(asked, shape)
        }
    };
    archives.with(|a| read.over(a)).await
}

/// A read of the archive API with its arguments read.
enum Read {
    List,
    Whole(String),
    Recall(u32),
    Rehydrate(String, usize, Rc<RefCell<Cooldown>>),
    Messages(Asked, Shape),
}

impl Read {
    /// The answer over `a`; the cooldown is borrowed within one run only (another call may
    /// run while this one waits for a fetch).
    fn over(&self, a: &StoredArchives<'_, BrowserStorage, BrowserClock>) -> JsResult<JsValue> {
        Ok(match self {
            Read::List => to_js(&a.list()?)?,
            Read::Whole(key) => to_js(&a.read(key)?)?,
            Read::Recall(iteration) => match a.recall(*iteration)? {
                Some(data) => to_js(&data)?,
                None => JsValue::NULL,
            },
            Read::Rehydrate(text, budget, cooldown) => {
                to_js(&a.rehydrate(text, *budget, &mut cooldown.borrow_mut())?)?
            }
            Read::Messages(asked, shape) => json_to_js(&recalled_results(a, *shape, asked)?)?,
        })
    }
}

/// A rollback of the archive under `key` (an argument of the method `what`) by `rollback`:
/// refused `busy` as called while a compaction over the logs runs here or in another tab (its
/// archive may be the only copy of the originals), as a delete is.
pub(super) fn rollback_call<F>(
    shelf: &BrowserShelf,
    key: JsValue,
    what: &'static str,
    rollback: impl FnOnce(String) -> F + 'static,
) -> js_sys::Promise
where
    F: std::future::Future<Output = Result<(), CompactionError>>,
{
    if let Err(err) = shelf.may_roll_back() {
        return js_sys::Promise::reject(&err.into());
    }
    future_to_promise(async move {
        rollback(string_arg(&key, what)?).await?;
        Ok(JsValue::UNDEFINED)
    })
}
