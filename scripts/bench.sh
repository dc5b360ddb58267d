#!/usr/bin/env bash
# Runs the benchmarks (not part of the test command): download size, the token estimator
# against the Gemma-3 tokenizer, and compaction timings in headless Chromium on seeded sessions.
# Prints a table and writes bench/results.json.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh" bench
bash "$ROOT/scripts/build.sh" pkg >/dev/null
exec node "$ROOT/bench/run.mjs"
