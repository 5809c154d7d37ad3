//! Settings: defaults, then a TOML file, then `TENGEN_*` environment variables, then
//! command-line flags, each overriding the one before. Unknown keys and bad values are
//! errors that name the file, variable or flag and the key; nothing here is ever ignored
//! silently. Owns the settings and their checks; never opens sockets or the store.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::clock::{ClockLimits, LagSettings};

mod correspondence;
mod http;
mod network;
mod notify;
mod push;
pub use correspondence::CorrespondenceConfig;
pub use http::HttpConfig;
pub use network::Network;
pub use notify::{MailConfig, MailTls, NotifyConfig};
pub use push::PushConfig;

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
    pub http: HttpConfig,
    pub store: StoreConfig,
    pub clock: ClockConfig,
    pub log: LogConfig,
    pub cluster: ClusterConfig,
    pub rules: RulesConfig,
    pub notify: NotifyConfig,
    pub mail: MailConfig,
    pub push: PushConfig,
    pub correspondence: CorrespondenceConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 7480)),
            data_dir: PathBuf::from("tengen-data"),
            auth: AuthConfig::default(),
            limits: Limits::default(),
            http: HttpConfig::default(),
            store: StoreConfig::default(),
            clock: ClockConfig::default(),
            log: LogConfig::default(),
            cluster: ClusterConfig::default(),
            rules: RulesConfig::default(),
            notify: NotifyConfig::default(),
            mail: MailConfig::default(),
            push: PushConfig::default(),
            correspondence: CorrespondenceConfig::default(),
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
    /// Whether `POST /api/dev-login` gives a player token for any name, no password asked:
    /// the web client's labelled "local dev login". Anyone who reaches it can take any
    /// name, an existing user's included, so unset means "only when `listen` is a
    /// loopback address" ([`Config::dev_login`]), and `true` with any other address is
    /// refused.
    pub dev_login: Option<bool>,
    /// Who may create an account over HTTP (`POST /api/auth/register`).
    pub registration: Registration,
    /// Whether `POST /api/auth/guest` hands out guest identities.
    pub guests: bool,
    /// Lifetime of an access token from the account routes, in seconds.
    pub access_ttl_secs: u64,
    /// Lifetime of a refresh token (each rotation starts it anew), in days.
    pub refresh_ttl_days: u64,
    /// New identities (accounts and guests) one client address may create per hour.
    pub registrations_per_hour: u32,
    /// Personal API tokens one account may hold at once (`/api/tokens`): each is a row
    /// and a lookup key, so the count is bounded.
    pub max_personal_tokens: usize,
    /// The URL people reach this server at; `https://…` marks the refresh cookie
    /// `Secure`.
    pub public_url: Option<String>,
    /// Reverse proxies whose `X-Forwarded-For` names the client address, by address or
    /// network; from any other peer the header is ignored, since a client can write
    /// anything in it.
    pub trusted_proxies: Vec<Network>,
}

