// One archive shelf per page, in real tabs of Chromium: an `Archives` (or a second `Compactor`)
// over the same logs cannot delete or roll back the archive a running compaction is writing,
// from a `compaction_archived` listener of the same page or from a second tab; and a compaction
// the loop asks for between its own startIteration() and finishIteration() settles.
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

/** In the page: `n` finished iterations whose every entry carries a mark `entry-<k>`. */
const GROW = `
  window.grow = (logs, n) => {
    for (let i = 0; i < n; i++) {
      const it = logs.startIteration();
      logs.appendReasoning("entry-r" + it + ": checked shard_" + it + ", 4" + it + "1 rows grouped by region.");
      logs.appendExecution({ code: "count(" + it + ")", success: true, result: "entry-e" + it + " = " + (it * 37), executionTime: 3, source: "test" });
      logs.appendToolActivity({ type: "file", action: "read", status: "ok", details: "entry-t" + it });
      logs.finishIteration();
    }
  };
  /** A compactor of 8 grown iterations under \`prefix\` whose custom provider is \`generate\`. */
  window.customOver = (prefix, generate) => {
    const logs = new window.pkg.LogStore({ prefix });
    window.grow(logs, 8);
    return new window.pkg.Compactor(logs, { contextWindowTokens: 1500, recommendedUsage: 0.05, retryDelayMs: 0, provider: { type: "custom", generate } });
  };
  window.marks = (n) => Array.from({ length: n }, (_, i) => ["r", "e", "t"].map((k) => "entry-" + k + (i + 1))).flat();
  /** How many times each original entry is held by the live logs and the archives together. */
  window.census = async (logs, archives, n) => {
    const sets = [{ r: logs.reasoningLog(), e: logs.executionLog(), t: logs.toolActivityLog() }];
    for (const info of await archives.list()) {
      const data = (await archives.read(info.key)).data;
      sets.push({ r: data.reasoningLog, e: data.executionLog, t: data.toolActivityLog });
    }
    const counts = Object.fromEntries(window.marks(n).map((mark) => [mark, 0]));
    const count = (pattern, text) => {
      const found = pattern.exec(String(text));
      if (found) counts[found[1]]++;
    };
    for (const set of sets) {
      for (const text of set.r) count(/^(entry-r[0-9]+):/, text);
      for (const entry of set.e) count(/^(entry-e[0-9]+) =/, entry.result);
      for (const entry of set.t) count(/^(entry-t[0-9]+)$/, entry.details);
    }
    return counts;
  };
`;

/** Tabs of one origin (one browser context) with the package and GROW loaded and localStorage
 * empty. */
async function openTabs(count) {
  const context = await env.browser.newContext();
  const pages = [];
  for (let i = 0; i < count; i++) {
    const page = await context.newPage();
    await page.goto(`${env.baseUrl}pkg/package.json`);
    await page.evaluate(async () => {
      const pkg = await import("/pkg/context_compactor.js");
      await pkg.default();
      window.pkg = pkg;
    });
    await page.evaluate(GROW);
    pages.push(page);
  }
  await pages[0].evaluate(() => localStorage.clear());
  return { context, pages };
}



/** Runs `body` with one such tab, closed afterwards. */
async function inOneTab(body) {
  const { context, pages } = await openTabs(1);
  try {
    return await body(pages[0]);
  } finally {
    await context.close();
  }
}

