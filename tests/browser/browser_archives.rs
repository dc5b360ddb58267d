//! The IndexedDB archive backend in real browsers: where a compaction's archive goes, byte for
//! byte; the move of localStorage archives on first open; a database another tab keeps blocked.
#![cfg(target_arch = "wasm32")]
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use context_compactor::web::{JsArchives, JsCompactor, JsLogStore};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

mod browser_support;

use browser_support::*;

wasm_bindgen_test_configure!(run_in_browser);

/// In the page: the archives in the package's database whose keys start with the argument, as
/// `{ key: text }` decompressed (`{}` before the package created it).
const DATABASE_ARCHIVES: &str = r#"
  const db = await new Promise((resolve) => {
    const request = indexedDB.open("context-compactor-archives");
    request.onupgradeneeded = () => request.transaction.abort();
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => resolve(null);
  });
  if (!db) return {};
  const store = db.transaction("archives").objectStore("archives");
  const answer = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
  const [keys, values] = await Promise.all([answer(store.getAllKeys()), answer(store.getAll())]);
  db.close();
  // Stored compressed ({ format: "gzip-utf16", gzip }): read as its text.
  const text = async (value) => {
    if (typeof value === "string" || value?.format !== "gzip-utf16") return value;
    const stream = new Blob([value.gzip]).stream().pipeThrough(new DecompressionStream("gzip"));
    const units = new Uint16Array(await new Response(stream).arrayBuffer());
    let out = "";
    for (let i = 0; i < units.length; i += 8192) out += String.fromCharCode.apply(null, units.subarray(i, i + 8192));
    return out;
  };
  const found = {};
  for (const [i, key] of keys.entries()) { if (key.startsWith(prefix)) found[key] = await text(values[i]); }
  return found;
"#;

