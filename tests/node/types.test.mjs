// The shipped .d.ts names every type (no `any`) and a strict TS program using the API compiles.
import { createRequire } from "node:module";
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const here = fileURLToPath(new URL(".", import.meta.url));
const dts = readFileSync(new URL("../../pkg/context_compactor.d.ts", import.meta.url), "utf8");

/** The declarations of one exported class or function, without the wasm internals. */
function declaration(start) {
  const from = dts.indexOf(start);
  assert.ok(from >= 0, `${start} is declared`);
  return dts.slice(from, dts.indexOf("\n}", from) + 2);
}

test("a strict TypeScript program using the whole API type-checks", () => {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", here], { stdio: "inherit" });
});

test("it also type-checks with lib es2022 and skipLibCheck false (no Symbol.dispose needed)", () => {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", join(here, "tsconfig.es2022.json")], { stdio: "inherit" });
});

test("LogStore and Compactor declarations use named types, never any", () => {
  for (const cls of ["export class LogStore", "export class Compactor"]) {
    const body = declaration(cls);
    assert.doesNotMatch(body, /:\s*any\b|<any>|\bany\[\]/, body);
  }
  assert.match(declaration("export class LogStore"), /appendExecution\(entry: ExecutionInput\): ExecutionEntry/);
  const compactor = declaration("export class Compactor");
  assert.match(compactor, /compact\(options\?: ForegroundCompactOptions \| null\): Promise<CompactionResult>/);
  assert.match(compactor, /rollback\(archiveKey: string\): Promise<void>/);
  assert.match(compactor, /readonly events: CompactorEvents/);
  assert.doesNotMatch(dts, /Symbol\.dispose/, "the declarations compile with lib es2022");
  assert.match(compactor, /readonly phase: Phase/);
  assert.match(compactor, /plan\(\): CompactionPlan/);
});

test("every type of the API is declared by name", () => {
  for (const name of [
    "CompactorOptions", "CompactionPlan", "CompactionResult", "GenerationSettings", "Archive",
    "ArchiveInfo", "CompactionMetrics", "CompactorEventMap", "Phase", "ExecutionEntry",
    "ToolActivityEntry", "ErrorCode", "ValidationResult",
  ]) {
    assert.match(dts, new RegExp(`export (interface|type) ${name}\\b`), name);
  }
  assert.match(dts, /export declare const REQUIRED_SECTIONS: readonly \["OBJECTIVE ACHIEVED","KEY DISCOVERIES","SUCCESSFUL SOLUTIONS"\]/);
});

/** Names the shipped texts give in code that are not the package's: Gemini's REST API, a
 * TypeScript compiler option, an app's own function in an example index line, React's hook and
 * Vite's and webpack's options in the install guide, the AI SDK's step hook and schema helper,
 * Gemini's signature of a call. */
const NOT_OURS = new Set(["functionCall", "functionDeclarations", "generateContent", "promptTokenCount", "moduleResolution", "readMetrics", "useEffect", "optimizeDeps", "asyncWebAssembly", "prepareStep", "jsonSchema", "thoughtSignature", "functionResponse"]);

test("every method, option or field the declarations' comments and the npm README name in code is declared", () => {
  const code = dts.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  const declared = new Set(code.match(/[A-Za-z_$][\w$]*/g));
  const readme = readFileSync(new URL("../../pkg/README.md", import.meta.url), "utf8").replace(/```[\s\S]*?```/g, "");
  for (const [what, text] of [["the .d.ts comments", dts.match(/\/\*[\s\S]*?\*\//g).join("\n")], ["the npm README", readme]]) {
    const named = new Set();
    for (const [, span] of text.matchAll(/`([^`\n]+)`/g)) {
      for (const word of span.match(/[A-Za-z_$][\w$]*/g) ?? []) if (/^[a-z]+[A-Z]\w*$/.test(word)) named.add(word);
    }
    const unknown = [...named].filter((name) => !declared.has(name) && !NOT_OURS.has(name));
    assert.deepEqual(unknown, [], `${what} name what the package does not declare`);
  }
});
