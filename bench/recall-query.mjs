// The recall tool's query over many archives (#66's finding: 300 archives, 170–192 ms, one
// main-thread task of 63–110 ms), timed in headless Chromium with the built package: a loop
// whose clearing rung archives a bulky result every iteration (IndexedDB, the default store),
// then queries of a figure that one archive holds, of words every archive holds, and a range
// of every iteration, each on a page whose archive texts were let go of (a reload) and again.
// Per query: its time, the long tasks (`PerformanceObserver`) and the longest one.
// `node bench/recall-query.mjs [archives] [runs]` (after `bash scripts/build.sh pkg`; default
// 300 archives, 5 runs; `ROWS=400` makes each archive ten times bigger; `BENCH_PKG=<dir>`
// serves another build as `/pkg/`).
import { fileURLToPath } from "node:url";
import { freshPage, withBenchBrowser } from "./browser.mjs";

/** Rows of each iteration's table (about 60 characters each): the size of each archive. */
const ROWS = Number(process.env.ROWS ?? 40);

/** In the page: `count` archives, each a clearing of one iteration's bulky result. */
async function buildArchives([count, rows]) {
  const { default: init, LogStore, Compactor } = await import("/pkg/context_compactor.js");
  await init();
  const logs = new LogStore();
  const compactor = new Compactor(logs, { provider: { type: "offline" }, contextWindowTokens: 131_072, maxArchives: count + 10, clearing: { keepIterations: 1 } });
  const table = (n) => Array.from({ length: rows }, (_, r) => `| row_${n}_${r} | region r${r % 7} | ${(n * 31 + r * 7) % 9973} | ok |`).join("\n");
  for (let n = 1; n <= 3 * count && (await compactor.archives()).length < count; n++) {
    logs.startIteration();
    logs.appendReasoning(`Iteration ${n}: read page ${n} of the ledger (ORD-${100000 + n}).`);
    logs.appendExecution({ success: true, code: `return ledger.page(${n});`, result: { rows: table(n), total: `T${n}-${(n * 7919) % 100003}` } });
    logs.finishIteration();
    // The first iteration has nothing older to clear.
    await compactor.compact({ rung: "clear" }).catch((err) => {
      if (n > 2) throw err;
    });
  }
  return (await compactor.archives()).length;
}

/** In the page: the tool's answer to each query, timed, with the long tasks it made. */
async function query(queries) {
  const { default: init, LogStore, Compactor } = await import("/pkg/context_compactor.js");
  await init();
  const tool = new Compactor(new LogStore(), { provider: { type: "offline" }, contextWindowTokens: 131_072 }).recallTool({ maxTokens: 4000 });
  const longTasks = [];
  const observer = new PerformanceObserver((list) => longTasks.push(...list.getEntries()));
  observer.observe({ type: "longtask" });
  const rows = [];
  for (const [name, args] of queries) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    const answer = await tool.call(args);
    const ms = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const during = longTasks.filter((t) => t.startTime + t.duration >= started && t.startTime <= started + ms);
    rows.push({ name, ms, longTasks: during.length, longest: Math.max(0, ...during.map((t) => t.duration)), chars: answer.length });
  }
  observer.disconnect();
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const count = Number(process.argv[2] ?? 300);
  const runs = Number(process.argv[3] ?? 5);
  const queries = [
    ["a figure one archive holds", { query: "T150-" }],
    ["words every archive holds", { query: "region r3 ok" }],
    ["a range of every iteration", { from: 1, to: count + 2 }],
  ];
  await withBenchBrowser(async (browser, baseUrl) => {
    const page = await freshPage(browser, baseUrl);
    // A page of the origin that runs nothing of its own (the demo would list the archives).
    await page.goto(`${baseUrl}pkg/package.json`);
    const built = await page.evaluate(buildArchives, [count, ROWS]);
    console.log(`${built} archives (IndexedDB) of ${ROWS}-row tables; ${runs} runs, each on a reloaded page and then again\n`);
    console.log("| query | run | ms (reloaded / again) | long tasks | longest task (ms) | answer (chars) |");
    console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (let run = 1; run <= runs; run++) {
      await page.reload();
      const rows = await page.evaluate(query, [...queries, ...queries]);
      for (let i = 0; i < queries.length; i++) {
        const [cold, warm] = [rows[i], rows[i + queries.length]];
        console.log(`| ${cold.name} | ${run} | ${cold.ms.toFixed(0)} / ${warm.ms.toFixed(0)} | ${cold.longTasks} / ${warm.longTasks} | ${cold.longest.toFixed(0)} / ${warm.longest.toFixed(0)} | ${cold.chars} |`);
      }
    }
    await page.close();
  });
}
