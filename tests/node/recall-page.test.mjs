// The demo's Recall box (#41): what the recall tool hands the app's model for an iteration, a
// range or a search, typed and sent from the keyboard; in Gemini mode, one agent turn against
// the mock in which the model calls the tool and answers with what it gave back.
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

/** A page with 6 iterations compacted (1–5), the success dialog closed. */
async function compacted(gemini) {
  const opened = await openPage(env.browser, env.baseUrl);
  await iterate(opened.page, 6);
  if (gemini) await useGemini(opened.page, env.mock.url, "ok", gemini.key);
  if (gemini) {
    await opened.page.fill("#set-model", "gemini-3.5-flash-lite");
    await opened.page.dispatchEvent("#set-model", "change");
  }
  await opened.page.click("#btn-compact");
  await opened.page.waitForSelector("#success-view:not([hidden])");
  await opened.page.click("#btn-close-success");
  return opened;
}

const recalled = async (page, typed) => {
  // The box shows the last answer until the next one arrives: clear it to wait for the next.
  await page.evaluate(() => Object.assign(document.getElementById("recall-output"), { hidden: true, textContent: "" }));
  await page.fill("#recall-input", typed);
  await page.press("#recall-input", "Enter");
  await page.waitForSelector("#recall-output:not([hidden])");
  return page.textContent("#recall-output");
};

test("Recall shows what the tool hands the model: an iteration, a range, a search, a live iteration", async () => {
  const { page, errors } = await compacted(null);
  assert.equal(await page.isHidden("#btn-ask-gemini"), true, "offline: no Gemini turn");
  const one = await recalled(page, "1");
  assert.match(one, /^\[iteration 1 · reasoning\]/);
  assert.doesNotMatch(one, /\[iteration 2 /);
  const range = await recalled(page, "2-3");
  assert.match(range, /\[iteration 2 · reasoning\][\s\S]*\[iteration 3 · reasoning\]/);
  const id = /"id":"(exec_[^"]+)"/.exec(one)?.[1];
  assert.ok(id, one);
  const found = await recalled(page, id);
  assert.match(found, /^\[iteration 1 · execution\]/);
  assert.equal(found.split("\n").length, 1, found);
  assert.match(await recalled(page, "6"), /^No archive holds iteration 6/);
  await page.screenshot({ path: join(outputDir, "recall.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test("Gemini mode: the model calls the recall tool and answers with what it gave back", async () => {
  const key = `scenario:recall_loop#page-${Date.now()}`;
  const { page, errors } = await compacted({ key });
  await page.waitForSelector("#btn-ask-gemini:not([hidden])");
  await page.fill("#recall-input", "What did iteration 1 compute?");
  await page.click("#btn-ask-gemini");
  await page.waitForFunction(() => document.getElementById("recall-output").textContent.includes("From the archive"));
  const shown = await page.textContent("#recall-output");
  assert.match(shown, /^→ recall_archived_iterations\(\{"from":1\}\)/);
  assert.match(shown, /From the archive: .*\[iteration 1 · execution\]/s);
  const turns = env.mock.requests.filter((r) => r.method === "POST" && r.headers["x-goog-api-key"] === key && r.body?.tools);
  assert.equal(turns.length, 2, "the call, then the answer");
  assert.equal(turns[0].body.tools[0].functionDeclarations[0].name, "recall_archived_iterations");
  assert.ok(turns[1].body.contents.at(-1).parts[0].functionResponse.response.content.includes("[iteration 1 · execution]"));
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }));
  assert.ok(!stored.includes(key.split("#")[1]), "the key is in no storage");
  assert.deepEqual(errors, []);
  await page.close();
});
