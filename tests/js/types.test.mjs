// The shipped .d.ts names every type (no `any`) and a strict TS program using the API compiles.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const dts = readFileSync(new URL("../../pkg/context_compactor.d.ts", import.meta.url), "utf8");

test("a strict TypeScript program using the API type-checks", () => {
  const tsc = fileURLToPath(new URL("node_modules/typescript/bin/tsc", import.meta.url));
  execFileSync(process.execPath, [tsc, "-p", here], { stdio: "inherit" });
});

test("the LogStore declarations use named types, not any", () => {
  const start = dts.indexOf("export class LogStore");
  assert.ok(start >= 0, "LogStore is declared");
  const end = dts.indexOf("\n}", start);
  const body = dts.slice(start, end);
  assert.doesNotMatch(body, /:\s*any\b|<any>|\bany\[\]/, body);
  assert.match(body, /appendExecution\(entry: ExecutionInput\): ExecutionEntry/);
  assert.match(body, /executionLog\(\): ExecutionEntry\[\]/);
});
