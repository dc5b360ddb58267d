// Prints the download size of the built package: the wasm module plus its JS glue, raw and gzipped.
// Usage: node scripts/size.mjs <pkg-dir> [--json]
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { gzipSync, brotliCompressSync } from "node:zlib";

const dir = process.argv[2] ?? "pkg";
const files = readdirSync(dir).filter((f) => f.endsWith("_bg.wasm") || (f.endsWith(".js") && !f.endsWith(".d.js")));
const rows = files.map((file) => {
  const bytes = readFileSync(join(dir, file));
  return { file, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length, brotli: brotliCompressSync(bytes).length };
});
const total = rows.reduce((t, r) => ({ raw: t.raw + r.raw, gzip: t.gzip + r.gzip, brotli: t.brotli + r.brotli }), { raw: 0, gzip: 0, brotli: 0 });
if (process.argv.includes("--json")) {
  console.log(JSON.stringify({ files: rows, total }));
} else {
  for (const r of [...rows, { file: "total", ...total }]) {
    console.log(`${r.file.padEnd(32)} ${String(r.raw).padStart(8)} B raw ${String(r.gzip).padStart(8)} B gzip ${String(r.brotli).padStart(8)} B brotli`);
  }
}
