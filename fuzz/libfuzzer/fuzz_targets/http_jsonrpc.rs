//! Fuzz target: see `fiskgen_fuzz::http_jsonrpc`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fiskgen_fuzz::http_jsonrpc(data));
