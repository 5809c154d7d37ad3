//! `tengen push keys`: prints a fresh VAPID key pair as a `[push]` section to paste into
//! the configuration (client-protocol/notifications.md#web-push). Printed only, never
//! written or logged: the operator puts the private key where the server reads it.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Print a fresh VAPID key pair in `[push]` form.
    Keys,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Keys => {
            print!("{}", tengen::notify::push::key_pair_config());
            Ok(ExitCode::SUCCESS)
        }
    }
}
