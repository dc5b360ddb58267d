// Assembles the npm package that scripts/build.sh built: the web flavour at the root, bundler/
// and node/ beside it. Writes package.json (pkg.json's fields, wasm-pack's version), gives every
// entry the same exports (a default `init()`, `REQUIRED_SECTIONS`), turns the web flavour's
// calls before `init()` (and a .wasm it cannot fetch) into a clear error, inlines its snippets
// (the web entry is two files), and makes the Node flavour's snippets CommonJS.
// Usage: node scripts/merge-pkg.mjs <pkg.json> <pkg-dir>
import { readFileSync, writeFileSync, existsSync, rmSync, readdirSync, statSync, copyFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const [manifestPath, pkgDir] = process.argv.slice(2);
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const generated = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const ours = JSON.parse(readFileSync(manifestPath, "utf8"));

// The flavours in sub-folders are parts of this package, not packages of their own.
for (const flavour of ["bundler", "node"]) {
  for (const file of ["package.json", "README.md", "LICENSE", ".gitignore"]) rmSync(join(pkgDir, flavour, file), { force: true });
}
rmSync(join(pkgDir, ".gitignore"), { force: true });
for (const file of ["CHANGELOG.md", "LICENSE"]) if (existsSync(join(root, file))) copyFileSync(join(root, file), join(pkgDir, file));
if (existsSync(join(root, "docs/npm-README.md"))) copyFileSync(join(root, "docs/npm-README.md"), join(pkgDir, "README.md"));

const SECTIONS = ["OBJECTIVE ACHIEVED", "KEY DISCOVERIES", "SUCCESSFUL SOLUTIONS"];
const marker = "/* context-compactor additions */";
const appendOnce = (file, text) => {
  const current = readFileSync(file, "utf8");
  if (!current.includes(marker)) writeFileSync(file, `${current}\n${marker}\n${text}\n`);
};
const replaceOnce = (file, from, to) => {
  const current = readFileSync(file, "utf8");
  if (current.includes(to)) return;
  if (!current.includes(from)) {
    console.error(`${file}: expected glue text not found (wasm-bindgen changed?): ${from}`);
    process.exit(1);
  }
  writeFileSync(file, current.replace(from, to));
};
const sectionsJs = `/** Titles of the sections a summary must have (as ### headings). */\nexport const REQUIRED_SECTIONS = Object.freeze(${JSON.stringify(SECTIONS)});`;
const sectionsDts = `/** Titles of the sections a summary must have (as ### headings). */\nexport declare const REQUIRED_SECTIONS: readonly ${JSON.stringify(SECTIONS)};`;

const walk = (dir) => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));
/** The path, from `dir`, of the snippet that defines the ContextCompactorError class. */
const errorsSnippet = (dir) => {
  const found = walk(join(dir, "snippets")).find((f) => f.endsWith("/src/web/errors.js"));
  if (!found) {
    console.error(`${dir}: the errors.js snippet is missing`);
    process.exit(1);
  }
  return `./${found.slice(dir.length + 1)}`;
};
const exportClass = (dir) => `export { ContextCompactorError } from "${errorsSnippet(dir)}";`;

/** `file` without its whole comment lines, blank lines and indentation (kept: the
 * `@ts-self-types` line that must stay first, and the marker of this script's additions).
 * Refused for a file with a template literal or a string spanning lines, whose lines this
 * cannot tell from code. */
