#!/usr/bin/env bash
# The linker of the wasm32 target (.cargo/config.toml): Rust's own rust-lld, then
# scripts/wasm-features.mjs on the module it wrote (why: that script's first lines).
set -euo pipefail
rustc_bin="${RUSTC:-rustc}"
host=$("$rustc_bin" -vV | sed -n 's/^host: //p')
"$("$rustc_bin" --print sysroot)/lib/rustlib/$host/bin/rust-lld" "$@"
out=""
previous=""
for arg in "$@"; do
  [ "$previous" = "-o" ] && out="$arg"
  previous="$arg"
done
if [ -n "$out" ]; then
  node "$(dirname "$0")/wasm-features.mjs" "$out"
fi
