//! `tengen token`: print a token signed with this server's secret, so a newcomer can
//! log in (or a bot can be set up) in a minute.

use std::process::ExitCode;

use anyhow::{Context, bail};
use tengen::auth::{claims_for, load_or_create_secret, sign, user_of};
use tengen::config::JwtAlgorithm;
use tengen::protocol::Role;

use super::config_args::ConfigArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The user id (the token's `sub`).
    #[arg(long)]
    pub sub: String,
    /// Display name [default: the user id]
    #[arg(long)]
    pub name: Option<String>,
    /// player, bot, referee, admin or guest (unrated games only).
    #[arg(long, default_value = "player", value_parser = parse_token_role)]
    pub role: Role,
    /// How long the token is valid: e.g. 3600s, 30m, 24h, 7d.
    #[arg(long, default_value = "24h", value_parser = parse_ttl)]
    pub ttl: u64,
    #[command(flatten)]
    pub config: ConfigArgs,
}

fn parse_token_role(s: &str) -> Result<Role, String> {
    serde_json::from_value(serde_json::Value::String(s.to_string()))
        .map_err(|_| format!("`{s}` is not a role: use player, bot, referee, admin or guest"))
}

/// An account's role: a token's, except guest (guests are made by the server, never
/// accounts).
pub fn parse_role(s: &str) -> Result<Role, String> {
    match parse_token_role(s) {
        Ok(Role::Guest) | Err(_) => Err(format!(
            "`{s}` is not an account's role: use player, bot, referee or admin"
        )),
        Ok(role) => Ok(role),
    }
}

/// Seconds from `90`, `90s`, `30m`, `24h` or `7d`.
pub fn parse_ttl(s: &str) -> Result<u64, String> {
    let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{s}` is not a duration such as 24h"))?;
    let scale = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("`{s}`: use s, m, h or d")),
    };
    n.checked_mul(scale)
        .filter(|&t| t > 0)
        .ok_or_else(|| format!("`{s}` is not a usable duration"))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = args.config.load()?;
    if config.auth.algorithm != JwtAlgorithm::HS256 {
        bail!(
            "this server checks {:?} tokens issued elsewhere; `tengen token` signs only HS256",
            config.auth.algorithm
        );
    }
    let mut claims = claims_for(&args.sub, args.name.as_deref(), args.role, args.ttl);
    claims.iss = config.auth.issuer.clone();
    claims.aud = config.auth.audience.clone();
    // The server would refuse a token whose `sub` or `name` it does not accept.
    if let Err(why) = user_of(claims.clone()) {
        bail!("{why}");
    }
    // Only once the token can be signed: a refused one leaves nothing behind.
    let secret_file = config.data_dir.join(tengen::auth::SECRET_FILE);
    let new_secret = config.auth.secret.is_none() && !secret_file.is_file();
    let secret = load_or_create_secret(&config.auth, &config.data_dir)?;
    if new_secret {
        // A data directory given wrong would sign with a secret no server has.
        eprintln!(
            "generated a new secret in {}: the token works on a server that runs with this data directory",
            secret_file.display()
        );
    }
    let token = sign(&secret, &claims).context("signing the token")?;
    println!("{token}");
    Ok(ExitCode::SUCCESS)
}
