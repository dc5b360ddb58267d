// The promises a user relies on, in each engine the package supports: Chromium (Playwright),
// WebKit (WebKitGTK's MiniBrowser) and Firefox (headless ESR), the last two through WebDriver
// (`webdriver.mjs`). Each scenario runs in the page as the same function in each: a GDRS session
// compacted, its archive in IndexedDB (compressed), recalled and rolled back byte for byte; the same after a
// reload; two tabs of one origin, where the second's compaction is `busy` while the first's runs
// and then sees its summary; a Symbol, a BigInt or a throwing Proxy given to any public method is
// `invalid_input`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startServer } from "../../scripts/serve.mjs";
import { CHROMIUM_FLAGS } from "./browser.mjs";
import { launchFirefox, launchWebKit } from "./webdriver.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const MOUNTS = [
  ["/pkg/", here("../../pkg")],
  ["/www/", here("../../www")],
  ["/", here("./engines")],
];

let server;
let url;
const engines = {};

/** Chromium through Playwright, with the commands `webdriver.mjs` gives. */
async function launchChromium() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: CHROMIUM_FLAGS, headless: true });
  const context = await browser.newContext();
  const pages = [await context.newPage()];
  let current = 0;
  return {
    browserVersion: browser.version(),
    goto: (to) => pages[current].goto(to),
    run: (fn, arg) => pages[current].evaluate(fn, arg ?? null),
    async newWindow() {
      pages.push(await context.newPage());
      return pages.length - 1;
    },
    window: async () => current,
    switchTo: async (handle) => {
      current = handle;
    },
    close: () => browser.close(),
  };
}

before(async () => {
  server = await startServer(0, "127.0.0.1", MOUNTS);
  url = `http://127.0.0.1:${server.address().port}/`;
  engines.chromium = await launchChromium();
  engines.webkit = await launchWebKit();
  engines.firefox = await launchFirefox();
  console.log(`# Chromium ${engines.chromium.browserVersion}, WebKit ${engines.webkit.browserVersion}, Firefox ${engines.firefox.browserVersion}`);
});

after(async () => {
  for (const engine of Object.values(engines)) await engine.close();
  await new Promise((done) => server?.close(done));
});

/** In the page: no logs in localStorage and no archive database, as on a first visit. */
async function firstVisit() {
  localStorage.clear();
  await new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase("context-compactor-archives");
    request.onsuccess = resolve;
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error("the archive database is held open"));
  });
}

/** In the page (after `firstVisit`): compacts a GDRS session offline; returns the texts before
 * and after, the result, the archive as stored, the iterations recall gives back, and the texts
 * after the rollback. */
