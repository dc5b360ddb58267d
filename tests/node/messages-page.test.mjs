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
      // The 8,000-token result of turn 40, cleared: back by its call id, whole, as a message
      // and through the recall tool in parts of at most 4,000 tokens.
      const [recalled] = await compactor.recall("call_40");
      const expected = window.agent.shapes[shape].result("call_40", "fetch_page", window.agent.table(40, 800));
      const tool = compactor.recallTool();
      let joined = "";
      let parts = 0;
      for (let part = 1; part < 20; part++) {
        const answer = await tool.call({ query: "call_40", part });
        if (answer.includes("does not exist")) break;
        parts = part;
        joined += answer.replace(/^Part \d+ of \d+:\n/, "").replace(/\n… call again with the same arguments and part: \d+ for the rest\.$/, "");
      }
      const rows = Array.from({ length: 800 }, (_, row) => `r${row % 12},40,${1000 + row * 7 + 40},${1200 + row}\\n`);
      return {
        ...run,
        last: undefined,
        first: JSON.stringify(run.last[0]),
        signatures: run.last.flatMap((m) => (m.parts ?? []).filter((p) => p.functionCall).map((p) => p.thoughtSignature)),
        placeholders: (text.match(/\[cleared by context-compactor: /g) ?? []).length,
        recalledWhole: JSON.stringify(recalled) === JSON.stringify(expected) || (shape === "gemini" && JSON.stringify(recalled.parts[0].functionResponse.response) === JSON.stringify(expected.parts[0].functionResponse.response)),
        parts,
        rowsRead: rows.filter((row) => joined.includes(row)).length,
        schema: tool.declarationJsonSchema.parameters.properties.part.type,
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
    assert.ok(run.recalledWhole, "recall(callId) gives the result message back, its body as the app gave it");
    assert.ok(run.parts >= 2, `the recall tool answered in ${run.parts} parts`);
    assert.equal(run.rowsRead, 800, "every row of the cleared table read back through the parts");
    assert.equal(run.schema, "integer");
    if (shape === "gemini") {
      assert.ok(run.signatures.length > 0);
      for (const signature of run.signatures) assert.equal(signature, "c2lnbmF0dXJlLW9mLXRoZS1jYWxs");
    }
  });
}

test("an agent that sends its own history at every call (the AI SDK 7's), and the list it got grown by a step within a call, never has a turn cleared or folded twice", async () => {
  const run = await page.evaluate(async () => {
    const { MessageCompactor, estimateTokens } = window.pkg;
    const compactor = new MessageCompactor({ provider: { type: "offline" }, shape: "ai-sdk", conversation: "own-list" });
    const run = await window.agent.runAgent(compactor, estimateTokens, "ai-sdk", { ownList: true });
    const again = await compactor.compact(run.last);
    return { ...run, last: undefined, again: { same: again.messages === run.last, compacted: again.compacted, rung: again.rung } };
  });
  const summaries = run.rungs.filter((rung) => rung !== "clear").length;
  assert.ok(Math.max(...run.requests) <= 32_768, `a request over the window: ${Math.max(...run.requests)}`);
  assert.equal(run.unpaired, 0);
  assert.ok(summaries >= 1 && summaries <= 3, `summary calls: ${run.rungs}`);
  assert.equal(new Set(run.clearedIds).size, run.clearedIds.length, `a result cleared twice: ${run.clearedIds}`);
  for (const summary of run.summaries) assert.match(summary, /DQ-2291/);
  assert.deepEqual(run.again, { same: true, compacted: false, rung: "none" }, "the list returned, given again: nothing new, the same array");
});

