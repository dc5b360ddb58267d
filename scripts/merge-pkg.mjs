// Assembles the npm package that scripts/build.sh built: the web flavour at the root, bundler/
// and node/ beside it. Writes package.json (pkg.json's fields, wasm-pack's version), gives every
// entry the same exports (a default `init()`, `REQUIRED_SECTIONS`), turns the web flavour's
// calls before `init()` (and a .wasm it cannot fetch) into a clear error, inlines its snippets
// (the web entry is two files), and makes the Node flavour's snippets CommonJS.
// Usage: node scripts/merge-pkg.mjs <pkg.json> <pkg-dir>
import { readFileSync, writeFileSync, existsSync, rmSync, readdirSync, statSync, copyFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { shortImports } from "./short-imports.mjs";

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
  const found = walk(join(dir, "snippets")).find((f) => f.endsWith("/src/web/boundary.js"));
  if (!found) {
    console.error(`${dir}: the boundary.js snippet is missing`);
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
    throw new NotReadyError("context-compactor is not initialised: call \`await init()\` (the default export) first", "not_initialized");
  },
});
wasm = NOT_READY;`,
);
for (const guard of ["function initSync(module) {\n    if (wasm !== undefined) return wasm;", "async function __wbg_init(module_or_path) {\n    if (wasm !== undefined) return wasm;"]) {
  replaceOnce(web, guard, guard.replace("if (wasm !== undefined)", "if (wasm !== undefined && wasm !== NOT_READY)"));
}
appendOnce(web, `${sectionsJs}\n${exportClass(pkgDir)}`);
appendOnce(join(pkgDir, "context_compactor.d.ts"), sectionsDts);

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
// Inside a server bundle (Next.js builds its server code with webpack) \`__dirname\` is the
// bundle's folder, where the .wasm is not: then the installed package's own copy, found from
// the working directory; failing that, an error that names the fix.
replaceOnce(
  join(pkgDir, "node/context_compactor.js"),
  "const wasmBytes = require('fs').readFileSync(wasmPath);",
  `const wasmBytes = (() => {
    const fs = require('fs');
    if (fs.existsSync(wasmPath)) return fs.readFileSync(wasmPath);
    let installed;
    try {
        installed = require('module').createRequire(\`\${process.cwd()}/\`).resolve('context-compactor/package.json').replace(/package\\.json$/, 'node/context_compactor_bg.wasm');
    } catch {}
    if (installed && fs.existsSync(installed)) return fs.readFileSync(installed);
    const { ContextCompactorError } = require("${errorsSnippet(join(pkgDir, "node"))}");
    throw new ContextCompactorError(\`context-compactor could not be initialised: \${wasmPath} does not exist (a server bundle moved this module away from its .wasm). Keep the package out of the server bundle: in Next.js, serverExternalPackages: ["context-compactor"] in next.config\`, "not_initialized");
})();`,
);
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

// A .wasm that cannot be loaded (not found, not fetched, an HTML page or another module in its
// place): init() rejects not_initialized, naming the URL and the fix for the setup at hand.
// wasm-bindgen's loader streams only a response served as application/wasm and otherwise
// compiles the bytes, so a page served in the .wasm's place is told apart from a module.
{
  const text = readFileSync(web, "utf8");
  const start = text.indexOf("async function __wbg_load(module, imports) {");
  const end = text.indexOf("\nfunction initSync(module) {");
  if (start < 0 || end < start) {
    console.error(`${web}: wasm-bindgen's __wbg_load was not found (wasm-bindgen changed?)`);
    process.exit(1);
  }
  const loader = `/** Why the .wasm at \`url\` did not load (\`what\` it did), and what to do in this setup. */
function notLoaded(url, what) {
    const fix = import.meta.url.includes("/.vite/deps/")
        ? 'Vite pre-bundled it without its .wasm: add optimizeDeps: { exclude: ["context-compactor"] } to vite.config'
        : 'Rollup, esbuild and Bun do not copy it: copy node_modules/context-compactor/context_compactor_bg.wasm beside the bundle or import "context-compactor/inline"';
    return new NotReadyError(\`context-compactor could not be initialised: \${url} \${what}. \${fix}\`, "not_initialized");
}

async function __wbg_load(module, imports) {
    const url = module instanceof Response ? module.url : "what init() was given";
    try {
        if (module instanceof Response) {
            if (!module.ok) throw notLoaded(url, \`answered \${module.status} \${module.statusText}\`);
            const type = module.headers.get('Content-Type');
            if (type === 'application/wasm' && typeof WebAssembly.instantiateStreaming === 'function') {
                return await WebAssembly.instantiateStreaming(module, imports);
            }
            module = new Uint8Array(await module.arrayBuffer());
            if (module[0] !== 0 || module[1] !== 0x61 || module[2] !== 0x73 || module[3] !== 0x6d) {
                throw notLoaded(url, \`answered \${type || "no Content-Type"}, not WebAssembly\`);
            }
        }
        const instance = await WebAssembly.instantiate(module, imports);
        return instance instanceof WebAssembly.Instance ? { instance, module } : instance;
    } catch (e) {
        throw /^(Compile|Link|Type)Error$/.test(e.name) ? notLoaded(url, \`is not this version's WebAssembly (\${e.message})\`) : e;
    }
}
`;
  if (!text.includes("function notLoaded(")) writeFileSync(web, text.slice(0, start) + loader + text.slice(end));
}
replaceOnce(
  web,
  "        module_or_path = new URL('context_compactor_bg.wasm', import.meta.url);\n    }",
  `        module_or_path = new URL('context_compactor_bg.wasm', import.meta.url);
        // Vite's dev server serves this module from .vite/deps, where the .wasm is not: the package's own copy.
        if (module_or_path.pathname.includes('/.vite/deps/')) module_or_path = new URL('/node_modules/context-compactor/context_compactor_bg.wasm', module_or_path);
    }`,
);
// wasm-bindgen's warnings that a positional argument is deprecated (it is still taken): the
// bytes pay for the messages above.
for (const name of ["`initSync()`", "the initialization function"]) {
  const warning = `console.warn('using deprecated parameters for ${name}; pass a single object instead')`;
  const text = readFileSync(web, "utf8");
  if (text.includes(warning)) writeFileSync(web, text.replace(`} else {\n            ${warning}\n        }`, "}"));
}
// Request and URL are globals wherever this entry runs (browsers, Node 20, Bun, Deno).
replaceOnce(
  web,
  "(typeof Request === 'function' && module_or_path instanceof Request) || (typeof URL === 'function' && module_or_path instanceof URL)",
  "module_or_path instanceof Request || module_or_path instanceof URL",
);
replaceOnce(
  web,
  "        module_or_path = fetch(module_or_path);",
  "        const url = module_or_path.url ?? module_or_path;\n        module_or_path = fetch(module_or_path).catch((e) => { throw notLoaded(url, `could not be fetched (${e.message})`); });",
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
// indentation (0.4 KB): editors read the comments from the .d.ts, which keeps them. The
// marker of this script's additions goes too: the build merges a fresh output once.
stripComments(web);
writeFileSync(web, readFileSync(web, "utf8").replace(`${marker}\n`, ""));

// The web entry's imports under short names, in its .wasm and its glue alike (see
// short-imports.mjs: −4 KB gzip of random hex digits), before the inline flavour copies both.
{
  const wasmFile = join(pkgDir, "context_compactor_bg.wasm");
  const shortened = shortImports(new Uint8Array(readFileSync(wasmFile)), readFileSync(web, "utf8"));
  writeFileSync(wasmFile, shortened.wasm);
  writeFileSync(web, shortened.glue);
}

// Inline flavour: the web glue with the .wasm as base64 in its place, for setups where fetching
// a second file is awkward (a single-file build, a CSP that blocks it, a bundler that does not
// copy the .wasm). It names no .wasm file, so no bundler emits one beside it.
{
  const wasm = readFileSync(join(pkgDir, "context_compactor_bg.wasm")).toString("base64");
  const glue = readFileSync(web, "utf8");
  const asset = /^module_or_path = new URL\('context_compactor_bg\.wasm', import\.meta\.url\);\n.*\n/m;
  if (!asset.test(glue)) {
    console.error(`${web}: the default URL of the .wasm was not found`);
    process.exit(1);
  }
  const inline = glue.replace(asset, "module_or_path = Uint8Array.from(atob(WASM_BASE64), (c) => c.charCodeAt(0));\n");
  writeFileSync(join(pkgDir, "inline.js"), `${inline}const WASM_BASE64 = "${wasm}";\n`);
  if (/new URL\(['"][^'"]*\.wasm['"], import\.meta\.url\)/.test(inline)) {
    console.error("inline.js still names a .wasm by new URL(…, import.meta.url): a bundler would emit it");
    process.exit(1);
  }
  writeFileSync(
    join(pkgDir, "inline.d.ts"),
    `export * from "./context_compactor.js";\n/** Instantiates the inlined WebAssembly module (nothing is fetched); later calls do nothing. */\nexport default function init(): Promise<void>;\n`,
  );
}

// The web entry's glue minified by terser (local names shortened, the exported classes keeping
// theirs, the `@ts-self-types` line kept first): −2.2 KB gzip, after the inline flavour was made
// from the readable glue. Its behaviour is the same code's: every page and bundler test loads it.
{
  const { minify } = await import("terser");
  const minified = await minify(readFileSync(web, "utf8"), {
    module: true,
    compress: { passes: 2 },
    mangle: { keep_classnames: true },
    format: { comments: /@ts-self-types/ },
  });
  writeFileSync(web, `${minified.code}\n`);
}

const files = ours.files;
const merged = { ...generated, ...ours, files, version: generated.version };
const missing = files.filter((file) => !existsSync(join(pkgDir, file)));
if (missing.length > 0) {
  console.error(`pkg.json lists files the build did not produce: ${missing.join(", ")}`);
  process.exit(1);
}
writeFileSync(join(pkgDir, "package.json"), JSON.stringify(merged, null, 2) + "\n");
console.log(`merged ${manifestPath} into ${join(pkgDir, "package.json")}`);
