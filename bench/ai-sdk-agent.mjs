// An AI SDK chat agent at scale (#78), on the real `ai` package: `generateText` with the SDK's
// own mock model (`MockLanguageModelV3`, which calls `fetch_page` at every step and answers in
// words at the last), 24 user messages of 50 steps each (1,200 turns), a 1M-token window, and
// `prepareStep` sending what `MessageCompactor.compact(messages)` returns. Two ways of carrying
// the history from one user message to the next:
//   own      the SDK's own: the app appends `responseMessages` (every step's, uncompacted) to its history,
//            as `ai` 7's chat apps do;
//   carried  the list the last `prepareStep` returned, then the call's answer;
//   reloaded the SDK's own, the page reloaded before every user message (a new
//            `MessageCompactor` of the same conversation: what it kept in memory is gone).
// Prints, for each: compactions (clearings, summaries), results cleared and of them cleared
// again, turns summarised again, the archives' bytes, the slowest `compact()`, the requests'
// size (mean and peak share of the window) and the run's time. Runs in Node on the package's
// Node flavour (archives in memory there).
// Usage: node bench/ai-sdk-agent.mjs [turns per message=50] [messages=24]   (BENCH_PKG=<pkg dir>)
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";

const root = join(fileURLToPath(import.meta.url), "..", "..");
const pkgDir = process.env.BENCH_PKG ?? join(root, "pkg");
const { MessageCompactor, estimateTokens } = createRequire(import.meta.url)(join(pkgDir, "node", "context_compactor.js"));
const STEPS = Number(process.argv[2] ?? 50);
const MESSAGES = Number(process.argv[3] ?? 24);
const WINDOW = 1_000_000;

/** A table of about `rows` rows, distinct for `turn`: a page the agent fetched. */
function table(turn, rows) {
  let out = `region,quarter,revenue,target (page ${turn})\n`;
  for (let row = 0; row < rows; row++) out += `r${row % 12},${turn},${1000 + row * 7 + turn},${1200 + row}\n`;
  return out;
}

const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } };

/** One run of the agent, its history carried `way` ("own", "carried" or "reloaded"). */
async function run(way) {
  const open = () => new MessageCompactor({ provider: { type: "offline" }, shape: "ai-sdk", conversation: `ai-sdk-${way}`, contextWindowTokens: WINDOW });
  let compactor = open();
  let turn = 0;
  const requests = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      requests.push(estimateTokens(JSON.stringify(options.prompt)));
      const last = options.prompt.at(-1);
      const step = options.prompt.filter((m) => m.role === "tool").length;
      // The last step of a user message answers in words; every other calls the tool.
      if (last.role === "tool" && turn % STEPS === 0) {
        return { content: [{ type: "text", text: `Pages up to ${turn - 1} read; the totals are in the tables above.` }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
      }
      const id = `call_${turn}`;
      turn += 1;
      return {
        content: [{ type: "text", text: `Step ${turn}: reading page ${turn} (${step} results so far).` }, { type: "tool-call", toolCallId: id, toolName: "fetch_page", input: JSON.stringify({ page: turn }) }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
  });
  const tools = {
    fetch_page: tool({
      description: "Fetches one page of the sales report.",
      inputSchema: jsonSchema({ type: "object", properties: { page: { type: "number" } }, required: ["page"] }),
      execute: async ({ page }) => table(page, 225 + ((page * 37) % 300)),
    }),
  };
  const made = [];
  let slowest = 0;
  let history = [];
  const started = performance.now();
  let archiveBytes = 0;
  for (let n = 0; n < MESSAGES; n++) {
    if (way === "reloaded" && n > 0) {
      archiveBytes += (await compactor.archives()).reduce((sum, a) => sum + a.bytes, 0);
      compactor = open();
    }
    history.push({ role: "user", content: n === 0 ? "Find which regions missed the Q3 target in the sales report and write a short report." : `Now also pages ${n * STEPS} to ${(n + 1) * STEPS - 1}; leave region ${n % 12} out.` });
    let sent = history;
    const result = await generateText({
      model,
      tools,
      messages: history,
      stopWhen: stepCountIs(STEPS + 1),
      prepareStep: async ({ messages }) => {
        const t0 = performance.now();
        const done = await compactor.compact(messages);
        slowest = Math.max(slowest, performance.now() - t0);
        if (done.compacted) made.push(done);
        sent = done.messages;
        return { messages: done.messages };
      },
    });
    history = way !== "carried" ? [...history, ...result.responseMessages] : [...sent, ...result.responseMessages.slice(-1)];
  }
  const ms = performance.now() - started;
  const cleared = made.flatMap((done) => done.cleared.map((c) => c.callId));
  let foldedTo = -1;
  let refolded = 0;
  for (const done of made) {
    if (!done.turns) continue;
    if (done.turns[0] <= foldedTo) refolded += 1;
    foldedTo = Math.max(foldedTo, done.turns[1]);
  }
  archiveBytes += (await compactor.archives()).reduce((sum, a) => sum + a.bytes, 0);
  return {
    way,
    turns: turn,
    clearings: made.filter((d) => d.rung === "clear").length,
    summaries: made.filter((d) => d.rung === "summarize" || d.rung === "fallback").length,
    cleared: cleared.length,
    again: cleared.length - new Set(cleared).size,
    refolded,
    archiveBytes,
    slowest: Math.round(slowest),
    mean: Math.round(requests.reduce((a, b) => a + b, 0) / requests.length),
    peak: Math.max(...requests),
    ms: Math.round(ms),
  };
}

console.log("| history across calls | turns | clearings | summaries | results cleared | of them again | summaries refolding a turn | archives | slowest compact() | tokens per request, mean | peak | run |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const way of ["carried", "own", "reloaded"]) {
  const r = await run(way);
  const share = (t) => `${t} (${Math.round((100 * t) / WINDOW)}%)`;
  console.log(`| ${r.way} | ${r.turns} | ${r.clearings} | ${r.summaries} | ${r.cleared} | ${r.again} | ${r.refolded} | ${(r.archiveBytes / 1e6).toFixed(1)} MB | ${r.slowest} ms | ${share(r.mean)} | ${share(r.peak)} | ${(r.ms / 1000).toFixed(1)} s |`);
}
