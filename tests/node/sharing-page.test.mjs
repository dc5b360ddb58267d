// A big compaction shares the page (#53): it breaks its work into tasks, and what it promises
// holds across the breaks, in Chromium with two real tabs of one origin: the other tab's
// compaction is `busy` while the entries it appends meanwhile all land once; a cancel as any
// phase begins leaves every key byte-identical and writes no archive (but for the store lock's
// version counter, which every holder of the lock raises, and the summary cache, which keeps an
// answer already paid for so that the next compaction of the same input does not pay again).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, databaseArchives } from "./browser.mjs";

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

/** Loads the package in `page` and keeps on `window` a LogStore, a compactor over it whose
 * custom provider answers after `providerMs` (fails at once when `null`), and
 * `grow(iterations)`, which appends a research session of big entries (about 5,000 tokens an
 * iteration). */
async function setUp(page, providerMs) {
  await page.evaluate(async (providerMs) => {
    const { default: init, LogStore, Compactor } = await import("/pkg/context_compactor.js");
    await init();
    const words = ["latency", "shard", "region", "p95", "drift", "baseline", "window", "sample"];
    const word = (i) => words[i % words.length];
    const logs = new LogStore();
    window.grow = (iterations) => {
      logs.appendReasoning("Goal (iteration 1): audit every shard's latency against the baseline.");
      for (let n = 1; n <= iterations; n++) {
        logs.startIteration();
        const steps = Array.from({ length: 100 }, (_, i) => `Step ${i}: the ${word(i)} of ${word(n + i)} moved by ${(n * 37 + i * 11) % 997} basis points.`);
        logs.appendReasoning(`Iteration ${n}: ${steps.join(" ")}`);
        const table = Array.from({ length: 60 }, (_, r) => `| shard_${n}_${r} | ${word(r)} | ${(n * r) % 991} | ok |`).join("\n");
        logs.appendExecution({ success: true, code: `return readTable("shard_${n}");`, result: { table } });
        logs.finishIteration();
      }
      logs.appendReasoning(`Iteration ${iterations + 1}: next, the summary of the drift.`);
    };
    const summary = [
      "### 🎯 OBJECTIVE ACHIEVED", "- Every shard audited.",
      "### 📊 KEY DISCOVERIES", "- The drift stays within bounds.",
      "### ✅ SUCCESSFUL SOLUTIONS", "- readTable(name) gives a shard's table.",
      "### 🔧 TOOLS USED SUCCESSFULLY", "- readTable",
      "### 💡 CRITICAL INSIGHTS", "- Compare each shard with the previous one.",
      "### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING", "- Continue with the summary of the drift.",
    ].join("\n");
    const generate = (_prompt, settings) =>
      new Promise((resolve, reject) => {
        if (providerMs === null) return reject(new Error("this tab never gets a summary"));
        const timer = setTimeout(() => resolve(summary), providerMs);
        settings.signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(new DOMException("aborted", "AbortError"));
        });
      });
    window.shared = {
      logs,
      compactor: () =>
        // `fallback: false`: a failed provider is refused, never summarised by the package.
        new Compactor(logs, { provider: { type: "custom", generate }, contextWindowTokens: 1_048_576, clearing: false, fallback: false, retryDelayMs: 0 }),
    };
  }, providerMs);
}

