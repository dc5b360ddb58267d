// Arguments of the wrong type, and entries read back and appended again, in a real Chromium:
// every mistake is a ContextCompactorError with a code, and the module keeps working.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, openPage } from "./browser.mjs";

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

/** The demo page with `window.said(call)`: what `call` (sync or async) threw, as
 * `code: message`, or "no error". */
async function pageThatSays() {
  const opened = await openPage(env.browser, env.baseUrl);
  await opened.page.evaluate(() => {
    window.said = async (call) => {
      try {
        await call();
        return "no error";
      } catch (err) {
        return `${err.code}: ${err.message}`;
      }
    };
  });
  return opened;
}

test("arguments of the wrong type are invalid_input errors, and the module keeps working", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const outcome = await page.evaluate(async () => {
    const { LogStore, Compactor, ContextCompactorError } = await import("/pkg/context_compactor.js");
    localStorage.clear();
    const logs = new LogStore();
    const compactor = new Compactor(logs, { provider: { type: "offline" } });
    const caught = (call) => {
      try {
        call();
        return "no error";
      } catch (err) {
        // The exported class: instanceof and the guard agree.
        if (!(err instanceof ContextCompactorError) || !ContextCompactorError.isInstance(err)) return `not a ContextCompactorError: ${err}`;
        return `${err.name}/${err.code}`;
      }
    };
    const results = {
      appendNumber: caught(() => logs.appendReasoning(42)),
      appendUndefined: caught(() => logs.appendReasoning(undefined)),
      recentNegative: caught(() => logs.recentReasoning(-1)),
      recentText: caught(() => logs.recentReasoning("3")),
      compactorOfObject: caught(() => new Compactor({}, { provider: { type: "offline" } })),
      compactorOfNull: caught(() => new Compactor(null, { provider: { type: "offline" } })),
      compactorOfFreed: caught(() => {
        const freed = new LogStore();
        freed.free();
        return new Compactor(freed, { provider: { type: "offline" } });
      }),
    };
    let rollback;
    try {
      rollback = compactor.rollback(5);
    } catch (err) {
      results.rollbackNumber = `threw ${err.name}`;
    }
    if (rollback) results.rollbackNumber = await rollback.then(() => "resolved", (err) => `rejected ${err.name}/${err.code}`);
    // The archive methods answer with Promises: a wrong argument rejects, it does not throw.
    const rejected = async (call) => {
      let promise;
      try {
        promise = call();
      } catch (err) {
        return `threw ${err.name}`;
      }
      return promise.then(() => "resolved", (err) => `rejected ${err.name}/${err.code}`);
    };
    results.readObject = await rejected(() => compactor.readArchive({}));
    results.deleteNull = await rejected(() => compactor.deleteArchive(null));
    results.recallText = await rejected(() => compactor.recall("3"));
    logs.appendReasoning("still working");
    results.after = logs.reasoningLog();
    return results;
  });
  assert.deepEqual(outcome, {
    appendNumber: "ContextCompactorError/invalid_input",
    appendUndefined: "ContextCompactorError/invalid_input",
    recentNegative: "ContextCompactorError/invalid_input",
    recentText: "ContextCompactorError/invalid_input",
    compactorOfObject: "ContextCompactorError/invalid_input",
    compactorOfNull: "ContextCompactorError/invalid_input",
    compactorOfFreed: "ContextCompactorError/invalid_input",
    rollbackNumber: "rejected ContextCompactorError/invalid_input",
    readObject: "rejected ContextCompactorError/invalid_input",
    deleteNull: "rejected ContextCompactorError/invalid_input",
    recallText: "rejected ContextCompactorError/invalid_input",
    after: ["still working"],
  });
  assert.deepEqual(errors, []);
  await page.close();
});

