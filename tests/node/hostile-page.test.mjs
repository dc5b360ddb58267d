// What a hostile tester found (#66), in Chromium with real tabs of one origin: a tab that used
// the store lock never blocks another tab's deletion of the lock database (an app's "reset"
// button, a storage library's clear-all), and a tab opened after that deletion can lock and
// compact; the lock database made by other code without its store is not an error; a storage
// estimate that never settles does not hang a compaction, one of figures that are not finite
// reads as unknown; a record whose gzip does not decompress is storage_corrupt naming its
// archive; a compaction whose summary fails
// after its clearing stood says so on the error it rejects with; a Proxy whose traps throw is
// invalid_input, never a promise left pending.
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

/** `work(context)` in a new browser context, whose pages are tabs of one origin; closed after. */
async function inContext(work) {
  const context = await env.browser.newContext();
  try {
    return await work(context);
  } finally {
    await context.close();
  }
}

/** A tab of the package's origin, the package not loaded. */
async function blankTab(context) {
  const page = await context.newPage();
  await page.goto(`${env.baseUrl}pkg/package.json`);
  return page;
}

/** A tab of the package's origin with the package initialised (`prepare(page)` first): on
 * `window`, a LogStore under `prefix` as `logs`, the package's classes, and
 * `compactFourSteps()`, which appends four iterations to `logs` and compacts them offline as
 * the loop would at a full window, resolving to the rung that ran. */
async function tab(context, prefix = "tabs_", prepare = async () => {}) {
  const page = await blankTab(context);
  await prepare(page);
  await page.evaluate(async (prefix) => {
    const { default: init, LogStore, Compactor, Archives, ContextCompactorError } = await import("/pkg/context_compactor.js");
    await init();
    window.logs = new LogStore({ prefix });
    Object.assign(window, { LogStore, Compactor, Archives, ContextCompactorError });
    window.compactFourSteps = async () => {
      const logs = window.logs;
      for (let n = 1; n <= 4; n++) {
        logs.startIteration();
        logs.appendReasoning(`Step ${n}: counted the rows of shard_${n}.csv and compared them with the report.`);
        logs.appendExecution({ success: true, code: `return count('shard_${n}.csv');`, result: { rows: 1000 * n } });
        logs.finishIteration();
      }
      const result = await new Compactor(logs, { provider: { type: "offline" } }).compact({ trigger: "context_limit_error" });
      return result.rung;
    };
  }, prefix);
  return page;
}

/** What `work` (evaluated in `page`) resolves to within `ms`, else "pending". */
function within(page, ms, work) {
  return page.evaluate(
    ({ ms, work }) => Promise.race([(0, eval)(work)(), new Promise((resolve) => setTimeout(() => resolve("pending"), ms))]),
    { ms, work },
  );
}

test("a tab that used the lock lets another delete the lock database, and a tab opened after locks and compacts", () =>
  inContext(async (context) => {
    const a = await tab(context);
    assert.equal(await a.evaluate(() => window.logs.withLock(() => 1)), 1, "tab A holds and releases the lock once");
    // Tab B deletes the database tab A has open.
    const b = await blankTab(context);
    const deletion = await within(b, 5000, `() => new Promise((resolve) => {
      const request = indexedDB.deleteDatabase("context-compactor");
      const events = [];
      request.onblocked = () => events.push("blocked");
      request.onsuccess = () => resolve([...events, "deleted"].join(" "));
      request.onerror = () => resolve("error");
    })`);
    assert.equal(deletion, "deleted", "the deletion went through without being blocked");
    // Tab C, opened after, locks and compacts; tab A still does.
    const c = await tab(context);
    const compacted = await within(c, 10_000, `async () => {
      window.logs.clear();
      const rung = await window.compactFourSteps();
      return (await window.logs.withLock(() => "locked")) + " " + rung;
    }`);
    assert.equal(compacted, "locked summarize");
    assert.equal(await within(a, 5000, "() => window.logs.withLock(() => 'again')"), "again");
  }));

