// The big-entry benchmark (not a test, #53): one compaction of a research agent's session whose
// entries are big — long reasoning (about 3,400 tokens an iteration) and results that carry a
// table of about 600 words (1,500 tokens) — at a 1,048,576-token window, with a custom provider that answers
// after 200 ms as a network call would, the clearing rung off (the summary is the subject;
// `CLEARING=on` measures the loop's compaction with the rung instead); in
// Chromium with the built package. Per size: the
// package's own time (the compaction's less the provider's 200 ms a call), the longest main-thread task
// (`PerformanceObserver` "longtask"), the largest gap between animation frames, and for each
// phase the time from `abort()` (called as the phase begins) to the rejection; and the longest
// task and frame gap in the `IDLE_AFTER_MS` (1.5 s) after it, when the idle page reads the
// archive's digest.
// `node bench/big-entries.mjs [iterations…]` prints the table (after `bash scripts/build.sh
// pkg`; the default sizes are 18, 37, 74 and 148 iterations: about 89K, 183K, 366K and 731K
// tokens, #53's sizes; `FETCH_WORDS=300` gives each tool entry a page of that many words, as
// #68's session had).
import { fileURLToPath } from "node:url";
import { freshPage, withBenchBrowser } from "./browser.mjs";

/** How long the provider takes to answer (ms), as a network call would. */
const PROVIDER_MS = Number(process.env.PROVIDER_MS ?? 200);

/** The words of the page each tool entry's details carry (#68's session: 300), none by default. */
const FETCH_WORDS = Number(process.env.FETCH_WORDS ?? 0);

/** How long the page is watched once the compaction is done (ms): the idle page reads the
 * archive's digest then. */
const IDLE_AFTER_MS = Number(process.env.IDLE_AFTER_MS ?? 1500);

/** Runs in the page: builds the session, compacts it once while measuring, then once per phase
 * with `abort()` called as that phase begins. */
