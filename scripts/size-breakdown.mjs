// Where the bytes of the web entry's wasm go: builds the release module as `scripts/build.sh`
// does (wasm-bindgen, then `wasm-opt -Oz`), but keeps the function names (`wasm-opt -g`), and
// sums the code of each function into groups by what it belongs to. Prints a Markdown table.
// Usage: node scripts/size-breakdown.mjs [--json | --functions] (--functions: every function,
// its size, group and name, one a line, largest first)
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = fileURLToPath(new URL("..", import.meta.url));
const PATH = [join(root, "node_modules/.bin"), join(homedir(), ".cargo/bin"), process.env.PATH].join(":");
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, env: { ...process.env, PATH }, stdio: ["ignore", "ignore", "inherit"] });

/** Groups, first match wins; a function's name after wasm-bindgen is its demangled Rust path. */
const GROUPS = [
  [/dlmalloc|__rdl_|__rust_(alloc|dealloc|realloc)/, "allocator"],
  [/<f64 as|flt2dec|dec2flt|zmij|itoa/, "number printing and parsing"],
  [/js_sys::futures|wasm_bindgen_futures/, "async bodies under future_to_promise"],
  [/ shim$| shim /, "exported functions (bodies inlined)"],
  [/js_sys|web_sys|wasm_bindgen|^__wbg|^__externref|^__wbindgen/, "js-sys, web-sys, wasm-bindgen runtime"],
  [/context_compactor::web/, "crate: web layer"],
  [/context_compactor::core::steps/, "crate: steps"],
  [/context_compactor::core::store/, "crate: store"],
  [/context_compactor::core::providers/, "crate: providers"],
  [/context_compactor::core::log/, "crate: log"],
  [/context_compactor::core::json/, "crate: json"],
  [/context_compactor::core::run/, "crate: run"],
  [/context_compactor::core::order/, "crate: order (the one sort, the one map)"],
  [/context_compactor/, "crate: model, error, ports"],
  [/::fmt|escape_debug|core::panicking/, "core::fmt and panics"],
  [/sort/, "sorting"],
  [/alloc::|hashbrown|btree|std::collections/, "collections, String, Vec"],
];

/** The group of the function `name`: the first of `GROUPS` that matches it. */
const groupOf = (name) => (GROUPS.find(([pattern]) => pattern.test(name)) ?? [null, "other (core, std, unnamed)"])[1];

/** The sizes of a module's sections and the size of each function body, with its name. */
function readModule(bytes) {
  let at = 8;
  const leb = () => {
    let value = 0;
    let scale = 1;
    let byte;
    do {
      byte = bytes[at++];
      value += (byte & 0x7f) * scale;
      scale *= 128;
    } while (byte & 0x80);
    return value;
  };
  const skipName = () => {
    const length = leb();
    at += length;
  };
  const sections = [];
  const bodies = [];
  const names = new Map();
  let imported = 0;
  while (at < bytes.length) {
    const id = bytes[at++];
    const size = leb();
    const start = at;
    const end = start + size;
    if (id === 2) {
      for (let n = leb(); n > 0; n--) {
        skipName();
        skipName();
        const kind = bytes[at++];
        if (kind === 0) {
          leb();
          imported++;
        } else if (kind === 1) {
          at++;
          if (bytes[at++] & 1) leb();
          leb();
        } else if (kind === 2) {
          if (bytes[at++] & 1) leb();
          leb();
        } else {
          at += 2;
        }
      }
    } else if (id === 10) {
      for (let n = leb(); n > 0; n--) {
        const length = leb();
        bodies.push(length);
        at += length;
      }
    } else if (id === 0) {
      const length = leb();
      const name = bytes.subarray(at, at + length).toString();
      at += length;
      if (name === "name") {
        while (at < end) {
          const sub = bytes[at++];
          const subEnd = leb() + at;
          if (sub === 1) {
            for (let n = leb(); n > 0; n--) {
              const index = leb();
              const length = leb();
              names.set(index, bytes.subarray(at, at + length).toString());
              at += length;
            }
          }
          at = subEnd;
        }
      }
    }
    sections.push({ id, size, gzip: gzipSync(bytes.subarray(start, end), { level: 9 }).length });
    at = end;
  }
  return { sections, functions: bodies.map((size, i) => ({ size, name: names.get(i + imported) ?? "" })) };
}

const work = mkdtempSync(join(tmpdir(), "size-breakdown-"));
try {
  run("cargo", ["build", "--release", "--target", "wasm32-unknown-unknown", "--quiet"]);
  run("wasm-bindgen", ["--target", "web", "--out-dir", work, join(root, "target/wasm32-unknown-unknown/release/context_compactor.wasm")]);
  const named = join(work, "named.wasm");
  // The flags of Cargo.toml's wasm-pack profile, names kept.
  run("wasm-opt", ["-Oz", "-Oz", "--low-memory-unused", "--one-caller-inline-max-function-size=20", "-g", "--enable-bulk-memory", "--enable-nontrapping-float-to-int", join(work, "context_compactor_bg.wasm"), "-o", named]);
  const { sections, functions } = readModule(readFileSync(named));
  const code = functions.reduce((total, f) => total + f.size, 0);
  const groups = new Map();
  for (const f of functions) {
    const group = groupOf(f.name);
    const entry = groups.get(group) ?? { bytes: 0, functions: 0 };
    entry.bytes += f.size;
    entry.functions += 1;
    groups.set(group, entry);
  }
  const rows = [...groups].sort((a, b) => b[1].bytes - a[1].bytes).map(([group, e]) => ({ group, ...e, share: e.bytes / code }));
  const data = sections.find((s) => s.id === 11);
  const largest = [...functions].sort((a, b) => b.size - a.size).slice(0, 12);
  if (process.argv.includes("--functions")) {
    for (const f of [...functions].sort((a, b) => b.size - a.size)) {
      console.log(`${f.size}\t${groupOf(f.name)}\t${f.name.replace(/::h[0-9a-f]{16}$/, "")}`);
    }
  } else if (process.argv.includes("--json")) {
    console.log(JSON.stringify({ code, data, rows, largest }));
  } else {
    console.log(`code section ${code.toLocaleString("en-US")} B raw in ${functions.length} functions; data section ${data.size.toLocaleString("en-US")} B raw, ${data.gzip.toLocaleString("en-US")} B gzip\n`);
    console.log("| group | code bytes | share | functions |\n| --- | ---: | ---: | ---: |");
    for (const r of rows) console.log(`| ${r.group} | ${r.bytes.toLocaleString("en-US")} | ${(r.share * 100).toFixed(1)}% | ${r.functions} |`);
    console.log("\nLargest functions:\n");
    for (const f of largest) console.log(`- ${f.size.toLocaleString("en-US")} B ${f.name.replace(/::h[0-9a-f]{16}$/, "")}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
