// scripts/wasm-features.mjs, the linker's last step: it marks `multivalue` and `reference-types`
// unused in a module compiled without them, and leaves alone a module whose crates were compiled
// with reference types (wasm-bindgen's externref intrinsics imported), which only wasm-bindgen's
// reference-types pass can resolve.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("../../scripts/wasm-features.mjs", import.meta.url));

const leb = (n) => {
  const out = [];
  do {
    out.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>>= 7;
  } while (n);
  return out;
};
const name = (text) => [...leb(Buffer.byteLength(text)), ...Buffer.from(text)];
const section = (id, body) => [id, ...leb(body.length), ...body];

/** A module importing one function from `module`, its features section listing `features`. */
const moduleImportingFrom = (module, features) =>
  Buffer.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 0, 0]),
    ...section(2, [1, ...name(module), ...name("f"), 0, 0]),
    ...section(0, [...name("target_features"), ...leb(features.length), ...features.flatMap((feature) => [0x2b, ...name(feature)])]),
  ]);

/** The features section of `bytes` after the script ran on it, as `+name`/`-name`. */
const featuresAfterTheScript = (bytes) => {
  assert.ok(WebAssembly.validate(bytes), "the test's module is valid");
  const path = join(mkdtempSync(join(tmpdir(), "wasm-features-")), "module.wasm");
  writeFileSync(path, bytes);
  execFileSync(process.execPath, [SCRIPT, path], { stdio: "pipe" });
  const after = readFileSync(path);
  const features = [];
  for (const feature of ["bulk-memory", "multivalue", "reference-types"]) {
    const at = after.indexOf(Buffer.from(name(feature)));
    if (at > 0) features.push(String.fromCharCode(after[at - 1]) + feature);
  }
  return features;
};

test("a module compiled without reference types has multivalue and reference-types marked unused, nothing else", () => {
  const bytes = moduleImportingFrom("wbg", ["bulk-memory", "multivalue", "reference-types"]);
  assert.deepEqual(featuresAfterTheScript(bytes), ["+bulk-memory", "-multivalue", "-reference-types"]);
});

test("a module whose crates were compiled with reference types is left as it is (RUSTFLAGS set)", () => {
  const bytes = moduleImportingFrom("__wbindgen_externref_xform__", ["bulk-memory", "multivalue", "reference-types"]);
  assert.deepEqual(featuresAfterTheScript(bytes), ["+bulk-memory", "+multivalue", "+reference-types"]);
});
