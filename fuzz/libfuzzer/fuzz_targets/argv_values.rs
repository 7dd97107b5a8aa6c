//! Fuzz target: see `fiskgen_fuzz::argv_values`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fiskgen_fuzz::argv_values(data));
