// The coverage ledger through the package as an app uses it, in Chromium over real
// localStorage and the demo's own simulator: pins kept by three chained compactions, a custom
// provider that loses facts retried then refused by name, recall of the originals.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage, removeDatabaseArchive } from "./browser.mjs";

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

test("pins survive three chained compactions; recall gives back iteration 2 as it was stored", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const outcome = await page.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const { simulateIteration } = await import("/simulate.js");
    const logs = new LogStore({ prefix: "cov_" });
    const pinned = logs.pin("Amounts are in euros; the customer's ledger is LGR-2026-0042.");
    const compactor = new Compactor(logs, { provider: { type: "offline" }, contextWindowTokens: 4000 });
    const grow = (count, seed) => {
      for (let i = 0; i < count; i++) {
        const n = logs.startIteration();
        simulateIteration(logs, n, seed);
        logs.finishIteration();
      }
    };
    const storedOf = (n) => ({
      executionLog: localStorage.getItem("cov_execution_log") && JSON.parse(localStorage.getItem("cov_execution_log")).filter((e) => e.iteration === n).map((e) => JSON.stringify(e)),
      toolActivityLog: JSON.parse(localStorage.getItem("cov_tool_activity_log")).filter((e) => e.iteration === n).map((e) => JSON.stringify(e)),
    });
    grow(6, 3);
    const iteration2 = storedOf(2);
    const rounds = [];
    for (let round = 1; round <= 3; round++) {
      if (round > 1) grow(5, round);
      const plan = compactor.plan();
      const checking = [];
      const listener = (e) => e.detail.message.startsWith("Checking") && checking.push(e.detail.message);
      compactor.events.addEventListener("compaction_progress", listener);
      const result = await compactor.compact();
      compactor.events.removeEventListener("compaction_progress", listener);
      rounds.push({
        planned: plan.ledger,
        coverage: result.coverage,
        checking,
        summaryHasPin: result.summary.includes("LGR-2026-0042"),
        liveHasPin: logs.reasoningLog()[0].includes("LGR-2026-0042"),
        namesArchive: logs.reasoningLog()[0].split("\n")[1].includes(result.archiveKey),
      });
    }
    const recalled = await compactor.recall(2);
    const pins = logs.pins();
    logs.unpin(pinned);
    return {
      rounds,
      pins,
      pinnedId: pinned,
      afterUnpin: compactor.plan().ledger.some((fact) => fact.includes("LGR-2026-0042")),
      recalled: { executionLog: recalled.executionLog.map((e) => JSON.stringify(e)), toolActivityLog: recalled.toolActivityLog.map((e) => JSON.stringify(e)) },
      recalledReasoning: recalled.reasoningLog,
      iteration2,
      live: await compactor.recall(logs.currentIteration),
    };
  });
  for (const [i, round] of outcome.rounds.entries()) {
    assert.ok(round.summaryHasPin && round.liveHasPin, `round ${i + 1} keeps the pin`);
    assert.ok(round.namesArchive, `round ${i + 1}: the summary names its archive`);
    assert.deepEqual(round.coverage.required, round.planned, "plan() showed the ledger");
    assert.deepEqual(round.coverage.kept, round.planned);
    assert.deepEqual(round.coverage.missing, []);
    assert.deepEqual(round.checking, [`Checking the sections and ${round.planned.length} facts`]);
  }
  assert.ok(outcome.rounds[2].planned.length > outcome.rounds[0].planned.length - 1, "facts carried forward");
  assert.deepEqual(outcome.pins, [{ id: outcome.pinnedId, text: "Amounts are in euros; the customer's ledger is LGR-2026-0042." }]);
  assert.equal(outcome.afterUnpin, false);
  assert.deepEqual(outcome.recalled, outcome.iteration2, "iteration 2 as it was stored, after three compactions");
  assert.equal(outcome.recalledReasoning[0], "=== ITERATION 2 ===");
  assert.equal(outcome.live, null, "the live iteration is not archived");
  assert.deepEqual(errors, []);
  await page.close();
});

