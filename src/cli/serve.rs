//! `tengen serve`: run the server until SIGINT or SIGTERM.

use std::process::ExitCode;

use tengen::config::LogFormat;
use tengen::server::Server;
use tracing_subscriber::EnvFilter;

use super::config_args::ServerArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub server: ServerArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = args.server.load()?;
    // TENGEN_LOG was folded into log.filter (and checked) by the config loader.
    let filter = EnvFilter::try_new(&config.log.filter)?;
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colours for a person at a terminal, plain text for journald and log files.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    match config.log.format {
        LogFormat::Human => logs.init(),
        LogFormat::Json => logs.json().init(),
    }
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        tracing::info!(
            listen = %config.listen,
            data = %config.data_dir.display(),
            "starting tengen {}",
            env!("CARGO_PKG_VERSION")
        );
        let server = Server::start(config).await?;
        stop_signal().await;
        server.shutdown().await;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Waits for Ctrl-C or SIGTERM.
async fn stop_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
