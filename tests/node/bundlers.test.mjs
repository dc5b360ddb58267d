// The npm README's first example, built by each bundler a user picks, at the bundler's defaults,
// from the packed package (installed as a user installs it), and run in Chromium: every one
// compacts, or fails with the not_initialized error that names the fix, and then the README's
// fix for that bundler makes it compact. The bundlers are pinned in tests/bundlers/package.json
// and installed by scripts/setup.sh; none downloads anything while it runs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startServer } from "../../scripts/serve.mjs";
import { CHROMIUM_FLAGS } from "./browser.mjs";
import { startMock } from "../gemini-mock/server.mjs";
import { freePort } from "./webdriver.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const project = join(root, "tests/bundlers");
const dist = join(project, "dist");
const bin = (path) => join(project, "node_modules", path);
const readme = readFileSync(join(root, "docs/npm-README.md"), "utf8");

/** The README's first JavaScript example, word for word. */
const FIRST_EXAMPLE = /```js\n([\s\S]*?)```/.exec(readme)[1];
/** The README's AI SDK example (`prepareStep`), word for word. */
const AI_SDK_EXAMPLE = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).find((code) => code.includes('from "ai"'));
/** The README's fix for the bundlers that leave the .wasm behind, as a user types it. */
const COPY_FIX = /`(cp node_modules\/context-compactor\/context_compactor_bg\.wasm dist\/)`/.exec(readme)?.[1];
const COMPACTED = /^iterations 1-\d+ compacted: \d+ tokens saved$/;
/** The page a user writes around a bundle that is one script. */
const PAGE = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>app</title></head><body><script type="module" src="./index.js"></script></body></html>\n';
// Next.js asks before sending telemetry; Vite and Parcel keep caches that would hide a rebuild.
const ENV = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NO_COLOR: "1" };

const run = (command, args, cwd = project) => execFileSync(command, args, { cwd, env: ENV, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

let browser;
before(() => {
  rmSync(join(root, "target/bundlers"), { recursive: true, force: true });
  mkdirSync(join(root, "target/bundlers"), { recursive: true });
  const tarball = run("npm", ["pack", "--pack-destination", join(root, "target/bundlers"), "--loglevel=error"], join(root, "pkg")).trim().split("\n").pop();
  run("npm", ["install", "--no-save", "--offline", "--no-audit", "--no-fund", "--loglevel=error", join(root, "target/bundlers", tarball)]);
  mkdirSync(join(project, "src"), { recursive: true });
  writeFileSync(join(project, "src/index.js"), FIRST_EXAMPLE);
});
before(async () => {
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: CHROMIUM_FLAGS });
});
after(async () => {
  await browser?.close();
});

/** What the page at `url` says in its <output>, with its uncaught errors and the requests that
 * failed (a favicon aside). */
async function pageSays(url) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (err) => errors.push(String(err)));
  page.on("response", (response) => {
    if (response.status() >= 400 && !response.url().endsWith("/favicon.ico")) errors.push(`${response.status()} ${response.url()}`);
  });
  try {
    await page.goto(url);
    await page.waitForFunction(() => document.querySelector("output")?.textContent, null, { timeout: 30_000 });
    return { says: await page.textContent("output"), errors };
  } finally {
    await page.close();
  }
}

/** What the built dist/ says when served as it is. */
async function distSays() {
  const server = await startServer(0, "127.0.0.1", [["/", dist]]);
  try {
    return await pageSays(`http://127.0.0.1:${server.address().port}/`);
  } finally {
    server.close();
  }
}

/** Builds with `build()` into a fresh dist/ (a page around it when the bundler writes none). */
function buildFresh(build, { page = false } = {}) {
  rmSync(dist, { recursive: true, force: true });
  rmSync(join(project, ".parcel-cache"), { recursive: true, force: true });
  rmSync(join(project, "node_modules/.vite"), { recursive: true, force: true });
  build();
  if (page) writeFileSync(join(dist, "index.html"), PAGE);
}

async function assertCompacts({ says, errors }, what) {
  assert.match(says, COMPACTED, what);
  assert.deepEqual(errors, [], what);
}

const VITES = ["vite5", "vite6", "vite7", "vite8"];

for (const vite of VITES) {
  test(`${vite}: vite build at its defaults, then the page compacts`, async () => {
    buildFresh(() => run(process.execPath, [bin(`${vite}/bin/vite.js`), "build", "--logLevel", "warn"]));
    await assertCompacts(await distSays(), vite);
  });
}

/** Runs `args` until `ready` matches what it printed; resolves to the process. */
function startUntil(args, ready, cwd = project) {
  const child = spawn(process.execPath, args, { cwd, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
  let printed = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`not ready after 60 s: ${printed}`));
    }, 60_000);
    const read = (chunk) => {
      printed += chunk;
      if (ready.test(printed)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code}: ${printed}`));
    });
  });
}

/** Stops `child` and waits for it to be gone. */
function stop(child) {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.removeAllListeners("exit");
    child.once("exit", resolve);
    child.kill();
  });
}

for (const vite of VITES) {
  test(`${vite}: the dev server at its defaults (dependencies pre-bundled), the page compacts`, async () => {
    rmSync(join(project, "node_modules/.vite"), { recursive: true, force: true });
    const port = await freePort();
    const server = await startUntil([bin(`${vite}/bin/vite.js`), "--port", String(port), "--strictPort", "--host", "127.0.0.1"], /Local:/);
    try {
      await assertCompacts(await pageSays(`http://127.0.0.1:${port}/`), vite);
    } finally {
      await stop(server);
    }
  });
}

/** webpack with no configuration but the mode: ./src/index.js to dist/main.js. */
function webpack(name) {
  const script = `require(${JSON.stringify(bin(name))})({ mode: "production" }, (err, stats) => {
    if (err || stats.hasErrors()) { console.error(err ?? stats.toString("errors-only")); process.exit(1); }
  });`;
  run(process.execPath, ["-e", script]);
  writeFileSync(join(dist, "index.html"), PAGE.replace("./index.js", "./main.js"));
}

for (const name of ["webpack", "webpack5108"]) {
  test(`${name === "webpack" ? "webpack 5.113" : "webpack 5.108"} at its defaults, then the page compacts`, async () => {
    buildFresh(() => webpack(name));
    await assertCompacts(await distSays(), name);
  });
}

test("webpack 5.113: the bundler entry (initialised on import, init() does nothing) compacts", async () => {
  const source = join(project, "src/index.js");
  writeFileSync(source, FIRST_EXAMPLE.replace('from "context-compactor"', 'from "context-compactor/bundler"'));
  try {
    buildFresh(() => webpack("webpack"));
  } finally {
    writeFileSync(source, FIRST_EXAMPLE);
  }
  await assertCompacts(await distSays(), "webpack /bundler");
});

test("Parcel 2 at its defaults (parcel build index.html), then the page compacts", async () => {
  buildFresh(() => run(process.execPath, [bin("parcel/lib/bin.js"), "build", "index.html", "--no-cache", "--log-level", "warn"]));
  await assertCompacts(await distSays(), "parcel");
});

/** The bundlers that leave the .wasm behind, each with the command that builds dist/index.js. */
const LEAVE_THE_WASM = {
  "Rollup 4": () => run(process.execPath, [bin("rollup/dist/bin/rollup"), "src/index.js", "--file", "dist/index.js", "--format", "es", "--plugin", "@rollup/plugin-node-resolve", "--silent"]),
  esbuild: () => run(bin(".bin/esbuild"), ["src/index.js", "--bundle", "--format=esm", "--outfile=dist/index.js", "--log-level=warning"]),
  Bun: () => run(bin(".bin/bun"), ["build", "src/index.js", "--outdir", "dist", "--target", "browser"]),
};

for (const [name, build] of Object.entries(LEAVE_THE_WASM)) {
  test(`${name}: at its defaults init() names the fix; the README's copy makes the page compact`, async () => {
    buildFresh(build, { page: true });
    const { says } = await distSays();
    assert.match(says, /^not_initialized: context-compactor could not be initialised: http:\/\/127\.0\.0\.1:\d+\/context_compactor_bg\.wasm answered 404 Not Found\. Rollup, esbuild and Bun do not copy it: copy /, name);
    assert.ok(says.includes('import "context-compactor/inline"'), says);
    assert.ok(COPY_FIX, "the README gives the copy");
    run("bash", ["-c", COPY_FIX]);
    await assertCompacts(await distSays(), `${name} with the copy`);
  });

  test(`${name}: the inline entry compacts with nothing to copy`, async () => {
    const source = join(project, "src/index.js");
    writeFileSync(source, FIRST_EXAMPLE.replace('from "context-compactor"', 'from "context-compactor/inline"'));
    try {
      buildFresh(build, { page: true });
    } finally {
      writeFileSync(source, FIRST_EXAMPLE);
    }
    await assertCompacts(await distSays(), `${name} inline`);
  });
}

