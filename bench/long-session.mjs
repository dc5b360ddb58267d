// The long-session benchmark (not a test): an agent whose every iteration checks a shard no
// iteration checked before, with two pins and a failure it never resolves, compacts by its own
// rhythm (`shouldAutoCompact()`, and `context_limit_error` once the window is full) until it has
// compacted 40 times, in Chromium with the built package and IndexedDB archives. Two windows
// (16,384 and 1,048,576 tokens) and two providers: the built-in offline summary, and a custom
// one that writes only what fits its output budget (the headings, the facts the prompt lists,
// then a line per iteration it was given). Per setting: summary tokens, tokens after, prompt
// tokens and ms at compactions 1, 10, 20 and 40; whether the loop was ever stuck; whether every
// summary stayed within its budget and kept the pins, the open failure and the newest result;
// and how many of the facts that left a summary `recall` read back.
// `node bench/long-session.mjs` prints the table (after `bash scripts/build.sh pkg`).
import { fileURLToPath } from "node:url";
import { archiveFootprint, footprintTable, freshPage, withBenchBrowser } from "./browser.mjs";

const PINS = ["latency_p95 <= 350 ms", "Report drift in basis points with 3 retries on port 443"];

/** Runs in the page: one session of `compactions` compactions; returns what it measured.
 * `failEvery` > 0 leaves a metrics read open every that many iterations; `twoTasks` interleaves
 * a second task from iteration 200 on, its goal pinned then. */
