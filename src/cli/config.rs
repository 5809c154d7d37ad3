//! `tengen config --print`: the effective configuration (defaults < file < environment
//! < flags) as TOML, secret redacted, so an operator sees what `serve` would run with.
//! `--check` refuses what `serve` refuses before it touches anything: the configuration,
//! and the key file `auth.public_key_file` names.

use std::process::ExitCode;

use super::config_args::ServerArgs;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("action").required(true).args(["print", "check"])))]
pub struct Args {
    /// Print the effective configuration as TOML (the secret is shown as "<redacted>").
    #[arg(long)]
    pub print: bool,
    /// Only check the configuration: print nothing, exit 0 when it loads and the key file
    /// of auth.public_key_file (if any) is usable, as `serve` checks them.
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub server: ServerArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = args.server.load()?;
    if args.check {
        tengen::auth::check_public_key(&config.auth)?;
        tengen::notify::check_mail(&config.mail)?;
        tengen::notify::check_push(&config.push)?;
    }
    if args.print {
        print!("{}", config.to_toml_redacted());
    }
    Ok(ExitCode::SUCCESS)
}
