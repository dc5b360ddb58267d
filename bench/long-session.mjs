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
import { freshPage, withBenchBrowser } from "./browser.mjs";

const PINS = ["latency_p95 <= 350 ms", "Report drift in basis points with 3 retries on port 443"];

/** Runs in the page: one session of `compactions` compactions; returns what it measured. */
async function inPage([window, providerKind, compactions, pins, padding]) {
  const { default: init, LogStore, Compactor, estimateTokens } = await import("/pkg/context_compactor.js");
  await init();
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
  const demoted = [];
  const problems = [];
  let stuck = null;
  let iterations = 0;
  for (let step = 0; step < compactions * 400 && measured.length < compactions; step++) {
    const n = iterate();
    iterations = n;
    let trigger = null;
    if (compactor.shouldAutoCompact()) trigger = "auto";
    else if (compactor.contextUsage() >= 1) trigger = "context_limit_error";
    if (!trigger) continue;
    const promptTokens = compactor.plan().promptTokens;
    try {
      const result = await compactor.compact({ trigger });
      const k = measured.length + 1;
      const summaryTokens = estimateTokens(result.summary);
      measured.push({ k, iteration: n, trigger, summaryTokens, tokensAfter: result.tokensAfter, promptTokens, ms: result.durationMs, demoted: result.coverage.demoted.length });
      if (summaryTokens > budget) problems.push(`compaction ${k}: ${summaryTokens} tokens over ${budget}`);
      const newest = result.iterations[1];
      const wanted = ["Goal (iteration 1)", "shard_0001", "latency_p95", "350", "3 retries", "443", "wh-eu-1", `shard_${String(newest).padStart(4, "0")}`, String(newest * 7 + 3)];
      for (const term of wanted) if (!result.summary.includes(term)) problems.push(`compaction ${k} lost ${term}`);
      demoted.push(...result.coverage.demoted);
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
  for (const fact of demoted) {
    const shard = fact.fact.match(/task check (shard_\d{4})/)?.[1];
    if (!shard) continue;
    results += 1;
    const data = await compactor.recall(fact.iterations[0]);
    if (data && JSON.stringify(data).includes(shard)) readBack += 1;
  }
  return { window, providerKind, budget, iterations, stuck, measured, problems, demoted: demoted.length, results, readBack };
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

/** Every setting over a running browser and a server of the demo mounts. */
export async function measureLongSessions(browser, baseUrl, settings = SETTINGS) {
  const runs = [];
  for (const [window, providerKind, padding] of settings) {
    const page = await freshPage(browser, baseUrl);
    try {
      runs.push(await page.evaluate(inPage, [window, providerKind, 40, PINS, padding]));
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
];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await withBenchBrowser(async (browser, baseUrl) => {
    const only = process.argv[2] ? SETTINGS.filter(([w]) => String(w) === process.argv[2]) : SETTINGS;
    const runs = await measureLongSessions(browser, baseUrl, only);
    console.log(longSessionTable(runs));
    for (const run of runs) for (const problem of run.problems.slice(0, 5)) console.log(`${run.window} ${run.providerKind}: ${problem}`);
    if (process.env.LONG_SESSION_JSON) console.log(JSON.stringify(runs));
  });
}