/// Who may register an account over HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Registration {
    /// Anyone (limited per address per hour).
    #[default]
    Open,
    /// Only with an invite code from `tengen user invite`.
    Invite,
    /// Nobody; operators add accounts with `tengen user add`.
    Closed,
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
            dev_login: None,
            registration: Registration::Open,
            guests: true,
            access_ttl_secs: 15 * 60,
            refresh_ttl_days: 30,
            registrations_per_hour: 20,
            max_personal_tokens: 20,
            public_url: None,
            trusted_proxies: Vec::new(),
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
    /// Bytes of live frames queued for one connection before it counts as too slow.
    pub outbound_queue_bytes: usize,
    pub max_seeks_per_user: usize,
    pub max_games_per_user: usize,
    /// Seconds between server pings.
    pub heartbeat_secs: u64,
    /// Seconds without any message or pong before a connection is closed.
    pub idle_timeout_secs: u64,
    /// Open WebSocket connections at most.
    pub max_connections: usize,
    /// Open WebSocket connections of one user at most, so one user cannot take them all.
    pub max_connections_per_user: usize,
    /// Games one connection may have joined at once: each is a room kept in memory (a
    /// finished one rebuilt from the store) for as long as it stays joined.
    pub max_joined_games: usize,
    /// Open WebSocket connections from one client address at most (an IPv6 client is its
    /// /64; behind `auth.trusted_proxies`, the address they forward).
    pub max_connections_per_address: usize,
    /// The share of `max_connections`, in percent, that connections without a login may
    /// hold, so that logged-in players always find room.
    pub anonymous_connections_percent: u8,
    /// Seconds a connection without a login may follow nothing (no game joined, the lobby
    /// not watched) before it is closed.
    pub anonymous_idle_secs: u64,
    /// Chat lines one user may send per minute, in all games and connections together.
    pub chat_lines_per_minute: u32,
    /// Bytes of chat (players' and spectators') one game takes at most while its room is
    /// open on this node.
    pub max_chat_bytes_per_game: usize,
    /// Reviews (saved analysis boards) one account may keep.
    pub max_reviews_per_user: u64,
    /// Reviews one guest may keep: guests cost one request each to make.
    pub max_reviews_per_guest: u64,
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
            outbound_queue_bytes: 1 << 20,
            max_seeks_per_user: 5,
            max_games_per_user: 20,
            heartbeat_secs: 20,
            idle_timeout_secs: 60,
            max_connections: 19_000,
            max_connections_per_user: 20,
            max_joined_games: 100,
            max_connections_per_address: 100,
            anonymous_connections_percent: 50,
            anonymous_idle_secs: 30,
            chat_lines_per_minute: 20,
            max_chat_bytes_per_game: 256 * 1024,
            max_reviews_per_user: 500,
            max_reviews_per_guest: 20,
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

/// Where the game log lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreBackend {
    /// One SQLite file in the data directory: one server.
    #[default]
    Sqlite,
    /// A PostgreSQL database at `store.postgres_url`, which several servers can share.
    Postgres,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    pub backend: StoreBackend,
    /// SQLite only: how hard each commit is flushed.
    pub sync: SyncSetting,
    /// `postgres://user:password@host:port/database`, for `backend = "postgres"`. A
    /// secret: shown and logged only with its password redacted ([`redact_url`]).
    pub postgres_url: Option<String>,
    /// Microseconds the group commit waits, when busy, for more commits to join a group
    /// ([`crate::store::StoreWriter`]); 0 turns the wait off.
    pub group_wait_us: u64,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            backend: StoreBackend::default(),
            sync: SyncSetting::default(),
            postgres_url: None,
            group_wait_us: 1_000,
        }
    }
}

/// Creates the data directory (and its parents) where it is missing, readable by its
/// owner only: it holds the token secret and, in the SQLite file, password hashes. A
/// directory that exists keeps the permissions its operator gave it.
pub fn create_data_dir(path: &std::path::Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

/// The shortest HS256 secret taken, in bytes: as long as the SHA-256 it keys, so that it
/// cannot be found by trying short ones against a token.
pub const MIN_SECRET_BYTES: usize = 32;

/// The longest `store.group_wait_us`: a move waits up to this much longer under load.
pub const MAX_GROUP_WAIT_US: u64 = 100_000;

/// A database or NATS URL with every secret in it replaced by [`REDACTED`], fit for a
/// log line or an error message: the password of the user info, a NATS token in the
/// user info's place, and the value of a query parameter that names a password, token
/// or key (`?password=`, `?token=`, `?sslpassword=` …). Anything that is not a URL (a
/// `host=… password=…` connection string, say) is not shown at all.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return REDACTED.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    // The user info ends at the last `@` (a password may contain `@`).
    let authority = match authority.rfind('@') {
        None => authority.to_owned(),
        Some(at) => {
            let (info, host) = (&authority[..at], &authority[at + 1..]);
            match info.split_once(':') {
                Some((user, _)) => format!("{user}:{REDACTED}@{host}"),
                // A lone name is PostgreSQL's user, but NATS's token.
                None if scheme.starts_with("postgres") => format!("{info}@{host}"),
                None => format!("{REDACTED}@{host}"),
            }
        }
    };
    let tail = match tail.split_once('?') {
        None => tail.to_owned(),
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|param| match param.split_once('=') {
                    Some((key, _)) if is_secret_param(key) => format!("{key}={REDACTED}"),
                    _ => param.to_owned(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
    };
    format!("{scheme}://{authority}{tail}")
}

/// Whether a URL's query parameter `key` carries a secret.
fn is_secret_param(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["password", "pass", "token", "secret", "key", "jwt", "creds"]
        .iter()
        .any(|word| key.contains(word))
}

/// Several nodes acting as one server (docs/ARCHITECTURE.md §8). Without `nats_url`
/// the server is a single node and none of the rest is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterConfig {
    /// The NATS server the nodes talk through (`nats://host:4222`); unset: one node.
    pub nats_url: Option<String>,
    /// This node's name among the nodes; unset: generated once and kept in the data dir.
    pub node_id: Option<String>,
    /// How long a node owns a game without renewing its lease: after a crash, the
    /// longest a game waits for another node to take it over.
    pub lease_ms: u64,
    /// The prefix of every subject the nodes use, so that several clusters (or tests)
    /// can share one NATS server.
    pub name: String,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            nats_url: None,
            node_id: None,
            lease_ms: 5000,
            name: "tengen".into(),
        }
    }
}

