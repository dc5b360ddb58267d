#!/usr/bin/env bash
# Installs everything the build, the demo and the tests need, skipping what is already there.
# Safe to run any number of times. Sourced by demo.sh and test.sh; can also be run on its own.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"

WASM_PACK_VERSION="0.15.1"
GECKODRIVER_VERSION="0.37.1"

log() { printf '\033[1;34m[setup]\033[0m %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# The wasm-bindgen CLI must match the library version that Cargo.lock pins.
locked_version() {
  awk -v name="$1" '$0 == "name = \"" name "\"" { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock"
}

installed_version() {
  command -v "$1" >/dev/null 2>&1 || return 0
  "$1" --version 2>/dev/null | awk '{ print $2 }' | head -n 1
}

ensure_rust_target() {
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    log "adding rust target wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
  fi
}

ensure_debian_packages() {
  local missing=()
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
  command -v firefox-esr >/dev/null 2>&1 || missing+=(firefox-esr)
  # WebKit: WebKitGTK's WebDriver and MiniBrowser, and the virtual display they run on.
  command -v WebKitWebDriver >/dev/null 2>&1 || missing+=(webkit2gtk-driver)
  command -v xvfb-run >/dev/null 2>&1 || missing+=(xvfb)
  # Emoji glyphs for the section headings in page screenshots.
  dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || missing+=(fonts-noto-color-emoji)
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}"
  fi
}

ensure_cargo_tool() {
  local binary="$1" crate="$2" version="$3"
  if [ "$(installed_version "$binary")" != "$version" ]; then
    log "installing $crate $version"
    # --locked can name a dependency version the registry no longer serves (seen with
    # wasm-bindgen-cli 0.2.130 and webpki-roots 1.0.11); then resolve afresh.
    cargo install "$crate" --version "$version" --locked --force ||
      cargo install "$crate" --version "$version" --force
  fi
}

# npm packages of one folder, installed from its lock file; reinstalled when the lock changes.
# Extra arguments choose workspaces; the stamp records them, so a run that asks for more
# installs again and one that asks for less keeps what is there.
ensure_node_packages() {
  local dir="$ROOT/$1"; shift
  local stamp="$dir/node_modules/.lock-stamp"
  local lock want have
  lock="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  want="$lock ${*:-all}"
  have="$(cat "$stamp" 2>/dev/null || true)"
  if [ "$have" != "$want" ] && [ "$have" != "$lock all" ]; then
    log "installing node packages from ${dir#"$ROOT"/}/package-lock.json ${*:+(${*})}"
    local workspaces=()
    for workspace in "$@"; do workspaces+=(--workspace "$workspace"); done
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error "${workspaces[@]}")
    # A lock with no packages leaves no node_modules behind.
    mkdir -p "$dir/node_modules"
    echo "$want" >"$stamp"
  fi
}

ensure_rust_target
ensure_debian_packages
ensure_cargo_tool wasm-bindgen wasm-bindgen-cli "$(locked_version wasm-bindgen)"
ensure_cargo_tool wasm-pack wasm-pack "$WASM_PACK_VERSION"
ensure_cargo_tool geckodriver geckodriver "$GECKODRIVER_VERSION"
# A current wasm-opt (npm binaryen): Debian's binaryen 108 breaks wasm-bindgen's externref table.
# One npm workspace (package.json at the top) for the build tools, the node tests and the
# benchmarks; the benchmark's own packages (the Gemma-3 tokenizer) only when asked for.
if [ "${1:-}" = "bench" ]; then
  ensure_node_packages .
else
  ensure_node_packages . scripts tests/node
fi
# The consumer test installs the packed package as a user would: its own folder and lock file;
# so does the bundlers' test, beside the bundlers it builds with (pinned in their lock file).
ensure_node_packages tests/consumer
ensure_node_packages tests/bundlers
log "all tools present"