async function inPage([iterations, providerMs, clearing, fetchWords, idleAfterMs]) {
  const { default: init, LogStore, Compactor, estimateTokens } = await import("/pkg/context_compactor.js");
  await init();
  const words = ["latency", "shard", "region", "p95", "drift", "baseline", "error_rate", "throughput", "window", "sample"];
  const word = (i) => words[i % words.length];
  const sentence = (n, i) => `Step ${i}: the ${word(i)} of ${word(n + i)} moved against the ${word(n * 3 + i)} by ${(n * 37 + i * 11) % 997} basis points, so I compare it with the previous shard and note why.`;
  const logs = new LogStore();
  logs.appendReasoning("Goal (iteration 1): audit every shard's latency and drift against the baseline.");
  for (let n = 1; n <= iterations; n++) {
    logs.startIteration();
    const reasoning = Array.from({ length: 100 }, (_, i) => sentence(n, i)).join(" ");
    logs.appendReasoning(`Iteration ${n}: ${reasoning}`);
    const table = Array.from({ length: 60 }, (_, r) => `| shard_${String(n).padStart(4, "0")}_${r} | ${word(r)} | ${(n * r) % 991} | ${(n + r) % 97} ms | ${word(n + r)} | ok |`).join("\n");
    logs.appendExecution({ success: true, code: `return readTable("shard_${String(n).padStart(4, "0")}");`, result: { table }, executionTime: 40 });
    const page = Array.from({ length: fetchWords }, (_, i) => `${word(n + i)}_${(n * 13 + i) % 89}`).join(" ");
    logs.appendToolActivity({ type: "fetch", action: "get", status: "success", details: `shards/shard_${n}.json ${page}`.trim() });
    logs.finishIteration();
  }
  // The next iteration's opening thought, outside any running iteration (a compaction waits for
  // a running one to finish).
  logs.appendReasoning(`Iteration ${iterations + 1}: next, the summary of the drift.`);
  const tokens = logs.estimateTokens();
  const summary = [
    "### 🎯 OBJECTIVE ACHIEVED", "- Every shard audited against the baseline.",
    "### 📊 KEY DISCOVERIES", "- The drift stays within bounds.",
    "### ✅ SUCCESSFUL SOLUTIONS", "- readTable(name) gives a shard's table.",
    "### 🔧 TOOLS USED SUCCESSFULLY", "- fetch get of shards/<name>.json",
    "### 💡 CRITICAL INSIGHTS", "- Compare each shard with the previous one.",
    "### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING", `- Continue from iteration ${iterations + 1}.`,
  ].join("\n");
  const generate = (_prompt, settings) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve(summary), providerMs);
      settings.signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(new DOMException("aborted", "AbortError"));
      });
    });
  const snapshot = { ...localStorage };
  const restore = () => {
    localStorage.clear();
    for (const [k, v] of Object.entries(snapshot)) localStorage.setItem(k, v);
  };
  const compactor = (store) => new Compactor(store, { provider: { type: "custom", generate }, contextWindowTokens: 1_048_576, retryDelayMs: 0, archiveExpiryDays: 1, clearing: clearing ? {} : false });

  // The app's own writes settle first (Chromium commits localStorage in the browser process,
  // and a Web Lock or IndexedDB request waits behind megabytes of them: about 1.3 s at 733K
  // tokens, which the package did not cause), then three frames pass.
  const settle = async () => {
    await navigator.locks.request("bench-settle", async () => {});
    await new Promise((resolve) => {
      const opened = indexedDB.open("bench-settle");
      opened.onsuccess = () => {
        opened.result.close();
        resolve();
      };
      opened.onerror = resolve;
    });
    for (let i = 0; i < 3; i++) await new Promise(requestAnimationFrame);
  };
  await settle();
  // The platform's floor beside it: one localStorage write of every log's text, and one read.
  const written = Object.values(snapshot).join("");
  const floorStarted = performance.now();
  localStorage.setItem("bench_floor", written);
  const floorWriteMs = performance.now() - floorStarted;
  const readStarted = performance.now();
  const readBack = localStorage.getItem("bench_floor");
  const floorReadMs = performance.now() - readStarted;
  localStorage.removeItem("bench_floor");
  const floor = { chars: readBack.length, writeMs: floorWriteMs, readMs: floorReadMs };
  await settle();

  // One compaction, measured: its tasks and the frames around it.
  const longTasks = [];
  const observer = new PerformanceObserver((list) => longTasks.push(...list.getEntries()));
  observer.observe({ type: "longtask" });
  let measuring = true;
  let lastFrame = performance.now();
  let largestGap = 0;
  const frame = (at) => {
    largestGap = Math.max(largestGap, at - lastFrame);
    lastFrame = at;
    if (measuring) requestAnimationFrame(frame);
  };
  await new Promise((resolve) => requestAnimationFrame((at) => { lastFrame = at; resolve(); }));
  requestAnimationFrame(frame);
  const first = compactor(new LogStore());
  const phaseTimes = [];
  first.events.addEventListener("compaction_phase_change", (e) => phaseTimes.push([e.detail.phase, performance.now()]));
  const told = [];
  first.events.addEventListener("compaction_progress", () => told.push(performance.now()));
  const metricsBefore = await globalThis.taskMetrics();
  const started = performance.now();
  const result = await first.compact({ trigger: "context_limit_error" });
  const ms = performance.now() - started;
  const metricsAfter = await globalThis.taskMetrics();
  const workMs = (metricsAfter.ScriptDuration - metricsBefore.ScriptDuration) * 1000;
  const marks = [started, ...told, started + ms];
  const silence = Math.max(...marks.slice(1).map((at, i) => at - marks[i]));
  // The page idle after it: the kept archives' digests are read then (this compaction's own
  // archive among them, 100 ms after it), so its tasks are measured too.
  const ended = performance.now();
  const gapBefore = largestGap;
  largestGap = 0;
  await new Promise((resolve) => setTimeout(resolve, idleAfterMs));
  measuring = false;
  observer.disconnect();
  const during = longTasks.filter((task) => task.startTime + task.duration >= started && task.startTime < ended);
  const longest = Math.max(0, ...during.map((task) => task.duration));
  const idle = longTasks.filter((task) => task.startTime >= ended);
  const idleLongest = Math.max(0, ...idle.map((task) => task.duration));
  const idleGap = largestGap;
  largestGap = gapBefore;

  // Cancel as each phase begins: the time from `abort()` to the rejection.
  const cancels = [];
  const phases = phaseTimes.map(([phase]) => phase);
  for (const phase of phases.filter((p) => !["idle", "complete", "error"].includes(p))) {
    restore();
    await settle();
    const c = compactor(new LogStore());
    let abortedAt = 0;
    c.events.addEventListener("compaction_phase_change", (e) => {
      if (e.detail.phase === phase && !abortedAt) {
        abortedAt = performance.now();
        c.abort();
      }
    });
    let outcome;
    try {
      await c.compact({ trigger: "context_limit_error" });
      outcome = "completed";
    } catch (err) {
      outcome = err.code;
    }
    cancels.push({ phase, ms: abortedAt ? performance.now() - abortedAt : null, outcome });
  }
  const tasks = during.map((task) => [task.startTime - started, task.duration]);
  return { iterations, tokens, ms, ownMs: ms - providerMs * result.attempts, workMs, silence, longest, longTasks: during.length, largestGap, idleLongest, idleGap, tokensAfter: result.tokensAfter, cancels, estimateTokens: estimateTokens(summary), tasks, floor, phaseTimes: phaseTimes.map(([p, at]) => [p, Math.round(at - started)]) };
}

