// The demo as a person uses it on a phone, a laptop and a large screen: nothing wider than the
// viewport, the dialogs on screen, touch targets of 44 px, reasons visible without hover, and a
// progress dialog whose clock moves while the model works.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { iterate, launch, openPage, outputDir, setWindow, useGemini } from "./browser.mjs";

let env;
before(async () => {
  env = await launch({ withMock: true });
});
after(async () => {
  await env?.close();
});

const VIEWPORTS = [
  [390, 844],
  [1280, 800],
  [2560, 1440],
];

const pageAt = (width, height) => openPage(env.browser, env.baseUrl, { viewport: { width, height } });

const overflow = (page) =>
  page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
    wide: [...document.querySelectorAll("body *")]
      .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
      .slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`),
  }));

const smallTargets = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll("button, summary, select, input:not([type=checkbox]), label.toggle, label.check")]
      .filter((e) => e.offsetParent !== null)
      .filter((e) => e.getBoundingClientRect().height < 44)
      .map((e) => `${e.tagName.toLowerCase()}#${e.id} ${Math.round(e.getBoundingClientRect().height)}px`),
  );

for (const [width, height] of VIEWPORTS) {
  test(`${width}×${height}: no horizontal scroll, dialogs on screen, 44 px targets`, async () => {
    const { page, errors } = await pageAt(width, height);
    await iterate(page, 3);
    // A disabled Compact button says why without hover.
    await page.click("#settings summary");
    await setWindow(page, 200000);
    assert.equal(await page.isDisabled("#btn-compact"), true);
    assert.equal(await page.isVisible("#compact-tooltip"), true, "the reason is visible without hover");
    await setWindow(page, 4000);
    await iterate(page, 3);
    let measured = await overflow(page);
    assert.ok(measured.scroll <= measured.client, `page ${measured.scroll}px wide in ${measured.client}px: ${measured.wide}`);
    assert.deepEqual(await smallTargets(page), []);

    await page.click("#btn-compact");
    await page.waitForSelector("#success-view:not([hidden])");
    const box = await page.locator("#compaction-dialog").boundingBox();
    assert.ok(box.x >= 0 && box.y >= 0 && box.x + box.width <= width && box.y + box.height <= height, `dialog ${JSON.stringify(box)}`);
    await page.screenshot({ path: join(outputDir, `layout-${width}-success.png`) });
    await page.click("#btn-close-success");
    measured = await overflow(page);
    assert.ok(measured.scroll <= measured.client, `after a compaction: ${measured.scroll}px: ${measured.wide}`);
    await page.screenshot({ path: join(outputDir, `layout-${width}-after.png`), fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test("the progress clock moves while a model hangs, and Cancel stops it", async () => {
  const { page, errors } = await pageAt(390, 844);
  await iterate(page, 6);
  await useGemini(page, env.mock.url, "hang", `layout-key-${Date.now()}`);
  await page.click("#btn-compact");
  await page.waitForFunction(() => document.getElementById("progress-message").textContent.includes("Asking the model"));
  const first = await page.textContent("#progress-elapsed");
  await page.waitForTimeout(1200);
  const later = await page.textContent("#progress-elapsed");
  assert.ok(parseFloat(later) >= parseFloat(first) + 1, `${first} → ${later}`);
  const box = await page.locator("#compaction-dialog").boundingBox();
  assert.ok(box.y + box.height <= 844, "the progress dialog is on screen");
  await page.screenshot({ path: join(outputDir, "layout-390-progress.png") });
  await page.keyboard.press("Escape");
  await page.waitForSelector("#error-view:not([hidden])");
  assert.equal(await page.textContent("#error-title"), "Cancelled before anything was written");
  assert.equal(await page.textContent("#dialog-title"), "Compaction cancelled", "a cancel is not a failure");
  assert.doesNotMatch(await page.textContent("#compaction-dialog"), /fail/i);
  assert.deepEqual(errors, []);
  await page.close();
});
