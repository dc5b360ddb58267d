#!/usr/bin/env bash
# WebKitGTK's WebDriver for wasm-bindgen-test-runner (named by SAFARIDRIVER) and the engine
# tests: the browser it starts needs a display, so the driver runs under a virtual one of its
# own (xvfb-run -a), in a process group of its own that goes when this script goes: at a
# signal this script can answer (the engine tests stop its group with SIGTERM), or, when it is
# killed outright (the runner's way), by a watcher that sees it gone. Before, each run left a
# WebKitWebDriver and an Xvfb behind per test binary.
setsid xvfb-run -a WebKitWebDriver "$@" &
driver=$!
trap 'kill -- -"$driver" 2>/dev/null' EXIT TERM INT
( while kill -0 $$ 2>/dev/null; do sleep 1; done; kill -- -"$driver" 2>/dev/null ) &
wait "$driver"