test("a compaction_archived listener of the same page cannot delete or roll back the archive being written", async () => {
  await inOneTab(async (page) => {
    const outcome = await page.evaluate(async () => {
      const { LogStore, Compactor, Archives } = window.pkg;
      const logs = new LogStore();
      window.grow(logs, 10);
      const options = { provider: { type: "offline" }, contextWindowTokens: 1500, recommendedUsage: 0.05 };
      const compactor = new Compactor(logs, options);
      const archives = new Archives(logs);
      const second = new Compactor(logs, options);
      const attempts = [];
      compactor.events.addEventListener("compaction_archived", (e) => {
        const key = e.detail.archiveKey;
        attempts.push(archives.delete(key), archives.rollback(key), second.deleteArchive(key), second.rollback(key));
      });
      const result = await compactor.compact();
      const settled = await Promise.allSettled(attempts);
      const kept = await archives.read(result.archiveKey);
      return {
        settled: settled.map((s) => (s.status === "rejected" ? s.reason.code : "resolved")),
        messages: settled.map((s) => String(s.reason?.message)),
        archived: kept.iterations,
        census: await window.census(logs, archives, 10),
      };
    });
    assert.deepEqual(outcome.settled, ["busy", "busy", "busy", "busy"], outcome.messages.join("\n"));
    assert.deepEqual(outcome.archived, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const [mark, count] of Object.entries(outcome.census)) assert.equal(count, 1, `${mark} held ${count} times`);
  });
});

test("a second tab cannot delete or roll back while the first compacts, nor the archive being written", async () => {
  const { context, pages } = await openTabs(2);
  const [a, b] = pages;
  try {
    // Tab A: one compaction done (an earlier archive), then one whose model waits for the test.
    const earlier = await a.evaluate(async () => {
      const { LogStore, Compactor } = window.pkg;
      const logs = new LogStore();
      window.grow(logs, 10);
      const options = { contextWindowTokens: 1500, recommendedUsage: 0.05 };
      const first = await new Compactor(logs, { ...options, provider: { type: "offline" } }).compact();
      window.grow(logs, 12);
      let answer;
      window.answered = new Promise((resolve) => (answer = resolve));
      window.answer = answer;
      window.calls = 0;
      const compactor = new Compactor(logs, {
        ...options,
        provider: {
          type: "custom",
          generate: async () => {
            window.calls++;
            await window.answered;
            return window.SUMMARY;
          },
        },
      });
      window.SUMMARY = [
        "### 🎯 OBJECTIVE ACHIEVED", "- Counted the rows of every shard by region.",
        "### 📊 KEY DISCOVERIES", "- The shards differ in size.",
        "### ✅ SUCCESSFUL SOLUTIONS", "- count() over each shard.",
        "### 🔧 TOOLS USED SUCCESSFULLY", "- file read",
        "### 💡 CRITICAL INSIGHTS", "- Nothing failed.",
        "### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING", "- Continue with the next shard.",
      ].join("\n");
      const channel = new BroadcastChannel("shelf-test");
      compactor.events.addEventListener("compaction_archived", (e) => {
        channel.postMessage(e.detail.archiveKey);
        // Tab A stays in its swap's window while tab B tries: the listener holds this page.
        const until = Date.now() + 2500;
        while (Date.now() < until) {
          /* busy on purpose */
        }
      });
      window.running = compactor.compact().then(
        (r) => ({ archiveKey: r.archiveKey }),
        (e) => ({ error: e.code, message: e.message }),
      );
      return first.archiveKey;
    });
    await a.waitForFunction(() => window.calls > 0);

    const during = await b.evaluate(async (key) => {
      const archives = new window.pkg.Archives(new window.pkg.LogStore());
      const settled = await Promise.allSettled([archives.delete(key), archives.rollback(key)]);
      window.archives = archives;
      window.tried = new Promise((resolve) => {
        const channel = new BroadcastChannel("shelf-test");
        channel.onmessage = async (e) => {
          const key = e.data;
          const settled = await Promise.allSettled([archives.delete(key), archives.rollback(key)]);
          resolve({ key, settled: settled.map((s) => (s.status === "rejected" ? s.reason.code : "resolved")) });
        };
      });
      return settled.map((s) => (s.status === "rejected" ? s.reason.code : "resolved"));
    }, earlier);
    assert.deepEqual(during, ["busy", "busy"]);

    // The model answers; tab A archives, tells tab B the key, and stays in its listener.
    const result = await a.evaluate(() => {
      window.answer();
      return window.running;
    });
    assert.ok(result.archiveKey, JSON.stringify(result));
    const tried = await b.evaluate(() => window.tried);
    assert.equal(tried.key, result.archiveKey);
    assert.deepEqual(tried.settled, ["busy", "busy"]);
    const census = await b.evaluate(() => window.census(new window.pkg.LogStore(), window.archives, 22));
    for (const [mark, count] of Object.entries(census)) assert.equal(count, 1, `${mark} held ${count} times`);
  } finally {
    await context.close();
  }
});

