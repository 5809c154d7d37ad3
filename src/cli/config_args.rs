//! The flags every server-side subcommand shares: where the configuration and data are,
//! and `--set` for any other setting.

use std::path::PathBuf;

use anyhow::Context;
use tengen::config::{Config, ENV_PREFIX, FlagSetting};

#[derive(Debug, Clone, clap::Args)]
pub struct ConfigArgs {
    /// TOML configuration file (see deploy/tengen.toml); TENGEN_* variables and flags
    /// override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Data directory: the SQLite file and the generated JWT secret [default: ./tengen-data]
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Any setting by its dotted key, e.g. `--set limits.burst=60`; repeatable, applied
    /// after the file and the environment.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = FlagSetting::parse_set)]
    pub set: Vec<FlagSetting>,
}

impl ConfigArgs {
    /// Defaults < file < `TENGEN_*` environment < `--set` < `--data`.
    pub fn load(&self) -> anyhow::Result<Config> {
        self.load_with(None)
    }

    /// As [`ConfigArgs::load`], with one more flag last. Every flag goes through the
    /// configuration's own checks, so none can slip past them (`--listen 0.0.0.0:7480`
    /// with the dev login on is refused, as in the file).
    fn load_with(&self, last: Option<FlagSetting>) -> anyhow::Result<Config> {
        let mut flags = self.set.clone();
        if let Some(data) = &self.data {
            flags.push(FlagSetting {
                flag: format!("--data {}", data.display()),
                key: "data_dir".into(),
                value: toml_string(&data.to_string_lossy()),
            });
        }
        flags.extend(last);
        Config::load_with_flags(self.config.as_deref(), tengen_vars(), &flags)
            .context("the configuration could not be loaded")
    }
}

/// The configuration flags plus `--listen`, for the commands that run (or show) a server.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// Address to listen on for HTTP and WebSocket [default: 127.0.0.1:7480]
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    #[command(flatten)]
    pub config: ConfigArgs,
}

impl ServerArgs {
    /// As [`ConfigArgs::load`], then `--listen`.
    pub fn load(&self) -> anyhow::Result<Config> {
        self.config.load_with(self.listen.map(|listen| FlagSetting {
            flag: format!("--listen {listen}"),
            key: "listen".into(),
            value: toml_string(&listen.to_string()),
        }))
    }
}

/// The `TENGEN_*` variables (a value that is not UTF-8 is passed on lossily, so it is
/// refused by name rather than skipped).
fn tengen_vars() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| {
            let k = k.into_string().ok()?;
            k.starts_with(ENV_PREFIX)
                .then(|| (k, v.to_string_lossy().into_owned()))
        })
        .collect()
}

/// A path as a quoted TOML string, so `--data 123` stays a path.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}
