// Sessions written the way GDRS writes them, compacted and rolled back in a real Chromium page:
// every entry's stored text survives byte for byte (2^70, lone surrogates), the summary stays in
// the k-entry window, the fixtures the native tests read are the simulator's current output.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { databaseArchives, launch, openPage, outputDir } from "./browser.mjs";
import { SESSIONS, fixture, fixturePath } from "../../scripts/gdrs-fixtures.mjs";

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

test("the GDRS fixtures of the native tests are the simulator's current output", () => {
  for (const session of SESSIONS) {
    assert.equal(readFileSync(fixturePath(session), "utf8"), fixture(session), `seed ${session.seed}: run node scripts/gdrs-fixtures.mjs`);
  }
});

test("GDRS sessions in the page: exact texts through compaction and rollback, summary in recentReasoning", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  for (const seed of [1, 2, 3, 5]) {
    const outcome = await page.evaluate(async ([seed, readDatabase]) => {
      const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
      const { GDRS_KEYS, simulateGdrsSession } = await import("/simulate.js");
      localStorage.clear();
      const truth = simulateGdrsSession(localStorage, { seed, iterations: 9 });
      const texts = () => Object.fromEntries(Object.values(GDRS_KEYS).map((k) => [k, localStorage.getItem(k)]));
      const before = texts();
      const logs = new LogStore();
      const compactor = new Compactor(logs, { provider: { type: "offline" }, contextWindowTokens: 6000 });
      const result = await compactor.compact();
      const archive = await compactor.readArchive(result.archiveKey);
      // The archive as stored in IndexedDB (the default archive store), read before the rollback removes it.
      const databaseArchives = (0, eval)(`(${readDatabase})`);
      const archiveText = (await databaseArchives(result.archiveKey))[result.archiveKey];
      const live = texts();
      const executions = logs.executionLog();
      const recent = logs.recentReasoning(3);
      const described = logs.reasoningEntries();
      const reasoningTexts = logs.reasoningLog();
      // The app goes on: five more iterations of its own writing.
      const reasoning = JSON.parse(localStorage.getItem(GDRS_KEYS.reasoning));
      for (let n = truth.current + 1; n <= truth.current + 5; n += 1) reasoning.push(`=== ITERATION ${n} ===\nstep ${n}`);
      localStorage.setItem(GDRS_KEYS.reasoning, JSON.stringify(reasoning));
      const recentLater = logs.recentReasoning(3);
      const appSlice = JSON.parse(localStorage.getItem(GDRS_KEYS.reasoning)).slice(-3);
      localStorage.setItem(GDRS_KEYS.reasoning, live[GDRS_KEYS.reasoning]);
      await compactor.rollback(result.archiveKey);
      return { truth, before, live, after: texts(), archive, archiveText, executions, recent, recentLater, appSlice, summary: result.summary, described, reasoningTexts, result };
    }, [seed, databaseArchives.toString()]);
    const { truth, before, live, after, archive, archiveText } = outcome;
    assert.deepEqual(after, before, `seed ${seed}: byte for byte after the rollback`);
    const entries = (text) => JSON.parse(text ?? "[]").map((e) => JSON.stringify(e));
    // GDRS writes with JSON.stringify, so an entry's stored text is JSON.stringify(entry).
    for (const key of Object.keys(before)) {
      const dataKey = { gdrs_reasoning_log: "reasoningLog", gdrs_execution_log: "executionLog", gdrs_tool_activity_log: "toolActivityLog" }[key];
      const liveEntries = entries(live[key]);
      assert.equal(live[key], `[${liveEntries.join(",")}]`, `seed ${seed}: ${key} written entry by entry as stored`);
      const held = [...liveEntries.filter((e) => !e.startsWith('"=== COMPACTED SUMMARY')), ...archive.data[dataKey].map((e) => JSON.stringify(e))];
      assert.deepEqual([...held].sort(), [...entries(before[key])].sort(), `seed ${seed}: ${key} entries held exactly once, texts unchanged`);
    }
    assert.ok(archiveText.includes("1.1805916207174113e+21"), "2^70 in the archive as written");
    assert.ok(archiveText.includes("Ab\\ud83d") || live.gdrs_reasoning_log.includes("Ab\\ud83d"), "the lone surrogate kept");
    const n = truth.current;
    const keptExecutions = truth.execution.filter((i) => i >= n).length;
    assert.equal(entries(live.gdrs_execution_log).length, keptExecutions, `seed ${seed}: only iteration ${n}'s executions stay`);
    assert.equal(archive.data.executionLog.length, truth.execution.length - keptExecutions);
    assert.ok(outcome.executions.every((e) => e.iteration === n), "executionLog() gives every entry its iteration");
    assert.match(outcome.recent[0], /^=== COMPACTED SUMMARY \(Iterations 1-\d+\) ===/);
    assert.match(outcome.recentLater[0], /^=== COMPACTED SUMMARY/, `seed ${seed}: five iterations later the summary is still in the window`);
    assert.ok(!outcome.appSlice.some((e) => e.startsWith("=== COMPACTED SUMMARY")), "where slice(-3) has lost it");
    assert.ok(outcome.summary.includes(truth.query), `seed ${seed}: the query is in the summary`);
    const { described, reasoningTexts, result } = outcome;
    assert.deepEqual(described.map((e) => e.text), reasoningTexts, `seed ${seed}: reasoningEntries() holds the log's texts`);
    assert.deepEqual(
      { kind: described[0].kind, iterations: described[0].iterations, archiveKey: described[0].archiveKey },
      { kind: "summary", iterations: result.iterations, archiveKey: result.archiveKey },
      `seed ${seed}: the summary, its iterations and its archive`,
    );
    assert.ok(described.some((e) => e.kind === "header" && e.iteration === n), `seed ${seed}: iteration ${n}'s header`);
    assert.ok(described.slice(1).every((e) => e.iteration === n), `seed ${seed}: every kept entry is in iteration ${n}`);
  }
  await page.screenshot({ path: join(outputDir, "gdrs-session.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("with the options an app like GDRS sets, the app's own archive listing finds the package's archives", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const outcome = await page.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const { simulateGdrsSession } = await import("/simulate.js");
    localStorage.clear();
    simulateGdrsSession(localStorage, { seed: 4, iterations: 9 });
    const logs = new LogStore();
    // The options the README's "Adopting it in an existing app" gives for GDRS.
    const compactor = new Compactor(logs, {
      provider: { type: "offline" },
      contextWindowTokens: 6000,
      archiveStore: "localStorage", // the app reads its archives there
      archivePrefix: "gdrs_compaction_archive_",
      metricsKey: "gdrs_compaction_metrics",
      maxArchives: 10,
      archiveExpiryDays: 30,
    });
    const result = await compactor.compact();
    // The app's listing, as its storage layer does it: every key under its archive prefix,
    // newest first; each read back with JSON.parse.
    const listing = [];
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (key.startsWith("gdrs_compaction_archive_")) listing.push(key);
    }
    listing.sort().reverse();
    const loaded = JSON.parse(localStorage.getItem(listing[0]));
    return { key: result.archiveKey, listing, loadedKeys: Object.keys(loaded), metrics: JSON.parse(localStorage.getItem("gdrs_compaction_metrics")) };
  });
  assert.deepEqual(outcome.listing, [outcome.key], "the app lists the package's archive");
  assert.ok(outcome.loadedKeys.includes("data"), outcome.loadedKeys.join());
  assert.equal(outcome.metrics.totalCompactions, 1, "the metrics under the app's key");
  assert.deepEqual(errors, []);
  await page.close();
});