test("with missingFacts \"fail\", a custom provider that loses a fact is retried by name, then refused with the logs unchanged", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const outcome = await page.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const { simulateIteration } = await import("/simulate.js");
    const logs = new LogStore({ prefix: "lossy_" });
    for (let i = 0; i < 6; i++) {
      const n = logs.startIteration();
      simulateIteration(logs, n, 11);
      logs.finishIteration();
    }
    const prompts = [];
    const sections = "### 🎯 OBJECTIVE ACHIEVED\n- Totals by region were computed for every dataset.\n### 📊 KEY DISCOVERIES\n- North leads.\n### ✅ SUCCESSFUL SOLUTIONS\n- A plain loop instead of groupBy.";
    const compactor = new Compactor(logs, {
      provider: { type: "custom", generate: async (prompt) => (prompts.push(prompt), sections) },
      contextWindowTokens: 4000,
      retryDelayMs: 0,
      missingFacts: "fail",
    });
    const snapshot = () => Object.keys(localStorage).filter((k) => k.startsWith("lossy_") && !k.endsWith("metrics") && !k.endsWith("store_version")).sort().map((k) => [k, localStorage.getItem(k)]);
    const before = snapshot();
    const ledger = compactor.plan().ledger;
    let error;
    try {
      await compactor.compact();
    } catch (err) {
      error = { code: err.code, message: err.message };
    }
    return { ledger, error, calls: prompts.length, retry: prompts[1] ?? "", unchanged: JSON.stringify(snapshot()) === JSON.stringify(before), first: prompts[0] ?? "" };
  });
  assert.equal(outcome.error?.code, "invalid_summary");
  assert.equal(outcome.calls, 2);
  assert.ok(outcome.ledger.length >= 3, outcome.ledger.join("\n"));
  for (const fact of outcome.ledger) {
    assert.ok(outcome.first.includes(`- ${fact}`), `the prompt lists ${fact}`);
    assert.ok(outcome.retry.includes(`- Missing required fact: ${fact}`), `the retry names ${fact}`);
    assert.ok(outcome.error.message.includes(fact), `the error names ${fact}`);
  }
  assert.ok(outcome.unchanged, "the logs are unchanged");
  assert.deepEqual(errors, []);
  await page.close();
});

test("by default a custom provider that loses every fact gets them added in the ledger's words, in one call", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const outcome = await page.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const { simulateIteration } = await import("/simulate.js");
    const logs = new LogStore({ prefix: "repair_" });
    for (let i = 0; i < 6; i++) {
      const n = logs.startIteration();
      simulateIteration(logs, n, 11);
      logs.finishIteration();
    }
    let calls = 0;
    const sections = "## 🎯 Objective Achieved\n- Totals by region were computed for every dataset.\n## 📊 Key Discoveries\n- North leads.\n## ✅ Successful Solutions\n- A plain loop instead of groupBy.";
    const compactor = new Compactor(logs, {
      provider: { type: "custom", generate: async () => (calls++, sections) },
      contextWindowTokens: 4000,
      retryDelayMs: 0,
    });
    const ledger = compactor.plan().ledger;
    const result = await compactor.compact();
    return { ledger, calls, coverage: result.coverage, summary: result.summary, live: logs.reasoningLog()[0] };
  });
  assert.equal(outcome.calls, 1);
  assert.ok(outcome.coverage.repaired.length >= 3, outcome.coverage.repaired.join("\n"));
  assert.deepEqual([...outcome.coverage.kept, ...outcome.coverage.repaired].sort(), [...outcome.ledger].sort());
  for (const fact of outcome.coverage.repaired) assert.ok(outcome.summary.includes(`- ${fact.split(/\s+/).join(" ")}`), `${fact} added`);
  assert.ok(outcome.summary.startsWith("### 🎯 OBJECTIVE ACHIEVED\n"), outcome.summary);
  assert.ok(outcome.live.includes(outcome.summary));
  assert.deepEqual(errors, []);
  await page.close();
});

