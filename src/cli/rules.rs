//! `tengen rules`: replay game records and print verdicts and counts as JSON lines.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tengen rules`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// SGF files to replay.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _ = args;
    Ok(ExitCode::SUCCESS)
}