test("a lock database that other code made without the lock's store is used as none, not an error", () =>
  inContext(async (context) => {
    const page = await blankTab(context);
    await page.evaluate(() => new Promise((resolve) => {
      const request = indexedDB.open("context-compactor", 1);
      request.onupgradeneeded = () => request.result.createObjectStore("something_else");
      request.onsuccess = () => {
        request.result.close();
        resolve();
      };
    }));
    const other = await tab(context);
    assert.equal(await within(other, 5000, "() => window.logs.withLock(() => 'locked')"), "locked");
  }));

test("a storage estimate that never settles does not hang a compaction, and the page compacts again", () =>
  inContext(async (context) => {
    // A browser whose estimate never answers (seen by the hostile tester).
    const page = await tab(context, "estimate_", (page) =>
      page.evaluate(() => {
        navigator.storage.estimate = () => new Promise(() => {});
      }),
    );
    const session = "() => window.compactFourSteps()";
    assert.equal(await within(page, 15_000, session), "summarize");
    assert.equal(await within(page, 15_000, session), "summarize", "the page compacts again");
  }));

test("a storage estimate of figures that are not finite reads as unknown: no storage_pressure of nulls, 0 for it in estimate()", () =>
  inContext(async (context) => {
    const page = await tab(context, "infinite_", (page) =>
      page.evaluate(() => {
        navigator.storage.estimate = async () => ({ usage: Infinity, quota: 1e9 });
      }),
    );
    const seen = await page.evaluate(async () => {
      const { logs, Compactor } = window;
      for (let n = 1; n <= 4; n++) {
        logs.startIteration();
        logs.appendReasoning(`Step ${n}: counted the rows of shard_${n}.csv and compared them with the report.`);
        logs.appendExecution({ success: true, code: `return count('shard_${n}.csv');`, result: { rows: 1000 * n } });
        logs.finishIteration();
      }
      const compactor = new Compactor(logs, { provider: { type: "offline" } });
      const pressure = [];
      compactor.events.addEventListener("storage_pressure", (e) => pressure.push(e.detail));
      await compactor.compact({ trigger: "context_limit_error" });
      const { usage, quota } = await new window.Archives(logs).estimate();
      return { pressure, usage, quota };
    });
    assert.deepEqual(seen, { pressure: [], usage: 0, quota: 1e9 }, "the usage unknown, the quota as given");
  }));

test("an IndexedDB record whose gzip does not decompress is storage_corrupt naming its archive, and a recall-tool query reads the others", () =>
  inContext(async (context) => {
    const first = await tab(context, "gzip_");
    const key = await first.evaluate(async () => {
      await window.compactFourSteps();
      const [{ key }] = await new window.Archives(window.logs).list();
      await window.compactFourSteps();
      // The first archive's bytes damaged where they are kept (a disk error, a bad write).
      const db = await new Promise((resolve, reject) => {
        const request = indexedDB.open("context-compactor-archives");
        request.onsuccess = () => resolve(request.result);
        request.onerror = () => reject(request.error);
      });
      await new Promise((resolve, reject) => {
        const tx = db.transaction("archives", "readwrite");
        const store = tx.objectStore("archives");
        const read = store.get(key);
        read.onsuccess = () => store.put({ ...read.result, gzip: new Uint8Array([31, 139, 8, 0, 1, 2, 3]).buffer }, key);
        tx.oncomplete = resolve;
        tx.onerror = () => reject(tx.error);
      });
      db.close();
      return key;
    });
    const reloaded = await tab(context, "gzip_");
    const seen = await reloaded.evaluate(async (key) => {
      const { logs, Compactor } = window;
      const compactor = new Compactor(logs, { provider: { type: "offline" } });
      const recalled = await compactor.recall(1).then(() => "resolved", (err) => `${err.code} ${err.key} ${err.message}`);
      const answer = await compactor.recallTool().call({ query: "shard" });
      return { recalled, leftOut: answer.includes(`Left out: ${key} damaged`), others: answer.includes("shard_") };
    }, key);
    // Before, both failed storage_unavailable: "IndexedDB could not be read (… Failed to fetch)".
    assert.match(seen.recalled, new RegExp(`^storage_corrupt ${key} `));
    assert.match(seen.recalled, /does not decompress/);
    assert.deepEqual({ leftOut: seen.leftOut, others: seen.others }, { leftOut: true, others: true });
  }));

