// Marks the WebAssembly features `multivalue` and `reference-types` as not used in a linked
// module's `target_features` section (in place, same length), so that wasm-bindgen keeps JS
// values in a JS array and returns results through memory, as it did before Rust 1.82 enabled
// both by default. WebKitGTK 2.50.6 (the engine of Safari 26) corrupted values of the package's
// debug build in 2 of 30 runs of a long test while the machine was busy, and in 0 of 50 once
// both were marked unused (bench/README.md, "WebKit"). Called by scripts/wasm-link.sh.
// Usage: node scripts/wasm-features.mjs module.wasm
import { readFileSync, writeFileSync } from "node:fs";

const UNUSED = new Set(["multivalue", "reference-types"]);
const path = process.argv[2];
const bytes = readFileSync(path);

const leb = (at) => {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte < 0x80) return [value, at];
  }
};

const text = (at) => {
  const [length, start] = leb(at);
  return [bytes.toString("utf8", start, start + length), start + length];
};

if (bytes.readUInt32LE(0) !== 0x6d736100) throw new Error(`${path} is not a WebAssembly module`);
// Crates compiled with reference types (RUSTFLAGS in the environment replaces the rustflags of
// .cargo/config.toml) import wasm-bindgen's externref intrinsics, which only its reference-types
// pass resolves: such a module is left as it is, and said so.
if (bytes.includes("__wbindgen_externref_xform__")) {
  console.error(`wasm-features: ${path} was compiled with reference types (is RUSTFLAGS set?); left as it is`);
  process.exit(0);
}
let marked = 0;
for (let at = 8; at < bytes.length; ) {
  const id = bytes[at];
  const [size, content] = leb(at + 1);
  at = content + size;
  if (id !== 0) continue;
  const [name, body] = text(content);
  if (name !== "target_features") continue;
  let [count, entry] = leb(body);
  for (; count > 0; count--) {
    const prefix = entry;
    const [feature, next] = text(entry + 1);
    if (UNUSED.has(feature) && bytes[prefix] === 0x2b) {
      bytes[prefix] = 0x2d;
      marked++;
    }
    entry = next;
  }
}
if (marked > 0) writeFileSync(path, bytes);
