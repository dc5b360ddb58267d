// The built package (scripts/build.sh: the web flavour at the root, bundler/ and node/) publishes
// exactly what its entries need, and its manifest points every entry at files that exist.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, existsSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join, relative } from "node:path";

const base = fileURLToPath(new URL("../../pkg", import.meta.url));
const manifest = () => JSON.parse(readFileSync(join(base, "package.json"), "utf8"));
const walk = (dir) => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));

test("package.json: one package, every entry and type file exists", () => {
  const m = manifest();
  assert.equal(m.name, "context-compactor");
  assert.equal(m.type, "module");
  const targets = [];
  const collect = (value) => (typeof value === "string" ? targets.push(value) : Object.values(value).forEach(collect));
  collect(m.exports);
  for (const field of ["main", "module", "browser", "types"]) targets.push(m[field]);
  for (const target of targets) assert.ok(existsSync(join(base, target)), `${target} is named but missing`);
  assert.equal(m.exports["."].default, "./bundler/context_compactor.js", "bundlers get the bundler build by default");
  assert.equal(m.exports["./web"].default, "./context_compactor.js");
  assert.equal(m.exports["."].node.default, "./node/index.mjs");
});

test("package.json: sideEffects keep every module that initialises the wasm", () => {
  const { sideEffects } = manifest();
  assert.ok(Array.isArray(sideEffects), "sideEffects: false lets a bundler drop the init module");
  for (const entry of ["./bundler/context_compactor.js", "./context_compactor.js", "./node/*"]) assert.ok(sideEffects.includes(entry), entry);
});

test("files: every module, wasm and type file the build produced is published, nothing missing", () => {
  const { files } = manifest();
  for (const file of files) assert.ok(existsSync(join(base, file)), `${file} is listed but missing`);
  const built = walk(base)
    .map((f) => relative(base, f))
    .filter((f) => /\.(m?js|wasm|d\.m?ts)$/.test(f));
  for (const file of built) {
    assert.ok(files.some((listed) => file === listed || file.startsWith(`${listed}/`)), `${file} is built but not published`);
  }
});