test("an entry read back and appended again is stored with one id, and the log stays readable", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const outcome = await page.evaluate(async () => {
    const { LogStore } = await import("/pkg/context_compactor.js");
    localStorage.clear();
    const logs = new LogStore();
    logs.startIteration();
    const first = logs.appendExecution({ success: true, code: "1 + 1", result: 2 ** 70, metadata: { task: "sum" } });
    const tool = logs.appendToolActivity({ type: "vfs", action: "write", status: "success" });
    const again = logs.appendExecution(logs.executionLog()[0]);
    const toolAgain = logs.appendToolActivity(logs.toolActivityLog()[0]);
    const stored = localStorage.getItem("gdrs_execution_log");
    const entries = JSON.parse(stored);
    return {
      idKeys: (stored.match(/"id":/g) ?? []).length,
      toolIdKeys: (localStorage.getItem("gdrs_tool_activity_log").match(/"id":/g) ?? []).length,
      distinctIds: new Set(entries.map((e) => e.id)).size,
      newId: again.id !== first.id && toolAgain.id !== tool.id,
      bigFloat: stored.includes("1.1805916207174113e+21"),
      readable: logs.executionLog().length,
      task: entries[1].metadata.task,
    };
  });
  assert.deepEqual(outcome, { idKeys: 2, toolIdKeys: 2, distinctIds: 2, newId: true, bigFloat: true, readable: 2, task: "sum" });
  assert.deepEqual(errors, []);
  await page.close();
});

test("an archive cannot be deleted while its compaction runs (from a compaction_archived listener)", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const outcome = await page.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const { simulateGdrsSession } = await import("/simulate.js");
    localStorage.clear();
    simulateGdrsSession(localStorage, { seed: 4, iterations: 8 });
    const compactor = new Compactor(new LogStore(), { provider: { type: "offline" }, contextWindowTokens: 6000 });
    let refused = null;
    compactor.events.addEventListener("compaction_archived", (e) => {
      compactor.deleteArchive(e.detail.archiveKey).then(
        () => (refused = "deleted"),
        (err) => (refused = `${err.name}/${err.code}`),
      );
    });
    const result = await compactor.compact();
    return { refused, archiveKept: (await compactor.archives()).some((a) => a.key === result.archiveKey) };
  });
  assert.deepEqual(outcome, { refused: "ContextCompactorError/busy", archiveKept: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test("a throwing options getter is invalid_input; a thrown object's contents never reach a message", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const outcome = await page.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const { simulateGdrsSession } = await import("/simulate.js");
    localStorage.clear();
    simulateGdrsSession(localStorage, { seed: 2, iterations: 8 });
    const logs = new LogStore();
    let getter;
    try {
      new Compactor(logs, {
        provider: { type: "offline" },
        get contextWindowTokens() {
          throw new Error("getter failed");
        },
      });
      getter = "no error";
    } catch (err) {
      getter = `${err.name}/${err.code}/${err.message}`;
    }
    const generate = async () => {
      throw { secret: "sk-live-123", status: 500 };
    };
    const compactor = new Compactor(logs, { provider: { type: "custom", generate }, contextWindowTokens: 6000, maxRetries: 0 });
    const events = [];
    compactor.events.addEventListener("compaction_error", (e) => events.push(e.detail.message));
    const failure = await compactor.compact().then(() => "resolved", (err) => `${err.name}/${err.code}/${err.message}`);
    return { getter, failure, events };
  });
  assert.match(outcome.getter, /^ContextCompactorError\/invalid_input\/CompactorOptions: Error: getter failed/);
  assert.match(outcome.failure, /^ContextCompactorError\/llm_/);
  assert.ok(!outcome.failure.includes("sk-live-123") && !outcome.events.join().includes("sk-live-123"), outcome.failure);
  assert.match(outcome.failure, /a thrown object value that is not an Error/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("listeners of every event that re-enter the API during a compaction never break the module", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const outcome = await page.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const { simulateGdrsSession } = await import("/simulate.js");
    localStorage.clear();
    simulateGdrsSession(localStorage, { seed: 3, iterations: 8 });
    const logs = new LogStore();
    let calls = 0;
    const generate = async (prompt) => {
      calls += 1;
      // The first answer misses sections, so the retry events fire too.
      if (calls === 1) return "### 🎯 OBJECTIVE ACHIEVED\n- only this section, long enough to pass the length rule of one hundred characters.";
      // The second keeps every fact the prompt lists, as a model that follows it does.
      const facts = (prompt.split("## FACTS THE SUMMARY MUST KEEP\n")[1] ?? "").split("\n## ")[0].split("\n").filter((l) => l.startsWith("- "));
      return ["OBJECTIVE ACHIEVED", "KEY DISCOVERIES", "SUCCESSFUL SOLUTIONS"].map((t) => `### ${t}\n- ${prompt.length} characters were summarised here.`).concat(facts).join("\n");
    };
    const compactor = new Compactor(logs, { provider: { type: "custom", generate }, contextWindowTokens: 6000, retryDelayMs: 1 });
    const seen = new Map();
    const reenter = (type) => {
      const results = [];
      const attempt = (what, call) => {
        try {
          const value = call();
          if (value && typeof value.then === "function") {
            value.then(() => {}, () => {});
            results.push(`${what}:promise`);
          } else results.push(`${what}:ok`);
        } catch (err) {
          results.push(`${what}:${err.code ?? err.name}`);
        }
      };
      attempt("append", () => logs.appendReasoning(`written by a ${type} listener`));
      attempt("plan", () => compactor.plan());
      attempt("archives", () => compactor.archives());
      attempt("canCompact", () => compactor.canCompact());
      attempt("compact", () => compactor.compact());
      attempt("read", () => logs.executionLog());
      seen.set(type, results);
    };
    for (const type of ["compaction_start", "compaction_phase_change", "compaction_progress", "compaction_retry", "compaction_archived", "compaction_complete", "compaction_error"]) {
      compactor.events.addEventListener(type, () => reenter(type));
    }
    const result = await compactor.compact();
    // The module still works afterwards: a read, an append, a rollback.
    logs.appendReasoning("after the compaction");
    const after = logs.reasoningLog().length;
    await compactor.rollback(result.archiveKey);
    return {
      events: [...seen.keys()].sort(),
      appendedByListeners: logs.reasoningLog().filter((t) => t.startsWith("written by a ")).length > 0,
      compactFromListener: seen.get("compaction_progress").find((r) => r.startsWith("compact")),
      after: after > 0,
      attempts: result.attempts,
    };
  });
  assert.deepEqual(outcome, {
    events: ["compaction_archived", "compaction_complete", "compaction_phase_change", "compaction_progress", "compaction_retry", "compaction_start"],
    appendedByListeners: true,
    compactFromListener: "compact:promise",
    after: true,
    attempts: 2,
  });
  assert.deepEqual(errors, []);
  await page.close();
});

