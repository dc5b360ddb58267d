// A page's first compaction over archives kept in IndexedDB (#68, item 1): the seeded 200-
// iteration session of `scripts/bench.sh`, with no archive kept and with the ten archives ten
// earlier compactions would have left; per run the page made its `Compactor` as it loaded and
// compacts once it has been idle (`IDLE_MS`, 1 s by default: a loop's first compaction comes
// iterations after the page loaded), and the same compaction made at once after `new
// Compactor` (as `scripts/bench.sh` times it). In headless Chromium with the built package.
// `node bench/kept-archives.mjs [runs]` (after `bash scripts/build.sh pkg`; `BENCH_PKG=<dir>`
// serves another build as `/pkg/`). Each run is a page of its own (a new browser context): a
// page opens over the kept archives once, and compactors of earlier runs, still alive in one
// page, would read their digests beside it.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEMO_MOUNTS } from "../scripts/serve.mjs";
import { freshPage, withBenchBrowser } from "./browser.mjs";

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const root = fileURLToPath(new URL("..", import.meta.url));
/** The bench's modules and the demo's simulated loop beside the package. */
const MOUNTS = [["/bench/", join(root, "bench")], ["/www/", join(root, "www")], ...DEMO_MOUNTS];

const IDLE_MS = Number(process.env.IDLE_MS ?? 1000);

/** In a page of its own (a new browser context: its storage starts empty): one timed
 * compaction, with the ten archives kept when `kept`, made `idleMs` after `new Compactor`. */
async function inPage([kept, idleMs]) {
  const { default: init, LogStore, Compactor } = await import("/pkg/context_compactor.js");
  const { buildSession, generate, restore } = await import("/bench/session.mjs");
  await init();
  const { snapshot, tokens } = buildSession(LogStore, 200, 4);
  const options = { provider: { type: "custom", generate }, contextWindowTokens: tokens, retryDelayMs: 0, archiveStore: "indexedDB" };
  // Ten archives as ten earlier compactions left them, a day apart (the stored values as the
  // package wrote them: compressed); the same compaction made without them too, alike.
  await restore(snapshot);
  const { archiveKey } = await new Compactor(new LogStore(), options).compact({ trigger: "context_limit_error" });
  const db = await new Promise((resolve) => {
    const request = indexedDB.open("context-compactor-archives");
    request.onsuccess = () => resolve(request.result);
  });
  const stored = await new Promise((resolve) => {
    const read = db.transaction("archives").objectStore("archives").get(archiveKey);
    read.onsuccess = () => resolve(read.result);
  });
  db.close();
  const written = Number(archiveKey.split("_").pop());
  const ten = {};
  for (let day = 1; day <= 10; day++) ten[archiveKey.replace(String(written), String(written - day * 86_400_000))] = stored;
  await restore(snapshot, { indexedDB: kept ? ten : {} });
  const compactor = new Compactor(new LogStore(), options);
  await new Promise((resolve) => setTimeout(resolve, idleMs));
  const started = performance.now();
  await compactor.compact({ trigger: "context_limit_error" });
  return { tokens, ms: performance.now() - started };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const runs = Number(process.argv[2] ?? 7);
  await withBenchBrowser(async (browser, baseUrl) => {
    const rows = [];
    let tokens = 0;
    for (const [name, kept] of [["no archive kept", false], ["ten archives kept", true]]) {
      for (const idle of [IDLE_MS, 0]) {
        const ms = [];
        for (let run = 0; run < runs; run++) {
          const page = await freshPage(browser, baseUrl);
          // A page of the origin that runs nothing of its own (the demo has a compactor of its own).
          await page.goto(`${baseUrl}pkg/package.json`);
          const timed = await page.evaluate(inPage, [kept, idle]);
          await page.close();
          tokens = timed.tokens;
          ms.push(timed.ms);
        }
        rows.push({ name, idle, median: median(ms), ms });
      }
    }
    console.log(`200 iterations, ${tokens.toLocaleString("en-US")} tokens; ${runs} runs each, a page each\n`);
    console.log("| archives in IndexedDB | compaction made | median (ms) | runs (ms) |\n| --- | --- | ---: | --- |");
    for (const row of rows) {
      const when = row.idle ? `${row.idle} ms after new Compactor` : "at once after new Compactor";
      console.log(`| ${row.name} | ${when} | ${row.median.toFixed(0)} | ${row.ms.map((ms) => ms.toFixed(0)).join(", ")} |`);
    }
  }, MOUNTS);
}
