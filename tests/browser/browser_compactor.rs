//! Whole compactions in real browsers over real localStorage, with a `custom` provider written
//! in JavaScript; events through the `EventTarget`.
#![cfg(target_arch = "wasm32")]
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use context_compactor::web::{JsCompactor, JsLogStore};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

mod browser_support;

use browser_support::*;

wasm_bindgen_test_configure!(run_in_browser);

const SUMMARY: &str = "### 🎯 OBJECTIVE ACHIEVED\n- Totals per region computed.\n### 📊 KEY DISCOVERIES\n- north 91k, south 65k.\n### ✅ SUCCESSFUL SOLUTIONS\n- byRegion loop.\n### 🔧 TOOLS USED SUCCESSFULLY\n- vfs write\n### 💡 CRITICAL INSIGHTS\n- groupBy is not an array method.\n### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING\n- Next: monthly view.";

/// Removes every key under `prefix`, then returns a store with `iterations` finished ones.
fn session(prefix: &str, iterations: u32) -> JsLogStore {
    let s = storage();
    let keys: Vec<String> = (0..s.length().unwrap())
        .filter_map(|i| s.key(i).unwrap())
        .collect();
    for key in keys.iter().filter(|k| k.starts_with(prefix)) {
        s.remove_item(key).unwrap();
    }
    let logs = JsLogStore::new(Some(
        js(&format!(r#"{{"prefix":"{prefix}"}}"#)).unchecked_into(),
    ))
    .unwrap();
    for n in 1..=iterations {
        logs.start_iteration().unwrap();
        logs.append_reasoning(JsValue::from(&format!("Iteration {n}: loaded sales.csv with {} rows and grouped by region; the totals match the report within 0.{n}%.", 40_000 + n * 17))).unwrap();
        logs.append_execution(js(&format!(r#"{{"success":{},"code":"const rows = load('sales.csv');\nreturn rows.filter(r => r.region === 'north').length + {n};","result":{},"executionTime":{}}}"#, n % 3 != 0, 1000 + n, 10 + n)).unchecked_into()).unwrap();
        logs.append_tool_activity(
            js(&format!(
                r#"{{"type":"vfs","action":"write","status":"success","details":"notes/{n}.md"}}"#
            ))
            .unchecked_into(),
        )
        .unwrap();
        logs.finish_iteration();
    }
    logs
}

/// A compactor whose custom provider answers with `globalThis.__answers` in turn, each with the
/// facts the prompt lists appended (a model that does what the prompt asks), and records each
/// prompt in `globalThis.__prompts`; every event lands in `globalThis.__events`.
fn compactor(logs: &JsLogStore, answers: &[&str], extra_options: &str) -> JsCompactor {
    let answers = serde_json::to_string(answers).unwrap();
    eval(&format!(
        "globalThis.__answers = {answers}; globalThis.__prompts = []; globalThis.__events = [];"
    ));
    let generate = js_sys::Function::new_with_args(
        "prompt, settings",
        "globalThis.__prompts.push([prompt, settings]); const a = globalThis.__answers.shift(); \
         if (a === 'THROW') throw new Error('model exploded'); \
         if (a === 'NUMBER') throw 1.5e21; \
         const block = prompt.split('## FACTS THE SUMMARY MUST KEEP\\n')[1]; \
         const facts = block ? block.split('\\n## ')[0].split('\\n').filter(l => l.startsWith('- ')) : []; \
         return Promise.resolve(typeof a === 'string' && facts.length ? a + '\\n' + facts.join('\\n') : a);",
    );
    let provider = js(r#"{"type":"custom"}"#);
    js_sys::Reflect::set(&provider, &"generate".into(), &generate).unwrap();
    let options = js(&format!(
        r#"{{"contextWindowTokens":1500,"retryDelayMs":5{extra_options}}}"#
    ));
    js_sys::Reflect::set(&options, &"provider".into(), &provider).unwrap();
    let compactor = JsCompactor::over(logs.shared(), options.unchecked_into(), None).unwrap();
    let listen = js_sys::Function::new_with_args(
        "target",
        "for (const t of ['compaction_start','compaction_phase_change','compaction_progress','compaction_archived','compaction_complete','compaction_error','compaction_rolled_back']) \
         target.addEventListener(t, e => globalThis.__events.push([e.type, e.detail]));",
    );
    listen.call1(&JsValue::NULL, &compactor.events()).unwrap();
    compactor
}

async fn settle(promise: js_sys::Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(promise).await
}

fn events() -> serde_json::Value {
    json_of(&eval("return globalThis.__events;"))
}

#[wasm_bindgen_test]
async fn a_whole_compaction_swaps_the_summary_in_archives_and_reports_events() {
    let prefix = "bc_ok_";
    let logs = session(prefix, 6);
    let before_reasoning = json_of(&logs.reasoning_log().unwrap());
    let compactor = compactor(&logs, &[SUMMARY], "");
    assert!(json_of(&compactor.can_compact().unwrap())["ok"]
        .as_bool()
        .unwrap());
    let plan = json_of(&compactor.plan().unwrap());
    assert_eq!(plan["iterations"], serde_json::json!([1, 5]));

    let expected_prompt = String::from(compactor.build_prompt().unwrap());
    let result = json_of(&settle(compactor.compact(None)).await.unwrap());
    assert_eq!(result["iterations"], serde_json::json!([1, 5]));
    assert_eq!(result["attempts"], 1);
    assert!(result["tokensAfter"].as_u64().unwrap() < result["tokensBefore"].as_u64().unwrap());
    let prompt = json_of(&eval("return globalThis.__prompts[0];"));
    assert_eq!(prompt[0].as_str().unwrap(), expected_prompt);
    assert_eq!(prompt[1]["temperature"], 0.1);
    assert_eq!(prompt[1]["maxOutputTokens"], 4000);

    let reasoning = json_of(&logs.reasoning_log().unwrap());
    let first = reasoning[0].as_str().unwrap();
    // The header, then where the originals are, then the summary.
    let archive_key = result["archiveKey"].as_str().unwrap();
    assert!(first.starts_with(&format!(
        "=== COMPACTED SUMMARY (Iterations 1-5) ===\n(Originals of iterations 1-5: archive \
         {archive_key}; the recall tool reads them back.)\n### 🎯 OBJECTIVE ACHIEVED"
    )));
    assert_eq!(result["coverage"]["missing"], serde_json::json!([]));
    assert_eq!(result["coverage"]["required"], plan["ledger"]);
    assert!(first.ends_with("=== END COMPACTED SUMMARY ==="));
    assert_eq!(reasoning[1], "=== ITERATION 6 ===");
    assert_eq!(
        json_of(&logs.execution_log().unwrap())
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let key = result["archiveKey"].as_str().unwrap().to_owned();
    assert!(key.starts_with("bc_ok_archived_logs_"));
    let archive = json_of(
        &settle(compactor.read_archive(JsValue::from(&key)))
            .await
            .unwrap(),
    );
    assert_eq!(
        archive["data"]["reasoningLog"].as_array().unwrap()[..],
        before_reasoning.as_array().unwrap()[..10]
    );
    assert_eq!(archive["trigger"], "user");
    let listed = json_of(&settle(compactor.archives()).await.unwrap());
    assert_eq!(listed[0]["key"], key.as_str());
    assert!(listed[0]["bytes"].as_u64().unwrap() > 1000);

    let names: Vec<String> = events()
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[0].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names.first().unwrap(), "compaction_start");
    assert_eq!(names.last().unwrap(), "compaction_complete");
    assert!(
        names.iter().position(|n| n == "compaction_archived")
            < names.iter().rposition(|n| n == "compaction_phase_change")
    );
    let percents: Vec<u64> = events()
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e[0] == "compaction_progress")
        .map(|e| e[1]["percent"].as_u64().unwrap())
        .collect();
    assert!(percents.windows(2).all(|w| w[0] <= w[1]) && percents.last() == Some(&100));
    assert_eq!(
        events().as_array().unwrap().last().unwrap()[1]["result"],
        result
    );

    let metrics = json_of(&compactor.metrics().unwrap());
    assert_eq!(metrics["successfulCompactions"], 1);
    assert_eq!(
        JsValue::from(compactor.phase()).as_string().unwrap(),
        "complete"
    );
}

#[wasm_bindgen_test]
async fn rollback_restores_the_originals_and_keeps_later_appends() {
    let prefix = "bc_rb_";
    let logs = session(prefix, 5);
    let before = dump(prefix);
    let compactor = compactor(&logs, &[SUMMARY], "");
    let result = json_of(&settle(compactor.compact(None)).await.unwrap());
    logs.append_reasoning(JsValue::from("after the compaction"))
        .unwrap();
    settle(compactor.rollback(JsValue::from(result["archiveKey"].as_str().unwrap())))
        .await
        .unwrap();
    let after = dump(prefix);
    let reasoning: Vec<String> = serde_json::from_str(
        &after
            .iter()
            .find(|(k, _)| k.ends_with("reasoning_log"))
            .unwrap()
            .1,
    )
    .unwrap();
    let original: Vec<String> = serde_json::from_str(
        &before
            .iter()
            .find(|(k, _)| k.ends_with("reasoning_log"))
            .unwrap()
            .1,
    )
    .unwrap();
    assert_eq!(reasoning[..original.len()], original[..]);
    assert_eq!(reasoning.last().unwrap(), "after the compaction");
    for log in ["execution_log", "tool_activity_log"] {
        let find =
            |d: &Vec<(String, String)>| d.iter().find(|(k, _)| k.ends_with(log)).unwrap().1.clone();
        assert_eq!(find(&after), find(&before), "{log} restored byte for byte");
    }
    assert_eq!(
        json_of(&settle(compactor.archives()).await.unwrap())
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        events().as_array().unwrap().last().unwrap()[0],
        "compaction_rolled_back"
    );
}

#[wasm_bindgen_test]
async fn missing_sections_are_retried_once_then_invalid_summary_leaves_storage_untouched() {
    let prefix = "bc_bad_";
    let logs = session(prefix, 5);
    let partial = "### 🎯 OBJECTIVE ACHIEVED\n- only one section here, long enough to pass the length rule of a hundred characters";
    let compactor = compactor(&logs, &[partial, partial, SUMMARY], "");
    let before = dump(prefix);
    let err = settle(compactor.compact(None)).await.unwrap_err();
    assert_eq!(error_code(&err), "invalid_summary");
    assert_eq!(dump(prefix), before);
    let prompts = json_of(&eval("return globalThis.__prompts.map(p => p[0]);"));
    assert_eq!(prompts.as_array().unwrap().len(), 2, "exactly one retry");
    assert!(prompts[1]
        .as_str()
        .unwrap()
        .contains("Missing required section: ### 📊 KEY DISCOVERIES"));
    let last = events().as_array().unwrap().last().unwrap().clone();
    assert_eq!(last[0], "compaction_error");
    assert_eq!(last[1]["code"], "invalid_summary");
    assert_eq!(
        json_of(&compactor.metrics().unwrap())["failedCompactions"],
        1
    );

    // The retry succeeds when the second answer is complete.
    let compactor2 = self::compactor(&logs, &[partial, SUMMARY], "");
    let result = json_of(&settle(compactor2.compact(None)).await.unwrap());
    assert_eq!(result["attempts"], 2);
    assert!(events()
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e[0] == "compaction_phase_change" && e[1]["phase"] == "retrying"));
}

#[wasm_bindgen_test]
async fn a_throwing_provider_busy_and_not_allowed_are_typed_errors() {
    let prefix = "bc_err_";
    let logs = session(prefix, 5);
    let compactor = compactor(&logs, &["THROW", "THROW"], "");
    let before = dump(prefix);
    let err = settle(compactor.compact(None)).await.unwrap_err();
    assert_eq!(error_code(&err), "llm_network");
    assert!(js_sys::Reflect::get(&err, &"message".into())
        .unwrap()
        .as_string()
        .unwrap()
        .contains("model exploded"));
    assert_eq!(dump(prefix), before);
    // A thrown number is named as JavaScript writes it.
    let compactor = self::compactor(&logs, &["NUMBER", "NUMBER"], "");
    let err = settle(compactor.compact(None)).await.unwrap_err();
    let message = js_sys::Reflect::get(&err, &"message".into()).unwrap();
    assert!(
        message.as_string().unwrap().contains("the number 1.5e+21"),
        "{message:?}"
    );
    assert_eq!(dump(prefix), before);

    let compactor = self::compactor(&logs, &[SUMMARY], "");
    let first = compactor.compact(None);
    let second = settle(compactor.compact(None)).await.unwrap_err();
    assert_eq!(error_code(&second), "busy");
    settle(first).await.unwrap();

    let few = session("bc_few_", 2);
    let compactor = self::compactor(&few, &[SUMMARY], "");
    let err = settle(compactor.compact(None)).await.unwrap_err();
    assert_eq!(error_code(&err), "not_allowed");
    let verdict = json_of(&compactor.can_compact().unwrap());
    assert_eq!(verdict["ok"], false);
    assert!(verdict["reason"]
        .as_str()
        .unwrap()
        .contains("at least 3 completed iterations"));
}

#[wasm_bindgen_test]
async fn a_compaction_waits_for_the_running_iteration() {
    let prefix = "bc_wait_";
    let logs = session(prefix, 5);
    logs.start_iteration().unwrap();
    let compactor = compactor(&logs, &[SUMMARY], "");
    let pending = compactor.compact(None);
    // Let the engine reach the waiting phase (within 10 s: the three engines' tests run side by
    // side), then finish the iteration.
    let phase = || JsValue::from(compactor.phase()).as_string().unwrap();
    for _ in 0..400 {
        if phase() == "waiting" {
            break;
        }
        sleep_ms(25).await;
    }
    assert_eq!(phase(), "waiting");
    logs.append_reasoning(JsValue::from("still thinking in iteration 6"))
        .unwrap();
    logs.finish_iteration();
    let result = json_of(&settle(pending).await.unwrap());
    assert_eq!(result["iterations"], serde_json::json!([1, 5]));
    let reasoning = json_of(&logs.reasoning_log().unwrap());
    assert_eq!(reasoning[2], "still thinking in iteration 6");
}

#[wasm_bindgen_test]
fn validate_summary_and_required_sections_are_exported() {
    let verdict = json_of(
        &context_compactor::web::validate_summary(SUMMARY.into())
            .unwrap()
            .into(),
    );
    assert_eq!(verdict, serde_json::json!({"valid": true, "errors": []}));
    let verdict = json_of(
        &context_compactor::web::validate_summary("I cannot do that.".into())
            .unwrap()
            .into(),
    );
    assert_eq!(verdict["valid"], false);
    assert_eq!(verdict["errors"].as_array().unwrap().len(), 5);
    assert_eq!(
        context_compactor::web::required_sections(),
        vec![
            "OBJECTIVE ACHIEVED",
            "KEY DISCOVERIES",
            "SUCCESSFUL SOLUTIONS"
        ]
    );
}

#[wasm_bindgen_test]
async fn a_custom_provider_gets_a_signal_that_abort_trips() {
    let prefix = "bc_abort_";
    let logs = session(prefix, 5);
    let generate = js_sys::Function::new_with_args(
        "prompt, settings",
        "globalThis.__signal = settings.signal; return new Promise(() => {});",
    );
    let provider = js(r#"{"type":"custom"}"#);
    js_sys::Reflect::set(&provider, &"generate".into(), &generate).unwrap();
    let options = js(r#"{"contextWindowTokens":1500,"timeoutMs":60000}"#);
    js_sys::Reflect::set(&options, &"provider".into(), &provider).unwrap();
    let compactor = JsCompactor::over(logs.shared(), options.unchecked_into(), None).unwrap();
    let before = dump(prefix);
    let pending = compactor.compact(None);
    // Three engines' tests run side by side: the call may take more than a moment to come.
    assert!(holds_within("return globalThis.__signal instanceof AbortSignal;", 10_000).await);
    assert_eq!(
        json_of(&eval("return !globalThis.__signal.aborted;")),
        serde_json::json!(true)
    );
    compactor.abort();
    let err = settle(pending).await.unwrap_err();
    assert_eq!(error_code(&err), "aborted");
    assert_eq!(
        json_of(&eval("return globalThis.__signal.aborted;")),
        serde_json::json!(true),
        "the provider's signal is aborted with the compaction"
    );
    assert_eq!(dump(prefix), before);
}