test("while a big compaction runs in one tab, the other's compaction is busy and its appends all land once", async () => {
  const context = await env.browser.newContext();
  try {
    const [a, b] = [await context.newPage(), await context.newPage()];
    for (const page of [a, b]) await page.goto(`${env.baseUrl}pkg/package.json`);
    await a.evaluate(() => localStorage.clear());
    await setUp(a, 1500);
    // Tab B's provider fails: once A is done, B's compaction gets past `busy` and fails
    // without a write.
    await setUp(b, null);
    await a.evaluate(() => window.grow(40));
    // Tab A compacts; tab B tries to compact and appends until A is done.
    await a.evaluate(() => {
      const compactor = window.shared.compactor();
      const started = new Promise((resolve) => compactor.events.addEventListener("compaction_start", resolve, { once: true }));
      window.running = compactor.compact({ trigger: "context_limit_error" }).then(
        (result) => ({ done: result.iterations }),
        (err) => ({ failed: err.code }),
      );
      // Tab B begins once A holds the lease (it is taken before compaction_start).
      return Promise.race([started, window.running]);
    });
    const outcomes = [];
    let appended = 0;
    for (let round = 0; round < 100; round++) {
      const seen = await b.evaluate(async (round) => {
        const { logs, compactor } = window.shared;
        await logs.withLock(() => logs.appendToolActivity({ type: "note", action: "write", status: "success", details: `from tab B ${round}` }));
        try {
          await compactor().compact({ trigger: "context_limit_error" });
          return { refused: null };
        } catch (err) {
          return { refused: err.code, message: err.message };
        }
      }, round);
      appended++;
      outcomes.push(seen);
      const finished = await a.evaluate(() => Promise.race([window.running, new Promise((r) => setTimeout(() => r(null), 20))]));
      // Tab B's compaction runs only once A's has given the lease back.
      assert.ok(seen.refused === "busy" || (seen.refused?.startsWith("llm_") && finished), JSON.stringify(seen));
      if (finished) {
        assert.ok(finished.done, JSON.stringify(finished));
        break;
      }
    }
    assert.ok(outcomes.filter((seen) => seen.refused === "busy").length >= 3, JSON.stringify(outcomes));
    assert.ok(appended >= 3, `${appended} rounds`);
    const notes = await b.evaluate(() => window.shared.logs.toolActivityLog().map((entry) => entry.details).filter((d) => String(d).startsWith("from tab B")));
    assert.equal(notes.length, appended, "every append of tab B is in the log");
    assert.equal(new Set(notes).size, appended, "and only once");
    assert.equal(Object.keys(await a.evaluate(databaseArchives)).length, 1, "one archive, of tab A's compaction");
  } finally {
    await context.close();
  }
});

/** In the page: every localStorage key but the store lock's version counter and the summary
 * cache, in key order. */
function storedKeys() {
  return JSON.stringify(
    Object.keys(localStorage)
      .filter((key) => !key.endsWith("store_version") && !key.endsWith("summary_cache"))
      .sort()
      .map((key) => [key, localStorage.getItem(key)]),
  );
}

test("a cancel as any phase of a big compaction begins leaves every key byte-identical and writes no archive", async () => {
  const context = await env.browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${env.baseUrl}pkg/package.json`);
    await page.evaluate(() => localStorage.clear());
    await setUp(page, 200);
    await page.evaluate(() => window.grow(40));
    const phases = await page.evaluate(async () => {
      const snapshot = JSON.stringify({ ...localStorage });
      const compactor = window.shared.compactor();
      const phases = [];
      compactor.events.addEventListener("compaction_phase_change", (e) => phases.push(e.detail.phase));
      const result = await compactor.compact({ trigger: "context_limit_error" });
      // Undone by hand (a rollback would keep the archive) so that each cancel starts alike.
      localStorage.clear();
      for (const [key, value] of Object.entries(JSON.parse(snapshot))) localStorage.setItem(key, value);
      await new (await import("/pkg/context_compactor.js")).Archives(window.shared.logs).delete(result.archiveKey);
      return phases.filter((phase) => !["idle", "complete", "error"].includes(phase));
    });
    assert.ok(phases.includes("building_prompt") && phases.includes("archiving"), phases.join());
    const before = await page.evaluate(storedKeys);
    for (const phase of phases) {
      const outcome = await page.evaluate(async (phase) => {
        // Each compaction calls the provider (none takes an answer an earlier one cached).
        for (const key of Object.keys(localStorage)) if (key.endsWith("summary_cache")) localStorage.removeItem(key);
        const compactor = window.shared.compactor();
        compactor.events.addEventListener("compaction_phase_change", (e) => {
          if (e.detail.phase === phase) compactor.abort();
        });
        try {
          await compactor.compact({ trigger: "context_limit_error" });
          return "completed";
        } catch (err) {
          return err.code;
        }
      }, phase);
      const afterwards = await page.evaluate(storedKeys);
      if (outcome === "aborted") {
        assert.ok(afterwards === before, `cancelled as ${phase} began: every key as before`);
        assert.deepEqual(await page.evaluate(databaseArchives), {}, `cancelled as ${phase} began: no archive`);
        continue;
      }
      // From the archive on, a compaction completes; undo it for the next phase.
      assert.equal(outcome, "completed", phase);
      assert.ok(["archiving", "replacing", "recording_metrics", "unfreezing"].includes(phase), `${phase} completed`);
      await page.evaluate(async (before) => {
        for (const key of Object.keys(localStorage)) if (!key.endsWith("store_version")) localStorage.removeItem(key);
        for (const [key, value] of JSON.parse(before)) localStorage.setItem(key, value);
        const archives = new (await import("/pkg/context_compactor.js")).Archives(window.shared.logs);
        for (const archive of await archives.list()) await archives.delete(archive.key);
      }, before);
    }
  } finally {
    await context.close();
  }
});
