// A whole session from the keyboard only: continue, compact, view the archive, restore. Focus
// never falls back to <body>, Escape closes what is open, the tabs answer to the arrow keys.
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

const focused = (page) => page.evaluate(() => (document.activeElement === document.body ? "body" : document.activeElement?.id || document.activeElement?.textContent.trim()));

/** Presses Tab until the control `id` (or with that text) has focus; bounded. */
async function tabTo(page, target) {
  for (let i = 0; i < 80; i++) {
    if ((await focused(page)) === target) return;
    await page.keyboard.press("Tab");
  }
  assert.fail(`Tab never reached ${target}`);
}

test("a session from the keyboard: continue, compact, view, restore, with focus kept", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  page.on("dialog", (dialog) => dialog.accept());
  await tabTo(page, "btn-continue");
  for (let i = 0; i < 6; i++) {
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => !document.getElementById("btn-continue").disabled);
    assert.equal(await focused(page), "btn-continue", `focus after iteration ${i + 1}`);
  }
  await tabTo(page, "btn-compact");
  await page.keyboard.press("Enter");
  await page.waitForSelector("#success-view:not([hidden])");
  await tabTo(page, "btn-view-archive");
  await page.keyboard.press("Enter");
  await page.waitForSelector("#archive-panel:not([hidden])");
  assert.equal(await focused(page), "btn-close-archive", "the archive view takes focus");
  // What was compacted, beside the summary that replaced it.
  assert.match(await page.textContent("#originals-title"), /^Originals: iterations 1–5, \d+ entries$/);
  assert.ok((await page.locator("#archive-originals li.entry").count()) > 5);
  assert.equal(await page.locator("#archive-replacement .entry.summary").count(), 1);
  await page.screenshot({ path: join(outputDir, "keyboard-archive.png") });
  await page.keyboard.press("Escape");
  assert.equal(await page.isHidden("#archive-panel"), true, "Escape closes the archive view");
  assert.notEqual(await focused(page), "body");
  await tabTo(page, "Restore originals");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.querySelectorAll("#archive-rows tr").length === 0);
  assert.match(await page.textContent("#message"), /Restored/);
  assert.notEqual(await focused(page), "body");
  assert.deepEqual(errors, []);
  await page.close();
});

// The archive list is drawn again on every event of the package (a restore's own
// `compaction_rolled_back` among them, while the restore is still finishing): a button of a
// row that stays keeps the focus, one whose row went hands it to Continue, never to <body>.
test("a redrawn archive list keeps the focus on the button that had it", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  page.on("dialog", (dialog) => dialog.accept());
  for (let round = 0; round < 2; round++) {
    // Iterations until compaction is worth it (bounded).
    for (let i = 0; i < 20 && (await page.isDisabled("#btn-compact")); i++) {
      await page.click("#btn-continue");
      await page.waitForFunction(() => !document.getElementById("btn-continue").disabled);
    }
    await page.click("#btn-compact");
    await page.waitForSelector("#success-view:not([hidden])");
    await page.keyboard.press("Escape");
  }
  await page.waitForFunction(() => document.querySelectorAll("#archive-rows tr").length === 2);
  const redraw = () => page.evaluate(async () => (await import("/ui.js")).rerender());
  await page.locator("#archive-rows tr").nth(1).getByText("View").focus();
  const row = () => page.evaluate(() => document.activeElement.closest("tr")?.querySelector(".archive-key")?.textContent);
  const before = await row();
  await redraw();
  assert.equal(await focused(page), "View", "the same button of the redrawn row");
  assert.equal(await row(), before, "in the same archive's row");
  // A row that goes: its archive deleted behind the page's back, then the list redrawn.
  await page.evaluate(async (key) => {
    const { Archives, LogStore } = await import("/pkg/context_compactor.js");
    await new Archives(new LogStore()).delete(key);
  }, before);
  await redraw();
  assert.equal(await focused(page), "btn-continue", "Continue, when the row is gone");
  assert.deepEqual(errors, []);
  await page.close();
});

test("the entry tabs answer to the arrow keys and each controls its panel", async () => {
  const { page, errors } = await openPage(env.browser, env.baseUrl);
  await page.click(".manual summary");
  await page.focus("#tab-reasoning");
  await page.keyboard.press("ArrowRight");
  assert.equal(await focused(page), "tab-execution");
  assert.equal(await page.getAttribute("#tab-execution", "aria-selected"), "true");
  assert.equal(await page.isVisible("#form-execution"), true);
  await page.keyboard.press("End");
  assert.equal(await focused(page), "tab-tool");
  await page.keyboard.press("ArrowRight");
  assert.equal(await focused(page), "tab-reasoning", "wraps around");
  assert.equal(await page.getAttribute("#form-reasoning", "role"), "tabpanel");
  assert.deepEqual(errors, []);
  await page.close();
});
