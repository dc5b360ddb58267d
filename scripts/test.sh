#!/usr/bin/env bash
# Runs every check and test of the project and ends with one line "N passed, M failed".
# Installs what is missing first (scripts/setup.sh). Each step runs even when an earlier one
# failed, so one run shows every failure; the exit status is non-zero when any step failed.
#
# Counted: every test that a runner reports (cargo test, the wasm-bindgen browser runner,
# node's test runner) plus each check that is not a test runner (fmt, clippy, the build) as one.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$ROOT/node_modules/.bin:$HOME/.cargo/bin:$PATH"
cd "$ROOT"

LOG_DIR="$ROOT/test-output/logs"
mkdir -p "$LOG_DIR"
passed=0
failed=0
failed_steps=()
started=$(date +%s)

step_header() { printf '\n\033[1;36m==> %s\033[0m (at %ss)\n' "$1" "$(( $(date +%s) - started ))"; }

# Sums the "N passed; M failed" of cargo/wasm-bindgen-test and "# pass N"/"# fail N" of node TAP.
count_results() {
  awk '
    /^test result: / { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
    /^# pass [0-9]+$/ { p += $3 }
    /^# fail [0-9]+$/ { f += $3 }
    END { printf "%d %d\n", p, f }
  ' "$1"
}

# A check that is not a test runner: one pass or one fail.
check() {
  local name="$1"; shift
  step_header "$name"
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); failed_steps+=("$name")
  fi
}

log_of() { echo "$LOG_DIR/$(echo "$1" | tr ' /' '__').log"; }

# Adds the counts of the runner `name` that ended with `status` (its output in its log); a
# failing exit with no failed test counted is one failure, a check that passed (no test
# counted) one pass.
count_runner() {
  local name="$1" status="$2"
  read -r p f < <(count_results "$(log_of "$name")")
  if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  if [ "$status" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then p=1; fi
  passed=$((passed + p)); failed=$((failed + f))
  if [ "$status" -ne 0 ] || [ "$f" -ne 0 ]; then failed_steps+=("$name"); fi
}

# A test runner: its own counts.
tests() {
  local name="$1"; shift
  step_header "$name"
  "$@" 2>&1 | tee "$(log_of "$name")"
  count_runner "$name" "${PIPESTATUS[0]}"
}

# Test runners that mostly wait on a browser, started side by side (`side_by_side name cmd…`
# for each, then `side_by_side_end`): each log is shown whole once all have ended.
side_names=(); side_pids=()
side_by_side() {
  local name="$1"; shift
  step_header "$name (side by side)"
  "$@" >"$(log_of "$name")" 2>&1 &
  side_names+=("$name"); side_pids+=("$!")
}
side_by_side_end() {
  local i status
  for i in "${!side_pids[@]}"; do
    if wait "${side_pids[$i]}"; then status=0; else status=$?; fi
    step_header "${side_names[$i]}: its output"
    cat "$(log_of "${side_names[$i]}")"
    count_runner "${side_names[$i]}" "$status"
  done
  side_names=(); side_pids=()
}

step_header "setup"
if ! bash "$ROOT/scripts/setup.sh"; then
  echo "setup failed: the tools the tests need could not be installed"
  echo "0 passed, 1 failed"
  exit 1
fi

# The mock of the Gemini REST API, on a free loopback port for the whole run. The browser tests
# get its URL at compile time (GEMINI_MOCK_URL); it stops when this script exits.
step_header "start the Gemini mock"
MOCK_LOG="$LOG_DIR/gemini-mock.log"
node "$ROOT/tests/gemini-mock/server.mjs" 0 >"$MOCK_LOG" 2>&1 &
MOCK_PID=$!
trap 'kill "$MOCK_PID" 2>/dev/null' EXIT
for _ in $(seq 1 100); do
  grep -q '^GEMINI_MOCK_URL=' "$MOCK_LOG" && break
  sleep 0.1
done
GEMINI_MOCK_URL="$(sed -n 's/^GEMINI_MOCK_URL=//p' "$MOCK_LOG")"
export GEMINI_MOCK_URL
if [ -z "$GEMINI_MOCK_URL" ]; then
  echo "the Gemini mock did not start:"; cat "$MOCK_LOG"
  failed=$((failed + 1)); failed_steps+=("start the Gemini mock")
else
  echo "mock at $GEMINI_MOCK_URL"
fi

check "cargo fmt --check" cargo fmt --check
check "cargo clippy (core, native, no browser crates)" cargo clippy --all-targets --no-default-features --features testing -- -D warnings
check "cargo clippy (wasm32)" cargo clippy --all-targets --target wasm32-unknown-unknown -- -D warnings
check "the core depends on no browser crate" bash -c '! cargo tree --no-default-features -e normal,dev | grep -E "wasm-bindgen|js-sys|web-sys"'
check "the core depends on no crate at all (its JSON is its own)" bash -c '[ "$(cargo tree --no-default-features -e normal --prefix none | wc -l)" = 1 ]'
tests "cargo test (core, native, no browser crates)" cargo test --no-default-features --features testing
# Whole sessions (10,000 iterations, 60-turn agents, real answers, shared pages), ignored by a
# plain cargo test: optimised, they take seconds instead of minutes (Cargo.toml's profile).
tests "cargo test, optimised (whole sessions)" cargo test --profile native-optimised --no-default-features --features testing --test long_session --test model_output --test messages --test sharing_the_page --test read_per_turn -- --include-ignored
# A browser test has two minutes (wasm-bindgen-test's default is 20 s): the archive memory test
# takes 8–16 s in WebKit on an idle machine, and more while the machine is busy.
export WASM_BINDGEN_TEST_TIMEOUT=120
# A driver has a minute to bind its port (wasm-bindgen-test-runner's default is 5 s, after
# which it kills it and fails the run: "driver failed to bind port during startup", seen once in
# a fresh clone's WebKit step while the three engines and their builds ran side by side; the
# runner still restarts a driver that has not bound its port after 10 s).
export WASM_BINDGEN_TEST_DRIVER_TIMEOUT=60
# The three engines side by side, and the docs beside them: the first to take cargo's lock
# builds the tests, the others then find them built, and the runs wait mostly on their browsers.
BROWSER_TESTS=(--mode no-install . --test browser --test browser_compactor --test browser_gemini --test browser_archives)
side_by_side "browser tests in Chrome" wasm-pack test --headless --chrome --chromedriver /usr/bin/chromedriver "${BROWSER_TESTS[@]}"
side_by_side "browser tests in Firefox" wasm-pack test --headless --firefox --geckodriver "$HOME/.cargo/bin/geckodriver" "${BROWSER_TESTS[@]}"
side_by_side "browser tests in WebKit" wasm-pack test --headless --safari --safaridriver "$ROOT/scripts/webkit-driver.sh" "${BROWSER_TESTS[@]}"
side_by_side "cargo doc without warnings" env RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
side_by_side_end
check "package build (web, bundler and node flavours into pkg/)" bash scripts/build.sh pkg
check "size budget of the web entry (wasm + glue + snippets, gzip; pkg.json sizeBudget)" node scripts/size.mjs pkg --max
# Two test files at a time (each its own browser and servers on free ports): 477 s against 623
# one at a time on a 2-core machine, the same results.
tests "package and page tests (node, Chromium; WebKit and Firefox for the engine tests)" node --test --test-reporter=tap --test-concurrency=2 tests/node/

elapsed=$(( $(date +%s) - started ))
echo
if [ "${#failed_steps[@]}" -gt 0 ]; then
  printf 'failed steps: %s\n' "${failed_steps[@]}"
fi
echo "total time: ${elapsed}s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
