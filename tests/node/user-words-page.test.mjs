// What the user said (#79) in Chromium, with the built package, as the README promises it: a
// message list's later user messages and a LogStore's appendUserMessage are kept word for word
// under "### 👤 WHAT THE USER SAID" in every later summary, whatever the model keeps; a
// statement that says it updates another replaces it; small talk is no item; over the budget,
// facts leave first for a line naming them and user_items_over_budget says so.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch } from "./browser.mjs";

let env;
let page;
before(async () => {
  env = await launch();
  const context = await env.browser.newContext();
  page = await context.newPage();
  await page.goto(`${env.baseUrl}pkg/package.json`);
  await page.evaluate(async () => {
    const pkg = await import("/pkg/context_compactor.js");
    await pkg.default();
    window.pkg = pkg;
    // A model that keeps none of the user's words: six sections of its own.
    window.lossy = async () =>
      ["🎯 OBJECTIVE ACHIEVED", "📊 KEY DISCOVERIES", "✅ SUCCESSFUL SOLUTIONS", "🔧 TOOLS USED SUCCESSFULLY", "💡 CRITICAL INSIGHTS", "📝 IMPORTANT CONTEXT FOR FUTURE REASONING"]
        .map((title) => `### ${title}\n- Read the pages; the totals are still being added up.`)
        .join("\n\n");
  });
});
after(async () => {
  await env?.close();
});

test("a message list's later user messages stay word for word through three compactions by a model that keeps none, an update replacing its subject", async () => {
  const run = await page.evaluate(async () => {
    const { MessageCompactor } = window.pkg;
    const compactor = new MessageCompactor({ shape: "openai", provider: { type: "custom", generate: window.lossy }, conversation: "words-page" });
    let list = [{ role: "user", content: "Prepare the quarterly sales report." }];
    const said = {
      3: "Never run the deploy tool without the code word ember42.",
      5: "Spend at most $4817 on cloud resources for this.",
      9: "Thanks, go on.",
      14: "Change of plan: spend at most $6100 on cloud resources for this.",
      17: "Answer in Welsh, please.",
    };
    const summaries = [];
    const results = [];
    for (let turn = 1; turn <= 24; turn++) {
      if (said[turn]) list.push({ role: "user", content: said[turn] });
      const id = `call_${turn}`;
      list.push({ role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "fetch_page", arguments: JSON.stringify({ page: turn }) } }] });
      list.push({ role: "tool", tool_call_id: id, content: `page ${turn}\n${"region,revenue\nr3,1180\n".repeat(200)}` });
      if (turn % 8 === 0) {
        const done = await compactor.compact(list, { trigger: "user" });
        list = done.messages;
        summaries.push(done.summary);
        results.push(done.userItems);
      }
    }
    return { summaries, results };
  });
  assert.equal(run.summaries.length, 3);
  for (const summary of run.summaries) {
    assert.match(summary, /### 👤 WHAT THE USER SAID/);
    assert.match(summary, /- Rule \(turn \d+\): Never run the deploy tool without the code word ember42\./);
    assert.doesNotMatch(summary, /Thanks, go on/);
  }
  assert.match(run.summaries[0], /- Limit \(turn \d+\): Spend at most \$4817 on cloud resources for this\./);
  for (const summary of run.summaries.slice(1)) {
    assert.doesNotMatch(summary, /4817/);
    assert.match(summary, /Change of plan: spend at most \$6100/);
  }
  assert.match(run.summaries[2], /- Preference \(turn \d+\): Answer in Welsh, please\./);
  assert.deepEqual(run.results[1].replaced.map((item) => [item.kind, item.text]), [["limit", "Spend at most $4817 on cloud resources for this."]]);
  assert.equal(run.results[1].kept.find((item) => item.kind === "limit").replaces, "Spend at most $4817 on cloud resources for this.");
  // The model stated none: the section alone holds them all.
  assert.deepEqual(run.results[2].repaired, run.results[2].kept);
});

test("a LogStore's appendUserMessage is kept by the next summary, the items listed by plan() before it; over the budget, facts leave first for a named line and the event says so", async () => {
  const run = await page.evaluate(async () => {
    const { LogStore, Compactor } = window.pkg;
    const logs = new LogStore({ prefix: "words_page_" });
    const compactor = new Compactor(logs, { provider: { type: "custom", generate: window.lossy }, summaryBudgetTokens: 200 });
    const events = [];
    compactor.events.addEventListener("user_items_over_budget", (e) => events.push(e.detail));
    for (let n = 1; n <= 12; n++) {
      logs.startIteration();
      logs.appendUserMessage(n === 2 ? "Never delete anything under /srv/ledger without asking me first." : `My note ${n}: the tenant id of shop ${n} is shop-${n}-${7000 + n}.`);
      logs.appendReasoning(`Step ${n}: read page ${n}; ${"rows ".repeat(60)}`);
      logs.finishIteration();
    }
    const planned = compactor.plan().userItems;
    const result = await compactor.compact({ trigger: "context_limit_error" });
    return { planned, result: { summary: result.summary, userItems: result.userItems }, events };
  });
  assert.ok(run.planned.some((item) => item.kind === "rule" && item.text.startsWith("Never delete anything under /srv/ledger")), JSON.stringify(run.planned));
  const { summary, userItems } = run.result;
  assert.match(summary, /- Rule \(iteration 2\): Never delete anything under \/srv\/ledger without asking me first\./);
  assert.ok(userItems.demoted.length > 0);
  assert.ok(userItems.demoted.every((item) => item.kind === "fact"));
  for (const item of userItems.demoted) assert.ok(summary.includes(`- Left for recall (${item.source}): `), summary);
  assert.equal(run.events.length, 1);
  assert.ok(run.events[0].tokens > run.events[0].budget);
  assert.match(run.events[0].message, /left the summary for lines naming each/);
});
