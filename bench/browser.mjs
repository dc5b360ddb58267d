// The browser and server a benchmark runs in: headless Chromium (the system's, never a
// download) over a server of the demo's mounts on a free loopback port.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startServer } from "../scripts/serve.mjs";

/** Runs `measure(browser, baseUrl)` in a fresh browser and server (the demo's mounts, or
 * `mounts`), and closes both after. */
export async function withBenchBrowser(measure, mounts = undefined) {
  const server = await startServer(0, "127.0.0.1", mounts);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    // `gc()` and precise heap figures, for the memory a session keeps (not what it left to collect).
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic", "--js-flags=--expose-gc", "--enable-precise-memory-info"],
  });
  try {
    return await measure(browser, `http://127.0.0.1:${server.address().port}/`);
  } finally {
    await browser.close();
    server.close();
  }
}

/** A new page of `baseUrl` whose origin starts empty: localStorage cleared and the archive
 * database deleted. With `BENCH_PKG=<dir>` the page's `/pkg/` is that folder (a build of
 * another commit, for a before/after on one server). */
export async function freshPage(browser, baseUrl) {
  const page = await browser.newPage();
  const other = process.env.BENCH_PKG;
  if (other) {
    await page.route("**/pkg/**", async (route) => {
      const name = new URL(route.request().url()).pathname.replace(/^\/pkg\//, "");
      const type = name.endsWith(".wasm") ? "application/wasm" : "text/javascript";
      await route.fulfill({ body: await readFile(join(other, name)), contentType: type });
    });
  }
  await page.goto(baseUrl);
  await page.evaluate(
    () =>
      new Promise((resolve) => {
        localStorage.clear();
        const request = indexedDB.deleteDatabase("context-compactor-archives");
        request.onsuccess = request.onerror = request.onblocked = () => resolve();
      }),
  );
  return page;
}

/** In the page: the archives in the package's IndexedDB database, their texts' bytes (UTF-16,
 * as an engine holds a string) and the bytes stored (a compressed archive's gzip; a plain
 * string's UTF-16). */
export async function archiveFootprint() {
  const db = await new Promise((resolve) => {
    const request = indexedDB.open("context-compactor-archives");
    request.onupgradeneeded = () => request.transaction.abort();
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => resolve(null);
  });
  if (!db || !db.objectStoreNames.contains("archives")) return { archives: 0, textBytes: 0, storedBytes: 0 };
  const values = await new Promise((resolve, reject) => {
    const read = db.transaction("archives").objectStore("archives").getAll();
    read.onsuccess = () => resolve(read.result);
    read.onerror = () => reject(read.error);
  });
  db.close();
  let textBytes = 0;
  let storedBytes = 0;
  for (const value of values) {
    const compressed = value?.format === "gzip-utf16";
    textBytes += 2 * (compressed ? value.units : value.length);
    storedBytes += compressed ? value.gzip.byteLength : 2 * value.length;
  }
  return { archives: values.length, textBytes, storedBytes };
}

/** A table of `runs`' archive footprints, each run named by `name(run)`. */
export function footprintTable(runs, name) {
  const mb = (bytes) => (bytes / 1e6).toFixed(2);
  const lines = ["| run | archives kept | their texts (MB, UTF-16) | stored (MB) | saved |", "| --- | ---: | ---: | ---: | ---: |"];
  for (const run of runs) {
    const f = run.footprint;
    if (!f) continue;
    const saved = f.textBytes ? `${(100 - (100 * f.storedBytes) / f.textBytes).toFixed(0)}%` : "–";
    lines.push(`| ${name(run)} | ${f.archives} | ${mb(f.textBytes)} | ${mb(f.storedBytes)} | ${saved} |`);
  }
  return lines.join("\n");
}