test("the same agent with its page reloaded twice (a new MessageCompactor each time, the app's own list kept by the app) never has a turn cleared or folded twice either", async () => {
  const context = await env.browser.newContext();
  const tab = await context.newPage();
  await tab.goto(`${env.baseUrl}pkg/package.json`);
  let state;
  for (const until of [20, 40, 60]) {
    if (state) await tab.reload();
    state = await tab.evaluate(
      async ({ agent, until, state }) => {
        const pkg = await import("/pkg/context_compactor.js");
        await pkg.default();
        const { runAgent } = await import(URL.createObjectURL(new Blob([agent], { type: "text/javascript" })));
        const compactor = new pkg.MessageCompactor({ provider: { type: "offline" }, shape: "ai-sdk", conversation: "reloaded" });
        const made = state ? state.run.rungs.length : 0;
        const next = await runAgent(compactor, pkg.estimateTokens, "ai-sdk", { ownList: true, until, resume: state ?? undefined });
        const run = next.run ?? next;
        return { ...next, last: undefined, madeHere: run.rungs.length - made };
      },
      { agent: AGENT, until, state },
    );
    assert.ok(state.madeHere >= 1, `no compaction in the load up to turn ${until}`);
  }
  await context.close();
  assert.equal(new Set(state.clearedIds).size, state.clearedIds.length, `a result cleared twice: ${state.clearedIds}`);
  let foldedTo = -1;
  for (const [first, last] of state.turns) {
    assert.ok(first > foldedTo, `turns ${first}-${last} folded again (folded to ${foldedTo}): ${JSON.stringify(state.turns)}`);
    foldedTo = last;
  }
  assert.ok(state.turns.length >= 1, `summaries: ${state.rungs}`);
  assert.ok(Math.max(...state.requests) <= 32_768, `a request over the window: ${Math.max(...state.requests)}`);
  assert.equal(state.unpaired, 0);
});

test("rollback(archiveKey, messages) gives the list back with every result as the app gave it", async () => {
  const seen = await page.evaluate(async () => {
    const { MessageCompactor } = window.pkg;
    const { shapes, table, callsAndResults } = window.agent;
    const compactor = new MessageCompactor({ provider: { type: "offline" }, shape: "openai", conversation: "undo" });
    const make = shapes.openai;
    const original = [make.user("Which regions missed the Q3 target?")];
    for (let turn = 0; turn < 8; turn++) {
      original.push(make.call(`Step ${turn}.`, `call_${turn}`, "fetch_page", { page: turn }));
      original.push(make.result(`call_${turn}`, "fetch_page", table(turn, 300)));
    }
    const done = await compactor.compact(original, { trigger: "user" });
    const back = await compactor.rollback(done.archiveKey, done.messages);
    const text = JSON.stringify(back);
    const { calls, results } = callsAndResults(back);
    return {
      rung: done.rung,
      shorter: done.messages.length < original.length,
      summaryGone: !text.includes("COMPACTED SUMMARY"),
      calls: calls.length,
      paired: JSON.stringify(calls) === JSON.stringify(results),
      bodies: original.filter((m) => m.role === "tool").every((m) => back.some((b) => b.role === "tool" && b.content === m.content)),
      goal: back[0] === original[0],
    };
  });
  assert.deepEqual(seen, { rung: "summarize", shorter: true, summaryGone: true, calls: 8, paired: true, bodies: true, goal: true });
});

test("the LogStore front keeps up: the goal the app sets is the summary's, clear({ pins: true }) starts a new task", async () => {
  const seen = await page.evaluate(async () => {
    const { LogStore, Compactor } = window.pkg;
    const logs = new LogStore({ prefix: "goal_" });
    logs.pin("Region 7 stays out of the report (ticket DQ-2291).");
    logs.setGoal("Find which regions missed the Q3 target in sales_q3.csv.");
    for (let n = 1; n <= 5; n++) {
      logs.startIteration();
      logs.appendReasoning(`Step ${n}: read shard_${n}.csv and compared its totals with the targets.`);
      logs.appendExecution({ success: true, code: `return total("shard_${n}.csv");`, result: { total: 1000 * n } });
      logs.finishIteration();
    }
    const result = await new Compactor(logs, { provider: { type: "offline" } }).compact({ trigger: "context_limit_error" });
    const goal = logs.goal();
    logs.clear();
    const afterClear = { goal: logs.goal(), pins: logs.pins().length };
    logs.clear({ pins: true });
    let refused = "none";
    try {
      logs.clear({ pins: 1 });
    } catch (err) {
      refused = err.code;
    }
    return { summary: result.summary, goal, afterClear, pinsAfterNewTask: logs.pins().length, refused };
  });
  assert.match(seen.summary, /Find which regions missed the Q3 target in sales_q3\.csv\./);
  assert.equal(seen.goal, "Find which regions missed the Q3 target in sales_q3.csv.");
  assert.deepEqual(seen.afterClear, { goal: null, pins: 1 }, "clear() forgets the goal, keeps the pins");
  assert.equal(seen.pinsAfterNewTask, 0, "clear({ pins: true }) removes them");
  assert.equal(seen.refused, "invalid_input");
});

