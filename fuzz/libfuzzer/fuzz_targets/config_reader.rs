//! Fuzz target: see `fiskgen_fuzz::config_reader`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fiskgen_fuzz::config_reader(data));
