//! `tengen config --print`: the effective configuration (defaults < file < environment
//! < flags) as TOML, secret redacted, so an operator sees what `serve` would run with.

use std::process::ExitCode;

use super::config_args::ServerArgs;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("action").required(true).args(["print", "check"])))]
pub struct Args {
    /// Print the effective configuration as TOML (the secret is shown as "<redacted>").
    #[arg(long)]
    pub print: bool,
    /// Only check the configuration: print nothing, exit 0 when it loads.
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub server: ServerArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = args.server.load()?;
    if args.print {
        print!("{}", config.to_toml_redacted());
    }
    Ok(ExitCode::SUCCESS)
}
