#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tengen_fuzz::sgf::check(data));
