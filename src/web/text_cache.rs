//! Rust copies of the long texts last read from or written to localStorage.
//!
//! Moving a string from JavaScript into wasm memory costs a few nanoseconds a character, and a
//! compaction reads the same logs more than once (for the rules, then again just before the
//! swap to catch appends). A cached copy is used only when the JavaScript string now stored is
//! identical (`===`) to the one it was made from, so a text changed by any other writer (a
//! script, another tab) is always read afresh.

use std::cell::RefCell;

use js_sys::{JsString, Uint8Array};
use wasm_bindgen::prelude::*;

use super::lone_surrogates;

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
        return lone_surrogates::from_js(js);
    }
    let hit = RECENT.with_borrow(|recent| {
        recent
            .iter()
            .find(|cached| cached.key == key && same_string(&cached.js, js))
            .map(|cached| cached.text.clone())
    });
    hit.unwrap_or_else(|| {
        let text = lone_surrogates::from_js_with(js, utf8_of);
        remember(key, js, &text);
        text
    })
}

#[wasm_bindgen]
extern "C" {
    /// The browser's `TextEncoder`.
    #[wasm_bindgen(js_name = TextEncoder)]
    type Utf8Encoder;

    #[wasm_bindgen(constructor, js_class = "TextEncoder")]
    fn new() -> Utf8Encoder;

    #[wasm_bindgen(method, js_name = encodeInto)]
    fn encode_into(this: &Utf8Encoder, source: &JsString, destination: &Uint8Array) -> Written;

    /// What `encodeInto` returns.
    type Written;

    #[wasm_bindgen(method, getter)]
    fn written(this: &Written) -> u32;

    /// The UTF-16 units of the source it took.
    #[wasm_bindgen(method, getter)]
    fn read(this: &Written) -> u32;
}

thread_local! {
    static ENCODER: Utf8Encoder = Utf8Encoder::new();
}

/// `js` as UTF-8, encoded by the browser straight into wasm memory. (wasm-bindgen's own
/// conversion copies the ASCII prefix one character at a time in JavaScript, which is most
/// of a log.) Should the view be detached before the browser writes, the text is moved the
/// slow way instead.
fn utf8_of(js: &JsString) -> String {
    let capacity = js.length() as usize * 3;
    let mut bytes: Vec<u8> = Vec::with_capacity(capacity);
    let written = ENCODER.with(|encoder| {
        // SAFETY: the view covers exactly the vector's unused capacity and is gone before the
        // vector is touched again. It writes at most `capacity` bytes (three per UTF-16 unit
        // at most) and reports how many.
        let view = unsafe { Uint8Array::view_mut_raw(bytes.as_mut_ptr(), capacity) };
        encode_whole(encoder, js, &view)
    });
    let Some(written) = written else {
        return String::from(js);
    };
    // SAFETY: `written` bytes were initialised by `encodeInto` (never more than `capacity`).
    unsafe { bytes.set_len((written as usize).min(capacity)) };
    bytes.shrink_to_fit();
    String::from_utf8(bytes).unwrap_or_else(|_| String::from(js))
}

/// The bytes `encodeInto` wrote of `js` into `destination`, when it took all of `js`: `None`
/// when it took less. A growth of wasm memory between the view's making and this call (the
/// package built with reference types kept the view in a table whose slab could grow it)
/// detaches the view's buffer: the browser then writes nothing and a whole log would read as
/// empty.
fn encode_whole(encoder: &Utf8Encoder, js: &JsString, destination: &Uint8Array) -> Option<u32> {
    let outcome = encoder.encode_into(js, destination);
    (outcome.read() == js.length()).then(|| outcome.written())
}

/// Whether `js` encodes whole into `destination` (what [`utf8_of`] checks before it trusts the
/// bytes), for the browser tests, which detach a view's buffer as a memory growth does.
#[doc(hidden)]
pub fn encodes_whole(js: &JsString, destination: &Uint8Array) -> bool {
    ENCODER.with(|encoder| encode_whole(encoder, js, destination).is_some())
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
