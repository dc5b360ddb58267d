// Shared set-up of the page tests: the demo server and a headless Debian Chromium.
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startServer } from "../../scripts/serve.mjs";
import { startMock } from "../gemini-mock/server.mjs";

export const outputDir = fileURLToPath(new URL("../../test-output/", import.meta.url));
mkdirSync(outputDir, { recursive: true });

export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

/** Starts the demo server on a free loopback port and a Chromium (and, with `withMock`, the
 * Gemini mock as `mock`); returns them and a closer. */
export async function launch({ withMock = false } = {}) {
  const server = await startServer(0);
  const mock = withMock ? await startMock(0) : null;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: CHROMIUM_FLAGS,
    headless: true,
  });
  const baseUrl = `http://127.0.0.1:${server.address().port}/`;
  return {
    baseUrl,
    browser,
    mock,
    async close() {
      await browser.close();
      await mock?.close();
      await new Promise((done) => server.close(done));
    },
  };
}

/** A page in a fresh context (its own empty localStorage) that records console errors and
 * uncaught exceptions into `errors`. Closing the page closes its context. */
export async function openPage(browser, url, { viewport = { width: 1280, height: 900 } } = {}) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on("close", () => context.close().catch(() => {}));
  const errors = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(msg.text());
  });
  page.on("pageerror", (err) => errors.push(String(err)));
  await page.goto(url);
  await page.waitForSelector("body[data-ready=true]", { timeout: 15000 });
  return { page, errors };
}

/** Runs `times` simulated iterations through the page's Continue Reasoning button. */
export async function iterate(page, times) {
  for (let i = 0; i < times; i++) {
    await page.click("#btn-continue");
    await page.waitForFunction(() => !document.getElementById("btn-continue").disabled);
  }
}

/** Switches the page to the Gemini provider pointed at the mock, scenario `mock-<scenario>`. */
export async function useGemini(page, mockUrl, scenario, key) {
  await page.click("#settings summary");
  await page.selectOption("#set-provider", "gemini");
  await page.fill("#set-key", key);
  await page.fill("#set-model", `mock-${scenario}`);
  await page.fill("#set-base", mockUrl);
  await page.dispatchEvent("#set-base", "change");
}

/** Sets the demo's context window (Settings must be open). */
export async function setWindow(page, tokens) {
  await page.fill("#set-window", String(tokens));
  await page.dispatchEvent("#set-window", "change");
}

/** In the page: the archives in the package's IndexedDB database whose keys start with
 * `prefix`, as `{ key: text }` (decompressed as the package stores them); `{}` when there is no database (it is never created here). */
export async function databaseArchives(prefix = "") {
  const db = await new Promise((resolve) => {
    const request = indexedDB.open("context-compactor-archives");
    request.onupgradeneeded = () => request.transaction.abort();
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => resolve(null);
  });
  if (!db) return {};
  if (!db.objectStoreNames.contains("archives")) {
    db.close();
    return {};
  }
  const store = db.transaction("archives").objectStore("archives");
  const answer = (request) =>
    new Promise((resolve, reject) => {
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  const [keys, values] = await Promise.all([answer(store.getAllKeys()), answer(store.getAll())]);
  db.close();
  // An archive stored compressed ({ format: "gzip-utf16", gzip }) is read as its text.
  const text = async (value) => {
    if (typeof value === "string" || value?.format !== "gzip-utf16") return value;
    const stream = new Blob([value.gzip]).stream().pipeThrough(new DecompressionStream("gzip"));
    const units = new Uint16Array(await new Response(stream).arrayBuffer());
    const parts = [];
    for (let i = 0; i < units.length; i += 8192) parts.push(String.fromCharCode.apply(null, units.subarray(i, i + 8192)));
    return parts.join("");
  };
  const found = {};
  for (const [i, key] of keys.entries()) {
    if (key.startsWith(prefix)) found[key] = await text(values[i]);
  }
  return found;
}

/** In the page: removes `key` from the package's IndexedDB database, as the browser's
 * eviction or other code could. */
export async function removeDatabaseArchive(key) {
  const db = await new Promise((resolve, reject) => {
    const request = indexedDB.open("context-compactor-archives");
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  await new Promise((resolve, reject) => {
    const tx = db.transaction(["archives", "meta"], "readwrite");
    tx.objectStore("archives").delete(key);
    // Raise the generation, as any writer does, so that open copies read the database again.
    const meta = tx.objectStore("meta");
    const read = meta.get("generation");
    read.onsuccess = () => meta.put((Number(read.result) || 0) + 1, "generation");
    tx.oncomplete = resolve;
    tx.onabort = () => reject(tx.error);
  });
  db.close();
}

/** Waits (at most `timeout` ms) until the package's IndexedDB database holds an archive whose
 * key starts with `prefix`; its key. */
export async function waitForDatabaseArchive(page, prefix, timeout) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const keys = Object.keys(await page.evaluate(databaseArchives, prefix));
    if (keys.length > 0) return keys[0];
    if (Date.now() > deadline) throw new Error(`no archive under ${prefix} after ${timeout} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
