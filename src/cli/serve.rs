//! `tengen serve`: run the server until SIGINT or SIGTERM.

use std::process::ExitCode;

use tengen::config::LogFormat;
use tengen::server::Server;
use tracing_subscriber::filter::{EnvFilter, filter_fn};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, fmt};

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
    let logs = fmt::layer()
        .with_writer(std::io::stderr)
        // Colours for a person at a terminal, plain text for journald and log files.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let logs = match config.log.format {
        LogFormat::Human => logs.boxed(),
        LogFormat::Json => logs.json().boxed(),
    };
    tracing_subscriber::registry()
        .with(logs.with_filter(filter).with_filter(filter_fn(no_frames)))
        .init();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        tracing::info!(
            listen = %config.listen,
            data = %config.data_dir.display(),
            "starting tengen {}",
            env!("CARGO_PKG_VERSION")
        );
        let stop = stop_signals()?;
        let server = Server::start(config).await?;
        let displaced = tokio::select! {
            () = stop => None,
            why = server.must_stop() => Some(why),
        };
        server.shutdown().await;
        match displaced {
            // Stopped, and the supervisor told so by the exit code.
            Some(why) => Err(why.into()),
            None => anyhow::Ok(()),
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The WebSocket library logs every frame whole at the trace level, an `auth` frame's
/// token included: those lines are never written, whatever `log.filter` asks.
fn no_frames(meta: &tracing::Metadata<'_>) -> bool {
    let frames = ["tungstenite", "tokio_tungstenite"]
        .iter()
        .any(|library| meta.target().starts_with(library));
    !(frames && *meta.level() == tracing::Level::TRACE)
}

/// Ctrl-C or SIGTERM, listened for from before the server starts: a supervisor that
/// stops the server the moment it announces itself gets a graceful stop, not the
/// signal's default end.
#[cfg(unix)]
fn stop_signals() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = interrupt.recv() => {}
        }
    })
}

#[cfg(not(unix))]
fn stop_signals() -> std::io::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
