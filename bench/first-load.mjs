// What each browser entry costs a first visit: the bytes it downloads (gzip) and the time from
// navigation until init() resolves, in headless Chromium over loopback (no network latency: the
// difference is decoding and compiling). Each visit is a new browser context (an empty cache).
// Usage: node bench/first-load.mjs [visits]  (after scripts/build.sh)
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startServer, DEMO_MOUNTS } from "../scripts/serve.mjs";

const pkg = fileURLToPath(new URL("../pkg/", import.meta.url));
const visits = Number(process.argv[2] ?? 15);
const gzip = (...files) => files.reduce((sum, file) => sum + gzipSync(readFileSync(join(pkg, file)), { level: 9 }).length, 0);
const ENTRIES = {
  web: gzip("context_compactor.js", "context_compactor_bg.wasm"),
  inline: gzip("inline.js"),
};

const server = await startServer(0, "127.0.0.1", [["/bench/", join(fileURLToPath(new URL(".", import.meta.url)), ".")], ...DEMO_MOUNTS]);
const baseUrl = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
try {
  for (const [entry, bytes] of Object.entries(ENTRIES)) {
    const times = [];
    for (let visit = 0; visit < visits; visit++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      page.on("pageerror", (err) => console.error(String(err)));
      page.on("console", (msg) => msg.type() === "error" && console.error(msg.text()));
      await page.goto(`${baseUrl}bench/first-load.html?entry=${entry}`);
      await page.waitForFunction(() => window.firstLoadMs !== undefined, null, { timeout: 60_000 });
      times.push(await page.evaluate(() => window.firstLoadMs));
      await context.close();
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    console.log(`${entry}: ${bytes} B gzip; first load median ${median.toFixed(1)} ms (${times[0].toFixed(1)}–${times.at(-1).toFixed(1)}, ${visits} visits)`);
  }
} finally {
  await browser.close();
  server.close();
}
