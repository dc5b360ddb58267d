// A user's apps install the package from the `npm pack` tarball, as a user would: a page without
// a bundler (the web entry, and the README's page as written, in JavaScript and in TypeScript)
// and a Node script. The bundlers' apps are in bundlers.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
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

test("a Node script imports the package: pure functions work, LogStore says it needs localStorage and works over the one the script gives globalThis", () => {
  install();
  const out = execFileSync(process.execPath, [join(app, "node/check.mjs")], { cwd: app, encoding: "utf8" });
  const outcome = JSON.parse(out);
  assert.deepEqual(outcome.sections, ["OBJECTIVE ACHIEVED", "KEY DISCOVERIES", "SUCCESSFUL SOLUTIONS"]);
  assert.ok(outcome.tokens > 0);
  assert.equal(outcome.valid, false);
  assert.equal(outcome.logStore, "ContextCompactorError/storage_unavailable");
  assert.equal(outcome.isInstance, true);
  // Before (#80): "there is no window", whatever localStorage the script gave.
  assert.deepEqual(outcome.withStorage, { entries: 2, stored: true });
});

test("the Node entry moved away from its .wasm (a server bundle) takes the installed package's, else says to keep it external", () => {
  install();
  const installed = join(app, "node_modules/context-compactor/node");
  const moved = join(work, "server-bundle");
  rmSync(moved, { recursive: true, force: true });
  execFileSync("cp", ["-r", installed, moved]);
  rmSync(join(moved, "context_compactor_bg.wasm"));
  const script = `const { estimateTokens } = require(${JSON.stringify(join(moved, "context_compactor.js"))}); console.log(estimateTokens("Compacts the logs.") > 0);`;
  // Run where the package is installed (a Next.js build runs in the project): its own .wasm.
  assert.equal(execFileSync(process.execPath, ["-e", script], { cwd: app, encoding: "utf8" }).trim(), "true");
  // Run where it is not: the error that names the fix.
  let said = "";
  try {
    execFileSync(process.execPath, ["-e", script], { cwd: work, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (err) {
    said = err.stderr;
  }
  assert.match(said, /ContextCompactorError: context-compactor could not be initialised: .*server-bundle\/context_compactor_bg\.wasm does not exist \(a server bundle moved this module away from its \.wasm\)\. Keep the package out of the server bundle: in Next\.js, serverExternalPackages: \["context-compactor"\] in next\.config/);
});

/** Serves `mounts`, opens `path` in Chromium (`prepare(page)` first), and returns what
 * `read(page)` resolves to, with the page's errors (its console's too when `consoleErrors`). */
async function visit(mounts, path, read, { prepare = async () => {}, consoleErrors = true } = {}) {
  const server = await startServer(0, "127.0.0.1", mounts);
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: CHROMIUM_FLAGS });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (err) => errors.push(String(err)));
    if (consoleErrors) page.on("console", (msg) => msg.type() === "error" && errors.push(msg.text()));
    await prepare(page);
    await page.goto(`http://127.0.0.1:${server.address().port}${path}`);
    return { ...(await read(page)), errors };
  } finally {
    await browser.close();
    server.close();
  }
}

/** Opens `path` (every `.wasm` request aborted and recorded when `blockWasm`), waits for the
 * page to report, and returns what it wrote to #out, the page's errors and the `.wasm`
 * requests it made. */
