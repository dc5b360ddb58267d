// Reloads and second tabs in a real Chromium: nothing lost, one compaction at a time.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { iterate, launch, openPage, outputDir, useGemini } from "./browser.mjs";

let env;
before(async () => {
  env = await launch({ withMock: true });
});
after(async () => {
  await env?.close();
});

async function ready(page) {
  await page.waitForSelector("body[data-ready=true]");
}

const logsOf = (page) =>
  page.evaluate(() => ["gdrs_reasoning_log", "gdrs_execution_log", "gdrs_tool_activity_log"].map((k) => localStorage.getItem(k)));

test("a second tab cannot compact while the first does, and sees why", async () => {
  const { page: first, errors } = await openPage(env.browser, env.baseUrl);
  await iterate(first, 6);
  await useGemini(first, env.mock.url, "hang", `safety-key-${Date.now()}`);
  const second = await first.context().newPage();
  await second.goto(env.baseUrl);
  await ready(second);
  await first.click("#btn-compact");
  await first.waitForFunction(() => document.getElementById("progress-message").textContent.includes("Asking the model"));
  // The second tab re-renders on the storage event of the lease.
  await second.click("#btn-continue");
  await second.waitForFunction(() => !document.getElementById("btn-continue").disabled);
  assert.equal(await second.isDisabled("#btn-compact"), true);
  assert.match(await second.textContent("#compact-tooltip"), /A compaction is running in another tab/);
  // Entries the second tab appended while the first compacts are there, and survive.
  assert.equal(await second.textContent("#stat-iteration"), "7");
  await second.screenshot({ path: join(outputDir, "second-tab-blocked.png") });
  assert.deepEqual(errors, []);
  await first.close();
});

test("reloading mid-compaction loses nothing and the reloaded tab can compact again", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await iterate(page, 6);
  const before = await logsOf(page);
  await useGemini(page, env.mock.url, "hang", `safety-key-${Date.now()}`);
  await page.click("#btn-compact");
  await page.waitForFunction(() => document.getElementById("progress-message").textContent.includes("Asking the model"));
  await page.reload();
  await ready(page);
  assert.deepEqual(await logsOf(page), before, "the logs are exactly as before the compaction");
  assert.equal(await page.evaluate(() => localStorage.getItem("gdrs_compaction_journal")), null);
  // Same tab (sessionStorage keeps its id): its old lease does not block it.
  assert.equal(await page.isEnabled("#btn-compact"), true);
  await page.click("#btn-compact");
  await page.waitForSelector("#success-view:not([hidden])");
  await page.screenshot({ path: join(outputDir, "reload-then-compact.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("a journal left by a closed tab is settled on the next load", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await iterate(page, 6);
  // Compact, then put the state back to "archive written, logs not yet replaced" with the
  // journal of that moment: what a tab closed right after archiving leaves behind.
  const before = await logsOf(page);
  await page.click("#btn-compact");
  await page.waitForSelector("#success-view:not([hidden])");
  const key = await page.textContent("#fact-archive");
  await page.evaluate(([logs, archiveKey]) => {
    const names = ["gdrs_reasoning_log", "gdrs_execution_log", "gdrs_tool_activity_log"];
    names.forEach((name, i) => localStorage.setItem(name, logs[i]));
    localStorage.setItem("gdrs_compaction_journal", JSON.stringify({ stage: "archiving", archiveKey }));
  }, [before, key]);
  await page.reload();
  await ready(page);
  await page.waitForFunction(() => localStorage.getItem("gdrs_compaction_journal") === null);
  assert.deepEqual(await logsOf(page), before);
  assert.equal(await page.evaluate((k) => localStorage.getItem(k), key), null, "the orphan archive is removed");
  assert.deepEqual(errors, []);
  await page.close();
});

// A damaged journal stopped every compaction (storage_corrupt) until removed by hand: it is set
// aside, the page says so, and the Compact button works.
test("a damaged journal is set aside on the next load, the demo says so, and compacting works", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await iterate(page, 6);
  const damaged = '{"stage":"replacing","archiveKey":"gdrs_archived_logs_';
  await page.evaluate((text) => localStorage.setItem("gdrs_compaction_journal", text), damaged);
  await page.reload();
  await ready(page);
  await page.waitForFunction(() => localStorage.getItem("gdrs_compaction_journal") === null);
  assert.equal(await page.evaluate(() => localStorage.getItem("gdrs_compaction_journal_corrupt")), damaged);
  assert.match(await page.textContent("#message"), /interrupted compaction was damaged and was set aside.*\(kept as gdrs_compaction_journal_corrupt\)/);
  await page.click("#btn-compact");
  await page.waitForSelector("#success-view:not([hidden])");
  assert.deepEqual(errors, []);
  await page.close();
});
