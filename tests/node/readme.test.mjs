// The docs hold: the JavaScript examples of the READMEs run as written (the package specifier
// pointed at the build) in a real Chromium page, with no exception and no console error; the
// repository README links to the npm README's guide and repeats none of it; every relative
// link reaches its file and heading.
import { createRequire } from "node:module";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, mkdirSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { launch, openPage, outputDir } from "./browser.mjs";

const read = (path) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const examplesOf = (path) => [...read(path).matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
// The repository README, the npm README (docs/npm-README.md, shipped as the package's README),
// the reference and the long-session guide.
const DOCS = ["README.md", "docs/npm-README.md", "docs/reference.md", "docs/long-sessions.md"];
// An example that imports the AI SDK is bundled with the real `ai` package and run by
// tests/node/bundlers.test.mjs; every other one runs here.
const examples = [...new Set(DOCS.flatMap(examplesOf))].filter((code) => !code.includes('from "ai"'));

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
    // An example that reports in an <output> it adds (the install guide's) is done once it says something.
    if (code.includes('createElement("output")')) {
      await page.waitForFunction(() => [...document.querySelectorAll("output")].at(-1)?.textContent, null, { timeout: 20_000 });
    }
    assert.deepEqual(errors, []);
    assert.ok(logged.length > 0, "the example printed something");
    // An example that compacts must really compact, not print why it cannot.
    // A message list's compaction says its rung.
    const compacted = code.includes("new MessageCompactor") ? /^(clear|summarize|fallback): / : /iterations 1-\d+/;
    if (code.includes(".compact(")) assert.ok(logged.some((line) => compacted.test(line)), logged.join("\n"));
    // The recall loop must end with the model's answer built from what the tool gave back.
    if (code.includes("recallTool()") && !code.includes("new MessageCompactor")) assert.ok(logged.some((line) => line.startsWith("From the archive: ") && line.includes("[iteration 1 · execution]")), logged.join("\n"));
    await page.close();
  });
});

test("the README examples type-check under tsc --strict (checkJs) against the shipped declarations", () => {
  const dir = join(outputDir, "readme-ts");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const pkg = fileURLToPath(new URL("../../pkg/context_compactor.js", import.meta.url));
  const files = examples.map((code, index) => {
    // JavaScript checked as JavaScript (`checkJs`), JSDoc types included, as an editor does.
    const file = join(dir, `example-${index + 1}.js`);
    writeFileSync(file, `${code.replaceAll(`from "context-compactor"`, `from ${JSON.stringify(pkg)}`)}\nexport {};\n`);
    return file;
  });
  writeFileSync(
    join(dir, "tsconfig.json"),
    // Browser code: the DOM's types, none of node_modules/@types (a test's dependency brings
    // @types/node, whose `fetch` answers `unknown`).
    JSON.stringify({ compilerOptions: { allowJs: true, checkJs: true, strict: true, noEmit: true, target: "ES2022", module: "ES2022", moduleResolution: "bundler", lib: ["ES2022", "DOM"], types: [], skipLibCheck: false, allowImportingTsExtensions: false }, files }),
  );
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", dir], { stdio: "inherit" });
});

test("the repository README links to the guide instead of repeating it; each README within its length", () => {
  const npm = read("docs/npm-README.md");
  const readme = read("README.md");
  assert.ok(readme.includes("](docs/npm-README.md)"), "the repository README links to the guide");
  const paragraphs = (text) => text.split(/\n\n/).filter((p) => p.length > 200 && !p.startsWith("|"));
  const repeated = paragraphs(npm).filter((p) => readme.includes(p));
  assert.deepEqual(repeated, [], "paragraphs of the guide repeated in the repository README");
  const lines = (text) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  assert.ok(lines(readme) <= 500, `README.md: ${lines(readme)} lines`);
  // The guide serves two fronts (a LogStore's logs and an agent's message list), each with
  // examples that run as written.
  assert.ok(lines(npm) <= 500, `docs/npm-README.md: ${lines(npm)} lines`);
});

test("the npm README links only to what npm shows, and says what GDRS is", () => {
  const npm = read("docs/npm-README.md");
  const links = [...npm.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]);
  assert.deepEqual(links.filter((link) => !link.startsWith("#") && !/^https:\/\//.test(link)), []);
  for (const word of ["shouldAutoCompact()", "compaction_progress", "ContextCompactorError", "recallTool()", "### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING", "appendExecution"]) {
    assert.ok(npm.includes(word), word);
  }
  for (const doc of [npm, read("README.md")]) {
    assert.equal(doc.indexOf("GDRS"), doc.indexOf("**GDRS**, the \"Gemini Deep Research System\"") + 2, "GDRS is defined where it first appears");
  }
});

/** GitHub's anchor of a heading: lower case, punctuation and emoji dropped, spaces as hyphens. */
const slug = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");

test("every relative link of the docs reaches its file and heading", () => {
  const files = [...DOCS, "ARCHITECTURE.md", "bench/README.md", "docs/guarantees.md", "docs/size.md"];
  const broken = [];
  for (const file of files) {
    const text = read(file);
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [path, anchor] = target.split("#");
      const resolved = path ? new URL(path, new URL(`../../${file}`, import.meta.url)) : new URL(`../../${file}`, import.meta.url);
      let body;
      try {
        body = readFileSync(resolved, "utf8");
      } catch {
        broken.push(`${file}: ${target} (no such file)`);
        continue;
      }
      if (!anchor) continue;
      const headings = [...body.replace(/```[\s\S]*?```/g, "").matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]));
      if (!headings.includes(anchor)) broken.push(`${file}: ${target} (no heading)`);
    }
  }
  assert.deepEqual(broken, []);
});
