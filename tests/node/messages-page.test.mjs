// The message front in Chromium (#67): an agent of each shape (Gemini contents, OpenAI chat,
// Anthropic Messages, the AI SDK's ModelMessage[]) driven by its own loop over 60 turns of
// bulky tool results at a 32K window, with the built package: no request over the window, no
// call without its result, the goal first and the user's later instruction in every summary
// without a pin, the app's own message objects kept wherever nothing changed, Gemini's
// thoughtSignature byte for byte; the same list back when nothing is due; what is not a list
// is invalid_input.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { launch } from "./browser.mjs";

const AGENT = readFileSync(new URL("../../bench/message-agent.mjs", import.meta.url), "utf8");

let env;
let page;
before(async () => {
  env = await launch();
  const context = await env.browser.newContext();
  page = await context.newPage();
  await page.goto(`${env.baseUrl}pkg/package.json`);
  await page.evaluate(async (agent) => {
    const pkg = await import("/pkg/context_compactor.js");
    await pkg.default();
    window.pkg = pkg;
    window.agent = await import(URL.createObjectURL(new Blob([agent], { type: "text/javascript" })));
  }, AGENT);
});
after(async () => {
  await env?.close();
});

for (const shape of ["gemini", "openai", "anthropic", "ai-sdk"]) {
  test(`an agent of shape ${shape} stays within its window over 60 turns`, async () => {
    const run = await page.evaluate(async (shape) => {
      const { MessageCompactor, estimateTokens } = window.pkg;
      const compactor = new MessageCompactor({ provider: { type: "offline" }, shape, conversation: `test-${shape}` });
      const run = await window.agent.runAgent(compactor, estimateTokens, shape);
      const text = JSON.stringify(run.last);
      return {
        ...run,
        last: undefined,
        first: JSON.stringify(run.last[0]),
        signatures: run.last.flatMap((m) => (m.parts ?? []).filter((p) => p.functionCall).map((p) => p.thoughtSignature)),
        placeholders: (text.match(/\[cleared by context-compactor: /g) ?? []).length,
      };
    }, shape);
    const window = 32_768;
    const summaries = run.rungs.filter((rung) => rung !== "clear").length;
    const average = run.requests.reduce((a, b) => a + b, 0) / run.requests.length;
    assert.ok(Math.max(...run.requests) <= window, `a request over the window: ${Math.max(...run.requests)}`);
    assert.equal(run.unpaired, 0, "every call with its result, every result with its call");
    assert.ok(summaries >= 1 && summaries <= 3, `summary calls: ${run.rungs}`);
    assert.ok(average <= 0.6 * window, `requests ${average} tokens on average`);
    assert.ok(run.first.includes("Find which regions"), "the goal stays the first message");
    for (const summary of run.summaries) assert.match(summary, /DQ-2291/, "the user's later instruction, unpinned, in every summary");
    assert.ok(run.placeholders > 0 && run.cleared > 0, "bulky results were cleared");
    assert.ok(run.kept > 0, "the app's own message objects come back where nothing changed");
    assert.ok(run.sameWhenDue > 0, "nothing due: the same list back");
    if (shape === "gemini") {
      assert.ok(run.signatures.length > 0);
      for (const signature of run.signatures) assert.equal(signature, "c2lnbmF0dXJlLW9mLXRoZS1jYWxs");
    }
  });
}

test("what is not a message list is invalid_input", async () => {
  const codes = await page.evaluate(async () => {
    const { MessageCompactor } = window.pkg;
    const code = async (work) => {
      try {
        await work();
        return "none";
      } catch (err) {
        return err.code;
      }
    };
    const compactor = new MessageCompactor({ provider: { type: "offline" }, shape: "openai" });
    return [
      await code(() => new MessageCompactor({ provider: { type: "offline" }, shape: "chatml" })),
      await code(() => new MessageCompactor({ provider: { type: "offline" } })),
      await code(() => new MessageCompactor({ provider: { type: "offline" }, shape: "openai", conversation: "" })),
      await code(() => compactor.compact("hello")),
      await code(() => compactor.compact([{ role: "user", content: "x" }, 3])),
      await code(() => compactor.shouldCompact([1n])),
      await code(() => compactor.usage(null)),
    ];
  });
  assert.deepEqual(codes, Array(7).fill("invalid_input"));
});
