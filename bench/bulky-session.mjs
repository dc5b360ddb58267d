// The bulky-output benchmark (not a test) of #51's ladder: an agent whose context is mostly
// tool output reads one fetched page (about 24,000 characters) and one table (about 3,000) per
// iteration, 300 iterations, with a 131,072-token window, compacting by its own rhythm
// (`shouldAutoCompact()`, and `context_limit_error` once full) with a custom provider that
// counts its calls. In Chromium with the built package and IndexedDB archives. Per setting:
// model calls and prompt tokens per 100 iterations, the tokens the app's model reads per turn
// (`contextUsage()` × window, after each iteration), localStorage at its peak, and how many of
// the figures inside the bodies are found again (in the live logs, by `recall(n)`, by the
// recall tool's query). Settings: without clearing, with it at the defaults, as 0.1's defaults
// had it (`recommendedUsage` 0.6 given, `keepIterations` 3), and with lower `recommendedUsage`s;
// a build without the rung says so.
// `node bench/bulky-session.mjs [iterations]` prints the table (after `bash scripts/build.sh pkg`).
import { fileURLToPath } from "node:url";
import { archiveFootprint, footprintTable, freshPage, withBenchBrowser } from "./browser.mjs";

/** Runs in the page: one session; returns what it measured, or why the setting cannot run. */
async function inPage([iterations, clearing, recommendedUsage]) {
  const { default: init, LogStore, Compactor, estimateTokens } = await import("/pkg/context_compactor.js");
  await init();
  const window = 131_072;
  let calls = 0;
  let promptTokens = 0;
  // Writes what the prompt asks for within its output budget: the headings, the facts listed.
  const generate = async (prompt) => {
    calls += 1;
    promptTokens += estimateTokens(prompt);
    const facts = (prompt.split("## FACTS THE SUMMARY MUST KEEP\n")[1] ?? "").split("\n## ")[0].split("\n").filter((l) => l.startsWith("- "));
    const lines = [
      "### 🎯 OBJECTIVE ACHIEVED", "- Each region's quarterly page read and its total recorded.",
      "### 📊 KEY DISCOVERIES", ...facts,
      "### ✅ SUCCESSFUL SOLUTIONS", "- fetchPage(region) and readTable(region) give the page and its table.",
      "### 🔧 TOOLS USED SUCCESSFULLY", "- fetch get of reports/<region>.html",
      "### 💡 CRITICAL INSIGHTS", "- Totals differ by region; none is missing so far.",
      "### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING", "- The next region follows.",
    ];
    let text = "";
    for (const line of lines) {
      if (estimateTokens(text + line) > 3500) break;
      text += `${line}\n`;
    }
    return text;
  };
  const logs = new LogStore({ prefix: "bulky_" });
  const options = { provider: { type: "custom", generate }, contextWindowTokens: window, retryDelayMs: 0, archiveExpiryDays: 365 };
  if (clearing !== undefined) options.clearing = clearing;
  if (recommendedUsage !== undefined) options.recommendedUsage = recommendedUsage;
  let compactor;
  try {
    compactor = new Compactor(logs, options);
  } catch (err) {
    return { clearing, recommendedUsage, unavailable: `${err.code}: ${err.message}` };
  }
  const figure = (n) => String(1_000_003 + n * 7919);
  const page = (n) => {
    let html = `<html><head><title>Quarterly report, region ${n}</title></head><body>`;
    for (let i = 0; html.length < 24_000; i++) html += `<p>Row ${i}: the region's weekly orders moved within the expected band; returns stayed low.</p>`;
    return `${html}<p>Quarter total ${figure(n)} in sales_region_${n}.csv</p></body></html>`;
  };
  const table = (n) => Array.from({ length: 60 }, (_, i) => ({ week: i + 1, orders: (n * 31 + i * 17) % 997, region: n }));
  const localStorageBytes = () => {
    let units = 0;
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      units += key.length + (localStorage.getItem(key)?.length ?? 0);
    }
    return units * 2;
  };

  let readPerTurn = 0;
  let peak = 0;
  const rungs = { clear: 0, summarize: 0 };
  for (let step = 0; step < iterations; step++) {
    const n = logs.startIteration();
    logs.appendReasoning(`Iteration ${n}: reading region ${n}'s quarterly page and its weekly table, then recording the total before the next region.`);
    logs.appendToolActivity({ type: "fetch", action: "get", status: "success", details: { url: `https://reports.example.com/region/${n}.html`, status: 200, body: page(n) } });
    logs.appendExecution({ success: true, code: `return readTable('region_${n}');`, result: table(n), executionTime: 9 });
    logs.finishIteration();
    let trigger = null;
    if (compactor.shouldAutoCompact()) trigger = "auto";
    else if (compactor.contextUsage() >= 1) trigger = "context_limit_error";
    if (trigger) {
      const result = await compactor.compact({ trigger });
      rungs[result.rung ?? "summarize"] += 1;
    }
    readPerTurn += compactor.contextUsage() * window;
    peak = Math.max(peak, localStorageBytes());
  }
  // Every figure inside a body: still in the live logs, and brought back by recall and by the
  // recall tool's query.
  const live = ["bulky_reasoning_log", "bulky_execution_log", "bulky_tool_activity_log"].map((k) => localStorage.getItem(k) ?? "").join("");
  const tool = compactor.recallTool({ maxTokens: 8000 });
  const found = { live: 0, recall: 0, query: 0 };
  for (let n = 1; n <= iterations; n++) {
    if (live.includes(figure(n))) found.live += 1;
    const data = await compactor.recall(n);
    if (JSON.stringify(data ?? "").includes(figure(n)) || (!data && live.includes(figure(n)))) found.recall += 1;
    if ((await tool.call({ query: figure(n) })).includes(figure(n))) found.query += 1;
  }
  const newest = live.includes(figure(iterations));
  return { clearing, recommendedUsage, iterations, calls, promptTokens, readPerTurn: readPerTurn / iterations, peak, rungs, found, newest };
}

