//! Subcommands of the `tengen` binary, one module each.

pub mod bot;
pub mod config;
mod config_args;
pub mod load;
pub mod push;
pub mod ratings;
pub mod rules;
pub mod schema;
pub mod serve;
pub mod store;
pub mod token;
pub mod user;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// tengen: an online Go server under the Chinese rules.
#[derive(Debug, Parser)]
#[command(name = "tengen", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Play games with a GTP engine.
    Bot(Box<bot::Args>),
    /// Run the server (HTTP and WebSocket on one port).
    Serve(serve::Args),
    /// Print a login token signed with this server's secret.
    Token(token::Args),
    /// Show (--print) or check (--check) the effective configuration.
    Config(config::Args),
    /// Replay SGF files under a ruleset and print one JSON verdict and count per file.
    Rules(rules::Args),
    /// Drive games against a server on this machine and measure latency, throughput and
    /// memory; or run the baseline fan-out server they are compared with.
    Load(Box<load::Args>),
    /// Manage ratings: `rebuild` replays every rated result and rewrites the ratings.
    Ratings(ratings::Args),
    /// Move the store: `migrate --to URL` copies the SQLite store into PostgreSQL.
    Store(store::Args),
    /// Web Push: `keys` prints a fresh VAPID key pair for `[push]`.
    Push(push::Args),
    /// Write the AsyncAPI document and JSON Schemas of the WebSocket protocol.
    Schema(schema::Args),
    /// Manage accounts on the data directory: add, disable, enable, set-role,
    /// reset-password, list, escapes, invite.
    #[command(subcommand)]
    User(user::Args),
}

/// Runs the chosen subcommand and returns the process exit status.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Bot(args) => bot::run(*args),
        Command::Serve(args) => serve::run(args),
        Command::Token(args) => token::run(args),
        Command::Config(args) => config::run(args),
        Command::Rules(args) => rules::run(args),
        Command::Load(args) => load::run(*args),
        Command::Ratings(args) => ratings::run(args),
        Command::Store(args) => store::run(args),
        Command::Push(args) => push::run(args),
        Command::Schema(args) => schema::run(args),
        Command::User(args) => user::run(args),
    }
}
