// The message front (#67): the research agent of bench/message-agent.mjs in each of the four
// shapes, 60 turns of bulky tool results at a 32K window, its loop sending what compact()
// returns; and the same agent keeping its own history whole (the AI SDK 7: its history at each
// call, the list returned carried to a second step within a call). Prints per
// shape: compactions (clearings, summary calls), tokens per request (mean, peak, share of the
// window), results cleared, and the cleared 8,000-token result of turn 40 read back by its call
// id through the recall tool (parts, rows); and the OpenAI agent with the clearing keeping 3
// turns, the `Compactor`'s default. Usage: node bench/messages.mjs
import { readFileSync } from "node:fs";
import { withBenchBrowser, freshPage } from "./browser.mjs";

const AGENT = readFileSync(new URL("./message-agent.mjs", import.meta.url), "utf8");
const WINDOW = 32_768;

const rows = await withBenchBrowser(async (browser, baseUrl) => {
  const out = [];
  const runs = [["gemini"], ["openai"], ["anthropic"], ["ai-sdk"], ["ai-sdk", true], ["openai", false, { clearing: { keepIterations: 3 } }]];
  for (const [shape, ownList = false, options = {}] of runs) {
    const page = await freshPage(browser, baseUrl);
    const run = await page.evaluate(async ({ agent, shape, ownList, options }) => {
      const pkg = await import("/pkg/context_compactor.js");
      await pkg.default();
      const { runAgent } = await import(URL.createObjectURL(new Blob([agent], { type: "text/javascript" })));
      const compactor = new pkg.MessageCompactor({ provider: { type: "offline" }, shape, conversation: `bench-${shape}-${ownList}`, ...options });
      const started = performance.now();
      const run = await runAgent(compactor, pkg.estimateTokens, shape, { ownList });
      const ms = performance.now() - started;
      const tool = compactor.recallTool();
      let parts = 0;
      let joined = "";
      for (let part = 1; part < 20; part++) {
        const answer = await tool.call({ query: "call_40", part });
        if (answer.includes("does not exist")) break;
        parts = part;
        joined += answer.replace(/^Part \d+ of \d+:\n/, "").replace(/\n… call again with the same arguments and part: \d+ for the rest\.$/, "");
      }
      const rowsRead = Array.from({ length: 800 }, (_, r) => `r${r % 12},40,${1000 + r * 7 + 40},${1200 + r}\\n`).filter((row) => joined.includes(row)).length;
      const twice = run.clearedIds.length - new Set(run.clearedIds).size;
      return { rungs: run.rungs, requests: run.requests, cleared: run.cleared, twice, unpaired: run.unpaired, parts, rowsRead, ms };
    }, { agent: AGENT, shape, ownList, options });
    await page.close();
    const mean = run.requests.reduce((a, b) => a + b, 0) / run.requests.length;
    const peak = Math.max(...run.requests);
    out.push({
      agent: ownList ? `${shape}, own history at each call, a second step within every third (ai 7)` : options.clearing ? `${shape}, clearing.keepIterations ${options.clearing.keepIterations}` : shape,
      clearings: run.rungs.filter((r) => r === "clear").length,
      summaries: run.rungs.filter((r) => r !== "clear").length,
      mean: `${Math.round(mean)} (${Math.round((100 * mean) / WINDOW)}%)`,
      peak: `${peak} (${Math.round((100 * peak) / WINDOW)}%)`,
      cleared: run.cleared,
      twice: run.twice,
      unpaired: run.unpaired,
      recall: `${run.parts} parts, ${run.rowsRead}/800 rows`,
      ms: Math.round(run.ms),
    });
  }
  return out;
});

console.log("| agent | clearings | summary calls | tokens per request, mean | peak | results cleared | of them again | calls without result | turn 40's result by its id | ms |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |");
for (const r of rows) console.log(`| ${r.agent} | ${r.clearings} | ${r.summaries} | ${r.mean} | ${r.peak} | ${r.cleared} | ${r.twice} | ${r.unpaired} | ${r.recall} | ${r.ms} |`);