test("option mistakes name the option in JavaScript's terms, and the closest known one", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const messages = await page.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const logs = new LogStore();
    const message = (call) => {
      try {
        call();
        return "no error";
      } catch (err) {
        return `${err.code}: ${err.message}`;
      }
    };
    return {
      unknown: message(() => new Compactor(logs, { provider: { type: "offline" }, contextWindow: 8000 })),
      provider: message(() => new Compactor(logs, { provider: { type: "gemni" } })),
      type: message(() => new Compactor(logs, { provider: { type: "offline" }, timeoutMs: "30" })),
      logStore: message(() => new LogStore({ prefx: "app_" })),
      compact: await new Compactor(logs, { provider: { type: "offline" } })
        .compact({ triger: "auto" })
        .then(() => "resolved", (err) => `${err.code}: ${err.message}`)
        .catch((err) => `${err.code}: ${err.message}`),
    };
  });
  assert.match(messages.unknown, /^invalid_input: CompactorOptions: "contextWindow" is not an option; did you mean "contextWindowTokens"\?/);
  assert.equal(messages.provider, 'invalid_input: CompactorOptions.provider.type: "gemni" is not one of "offline", "custom", "gemini"');
  assert.match(messages.type, /^invalid_input: CompactorOptions\.timeoutMs: got the text "30", expected a whole number/);
  assert.match(messages.logStore, /did you mean "prefix"/);
  assert.match(messages.compact, /did you mean "trigger"/);
  for (const text of Object.values(messages)) assert.doesNotMatch(text, /Some\(|u32|usize|f64/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a NaN or infinite option is refused naming it, not read as the default (#49)", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const messages = await page.evaluate(async () => {
    const { LogStore, Compactor, Archives } = await import("/pkg/context_compactor.js");
    localStorage.clear();
    const logs = new LogStore();
    const thrown = (call) => {
      try {
        call();
        return "no error";
      } catch (err) {
        return `${err.code}: ${err.message}`;
      }
    };
    const compactor = new Compactor(logs, { provider: { type: "offline" } });
    return [
      thrown(() => new Compactor(logs, { provider: { type: "offline" }, contextWindowTokens: NaN })),
      thrown(() => new Compactor(logs, { provider: { type: "offline" }, recommendedUsage: Infinity })),
      thrown(() => new Archives(logs, { maxArchives: -Infinity })),
      // The recall tool answers its caller with a sentence that names the argument.
      await compactor.recallTool().call({ from: NaN }),
      // Finite numbers are still read as before.
      thrown(() => compactor.plan() && new Compactor(logs, { provider: { type: "offline" }, contextWindowTokens: 64000 })),
    ];
  });
  assert.match(messages[0], /^invalid_input: .*CompactorOptions.*contextWindowTokens: NaN is not a finite number/);
  assert.match(messages[1], /^invalid_input: .*CompactorOptions.*recommendedUsage: Infinity is not a finite number/);
  assert.match(messages[2], /^invalid_input: .*ArchivesOptions.*maxArchives: -Infinity is not a finite number/);
  assert.match(messages[3], /^The arguments could not be read \(.*from: NaN is not a finite number\)/);
  assert.equal(messages[4], "no error");
  assert.deepEqual(errors, []);
  await page.close();
});

