// Runs in headless Chromium: builds seeded sessions, then times compact() against the plain-JS
// baseline and the localStorage/JSON floor. Results land in window.benchResults.
import init, { LogStore, Compactor, estimateTokens } from "/pkg/context_compactor.js";
import { simulateIteration } from "/www/simulate.js";
import { jsCompaction, floor } from "/bench/baseline.mjs";

const SUMMARY = [
  "### 🎯 OBJECTIVE ACHIEVED", "- Totals per region computed for every dataset.",
  "### 📊 KEY DISCOVERIES", "- North leads; duplicated ids explained the gap.",
  "### ✅ SUCCESSFUL SOLUTIONS", "- A plain loop over rows with a totals map.",
  "### 🔧 TOOLS USED SUCCESSFULLY", "- vfs write, fetch get",
  "### 💡 CRITICAL INSIGHTS", "- Array.prototype.groupBy does not exist here.",
  "### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING", "- Verify against the reference report next.",
].join("\n");
const generate = async () => SUMMARY;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function buildSession(iterations, perIteration) {
  localStorage.clear();
  const logs = new LogStore();
  for (let i = 0; i < iterations; i++) {
    const n = logs.startIteration();
    for (let k = 0; k < perIteration; k++) simulateIteration(logs, n, 1000 + k);
    logs.finishIteration();
  }
  logs.startIteration();
  logs.finishIteration();
  const snapshot = Object.fromEntries(["gdrs_reasoning_log", "gdrs_execution_log", "gdrs_tool_activity_log"].map((k) => [k, localStorage.getItem(k)]));
  return { snapshot, tokens: logs.estimateTokens(), chars: Object.values(snapshot).reduce((t, v) => t + v.length, 0) };
}

function restore(snapshot) {
  localStorage.clear();
  for (const [k, v] of Object.entries(snapshot)) localStorage.setItem(k, v);
}

/** Median of `repeats` timed runs, after two untimed runs that warm up the JIT and the caches. */
async function time(run, snapshot, repeats) {
  const times = [];
  for (let r = -2; r < repeats; r++) {
    restore(snapshot);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const start = performance.now();
    await run();
    if (r >= 0) times.push(performance.now() - start);
  }
  return median(times);
}

async function main() {
  const t0 = performance.now();
  await init();
  const instantiateMs = performance.now() - t0;
  const results = { instantiateMs, sessions: [] };
  for (const [iterations, perIteration] of [[10, 4], [50, 4], [200, 4]]) {
    const { snapshot, tokens, chars } = buildSession(iterations, perIteration);
    const repeats = iterations >= 200 ? 5 : 9;
    const longTasks = [];
    // Start observing in a task of its own, and count only tasks that start afterwards: the
    // session building above is one long task that must not be charged to compact().
    await new Promise((resolve) => setTimeout(resolve, 50));
    const observedFrom = performance.now();
    const observer = new PerformanceObserver((list) =>
      list.getEntries().forEach((e) => e.startTime >= observedFrom && longTasks.push(e.duration)),
    );
    observer.observe({ type: "longtask" });
    const ours = await time(async () => {
      const logs = new LogStore();
      const compactor = new Compactor(logs, { provider: { type: "custom", generate }, contextWindowTokens: tokens, retryDelayMs: 0 });
      await compactor.compact({ trigger: "context_limit_error" });
    }, snapshot, repeats);
    await new Promise((resolve) => setTimeout(resolve, 50));
    observer.disconnect();
    // One read of the three logs with a token count, the unit the engine repeats.
    const onePass = await time(async () => new LogStore().estimateTokens(), snapshot, repeats);
    const baseline = await time(() => jsCompaction(generate), snapshot, repeats);
    const floorMs = await time(async () => floor(), snapshot, repeats);
    // One execution appended to the running iteration: by the LogStore, and by hand in JS.
    const entry = { success: true, code: "rows.length", result: 40213, executionTime: 3 };
    const appendMs = await time(async () => new LogStore().appendExecution(entry), snapshot, repeats);
    const jsAppendMs = await time(async () => {
      const log = JSON.parse(localStorage.getItem("gdrs_execution_log") ?? "[]");
      log.push({ ...entry, id: `exec_${Date.now()}`, timestamp: new Date().toISOString() });
      localStorage.setItem("gdrs_execution_log", JSON.stringify(log));
    }, snapshot, repeats);
    results.sessions.push({ iterations, tokens, chars, oursMs: ours, readAndCountMs: onePass, jsBaselineMs: baseline, floorMs, appendMs, jsAppendMs, longestTaskMs: Math.max(0, ...longTasks) });
  }
  results.estimateCheck = estimateTokens("benchmark");
  window.benchResults = results;
}

main().catch((err) => {
  window.benchResults = { error: String(err?.stack ?? err) };
});
