// The demo page in a real Chromium: it loads the wasm package and shows and appends to the logs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { launch, openPage, outputDir } from "./browser.mjs";

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

test("the page loads the package and shows logs another app wrote", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await page.evaluate(() => {
    localStorage.setItem("gdrs_reasoning_log", JSON.stringify(["=== ITERATION 1 ===", "Found 3 CSV files."]));
    localStorage.setItem(
      "gdrs_execution_log",
      JSON.stringify([{ id: "old", success: true, code: "files.length", result: 3, executionTime: 4, source: "auto", context: { iteration: 1 } }]),
    );
  });
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  assert.equal(await page.textContent("#count-reasoning"), "2");
  assert.equal(await page.textContent("#count-execution"), "1");
  assert.match(await page.textContent("#log-execution"), /files\.length/);
  assert.match(await page.textContent("#log-execution"), /iteration 1/);
  assert.equal(await page.textContent("#stat-iteration"), "1");
  assert.deepEqual(errors, []);
  await page.close();
});

test("a person can run an iteration and append to all three logs", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await page.click(".manual summary");
  await page.click("#btn-start");
  // Writes wait for the cross-tab lock: a few milliseconds.
  await page.waitForFunction(() => document.getElementById("stat-state").textContent === "iteration running");
  await page.fill("#reasoning-text", "Plan: load <b>data</b> and count rows.");
  await page.click("#form-reasoning button[type=submit]");

  await page.click("[data-form=form-execution]");
  await page.fill("#execution-code", "rows.filter(r => r.ok).length");
  await page.fill("#execution-result", "40213");
  await page.click("#form-execution button[type=submit]");

  await page.click("[data-form=form-tool]");
  await page.fill("#tool-details", "notes/plan.md");
  await page.click("#form-tool button[type=submit]");
  await page.click("#btn-finish");

  await page.waitForFunction(() => document.getElementById("stat-state").textContent === "idle");
  assert.equal(await page.textContent("#count-reasoning"), "2");
  assert.equal(await page.textContent("#count-execution"), "1");
  assert.equal(await page.textContent("#count-tool"), "1");
  // Log text is shown as text: the <b> is visible, not bold markup.
  assert.match(await page.textContent("#log-reasoning"), /<b>data<\/b>/);
  assert.equal(await page.locator("#log-reasoning b").count(), 0);
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem("gdrs_execution_log")));
  assert.equal(stored[0].result, 40213);
  assert.equal(stored[0].iteration, 1);
  const tokens = Number(/^([\d,]+) \//.exec(await page.textContent("#stat-tokens"))[1].replace(/,/g, ""));
  assert.ok(tokens > 10, `tokens ${tokens}`);
  await page.screenshot({ path: join(outputDir, "logstore-demo.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test("a corrupt log key is reported in the page and left untouched", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await page.evaluate(() => localStorage.setItem("gdrs_tool_activity_log", "{oops"));
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  await page.click(".manual summary");
  await page.click("#btn-start");
  const message = await page.textContent("#message");
  assert.match(message, /Stored log data is damaged/);
  assert.match(message, /gdrs_tool_activity_log/);
  assert.equal(await page.evaluate(() => localStorage.getItem("gdrs_tool_activity_log")), "{oops");
  await page.screenshot({ path: join(outputDir, "logstore-corrupt.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test("REQUIRED_SECTIONS is exported and equals what the Rust core requires", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  const [constant, fromRust, frozen] = await page.evaluate(async () => {
    const m = await import("/pkg/context_compactor.js");
    return [m.REQUIRED_SECTIONS, m.requiredSections(), Object.isFrozen(m.REQUIRED_SECTIONS)];
  });
  assert.deepEqual(constant, ["OBJECTIVE ACHIEVED", "KEY DISCOVERIES", "SUCCESSFUL SOLUTIONS"]);
  assert.deepEqual(constant, fromRust);
  assert.equal(frozen, true);
  assert.deepEqual(errors, []);
  await page.close();
});
