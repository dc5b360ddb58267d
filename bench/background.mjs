// The loop that never waits (#68, item 2; not a test): an agent's loop of 100 iterations whose
// own model call takes `ITERATION_MS` (500 ms), with a custom summary provider that answers at
// once or after `PROVIDER_MS` (5 s), compacting in the foreground (`await compact()`) or in the
// background (`compact({ background: true })`, `done` not awaited by the loop). Per run: the
// loop's own wall time, the compactions and calls, the largest share of the window the logs
// took before a compaction's summary came, and whether every iteration's entries are in the
// live logs or an archive exactly once; in Chromium with the built package.
// `node bench/background.mjs` prints the table (after `bash scripts/build.sh pkg`).
import { fileURLToPath } from "node:url";
import { freshPage, withBenchBrowser } from "./browser.mjs";

const ITERATIONS = Number(process.env.ITERATIONS ?? 100);
const ITERATION_MS = Number(process.env.ITERATION_MS ?? 500);
const PROVIDER_MS = Number(process.env.PROVIDER_MS ?? 5000);

/** Runs in the page: the loop, then the census of its entries. */
async function inPage([iterations, iterationMs, providerMs, background]) {
  const { default: init, LogStore, Compactor } = await import("/pkg/context_compactor.js");
  await init();
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const summary = ["🎯 OBJECTIVE ACHIEVED", "📊 KEY DISCOVERIES", "✅ SUCCESSFUL SOLUTIONS", "🔧 TOOLS USED SUCCESSFULLY", "💡 CRITICAL INSIGHTS", "📝 IMPORTANT CONTEXT FOR FUTURE REASONING"]
    .map((heading) => `### ${heading}\n- The shards counted so far are in the archive; continue with the next one.`)
    .join("\n");
  let calls = 0;
  const generate = () => {
    calls += 1;
    return sleep(providerMs).then(() => summary);
  };
  const logs = new LogStore();
  const compactor = new Compactor(logs, {
    provider: { type: "custom", generate },
    contextWindowTokens: 12_000,
    autoTriggerUsage: 0.7,
    retryDelayMs: 0,
    archiveExpiryDays: 1,
  });
  let compactions = 0;
  let peakUsage = 0;
  let pending = Promise.resolve();
  const failures = [];
  const started = performance.now();
  for (let step = 1; step <= iterations; step++) {
    peakUsage = Math.max(peakUsage, compactor.contextUsage());
    if (compactor.shouldAutoCompact()) {
      compactions += 1;
      if (background) {
        const { done } = await compactor.compact({ trigger: "auto", background: true });
        pending = done.catch((err) => failures.push(err.code));
      } else {
        await compactor.compact({ trigger: "auto" }).catch((err) => failures.push(err.code));
      }
    }
    logs.startIteration();
    logs.appendReasoning(`tag-${step}: I count the rows of shard_${step}.csv and compare them with the totals of the shard before it, region by region. `.repeat(6));
    await sleep(iterationMs);
    logs.appendExecution({ success: true, code: `return count("shard_${step}.csv"); // tag-${step}`, result: { rows: 1000 * step } });
    logs.finishIteration();
  }
  const loopMs = performance.now() - started;
  await pending;
  // Every iteration's reasoning and execution, in the live logs or an archive, exactly once.
  // (A summary is not an entry: the facts it keeps may name a tag.)
  const seen = new Map();
  const count = (texts) => {
    for (const text of texts) {
      if (String(text).startsWith("=== COMPACTED SUMMARY")) continue;
      for (const tag of new Set(String(text).match(/tag-\d+(?!\d)/g))) seen.set(tag, (seen.get(tag) ?? 0) + 1);
    }
  };
  count(logs.reasoningLog());
  count(logs.executionLog().map((entry) => entry.code));
  for (const info of await compactor.archives()) {
    const archive = await compactor.readArchive(info.key);
    count(archive.data.reasoningLog);
    count(archive.data.executionLog.map((entry) => entry.code));
  }
  const wrong = [];
  for (let step = 1; step <= iterations; step++) {
    const times = seen.get(`tag-${step}`) ?? 0;
    if (times !== 2) wrong.push(`tag-${step}×${times}`);
  }
  return { background, providerMs, loopMs, compactions, calls, peakUsage, failures, wrong };
}

/** One row per run. */
export function backgroundTable(runs, baselineMs) {
  const lines = [
    "| provider | compaction | loop wall time (s) | against the instant provider | compactions | calls | peak usage | failures | entries lost or doubled |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const run of runs) {
    const against = `${(((run.loopMs - baselineMs) / baselineMs) * 100).toFixed(1)}%`;
    const wrong = run.wrong.length ? run.wrong.slice(0, 5).join(", ") : "none";
    lines.push(`| ${run.providerMs} ms | ${run.background ? "background" : "awaited"} | ${(run.loopMs / 1000).toFixed(2)} | ${against} | ${run.compactions} | ${run.calls} | ${(run.peakUsage * 100).toFixed(0)}% | ${run.failures.join(", ") || "none"} | ${wrong} |`);
  }
  return lines.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await withBenchBrowser(async (browser, baseUrl) => {
    const runs = [];
    for (const [providerMs, background] of [[0, false], [0, true], [PROVIDER_MS, true], [PROVIDER_MS, false]]) {
      const page = await freshPage(browser, baseUrl);
      try {
        runs.push(await page.evaluate(inPage, [ITERATIONS, ITERATION_MS, providerMs, background]));
      } finally {
        await page.close();
      }
    }
    console.log(backgroundTable(runs, runs[0].loopMs));
  });
}
