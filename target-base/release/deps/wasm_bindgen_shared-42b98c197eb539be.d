/work/main/target-base/release/deps/wasm_bindgen_shared-42b98c197eb539be.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-shared-0.2.130/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-shared-0.2.130/src/identifier.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-shared-0.2.130/src/tys.rs

/work/main/target-base/release/deps/libwasm_bindgen_shared-42b98c197eb539be.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-shared-0.2.130/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-shared-0.2.130/src/identifier.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-shared-0.2.130/src/tys.rs

/work/main/target-base/release/deps/libwasm_bindgen_shared-42b98c197eb539be.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-shared-0.2.130/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-shared-0.2.130/src/identifier.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-shared-0.2.130/src/tys.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-shared-0.2.130/src/lib.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-shared-0.2.130/src/identifier.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-shared-0.2.130/src/tys.rs:

# env-dep:CARGO_PKG_VERSION=0.2.130
# env-dep:WBG_VERSION
