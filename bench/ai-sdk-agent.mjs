// An AI SDK chat agent at scale (#78), on the real `ai` package (bench/ai-sdk-agent-core.mjs,
// bundled by esbuild for the page): 24 user messages of 50 steps each (1,200 turns), a
// 1M-token window, `prepareStep` sending what `MessageCompactor.compact(messages)` returns, in
// headless Chromium (archives in IndexedDB). Three ways of carrying the history from one user
// message to the next:
//   carried  the list the last `prepareStep` returned, then the call's answer;
//   own      the SDK's own: the app appends `responseMessages` (every step's, uncompacted) to
//            its history, as `ai` 7's chat apps do;
//   reloaded the SDK's own, the page reloaded before every user message (a new
//            `MessageCompactor` of the same conversation in a new page; the app's history
//            handed to the next load).
// Prints, for each: compactions (clearings, summaries), results cleared and of them cleared
// again, turns summarised again, the archives' bytes (`archives()`' `bytes`, UTF-16 units),
// the slowest `compact()`, the requests' size (mean and peak share of the window) and the
// run's time; then the size of the last compaction's record in localStorage.
// Usage: node bench/ai-sdk-agent.mjs [turns per message=50] [messages=24]   (BENCH_PKG=<pkg dir>)
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freshPage, withBenchBrowser } from "./browser.mjs";
import { WINDOW, figures } from "./ai-sdk-agent-core.mjs";

const root = join(fileURLToPath(import.meta.url), "..", "..");
const STEPS = Number(process.argv[2] ?? 50);
const MESSAGES = Number(process.argv[3] ?? 24);
const bundleDir = join(root, "target/bench");
mkdirSync(bundleDir, { recursive: true });
// The agent and the `ai` package as one module for the page (esbuild from the bundlers' tests).
execFileSync(join(root, "tests/bundlers/node_modules/.bin/esbuild"), [join(root, "bench/ai-sdk-agent-core.mjs"), "--bundle", "--format=esm", "--log-level=warning", `--outfile=${join(bundleDir, "ai-sdk-agent-core.js")}`], { stdio: "inherit" });
const pkgDir = process.env.BENCH_PKG ?? join(root, "pkg");
const MOUNTS = [
  ["/pkg/", pkgDir],
  ["/bench/", bundleDir],
];

/** In the page: `messages` user messages of the agent `agent` (a new one when null), over a new
 * MessageCompactor of the conversation `way`; the agent after them, and the archives' bytes. */
async function inPage({ agent, way, messages, steps }) {
  const pkg = await import("/pkg/context_compactor.js");
  await pkg.default();
  const core = await import("/bench/ai-sdk-agent-core.js");
  const compactor = new pkg.MessageCompactor({ provider: { type: "offline" }, shape: "ai-sdk", conversation: `ai-sdk-${way}`, contextWindowTokens: core.WINDOW });
  agent ??= core.newAgent();
  const carry = way === "carried" ? "carried" : "own";
  for (let n = 0; n < messages; n++) await core.userMessage(agent, compactor, pkg.estimateTokens, { steps, way: carry });
  const bytes = (await compactor.archives()).reduce((sum, a) => sum + a.bytes, 0);
  const record = localStorage.getItem(`cc_messages_ai-sdk-${way}_last_compaction`)?.length ?? 0;
  return { agent, bytes, record };
}

/** One run of the agent, its history carried `way`. */
async function run(browser, baseUrl, way) {
  const page = await freshPage(browser, `${baseUrl}pkg/package.json`);
  const started = performance.now();
  let state = { agent: null, bytes: 0 };
  try {
    if (way === "reloaded") {
      for (let n = 0; n < MESSAGES; n++) {
        if (n > 0) await page.reload();
        state = await page.evaluate(inPage, { agent: state.agent, way, messages: 1, steps: STEPS });
      }
    } else {
      state = await page.evaluate(inPage, { agent: null, way, messages: MESSAGES, steps: STEPS });
    }
  } finally {
    await page.close();
  }
  return { way, ...figures(state.agent), archiveBytes: state.bytes, record: state.record, ms: Math.round(performance.now() - started) };
}

console.log("| history across calls | turns | clearings | summaries | results cleared | of them again | summaries refolding a turn | archives | slowest compact() | tokens per request, mean | peak | run |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
const records = [];
await withBenchBrowser(async (browser, baseUrl) => {
  for (const way of ["carried", "own", "reloaded"]) {
    const r = await run(browser, baseUrl, way);
    records.push(`${way} ${r.record}`);
    const share = (t) => `${t} (${Math.round((100 * t) / WINDOW)}%)`;
    console.log(`| ${r.way} | ${r.turns} | ${r.clearings} | ${r.summaries} | ${r.cleared} | ${r.again} | ${r.refolded} | ${(r.archiveBytes / 1e6).toFixed(1)} MB | ${r.slowest} ms | ${share(r.mean)} | ${share(r.peak)} | ${(r.ms / 1000).toFixed(1)} s |`);
  }
}, MOUNTS);
console.log(`\nThe last compaction's record in localStorage at the end, characters: ${records.join(", ")}`);