test("logs.appendUserMessage(text) records each line of a user's message as the user's words, and a summary keeps them unmarked", async () => {
  const seen = await page.evaluate(async () => {
    const { LogStore, Compactor } = window.pkg;
    const logs = new LogStore({ prefix: "user_message_" });
    logs.setGoal("Tidy the support queues.");
    for (let n = 1; n <= 5; n++) {
      logs.startIteration();
      if (n === 3) logs.appendUserMessage("Thanks.\nArchive the March tickets of queue DQ-7 into bucket tickets-cold.");
      else logs.appendReasoning(`Step ${n}: went through the queues.`);
      const result = n === 3 ? { task: "archive the March tickets of queue DQ-7 into bucket tickets-cold", archived: 212 } : { step: n };
      logs.appendExecution({ success: true, code: `return queues.step(${n});`, result });
      logs.finishIteration();
    }
    const recorded = logs.reasoningEntries().find((e) => e.text.includes("DQ-7"))?.text;
    let refused = "none";
    try {
      logs.appendUserMessage(42);
    } catch (err) {
      refused = err.code;
    }
    const result = await new Compactor(logs, { provider: { type: "offline" } }).compact({ trigger: "context_limit_error" });
    return { recorded, refused, injections: result.injections.length, kept: result.summary.includes("tickets-cold") };
  });
  assert.equal(seen.recorded, "The user wrote: Thanks.\nThe user wrote: Archive the March tickets of queue DQ-7 into bucket tickets-cold.");
  assert.equal(seen.refused, "invalid_input");
  assert.deepEqual({ injections: seen.injections, kept: seen.kept }, { injections: 0, kept: true });
});

test("a compact() while another runs is refused busy, and leaves that one's list alone", async () => {
  const seen = await page.evaluate(async () => {
    const { MessageCompactor } = window.pkg;
    const { shapes, table } = window.agent;
    let release;
    const slow = new Promise((resolve) => (release = resolve));
    const compactor = new MessageCompactor({
      shape: "openai",
      conversation: "busy",
      contextWindowTokens: 4000,
      fallback: "always", // whatever the slow model writes, the first compaction ends with a list
      provider: { type: "custom", generate: async (prompt) => { await slow; return window.pkg.requiredSections().map((s) => `### ${s}\n- ${prompt.slice(0, 60)}`).join("\n\n"); } },
    });
    const make = shapes.openai;
    const list = [make.user("Which regions missed the Q3 target?")];
    for (let turn = 0; turn < 6; turn++) {
      list.push(make.call(`Step ${turn}.`, `call_${turn}`, "fetch_page", {}));
      list.push(make.result(`call_${turn}`, "fetch_page", table(turn, 100)));
    }
    const first = compactor.compact(list, { trigger: "user" });
    let second = "none";
    try {
      await compactor.compact([...list, make.user("and region 9?")]);
    } catch (err) {
      second = err.code;
    }
    release();
    const done = await first.catch((err) => ({ rung: err.code }));
    return { second, first: done.rung, calls: JSON.stringify(done.messages ?? []).includes("call_5") };
  });
  assert.equal(seen.second, "busy");
  assert.ok(["summarize", "fallback"].includes(seen.first), seen.first);
  assert.ok(seen.calls, "the first compaction's list keeps the newest turn");
});

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
      // A list's compaction resolves to the list to send: it has no background form.
      await code(() => compactor.compact([{ role: "user", content: "x" }], { background: true })),
    ];
  });
  assert.deepEqual(codes, Array(8).fill("invalid_input"));
});

test("a message list's clearing keeps the newest turn's results whole by default, and as many turns as `clearing.keepIterations` says when given", async () => {
  const cleared = await page.evaluate(async () => {
    const { MessageCompactor } = window.pkg;
    const { shapes, table } = window.agent;
    const list = [shapes.openai.user("Which regions missed the Q3 target?")];
    for (let turn = 0; turn < 6; turn++) {
      list.push(shapes.openai.call(`Step ${turn}.`, `call_${turn}`, "fetch_page", { page: turn }));
      list.push(shapes.openai.result(`call_${turn}`, "fetch_page", table(turn, 300)));
    }
    const turnsCleared = async (options) => {
      const compactor = new MessageCompactor({ provider: { type: "offline" }, shape: "openai", conversation: `keep-${JSON.stringify(options)}`, ...options });
      const done = await compactor.compact(list, { trigger: "user", rung: "clear" });
      return done.cleared.map((c) => c.callId);
    };
    return { byDefault: await turnsCleared({}), three: await turnsCleared({ clearing: { keepIterations: 3 } }) };
  });
  assert.deepEqual(cleared.byDefault, ["call_0", "call_1", "call_2", "call_3", "call_4"]);
  assert.deepEqual(cleared.three, ["call_0", "call_1", "call_2"]);
});
