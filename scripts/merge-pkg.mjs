// Merges the npm manifest fields of pkg.json into the package.json that wasm-pack wrote.
// Usage: node scripts/merge-pkg.mjs <pkg.json> <pkg-dir>
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";

const [manifestPath, pkgDir] = process.argv.slice(2);
const target = join(pkgDir, "package.json");
const generated = JSON.parse(readFileSync(target, "utf8"));
const ours = JSON.parse(readFileSync(manifestPath, "utf8"));
const merged = { ...generated, ...ours, version: generated.version };

const missing = (merged.files ?? []).filter((file) => !existsSync(join(pkgDir, file)));
if (missing.length > 0) {
  console.error(`pkg.json lists files the build did not produce: ${missing.join(", ")}`);
  process.exit(1);
}
writeFileSync(target, JSON.stringify(merged, null, 2) + "\n");
console.log(`merged ${manifestPath} into ${target}`);
