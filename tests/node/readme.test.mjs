// The README's JavaScript examples run as written (the package specifier pointed at the build)
// in a real Chromium page: no exception, no console error.
import { createRequire } from "node:module";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, mkdirSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { launch, openPage, outputDir } from "./browser.mjs";

const examplesOf = (path) => [...readFileSync(new URL(path, import.meta.url), "utf8").matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
// The repository README and the npm README (docs/npm-README.md, shipped as the package's README).
const examples = [...examplesOf("../../README.md"), ...examplesOf("../../docs/npm-README.md")];

let env;
before(async () => {
  env = await launch({ withMock: true });
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
    // The recall-tool example talks to the Gemini mock, whose scenario calls the tool once.
    await page.evaluate((url) => {
      globalThis.GEMINI_BASE_URL = url;
      globalThis.GEMINI_API_KEY = `scenario:recall_loop#readme-${Math.random()}`;
    }, env.mock.url);
    const logged = [];
    page.on("console", (msg) => logged.push(msg.text()));
    const source = code.replaceAll(`from "context-compactor"`, `from "${env.baseUrl}pkg/context_compactor.js"`);
    await page.evaluate(async (body) => {
      const url = URL.createObjectURL(new Blob([body], { type: "text/javascript" }));
      await import(url);
    }, source);
    assert.deepEqual(errors, []);
    assert.ok(logged.length > 0, "the example printed something");
    // An example that compacts must really compact, not print why it cannot.
    if (code.includes(".compact(")) assert.ok(logged.some((line) => /iterations 1-\d+/.test(line)), logged.join("\n"));
    // The recall loop must end with the model's answer built from what the tool gave back.
    if (code.includes("recallTool()")) assert.ok(logged.some((line) => line.startsWith("From the archive: ") && line.includes("[iteration 1 · execution]")), logged.join("\n"));
    await page.close();
  });
});

test("the README examples type-check under tsc --strict against the shipped declarations", () => {
  const dir = join(outputDir, "readme-ts");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const pkg = fileURLToPath(new URL("../../pkg/context_compactor.js", import.meta.url));
  const files = examples.map((code, index) => {
    const file = join(dir, `example-${index + 1}.ts`);
    writeFileSync(file, `${code.replaceAll(`from "context-compactor"`, `from ${JSON.stringify(pkg)}`)}\nexport {};\n`);
    return file;
  });
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "ES2022", moduleResolution: "bundler", lib: ["ES2022", "DOM"], skipLibCheck: false, allowImportingTsExtensions: false }, files }),
  );
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", dir], { stdio: "inherit" });
});
