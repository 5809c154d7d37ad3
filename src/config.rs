//! Settings: defaults, then a TOML file, then `TENGEN_*` environment variables, then
//! command-line flags, each overriding the one before. Unknown keys are errors.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::clock::{ClockLimits, LagSettings};

/// The whole configuration of a server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Address for HTTP and WebSocket (one port).
    pub listen: SocketAddr,
    /// Where the SQLite file and the generated JWT secret live.
    pub data_dir: PathBuf,
    pub auth: AuthConfig,
    pub limits: Limits,
    pub store: StoreConfig,
    pub clock: ClockConfig,
    pub log: LogConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 7480)),
            data_dir: PathBuf::from("tengen-data"),
            auth: AuthConfig::default(),
            limits: Limits::default(),
            store: StoreConfig::default(),
            clock: ClockConfig::default(),
            log: LogConfig::default(),
        }
    }
}

/// Token algorithms the server can be pinned to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum JwtAlgorithm {
    /// A shared secret (the default; `tengen token` signs with it).
    #[default]
    HS256,
    /// An RSA public key from an external identity service.
    RS256,
    /// An Ed25519 public key from an external identity service.
    #[serde(rename = "EdDSA")]
    EdDSA,
}

/// How tokens are checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    pub algorithm: JwtAlgorithm,
    /// HS256 secret. Unset: generated once into `data_dir/jwt-secret` and reused.
    pub secret: Option<String>,
    /// PEM public key file for RS256 or EdDSA.
    pub public_key_file: Option<PathBuf>,
    /// When set, tokens must carry this `iss`.
    pub issuer: Option<String>,
    /// When set, tokens must carry this `aud`.
    pub audience: Option<String>,
    /// Whether people without a token may watch games.
    pub anonymous_spectators: bool,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            algorithm: JwtAlgorithm::HS256,
            secret: None,
            public_key_file: None,
            issuer: None,
            audience: None,
            anonymous_spectators: true,
        }
    }
}

/// Bounds on what one client may use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest message answered with `too_large` (the connection survives).
    pub max_message_bytes: usize,
    /// Largest WebSocket frame/message at all; past it the connection is closed (1009).
    pub max_frame_bytes: usize,
    /// Sustained messages per second per connection.
    pub messages_per_second: u32,
    /// Messages a connection may send in a burst above the sustained rate.
    pub burst: u32,
    /// Refused messages in a row after which a flooding connection is closed.
    pub flood_close_after: u32,
    /// Frames queued for one connection before it counts as too slow and is dropped.
    pub outbound_queue: usize,
    pub max_seeks_per_user: usize,
    pub max_games_per_user: usize,
    /// Seconds between server pings.
    pub heartbeat_secs: u64,
    /// Seconds without any message or pong before a connection is closed.
    pub idle_timeout_secs: u64,
    /// Open WebSocket connections at most.
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_bytes: 8 * 1024,
            max_frame_bytes: 64 * 1024,
            messages_per_second: 20,
            burst: 40,
            flood_close_after: 200,
            outbound_queue: 256,
            max_seeks_per_user: 5,
            max_games_per_user: 20,
            heartbeat_secs: 20,
            idle_timeout_secs: 60,
            max_connections: 19_000,
        }
    }
}

/// How hard the store flushes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncSetting {
    /// fsync on every commit: an acknowledged move survives power loss.
    #[default]
    Full,
    /// fsync at WAL checkpoints: survives a crash of the process, not of the machine.
    Normal,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    pub sync: SyncSetting,
}

/// Clock policy.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClockConfig {
    pub limits: ClockLimits,
    pub lag: LagSettings,
}

/// Log output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    #[default]
    Human,
    Json,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    pub format: LogFormat,
    /// A tracing filter such as `info` or `tengen=debug,info`.
    pub filter: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            format: LogFormat::Human,
            filter: "info".into(),
        }
    }
}

/// Why the configuration could not be loaded; every message names the file, variable
/// or key at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the config file {path} is not valid: {message}")]
    File { path: PathBuf, message: String },
    #[error(
        "the environment variable {var} does not name a setting (expected TENGEN_SECTION__KEY, e.g. TENGEN_LIMITS__BURST)"
    )]
    EnvName { var: String },
    #[error("the configuration is not valid: {0}")]
    Invalid(String),
}

/// Prefix of environment variables that set configuration keys. Nested keys are joined
/// with a double underscore: `TENGEN_AUTH__ISSUER` sets `auth.issuer`.
pub const ENV_PREFIX: &str = "TENGEN_";

impl Config {
    /// Defaults, overridden by the TOML file (if any), then by `TENGEN_*` variables from
    /// `env`. Flags are applied by the caller afterwards.
    pub fn load(
        file: Option<&std::path::Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        let mut tree = toml::Table::try_from(Config::default())
            .map_err(|e| ConfigError::Invalid(e.to_string()))?;
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.to_path_buf(),
                source,
            })?;
            let table: toml::Table =
                text.parse()
                    .map_err(|e: toml::de::Error| ConfigError::File {
                        path: path.to_path_buf(),
                        message: e.to_string(),
                    })?;
            merge(&mut tree, table);
            // Check the file on its own first, so its errors name the file.
            Config::deserialize(tree.clone()).map_err(|e| ConfigError::File {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        }
        for (var, value) in env {
            let Some(name) = var.strip_prefix(ENV_PREFIX) else {
                continue;
            };
            // TENGEN_LOG is the log filter shortcut, handled where logging starts.
            if name.is_empty() {
                return Err(ConfigError::EnvName { var });
            }
            let path: Vec<String> = name.split("__").map(|p| p.to_ascii_lowercase()).collect();
            if path.iter().any(String::is_empty) {
                return Err(ConfigError::EnvName { var });
            }
            let parsed = parse_env_value(&value);
            let mut table = toml::Table::new();
            let mut leaf = &mut table;
            for key in &path[..path.len() - 1] {
                leaf = leaf
                    .entry(key.clone())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                    .as_table_mut()
                    .ok_or_else(|| ConfigError::EnvName { var: var.clone() })?;
            }
            leaf.insert(path[path.len() - 1].clone(), parsed);
            merge(&mut tree, table);
            Config::deserialize(tree.clone())
                .map_err(|e| ConfigError::Invalid(format!("{var}: {e}")))?;
        }
        Config::deserialize(tree).map_err(|e| ConfigError::Invalid(e.to_string()))
    }
}

/// Reads an environment value as a TOML value when it is one (numbers, booleans,
/// quoted strings, arrays), else as a plain string.
fn parse_env_value(value: &str) -> toml::Value {
    format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()))
}

fn merge(into: &mut toml::Table, from: toml::Table) {
    for (key, value) in from {
        match (into.get_mut(&key), value) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge(a, b),
            (_, value) => {
                into.insert(key, value);
            }
        }
    }
}