test("the demo loads a GDRS session and compacts it", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  page.on("dialog", (dialog) => dialog.accept());
  await page.click("#btn-gdrs");
  await page.waitForFunction(() => !document.querySelector("#message").hidden);
  assert.match(await page.textContent("#message"), /Loaded a GDRS session of \d+ iterations/);
  assert.equal(await page.textContent("#stat-iteration"), "9");
  await page.click("#btn-compact");
  await page.waitForSelector("#success-view:not([hidden])");
  assert.equal(await page.textContent("#fact-iterations"), "1–8");
  await page.screenshot({ path: join(outputDir, "gdrs-demo-compacted.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("two tabs: a compaction waits while the app's tab marks an iteration running", async () => {
  const { page: app, errors } = await openPage(env.browser, env.baseUrl);
  const other = await app.context().newPage();
  await other.goto(env.baseUrl);
  await other.waitForSelector("body[data-ready=true]");
  await app.evaluate(async () => {
    const { LogStore } = await import("/pkg/context_compactor.js");
    const { GDRS_KEYS, simulateGdrsSession } = await import("/simulate.js");
    for (const key of Object.values(GDRS_KEYS)) localStorage.removeItem(key);
    simulateGdrsSession(localStorage, { seed: 7, iterations: 9 });
    window.appLogs = new LogStore();
    window.appLogs.markIterationRunning();
  });
  await other.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const compactor = new Compactor(new LogStore(), { provider: { type: "offline" }, contextWindowTokens: 6000 });
    window.phases = [];
    compactor.events.addEventListener("compaction_phase_change", (e) => window.phases.push(e.detail.phase));
    window.done = compactor.compact().then((r) => r.iterations, (e) => e.code);
  });
  await other.waitForFunction(() => window.phases.includes("waiting"));
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.deepEqual(await other.evaluate(() => window.phases), ["waiting"], "still waiting for the other tab's iteration");
  await app.evaluate(() => window.appLogs.finishIteration());
  assert.deepEqual(await other.evaluate(() => window.done), [1, 8]);
  assert.deepEqual(errors, []);
  await other.close();
  await app.close();
});

test("usage measured the app's way: promptTokens() and reportPromptTokens()", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const outcome = await page.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const { simulateGdrsSession } = await import("/simulate.js");
    localStorage.clear();
    simulateGdrsSession(localStorage, { seed: 3, iterations: 9 });
    const logs = new LogStore();
    const plain = new Compactor(logs, { provider: { type: "offline" } });
    let appPrompt = 28000;
    const measured = new Compactor(logs, { provider: { type: "offline" }, promptTokens: () => appPrompt });
    const before = { plain: plain.contextUsage(), measured: measured.contextUsage(), auto: measured.shouldAutoCompact(), allowed: plain.canCompact() };
    plain.reportPromptTokens(29000);
    const reported = { usage: plain.contextUsage(), auto: plain.shouldAutoCompact() };
    let invalid = null;
    try {
      plain.reportPromptTokens(-1);
    } catch (err) {
      invalid = err.code;
    }
    appPrompt = 3000;
    const result = await measured.compact({ trigger: "context_limit_error" });
    return { before, reported, invalid, usageBefore: result.contextUsageBefore, usageAfter: result.contextUsageAfter };
  });
  assert.ok(outcome.before.plain < 0.6, `the logs alone: ${outcome.before.plain}`);
  assert.equal(outcome.before.allowed.ok, false);
  assert.equal(outcome.before.measured, 28000 / 32768);
  assert.equal(outcome.before.auto, true);
  assert.equal(outcome.reported.usage, 29000 / 32768);
  assert.equal(outcome.reported.auto, true);
  assert.equal(outcome.invalid, "invalid_input");
  assert.equal(outcome.usageBefore, 3000 / 32768);
  assert.equal(outcome.usageAfter, 3000 / 32768);
  assert.deepEqual(errors, []);
  await page.close();
});
