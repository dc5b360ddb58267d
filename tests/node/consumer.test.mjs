// A user's apps install the package from the `npm pack` tarball, as a user would: a Vite app
// (the default, bundler entry), a page without a bundler (the web entry) and a Node script.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startServer } from "../../scripts/serve.mjs";
import { CHROMIUM_FLAGS } from "./browser.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const app = join(root, "tests/consumer");
const work = join(root, "target/consumer");

const npm = (args, cwd) => execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });

/** Packs pkg/ once and installs the tarball into the consumer app. */
let installed = null;
function install() {
  if (installed) return installed;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const tarball = npm(["pack", "--pack-destination", work, "--loglevel=error"], join(root, "pkg")).trim().split("\n").pop();
  npm(["install", "--no-save", "--offline", "--no-audit", "--no-fund", "--loglevel=error", join(work, tarball)], app);
  installed = join(work, tarball);
  return installed;
}

test("npm publish --dry-run accepts the package", () => {
  const report = execFileSync("npm", ["publish", "--dry-run", "--offline", "--loglevel=notice"], { cwd: join(root, "pkg"), encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  assert.ok(report !== undefined);
});

test("a Node script imports the package: pure functions work, LogStore says it needs a browser", () => {
  install();
  const out = execFileSync(process.execPath, [join(app, "node/check.mjs")], { cwd: app, encoding: "utf8" });
  const outcome = JSON.parse(out);
  assert.deepEqual(outcome.sections, ["OBJECTIVE ACHIEVED", "KEY DISCOVERIES", "SUCCESSFUL SOLUTIONS"]);
  assert.ok(outcome.tokens > 0);
  assert.equal(outcome.valid, false);
  assert.equal(outcome.logStore, "ContextCompactorError/storage_unavailable");
  assert.equal(outcome.isInstance, true);
});

/** Serves `mounts`, opens `path` in Chromium (every `.wasm` request aborted and recorded when
 * `blockWasm`), waits for the page to report, and returns what it wrote to #out, the page's
 * errors and the `.wasm` requests it made. */
async function pageOutcome(mounts, path, { blockWasm = false } = {}) {
  const server = await startServer(0, "127.0.0.1", mounts);
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: CHROMIUM_FLAGS });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (err) => errors.push(String(err)));
    page.on("console", (msg) => msg.type() === "error" && errors.push(msg.text()));
    const wasmRequests = [];
    if (blockWasm) {
      await page.route(/\.wasm$/, (route) => {
        wasmRequests.push(route.request().url());
        return route.abort();
      });
    }
    await page.goto(`http://127.0.0.1:${server.address().port}${path}`);
    await page.waitForSelector("body[data-done=true]", { timeout: 20_000 });
    return { outcome: JSON.parse(await page.textContent("#out")), errors, wasmRequests };
  } finally {
    await browser.close();
    server.close();
  }
}

const plainMounts = () => [["/node_modules/", join(app, "node_modules")], ["/", join(app, "plain")]];

test("a page without a bundler uses the web entry: a clear error before init(), a compaction after", async () => {
  install();
  const { outcome, errors } = await pageOutcome(plainMounts(), "/");
  assert.deepEqual(outcome, { beforeInit: "ContextCompactorError/not_initialized/true", ok: true, iterations: [1, 4] });
  assert.deepEqual(errors, []);
});

test("the inline entry compacts without fetching any .wasm file", async () => {
  install();
  const { outcome, errors, wasmRequests } = await pageOutcome(plainMounts(), "/inline.html", { blockWasm: true });
  assert.deepEqual(outcome, { ok: true, iterations: [1, 4] });
  assert.deepEqual(wasmRequests, []);
  assert.deepEqual(errors, []);
});

test("a Vite app (the default, bundler entry) builds and compacts offline", async () => {
  install();
  execFileSync(process.execPath, [join(app, "node_modules/vite/bin/vite.js"), "build", "--outDir", join(work, "dist"), "--emptyOutDir", "--logLevel", "warn"], { cwd: app, stdio: "inherit" });
  const { outcome, errors } = await pageOutcome([["/", join(work, "dist")]], "/");
  assert.equal(outcome.ok, true, JSON.stringify(outcome));
  assert.deepEqual(outcome.iterations, [1, 4]);
  assert.ok(outcome.saved > 0);
  assert.deepEqual(errors, []);
});
