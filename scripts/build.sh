#!/usr/bin/env bash
# Builds the npm package into pkg/ (wasm-pack, release profile, wasm-opt) and merges pkg.json.
# Usage: scripts/build.sh [web|bundler] [out-dir]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# wasm-pack runs the first wasm-opt on PATH: ours (binaryen 132 from npm), not Debian's 108.
export PATH="$ROOT/scripts/node_modules/.bin:$HOME/.cargo/bin:$PATH"
TARGET="${1:-web}"
OUT_DIR="${2:-pkg}"

cd "$ROOT"
wasm-pack build --release --target "$TARGET" --mode no-install --out-dir "$OUT_DIR" .
node scripts/merge-pkg.mjs pkg.json "$OUT_DIR"
node scripts/size.mjs "$OUT_DIR"