impl ClusterConfig {
    /// The shortest and longest lease a node may hold.
    pub const LEASE_MS: std::ops::RangeInclusive<u64> = 500..=300_000;
}

/// A node id or cluster name: what NATS subjects and the store can carry as they are.
pub fn is_plain_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// What is wrong with a NATS server address, read as the NATS client reads it at start
/// (so that `tengen config --check` refuses what the node would fail on), or `None`. The
/// text never repeats the address, which may hold a password.
fn nats_url_problem(url: &str) -> Option<String> {
    let address = match url.parse::<async_nats::ServerAddr>() {
        Ok(address) => address,
        Err(e) => return Some(format!("is not a NATS server address: {e}")),
    };
    let url = address.into_inner();
    if url.host_str().is_none_or(str::is_empty) {
        Some("names no host; write it as nats://host:4222".into())
    } else if !matches!(url.path(), "" | "/") {
        Some(
            "has a path, which a NATS server address never has; write it as nats://host:4222"
                .into(),
        )
    } else {
        None
    }
}

/// Clock policy.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClockConfig {
    pub limits: ClockLimits,
    pub lag: LagSettings,
}

/// Rules policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RulesConfig {
    /// Whether games under the ancient Chinese rules (`ancient-chinese`, docs/RULES.md
    /// §9.1) may be rated. Off by default: their set stones, White's first move and the
    /// group tax make another game, which the ratings of modern games do not measure.
    pub rated_ancient: bool,
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
/// or flag at fault and the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the config file {path}: {cause}")]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("the config file {path} is not valid: {message}")]
    File { path: PathBuf, message: String },
    #[error(
        "the environment variable {var} does not name a setting (expected TENGEN_KEY or TENGEN_SECTION__KEY, e.g. TENGEN_LISTEN or TENGEN_LIMITS__BURST)"
    )]
    EnvName { var: String },
    #[error("the environment variable {var} (setting `{key}`) is not valid: {message}")]
    Env {
        var: String,
        key: String,
        message: String,
    },
    #[error("the flag {flag} (setting `{key}`) is not valid: {message}")]
    Flag {
        flag: String,
        key: String,
        message: String,
    },
    #[error("the setting `{key}`{origin} {message}")]
    Invalid {
        key: &'static str,
        /// Where the value came from, e.g. ` (from the environment variable TENGEN_LOG)`;
        /// empty for a default or when unknown.
        origin: String,
        message: String,
    },
}

/// Prefix of environment variables that set configuration keys. Nested keys are joined
/// with a double underscore: `TENGEN_AUTH__ISSUER` sets `auth.issuer`.
pub const ENV_PREFIX: &str = "TENGEN_";

/// The one `TENGEN_` variable that is not `TENGEN_<KEY>`: a shortcut for `log.filter`
/// (like `RUST_LOG`). `TENGEN_LOG__FILTER` wins when both are set.
pub const LOG_ENV: &str = "TENGEN_LOG";

