//! Rust copies of the long texts last read from or written to localStorage.
//!
//! Moving a string from JavaScript into wasm memory costs a few nanoseconds a character, and a
//! compaction reads the same logs more than once (for the rules, then again just before the
//! swap to catch appends). A cached copy is used only when the JavaScript string now stored is
//! identical (`===`) to the one it was made from, so a text changed by any other writer (a
//! script, another tab) is always read afresh.

use std::cell::RefCell;

use js_sys::JsString;
use wasm_bindgen::JsValue;

/// Texts kept: the three logs, the newest archive, and two more.
const CAPACITY: usize = 6;

/// Shorter texts are cheaper to move than to compare and are not kept.
const MIN_CACHED_UNITS: u32 = 2048;

struct CachedText {
    key: String,
    js: JsString,
    text: String,
}

thread_local! {
    static RECENT: RefCell<Vec<CachedText>> = const { RefCell::new(Vec::new()) };
}

/// The Rust text of `js`, just read under `key`: the cached copy when `js` is the string it
/// was made from, else a fresh conversion (kept when long).
pub fn text_of(key: &str, js: &JsString) -> String {
    if js.length() < MIN_CACHED_UNITS {
        return String::from(js);
    }
    let hit = RECENT.with_borrow(|recent| {
        recent
            .iter()
            .find(|cached| cached.key == key && same_string(&cached.js, js))
            .map(|cached| cached.text.clone())
    });
    hit.unwrap_or_else(|| {
        let text = String::from(js);
        remember(key, js, &text);
        text
    })
}

/// Records that `key` now holds `js`, whose Rust text is `text`.
pub fn remember(key: &str, js: &JsString, text: &str) {
    forget(key);
    if js.length() < MIN_CACHED_UNITS {
        return;
    }
    RECENT.with_borrow_mut(|recent| {
        if recent.len() == CAPACITY {
            recent.remove(0);
        }
        recent.push(CachedText {
            key: key.to_owned(),
            js: js.clone(),
            text: text.to_owned(),
        });
    });
}

/// Drops any copy kept for `key`.
pub fn forget(key: &str) {
    RECENT.with_borrow_mut(|recent| recent.retain(|cached| cached.key != key));
}

/// `a === b`.
fn same_string(a: &JsString, b: &JsString) -> bool {
    AsRef::<JsValue>::as_ref(a) == AsRef::<JsValue>::as_ref(b)
}