/** What ran in each long task of `tasks` (`[start, duration]` in ms from the compaction's start,
 * which the CPU `profile` began a moment before): the functions that ran most in it (self
 * time, ms) with the stack above each. */
export function longTaskProfiles(profile, tasks, top = 6) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const name = (id) => {
    const frame = byId.get(id).callFrame;
    return (frame.functionName || `(anonymous ${frame.url.split("/").pop()}:${frame.lineNumber})`).replace(/::h[0-9a-f]{16}$/, "");
  };
  const at = [];
  let t = 0;
  for (const delta of profile.timeDeltas) at.push((t += delta) / 1000);
  // The compaction began at its first sample in the package's `compact` (the profile began
  // at the counters' first reading, a moment before).
  const stackOf = (id) => {
    const names = [];
    for (let node = id; node !== undefined; node = parentOf.get(node)) names.push(byId.get(node).callFrame.functionName);
    return names;
  };
  const first = profile.samples.findIndex((id) => stackOf(id).includes("compact"));
  const offset = first >= 0 ? at[first] : 0;
  for (let i = 0; i < at.length; i++) at[i] -= offset;
  return tasks
    .map(([start, duration]) => {
      const self = new Map();
      profile.samples.forEach((id, i) => {
        if (at[i] < start || at[i] > start + duration) return;
        const chain = [];
        for (let node = id; node !== undefined && chain.length < 3; node = parentOf.get(node)) chain.push(name(node));
        const key = chain.join(" < ");
        self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
      });
      const lines = [...self].sort((a, b) => b[1] - a[1]).slice(0, top).map(([key, ms]) => `    ${ms.toFixed(1).padStart(6)} ms  ${key}`);
      return [`  a task of ${duration.toFixed(0)} ms at ${start.toFixed(0)} ms:`, ...lines].join("\n");
    })
    .join("\n");
}

/** One row per size. */
export function bigEntriesTable(runs) {
  const lines = [
    "| iterations | tokens | compaction (ms) | the package's own (ms) | its script time (ms) | script ms per 100K tokens | long tasks | longest task (ms) | largest frame gap (ms) | longest without progress (ms) | floor: one write / read of the logs' text (ms) | idle after it: longest task / largest frame gap (ms) | abort() to rejection, per phase (ms) |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const run of runs) {
    const cancels = run.cancels.map((c) => `${c.phase} ${c.ms === null ? "–" : c.ms.toFixed(0)}${c.outcome === "aborted" ? "" : ` (${c.outcome})`}`).join(", ");
    lines.push(`| ${run.iterations} | ${run.tokens.toLocaleString("en-US")} | ${run.ms.toFixed(0)} | ${run.ownMs.toFixed(0)} | ${run.workMs.toFixed(0)} | ${((run.workMs / run.tokens) * 100_000).toFixed(0)} | ${run.longTasks} | ${run.longest.toFixed(0)} | ${run.largestGap.toFixed(0)} | ${run.silence.toFixed(0)} | ${run.floor.writeMs.toFixed(1)} / ${run.floor.readMs.toFixed(1)} (${(run.floor.chars / 1e6).toFixed(2)} M chars) | ${run.idleLongest.toFixed(0)} / ${run.idleGap.toFixed(0)} | ${cancels} |`);
  }
  return lines.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
  await withBenchBrowser(async (browser, baseUrl) => {
    const runs = [];
    for (const iterations of sizes.length ? sizes : [18, 37, 74, 148]) {
      const page = await freshPage(browser, baseUrl);
      // The main thread's script time (JS and wasm), from Chromium's own counters.
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("Performance.enable");
      // `PROFILE=1`: a CPU profile of the measured compaction (between the two readings of the
      // counters), and what ran in each stretch of it without idle.
      let readings = 0;
      let profile = null;
      await page.exposeFunction("taskMetrics", async () => {
        const { metrics } = await cdp.send("Performance.getMetrics");
        if (process.env.PROFILE && readings++ === 0) {
          await cdp.send("Profiler.enable");
          await cdp.send("Profiler.setSamplingInterval", { interval: 250 });
          await cdp.send("Profiler.start");
        } else if (process.env.PROFILE && readings === 2) {
          profile = (await cdp.send("Profiler.stop")).profile;
        }
        return Object.fromEntries(metrics.map((metric) => [metric.name, metric.value]));
      });
      try {
        runs.push(await page.evaluate(inPage, [iterations, PROVIDER_MS, process.env.CLEARING === "on", FETCH_WORDS, IDLE_AFTER_MS]));
        if (profile) console.log(longTaskProfiles(profile, runs.at(-1).tasks), "\n  phases (ms from the start):", runs.at(-1).phaseTimes.map(([p, at]) => `${p} ${at}`).join(", "));
      } finally {
        await page.close();
      }
    }
    console.log(bigEntriesTable(runs));
  });
}
