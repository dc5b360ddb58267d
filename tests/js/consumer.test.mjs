// A user's Vite app: installs the package from the `npm pack` tarball, builds, and runs one
// compaction with the offline provider in Chromium.
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

test("a Vite app installs the tarball, builds, and compacts offline", async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const npm = (args, cwd) => execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const tarball = npm(["pack", "--pack-destination", work, "--loglevel=error"], join(root, "pkg")).trim().split("\n").pop();
  npm(["install", "--no-save", "--offline", "--no-audit", "--no-fund", "--loglevel=error", join(work, tarball)], app);
  execFileSync(process.execPath, [join(app, "node_modules/vite/bin/vite.js"), "build", "--outDir", join(work, "dist"), "--emptyOutDir", "--logLevel", "warn"], { cwd: app, stdio: "inherit" });

  const server = await startServer(0, "127.0.0.1", [["/", join(work, "dist")]]);
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: CHROMIUM_FLAGS });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (err) => errors.push(String(err)));
    page.on("console", (msg) => msg.type() === "error" && errors.push(msg.text()));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForSelector("body[data-done=true]", { timeout: 20_000 });
    const outcome = JSON.parse(await page.textContent("#out"));
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
    assert.deepEqual(outcome.iterations, [1, 4]);
    assert.ok(outcome.saved > 0);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    server.close();
  }
});
