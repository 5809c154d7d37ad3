//! The flags every server-side subcommand shares: where the configuration and data are.

use std::path::PathBuf;

use anyhow::Context;
use tengen::config::Config;

#[derive(Debug, Clone, clap::Args)]
pub struct ConfigArgs {
    /// TOML configuration file (see deploy/tengen.toml); flags and TENGEN_* variables
    /// override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Data directory: the SQLite file and the generated JWT secret [default: ./tengen-data]
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
}

impl ConfigArgs {
    /// Defaults < file < environment < these flags.
    pub fn load(&self) -> anyhow::Result<Config> {
        let mut config = Config::load(self.config.as_deref(), std::env::vars())
            .context("the configuration could not be loaded")?;
        if let Some(data) = &self.data {
            config.data_dir = data.clone();
        }
        Ok(config)
    }
}
