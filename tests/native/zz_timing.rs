mod common;
use common::*;
use context_compactor::core::json::read::RawJson;
use context_compactor::core::log::entries::{ExecutionInput, ToolActivityInput};
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::storage::MemoryStore;
use context_compactor::core::ports::timer::run_ready;

fn big_session(logs: &Logs, iterations: u32) {
    let words = ["latency", "shard", "region", "p95", "drift", "baseline", "error_rate", "throughput", "window", "sample"];
    let w = |i: u32| words[(i as usize) % words.len()];
    let mut s = logs.borrow_mut();
    s.append_reasoning("Goal (iteration 1): audit every shard's latency and drift against the baseline.").unwrap();
    for n in 1..=iterations {
        s.start_iteration().unwrap();
        let r: Vec<String> = (0..100).map(|i| format!("Step {i}: the {} of {} moved against the {} by {} basis points, so I compare it with the previous shard and note why.", w(i), w(n + i), w(n * 3 + i), (n * 37 + i * 11) % 997)).collect();
        s.append_reasoning(&format!("Iteration {n}: {}", r.join(" "))).unwrap();
        let table: Vec<String> = (0..60).map(|r| format!("| shard_{n:04}_{r} | {} | {} | {} ms | {} | ok |", w(r), (n * r) % 991, (n + r) % 97, w(n + r))).collect();
        s.append_execution(ExecutionInput { success: true, code: format!("return readTable(\"shard_{n:04}\");"), result: Some(RawJson(serde_json::json!({"table": table.join("\n")}).to_string())), execution_time: Some(40.0), ..Default::default() }).unwrap();
        s.append_tool_activity(ToolActivityInput { kind: "fetch".into(), action: "get".into(), status: "success".into(), details: Some(RawJson(serde_json::json!(format!("shards/shard_{n}.json")).to_string())), extra: Default::default() }).unwrap();
        s.finish_iteration();
    }
    s.append_reasoning(&format!("Iteration {}: next, the summary of the drift.", iterations + 1)).unwrap();
}

#[test]
fn timing() {
    for iterations in [37u32, 74, 148] {
        let summary = "### 🎯 OBJECTIVE ACHIEVED\n- Every shard audited against the baseline.\n### 📊 KEY DISCOVERIES\n- The drift stays within bounds.\n### ✅ SUCCESSFUL SOLUTIONS\n- readTable(name) gives a shard's table.\n### 🔧 TOOLS USED SUCCESSFULLY\n- fetch get of shards/<name>.json\n### 💡 CRITICAL INSIGHTS\n- Compare each shard with the previous one.\n### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING\n- Continue from iteration 149.";
        let settings = CompactorSettings { context_window_tokens: 1_048_576, clearing: Default::default(), ..Default::default() };
        let mut settings = settings;
        settings.clearing = context_compactor::core::model::clearing::Clearing::Off;
        let rig = Rig::with(MemoryStore::default(), vec![Answer::Verbatim(summary.into()); 3], settings);
        big_session(&rig.logs, iterations);
        eprintln!("== {iterations} iterations, tokens {}", rig.logs.borrow().estimate_tokens().unwrap());
        let t = std::time::Instant::now();
        let r = run_ready(rig.compactor.compact(Trigger::ContextLimitError)).unwrap();
        eprintln!("total {:?} {:?}", t.elapsed(), r.map(|r| r.tokens_after));
    }
}