test("every option object and number argument is checked alike: unknown keys with the closest one, values with their range (#55)", async () => {
  const { page, errors } = await pageThatSays();
  const messages = await page.evaluate(async () => {
    const { LogStore, Compactor, Archives } = await import("/pkg/context_compactor.js");
    const { said } = window;
    localStorage.clear();
    const logs = new LogStore();
    const compactor = new Compactor(logs, { provider: { type: "offline" } });
    const archives = new Archives(logs);
    return {
      rehydrateKey: await said(() => compactor.rehydrate("iteration 2", { budget: 10 })),
      rehydrateZero: await said(() => compactor.rehydrate("iteration 2", { budgetTokens: 0 })),
      rehydrateText: await said(() => compactor.rehydrate("iteration 2", { budgetTokens: "10" })),
      toolKey: await said(() => compactor.recallTool({ maxToken: 10 })),
      toolNegative: await said(() => archives.recallTool({ maxTokens: -1 })),
      toolFraction: await said(() => compactor.recallTool({ maxTokens: 2.5 })),
      compactKey: await said(() => compactor.compact({ trigger: "auto", rugn: "clear" })),
      // Read as no options before (#66): the compaction ran with the defaults.
      compactSymbol: await said(() => compactor.compact(Symbol("auto"))),
      compactBigInt: await said(() => compactor.compact(10n)),
      compactNumber: await said(() => compactor.compact(5)),
      recallZero: await said(() => compactor.recall(0)),
      recallNegative: await said(() => compactor.recall(-3)),
      // No iteration number is that large (#66: it was clamped to 4294967295 and found nothing).
      recallHuge: await said(() => compactor.recall(1e308)),
      recallText: await said(() => archives.recall("3")),
      recentNegative: await said(() => logs.recentReasoning(-1)),
      // The README: a freed object throws on any further use.
      freed: await said(() => {
        const freed = new Compactor(logs, { provider: { type: "offline" } });
        freed.free();
        freed.plan();
      }).then((text) => (text === "no error" ? text : "threw")),
      fine: await said(async () => {
        await compactor.rehydrate("iteration 2", { budgetTokens: 10 });
        compactor.recallTool({ maxTokens: 10 });
        await compactor.recall(1);
      }),
    };
  });
  assert.deepEqual(messages, {
    rehydrateKey: 'invalid_input: rehydrate(text, options): "budget" is not an option; did you mean "budgetTokens"? (options: budgetTokens)',
    rehydrateZero: "invalid_input: rehydrate(text, options).budgetTokens: got the number `0`, expected a whole number, at least 1",
    rehydrateText: 'invalid_input: rehydrate(text, options).budgetTokens: got the text "10", expected a number',
    toolKey: 'invalid_input: recallTool(options): "maxToken" is not an option; did you mean "maxTokens"? (options: maxTokens)',
    toolNegative: "invalid_input: Archives.recallTool(options).maxTokens: got the number `-1`, expected a whole number, at least 1",
    toolFraction: "invalid_input: recallTool(options).maxTokens: got the number `2.5`, expected a whole number, at least 1",
    compactKey: 'invalid_input: compact(options): "rugn" is not an option; did you mean "rung"? (options: trigger, rung, background)',
    compactSymbol: "invalid_input: compact(options): must be an object, not symbol",
    compactBigInt: "invalid_input: compact(options): must be an object, not bigint",
    compactNumber: "invalid_input: compact(options): must be an object, not number",
    recallZero: "invalid_input: recall(iteration): got the number `0`, expected a whole number, between 1 and 4294967295",
    recallNegative: "invalid_input: recall(iteration): got the number `-3`, expected a whole number, between 1 and 4294967295",
    recallHuge: "invalid_input: recall(iteration): got the number `1e+308`, expected a whole number, between 1 and 4294967295",
    recallText: 'invalid_input: recall(iteration): got the text "3", expected a number',
    recentNegative: "invalid_input: recentReasoning(k): got the number `-1`, expected a whole number, at least 0",
    freed: "threw",
    fine: "no error",
  });
  assert.deepEqual(errors, []);
  await page.close();
});

