// The Compact Context flow in a real Chromium with the offline provider.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { databaseArchives, iterate, launch, openPage, outputDir, setWindow, useGemini, waitForDatabaseArchive } from "./browser.mjs";

let env;
before(async () => {
  env = await launch({ withMock: true });
});
after(async () => {
  await env?.close();
});

const count = async (page, id) => Number(await page.textContent(id));

test("six iterations compacted offline: success panel, summary in the log, archive, rollback", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await iterate(page, 6);
  const reasoningBefore = await page.evaluate(() => localStorage.getItem("gdrs_reasoning_log"));
  const executionBefore = await page.evaluate(() => localStorage.getItem("gdrs_execution_log"));
  await page.hover("#btn-compact");
  assert.match(await page.textContent("#compact-tooltip"), /Save ~\d+% context\nCompacts iterations 1–5: \d+ entries/);
  await page.screenshot({ path: join(outputDir, "compact-tooltip.png") });

  await page.click("#btn-compact");
  await page.waitForSelector("#success-view:not([hidden])");
  const result = await page.evaluate(() => window.lastCompactionResult);
  const fmt = (n) => Math.round(n).toLocaleString("en-US");
  assert.equal(await page.textContent("#tokens-before"), `${fmt(result.tokensBefore)} tokens`);
  assert.equal(await page.textContent("#tokens-after"), `${fmt(result.tokensAfter)} tokens`);
  assert.equal(await page.textContent("#fact-saved"), `${fmt(result.tokensSaved)} (${(result.reduction * 100).toFixed(0)}%)`);
  assert.equal(await page.textContent("#fact-iterations"), "1–5");
  assert.equal(await page.textContent("#fact-rung"), "Summarize");
  assert.equal(await page.textContent("#fact-archive"), result.archiveKey);
  assert.ok(result.reduction > 0.3, `reduction ${result.reduction}`);
  const checklist = await page.$$eval("#phase-list li:not([hidden])", (items) => items.map((i) => i.className));
  assert.ok(checklist.every((c) => c === "done"), checklist.join());
  await page.screenshot({ path: join(outputDir, "compact-success.png") });

  await page.click("#btn-close-success");
  assert.match(await page.textContent("#log-reasoning .entry.summary .entry-title"), /COMPACTED SUMMARY \(Iterations 1-5\)/);
  assert.equal(await page.locator("#log-reasoning .entry.summary h3").count(), 6);
  assert.equal(await page.locator("#archive-rows tr").count(), 1);
  // Listed by date first; the key is a detail under it.
  assert.equal(await page.textContent("#archive-rows tr .archive-key"), result.archiveKey);
  assert.match(await page.textContent("#archive-rows tr td:nth-child(2)"), /^1–5$/);
  // Where it is, and what is left of localStorage: the archive is not in it.
  await page.waitForFunction(() => document.getElementById("archive-storage").textContent.includes("1 archive"));
  assert.match(await page.textContent("#archive-storage"), /^1 archive \([\d.]+ KB\) kept in IndexedDB; [\d.]+ MB of localStorage left for the app's logs\.$/);
  assert.deepEqual(Object.keys(await page.evaluate(databaseArchives, "gdrs_archived_logs_")), [result.archiveKey]);
  await page.screenshot({ path: join(outputDir, "compact-logs.png"), fullPage: true });

  // Restoring throws the summary away: the page asks first, and a "no" changes nothing.
  page.once("dialog", (dialog) => dialog.dismiss());
  await page.click("#archive-rows button:has-text('Restore originals')");
  assert.equal(await page.locator("#archive-rows tr").count(), 1);
  page.once("dialog", (dialog) => dialog.accept());
  await page.click("#archive-rows button:has-text('Restore originals')");
  await page.waitForFunction(() => document.querySelectorAll("#archive-rows tr").length === 0);
  assert.equal(await page.evaluate(() => localStorage.getItem("gdrs_reasoning_log")), reasoningBefore);
  assert.equal(await page.evaluate(() => localStorage.getItem("gdrs_execution_log")), executionBefore);
  assert.match(await page.textContent("#message"), /Restored/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("the button is hidden under 3 iterations, disabled while an iteration runs or usage is low", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await page.evaluate(() => localStorage.clear());
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  await iterate(page, 2);
  assert.equal(await page.isHidden("#compact-host"), true);
  await iterate(page, 1);
  assert.equal(await page.isVisible("#btn-compact"), true);
  // Under 60% of a large window: visible but disabled, with the reason on hover.
  await page.click("#settings summary");
  await setWindow(page, 200000);
  assert.equal(await page.isDisabled("#btn-compact"), true);
  assert.match(await page.textContent("#compact-tooltip"), /compaction is worth it from 60%/);
  await setWindow(page, 2000);
  assert.equal(await page.isEnabled("#btn-compact"), true);
  // While an iteration runs.
  await page.click("#btn-continue");
  assert.equal(await page.isDisabled("#btn-compact"), true);
  assert.match(await page.textContent("#compact-tooltip"), /running iteration/);
  await page.waitForFunction(() => !document.getElementById("btn-continue").disabled);
  assert.equal(await page.isEnabled("#btn-compact"), true);
  await page.screenshot({ path: join(outputDir, "compact-button-states.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("markup in logs and summaries is shown as text and never runs", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await page.evaluate(() => localStorage.clear());
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  const payload = `<img src=x onerror="window.__pwned = 1">`;
  await page.click(".manual summary");
  await page.click("#btn-start");
  await page.fill("#reasoning-text", `Goal: ${payload} then count the rows of the table.`);
  await page.click("#form-reasoning button[type=submit]");
  await page.click("#btn-finish");
  await iterate(page, 4);
  await page.click("#settings summary");
  await setWindow(page, 3000);
  await page.click("#btn-compact");
  await page.waitForSelector("#success-view:not([hidden])");
  await page.click("#btn-close-success");
  const summary = await page.textContent("#log-reasoning .entry.summary");
  assert.ok(summary.includes(payload), "the payload is visible as text in the summary");
  assert.equal(await page.locator("#log-reasoning img").count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  // A summary in markdown (as a model writes it) is formatted from nodes: lists, code, never HTML.
  await page.evaluate(async (payload) => {
    const { LogStore } = await import("/pkg/context_compactor.js");
    const logs = new LogStore();
    const log = JSON.parse(localStorage.getItem("gdrs_reasoning_log"));
    log[0] = `=== COMPACTED SUMMARY (Iterations 1-4) ===\n### 🎯 OBJECTIVE ACHIEVED\n- Counted the rows with \`rows.length\` and **kept** ${payload}\n\`\`\`js\nreturn \`${payload}\`;\n\`\`\`\n=== END COMPACTED SUMMARY ===`;
    localStorage.setItem("gdrs_reasoning_log", JSON.stringify(log));
    logs.reasoningLog();
  }, payload);
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  const formatted = page.locator("#log-reasoning .entry.summary").first();
  assert.equal(await formatted.locator("ul.summary-list li").count(), 1);
  assert.equal(await formatted.locator("li code").first().textContent(), "rows.length");
  assert.equal(await formatted.locator("strong").first().textContent(), "kept");
  assert.match(await formatted.locator("pre.code").textContent(), /return `<img src=x onerror/);
  assert.equal(await page.locator("#log-reasoning img").count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a long session's compactions show the index lines and the facts that left the summary", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await page.click("#settings summary");
  // A 4,000-token window: summaries of at most 600 tokens, facts at most half of that.
  await setWindow(page, 4000);
  let result;
  for (let round = 0; round < 4 && !result?.coverage.demoted.length; round++) {
    await iterate(page, 8);
    await page.click("#btn-compact");
    await page.waitForSelector("#success-view:not([hidden])");
    result = await page.evaluate(() => window.lastCompactionResult);
    if (!result.coverage.demoted.length) await page.click("#btn-close-success");
  }
  assert.ok(result.coverage.demoted.length > 0, "facts left the summary within four compactions");
  await page.click("#demoted-summary");
  assert.match(await page.textContent("#demoted-summary"), new RegExp(`^${result.coverage.demoted.length} facts? left the summary · [1-9]\\d* index lines?$`));
  const shown = await page.$$eval("#index-lines li", (items) => items.map((i) => i.textContent));
  const inSummary = result.summary.split("\n").filter((l) => l.includes("; recall(")).map((l) => l.slice(2));
  assert.deepEqual(shown, inSummary);
  assert.match(shown.at(-1), /^Iterations? \d+(–\d+)? \(this summary's archive\): .+; recall\(\d+\.\.\d+\)$/);
  const listed = await page.$$eval("#demoted-list li", (items) => items.map((i) => i.textContent));
  assert.equal(listed.length, result.coverage.demoted.length);
  assert.ok(listed.every((text, i) => text === `recall(${result.coverage.demoted[i].iterations[0]}) ${result.coverage.demoted[i].fact}`), listed[0]);
  await page.screenshot({ path: join(outputDir, "compact-demoted.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("with Auto on, the loop runs and compacts by itself at 85%", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await page.click("#settings summary");
  await setWindow(page, 2600);
  await page.check("#toggle-auto");
  // The archive is in IndexedDB, the demo's default archive store.
  const key = await waitForDatabaseArchive(page, "gdrs_archived_logs_", 40_000);
  await page.click("#btn-pause");
  const archive = JSON.parse((await page.evaluate(databaseArchives, key))[key]);
  assert.equal(archive.trigger, "auto");
  assert.ok(archive.metadata.contextUsageBefore >= 0.85, `usage before ${archive.metadata.contextUsageBefore}`);
  // Once done, the automatic compaction's panel gives the logs back: a line says what happened.
  await page.waitForFunction(() => document.getElementById("message").textContent.startsWith("Compacted automatically"));
  assert.equal(await page.evaluate(() => document.getElementById("compaction-dialog").open), false, "the panel closed");
  assert.match(await page.textContent("#message"), /^Compacted automatically at \d+%: iterations 1–\d+, [\d,]+ → [\d,]+ tokens\./);
  assert.equal(await page.isChecked("#toggle-auto"), false);
  await page.screenshot({ path: join(outputDir, "auto-compaction.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("with Auto on, iterations go on while the model works: the summary replaces exactly what it summarised", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await page.click("#settings summary");
  await setWindow(page, 2600);
  await page.click("#settings summary");
  // The model takes 6 s: Auto's iterations (one about every 1.5 s) go on meanwhile.
  await useGemini(page, env.mock.url, "slow_6000", `background-key-${Date.now()}`);
  await page.check("#toggle-auto");
  const key = await waitForDatabaseArchive(page, "gdrs_archived_logs_", 60_000);
  await page.waitForFunction(() => document.getElementById("message").textContent.startsWith("Compacted automatically"), null, { timeout: 20_000 });
  await page.click("#btn-pause");
  await page.waitForFunction(() => document.getElementById("stat-state").textContent === "idle", null, { timeout: 10_000 });
  const archive = JSON.parse((await page.evaluate(databaseArchives, key))[key]);
  const reasoning = await page.evaluate(() => JSON.parse(localStorage.getItem("gdrs_reasoning_log")));
  const [first, last] = archive.iterations.length ? [Math.min(...archive.iterations), Math.max(...archive.iterations)] : [0, 0];
  assert.equal(first, 1);
  assert.match(reasoning[0], new RegExp(`^=== COMPACTED SUMMARY \\(Iterations 1-${last}\\) ===`));
  // Every iteration after the summarised ones is there once, in order: those the loop ran
  // while the model worked included.
  const headers = reasoning.slice(1).filter((entry) => /^=== ITERATION \d+ ===$/.test(entry)).map((entry) => Number(/\d+/.exec(entry)[0]));
  assert.deepEqual(headers, Array.from({ length: headers.length }, (_, i) => last + 1 + i), headers.join());
  assert.ok(headers.length >= 3, `the loop ran ${headers.length} iterations past the summary`);
  const metrics = await page.evaluate(() => JSON.parse(localStorage.getItem("gdrs_compaction_metrics")));
  assert.equal(metrics.totalCompactions, 1);
  assert.deepEqual(errors, []);
  await page.close();
});

/** A page whose Gemini model fails every call, with Auto on under the "When the model fails"
 * setting `fallback`, once the line under the controls starts with `settled`. */
async function autoWithFailingModel(fallback, settled) {
  const opened = await openPage(env.browser, env.baseUrl);
  const { page } = opened;
  await page.click("#settings summary");
  await setWindow(page, 2600);
  await page.selectOption("#set-fallback", fallback);
  await page.click("#settings summary");
  await useGemini(page, env.mock.url, "http_500_always", `auto-${fallback}-key-${Date.now()}`);
  await page.check("#toggle-auto");
  await page.waitForFunction((start) => document.getElementById("message").textContent.startsWith(start), settled, { timeout: 60_000 });
  return opened;
}

test("an automatic compaction whose model fails summarises without it, says so, and Auto goes on", async () => {
  const { page, errors } = await autoWithFailingModel("loop", "Compacted automatically");
  assert.match(
    await page.textContent("#message"),
    /^Compacted automatically at \d+%: iterations 1–\d+, [\d,]+ → [\d,]+ tokens, summarised without the model \(the model failed: the model's API answered HTTP 500: .*\); the next compaction the model answers replaces it\. The originals are in Archives below\.$/,
  );
  assert.equal(await page.isChecked("#toggle-auto"), true, "Auto goes on");
  await page.click("#btn-pause");
  const entry = await page.evaluate(() => JSON.parse(localStorage.getItem("gdrs_reasoning_log"))[0]);
  assert.match(entry, /Summarised without the model, which failed \(llm_http\)/);
  await page.screenshot({ path: join(outputDir, "auto-compaction-fallback.png") });
  assert.deepEqual(errors.filter((e) => !e.startsWith("Failed to load resource")), []);
  await page.close();
});

test("with 'Report the error', an automatic compaction that fails pauses Auto, closes its panel and says why", async () => {
  const { page, errors } = await autoWithFailingModel("off", "Automatic compaction failed");
  assert.equal(await page.isChecked("#toggle-auto"), false, "Auto is paused");
  assert.equal(await page.evaluate(() => document.getElementById("compaction-dialog").open), false, "the panel closed");
  assert.match(await page.textContent("#message"), /HTTP 500|API failed/);
  assert.equal(await page.evaluate(() => Object.keys(localStorage).some((k) => k.startsWith("gdrs_archived_logs_"))), false);
  assert.deepEqual(await page.evaluate(databaseArchives, "gdrs_archived_logs_"), {});
  await page.screenshot({ path: join(outputDir, "auto-compaction-failed.png") });
  // Chromium logs each HTTP error response itself ("Failed to load resource").
  assert.deepEqual(errors.filter((e) => !e.startsWith("Failed to load resource")), []);
  await page.close();
});

test("bulky tool output: Auto clears it with no model call, entries show their size and a recall chip", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await page.click("#settings summary");
  await setWindow(page, 30000);
  await page.check("#set-pages");
  await page.check("#toggle-auto");
  await page.waitForFunction(() => document.getElementById("message").textContent.startsWith("Cleared automatically"), null, { timeout: 60_000 });
  await page.click("#btn-pause");
  assert.match(
    await page.textContent("#message"),
    /^Cleared automatically at \d+%: \d+ bulky tool outputs of iterations 1–\d+ moved to the archive, no model call; [\d,]+ → [\d,]+ tokens\./,
  );
  const metrics = await page.evaluate(() => JSON.parse(localStorage.getItem("gdrs_compaction_metrics")));
  assert.equal(metrics.callsSaved, 1);
  assert.equal(metrics.totalAttempts, 0);
  // A cleared entry: the same list item, its size, and a chip that shows its original.
  const badges = await page.$$eval("#log-execution .entry-text.cleared .badge", (items) => items.map((i) => i.textContent));
  assert.ok(badges.length > 0 && badges.every((b) => /^cleared · [\d,]+ characters$/.test(b)), badges.join());
  const chip = page.locator("#log-execution .entry-text.cleared .chip").first();
  const label = await chip.textContent();
  await chip.click();
  await page.waitForSelector("#recall-output:not([hidden])");
  const recalled = await page.textContent("#recall-output");
  assert.match(recalled, /Net revenue [\d.]+ in report_\d+\.csv/, recalled.slice(0, 300));
  assert.equal(await page.inputValue("#recall-input"), label.slice("recall(".length, -1));
  const rows = await page.$$eval("#archive-rows tr", (trs) => trs.map((tr) => tr.textContent));
  assert.ok(rows.some((row) => row.includes("cleared bodies")), rows.join("\n"));
  await page.screenshot({ path: join(outputDir, "auto-clearing.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});
