// The browser and server a benchmark runs in: headless Chromium (the system's, never a
// download) over a server of the demo's mounts on a free loopback port.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startServer } from "../scripts/serve.mjs";

/** Runs `measure(browser, baseUrl)` in a fresh browser and server, and closes both after. */
export async function withBenchBrowser(measure) {
  const server = await startServer(0);
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
