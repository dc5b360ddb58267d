// The benchmark command's driver: size, token estimator accuracy, timings in Chromium.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import os from "node:os";
import { chromium } from "playwright-core";
import { startServer, DEMO_MOUNTS } from "../scripts/serve.mjs";
import { measureEstimator } from "./tokens.mjs";
import { fidelityTable, measureFidelity } from "./fidelity.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const size = JSON.parse(execFileSync(process.execPath, [join(root, "scripts/size.mjs"), join(root, "pkg"), "--json"], { encoding: "utf8" }));
const estimator = measureEstimator();

const server = await startServer(0, "127.0.0.1", [["/bench/", join(root, "bench")], ["/www/", join(root, "www")], ...DEMO_MOUNTS]);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
});
let timings;
let fidelity;
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/bench/page.html`);
  await page.waitForFunction(() => window.benchResults, null, { timeout: 600_000 });
  timings = await page.evaluate(() => window.benchResults);
  // `init()` as a first visit sees it, median of 15 fresh contexts (no HTTP or code cache
  // between them): the download from this server over loopback, then the compile and the
  // instantiation, which are the package's own cost (the download is its size's).
  const firstVisits = [];
  for (let i = 0; i < 15; i++) {
    const context = await browser.newContext();
    const fresh = await context.newPage();
    await fresh.goto(`http://127.0.0.1:${server.address().port}/bench/instantiate.html`);
    await fresh.waitForFunction(() => window.instantiateMs !== undefined, null, { timeout: 60_000 });
    firstVisits.push(await fresh.evaluate(() => window.instantiateParts));
    await context.close();
  }
  const medianOf = (key) => firstVisits.map((visit) => visit[key]).sort((a, b) => a - b)[7];
  const own = firstVisits.map((visit) => visit.compileMs + visit.instantiateMs).sort((a, b) => a - b);
  timings.instantiateMs = own[7];
  timings.instantiateRangeMs = [own[0], own[14]];
  timings.instantiateParts = { downloadMs: medianOf("downloadMs"), compileMs: medianOf("compileMs"), instantiateMs: medianOf("instantiateMs") };
  // The archive backends side by side, each in a fresh context (its own storage).
  timings.storage = [];
  for (const [archiveStore, afterLocalStorage] of [["localStorage", false], ["indexedDB", false], ["indexedDB", true]]) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/bench/instantiate.html`);
    await page.waitForFunction(() => window.instantiateMs !== undefined, null, { timeout: 60_000 });
    timings.storage.push(await page.evaluate(async ([store, after]) => (await import("/bench/storage.mjs")).measureBackend(store, after), [archiveStore, afterLocalStorage]));
    await context.close();
  }
  // `--timings`: the size, the estimator and the timings only (a minute, not five), to measure
  // two commits side by side.
  if (!process.argv.includes("--timings")) {
    fidelity = await measureFidelity(browser, `http://127.0.0.1:${server.address().port}/`);
  }
} finally {
  await browser.close();
  server.close();
}
if (timings.error) throw new Error(timings.error);

// A `--timings` run keeps the fidelity figures of the last full run.
if (!fidelity && existsSync(join(root, "bench/results.json"))) {
  fidelity = JSON.parse(readFileSync(join(root, "bench/results.json"), "utf8")).fidelity;
}
const results = {
  date: new Date().toISOString().slice(0, 10),
  machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Chromium headless`,
  size,
  estimator,
  timings,
  fidelity,
};
writeFileSync(join(root, "bench/results.json"), JSON.stringify(results, null, 2) + "\n");

const kb = (b) => `${(b / 1024).toFixed(1)} KB`;
console.log(`date ${results.date}; ${results.machine}`);
console.log(`download: ${kb(size.total.raw)} raw, ${kb(size.total.gzip)} gzip, ${kb(size.total.brotli)} brotli; instantiate ${timings.instantiateMs.toFixed(1)} ms (compile and instantiate, median of 15 first visits, ${timings.instantiateRangeMs.map((ms) => ms.toFixed(1)).join("–")}; medians of the parts: download over loopback ${timings.instantiateParts.downloadMs.toFixed(1)}, compile ${timings.instantiateParts.compileMs.toFixed(1)}, instantiate ${timings.instantiateParts.instantiateMs.toFixed(1)})`);
console.log("\n| session | tokens | ours (ms) | ours, IndexedDB archives (ms) | ours, 10 archives kept: localStorage / IndexedDB (ms) | JS baseline (ms) | floor (ms) | ours / JS | ours / floor | longest task (ms) | one read + count (ms) | append: ours / JS (ms) |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const s of timings.sessions) {
  console.log(`| ${s.iterations} iterations | ${s.tokens.toLocaleString("en-US")} | ${s.oursMs.toFixed(1)} | ${s.oursIndexedDbMs.toFixed(1)} | ${s.oursTenArchivesMs?.toFixed(1) ?? "— (does not fit)"} / ${s.oursIndexedDbTenArchivesMs.toFixed(1)} | ${s.jsBaselineMs.toFixed(1)} | ${s.floorMs.toFixed(1)} | ${(s.oursMs / s.jsBaselineMs).toFixed(2)} | ${(s.oursMs / s.floorMs).toFixed(2)} | ${s.longestTaskMs.toFixed(0)} | ${s.readAndCountMs.toFixed(1)} | ${s.appendMs.toFixed(1)} / ${s.jsAppendMs.toFixed(1)} |`);
}
console.log("\n| archives in | compactions done | failed | one compaction (median, range) | archives kept | their bytes | localStorage free for the app |");
console.log("| --- | ---: | --- | ---: | ---: | ---: | ---: |");
for (const r of timings.storage) {
  const range = r.rangeMs ? `${r.medianMs.toFixed(1)} ms (${r.rangeMs.map((ms) => ms.toFixed(1)).join("–")})` : "—";
  const store = r.afterLocalStorage ? `${r.archiveStore}, after 20 compactions with localStorage archives (${kb(r.localStorageFreeBefore)} free then)` : r.archiveStore;
  console.log(`| ${store} | ${r.compacted} | ${r.failures.length ? r.failures.join(", ") : "none"} | ${range} | ${r.archives} | ${kb(r.archiveBytes)} | ${kb(r.localStorageFree)} |`);
}
const lock = timings.lock;
console.log(`\nstore lock, uncontended (median of 200): withLock ${lock.withLockMs.toFixed(2)} ms; by hand: Web Lock ${lock.webLockMs.toFixed(2)}, IndexedDB transaction ${lock.transactionMs.toFixed(2)}, both ${lock.webLockAndTransactionMs.toFixed(2)} ms`);
const [, fifty, twoHundred] = timings.sessions;
console.log(`\n200 iterations / 50 iterations: ${(twoHundred.oursMs / fifty.oursMs).toFixed(2)}×`);
console.log("\n| text | real chars/token | estimator MAE | chars/4 MAE |\n| --- | ---: | ---: | ---: |");
for (const r of estimator) console.log(`| ${r.kind} | ${r.charsPerToken.toFixed(2)} | ${(r.estimatorMae * 100).toFixed(1)}% | ${(r.charsOver4Mae * 100).toFixed(1)}% |`);
if (fidelity) {
  console.log("\nFact retention over three chained compactions (bench/fidelity.mjs):\n");
  console.log(fidelityTable(fidelity));
}