/// Variables of `tengen bot` (a client, not the server): `TENGEN_BOT_TOKEN` and any
/// other `TENGEN_BOT_<NAME>`. Not settings, so the server ignores them; a `[bot]`
/// section would still be reachable as `TENGEN_BOT__KEY`.
pub const BOT_ENV_PREFIX: &str = "TENGEN_BOT_";

/// `tengen store migrate`'s target URL (a flag's value kept off the command line), not
/// a setting.
pub const MIGRATE_TO_ENV: &str = "TENGEN_MIGRATE_TO";

/// Whether `var` is a `TENGEN_*` variable that does not name a setting.
fn is_not_a_setting(var: &str) -> bool {
    var == MIGRATE_TO_ENV
        || var
            .strip_prefix(BOT_ENV_PREFIX)
            .is_some_and(|rest| !rest.starts_with('_'))
}

/// What `tengen config --print` shows instead of a secret.
pub const REDACTED: &str = "<redacted>";

/// A setting given on the command line, as a dotted key and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagSetting {
    /// The flag as the user typed it, for messages (`--data`, `--set limits.burst=60`).
    pub flag: String,
    /// Dotted key: `limits.burst`.
    pub key: String,
    /// The value, read like an environment value.
    pub value: String,
}

impl FlagSetting {
    /// Parses `--set KEY=VALUE`.
    pub fn parse_set(arg: &str) -> Result<FlagSetting, String> {
        let (key, value) = arg
            .split_once('=')
            .ok_or_else(|| format!("`{arg}` is not KEY=VALUE (e.g. limits.burst=60)"))?;
        let key = key.trim();
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(format!(
                "`{arg}`: the key must be dotted, e.g. limits.burst"
            ));
        }
        Ok(FlagSetting {
            flag: format!("--set {arg}"),
            key: key.to_string(),
            value: value.to_string(),
        })
    }
}

/// A setting `key` that cannot be as it is, and why.
fn invalid(key: &'static str, message: impl Into<String>) -> Result<(), ConfigError> {
    Err(ConfigError::Invalid {
        key,
        origin: String::new(),
        message: message.into(),
    })
}

impl Config {
    /// Whether the local dev login is on: as set, else only on a loopback `listen`
    /// address, where nobody but this machine's users can reach it.
    pub fn dev_login(&self) -> bool {
        self.auth
            .dev_login
            .unwrap_or_else(|| self.listen.ip().is_loopback())
    }

