#!/usr/bin/env bash
# WebKitGTK's WebDriver for wasm-bindgen-test-runner (named by SAFARIDRIVER): the browser it
# starts needs a display, so the driver runs under a virtual one of its own (xvfb-run -a).
exec xvfb-run -a WebKitWebDriver "$@"
