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

/** The active data segments' offsets and the mutable i32 globals' initial values of a module. */
function memoryLayout(bytes) {
  let at = 8;
  /** A LEB128 number at `at`, signed or not. */
  const leb = (signed) => {
    let value = 0, shift = 0, byte;
    do {
      byte = bytes[at++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return signed && byte & 0x40 ? value - 2 ** shift : value;
  };
  const uleb = () => leb(false);
  const sleb = () => leb(true);
  const layout = { stackPointers: [], dataOffsets: [] };
  while (at < bytes.length) {
    const id = bytes[at++];
    const size = uleb();
    const end = at + size;
    if (id === 6) {
      for (let n = uleb(); n > 0; n--) {
        const [type, mutable, op] = [bytes[at++], bytes[at++], bytes[at++]];
        const value = op === 0x41 ? sleb() : null;
        while (bytes[at++] !== 0x0b);
        if (type === 0x7f && mutable === 1 && value !== null) layout.stackPointers.push(value);
      }
    }
    if (id === 11) {
      for (let n = uleb(); n > 0; n--) {
        const flag = uleb();
        if (flag === 1) {
          const length = uleb();
          at += length;
          continue;
        }
        if (flag === 2) uleb();
        assert.equal(bytes[at++], 0x41, "a data segment's offset is an i32.const");
        layout.dataOffsets.push(sleb());
        at++;
        const length = uleb();
        at += length;
      }
    }
    at = end;
  }
  return layout;
}

// Cargo.toml runs wasm-opt with --low-memory-unused: sound only while nothing lives in the low
// 1 KiB of memory, i.e. the module is linked stack-first (the stack below the data, from 1 MiB
// down) and no data segment starts under 1 KiB.
test("wasm: linked stack-first, nothing in the low 1 KiB that --low-memory-unused assumes free", () => {
  for (const wasm of ["context_compactor_bg.wasm", "bundler/context_compactor_bg.wasm", "node/context_compactor_bg.wasm"]) {
    const { stackPointers, dataOffsets } = memoryLayout(readFileSync(join(base, wasm)));
    assert.ok(dataOffsets.length > 0, `${wasm}: data segments found`);
    const lowest = Math.min(...dataOffsets);
    assert.ok(lowest >= 1024, `${wasm}: data starts at ${lowest}`);
    const stack = stackPointers.filter((value) => value >= 1024 && value <= lowest);
    assert.ok(stack.length > 0, `${wasm}: a stack pointer at or below the data (${stackPointers}) and above 1 KiB`);
  }
});

test("web entry: every class is freed by free() or, without it, when garbage-collected (the README's words)", () => {
  const glue = readFileSync(join(base, "context_compactor.js"), "utf8");
  for (const cls of ["LogStore", "Compactor", "Archives", "RecallTool"]) {
    assert.match(glue, new RegExp(`const ${cls}Finalization = \\(typeof FinalizationRegistry === 'undefined'\\)`), cls);
    // Registered as it is made: by its constructor, or where the module hands one out.
    assert.match(glue, new RegExp(`${cls}Finalization\\.register\\((this|obj), (this|obj)\\.__wbg_ptr, (this|obj)\\)`), cls);
    assert.match(glue, new RegExp(`${cls}Finalization\\.unregister\\(this\\)`), `${cls}: free() unregisters`);
  }
});
