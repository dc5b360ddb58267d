/work/main/target-base/wasm32-unknown-unknown/release/deps/wasm_bindgen_futures-5aabe40a83fc8f07.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-futures-0.4.80/src/lib.rs

/work/main/target-base/wasm32-unknown-unknown/release/deps/libwasm_bindgen_futures-5aabe40a83fc8f07.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-futures-0.4.80/src/lib.rs

/work/main/target-base/wasm32-unknown-unknown/release/deps/libwasm_bindgen_futures-5aabe40a83fc8f07.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-futures-0.4.80/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/wasm-bindgen-futures-0.4.80/src/lib.rs:
