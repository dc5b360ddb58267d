// State the demo must keep right: archives stay listed whatever the provider, Restore is offered
// only where it can work, the tooltip's promise matches plan(), a first-visit line, a theme switch.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { iterate, launch, openPage, outputDir } from "./browser.mjs";

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

async function compactOnce(page) {
  await page.click("#btn-compact");
  await page.waitForSelector("#success-view:not([hidden])");
  await page.click("#btn-close-success");
}

test("choosing Gemini before typing a key keeps the archive list", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await iterate(page, 6);
  await compactOnce(page);
  assert.equal(await page.locator("#archive-rows tr").count(), 1);
  await page.click("#settings summary");
  await page.selectOption("#set-provider", "gemini");
  assert.equal(await page.locator("#archive-rows tr").count(), 1, "the archive is still listed");
  assert.equal(await page.isHidden("#archive-empty"), true);
  assert.deepEqual(errors, []);
  await page.close();
});

test("Restore is offered only for the archive whose summary is in the log", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await iterate(page, 6);
  await compactOnce(page);
  await iterate(page, 8);
  await compactOnce(page);
  const rows = page.locator("#archive-rows tr");
  assert.equal(await rows.count(), 2);
  // Newest first: the second compaction's archive can be restored, the first one cannot yet.
  assert.equal(await rows.nth(0).locator("button:has-text('Restore originals')").isEnabled(), true);
  assert.equal(await rows.nth(1).locator("button:has-text('Restore originals')").isDisabled(), true);
  await page.screenshot({ path: join(outputDir, "archives-restore-offered.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test("the Compact tooltip promises what plan() says", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await iterate(page, 6);
  const expected = await page.evaluate(async () => {
    const { LogStore, Compactor } = await import("/pkg/context_compactor.js");
    const logs = new LogStore();
    const plan = new Compactor(logs, { provider: { type: "offline" }, contextWindowTokens: 4000 }).plan();
    return `Save ~${((1 - plan.estimatedTokensAfter / logs.estimateTokens()) * 100).toFixed(0)}% context`;
  });
  assert.match(await page.textContent("#compact-tooltip"), new RegExp(`^${expected}`));
  assert.deepEqual(errors, []);
  await page.close();
});

test("a first-visit line says the loop is simulated; the theme switch flips light and dark", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  assert.match(await page.textContent("#intro"), /simulated/);
  const before = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.click("#btn-theme");
  const after = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(after, before);
  await page.screenshot({ path: join(outputDir, "theme-switched.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("the usage timeline draws the sawtooth: a point per iteration, compactions and restores marked", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  page.on("dialog", (dialog) => dialog.accept());
  await iterate(page, 6);
  const points = () => page.evaluate(() => document.querySelector("#usage-timeline polyline").getAttribute("points").trim().split(/\s+/).length);
  assert.ok((await points()) >= 6, `${await points()} points`);
  await compactOnce(page);
  assert.equal(await page.locator("#usage-timeline .mark-compaction").count(), 1);
  assert.match(await page.locator("#usage-timeline .mark-compaction title").textContent(), /^Compacted at iteration 6: \d+%$/);
  await iterate(page, 2);
  await page.click("#archive-rows button:has-text('Restore originals')");
  await page.waitForFunction(() => document.querySelectorAll("#usage-timeline .mark-restore").length === 1);
  await page.screenshot({ path: join(outputDir, "usage-timeline.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("a pinned fact is kept by the summary; the success dialog lists the facts kept", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await page.click("#pins-panel summary");
  await page.fill("#pin-text", "Amounts are in euros; the ledger is LGR-2026-0042.");
  await page.press("#pin-text", "Enter");
  await page.waitForFunction(() => document.querySelectorAll("#pin-list li").length === 1);
  assert.equal(await page.textContent("#pin-count"), "1");
  await iterate(page, 6);
  await page.click("#btn-compact");
  await page.waitForSelector("#success-view:not([hidden])");
  const result = await page.evaluate(() => window.lastCompactionResult.coverage);
  assert.equal(await page.textContent("#kept-facts-summary"), `${result.kept.length} of ${result.required.length} facts kept`);
  assert.ok(result.required.length >= 3);
  await page.click("#kept-facts summary");
  const listed = await page.locator("#kept-facts-list li").allTextContents();
  assert.deepEqual(listed, result.kept);
  assert.ok(listed.includes("Amounts are in euros; the ledger is LGR-2026-0042."));
  await page.screenshot({ path: join(outputDir, "facts-kept.png") });
  await page.click("#btn-close-success");
  assert.match(await page.textContent("#log-reasoning .entry.summary"), /LGR-2026-0042/);
  await page.click("#pin-list button:has-text('Unpin')");
  await page.waitForFunction(() => document.querySelectorAll("#pin-list li").length === 0);
  assert.equal(await page.evaluate(() => localStorage.getItem("gdrs_pinned_facts")), null);
  assert.deepEqual(errors, []);
  await page.close();
});
