//! `tengen load`: drive games against a server on this machine and measure them, or
//! (`--baseline-server`) run the minimal fan-out server the figures are compared with.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use tengen::load::{Protocol, Report, baseline, fleet, procfs};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The server's WebSocket URL, on this machine only, e.g. ws://127.0.0.1:7480/ws.
    /// Repeat it for the nodes of one cluster: game g is created on node g % n by both
    /// its players, then Black plays from node g % n, White from (g + 1) % n and
    /// spectator i watches from (g + i) % n, so every game is watched from every node
    /// and White's moves are forwarded to the owner.
    #[arg(long, required_unless_present_any = ["baseline_server", "worker"])]
    pub url: Vec<String>,
    /// Games to open (two player connections each).
    #[arg(long, default_value_t = 100)]
    pub games: u32,
    /// Spectator connections per game.
    #[arg(long, default_value_t = 10)]
    pub spectators: u32,
    /// Milliseconds between two moves of one game.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub move_interval: u64,
    /// Seconds of play (after every connection is open).
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub duration: u64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// The server's data directory, whose jwt-secret signs the players' tokens
    /// [default: ./tengen-data].
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// A file holding the server's HS256 secret (instead of --data).
    #[arg(long, value_name = "FILE")]
    pub token_secret: Option<PathBuf>,
    /// The server's process id, for its memory and CPU [default: found by the port];
    /// with several --url, one per URL in the same order.
    #[arg(long, value_name = "PID")]
    pub server_pid: Vec<u32>,
    /// Speak the baseline server's protocol instead of tengen's.
    #[arg(long)]
    pub baseline: bool,
    /// Run the baseline fan-out server (until Ctrl-C) instead of a load.
    #[arg(long)]
    pub baseline_server: bool,
    /// Address for --baseline-server.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7481")]
    pub listen: SocketAddr,
    /// Worker processes holding the connections [default: none up to 2,000
    /// connections, else one per 9,000 and at least two].
    #[arg(long)]
    pub workers: Option<u32>,
    /// Connect from 127.0.0.1 … 127.0.0.N [default: as many as the ports need].
    #[arg(long, value_name = "N")]
    pub sources: Option<u32>,
    /// Board size of the games.
    #[arg(long, default_value_t = 19)]
    pub board_size: u8,
    /// Seconds to hold every connection idle before the moves start (the server's idle
    /// memory is sampled at the end of it).
    #[arg(long, value_name = "SECS", default_value_t = 3)]
    pub settle: u64,
    /// Games set up at once per process.
    #[arg(long, default_value_t = 32)]
    pub setup_concurrency: usize,
    /// Seed for the random moves [default: from the clock].
    #[arg(long)]
    pub seed: Option<u64>,
    /// After the run against --url, start a baseline server, run the same load against
    /// it and print both with the ratios tengen / baseline (one --url only: compare a
    /// cluster with one node by a run against one node's URL).
    #[arg(long, conflicts_with = "baseline")]
    pub compare: bool,
    /// Run one step per move interval (ms, comma-separated, e.g. 500,400,333,250) and
    /// report the most deliveries per second any step served with p99 under 50 ms.
    #[arg(long, value_name = "MS,MS,…", value_delimiter = ',')]
    pub intervals: Vec<u64>,
    /// Register this many accounts before play, and have them all log in at once a
    /// third into it (tengen only; the server must allow as many registrations per hour:
    /// `--set auth.registrations_per_hour=...`).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub login_storm: u32,
    /// Internal: run as a worker process of a load run (plan on standard input).
    #[arg(long, hide = true)]
    pub worker: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.worker {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(fleet::worker_main())?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.baseline_server {
        return serve_baseline(args.listen);
    }
    if args.url.is_empty() {
        bail!("--url is required");
    }
    if args.compare && args.url.len() > 1 {
        bail!(
            "--compare runs against one server; with {} --url, run the same load against one node (one --url) for the comparison",
            args.url.len()
        );
    }
    let protocol = if args.baseline {
        Protocol::Baseline
    } else {
        Protocol::Tengen
    };
    if args.login_storm > 0 && protocol == Protocol::Baseline {
        bail!("--login-storm needs a tengen server, not --baseline");
    }
    let secret = match protocol {
        Protocol::Baseline => None,
        Protocol::Tengen => Some(read_secret(&args)?),
    };
    let opts = fleet::Options {
        protocol,
        urls: args.url.clone(),
        games: args.games,
        spectators: args.spectators,
        move_interval_ms: args.move_interval.max(1),
        duration_secs: args.duration,
        board_size: args.board_size,
        secret,
        server_pids: args.server_pid.clone(),
        workers: args.workers,
        sources: args.sources,
        settle_secs: args.settle,
        setup_concurrency: args.setup_concurrency,
        seed: args
            .seed
            .unwrap_or_else(|| tengen::time::wall_ms() as u64 ^ u64::from(std::process::id())),
        login_storm: args.login_storm,
    };
    let exe = std::env::current_exe().context("finding this program to start workers")?;
    let worker_exe = exe.clone();
    let worker = move || {
        let mut c = tokio::process::Command::new(&worker_exe);
        c.args(["load", "--worker"]);
        c
    };
    let intervals = if args.intervals.is_empty() {
        vec![opts.move_interval_ms]
    } else {
        args.intervals.iter().map(|&ms| ms.max(1)).collect()
    };
    let runtime = tokio::runtime::Runtime::new()?;
    let runs = runtime.block_on(async {
        let mut runs = Vec::new();
        let mut tengen = Vec::new();
        for &ms in &intervals {
            let step = fleet::Options {
                move_interval_ms: ms,
                ..opts.clone()
            };
            tengen.push(fleet::run(step, Some(&worker)).await?);
        }
        runs.push(tengen);
        if args.compare {
            let baseline = BaselineChild::start(&exe).await?;
            let mut base = Vec::new();
            for &ms in &intervals {
                let step = fleet::Options {
                    protocol: Protocol::Baseline,
                    urls: vec![baseline.url.clone()],
                    server_pids: vec![baseline.pid],
                    secret: None,
                    login_storm: 0,
                    move_interval_ms: ms,
                    ..opts.clone()
                };
                base.push(fleet::run(step, Some(&worker)).await?);
            }
            baseline.stop().await;
            runs.push(base);
        }
        anyhow::Ok(runs)
    })?;
    if args.json {
        let value = match (args.compare, intervals.len()) {
            (false, 1) => serde_json::to_value(&runs[0][0])?,
            (false, _) => serde_json::to_value(&runs[0])?,
            (true, _) => serde_json::json!({
                "tengen": runs[0],
                "baseline": runs[1],
                "ratios": ratios(&runs[0], &runs[1]),
            }),
        };
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        for report in runs.iter().flatten() {
            println!("{report}\n");
        }
        if intervals.len() > 1 {
            for (i, reports) in runs.iter().enumerate() {
                let name = if i == 0 { "tengen" } else { "baseline" };
                println!("{}", best_step(name, reports));
            }
        }
        if args.compare {
            let r = ratios(&runs[0], &runs[1]);
            println!("{}", serde_json::to_string_pretty(&r)?);
        }
    }
    // For scripts: a run that could not set up a single game, or that saw an event
    // missing or out of order, is a failure.
    let failed = runs
        .iter()
        .flatten()
        .any(|r| r.setup.games == 0 || r.violation_total > 0);
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// p99 bound of the throughput figure.
const P99_BOUND_MS: f64 = 50.0;

/// The step that served the most deliveries per second with p99 under the bound.
fn best_deliveries(reports: &[Report]) -> Option<&Report> {
    reports
        .iter()
        .filter(|r| r.move_to_spectator.p99_ms < P99_BOUND_MS && r.violation_total == 0)
        .max_by(|a, b| a.deliveries_per_sec.total_cmp(&b.deliveries_per_sec))
}

fn best_step(name: &str, reports: &[Report]) -> String {
    let steps: Vec<String> = reports
        .iter()
        .map(|r| {
            format!(
                "{} ms: {}/s at p99 {:.2} ms",
                r.move_interval_ms, r.deliveries_per_sec, r.move_to_spectator.p99_ms
            )
        })
        .collect();
    match best_deliveries(reports) {
        Some(best) => format!(
            "{name}: at most {} deliveries/s with p99 < {P99_BOUND_MS} ms (steps: {})",
            best.deliveries_per_sec,
            steps.join("; ")
        ),
        None => format!(
            "{name}: no step kept p99 under {P99_BOUND_MS} ms (steps: {})",
            steps.join("; ")
        ),
    }
}

/// tengen / baseline for the figures that matter, per step and overall.
fn ratios(tengen: &[Report], baseline: &[Report]) -> serde_json::Value {
    let div = |a: f64, b: f64| {
        if b > 0.0 {
            Some((a / b * 1000.0).round() / 1000.0)
        } else {
            None
        }
    };
    let steps: Vec<serde_json::Value> = tengen
        .iter()
        .zip(baseline)
        .map(|(t, b)| {
            let rss = |r: &Report| {
                r.server
                    .as_ref()
                    .map_or(0.0, |s| s.rss_per_idle_connection_kib)
            };
            serde_json::json!({
                "move_interval_ms": t.move_interval_ms,
                "deliveries_per_sec": div(t.deliveries_per_sec, b.deliveries_per_sec),
                "p99_ms": div(t.move_to_spectator.p99_ms, b.move_to_spectator.p99_ms),
                "rss_per_idle_connection": div(rss(t), rss(b)),
            })
        })
        .collect();
    let best = |r: &[Report]| best_deliveries(r).map_or(0.0, |r| r.deliveries_per_sec);
    serde_json::json!({
        "steps": steps,
        "deliveries_per_sec_at_p99_under_50ms": div(best(tengen), best(baseline)),
    })
}

/// A baseline server started as a child process of this program, for `--compare`.
struct BaselineChild {
    child: tokio::process::Child,
    /// Kept open: the server's standard output.
    _output: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    url: String,
    pid: u32,
}

impl BaselineChild {
    async fn start(exe: &std::path::Path) -> anyhow::Result<BaselineChild> {
        use tokio::io::AsyncBufReadExt;
        let mut child = tokio::process::Command::new(exe)
            .args(["load", "--baseline-server", "--listen", "127.0.0.1:0"])
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("starting the baseline server")?;
        let stdout = child
            .stdout
            .take()
            .context("the baseline server's output")?;
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let first = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
            .await
            .context("the baseline server did not start")??
            .context("the baseline server said nothing")?;
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("ws://"))
            .context("the baseline server did not say its address")?
            .to_string();
        let pid = child.id().context("the baseline server's pid")?;
        Ok(BaselineChild {
            child,
            _output: lines,
            url,
            pid,
        })
    }

    async fn stop(mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

/// The HS256 secret: `--token-secret`, else `DATA/jwt-secret` (never created here).
fn read_secret(args: &Args) -> anyhow::Result<Vec<u8>> {
    let path = match (&args.token_secret, &args.data) {
        (Some(file), _) => file.clone(),
        (None, Some(dir)) => dir.join(tengen::auth::SECRET_FILE),
        (None, None) => PathBuf::from("tengen-data").join(tengen::auth::SECRET_FILE),
    };
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "reading the server's token secret {} (give the server's --data DIR or --token-secret FILE)",
            path.display()
        )
    })?;
    let secret = text.trim();
    if secret.is_empty() {
        bail!("the token secret {} is empty", path.display());
    }
    Ok(secret.as_bytes().to_vec())
}

fn serve_baseline(listen: SocketAddr) -> anyhow::Result<ExitCode> {
    if !listen.ip().is_loopback() {
        bail!("the baseline server listens on loopback addresses only, not {listen}");
    }
    let limit = procfs::raise_nofile_limit();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot listen on {listen}"))?;
        let addr = listener.local_addr()?;
        println!(
            "baseline fan-out server: ws://{addr}/ws (pid {}, open-file limit {limit}); Ctrl-C stops it",
            std::process::id()
        );
        baseline::serve(listener, stop_signal()).await;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Ctrl-C or SIGTERM.
async fn stop_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
