//! The `tengen` binary: one command with subcommands. Errors become `anyhow` here, at
//! the edge, and nowhere in the library.

mod cli;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc, for its per-thread free lists: under load glibc's malloc and free (with
/// their chunk consolidation) were 3-4% of the server's CPU, and the server used about
/// 9% less CPU with mimalloc (BENCHMARKS.md, issue 17). Built without transparent huge
/// pages (`no_thp`): mimalloc otherwise asks for them on its arenas, and the kernel's
/// 2 MiB pages took an idle server's RSS per connection from 9.5 KiB to 12.5 (10.3
/// without).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            // `{:#}` adds every `source()` to the message. tengen's own errors hold their
            // cause in their message and return no source, so each cause shows once.
            eprintln!("tengen: {e:#}");
            ExitCode::from(2)
        }
    }
}
