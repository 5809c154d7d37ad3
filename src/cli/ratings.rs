//! `tengen ratings rebuild`: recomputes every rating from the rated results, in the order
//! they were applied, and replaces the recorded changes and standings with the replay's
//! (docs/RATINGS.md §5). Run it with the server stopped: a running server keeps its own
//! ratings in memory and would not see the rebuild until it restarts.

use std::process::ExitCode;

use anyhow::Context;
use tengen::config::StoreBackend;
use tengen::server::{DB_FILE, DataLock, open_store};

use super::config_args::ConfigArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Replay every rated result in order and rewrite every rating from them.
    Rebuild(ConfigArgs),
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Rebuild(config) => {
            let config = config.load()?;
            let path = config.data_dir.join(DB_FILE);
            if config.store.backend == StoreBackend::Sqlite && !path.is_file() {
                anyhow::bail!("there is no game database at {}", path.display());
            }
            // The running server keeps the standings in memory and would not see these.
            let _lock = DataLock::for_store(&config)?;
            let store = open_store(&config)?;
            let games = tengen::standings::rebuild(&*store).context("rebuilding the ratings")?;
            println!("rebuilt the ratings from {games} rated games");
            Ok(ExitCode::SUCCESS)
        }
    }
}
