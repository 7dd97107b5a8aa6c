//! Fuzz target: see `fiskgen_fuzz::sealed_state`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fiskgen_fuzz::sealed_state(data));