async function compactRecallRollback({ rollback }) {
  const pkg = await import("/pkg/context_compactor.js");
  await pkg.default();
  const { GDRS_KEYS, simulateGdrsSession } = await import("/www/simulate.js");
  simulateGdrsSession(localStorage, { seed: 2, iterations: 9 });
  const texts = () => Object.fromEntries(Object.values(GDRS_KEYS).map((k) => [k, localStorage.getItem(k)]));
  const before = texts();
  const logs = new pkg.LogStore();
  const compactor = new pkg.Compactor(logs, { provider: { type: "offline" }, contextWindowTokens: 6000 });
  const result = await compactor.compact();
  const db = await new Promise((resolve, reject) => {
    const request = indexedDB.open("context-compactor-archives");
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const stored = await new Promise((resolve, reject) => {
    const read = db.transaction("archives").objectStore("archives").get(result.archiveKey);
    read.onsuccess = () => resolve(read.result);
    read.onerror = () => reject(read.error);
  });
  db.close();
  const recalled = await compactor.recall(2);
  const live = texts();
  const summaryFirst = logs.reasoningLog()[0] ?? null;
  if (rollback) await compactor.rollback(result.archiveKey);
  return { before, live, after: texts(), archiveKey: result.archiveKey, iterations: result.iterations, stored: typeof stored === "string" ? { text: stored.length } : { format: stored?.format, units: stored?.units, bytes: stored?.gzip?.byteLength }, recalled: JSON.stringify(recalled), summaryFirst };
}

/** In the page: every public method given a Symbol, a BigInt or a Proxy whose traps throw, as an
 * argument or inside an options object; the calls that did not throw or reject
 * `invalid_input` (the recall tool: that did not answer that its arguments could not be read),
 * with what they did (#66). */
async function hostileArguments() {
  const { default: init, LogStore, Compactor, Archives, MessageCompactor, validateSummary, estimateTokens } = await import("/pkg/context_compactor.js");
  await init();
  const said = async (call) => {
    try {
      await call();
      return "no error";
    } catch (err) {
      return err?.code ?? String(err);
    }
  };
  const trap = () => {
    throw new Error("a trap that throws");
  };
  const proxy = new Proxy({}, { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap });
  const logs = new LogStore({ prefix: "hostile_" });
  logs.startIteration();
  const compactor = new Compactor(logs, { provider: { type: "offline" } });
  const archives = new Archives(logs);
  const messages = new MessageCompactor({ provider: { type: "offline" }, shape: "openai", conversation: "hostile" });
  const list = [{ role: "user", content: "Count the rows." }];
  const wrong = [];
  for (const [name, v] of [["a Symbol", Symbol("x")], ["a BigInt", 10n], ["a throwing Proxy", proxy]]) {
    const calls = {
      "new LogStore": () => new LogStore(v),
      appendReasoning: () => logs.appendReasoning(v),
      appendExecution: () => logs.appendExecution(v),
      appendToolActivity: () => logs.appendToolActivity(v),
      pin: () => logs.pin(v),
      recentReasoning: () => logs.recentReasoning(v),
      "new Compactor": () => new Compactor(logs, v),
      "new Compactor option": () => new Compactor(logs, { provider: { type: "offline" }, contextWindowTokens: v }),
      compact: () => compactor.compact(v),
      recall: () => compactor.recall(v),
      rehydrate: () => compactor.rehydrate(v),
      "rehydrate options": () => compactor.rehydrate("iteration 2", v),
      recallTool: () => compactor.recallTool(v),
      reportPromptTokens: () => compactor.reportPromptTokens(v),
      rollback: () => compactor.rollback(v),
      "new Archives": () => new Archives(logs, v),
      "Archives.read": () => archives.read(v),
      "Archives.delete": () => archives.delete(v),
      "new MessageCompactor": () => new MessageCompactor(v),
      "new MessageCompactor shape": () => new MessageCompactor({ provider: { type: "offline" }, shape: v }),
      "MessageCompactor.compact": () => messages.compact(v),
      "MessageCompactor.compact a message": () => messages.compact([...list, v]),
      "MessageCompactor.compact options": () => messages.compact(list, v),
      "MessageCompactor.shouldCompact": () => messages.shouldCompact(v),
      "MessageCompactor.usage": () => messages.usage([v]),
      "MessageCompactor.plan": () => messages.plan(v),
      "MessageCompactor.recall": () => messages.recall(v),
      "MessageCompactor.rollback": () => messages.rollback(v, list),
      validateSummary: () => validateSummary(v),
      estimateTokens: () => estimateTokens(v),
    };
    for (const [method, call] of Object.entries(calls)) {
      const code = await said(call);
      if (code !== "invalid_input") wrong.push(`${method}(${name}): ${code}`);
    }
    // The recall tool answers its model with a sentence, never a rejection.
    const answer = await compactor.recallTool().call(v);
    if (!answer.startsWith("The arguments could not be read")) wrong.push(`recallTool().call(${name}): ${answer}`);
  }
  return wrong;
}

/** In the page: an OpenAI message list of eight turns with bulky results, compacted (the
 * user's trigger), one cleared result recalled by its call id, then the compaction rolled back
 * (#67). */
async function messageList() {
  const { default: init, MessageCompactor } = await import("/pkg/context_compactor.js");
  await init();
  const compactor = new MessageCompactor({ provider: { type: "offline" }, shape: "openai", conversation: "engines" });
  const list = [{ role: "user", content: "Which regions missed the Q3 target?" }];
  for (let turn = 0; turn < 8; turn++) {
    const rows = Array.from({ length: 300 }, (_, r) => `r${r % 12},${turn},${1000 + r}`).join("\n");
    list.push({ role: "assistant", content: `Step ${turn}.`, tool_calls: [{ id: `call_${turn}`, type: "function", function: { name: "fetch_page", arguments: "{}" } }] });
    list.push({ role: "tool", tool_call_id: `call_${turn}`, content: rows });
  }
  const done = await compactor.compact(list, { trigger: "user" });
  const [recalled] = await compactor.recall("call_0");
  const back = await compactor.rollback(done.archiveKey, done.messages);
  return {
    rung: done.rung,
    sent: done.messages.length,
    goalFirst: done.messages[0] === list[0],
    summaryAfterGoal: String(done.messages[1]?.content).startsWith("=== COMPACTED SUMMARY"),
    recalled: recalled?.content === list[2].content,
    back: back.length === list.length && back.filter((m) => m.role === "tool").every((m, i) => m.content === list[2 + 2 * i].content),
  };
}

for (const name of ["chromium", "webkit", "firefox"]) {
  test(`${name}: a message list compacted, a result recalled by its call id, the compaction rolled back`, async () => {
    const engine = engines[name];
    await engine.goto(url);
    await engine.run(firstVisit);
    const out = await engine.run(messageList);
    assert.equal(out.rung, "summarize");
    assert.ok(out.sent < 17, `${out.sent} messages to send`);
    assert.deepEqual({ ...out, rung: undefined, sent: undefined }, { rung: undefined, sent: undefined, goalFirst: true, summaryAfterGoal: true, recalled: true, back: true });
  });

  test(`${name}: a GDRS session compacted offline, archived in IndexedDB, recalled, rolled back byte for byte`, async () => {
    const engine = engines[name];
    await engine.goto(url);
    await engine.run(firstVisit);
    const out = await engine.run(compactRecallRollback, { rollback: true });
    assert.deepEqual(out.iterations, [1, 8], JSON.stringify(out.iterations));
    // In IndexedDB, compressed: its UTF-16 units gzip, a fraction of their bytes.
    assert.equal(out.stored.format, "gzip-utf16", JSON.stringify(out.stored));
    assert.ok(out.stored.units > 1000 && out.stored.bytes * 3 < out.stored.units * 2, JSON.stringify(out.stored));
    assert.notDeepEqual(out.live, out.before, "the compaction changed the logs");
    assert.match(out.summaryFirst, /COMPACTED SUMMARY/);
    assert.match(out.recalled, /"iteration":2/);
    assert.deepEqual(out.after, out.before, "byte for byte after the rollback");
  });

  test(`${name}: a Symbol, a BigInt or a Proxy whose traps throw is invalid_input on every public method`, async () => {
    const engine = engines[name];
    await engine.goto(url);
    await engine.run(firstVisit);
    assert.deepEqual(await engine.run(hostileArguments), []);
  });

  test(`${name}: after a reload the summary, the archive, recall and the rollback are all still there`, async () => {
    const engine = engines[name];
    await engine.goto(url);
    await engine.run(firstVisit);
    const first = await engine.run(compactRecallRollback, { rollback: false });
    await engine.goto(`${url}?reloaded`);
    const out = await engine.run(async ({ archiveKey, before }) => {
      const pkg = await import("/pkg/context_compactor.js");
      await pkg.default();
      const logs = new pkg.LogStore();
      const compactor = new pkg.Compactor(logs, { provider: { type: "offline" }, contextWindowTokens: 6000 });
      const listed = (await new pkg.Archives(logs).list()).map((a) => a.key);
      const recalled = JSON.stringify(await compactor.recall(2));
      const summaryFirst = logs.reasoningLog()[0];
      await compactor.rollback(archiveKey);
      const after = Object.fromEntries(Object.keys(before).map((k) => [k, localStorage.getItem(k)]));
      return { listed, recalled, summaryFirst, byteForByte: JSON.stringify(after) === JSON.stringify(before) };
    }, first);
    assert.deepEqual(out.listed, [first.archiveKey]);
    assert.equal(out.recalled, first.recalled, "recall reads the same originals after the reload");
    assert.match(out.summaryFirst, /COMPACTED SUMMARY/);
    assert.ok(out.byteForByte, "the rollback after the reload restores every byte");
  });

  test(`${name}: two tabs: while one compacts, the other's compaction is busy; then it sees the summary`, async () => {
    const engine = engines[name];
    await engine.goto(url);
    await engine.run(firstVisit);
    const first = await engine.window();
    const asked = await engine.run(async () => {
      const pkg = await import("/pkg/context_compactor.js");
      await pkg.default();
      const { simulateGdrsSession } = await import("/www/simulate.js");
      simulateGdrsSession(localStorage, { seed: 3, iterations: 9 });
      let called;
      const calledOnce = new Promise((resolve) => (called = resolve));
      const answered = new Promise((resolve) => (window.answer = resolve));
      const generate = async () => {
        called();
        await answered;
        return [
          "### 🎯 OBJECTIVE ACHIEVED", "- The session goes on.",
          "### 📊 KEY DISCOVERIES", "- Nothing new.",
          "### ✅ SUCCESSFUL SOLUTIONS", "- None yet.",
          "### 🔧 TOOLS USED SUCCESSFULLY", "- None.",
          "### 💡 CRITICAL INSIGHTS", "- None.",
          "### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING", "- Continue from the newest iteration.",
        ].join("\n");
      };
      const compactor = new pkg.Compactor(new pkg.LogStore(), { provider: { type: "custom", generate }, contextWindowTokens: 6000, retryDelayMs: 0 });
      window.running = compactor.compact().then((r) => ({ archiveKey: r.archiveKey }), (e) => ({ code: e.code, message: e.message }));
      await calledOnce;
      return true;
    });
    assert.ok(asked);
    const second = await engine.newWindow();
    await engine.switchTo(second);
    await engine.goto(url);
    const during = await engine.run(async () => {
      const pkg = await import("/pkg/context_compactor.js");
      await pkg.default();
      const compactor = new pkg.Compactor(new pkg.LogStore(), { provider: { type: "offline" }, contextWindowTokens: 6000 });
      return compactor.compact().then(() => ({ code: "completed" }), (e) => ({ code: e.code, message: e.message }));
    });
    assert.equal(during.code, "busy", during.message);
    await engine.switchTo(first);
    const done = await engine.run(() => {
      window.answer();
      return window.running;
    });
    assert.ok(done.archiveKey, JSON.stringify(done));
    await engine.switchTo(second);
    const seen = await engine.run(async (archiveKey) => {
      const pkg = await import("/pkg/context_compactor.js");
      await pkg.default();
      const logs = new pkg.LogStore();
      return { summaryFirst: logs.reasoningLog()[0], listed: (await new pkg.Archives(logs).list()).map((a) => a.key), archiveKey };
    }, done.archiveKey);
    assert.match(seen.summaryFirst, /COMPACTED SUMMARY/);
    assert.deepEqual(seen.listed, [done.archiveKey]);
    await engine.switchTo(first);
  });
}
