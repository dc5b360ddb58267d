/work/main/target-base/wasm32-unknown-unknown/release/deps/pin_project_lite-7e2a9bb991fe4eac.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pin-project-lite-0.2.18/src/lib.rs

/work/main/target-base/wasm32-unknown-unknown/release/deps/libpin_project_lite-7e2a9bb991fe4eac.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pin-project-lite-0.2.18/src/lib.rs

/work/main/target-base/wasm32-unknown-unknown/release/deps/libpin_project_lite-7e2a9bb991fe4eac.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pin-project-lite-0.2.18/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pin-project-lite-0.2.18/src/lib.rs:
