// axe-core (the engine of Lighthouse's and most CI accessibility checks) on every screen of the
// demo, in the dark and the light theme and at a phone and a desktop size (each theme at one
// size, each size in one theme: the colours are the theme's, the layout the size's; all four
// took 64 s of the test run for what two find): no serious or critical violation anywhere.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { join } from "node:path";
import { iterate, launch, openPage, outputDir, setWindow, useGemini } from "./browser.mjs";

const AXE_SCRIPT = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

let env;
before(async () => {
  env = await launch({ withMock: true });
});
after(async () => {
  await env?.close();
});

/** The serious and critical violations axe finds on the page as it is now, one line each. */
async function violations(page) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.addScriptTag({ path: AXE_SCRIPT });
  const found = await page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary.split("\n").slice(1, 2).join("").trim()}`) }));
  });
  return found.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 4).join(" | ")}`);
}

/** Checks the current screen, saves its screenshot, and records what axe found under `name`. */
async function screen(page, found, name) {
  found[name] = await violations(page);
  await page.screenshot({ path: join(outputDir, `axe-${name}.png`) });
}

for (const [theme, sizes] of [
  ["dark", [[390, 844]]],
  ["light", [[1280, 800]]],
]) {
  for (const [width, height] of sizes) {
    test(`${theme} theme, ${width}×${height}: no serious or critical axe violation on any screen`, async () => {
      const { page, errors } = await openPage(env.browser, env.baseUrl, { viewport: { width, height } });
      await page.emulateMedia({ colorScheme: theme });
      page.on("dialog", (dialog) => dialog.accept());
      const found = {};
      const at = `${theme}-${width}`;
      await screen(page, found, `${at}-first-visit`);

      await page.click(".manual summary");
      await page.click("#pins-panel summary");
      await page.fill("#pin-text", "Amounts are in euros; the ledger is LGR-2026-0042.");
      await page.press("#pin-text", "Enter");
      await page.waitForSelector("#pin-list li");
      await page.click("#settings summary");
      await setWindow(page, 200000);
      await iterate(page, 3);
      await screen(page, found, `${at}-compact-disabled`);
      await setWindow(page, 4000);
      await iterate(page, 4);
      await page.click("#tab-execution");
      await screen(page, found, `${at}-logs`);

      await page.click("#btn-compact");
      await page.waitForSelector("#success-view:not([hidden])");
      await page.click("#kept-facts summary");
      await screen(page, found, `${at}-success`);
      await page.click("#btn-view-archive");
      await page.waitForSelector("#archive-panel:not([hidden])");
      await page.click("#archive-panel .raw-json summary");
      await screen(page, found, `${at}-archive-view`);
      await page.keyboard.press("Escape");

      await iterate(page, 5);
      await page.click("#settings summary"); // closed; useGemini opens it again
      await useGemini(page, env.mock.url, "hang", `axe-key-${theme}-${width}`);
      await page.click("#btn-compact");
      await page.waitForFunction(() => document.getElementById("progress-message").textContent.includes("Asking the model"));
      await screen(page, found, `${at}-progress`);
      await page.click("#btn-cancel-compaction");
      await page.waitForSelector("#error-view:not([hidden])");
      await screen(page, found, `${at}-cancelled`);
      await page.click("#btn-close-error");

      await page.selectOption("#set-provider", "offline");
      await page.click("#archive-rows button:has-text('Restore originals')");
      await page.waitForFunction(() => document.querySelectorAll("#archive-rows tr").length === 0);
      await screen(page, found, `${at}-restored`);
      await page.click("#btn-gdrs");
      await page.waitForFunction(() => document.getElementById("message").textContent.startsWith("Loaded a GDRS session"));
      await screen(page, found, `${at}-gdrs-session`);

      const failing = Object.entries(found).filter(([, list]) => list.length > 0);
      assert.deepEqual(failing, [], failing.map(([name, list]) => `${name}:\n  ${list.join("\n  ")}`).join("\n"));
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
}
