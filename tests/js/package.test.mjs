// The built packages (--target web in pkg/, --target bundler in target/pkg-bundler/) publish
// exactly what they need: every file the module graph uses is listed in `files`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const root = fileURLToPath(new URL("../..", import.meta.url));

for (const dir of ["pkg", "target/pkg-bundler"]) {
  test(`${dir}: package.json lists every module and wasm file, and only files that exist`, () => {
    const base = join(root, dir);
    assert.ok(existsSync(join(base, "package.json")), `${dir} is built by the test command`);
    const manifest = JSON.parse(readFileSync(join(base, "package.json"), "utf8"));
    assert.equal(manifest.name, "context-compactor");
    assert.equal(manifest.type, "module");
    assert.equal(manifest.exports["."].types, "./context_compactor.d.ts");
    for (const file of manifest.files) assert.ok(existsSync(join(base, file)), `${file} is listed but missing`);
    const needed = readdirSync(base).filter((f) => /\.(js|wasm|d\.ts)$/.test(f));
    for (const file of needed) assert.ok(manifest.files.includes(file), `${file} is built but not listed in files`);
  });
}
