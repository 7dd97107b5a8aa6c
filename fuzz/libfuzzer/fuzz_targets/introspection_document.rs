//! Fuzz target: see `fiskgen_fuzz::introspection_document`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fiskgen_fuzz::introspection_document(data));