    /// Defaults, overridden by the TOML file (if any), then by `TENGEN_*` variables from
    /// `env`, then checked. Other variables in `env` are ignored.
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        Config::load_with_flags(file, env, &[])
    }

    /// Like [`Config::load`], with command-line settings applied last.
    pub fn load_with_flags(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
        flags: &[FlagSetting],
    ) -> Result<Config, ConfigError> {
        // Which source set each key last, so a range error can say where to fix it.
        let mut origins: Vec<(String, String)> = Vec::new();
        // The file is read on its own, as text, so its errors carry a line and column.
        let base = match file {
            None => Config::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|cause| ConfigError::Read {
                    path: path.to_path_buf(),
                    cause,
                })?;
                let invalid = |e: toml::de::Error| ConfigError::File {
                    path: path.to_path_buf(),
                    message: e.to_string().trim_end().to_string(),
                };
                let config = toml::from_str::<Config>(&text).map_err(invalid)?;
                let table = text.parse::<toml::Table>().map_err(invalid)?;
                let from = format!("the config file {}", path.display());
                leaf_keys(&table, "", &mut |key| origins.push((key, from.clone())));
                config
            }
        };
        let mut tree = toml::Table::try_from(&base).map_err(|e| ConfigError::Invalid {
            key: "(all)",
            origin: String::new(),
            message: format!("cannot be represented: {e}"),
        })?;
        // Sorted, so `TENGEN_LIMITS` comes before (and is refined by) `TENGEN_LIMITS__BURST`
        // and errors do not depend on the order of the process environment.
        let mut vars: Vec<(String, String)> = env
            .into_iter()
            .filter(|(var, _)| var.starts_with(ENV_PREFIX) && !is_not_a_setting(var))
            .collect();
        vars.sort();
        for (var, value) in vars {
            let key = env_key(&var).ok_or_else(|| ConfigError::EnvName { var: var.clone() })?;
            set_key(&mut tree, &key, &value).map_err(|message| ConfigError::Env {
                var: var.clone(),
                key: key.join("."),
                message,
            })?;
            origins.push((key.join("."), format!("the environment variable {var}")));
        }
        for flag in flags {
            let key: Vec<String> = flag.key.split('.').map(str::to_string).collect();
            set_key(&mut tree, &key, &flag.value).map_err(|message| ConfigError::Flag {
                flag: flag.flag.clone(),
                key: flag.key.clone(),
                message,
            })?;
            origins.push((flag.key.clone(), format!("the flag {}", flag.flag)));
        }
        let config = Config::deserialize(tree).map_err(|e| ConfigError::Invalid {
            key: "(all)",
            origin: String::new(),
            message: e.to_string(),
        })?;
        config.validate().map_err(|e| match e {
            ConfigError::Invalid { key, message, .. } => {
                let origin = origins
                    .iter()
                    .rev()
                    .find(|(set, _)| key == set || key.starts_with(&format!("{set}.")))
                    .map(|(_, from)| format!(" (from {from})"))
                    .unwrap_or_default();
                ConfigError::Invalid {
                    key,
                    origin,
                    message,
                }
            }
            other => other,
        })?;
        Ok(config)
    }

    /// Checks what types alone cannot: ranges, and settings that would be ignored.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.data_dir.as_os_str().is_empty() {
            return invalid("data_dir", "must not be empty");
        }
        self.check_cluster()?;
        self.check_auth()?;
        self.check_limits()?;
        self.check_clock()?;
        self.check_store()?;
        if let Err(e) = tracing_subscriber::EnvFilter::try_new(&self.log.filter) {
            return invalid(
                "log.filter",
                format!("is not a log filter such as `info` or `tengen=debug,info`: {e}"),
            );
        }
        Ok(())
    }

    /// `cluster`: names, the lease, and what a cluster needs of the store and auth.
    fn check_cluster(&self) -> Result<(), ConfigError> {
        let c = &self.cluster;
        if !ClusterConfig::LEASE_MS.contains(&c.lease_ms) {
            return invalid(
                "cluster.lease_ms",
                format!(
                    "must be from {} to {} milliseconds",
                    ClusterConfig::LEASE_MS.start(),
                    ClusterConfig::LEASE_MS.end()
                ),
            );
        }
        if !is_plain_name(&c.name) {
            return invalid(
                "cluster.name",
                "must be 1 to 64 letters, digits, '-' or '_' (it prefixes NATS subjects)",
            );
        }
        if let Some(problem) = c.nats_url.as_deref().and_then(nats_url_problem) {
            return invalid("cluster.nats_url", problem);
        }
        if c.nats_url.is_some() && self.store.backend != StoreBackend::Postgres {
            return invalid(
                "cluster.nats_url",
                "is set, but the nodes of a cluster share one store: set store.backend = \"postgres\" and store.postgres_url",
            );
        }
        if c.nats_url.is_some()
            && self.auth.algorithm == JwtAlgorithm::HS256
            && self.auth.secret.is_none()
        {
            return invalid(
                "cluster.nats_url",
                "is set, but auth.secret is not: every node must check tokens with the same secret (a generated one is each node's own)",
            );
        }
        if c.node_id.as_deref().is_some_and(|id| !is_plain_name(id)) {
            return invalid(
                "cluster.node_id",
                "must be 1 to 64 letters, digits, '-' or '_'",
            );
        }
        Ok(())
    }

    /// `auth`: the secret or key for the algorithm, lifetimes, the dev login.
    fn check_auth(&self) -> Result<(), ConfigError> {
        let a = &self.auth;
        match (&a.secret, a.algorithm) {
            (Some(s), _) if s.is_empty() => {
                return invalid(
                    "auth.secret",
                    "must not be empty; leave it unset to use a generated one",
                );
            }
            (Some(s), _) if s.len() < MIN_SECRET_BYTES && s != REDACTED => {
                return invalid(
                    "auth.secret",
                    format!(
                        "is {} bytes; an HS256 secret must have at least {MIN_SECRET_BYTES}, or a token signed with a guessed one passes (e.g. `head -c 32 /dev/urandom | base64`; or leave it unset to use a generated one)",
                        s.len()
                    ),
                );
            }
            (Some(s), _) if s == REDACTED => {
                return invalid(
                    "auth.secret",
                    format!(
                        "is the placeholder {REDACTED:?} printed by `tengen config --print`; set the real secret or leave it unset"
                    ),
                );
            }
            (Some(_), JwtAlgorithm::RS256 | JwtAlgorithm::EdDSA) => {
                return invalid(
                    "auth.secret",
                    format!(
                        "is set, but auth.algorithm is {:?}, which checks tokens with auth.public_key_file; remove the secret",
                        a.algorithm
                    ),
                );
            }
            _ => {}
        }
        match (&a.public_key_file, a.algorithm) {
            (None, JwtAlgorithm::RS256 | JwtAlgorithm::EdDSA) => {
                return invalid(
                    "auth.public_key_file",
                    format!("must be set when auth.algorithm is {:?}", a.algorithm),
                );
            }
            (Some(_), JwtAlgorithm::HS256) => {
                return invalid(
                    "auth.public_key_file",
                    "is set, but auth.algorithm is HS256, which uses auth.secret; set auth.algorithm to \"RS256\" or \"EdDSA\", or remove the key file",
                );
            }
            _ => {}
        }
        if a.dev_login == Some(true) && !self.listen.ip().is_loopback() {
            return invalid(
                "auth.dev_login",
                format!(
                    "is true, but listen ({}) is reachable from other machines, where anyone could log in under any name; leave it unset or false, or listen on 127.0.0.1",
                    self.listen
                ),
            );
        }
        if !(60..=86_400).contains(&a.access_ttl_secs) {
            return invalid(
                "auth.access_ttl_secs",
                "must be from 60 to 86400: an access token cannot be taken back before it expires",
            );
        }
        if !(1..=365).contains(&a.refresh_ttl_days) {
            return invalid("auth.refresh_ttl_days", "must be from 1 to 365");
        }
        if a.registrations_per_hour == 0 {
            return invalid(
                "auth.registrations_per_hour",
                "must be at least 1; set auth.registration = \"closed\" to stop registrations",
            );
        }
        if !(1..=1000).contains(&a.max_personal_tokens) {
            return invalid("auth.max_personal_tokens", "must be from 1 to 1000");
        }
        if let Some(url) = &a.public_url
            && !(url.starts_with("https://") || url.starts_with("http://"))
        {
            return invalid(
                "auth.public_url",
                format!("must start with https:// or http://, not {url:?}"),
            );
        }
        Ok(())
    }

    /// `limits` and `http`: nothing that must count is zero, and the limits agree.
    fn check_limits(&self) -> Result<(), ConfigError> {
        let l = &self.limits;
        let at_least_one = [
            ("limits.max_message_bytes", l.max_message_bytes as u64),
            (
                "limits.messages_per_second",
                u64::from(l.messages_per_second),
            ),
            ("limits.burst", u64::from(l.burst)),
            ("limits.flood_close_after", u64::from(l.flood_close_after)),
            ("limits.outbound_queue", l.outbound_queue as u64),
            ("limits.outbound_queue_bytes", l.outbound_queue_bytes as u64),
            ("limits.max_seeks_per_user", l.max_seeks_per_user as u64),
            ("limits.max_games_per_user", l.max_games_per_user as u64),
            ("limits.heartbeat_secs", l.heartbeat_secs),
            ("limits.max_connections", l.max_connections as u64),
            (
                "limits.max_connections_per_user",
                l.max_connections_per_user as u64,
            ),
            ("limits.max_joined_games", l.max_joined_games as u64),
            (
                "limits.max_connections_per_address",
                l.max_connections_per_address as u64,
            ),
            ("limits.anonymous_idle_secs", l.anonymous_idle_secs),
            (
                "limits.chat_lines_per_minute",
                u64::from(l.chat_lines_per_minute),
            ),
            (
                "limits.max_chat_bytes_per_game",
                l.max_chat_bytes_per_game as u64,
            ),
        ];
        for (key, value) in at_least_one {
            if value == 0 {
                return invalid(key, "must be at least 1");
            }
        }
        if l.max_message_bytes > l.max_frame_bytes {
            return invalid(
                "limits.max_message_bytes",
                format!(
                    "is {}, above limits.max_frame_bytes ({}); a message cannot be larger than the frame that carries it",
                    l.max_message_bytes, l.max_frame_bytes
                ),
            );
        }
        if l.anonymous_connections_percent > 100 {
            return invalid(
                "limits.anonymous_connections_percent",
                "must be from 0 to 100 (a share of limits.max_connections)",
            );
        }
        if let Err((key, message)) = self.http.check() {
            return invalid(key, message);
        }
        if let Err((key, message)) = (self.notify.check())
            .and_then(|()| self.mail.check())
            .and_then(|()| self.push.check())
            .and_then(|()| self.correspondence.check())
        {
            return invalid(key, message);
        }
        if l.idle_timeout_secs <= l.heartbeat_secs {
            return invalid(
                "limits.idle_timeout_secs",
                format!(
                    "is {}, not above limits.heartbeat_secs ({}); a quiet client that answers every ping would be closed",
                    l.idle_timeout_secs, l.heartbeat_secs
                ),
            );
        }
        Ok(())
    }

    /// `clock.limits`: every ceiling at least 1.
    fn check_clock(&self) -> Result<(), ConfigError> {
        let c = &self.clock.limits;
        let positive: [(&'static str, u64); 6] = [
            ("clock.limits.max_main_ms", c.max_main_ms),
            ("clock.limits.max_period_ms", c.max_period_ms),
            ("clock.limits.max_periods", u64::from(c.max_periods)),
            ("clock.limits.max_moves", u64::from(c.max_moves)),
            (
                "clock.limits.max_correspondence_main_ms",
                c.max_correspondence_main_ms,
            ),
            (
                "clock.limits.max_correspondence_period_ms",
                c.max_correspondence_period_ms,
            ),
        ];
        for (key, value) in positive {
            if value == 0 {
                return invalid(key, "must be at least 1");
            }
        }
        Ok(())
    }

    /// `store`: the group wait, and the URL the backend needs.
    fn check_store(&self) -> Result<(), ConfigError> {
        if self.store.group_wait_us > MAX_GROUP_WAIT_US {
            return invalid(
                "store.group_wait_us",
                format!(
                    "is {}, above {MAX_GROUP_WAIT_US} (0.1 s): every move would wait that long under load",
                    self.store.group_wait_us
                ),
            );
        }
        match (self.store.backend, &self.store.postgres_url) {
            (StoreBackend::Postgres, None) => {
                return invalid(
                    "store.postgres_url",
                    "must be set when store.backend is \"postgres\" (postgres://user:password@host:port/database)",
                );
            }
            (StoreBackend::Postgres, Some(url))
                if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) =>
            {
                return invalid(
                    "store.postgres_url",
                    format!(
                        "must start with postgres:// or postgresql://, not {:?}",
                        redact_url(url)
                    ),
                );
            }
            (StoreBackend::Postgres, Some(url)) if url.contains(REDACTED) => {
                return invalid(
                    "store.postgres_url",
                    format!(
                        "holds the placeholder {REDACTED:?} printed by `tengen config --print`; set the real password"
                    ),
                );
            }
            (StoreBackend::Sqlite, Some(_)) => {
                return invalid(
                    "store.postgres_url",
                    "is set, but store.backend is \"sqlite\"; set store.backend = \"postgres\" to use it, or remove the URL",
                );
            }
            _ => {}
        }
        Ok(())
    }

    /// The configuration as TOML, with the secret replaced by [`REDACTED`] and unset
    /// optional keys listed in a comment. Loading the output gives the same configuration
    /// (except the secret).
    pub fn to_toml_redacted(&self) -> String {
        let mut shown = self.clone();
        if shown.auth.secret.is_some() {
            shown.auth.secret = Some(REDACTED.to_string());
        }
        if shown.push.private_key.is_some() {
            shown.push.private_key = Some(REDACTED.to_string());
        }
        shown.store.postgres_url = shown.store.postgres_url.as_deref().map(redact_url);
        shown.cluster.nats_url = shown.cluster.nats_url.as_deref().map(redact_url);
        let unset: Vec<&str> = [
            ("auth.secret", self.auth.secret.is_none()),
            ("auth.public_key_file", self.auth.public_key_file.is_none()),
            ("auth.issuer", self.auth.issuer.is_none()),
            ("auth.audience", self.auth.audience.is_none()),
            ("auth.dev_login", self.auth.dev_login.is_none()),
            ("auth.public_url", self.auth.public_url.is_none()),
            ("store.postgres_url", self.store.postgres_url.is_none()),
            ("cluster.nats_url", self.cluster.nats_url.is_none()),
            ("cluster.node_id", self.cluster.node_id.is_none()),
            ("push.private_key", self.push.private_key.is_none()),
        ]
        .into_iter()
        .filter_map(|(key, unset)| unset.then_some(key))
        .collect();
        let mut out = String::new();
        if !unset.is_empty() {
            out.push_str(&format!("# Not set: {}\n", unset.join(", ")));
        }
        out.push_str(
            &toml::to_string_pretty(&shown).unwrap_or_else(|e| format!("# cannot print: {e}\n")),
        );
        out
    }
}

