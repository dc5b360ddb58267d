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
  // Every bundler loads the web flavour (its .wasm named by new URL(…, import.meta.url)); the
  // bundler flavour (wasm ES-module integration) is for webpack 5.109 and later only.
  assert.equal(m.exports["."].default, "./context_compactor.js", "bundlers get the web build by default");
  for (const field of ["module", "browser"]) assert.equal(m[field], "./context_compactor.js", `${field}: Parcel reads it, not exports`);
  assert.equal(m.exports["./web"].default, "./context_compactor.js");
  assert.equal(m.exports["./bundler"].default, "./bundler/context_compactor.js");
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

/** A reader of a module's sections: its position `at`, LEB128 numbers read from there, and
 * `sections(visit)`, which calls `visit(id)` at the start of each section's content. */
function moduleReader(bytes) {
  const reader = { at: 8 };
  const leb = (signed) => {
    let value = 0, shift = 0, byte;
    do {
      byte = bytes[reader.at++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return signed && byte & 0x40 ? value - 2 ** shift : value;
  };
  reader.uleb = () => leb(false);
  reader.sleb = () => leb(true);
  reader.sections = (visit) => {
    while (reader.at < bytes.length) {
      const id = bytes[reader.at++];
      const size = reader.uleb();
      const end = reader.at + size;
      visit(id);
      reader.at = end;
    }
  };
  return reader;
}

/** The active data segments' offsets and the mutable i32 globals' initial values of a module. */
function memoryLayout(bytes) {
  const reader = moduleReader(bytes);
  const { uleb, sleb } = reader;
  const layout = { stackPointers: [], dataOffsets: [] };
  reader.sections((id) => {
    if (id === 6) {
      for (let n = uleb(); n > 0; n--) {
        const [type, mutable, op] = [bytes[reader.at++], bytes[reader.at++], bytes[reader.at++]];
        const value = op === 0x41 ? sleb() : null;
        while (bytes[reader.at++] !== 0x0b);
        if (type === 0x7f && mutable === 1 && value !== null) layout.stackPointers.push(value);
      }
    }
    if (id === 11) {
      for (let n = uleb(); n > 0; n--) {
        const flag = uleb();
        if (flag === 1) {
          const length = uleb();
          reader.at += length;
          continue;
        }
        if (flag === 2) uleb();
        assert.equal(bytes[reader.at++], 0x41, "a data segment's offset is an i32.const");
        layout.dataOffsets.push(sleb());
        reader.at++;
        const length = uleb();
        reader.at += length;
      }
    }
  });
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

/** The function types (params, results) and the tables' element types of a module. */
function valueTypes(bytes) {
  const reader = moduleReader(bytes);
  const { uleb } = reader;
  const vector = () => Array.from({ length: uleb() }, () => bytes[reader.at++]);
  const limits = () => (uleb() & 1 ? (uleb(), uleb()) : uleb());
  const found = { functions: [], tables: [] };
  reader.sections((id) => {
    if (id === 1) {
      for (let n = uleb(); n > 0; n--) {
        assert.equal(bytes[reader.at++], 0x60, "a plain function type");
        found.functions.push({ params: vector(), results: vector() });
      }
    }
    if (id === 2) {
      for (let n = uleb(); n > 0; n--) {
        reader.at += uleb();
        reader.at += uleb();
        const kind = bytes[reader.at++];
        if (kind === 0) uleb();
        if (kind === 1) found.tables.push(bytes[reader.at++]), limits();
        if (kind === 2) limits();
        if (kind === 3) reader.at += 2;
      }
    }
    if (id === 4) {
      for (let n = uleb(); n > 0; n--) found.tables.push(bytes[reader.at++]), limits();
    }
  });
  return found;
}

// .cargo/config.toml builds without `multivalue` and `reference-types` (WebKitGTK 2.50.6
// corrupted values of modules built with both; scripts/wasm-features.mjs).
test("wasm: no function returns more than one value, no externref anywhere", () => {
  const EXTERNREF = 0x6f;
  for (const wasm of ["context_compactor_bg.wasm", "bundler/context_compactor_bg.wasm", "node/context_compactor_bg.wasm"]) {
    const { functions, tables } = valueTypes(readFileSync(join(base, wasm)));
    assert.ok(functions.length > 50, `${wasm}: function types read`);
    const multi = functions.filter((type) => type.results.length > 1);
    assert.deepEqual(multi, [], `${wasm}: functions returning several values`);
    const externref = functions.filter((type) => [...type.params, ...type.results].includes(EXTERNREF));
    assert.deepEqual(externref, [], `${wasm}: functions taking or returning externref`);
    assert.ok(!tables.includes(EXTERNREF), `${wasm}: a table of externref`);
  }
});

test("web entry: every class is freed by free() or, without it, when garbage-collected (the README's words)", () => {
  // The glue is minified (scripts/merge-pkg.mjs): each class's registry has a short name of its
  // own; what it calls and how it registers are wasm-bindgen's, names of properties terser keeps.
  const glue = readFileSync(join(base, "context_compactor.js"), "utf8");
  for (const cls of ["LogStore", "Compactor", "Archives", "RecallTool"]) {
    const lower = cls.toLowerCase();
    const made = glue.match(new RegExp(`([\\w$]+)="undefined"==typeof FinalizationRegistry\\?\\{register:\\(\\)=>\\{\\},unregister:\\(\\)=>\\{\\}\\}:new FinalizationRegistry\\(([\\w$]+)=>[\\w$]+\\.__wbg_${lower}_free\\(\\2,1\\)\\)`));
    assert.ok(made, `${cls}: a FinalizationRegistry that frees it`);
    const registry = made[1].replace("$", "\\$");
    // Registered as it is made: by its constructor, or where the module hands one out.
    assert.match(glue, new RegExp(`[^\\w$]${registry}\\.register\\(([\\w$]+),\\1\\.__wbg_ptr,\\1\\)`), cls);
    assert.match(glue, new RegExp(`[^\\w$]${registry}\\.unregister\\(this\\)`), `${cls}: free() unregisters`);
  }
});