test("a nested option that JSON cannot carry, clearing: true, a prompt size given as text, a fraction or out of range, and a count past the safe integers are invalid_input (#66, #80)", async () => {
  const { page, errors } = await pageThatSays();
  const messages = await page.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const { said } = window;
    localStorage.clear();
    const logs = new LogStore();
    const make = (options) => () => new Compactor(logs, { provider: { type: "offline" }, ...options });
    const compactor = new Compactor(logs, { provider: { type: "offline" } });
    return {
      keepNaN: await said(make({ clearing: { keepIterations: NaN } })),
      aboveInfinity: await said(make({ clearing: { aboveTokens: Infinity } })),
      clearingTrue: await said(make({ clearing: true })),
      reportText: await said(() => compactor.reportPromptTokens("3")),
      // Accepted without a word before (#80): a fraction, a size no window has, a count that is
      // not the number the app wrote (2 ** 53 + 1 reads as 2 ** 53).
      reportFraction: await said(() => compactor.reportPromptTokens(2.5)),
      reportHuge: await said(() => compactor.reportPromptTokens(1e308)),
      recentUnsafe: await said(() => logs.recentReasoning(2 ** 53 + 1)),
      fine: await said(() => {
        make({ clearing: { keepIterations: 1 } })();
        compactor.reportPromptTokens(3);
        logs.recentReasoning(2 ** 53 - 1);
      }),
    };
  });
  // Each was accepted before: NaN and Infinity read as absent, true as the defaults, "3" as 3.
  assert.match(messages.keepNaN, /^invalid_input: .*CompactorOptions.*clearing\.keepIterations: NaN is not a finite number/);
  assert.match(messages.aboveInfinity, /^invalid_input: .*CompactorOptions.*clearing\.aboveTokens: Infinity is not a finite number/);
  assert.match(messages.clearingTrue, /^invalid_input: .*clearing.*false or an object/);
  assert.equal(messages.reportText, 'invalid_input: reportPromptTokens(tokens): got the text "3", expected a number');
  assert.equal(messages.reportFraction, "invalid_input: reportPromptTokens(tokens): got the number `2.5`, expected a whole number, between 0 and 1000000000");
  assert.equal(messages.reportHuge, "invalid_input: reportPromptTokens(tokens): got the number `1e+308`, expected a whole number, between 0 and 1000000000");
  assert.equal(messages.recentUnsafe, "invalid_input: recentReasoning(k): got the number `9007199254740992`, expected a safe integer (at most Number.MAX_SAFE_INTEGER)");
  assert.equal(messages.fine, "no error");
  assert.deepEqual(errors, []);
  await page.close();
});