/// Calls `found` with the dotted key of every value (not section) in `table`.
fn leaf_keys(table: &toml::Table, prefix: &str, found: &mut impl FnMut(String)) {
    for (key, value) in table {
        let dotted = format!("{prefix}{key}");
        match value {
            toml::Value::Table(inner) => leaf_keys(inner, &format!("{dotted}."), found),
            _ => found(dotted),
        }
    }
}

/// `TENGEN_LIMITS__BURST` → `["limits", "burst"]`; `TENGEN_LOG` → `["log", "filter"]`.
fn env_key(var: &str) -> Option<Vec<String>> {
    if var == LOG_ENV {
        return Some(vec!["log".into(), "filter".into()]);
    }
    let name = var.strip_prefix(ENV_PREFIX)?;
    let key: Vec<String> = name.split("__").map(|p| p.to_ascii_lowercase()).collect();
    if key
        .iter()
        .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
    {
        return None;
    }
    Some(key)
}

/// Sets `key` in `tree` to `value` and checks the result still describes a [`Config`];
/// the error is serde's sentence (an unknown field, a wrong type).
///
/// The value is read as TOML when it is a TOML value (`60`, `true`, `"x"`, `[1, 2]`),
/// else as a plain string. When the TOML reading does not fit but the plain string does
/// (a secret or issuer that happens to look like a number), the string is taken.
fn set_key(tree: &mut toml::Table, key: &[String], value: &str) -> Result<(), String> {
    let typed = parse_value(value);
    let attempt = |v: toml::Value| {
        let mut candidate = tree.clone();
        insert(&mut candidate, key, v)?;
        Config::deserialize(candidate.clone())
            .map(|_| candidate)
            .map_err(|e| e.to_string().trim_end().replace('\n', " "))
    };
    let plain = toml::Value::String(value.to_string());
    let result = if typed == plain {
        attempt(typed)
    } else {
        attempt(typed).or_else(|first| attempt(plain).map_err(|_| first))
    };
    *tree = result?;
    Ok(())
}

fn insert(tree: &mut toml::Table, key: &[String], value: toml::Value) -> Result<(), String> {
    let (last, parents) = key.split_last().ok_or("the key is empty")?;
    let mut table = tree;
    for (depth, part) in parents.iter().enumerate() {
        table = table
            .entry(part.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| {
                format!(
                    "`{}` is a value, not a section",
                    parents[..=depth].join(".")
                )
            })?;
    }
    table.insert(last.clone(), value);
    Ok(())
}

fn parse_value(value: &str) -> toml::Value {
    format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()))
}