test("the loop's own compaction between startIteration() and finishIteration() settles; a user's waits and says so", async () => {
  await inOneTab(async (page) => {
    const outcome = await page.evaluate(async () => {
      const { LogStore, Compactor } = window.pkg;
      const within = (promise, ms) =>
        Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve("still pending"), ms))]);
      const options = { provider: { type: "offline" }, contextWindowTokens: 1500, recommendedUsage: 0.05 };
      const seen = {};
      for (const trigger of ["auto", "context_limit_error"]) {
        const logs = new LogStore({ prefix: `mid_${trigger}_` });
        window.grow(logs, 10);
        const live = logs.startIteration();
        logs.appendReasoning("Checking shard_099 now.");
        const compactor = new Compactor(logs, options);
        const result = await within(compactor.compact({ trigger }).then((r) => r.iterations, (e) => e.code), 10_000);
        logs.appendReasoning("Done with shard_099.");
        seen[trigger] = { result, live, running: logs.iterationRunning, tail: logs.reasoningLog().slice(-3) };
        logs.finishIteration();
      }
      const logs = new LogStore({ prefix: "mid_user_" });
      window.grow(logs, 10);
      logs.startIteration();
      const compactor = new Compactor(logs, options);
      const can = compactor.canCompact();
      const plan = compactor.plan();
      const pending = compactor.compact({ trigger: "user" }).then((r) => r.iterations, (e) => e.code);
      const before = await within(pending, 600);
      const phase = compactor.phase;
      logs.finishIteration();
      const after = await within(pending, 10_000);
      return { seen, can, plan: plan.waitsFor, before, phase, after };
    });
    for (const trigger of ["auto", "context_limit_error"]) {
      const seen = outcome.seen[trigger];
      assert.deepEqual(seen.result, [1, 10], `${trigger}: ${JSON.stringify(seen)}`);
      assert.equal(seen.running, true);
      assert.deepEqual(seen.tail, [`=== ITERATION ${seen.live} ===`, "Checking shard_099 now.", "Done with shard_099."]);
    }
    assert.equal(outcome.can.waitsFor.iteration, 11);
    assert.equal(outcome.can.waitsFor.runningHere, true);
    assert.deepEqual(outcome.can.waitsFor.triggers, ["user"]);
    assert.match(outcome.can.waitsFor.message, /finishIteration\(\)/);
    assert.deepEqual(outcome.plan, outcome.can.waitsFor);
    assert.equal(outcome.before, "still pending");
    assert.equal(outcome.phase, "waiting");
    assert.deepEqual(outcome.after, [1, 10]);
  });
});

test("a generate() that resolves to an object is invalid_input, asked once, not retryable", async () => {
  await inOneTab(async (page) => {
    const outcome = await page.evaluate(async () => {
      let calls = 0;
      const compactor = window.customOver("object_answer_", async () => (calls++, { text: "### 🎯 OBJECTIVE ACHIEVED" }));
      const err = await compactor.compact().then(() => null, (e) => e);
      return { code: err?.code, retryable: err?.retryable, message: err?.message, calls };
    });
    assert.equal(outcome.code, "invalid_input", outcome.message);
    assert.equal(outcome.retryable, false);
    assert.equal(outcome.calls, 1);
    assert.match(outcome.message, /must resolve to the summary as a string; it resolved to a value of type object/);
  });
});