/** The table: one row per setting. */
export function bulkyTable(runs) {
  const lines = [
    "| setting | iterations | model calls / 100 it. | prompt tokens / 100 it. | tokens read per turn | localStorage peak | rungs (clear, summarize) | figures in live logs; by recall; by the tool's query | newest iteration's figure live |",
    "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |",
  ];
  for (const run of runs) {
    const settings = [];
    if (run.clearing !== undefined) settings.push(`clearing: ${JSON.stringify(run.clearing)}`);
    if (run.recommendedUsage !== undefined) settings.push(`recommendedUsage: ${run.recommendedUsage}`);
    const name = settings.length ? settings.join(", ") : "default options";
    if (run.unavailable) {
      lines.push(`| ${name} | – | – | – | – | – | – | not in this build (${run.unavailable}) | – |`);
      continue;
    }
    const per100 = (x) => Math.round((x * 100) / run.iterations).toLocaleString("en-US");
    const n = run.iterations;
    lines.push(`| ${name} | ${n} | ${((run.calls * 100) / n).toFixed(1)} | ${per100(run.promptTokens)} | ${Math.round(run.readPerTurn).toLocaleString("en-US")} | ${(run.peak / 1e6).toFixed(2)} MB | ${run.rungs.clear}, ${run.rungs.summarize} | ${run.found.live}; ${run.found.recall}; ${run.found.query} of ${n} | ${run.newest ? "yes" : "no"} |`);
  }
  return lines.join("\n");
}

/** Every setting over a running browser and a server of the demo mounts. */
export async function measureBulkySessions(browser, baseUrl, iterations = 300) {
  const runs = [];
  for (const [clearing, recommendedUsage] of [[false, undefined], [undefined, undefined], [{ keepIterations: 3 }, 0.6], [undefined, 0.25], [undefined, 0.27], [undefined, 0.3]]) {
    const page = await freshPage(browser, baseUrl);
    try {
      const run = await page.evaluate(inPage, [iterations, clearing, recommendedUsage]);
      runs.push({ ...run, footprint: await page.evaluate(archiveFootprint) });
    } finally {
      await page.close();
    }
  }
  return runs;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await withBenchBrowser(async (browser, baseUrl) => {
    const runs = await measureBulkySessions(browser, baseUrl, Number(process.argv[2] ?? 300));
    console.log(bulkyTable(runs));
    console.log();
    console.log(footprintTable(runs, (run) => `clearing: ${JSON.stringify(run.clearing ?? "default")}, recommendedUsage: ${run.recommendedUsage ?? "default"}`));
  });
}