async fn database_archives(prefix: &str) -> Vec<(String, String)> {
    let read = js_sys::Function::new_with_args(
        "prefix",
        &format!("return (async () => {{ {DATABASE_ARCHIVES} }})();"),
    );
    let promise: js_sys::Promise = read
        .call1(&JsValue::NULL, &prefix.into())
        .unwrap()
        .unchecked_into();
    let found = JsFuture::from(promise).await.unwrap();
    let mut out: Vec<(String, String)> = js_sys::Object::entries(&found.unchecked_into())
        .iter()
        .map(|pair| {
            let pair: js_sys::Array = pair.unchecked_into();
            (
                pair.get(0).as_string().unwrap(),
                pair.get(1).as_string().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Every localStorage key under `prefix` cleared, then `iterations` finished ones; an entry of
/// the first holds a lone surrogate and a number beyond 2^53 (as GDRS stores them).
fn session(prefix: &str, iterations: u32) -> JsLogStore {
    let s = storage();
    let keys: Vec<String> = (0..s.length().unwrap())
        .filter_map(|i| s.key(i).unwrap())
        .filter(|k| k.starts_with(prefix))
        .collect();
    for key in keys {
        s.remove_item(&key).unwrap();
    }
    let logs = JsLogStore::new(Some(
        js(&format!(r#"{{"prefix":"{prefix}"}}"#)).unchecked_into(),
    ))
    .unwrap();
    grow(&logs, 1, iterations);
    // A lone surrogate, as a JavaScript string can hold it.
    let reasoning = s
        .get_item(&format!("{prefix}reasoning_log"))
        .unwrap()
        .unwrap();
    let reasoning = reasoning.replacen("Iteration 1:", "Iteration 1: Ab\\ud83d", 1);
    s.set_item(&format!("{prefix}reasoning_log"), &reasoning)
        .unwrap();
    logs
}

fn offline(logs: &JsLogStore, extra_options: &str) -> JsCompactor {
    let options = js(&format!(
        r#"{{"provider":{{"type":"offline"}},"contextWindowTokens":1000{extra_options}}}"#
    ));
    JsCompactor::over(logs.shared(), options.unchecked_into(), None).unwrap()
}

async fn settle(promise: js_sys::Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(promise).await
}

#[wasm_bindgen_test]
async fn a_compaction_archives_in_indexeddb_byte_for_byte_and_reads_it_back() {
    let prefix = "idb_ok_";
    let logs = session(prefix, 6);
    let compactor = offline(&logs, "");
    let result = json_of(&settle(compactor.compact(None)).await.unwrap());
    let key = result["archiveKey"].as_str().unwrap().to_owned();
    // Not in localStorage: in the database, as the package wrote it.
    assert!(storage().get_item(&key).unwrap().is_none());
    let stored = database_archives(prefix).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].0, key);
    let text = &stored[0].1;
    assert!(
        text.contains("1.1805916207174113e+21"),
        "2^70 as JSON.stringify wrote it"
    );
    assert!(text.contains("Ab\\ud83d"), "the lone surrogate kept");
    // The archive API reads it; recall finds iteration 1's text with its lone surrogate.
    // Its texts hold a lone surrogate, which JSON text cannot: read its fields in place.
    let archive = settle(compactor.read_archive(key.clone().into()))
        .await
        .unwrap();
    let iterations = js_sys::Reflect::get(&archive, &"iterations".into()).unwrap();
    assert_eq!(json_of(&iterations)[0], 1);
    let recalled = settle(compactor.recall(1.into())).await.unwrap();
    let first: String = js_sys::Reflect::get(&recalled, &"reasoningLog".into())
        .unwrap()
        .unchecked_into::<js_sys::Array>()
        .get(1)
        .as_string()
        .unwrap_or_default();
    assert!(first.starts_with("Iteration 1: Ab"), "{first}");
    // Archives over the same logs, without a provider, see it too; rollback removes it there.
    let archives = JsArchives::new(JsValue::from(logs), None).unwrap();
    let listed = json_of(&settle(archives.list()).await.unwrap());
    assert_eq!(listed[0]["key"], key.as_str());
    settle(archives.rollback(key.clone().into())).await.unwrap();
    assert!(database_archives(prefix).await.is_empty());
}

#[wasm_bindgen_test]
async fn archives_in_localstorage_move_to_indexeddb_on_first_open() {
    let prefix = "idb_move_";
    let logs = session(prefix, 6);
    let local = offline(&logs, r#","archiveStore":"localStorage""#);
    let result = json_of(&settle(local.compact(None)).await.unwrap());
    let key = result["archiveKey"].as_str().unwrap().to_owned();
    let text = storage()
        .get_item(&key)
        .unwrap()
        .expect("archived in localStorage");
    assert!(database_archives(prefix).await.is_empty());

    let moved = offline(&logs, "");
    let listed = json_of(&settle(moved.archives()).await.unwrap());
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert!(
        storage().get_item(&key).unwrap().is_none(),
        "the localStorage key went"
    );
    assert_eq!(
        database_archives(prefix).await,
        vec![(key, text)],
        "byte for byte"
    );
}

#[wasm_bindgen_test]
async fn a_database_kept_blocked_by_another_version_change_fails_the_compaction_cleanly() {
    let prefix = "idb_blocked_";
    let logs = session(prefix, 6);
    // Another script holds a connection it never closes and asks for a newer version: the
    // upgrade waits on it, and every later open waits behind the upgrade.
    let block = eval(
        r#"return new Promise((resolve) => {
          const first = indexedDB.open("context-compactor-archives");
          first.onsuccess = () => {
            globalThis.__held = first.result;
            const upgrade = indexedDB.open("context-compactor-archives", first.result.version + 1);
            upgrade.onblocked = () => resolve("blocked");
            globalThis.__upgrade = upgrade;
          };
        });"#,
    );
    let compactor = offline(&logs, "");
    // Its connection closes on the version change; the first open is the package's own.
    assert_eq!(
        JsFuture::from(block.unchecked_into::<js_sys::Promise>())
            .await
            .unwrap(),
        "blocked"
    );
    let before = dump(prefix);
    let err = settle(compactor.compact(None)).await.unwrap_err();
    assert_eq!(error_code(&err), "storage_unavailable");
    assert!(
        error_message(&err).contains("blocked"),
        "{}",
        error_message(&err)
    );
    assert_eq!(dump(prefix), before, "logs, journal and lease as they were");
    // The other script lets go: the upgrade goes through and the next compaction works.
    eval("globalThis.__held.close(); return null;");
    let upgraded = eval(
        "return new Promise((resolve) => { const u = globalThis.__upgrade; \
         u.onsuccess = () => { u.result.close(); resolve(true); }; if (u.readyState === 'done') { u.result.close(); resolve(true); } });",
    );
    JsFuture::from(upgraded.unchecked_into::<js_sys::Promise>())
        .await
        .unwrap();
    let result = json_of(&settle(compactor.compact(None)).await.unwrap());
    let key = result["archiveKey"].as_str().unwrap();
    assert_eq!(database_archives(prefix).await[0].0, key);
}

/// In the page: beside the archive `first` (a key in localStorage), two older ones the next
/// compaction must evict: one whose start read ends in half an emoji (UTF-16 unit 4,095 is a
/// high surrogate) and one whose head is longer than that start (1,500 iterations). Returns
/// their keys.
const PLANT_OLDER_ARCHIVES: &str = r#"
  const text = localStorage.getItem(first);
  const ts = Number(first.split("_").pop());
  const older = (by) => first.replace(String(ts), String(ts - by));
  const at = text.indexOf('"reasoningLog":[') + 16;
  const split = text.slice(0, at) + JSON.stringify("x".repeat(4094 - at) + "😀") + "," + text.slice(at);
  if (split.charCodeAt(4095) !== 0xd83d) throw new Error("the emoji is not at the cut");
  const many = Array.from({ length: 1500 }, (_, i) => i + 1);
  const long = text.replace(/"iterations":\[[^\]]*\]/, `"iterations":${JSON.stringify(many)}`);
  if (long.indexOf('"trigger"') < 4096) throw new Error("the head fits the start");
  localStorage.setItem(older(10), split);
  localStorage.setItem(older(20), long);
  return [older(10), older(20)];
"#;

#[wasm_bindgen_test]
async fn archives_in_local_storage_beyond_max_archives_are_evicted_whatever_their_heads_hold() {
    let prefix = "ls_heads_";
    let logs = session(prefix, 6);
    let compactor = offline(&logs, r#","archiveStore":"localStorage","maxArchives":1"#);
    let first = json_of(&settle(compactor.compact(None)).await.unwrap())["archiveKey"]
        .as_str()
        .unwrap()
        .to_owned();
    let plant = js_sys::Function::new_with_args("first", PLANT_OLDER_ARCHIVES);
    let planted = json_of(&plant.call1(&JsValue::NULL, &first.clone().into()).unwrap());
    for n in 7..=12 {
        logs.start_iteration().unwrap();
        let text = format!("Iteration {n}: {}", "checked the totals again. ".repeat(12));
        logs.append_reasoning(JsValue::from(&text)).unwrap();
        logs.finish_iteration();
    }
    let newest = json_of(&settle(compactor.compact(None)).await.unwrap())["archiveKey"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(storage().get_item(&newest).unwrap().is_some());
    for key in [
        first.as_str(),
        planted[0].as_str().unwrap(),
        planted[1].as_str().unwrap(),
    ] {
        assert!(
            storage().get_item(key).unwrap().is_none(),
            "{key} is beyond maxArchives 1 and is evicted"
        );
    }
}

#[wasm_bindgen_test]
async fn archives_in_indexeddb_do_not_stay_in_wasm_memory_once_committed() {
    let prefix = "idb_memory_";
    let logs = session(prefix, 1);
    let compactor = offline(&logs, r#","archiveExpiryDays":365"#);
    let options = js(r#"{"trigger":"context_limit_error"}"#);
    let memory = || {
        let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
        memory
            .buffer()
            .unchecked_into::<js_sys::ArrayBuffer>()
            .byte_length() as usize
    };
    let mut after_fourth = 0;
    // Each compaction archives about 400 KB: twenty of them would hold 8 MB in wasm memory.
    for k in 1..=24u32 {
        for i in 0..4u32 {
            logs.start_iteration().unwrap();
            let n = k * 10 + i;
            let text = format!(
                "Iteration {n}: {}",
                format!("row {n} checked; ").repeat(6_000)
            );
            logs.append_reasoning(JsValue::from(&text)).unwrap();
            logs.finish_iteration();
        }
        settle(compactor.compact(Some(options.clone().unchecked_into())))
            .await
            .unwrap_or_else(|err| panic!("compaction {k}: {err:?}"));
        if k == 4 {
            after_fourth = memory();
        }
    }
    let grown = memory() - after_fourth;
    assert!(
        grown < 3_000_000,
        "wasm memory grew {grown} bytes over twenty compactions of 400 KB archives"
    );
    // (Read after measuring: this copies every archive into wasm memory.)
    assert_eq!(
        database_archives(prefix).await.len(),
        24,
        "none evicted by count"
    );
}

#[wasm_bindgen_test]
async fn at_eighty_percent_of_the_quota_a_compaction_tells_the_app_with_the_browsers_figures() {
    let prefix = "idb_pressure_";
    let logs = session(prefix, 6);
    let compactor = offline(&logs, "");
    // The browser reports the origin 90% full (WebKitGTK has no `navigator.storage`: one is
    // lent for the test).
    eval(
        "globalThis.__lent = !navigator.storage;
         if (globalThis.__lent) Object.defineProperty(navigator, 'storage', { configurable: true, value: {} });
         Object.defineProperty(navigator.storage, 'estimate', { configurable: true, value: async () => ({ usage: 900000, quota: 1000000 }) });
         return null;",
    );
    let seen = eval("return new Promise((resolve) => { globalThis.__pressure = resolve; });");
    let listen = js_sys::Function::new_with_args(
        "target",
        "target.addEventListener('storage_pressure', (e) => globalThis.__pressure(e.detail));",
    );
    listen.call1(&JsValue::NULL, &compactor.events()).unwrap();
    let outcome = settle(compactor.compact(None)).await;
    eval(
        "delete navigator.storage.estimate; if (globalThis.__lent) delete navigator.storage; return null;",
    );
    outcome.unwrap();
    let detail = json_of(
        &JsFuture::from(seen.unchecked_into::<js_sys::Promise>())
            .await
            .unwrap(),
    );
    assert_eq!(detail["usage"], 900000.0);
    assert_eq!(detail["quota"], 1000000.0);
    assert_eq!(detail["share"], 0.9);
    assert_eq!(detail["purged"], serde_json::json!([]));
}

/// Appends `count` finished iterations to `logs`, numbered from `first`; each execution
/// returns a number beyond 2^53 (as GDRS stores them).
fn grow(logs: &JsLogStore, first: u32, count: u32) {
    for n in first..first + count {
        logs.start_iteration().unwrap();
        let text = format!(
            "Iteration {n}: grouped sales.csv by region; total {} rows.",
            40_000 + n * 17
        );
        logs.append_reasoning(JsValue::from(&text)).unwrap();
        logs.append_execution(
            js(&format!(
                r#"{{"success":true,"code":"return {n};","result":1180591620717411303424,"executionTime":{n}}}"#
            ))
            .unchecked_into(),
        )
        .unwrap();
        logs.finish_iteration();
    }
}

#[wasm_bindgen_test]
async fn a_pages_first_compaction_reads_no_kept_archive_and_the_idle_page_reads_their_digests() {
    let prefix = "idb_idle_";
    // Two archives of an earlier page, expired by the time the next page opens (2.6 s of
    // life); the live summary names the second (its facts are carried), none the first.
    let logs = session(prefix, 6);
    let expiring = r#","archiveExpiryDays":0.00003"#;
    let earlier = offline(&logs, expiring);
    let first = json_of(&settle(earlier.compact(None)).await.unwrap());
    let first = first["archiveKey"].as_str().unwrap().to_owned();
    grow(&logs, 7, 6);
    settle(earlier.compact(None)).await.unwrap();
    sleep_ms(3000).await;
    let stored = |key: String| async move {
        database_archives(prefix)
            .await
            .iter()
            .any(|(stored, _)| *stored == key)
    };

    // The next page's compaction, made at once, reads no archive's text but the one the live
    // summary names: the first archive's digest is not read, so it is not removed yet.
    let opened = JsLogStore::new(Some(
        js(&format!(r#"{{"prefix":"{prefix}"}}"#)).unchecked_into(),
    ))
    .unwrap();
    grow(&opened, 13, 6);
    let compactor = offline(&opened, expiring);
    settle(compactor.compact(None)).await.unwrap();
    assert!(stored(first.clone()).await, "{first} was read at once");

    // Once the page has been idle its digest is read, and the next compaction removes it.
    sleep_ms(600).await;
    grow(&opened, 19, 6);
    settle(compactor.compact(None)).await.unwrap();
    assert!(!stored(first.clone()).await, "{first} was never read");
}
