#!/usr/bin/env bash
# Installs what is missing, builds the package and serves the demo page on 127.0.0.1.
# Usage: scripts/demo.sh [port]   (default 8080, or the next free one)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
bash "$ROOT/scripts/build.sh" pkg
exec node "$ROOT/scripts/serve.mjs" "${1:-${PORT:-8080}}"
