//! The checks behind the fuzz targets. Each `check` takes the fuzzer's bytes and panics
//! when tengen misbehaves on them. The modules use only `tengen` and `std`, so the main
//! crate's `tests/fuzz_regressions.rs` includes the same files and replays every input
//! the fuzzers ever found on the stable toolchain.

pub mod bytes;
pub mod clock;
pub mod decode;
pub mod gtp;
pub mod rules;
pub mod sgf;
