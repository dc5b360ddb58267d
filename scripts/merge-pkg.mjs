// Merges the npm manifest fields of pkg.json into the package.json that wasm-pack wrote.
// Usage: node scripts/merge-pkg.mjs <pkg.json> <pkg-dir>
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";

const [manifestPath, pkgDir] = process.argv.slice(2);
const target = join(pkgDir, "package.json");
const generated = JSON.parse(readFileSync(target, "utf8"));
const ours = JSON.parse(readFileSync(manifestPath, "utf8"));
// Files: ours plus whatever this target needs (the bundler target adds a _bg.js module).
const files = [...new Set([...(ours.files ?? []), ...(generated.files ?? [])])];
const merged = { ...generated, ...ours, files, version: generated.version };

const missing = (merged.files ?? []).filter((file) => !existsSync(join(pkgDir, file)));
if (missing.length > 0) {
  console.error(`pkg.json lists files the build did not produce: ${missing.join(", ")}`);
  process.exit(1);
}
writeFileSync(target, JSON.stringify(merged, null, 2) + "\n");

// wasm-bindgen cannot export constants: REQUIRED_SECTIONS is appended to the entry module and
// its declarations, once. A package test checks it equals requiredSections() from Rust.
const SECTIONS = ["OBJECTIVE ACHIEVED", "KEY DISCOVERIES", "SUCCESSFUL SOLUTIONS"];
const marker = "/* context-compactor constants */";
const entry = join(pkgDir, generated.module ?? generated.main ?? "context_compactor.js");
const types = join(pkgDir, generated.types ?? "context_compactor.d.ts");
const appendOnce = (file, text) => {
  const current = readFileSync(file, "utf8");
  if (!current.includes(marker)) writeFileSync(file, `${current}\n${marker}\n${text}\n`);
};
appendOnce(entry, `/** Titles of the sections a summary must have (as ### headings). */\nexport const REQUIRED_SECTIONS = Object.freeze(${JSON.stringify(SECTIONS)});`);
appendOnce(types, `/** Titles of the sections a summary must have (as ### headings). */\nexport declare const REQUIRED_SECTIONS: readonly ${JSON.stringify(SECTIONS)};`);
console.log(`merged ${manifestPath} into ${target}`);