test("a summary that fails after the clearing stood rejects with the clearing's archiveKey and cleared, and says so", () =>
  inContext(async (context) => {
    const page = await tab(context, "stood_");
    const outcome = await page.evaluate(async () => {
      const { logs, Compactor, ContextCompactorError } = window;
      for (let n = 1; n <= 8; n++) {
        logs.startIteration();
        logs.appendReasoning(`Iteration ${n}: read the regional report ${n} and its table.`);
        const table = Array.from({ length: 120 }, (_, r) => `| region_${n}_${r} | ${(n * 131 + r * 17) % 997} | ok |`).join("\n");
        logs.appendExecution({ success: true, code: `return readReport(${n});`, result: table });
        logs.finishIteration();
      }
      logs.startIteration();
      const failing = { type: "custom", generate: async () => { throw Object.assign(new Error("overloaded"), { status: 503 }); } };
      const measure = new Compactor(logs, { provider: failing, contextWindowTokens: 1_000_000 });
      const tokens = Math.round(measure.contextUsage() * 1_000_000);
      measure.free();
      const compactor = new Compactor(logs, {
        provider: failing,
        contextWindowTokens: Math.round((tokens * 10) / 9),
        clearing: { keepIterations: 6 },
        recommendedUsage: 0.3,
        fallback: false,
        retryDelayMs: 0,
      });
      try {
        const result = await compactor.compact({ trigger: "auto" });
        return { resolved: true, rung: result.rung, before: result.contextUsageBefore, after: result.contextUsageAfter, tokens };
      } catch (err) {
        const archives = await compactor.archives();
        return {
          isInstance: ContextCompactorError.isInstance(err),
          code: err.code,
          status: err.status,
          archiveKey: err.archiveKey,
          cleared: err.cleared,
          message: err.message,
          listed: archives.map((a) => a.key),
          clearings: compactor.metrics().clearings,
        };
      }
    });
    assert.equal(outcome.isInstance, true, JSON.stringify(outcome));
    assert.equal(outcome.code, "llm_http");
    assert.equal(outcome.status, 503);
    assert.deepEqual(outcome.listed, [outcome.archiveKey], "the error names the clearing's archive, the one listed");
    assert.ok(outcome.cleared.length > 0 && outcome.cleared.every((body) => body.iteration <= 3 && body.entryId.startsWith("exec_") && body.tokens > 0), JSON.stringify(outcome.cleared));
    assert.match(outcome.message, /\(the clearing that ran first stands: \d+ bodies moved to the archive "stood_archived_logs_\d+"; rollback\("stood_archived_logs_\d+"\) puts them back\)\.$/);
    assert.equal(outcome.clearings, 1);
  }));

test("a Proxy whose traps throw, given as options or as the recall tool's arguments, settles with invalid_input and no uncaught error", () =>
  inContext(async (context) => {
    const page = await tab(context, "proxy_");
    const uncaught = [];
    page.on("pageerror", (err) => uncaught.push(String(err)));
    const said = await page.evaluate(async () => {
      const compactor = new window.Compactor(window.logs, { provider: { type: "offline" } });
      const trap = (name) => () => {
        throw new Error(`trap ${name}`);
      };
      const hostile = new Proxy({}, { get: trap("get"), ownKeys: trap("ownKeys"), getOwnPropertyDescriptor: trap("descriptor"), has: trap("has") });
      const settled = (call) =>
        Promise.race([
          (async () => {
            try {
              return `resolved: ${String(await call()).slice(0, 60)}`;
            } catch (err) {
              return `${err.code}`;
            }
          })(),
          new Promise((resolve) => setTimeout(() => resolve("pending"), 3000)),
        ]);
      return {
        toolCall: await settled(() => compactor.recallTool().call(hostile)),
        rehydrate: await settled(() => compactor.rehydrate("iteration 2", hostile)),
        compact: await settled(() => compactor.compact(hostile)),
        recallTool: await settled(() => compactor.recallTool(hostile)),
      };
    });
    assert.match(said.toolCall, /^resolved: The arguments could not be read/);
    assert.deepEqual({ ...said, toolCall: undefined }, { toolCall: undefined, rehydrate: "invalid_input", compact: "invalid_input", recallTool: "invalid_input" });
    assert.deepEqual(uncaught, []);
  }));