const stripComments = (file) => {
  const text = readFileSync(file, "utf8");
  if (text.split("\n").some((line) => (line.match(/`/g) ?? []).length % 2 === 1 || line.endsWith("\\"))) {
    console.error(`${file}: a template literal or a string spans lines; its comments and indentation cannot be stripped line by line`);
    process.exit(1);
  }
  const kept = [];
  let inComment = false;
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed.startsWith("/* @ts-self-types") || trimmed === marker) {
      kept.push(line);
    } else if (inComment) {
      inComment = !trimmed.includes("*/");
    } else if (trimmed.startsWith("/*")) {
      inComment = !trimmed.includes("*/");
    } else if (trimmed !== "" && !trimmed.startsWith("//")) {
      kept.push(line.trimStart());
    }
  }
  writeFileSync(file, `${kept.join("\n")}\n`);
};

// The JS snippets ship without their comments and indentation (their source in src/web/ keeps
// them): about 2.2 KB gzip of the web entry.
for (const dir of [pkgDir, join(pkgDir, "bundler"), join(pkgDir, "node")]) {
  if (!existsSync(join(dir, "snippets"))) continue;
  for (const file of walk(join(dir, "snippets")).filter((f) => f.endsWith(".js"))) stripComments(file);
}

// Web flavour (root): a call before init() is a ContextCompactorError "not_initialized".
const web = join(pkgDir, "context_compactor.js");
{
  const text = readFileSync(web, "utf8");
  const importLine = `import { ContextCompactorError as NotReadyError } from "${errorsSnippet(pkgDir)}";\n`;
  if (!text.includes(importLine)) {
    // After a leading `/* @ts-self-types=… */`, which must stay the first line.
    const first = text.startsWith("/* @ts-self-types") ? text.indexOf("\n") + 1 : 0;
    writeFileSync(web, text.slice(0, first) + importLine + text.slice(first));
  }
}
replaceOnce(
  web,
  "let wasmModule, wasmInstance, wasm;",
  `let wasmModule, wasmInstance, wasm;
/** Stands in for the module until init() has run: any use throws the error a user can act on. */
const NOT_READY = new Proxy({}, {
  get() {
    throw new NotReadyError("context-compactor is not initialised: call \`await init()\` (the default export) before using it", "not_initialized");
  },
});
wasm = NOT_READY;`,
);
for (const guard of ["function initSync(module) {\n    if (wasm !== undefined) return wasm;", "async function __wbg_init(module_or_path) {\n    if (wasm !== undefined) return wasm;"]) {
  replaceOnce(web, guard, guard.replace("if (wasm !== undefined)", "if (wasm !== undefined && wasm !== NOT_READY)"));
}
appendOnce(web, `${sectionsJs}\n${exportClass(pkgDir)}`);
appendOnce(join(pkgDir, "context_compactor.d.ts"), sectionsDts);

// Inline flavour: the web flavour with the .wasm as base64 in the module, for setups where
// fetching a second file is awkward (a single-file build, a CSP that blocks it).
{
  const wasm = readFileSync(join(pkgDir, "context_compactor_bg.wasm")).toString("base64");
  writeFileSync(
    join(pkgDir, "inline.js"),
    `// The web entry with its WebAssembly inlined (base64): \`await init()\` fetches nothing.
import initWeb from "./context_compactor.js";
export * from "./context_compactor.js";

const WASM_BASE64 = "${wasm}";

/** Instantiates the inlined module; later calls do nothing. */
export default async function init() {
  const bytes = Uint8Array.from(atob(WASM_BASE64), (c) => c.charCodeAt(0));
  await initWeb({ module_or_path: bytes });
}
`,
  );
  writeFileSync(
    join(pkgDir, "inline.d.ts"),
    `export * from "./context_compactor.js";\n/** Instantiates the inlined WebAssembly module (nothing is fetched); later calls do nothing. */\nexport default function init(): Promise<void>;\n`,
  );
}

// Bundler flavour: initialised when imported; init() and initSync() exist so that the same code
// runs with every entry.
const initDoc = "/** Nothing to do: this entry is initialised when it is imported. Kept so that code written for the web entry runs unchanged. */";
appendOnce(join(pkgDir, "bundler/context_compactor.js"), `${sectionsJs}\n${exportClass(join(pkgDir, "bundler"))}\n${initDoc}\nexport default async function init() {}\n${initDoc}\nexport function initSync() {}`);
appendOnce(join(pkgDir, "bundler/context_compactor.d.ts"), `${sectionsDts}\n${initDoc}\nexport default function init(): Promise<void>;\n${initDoc}\nexport function initSync(): void;`);

// Node flavour: CommonJS (node/package.json says so), its snippets too; an ES entry beside it.
writeFileSync(join(pkgDir, "node/package.json"), JSON.stringify({ type: "commonjs" }, null, 2) + "\n");
if (existsSync(join(pkgDir, "node/snippets"))) {
  for (const file of walk(join(pkgDir, "node/snippets")).filter((f) => f.endsWith(".js"))) {
    const text = readFileSync(file, "utf8");
    if (text.includes("module.exports")) continue;
    const names = [...text.matchAll(/^export (?:async function|function|class) (\w+)/gm)].map((m) => m[1]);
    writeFileSync(file, `${text.replace(/^export (async function|function|class) /gm, "$1 ")}\nmodule.exports = { ${names.join(", ")} };\n`);
  }
}
appendOnce(
  join(pkgDir, "node/context_compactor.js"),
  `module.exports.REQUIRED_SECTIONS = Object.freeze(${JSON.stringify(SECTIONS)});\nmodule.exports.ContextCompactorError = require("${errorsSnippet(join(pkgDir, "node"))}").ContextCompactorError;`,
);
writeFileSync(
  join(pkgDir, "node/index.mjs"),
  `// The Node entry as an ES module: the CommonJS build, initialised on import.\nexport * from "./context_compactor.js";\n${initDoc}\nexport default async function init() {}\n${initDoc}\nexport function initSync() {}\n`,
);
copyFileSync(join(pkgDir, "bundler/context_compactor.d.ts"), join(pkgDir, "node/index.d.mts"));
appendOnce(join(pkgDir, "node/context_compactor.d.ts"), sectionsDts);

// `[Symbol.dispose]` needs TypeScript's esnext.disposable lib; a project on lib es2022 would fail
// to compile the declarations. `free()` stays.
for (const dts of walk(pkgDir).filter((f) => /\.d\.m?ts$/.test(f))) {
  const text = readFileSync(dts, "utf8");
  const cleaned = text.replace(/^\s*\[Symbol\.dispose\]\(\): void;\n/gm, "");
  if (cleaned !== text) writeFileSync(dts, cleaned);
}

// A .wasm that cannot be fetched: init() rejects with the error a person can act on.
replaceOnce(
  web,
  "throw new Error(`failed to fetch Wasm: ${module.status} ${module.statusText} fetching '${module.url}'`);",
  "throw new NotReadyError(`context-compactor could not be initialised: fetching ${module.url} answered ${module.status} ${module.statusText}; serve context_compactor_bg.wasm beside context_compactor.js, or pass its URL to init({ module_or_path })`, \"not_initialized\");",
);

// The web entry is two files, the module and its .wasm: the JS snippets wasm-bindgen writes
// beside it (snippets/) are inlined into the module, each in a scope of its own, so that a
// page serving the two files has all it needs (and one gzip stream is 0.6 KB smaller than
// five).
{
  let text = readFileSync(web, "utf8");
  const bodies = new Map();
  const scope = (path) => {
    if (!bodies.has(path)) {
      const source = readFileSync(join(pkgDir, path), "utf8");
      if (/^\s*(import|export \{|export default|export \*)/m.test(source)) {
        console.error(`${path}: a snippet that imports or re-exports cannot be inlined`);
        process.exit(1);
      }
      const names = [...source.matchAll(/^export (?:async function|function|class|const|let) (\w+)/gm)].map((m) => m[1]);
      const body = source.replace(/^export (async function|function|class|const|let) /gm, "$1 ");
      bodies.set(path, { name: `__snippet${bodies.size}`, code: `(() => {\n${body}return { ${names.join(", ")} };\n})()` });
    }
    return bodies.get(path).name;
  };
  const renamed = (list) => list.replace(/(\w+) as (\w+)/g, "$1: $2");
  text = text
    .replace(/^import \{([^}]*)\} from ["'](\.\/snippets\/[^"']+)["'];?$/gm, (_, list, path) => `const {${renamed(list)}} = ${scope(path)};`)
    .replace(/^import \* as (\w+) from ["'](\.\/snippets\/[^"']+)["'];?$/gm, (_, name, path) => `const ${name} = ${scope(path)};`)
    .replace(/^export \{([^}]*)\} from ["'](\.\/snippets\/[^"']+)["'];?$/gm, (_, list, path) => `const {${renamed(list)}} = ${scope(path)};\nexport {${list.replace(/\w+ as /g, "")}};`);
  // (The import object still names each snippet's path: as the wasm's import module, a name.)
  if (/(from|import\()\s*["']\.\/snippets\//.test(text)) {
    console.error(`${web}: an import of snippets/ is left that could not be inlined`);
    process.exit(1);
  }
  const definitions = [...bodies.values()].map(({ name, code }) => `const ${name} = ${code};`).join("\n");
  const first = text.startsWith("/* @ts-self-types") ? text.indexOf("\n") + 1 : 0;
  writeFileSync(web, `${text.slice(0, first)}${definitions}\n${text.slice(first)}`);
  rmSync(join(pkgDir, "snippets"), { recursive: true, force: true });
}

// The web entry's glue without wasm-bindgen's copies of the doc comments (3.6 KB gzip) and its
// indentation (0.4 KB): editors read the comments from the .d.ts, which keeps them.
stripComments(web);

const files = ours.files;
const merged = { ...generated, ...ours, files, version: generated.version };
const missing = files.filter((file) => !existsSync(join(pkgDir, file)));
if (missing.length > 0) {
  console.error(`pkg.json lists files the build did not produce: ${missing.join(", ")}`);
  process.exit(1);
}
writeFileSync(join(pkgDir, "package.json"), JSON.stringify(merged, null, 2) + "\n");
console.log(`merged ${manifestPath} into ${join(pkgDir, "package.json")}`);