async function pageOutcome(mounts, path, { blockWasm = false } = {}) {
  const wasmRequests = [];
  const prepare = async (page) => {
    if (!blockWasm) return;
    await page.route(/\.wasm$/, (route) => {
      wasmRequests.push(route.request().url());
      return route.abort();
    });
  };
  const read = async (page) => {
    await page.waitForSelector("body[data-done=true]", { timeout: 20_000 });
    return { outcome: JSON.parse(await page.textContent("#out")), wasmRequests };
  };
  return visit(mounts, path, read, { prepare });
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

/** The npm README's page without a bundler, word for word. */
function readmePage() {
  const readme = readFileSync(join(root, "docs/npm-README.md"), "utf8");
  const blocks = [...readme.matchAll(/```html\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.equal(blocks.length, 1, "the README has one HTML example");
  return blocks[0];
}

/** A folder of `files` (name to text) under target/consumer, with the consumer app's
 * node_modules beside them (where `tsc` looks for the package), served with it. */
function pageFolder(name, files) {
  const dir = join(work, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  symlinkSync(join(app, "node_modules"), join(dir, "node_modules"));
  return dir;
}

/** Opens the page at `/` until its <output> says something, and returns what it says and the
 * page's errors (a 404 the page reports itself is not one). */
function pageSays(mounts) {
  const read = async (page) => {
    await page.waitForFunction(() => document.querySelector("output")?.textContent, null, { timeout: 20_000 });
    return { says: await page.textContent("output") };
  };
  return visit(mounts, "/", read, { consoleErrors: false });
}

const COMPACTED = /^iterations 1-\d+ compacted: \d+ tokens saved$/;

test("the README's page without a bundler works as written: the import map, the bare specifier, the package folder", async () => {
  install();
  const dir = pageFolder("readme-page", { "index.html": readmePage() });
  const { says, errors } = await pageSays([["/node_modules/", join(dir, "node_modules")], ["/", dir]]);
  assert.match(says, COMPACTED);
  assert.deepEqual(errors, []);
});

test("the README's page in TypeScript: tsc --strict keeps the bare specifier, the import map resolves it", async () => {
  install();
  const html = readmePage();
  const script = html.match(/<script type="module">\n([\s\S]*?)<\/script>/)[1];
  const dir = pageFolder("readme-page-ts", {
    "index.html": html.replace(/<script type="module">[\s\S]*?<\/script>/, '<script type="module" src="./app.js"></script>'),
    "app.ts": script,
    "tsconfig.json": JSON.stringify({
      compilerOptions: { strict: true, target: "es2022", module: "es2022", moduleResolution: "bundler", lib: ["es2022", "dom"], skipLibCheck: false, noEmitOnError: true },
      files: ["app.ts"],
    }),
  });
  const tsc = createRequire(join(root, "tests/node/package.json")).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", dir], { stdio: "inherit" });
  assert.match(readFileSync(join(dir, "app.js"), "utf8"), /from "context-compactor\/web"/, "the specifier is kept");
  const { says, errors } = await pageSays([["/node_modules/", join(dir, "node_modules")], ["/", dir]]);
  assert.match(says, COMPACTED);
  assert.deepEqual(errors, []);
});

test("the web entry is the two files the README names; without its .wasm init() rejects naming the URL", async () => {
  install();
  const installed = join(app, "node_modules/context-compactor");
  const html = readmePage().replace("/node_modules/context-compactor/context_compactor.js", "/lib/context_compactor.js");
  const two = pageFolder("two-files", { "index.html": html });
  mkdirSync(join(two, "lib"));
  for (const file of ["context_compactor.js", "context_compactor_bg.wasm"]) copyFileSync(join(installed, file), join(two, "lib", file));
  const served = await pageSays([["/", two]]);
  assert.match(served.says, COMPACTED);
  assert.deepEqual(served.errors, []);

  // Served elsewhere, the .wasm is found where init() is told it is.
  mkdirSync(join(two, "wasm"));
  copyFileSync(join(installed, "context_compactor_bg.wasm"), join(two, "wasm/context_compactor_bg.wasm"));
  rmSync(join(two, "lib/context_compactor_bg.wasm"));
  const told = html.replace("await init();", 'await init({ module_or_path: "/wasm/context_compactor_bg.wasm" });');
  assert.notEqual(told, html, "the README's page calls init()");
  writeFileSync(join(two, "index.html"), told);
  assert.match((await pageSays([["/", two]])).says, COMPACTED);

  writeFileSync(join(two, "index.html"), html);
  const { says } = await pageSays([["/", two]]);
  assert.match(says, /^not_initialized: context-compactor could not be initialised: http:\/\/127\.0\.0\.1:\d+\/lib\/context_compactor_bg\.wasm answered 404 Not Found\. Rollup, esbuild and Bun do not copy it: copy node_modules\/context-compactor\/context_compactor_bg\.wasm beside the bundle or import "context-compactor\/inline"$/);
});

/** What the README's page (`html`, by default as written) says when `route` answers its .wasm
 * request (none: served as it is). */
async function readmePageSays(route, html = readmePage()) {
  const dir = pageFolder("routed", { "index.html": html });
  const read = async (page) => {
    await page.waitForFunction(() => document.querySelector("output")?.textContent, null, { timeout: 20_000 });
    return { says: await page.textContent("output") };
  };
  const prepare = async (page) => route && (await page.route(/\.wasm$/, route));
  return (await visit([["/node_modules/", join(dir, "node_modules")], ["/", dir]], "/", read, { prepare, consoleErrors: false })).says;
}

const WASM_URL = "http:\\/\\/127\\.0\\.0\\.1:\\d+\\/node_modules\\/context-compactor\\/context_compactor_bg\\.wasm";

test("what loads in the .wasm's place is not_initialized naming the URL, never a CompileError or a TypeError", async () => {
  install();
  // What Vite 6's dev server answered for a .wasm it did not have: its index page, 200 text/html.
  const html = readmePage();
  const page = await readmePageSays((route) => route.fulfill({ status: 200, contentType: "text/html", body: html }));
  assert.match(page, new RegExp(`^not_initialized: context-compactor could not be initialised: ${WASM_URL} answered text/html, not WebAssembly\\. `));
  // Served as application/wasm (streamed), but another module: one with no import of ours.
  const other = Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);
  const streamed = await readmePageSays((route) => route.fulfill({ status: 200, contentType: "application/wasm", body: Buffer.concat([other, Buffer.from([1])]) }));
  assert.match(streamed, new RegExp(`^not_initialized: context-compactor could not be initialised: ${WASM_URL} is not this version's WebAssembly \\(`));
  // The network: the request fails.
  const aborted = await readmePageSays((route) => route.abort());
  assert.match(aborted, new RegExp(`^not_initialized: context-compactor could not be initialised: ${WASM_URL} could not be fetched \\(`));
  // Bytes handed to init() that are not WebAssembly.
  const given = await readmePageSays(null, html.replace("await init();", "await init({ module_or_path: new TextEncoder().encode(\"<!doctype html>\") });"));
  assert.match(given, /^not_initialized: context-compactor could not be initialised: what init\(\) was given is not this version's WebAssembly \(/);
});

test("the web entry pre-bundled into Vite's .vite/deps takes the package's own .wasm, and says to exclude it when there is none", async () => {
  install();
  const installed = join(app, "node_modules/context-compactor");
  const html = readmePage().replace("/node_modules/context-compactor/context_compactor.js", "/node_modules/.vite/deps/context-compactor.js");
  const dir = pageFolder("vite-deps", { "index.html": html });
  const deps = join(work, "vite-deps-cache");
  mkdirSync(deps, { recursive: true });
  copyFileSync(join(installed, "context_compactor.js"), join(deps, "context-compactor.js"));
  const mounts = [["/node_modules/.vite/deps/", deps], ["/node_modules/", join(dir, "node_modules")], ["/", dir]];
  assert.match((await pageSays(mounts)).says, COMPACTED);
  // A project whose node_modules the dev server does not serve at /node_modules/.
  const bare = join(work, "vite-deps-bare");
  rmSync(bare, { recursive: true, force: true });
  mkdirSync(bare);
  writeFileSync(join(bare, "index.html"), html);
  const { says } = await pageSays([["/node_modules/.vite/deps/", deps], ["/", bare]]);
  assert.match(says, /^not_initialized: context-compactor could not be initialised: http:\/\/127\.0\.0\.1:\d+\/node_modules\/context-compactor\/context_compactor_bg\.wasm answered 404 Not Found\. Vite pre-bundled it without its \.wasm: add optimizeDeps: \{ exclude: \["context-compactor"\] \} to vite\.config$/);
});
