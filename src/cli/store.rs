//! `tengen store migrate --to URL`: copies the SQLite store of the data directory into a
//! PostgreSQL database, then checks the copy. Run it with the server stopped; running it
//! again copies only what is missing, which after a complete run is nothing.

use std::process::ExitCode;

use anyhow::Context;
use tengen::config::redact_url;
use tengen::server::{DB_FILE, DataLock};
use tengen::store::{PgStore, SqliteStore, SyncMode, copy};

use super::config_args::ConfigArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Copy the SQLite store (games, events, accounts, ratings, fair play, reviews) into
    /// PostgreSQL and verify it.
    Migrate {
        /// The PostgreSQL database, postgres://user:password@host:port/database (or the
        /// environment variable TENGEN_MIGRATE_TO, which keeps the password off the
        /// command line).
        #[arg(
            long,
            value_name = "URL",
            env = tengen::config::MIGRATE_TO_ENV,
            hide_env_values = true
        )]
        to: String,
        #[command(flatten)]
        config: ConfigArgs,
    },
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Migrate { to, config } => {
            // As for store.postgres_url: a `host=… dbname=…` string would fall back to
            // defaults for what it leaves out and copy into some other database.
            if !(to.starts_with("postgres://") || to.starts_with("postgresql://")) {
                anyhow::bail!(
                    "--to must be a URL that starts with postgres:// or postgresql:// (postgres://user:password@host:port/database)"
                );
            }
            let config = config.load()?;
            let path = config.data_dir.join(DB_FILE);
            if !path.is_file() {
                anyhow::bail!("there is no game database at {}", path.display());
            }
            // A server still writing would leave the copy behind the source.
            let _lock = DataLock::take(&config.data_dir)?;
            let from = SqliteStore::open(&path, SyncMode::Full)?;
            let shown = redact_url(&to);
            let target =
                PgStore::open(&to).with_context(|| format!("opening the database {shown}"))?;
            let summary = copy::sqlite_to_postgres(&from, &target)
                .with_context(|| format!("copying {} into {shown}", path.display()))?;
            from.close()?;
            for (table, rows) in &summary.copied {
                println!("{table}: {rows} rows copied");
            }
            let (s, t) = (&summary.source, &summary.target);
            println!(
                "verified: games {} / {}, events {} / {}, users {} / {} (SQLite / PostgreSQL), every game's last event the same",
                s.games, t.games, s.events, t.events, s.users, t.users
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