test("an archive another script removed is reported: archives_lost on the next page load, archive_missing from recall, readArchive and rollback; the demo says so", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const key = await page.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const { simulateIteration } = await import("/simulate.js");
    localStorage.clear();
    const logs = new LogStore();
    for (let i = 0; i < 6; i++) {
      const n = logs.startIteration();
      simulateIteration(logs, n, 5);
      logs.finishIteration();
    }
    const result = await new Compactor(logs, { provider: { type: "offline" }, contextWindowTokens: 4000 }).compact();
    return result.archiveKey;
  });
  // The browser's eviction (or other code) removes the archive from IndexedDB.
  await page.evaluate(removeDatabaseArchive, key);
  const outcome = await page.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const compactor = new Compactor(new LogStore(), { provider: { type: "offline" } });
    const lost = await new Promise((resolve) => {
      compactor.events.addEventListener("archives_lost", (e) => resolve(e.detail.keys));
      setTimeout(() => resolve("no event"), 2000);
    });
    const caught = async (call) => {
      try {
        await call();
        return "no error";
      } catch (err) {
        return { code: err.code, key: err.key, name: err.name };
      }
    };
    return {
      lost,
      recall: await caught(() => compactor.recall(2)),
      read: await caught(() => compactor.readArchive(lost[0])),
      rollback: await caught(() => compactor.rollback(lost[0])),
      live: await compactor.recall(new LogStore().currentIteration),
    };
  });
  assert.deepEqual(outcome.lost, [key]);
  for (const what of ["recall", "read", "rollback"]) {
    assert.deepEqual(outcome[what], { code: "archive_missing", key, name: "ContextCompactorError" }, what);
  }
  assert.equal(outcome.live, null, "the live iteration was never compacted");
  // The demo, loaded over the same storage, tells the person.
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  await page.waitForFunction(() => !document.getElementById("message").hidden);
  assert.match(await page.textContent("#message"), new RegExp(`An archive is gone .*${key}`));
  assert.deepEqual(errors, []);
  await page.close();
});

test("Archives needs no provider: list, read, recall, rollback, delete and purge as Promises; estimate and persist report the storage", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const outcome = await page.evaluate(async () => {
    const { LogStore, Compactor, Archives } = await import("/pkg/context_compactor.js");
    const { simulateIteration } = await import("/simulate.js");
    localStorage.clear();
    const logs = new LogStore();
    for (let i = 0; i < 6; i++) {
      const n = logs.startIteration();
      simulateIteration(logs, n, 9);
      logs.finishIteration();
    }
    const before = logs.reasoningLog();
    const compactor = new Compactor(logs, { provider: { type: "offline" }, contextWindowTokens: 4000 });
    const first = await compactor.compact();
    const archives = new Archives(logs);
    const listed = await archives.list();
    const read = await archives.read(first.archiveKey);
    const recalled = await archives.recall(2);
    const estimate = await archives.estimate();
    const persisted = await archives.persist();
    const wrongType = await archives.read(42).then(() => "resolved", (err) => err.code);
    const notAKey = await archives.delete("app_settings").then(() => "resolved", (err) => err.code);
    await archives.rollback(first.archiveKey);
    const restored = logs.reasoningLog();
    const afterRollback = await archives.list();
    const second = await compactor.compact();
    await archives.delete(second.archiveKey);
    const purged = await archives.purgeExpired();
    const prefixed = await new Archives(logs, { archivePrefix: "elsewhere_" }).list();
    const badOption = (() => {
      try {
        new Archives(logs, { maxArchive: 3 });
        return "accepted";
      } catch (err) {
        return `${err.code}: ${err.message}`;
      }
    })();
    return {
      listed: listed.map((a) => a.key),
      first: first.archiveKey,
      readIterations: read.iterations,
      recalledFirst: recalled.reasoningLog[0],
      estimate,
      persisted: typeof persisted,
      wrongType,
      notAKey,
      restoredEqual: JSON.stringify(restored) === JSON.stringify(before),
      afterRollback: afterRollback.length,
      afterDelete: (await archives.list()).length,
      purged,
      prefixed: prefixed.length,
      badOption,
    };
  });
  assert.deepEqual(outcome.listed, [outcome.first]);
  assert.deepEqual(outcome.readIterations, [1, 2, 3, 4, 5]);
  assert.equal(outcome.recalledFirst, "=== ITERATION 2 ===");
  assert.equal(typeof outcome.estimate.usage, "number");
  assert.ok(outcome.estimate.quota > 0, "Chromium reports a quota");
  assert.equal(typeof outcome.estimate.persisted, "boolean");
  assert.ok(outcome.estimate.localStorageFree > 9_000_000 && outcome.estimate.localStorageFree < 10_485_760, `${outcome.estimate.localStorageFree}`);
  assert.equal(outcome.persisted, "boolean");
  assert.equal(outcome.wrongType, "invalid_input");
  assert.equal(outcome.notAKey, "not_allowed");
  assert.ok(outcome.restoredEqual, "rollback through Archives restores the log");
  assert.equal(outcome.afterRollback, 0);
  assert.equal(outcome.afterDelete, 0);
  assert.equal(outcome.purged, 0);
  assert.equal(outcome.prefixed, 0);
  assert.match(outcome.badOption, /^invalid_input: .*maxArchive/);
  assert.deepEqual(errors, []);
  await page.close();
});
