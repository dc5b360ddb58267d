// Lone surrogates (text cut with slice() inside an emoji) cross every string path exactly: the
// prompt buildPrompt() returns and a custom provider is given, the summary a custom provider
// answers with, and the text estimateTokens() and validateSummary() read.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch } from "./browser.mjs";

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

test("lone surrogates reach the prompt and the custom provider, and come back from its answer, exactly", async () => {
  const context = await env.browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${env.baseUrl}pkg/package.json`);
    const outcome = await page.evaluate(async () => {
      const { default: init, LogStore, Compactor, estimateTokens, validateSummary } = await import("/pkg/context_compactor.js");
      await init();
      localStorage.clear();
      const cut = "🎯 goal".slice(1); // a lone low surrogate, then " goal"
      const logs = new LogStore({ prefix: "surrogates_" });
      for (let i = 0; i < 12; i++) {
        logs.startIteration();
        logs.appendReasoning(`Iteration ${i}: the label read ${cut} in shard_${i}, 4${i}1 rows.`);
        logs.appendReasoning(`Checked the encoding of shard_${i} byte by byte; the label was cut inside an emoji by a slice() upstream, so it is kept as it is.`);
        logs.finishIteration();
      }
      const summary = [
        "### 🎯 OBJECTIVE ACHIEVED", `- The label reads ${cut} in every shard.`,
        "### 📊 KEY DISCOVERIES", "- Six shards were read.",
        "### ✅ SUCCESSFUL SOLUTIONS", "- One read per shard.",
        "### 🔧 TOOLS USED SUCCESSFULLY", "- none",
        "### 💡 CRITICAL INSIGHTS", "- Labels can hold cut emoji.",
        "### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING", "- Continue.",
      ].join("\n");
      let given = "";
      const compactor = new Compactor(logs, {
        contextWindowTokens: 1200,
        recommendedUsage: 0.05,
        archiveStore: "localStorage",
        provider: { type: "custom", generate: async (prompt) => ((given = prompt), summary) },
      });
      const prompt = compactor.buildPrompt();
      const result = await compactor.compact();
      const toolText = await compactor.recallTool().call({ from: 1 });
      const recalled = await compactor.recall(1);
      const stored = logs.reasoningLog().find((entry) => entry.startsWith("=== COMPACTED SUMMARY"));
      return {
        promptHas: prompt.includes(`read ${cut} in shard_0`),
        promptHasReplacement: prompt.includes("\ufffd"),
        givenSame: given === prompt,
        resultHas: result.summary.includes(`reads ${cut} in every`),
        storedHas: stored.includes(`reads ${cut} in every`),
        // The recall tool's text holds the entry exactly as recall() gives it back.
        toolHas: toolText.includes(recalled.reasoningLog[0]) && toolText.includes(`read ${cut} in shard_0`),
        estimate: [estimateTokens(cut), estimateTokens("x")],
        valid: validateSummary(summary).valid,
        refused: (() => {
          try {
            estimateTokens(42);
            return "accepted";
          } catch (err) {
            return err.code;
          }
        })(),
      };
    });
    assert.deepEqual(outcome, {
      promptHas: true,
      promptHasReplacement: false,
      givenSame: true,
      resultHas: true,
      storedHas: true,
      toolHas: true,
      estimate: outcome.estimate,
      valid: true,
      refused: "invalid_input",
    });
    assert.ok(outcome.estimate[0] >= 1, JSON.stringify(outcome.estimate));
  } finally {
    await context.close();
  }
});
