// Whatever a model writes cannot trap the module (#49): an answer nested 100,000 levels deep,
// from a custom provider and from Gemini (the mock), ends in invalid_summary, and the page's
// next compact() works on the same module.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch } from "./browser.mjs";
import { deepAnswer } from "../gemini-mock/server.mjs";

let env;
before(async () => {
  env = await launch({ withMock: true });
});
after(async () => {
  await env?.close();
});

/** In a fresh page of the package: for each provider of `providers` (built in the page from
 * its description), a compaction over 8 iterations, then one with a provider that obeys. */
async function compactions(providers) {
  const context = await env.browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${env.baseUrl}pkg/package.json`);
    return await page.evaluate(
      async ({ providers, deep }) => {
        const { default: init, LogStore, Compactor } = await import("/pkg/context_compactor.js");
        await init();
        localStorage.clear();
        /** A session of 8 iterations under its own prefix. */
        const session = (prefix) => {
          const logs = new LogStore({ prefix });
          for (let i = 0; i < 8; i++) {
            logs.startIteration();
            logs.appendReasoning(`Iteration ${i}: read shard_${i} and counted its rows.`);
            logs.appendReasoning(
              `Checked shard_${i} against the reference table column by column; the totals agree once the duplicated order lines are removed, so the next shard can be read the same way without another pass over the whole table.`,
            );
            logs.finishIteration();
          }
          return logs;
        };
        const summary = [
          "### 🎯 OBJECTIVE ACHIEVED", "- Counted the rows of every shard.",
          "### 📊 KEY DISCOVERIES", "- Eight shards were read.",
          "### ✅ SUCCESSFUL SOLUTIONS", "- One read per shard.",
          "### 🔧 TOOLS USED SUCCESSFULLY", "- none",
          "### 💡 CRITICAL INSIGHTS", "- Shards differ in size.",
          "### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING", "- Continue with shard 8.",
        ].join("\n");
        const options = { contextWindowTokens: 2000, recommendedUsage: 0.05, archiveStore: "localStorage" };
        const provider = (described) =>
          described.type === "custom" ? { type: "custom", generate: async () => deep[described.shape] } : described;
        const outcomes = [];
        for (const [round, described] of providers.entries()) {
          const prefix = `deep${round}_`;
          const logs = session(prefix);
          const compactor = new Compactor(logs, { ...options, provider: provider(described) });
          const failed = await compactor.compact().then(
            () => "compacted",
            (err) => err.code,
          );
          // The module still works: a new LogStore, and a compaction that obeys.
          new LogStore({ prefix: `fresh${round}_` }).startIteration();
          const good = new Compactor(logs, { ...options, provider: { type: "custom", generate: async () => summary } });
          const after = await good.compact();
          outcomes.push({
            failed,
            lockLeft: localStorage.getItem(`${prefix}compaction_lock`) !== null,
            next: after.summary.includes("Eight shards were read."),
          });
        }
        return outcomes;
      },
      { providers, deep: { arrays: deepAnswer(100_000, false), objects: deepAnswer(100_000, true) } },
    );
  } finally {
    await context.close();
  }
}

test("an answer nested 100,000 deep ends in invalid_summary and the next compact() works", async () => {
  const gemini = (shape) => ({ type: "gemini", apiKey: "deep-key", model: `mock-deep_json_${shape}`, baseUrl: env.mock.url });
  const outcomes = await compactions([
    { type: "custom", shape: "arrays" },
    { type: "custom", shape: "objects" },
    gemini("arrays"),
    gemini("objects"),
  ]);
  const expected = { failed: "invalid_summary", lockLeft: false, next: true };
  assert.deepEqual(outcomes, [expected, expected, expected, expected]);
});
