// Prints the download size of the web entry of the built package: what `init()` fetches (the
// wasm module) and its JS module (the snippets inlined into it; any JS snippet left beside it
// under snippets/ counted too), raw, gzipped and brotli. With --max the gzip total must stay
// within the budget pkg.json names (`sizeBudget.webGzipBytes`); over it the script says by how
// much and exits 1.
// Usage: node scripts/size.mjs <pkg-dir> [--json] [--max]
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync, brotliCompressSync } from "node:zlib";

const dir = process.argv[2] ?? "pkg";
const root = join(fileURLToPath(import.meta.url), "..", "..");

/** Every file under `folder`, as paths relative to `dir`. */
function walk(folder) {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? walk(path) : [relative(dir, path)];
  });
}

const top = readdirSync(dir);
const entry = top.filter((f) => f.endsWith("_bg.wasm") || f === "context_compactor.js");
const snippets = top.includes("snippets") ? walk(join(dir, "snippets")).filter((f) => f.endsWith(".js")) : [];
const rows = [...entry, ...snippets].map((file) => {
  const bytes = readFileSync(join(dir, file));
  return { file, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length, brotli: brotliCompressSync(bytes).length };
});
const total = rows.reduce((t, r) => ({ raw: t.raw + r.raw, gzip: t.gzip + r.gzip, brotli: t.brotli + r.brotli }), { raw: 0, gzip: 0, brotli: 0 });
const budget = JSON.parse(readFileSync(join(root, "pkg.json"), "utf8")).sizeBudget?.webGzipBytes;

if (process.argv.includes("--json")) {
  console.log(JSON.stringify({ files: rows, total, budget }));
} else {
  for (const r of [...rows, { file: "total (web entry)", ...total }]) {
    console.log(`${r.file.padEnd(60)} ${String(r.raw).padStart(8)} B raw ${String(r.gzip).padStart(8)} B gzip ${String(r.brotli).padStart(8)} B brotli`);
  }
}
if (process.argv.includes("--max")) {
  if (!Number.isFinite(budget)) {
    console.error("pkg.json names no sizeBudget.webGzipBytes");
    process.exit(1);
  }
  const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
  if (total.gzip > budget) {
    console.error(`the web entry is ${kib(total.gzip)} gzip, ${kib(total.gzip - budget)} over its budget of ${kib(budget)} (pkg.json sizeBudget): cut elsewhere, or show why it cannot be`);
    process.exit(1);
  }
  console.log(`within budget: ${kib(total.gzip)} of ${kib(budget)} gzip`);
}
