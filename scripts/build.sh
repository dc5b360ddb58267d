#!/usr/bin/env bash
# Builds the one npm package into <out-dir> (default pkg/): the `web` flavour at its root (the
# default entry of every bundler and of a page without one: `init()` loads the .wasm beside
# it), the `bundler` flavour in bundler/ (`context-compactor/bundler`, initialised on import
# where webpack integrates wasm modules) and the Node flavour in node/ (CommonJS, initialised
# on import); then merges pkg.json into package.json and prints the sizes.
# Usage: scripts/build.sh [out-dir]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# wasm-pack runs the first wasm-opt on PATH: ours (binaryen 132 from npm), not Debian's 108.
export PATH="$ROOT/node_modules/.bin:$HOME/.cargo/bin:$PATH"
OUT_DIR="${1:-pkg}"

cd "$ROOT"
rm -rf "$OUT_DIR"
wasm-pack build --release --target web --mode no-install --out-dir "$OUT_DIR" .
wasm-pack build --release --target bundler --mode no-install --out-dir "$OUT_DIR/bundler" .
wasm-pack build --release --target nodejs --mode no-install --out-dir "$OUT_DIR/node" .
node scripts/merge-pkg.mjs pkg.json "$OUT_DIR"
node scripts/size.mjs "$OUT_DIR"
