// The README's JavaScript examples run as written (the package specifier pointed at the build)
// in a real Chromium page: no exception, no console error.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { launch, openPage } from "./browser.mjs";

const examplesOf = (path) => [...readFileSync(new URL(path, import.meta.url), "utf8").matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
// The repository README and the npm README (docs/npm-README.md, shipped as the package's README).
const examples = [...examplesOf("../../README.md"), ...examplesOf("../../docs/npm-README.md")];

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

test("the README has JavaScript examples", () => {
  assert.ok(examples.length >= 1);
});

examples.forEach((code, index) => {
  test(`README example ${index + 1} runs`, async () => {
    const { page, errors } = await openPage(env.browser, env.baseUrl);
    await page.evaluate(() => localStorage.clear());
    const logged = [];
    page.on("console", (msg) => logged.push(msg.text()));
    const source = code.replaceAll(`from "context-compactor"`, `from "${env.baseUrl}pkg/context_compactor.js"`);
    await page.evaluate(async (body) => {
      const url = URL.createObjectURL(new Blob([body], { type: "text/javascript" }));
      await import(url);
    }, source);
    assert.deepEqual(errors, []);
    assert.ok(logged.length > 0, "the example printed something");
    await page.close();
  });
});