test("Next.js 15: a client component that imports the package builds (prerendered on the server) and compacts in the page", async () => {
  const app = join(project, "next-app");
  rmSync(join(app, ".next"), { recursive: true, force: true });
  run(process.execPath, [bin("next/dist/bin/next"), "build"], app);
  const port = await freePort();
  const server = await startUntil([bin("next/dist/bin/next"), "start", "--port", String(port), "--hostname", "127.0.0.1"], /Ready in|started server/i, app);
  try {
    await assertCompacts(await pageSays(`http://127.0.0.1:${port}/`), "next");
  } finally {
    await stop(server);
  }
});

test("the inline entry names no .wasm file, so no bundler emits one beside it", () => {
  const inline = readFileSync(join(project, "node_modules/context-compactor/inline.js"), "utf8");
  assert.doesNotMatch(inline, /new URL\(['"][^'"]*\.wasm['"]/);
  buildFresh(() => {
    const source = join(project, "src/index.js");
    writeFileSync(source, FIRST_EXAMPLE.replace('from "context-compactor"', 'from "context-compactor/inline"'));
    try {
      run(process.execPath, [bin("vite8/bin/vite.js"), "build", "--logLevel", "warn"]);
    } finally {
      writeFileSync(source, FIRST_EXAMPLE);
    }
  });
  const emitted = run("find", [dist, "-name", "*.wasm"]).trim();
  assert.equal(emitted, "", "Vite emitted a .wasm for the inline entry");
});

test("the README's AI SDK example, bundled by esbuild with the real ai package, runs its agent against the Gemini mock", async () => {
  assert.ok(AI_SDK_EXAMPLE, "the README has an AI SDK example");
  const source = join(project, "src/ai-sdk.js");
  writeFileSync(source, AI_SDK_EXAMPLE);
  buildFresh(() => {
    run(bin(".bin/esbuild"), ["src/ai-sdk.js", "--bundle", "--format=esm", "--outfile=dist/index.js", "--log-level=warning"]);
    run("bash", ["-c", COPY_FIX]);
  }, { page: true });
  const mock = await startMock(0);
  const server = await startServer(0, "127.0.0.1", [["/", dist]]);
  const page = await browser.newPage();
  const errors = [];
  const logged = [];
  page.on("pageerror", (err) => errors.push(String(err)));
  page.on("console", (msg) => logged.push(msg.text()));
  try {
    // The README's key and endpoint, pointed at the mock: a model that calls the page tool.
    await page.addInitScript((url) => {
      globalThis.GEMINI_BASE_URL = url;
      globalThis.GEMINI_API_KEY = "scenario:tool_agent#ai-sdk";
    }, mock.url);
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    const deadline = Date.now() + 60_000;
    while (!logged.some((line) => line.startsWith("Read ")) && errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(errors, []);
    assert.ok(logged.includes("Read 10 pages: regions 3 and 9 missed the Q3 target."), logged.join("\n"));
    assert.ok(logged.some((line) => /^(clear|summarize): \d+ → \d+ tokens$/.test(line)), logged.join("\n"));
    const calls = mock.requests.filter((r) => r.method === "POST");
    assert.equal(calls.length, 12, "ten steps with a call, the recall tool's, and the answer");
    // The recall tool, wired as the README wires it, gave page 0's result back whole by its
    // call id while that result was cleared in the list sent.
    const recalled = (calls.at(-1).body.contents ?? []).flatMap((c) => c.parts ?? []).find((p) => p.functionResponse?.id === "recall_0");
    const answer = JSON.stringify(recalled?.functionResponse.response ?? null);
    assert.ok(answer.includes("https://example.com/sales/0") && answer.includes("r3,1180,1200"), answer.slice(0, 400));
    // Each request held every call with its result (the mock refuses any other with a 400),
    // and the calls Gemini signed were sent back signed.
    const sent = calls.map((r) => JSON.stringify(r.body));
    assert.ok(sent.at(-1).includes("c2lnLSR79"), "the last call's thoughtSignature went back");
    assert.ok(sent.at(-1).includes("[cleared by context-compactor: "), "older pages were cleared in the last request");
  } finally {
    await page.close();
    server.close();
    await mock.close();
    rmSync(source, { force: true });
  }
});