async function inPage([window, providerKind, compactions, pins, padding, failEvery = 0, twoTasks = false]) {
  const { default: init, LogStore, Compactor, estimateTokens, validateSummary } = await import("/pkg/context_compactor.js");
  const wasm = await init();
  const fitting = (maxOutputTokens) => async (prompt) => {
    const facts = (prompt.split("## FACTS THE SUMMARY MUST KEEP\n")[1] ?? "").split("\n## ")[0].split("\n").filter((l) => l.startsWith("- "));
    const history = [...prompt.matchAll(/^--- Iteration (\d+) ---\n(.{1,160})/gm)].map((m) => `- Iteration ${m[1]}: ${m[2]}`);
    const sections = [
      ["### 🎯 OBJECTIVE ACHIEVED", "- Shards checked in order; each one's p95 and drift recorded."],
      ["### 📊 KEY DISCOVERIES", ...facts],
      ["### ✅ SUCCESSFUL SOLUTIONS", "- checkShard(name) returns the shard's p95 latency and drift."],
      ["### 🔧 TOOLS USED SUCCESSFULLY", "- fetch get of shards/<name>.json"],
      ["### 💡 CRITICAL INSIGHTS", "- The warehouse connection still fails."],
      ["### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING", ...history],
    ].flat();
    let text = "";
    for (const line of sections) {
      if (estimateTokens(text + line) > maxOutputTokens) break;
      text += `${line}\n`;
    }
    return text;
  };
  const provider = providerKind === "offline" ? { type: "offline" } : { type: "custom", generate: fitting(4000) };
  const logs = new LogStore({ prefix: "long_" });
  const compactor = new Compactor(logs, { provider, contextWindowTokens: window, retryDelayMs: 0, archiveExpiryDays: 365 });
  for (const pin of pins) logs.pin(pin);
  const budget = compactor.plan().summaryBudgetTokens;
  const bulk = padding > 0 ? `\n${"The shard's rows were scanned one by one for late writes, duplicated keys and clock skew. ".repeat(padding)}` : "";

  const iterate = () => {
    const n = logs.startIteration();
    const shard = `shard_${String(n).padStart(4, "0")}`;
    if (twoTasks && n === 200) logs.pin("Second goal: aggregate error_rate per region, one region every other iteration");
    if (twoTasks && n >= 200 && n % 2 === 0) {
      const region = `region_${String(n / 2).padStart(3, "0")}`;
      logs.appendReasoning(`Iteration ${n}: aggregating error_rate for ${region} (the second goal), then back to the shards.${bulk}`);
      logs.appendExecution({ success: true, code: `return aggregate("${region}", "error_rate");`, result: { region, errorRate: ((n * 13) % 97) / 1000 }, executionTime: 9 });
      logs.finishIteration();
      return n;
    }
    if (failEvery > 0 && n % failEvery === 0) {
      logs.appendExecution({ success: false, code: `const m = await readMetrics("${shard}", "p95");`, error: { message: "metrics endpoint timed out after 30000 ms" } });
    }
    logs.appendReasoning(`Iteration ${n}: checking ${shard} for drift against the baseline. The previous shards were within bounds, so I read the next one, compute its p95 latency and its drift, and record both before moving on.${bulk}`);
    if (n === 3) {
      logs.appendExecution({ success: false, code: "await connectWarehouse('wh-eu-1')", error: { message: "ECONNREFUSED warehouse wh-eu-1 refused the connection" }, metadata: { task: "connect warehouse" } });
    }
    logs.appendExecution({ success: true, code: `return checkShard('${shard}');`, result: { shard, p95: 200 + ((n * 37) % 150), driftBp: n * 7 + 3 }, executionTime: 12, metadata: { task: `check ${shard}` } });
    logs.appendToolActivity({ type: "fetch", action: "get", status: "success", details: `shards/${shard}.json` });
    logs.finishIteration();
    return n;
  };

  const measured = [];
  // Each demoted result as its iteration and shard number: the benchmark's own bookkeeping stays
  // small beside the page's memory it samples.
  const demoted = { count: 0, iterations: [], shards: [] };
  const problems = [];
  // The page's JavaScript heap (Chromium) and wasm memory when the session passes these.
  const memory = [];
  const marks = [100, 500, 1000];
  const sample = (n) => {
    if (n !== marks[memory.length]) return;
    globalThis.gc?.();
    memory.push({ iteration: n, jsHeap: performance.memory?.usedJSHeapSize ?? 0, wasm: wasm.memory.buffer.byteLength });
  };
  // Lines of each kind of fact a summary holds.
  const kinds = (summary) => {
    const lines = summary.split("\n");
    const count = (test) => lines.filter(test).length;
    return {
      results: count((l) => l.startsWith("- Result of ")),
      failures: count((l) => l.startsWith("- Still failing")),
      identifiers: count((l) => /^- `[^`]+`: named in iteration/.test(l)),
      index: count((l) => l.startsWith("- Iteration") && l.includes(" recall(")),
      openNamed: lines.filter((l) => l.startsWith("- Open failures")).reduce((sum, l) => sum + (l.match(/\) \(\d+\)/g) ?? []).length, 0),
      longestIndexLine: Math.max(0, ...lines.filter((l) => l.includes(" recall(")).map((l) => l.length)),
    };
  };
  let stuck = null;
  let iterations = 0;
  for (let step = 0; step < compactions * 400 && measured.length < compactions; step++) {
    const n = iterate();
    iterations = n;
    if (failEvery) sample(n);
    let trigger = null;
    if (compactor.shouldAutoCompact()) trigger = "auto";
    else if (compactor.contextUsage() >= 1) trigger = "context_limit_error";
    if (!trigger) continue;
    const promptTokens = compactor.plan().promptTokens;
    try {
      const result = await compactor.compact({ trigger });
      const k = measured.length + 1;
      const summaryTokens = estimateTokens(result.summary);
      measured.push({ k, iteration: n, trigger, summaryTokens, tokensAfter: result.tokensAfter, promptTokens, ms: result.durationMs, demoted: result.coverage.demoted.length, kinds: kinds(result.summary) });
      if (summaryTokens > budget) problems.push(`compaction ${k}: ${summaryTokens} tokens over ${budget}`);
      const newest = result.iterations[1];
      // The newest result: the last shard checked up to the range's end.
      const checked = twoTasks && newest >= 200 && newest % 2 === 0 ? newest - 1 : newest;
      const wanted = ["Goal (iteration 1)", "shard_0001", "latency_p95", "350", "3 retries", "443", `shard_${String(checked).padStart(4, "0")}`, String(checked * 7 + 3)];
      if (!failEvery) wanted.push("wh-eu-1");
      for (const term of wanted) if (!result.summary.includes(term)) problems.push(`compaction ${k} lost ${term}`);
      // Every open failure in the summary, named with its iteration by an index line, or
      // counted by one (`K more in recall(a..b)`) whose range holds its iteration; the oldest,
      // iteration 3's, too.
      const lines = result.summary.split("\n");
      const counts = (l, f) => l.startsWith("- Open failures") && [...l.matchAll(/ more in recall\((\d+)\.\.(\d+)\)/g)].some((m) => Number(m[1]) <= f && f <= Number(m[2]));
      const failures = failEvery ? [3] : [];
      for (let f = failEvery; failEvery && f <= newest; f += failEvery) if (!(twoTasks && f >= 200 && f % 2 === 0)) failures.push(f);
      for (const f of failures) {
        const [name, listed] = f === 3 ? ["wh-eu-1", "connect warehouse (3)"] : [`shard_${String(f).padStart(4, "0")}`, `shard_${String(f).padStart(4, "0")}) (${f})`];
        const kept = lines.some((l) => l.startsWith("- Still failing") && l.includes(name));
        const named = lines.some((l) => l.startsWith("- Open failures") && l.includes(listed));
        if (!kept && !named && !lines.some((l) => counts(l, f))) problems.push(`compaction ${k} lost the open failure of ${f}`);
      }
      for (const line of result.summary.split("\n")) {
        if (line.includes(" recall(") && line.length >= 240) problems.push(`compaction ${k}: an index line of ${line.length} characters`);
      }
      const validation = validateSummary(result.summary);
      if (!validation.valid) problems.push(`compaction ${k}: ${validation.errors.join("; ")}`);
      for (const fact of result.coverage.demoted) {
        demoted.count += 1;
        const shard = fact.fact.match(/task check shard_(\d{4})/)?.[1];
        if (!shard) continue;
        demoted.iterations.push(fact.iterations[0]);
        demoted.shards.push(Number(shard));
      }
    } catch (err) {
      if (trigger === "context_limit_error" && err.code === "not_allowed") {
        stuck = { iteration: n, message: err.message };
        break;
      }
      throw err;
    }
  }
  // Every result that left a summary: its originals come back by recall.
  let readBack = 0;
  let results = 0;
  for (const [i, iteration] of demoted.iterations.entries()) {
    const shard = `shard_${String(demoted.shards[i]).padStart(4, "0")}`;
    results += 1;
    const data = await compactor.recall(iteration);
    if (data && JSON.stringify(data).includes(shard)) readBack += 1;
  }
  return { window, providerKind, failEvery, twoTasks, budget, iterations, stuck, measured, problems, demoted: demoted.count, results, readBack, memory };
}

/** One row per setting: figures at compactions 1, 10, 20 and 40. */
export function longSessionTable(runs) {
  const lines = [
    "| window | provider | budget | compactions (iterations) | stuck | summary tokens at 1 / 10 / 20 / 40 | tokens after | prompt tokens | ms | 40 vs 10 (after, prompt, ms) | summaries over budget or losing the goal, a pin, the failure or the newest result | demoted facts; results read back by recall |",
    "| ---: | --- | ---: | ---: | --- | --- | --- | --- | --- | --- | ---: | --- |",
  ];
  for (const run of runs) {
    const at = (k) => run.measured[k - 1];
    const figures = (field, digits = 0) => [1, 10, 20, 40].map((k) => (at(k) ? at(k)[field].toFixed(digits) : "–")).join(" / ");
    const ratio = (field) => (at(40) && at(10) ? (at(40)[field] / Math.max(1, at(10)[field])).toFixed(2) : "–");
    lines.push(`| ${run.window.toLocaleString("en-US")} | ${run.providerKind} | ${run.budget} | ${run.measured.length} (${run.iterations}) | ${run.stuck ? `yes, at iteration ${run.stuck.iteration}` : "no"} | ${figures("summaryTokens")} | ${figures("tokensAfter")} | ${figures("promptTokens")} | ${figures("ms", 1)} | ${ratio("tokensAfter")}, ${ratio("promptTokens")}, ${ratio("ms")} | ${run.problems.length} | ${run.demoted}; ${run.readBack} of ${run.results} |`);
  }
  return lines.join("\n");
}

/** One row per agent: the lines each kind of fact holds at compactions 1, 10, 20 and 40, and
 * the page's memory at 100, 500 and 1,000 iterations. */
export function kindsTable(runs) {
  const lines = [
    "| window | provider | agent | lines at compaction 1 / 10 / 20 / 40: results, open failures, identifiers, index, named in the index | longest index line | JS heap at 100 / 500 / 1,000 iterations (MB; 1,000 vs 100) | wasm memory (MB; 1,000 vs 100) |",
    "| ---: | --- | --- | --- | ---: | --- | --- |",
  ];
  const mb = (bytes) => (bytes / 1048576).toFixed(2);
  const grown = (memory, field) => (memory.length === 3 ? `; ${(memory[2][field] / memory[0][field]).toFixed(2)}×` : "");
  for (const run of runs) {
    const agent = run.twoTasks ? "two tasks" : run.failEvery ? `a failure open every ${run.failEvery}` : "one failure";
    const at = [1, 10, 20, 40].map((k) => run.measured[k - 1]?.kinds).map((c) => (c ? `${c.results}, ${c.failures}, ${c.identifiers}, ${c.index}, ${c.openNamed}` : "–"));
    const longest = Math.max(...run.measured.map((m) => m.kinds.longestIndexLine));
    lines.push(`| ${run.window.toLocaleString("en-US")} | ${run.providerKind} | ${agent} | ${at.join(" / ")} | ${longest} | ${run.memory.map((m) => mb(m.jsHeap)).join(" / ")}${grown(run.memory, "jsHeap")} | ${run.memory.map((m) => mb(m.wasm)).join(" / ")}${grown(run.memory, "wasm")} |`);
  }
  return lines.join("\n");
}

/** Every setting over a running browser and a server of the demo mounts. */
export async function measureLongSessions(browser, baseUrl, settings = SETTINGS) {
  const runs = [];
  for (const [window, providerKind, padding, failEvery, twoTasks, compactions = 40] of settings) {
    const page = await freshPage(browser, baseUrl);
    try {
      const run = await page.evaluate(inPage, [window, providerKind, compactions, PINS, padding, failEvery, twoTasks]);
      runs.push({ ...run, footprint: await page.evaluate(archiveFootprint) });
    } finally {
      await page.close();
    }
  }
  return runs;
}

/** Window, provider, and the bulk of each iteration's reasoning (sentences): a 1M window is
 * filled by iterations of about 19K tokens, so that 40 compactions take about 1,800 iterations. */
const SETTINGS = [
  [16_384, "offline", 0],
  [16_384, "fitting", 0],
  [1_048_576, "offline", 800],
  [1_048_576, "fitting", 800],
  // The agents of #52: a failure left open every 40 iterations, and two interleaved tasks.
  [16_384, "offline", 0, 40],
  [16_384, "fitting", 0, 40],
  [16_384, "fitting", 0, 40, true],
];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await withBenchBrowser(async (browser, baseUrl) => {
    const wanted = process.argv[2];
    // `10000`: the agents with a failure open every 40 iterations, 250 compactions (about
    // 10,000 iterations).
    const tenThousand = SETTINGS.filter((s) => s[3] && !s[4]).map((s) => [...s, false, 250]);
    const only = wanted === "agents" ? SETTINGS.filter((s) => s[3]) : wanted === "10000" ? tenThousand : wanted ? SETTINGS.filter(([w]) => String(w) === wanted) : SETTINGS;
    const runs = await measureLongSessions(browser, baseUrl, only);
    console.log(longSessionTable(runs));
    console.log();
    console.log(kindsTable(runs));
    console.log();
    console.log(footprintTable(runs, (run) => `${run.window} ${run.providerKind}`));
    for (const run of runs) for (const problem of run.problems.slice(0, 5)) console.log(`${run.window} ${run.providerKind}: ${problem}`);
    if (process.env.LONG_SESSION_JSON) console.log(JSON.stringify(runs));
  });
}
