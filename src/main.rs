//! The `tengen` binary: one command with subcommands. Errors become `anyhow` here, at
//! the edge, and nowhere in the library.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tengen: {e:#}");
            ExitCode::from(2)
        }
    }
}