test("a generate() that rejects saying retryable: false or an HTTP status is taken at its word (#55)", async () => {
  await inOneTab(async (page) => {
    const outcome = await page.evaluate(async () => {
      /** One compaction whose provider rejects with `fields` on its Error, then answers well. */
      const rejecting = async (name, fields) => {
        let calls = 0;
        const compactor = window.customOver(`${name}_`, async (prompt) => {
          calls += 1;
          if (calls === 1) throw Object.assign(new Error("quota exceeded for project my-proj"), fields);
          return `### 🎯 OBJECTIVE ACHIEVED\n- ${prompt.length} characters read, summarised.\n### 📊 KEY DISCOVERIES\n- Nothing new.\n### ✅ SUCCESSFUL SOLUTIONS\n- None needed.`;
        });
        const err = await compactor.compact().then(() => null, (e) => e);
        return { code: err?.code ?? "ok", retryable: err?.retryable, status: err?.status, calls };
      };
      return {
        noRetry: await rejecting("no_retry", { retryable: false }),
        forbidden: await rejecting("forbidden", { status: 403 }),
        limited: await rejecting("limited", { status: 429, retryAfterMs: 5 }),
        plain: await rejecting("plain", {}),
      };
    });
    assert.deepEqual(outcome.noRetry, { code: "llm_network", retryable: false, status: undefined, calls: 1 });
    assert.deepEqual(outcome.forbidden, { code: "llm_http", retryable: false, status: 403, calls: 1 });
    // Retried as the API's own 429, and the retry answered.
    assert.equal(outcome.limited.calls, 2);
    assert.equal(outcome.plain.calls, 2);
  });
});

test("archives read back from IndexedDB are decompressed a few at a time, not hundreds in one task (#66)", async () => {
  await inOneTab(async (page) => {
    const result = await page.evaluate(async () => {
      const logs = new window.pkg.LogStore({ prefix: "many_" });
      const compactor = new window.pkg.Compactor(logs, { contextWindowTokens: 131072, maxArchives: 80, clearing: { keepIterations: 1 }, provider: { type: "offline" } });
      const rows = (n) => Array.from({ length: 30 }, (_, r) => `| row_${n}_${r} | ${(n * 31 + r) % 997} | ok |`).join("\n");
      for (let n = 1; n <= 120 && (await compactor.archives()).length < 40; n++) {
        logs.startIteration();
        logs.appendReasoning(`Iteration ${n}: read page ${n}.`);
        logs.appendExecution({ success: true, code: `page(${n})`, result: { rows: rows(n), total: `T${n}` } });
        logs.finishIteration();
        await compactor.compact({ rung: "clear" }).catch((err) => {
          if (n > 2) throw err;
        });
      }
      // Every decompression the next page load starts, counted while it runs.
      const Native = globalThis.DecompressionStream;
      let running = 0;
      let most = 0;
      globalThis.DecompressionStream = class extends Native {
        constructor(format) {
          super(format);
          running++;
          most = Math.max(most, running);
          const reader = this.readable;
          Object.defineProperty(this, "readable", {
            get: () => reader.pipeThrough(new TransformStream({ flush: () => void running-- })),
          });
        }
      };
      try {
        // A new page's objects over the same storage: every archive text is read back.
        const fresh = new window.pkg.Compactor(new window.pkg.LogStore({ prefix: "many_" }), { contextWindowTokens: 131072, provider: { type: "offline" } });
        const answer = await fresh.recallTool({ maxTokens: 2000 }).call({ query: "ok", from: 1, to: 200 });
        return { archives: (await fresh.archives()).length, most, answer: answer.slice(0, 40) };
      } finally {
        globalThis.DecompressionStream = Native;
      }
    });
    assert.ok(result.archives >= 40, JSON.stringify(result));
    assert.match(result.answer, /^\[iteration 1 /);
    assert.ok(result.most >= 2 && result.most <= 16, `${result.most} decompressions at once`);
  });
});
