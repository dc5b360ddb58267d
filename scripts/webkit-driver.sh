#!/usr/bin/env bash
# WebKitGTK's WebDriver for wasm-bindgen-test-runner (named by SAFARIDRIVER): the browser it
# starts needs a display, so the driver runs under a virtual one of its own (xvfb-run -a).
# The runner stops the driver by killing this script, which xvfb-run's children outlive: they
# run in a process group of their own, and a watcher stops that group once this script is
# gone (before, each run left a WebKitWebDriver and an Xvfb behind per test binary).
setsid xvfb-run -a WebKitWebDriver "$@" &
driver=$!
( while kill -0 $$ 2>/dev/null; do sleep 1; done; kill -- -"$driver" 2>/dev/null ) &
wait "$driver"
