//! A whole run: splits the games into shares, runs each in this process or in a worker
//! process of the same program (one process cannot hold more than about 19,990 sockets
//! here), starts them together once all are set up, samples the server from `/proc`, and
//! merges what they measured.
//!
//! A worker reads its [`Plan`] as the first line of its standard input, prints
//! `{"ready":…}` when set up, starts on a `go` line, and prints `{"done":…}` at the end.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::report::RunShape;
use super::{
    LoadError, MAX_CONNECTIONS_PER_PROCESS, MAX_DURATION_SECS, MAX_GAMES, Plan, Protocol, Report,
    ServerUse, SetupReport, ShardReport, procfs, run_shard,
};

/// A run as asked for on the command line.
#[derive(Debug, Clone)]
pub struct Options {
    pub protocol: Protocol,
    /// One server's URL, or the URLs of several nodes of one cluster (tengen only):
    /// see [`Plan::node`] for who connects where.
    pub urls: Vec<String>,
    pub games: u32,
    pub spectators: u32,
    pub move_interval_ms: u64,
    pub duration_secs: u64,
    pub board_size: u8,
    /// HS256 secret for player tokens (tengen).
    pub secret: Option<Vec<u8>>,
    /// The servers' processes, for `/proc`, in the order of `urls`; empty: each found by
    /// its URL's port when possible.
    pub server_pids: Vec<u32>,
    /// Worker processes; None: this process for small runs, else enough of them.
    pub workers: Option<u32>,
    /// Source addresses 127.0.0.1..=N; None: as many as the connections need.
    pub sources: Option<u32>,
    /// Seconds to wait, all connections open, before sampling the idle server.
    pub settle_secs: u64,
    pub setup_concurrency: usize,
    pub seed: u64,
    /// Accounts that all log in at once a third into the play (0: no storm).
    pub login_storm: u32,
}

/// The loopback address and port of a `ws://` URL.
pub fn resolve(url: &str) -> Result<SocketAddr, LoadError> {
    let rest = url.strip_prefix("ws://").ok_or_else(|| {
        LoadError::Url(format!(
            "`{url}` is not a ws:// URL such as ws://127.0.0.1:7480/ws"
        ))
    })?;
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && !p.contains(']') => (h, p.parse::<u16>().ok()),
        _ => (authority, Some(80)),
    };
    let port = port.ok_or_else(|| LoadError::Url(format!("`{url}` has no usable port")))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let ip: IpAddr = if host.eq_ignore_ascii_case("localhost") {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        host.parse()
            .map_err(|_| LoadError::NotLoopback(host.to_string()))?
    };
    if !ip.is_loopback() {
        return Err(LoadError::NotLoopback(ip.to_string()));
    }
    Ok(SocketAddr::new(ip, port))
}

/// The lines between a run and its worker processes.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum WorkerMsg {
    Ready(SetupReport),
    Done(Box<ShardReport>),
}

/// A worker process's whole life: plan in, reports out (see the module's doc).
pub async fn worker_main() -> Result<(), LoadError> {
    let fail = |e: std::io::Error| LoadError::Worker(e.to_string());
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let line = stdin
        .next_line()
        .await
        .map_err(fail)?
        .ok_or_else(|| LoadError::Worker("no plan on standard input".into()))?;
    let plan: Plan = serde_json::from_str(&line).map_err(|e| LoadError::Worker(e.to_string()))?;
    procfs::raise_nofile_limit();
    let (ready_tx, ready_rx) = oneshot::channel();
    let (go_tx, go_rx) = oneshot::channel();
    let shard = tokio::spawn(run_shard(plan, ready_tx, go_rx));
    let mut out = tokio::io::stdout();
    if let Ok(setup) = ready_rx.await {
        say(&mut out, &WorkerMsg::Ready(setup))
            .await
            .map_err(fail)?;
    }
    // A closed standard input (the run gave up) means no go: the shard ends at once.
    if let Ok(Some(l)) = stdin.next_line().await
        && l.trim() == "go"
    {
        let _ = go_tx.send(());
    }
    let mut report = shard.await.map_err(|e| LoadError::Worker(e.to_string()))?;
    report.client_cpu_secs = procfs::own_cpu_secs();
    say(&mut out, &WorkerMsg::Done(Box::new(report)))
        .await
        .map_err(fail)
}

async fn say(out: &mut tokio::io::Stdout, msg: &WorkerMsg) -> std::io::Result<()> {
    let mut line = serde_json::to_string(msg).map_err(std::io::Error::other)?;
    line.push('\n');
    out.write_all(line.as_bytes()).await?;
    out.flush().await
}

/// One share of the run, here or in a worker process.
enum Shard {
    Local {
        ready: Option<oneshot::Receiver<SetupReport>>,
        go: Option<oneshot::Sender<()>>,
        done: JoinHandle<ShardReport>,
    },
    Worker {
        child: Box<Child>,
        stdin: Option<ChildStdin>,
        lines: Lines<BufReader<ChildStdout>>,
    },
}

impl Shard {
    fn local(plan: Plan) -> Shard {
        let (ready_tx, ready) = oneshot::channel();
        let (go, go_rx) = oneshot::channel();
        Shard::Local {
            ready: Some(ready),
            go: Some(go),
            done: tokio::spawn(run_shard(plan, ready_tx, go_rx)),
        }
    }

    async fn worker(mut command: Command, plan: &Plan) -> Result<Shard, LoadError> {
        let fail = |e: std::io::Error| LoadError::Worker(e.to_string());
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(fail)?;
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| LoadError::Worker("no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| LoadError::Worker("no stdout".into()))?;
        let mut line = serde_json::to_string(plan).map_err(|e| LoadError::Worker(e.to_string()))?;
        line.push('\n');
        stdin.write_all(line.as_bytes()).await.map_err(fail)?;
        stdin.flush().await.map_err(fail)?;
        Ok(Shard::Worker {
            child: Box::new(child),
            stdin: Some(stdin),
            lines: BufReader::new(stdout).lines(),
        })
    }

    async fn next_msg(lines: &mut Lines<BufReader<ChildStdout>>) -> Result<WorkerMsg, LoadError> {
        let line = lines
            .next_line()
            .await
            .map_err(|e| LoadError::Worker(e.to_string()))?
            .ok_or_else(|| LoadError::Worker("it ended without a report".into()))?;
        serde_json::from_str(&line).map_err(|e| LoadError::Worker(format!("{e}: {line}")))
    }

    async fn ready(&mut self) -> Result<SetupReport, LoadError> {
        match self {
            Shard::Local { ready, .. } => match ready.take() {
                Some(r) => r
                    .await
                    .map_err(|_| LoadError::Worker("the share stopped during setup".into())),
                None => Err(LoadError::Worker("asked twice".into())),
            },
            Shard::Worker { lines, .. } => match Shard::next_msg(lines).await? {
                WorkerMsg::Ready(s) => Ok(s),
                WorkerMsg::Done(_) => Err(LoadError::Worker("done before ready".into())),
            },
        }
    }

    async fn go(&mut self) {
        match self {
            Shard::Local { go, .. } => {
                if let Some(go) = go.take() {
                    let _ = go.send(());
                }
            }
            Shard::Worker { stdin, .. } => {
                if let Some(s) = stdin.as_mut() {
                    let _ = s.write_all(b"go\n").await;
                    let _ = s.flush().await;
                }
            }
        }
    }

    async fn done(self) -> Result<ShardReport, LoadError> {
        match self {
            Shard::Local { done, .. } => done.await.map_err(|e| LoadError::Worker(e.to_string())),
            Shard::Worker {
                mut child,
                stdin,
                mut lines,
            } => {
                let msg = Shard::next_msg(&mut lines).await;
                drop(stdin);
                let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
                match msg? {
                    WorkerMsg::Done(r) => Ok(*r),
                    WorkerMsg::Ready(_) => Err(LoadError::Worker("ready twice".into())),
                }
            }
        }
    }
}

/// How many processes hold the connections (0: this one).
fn worker_count(opts: &Options, connections: u64) -> u32 {
    match opts.workers {
        Some(n) => n,
        None if connections <= 2_000 => 0,
        None => (connections.div_ceil(9_000) as u32).max(2),
    }
}

/// Source addresses for `connections` to one server address: none (the kernel picks)
/// while one address's ephemeral ports suffice, else 127.0.0.1, 127.0.0.2, …
///
/// A port bound to a source address is taken for every destination, and the kernel's
/// search for a free one slows down as the range fills (45,000 connections to three
/// nodes from two bound addresses took 223 s to open); left to `connect`, one port
/// serves one connection to each server address.
fn sources(opts: &Options, server: SocketAddr, connections: u64) -> Result<Vec<IpAddr>, LoadError> {
    let per_address = u64::from(procfs::ephemeral_ports()) * 9 / 10;
    let wanted = match opts.sources {
        Some(n) => u64::from(n),
        None if connections <= per_address => return Ok(Vec::new()),
        None => connections.div_ceil(per_address),
    };
    if wanted == 0 {
        return Ok(Vec::new());
    }
    if server.is_ipv6() || wanted > 254 {
        return Err(LoadError::TooBig(format!(
            "{connections} connections need {wanted} source addresses; use an IPv4 loopback URL and fewer connections"
        )));
    }
    Ok((1..=wanted as u8)
        .map(|i| IpAddr::V4(Ipv4Addr::new(127, 0, 0, i)))
        .collect())
}

/// How many of `connections` the busiest of `servers` gets: every --url an equal share,
/// and the same node may be listed twice.
fn busiest_share(servers: &[SocketAddr], connections: u64) -> u64 {
    let listed = servers
        .iter()
        .map(|s| servers.iter().filter(|&o| o == s).count())
        .max()
        .unwrap_or(1) as u64;
    (connections * listed).div_ceil(servers.len().max(1) as u64)
}

/// The servers' addresses, in the order of `opts.urls`, once the run's shape is within
/// the tool's bounds.
fn checked_servers(opts: &Options) -> Result<Vec<SocketAddr>, LoadError> {
    let servers = opts
        .urls
        .iter()
        .map(|u| resolve(u))
        .collect::<Result<Vec<_>, _>>()?;
    if servers.is_empty() {
        return Err(LoadError::Url("no --url to load".into()));
    }
    if servers.len() > 1 && opts.protocol == Protocol::Baseline {
        return Err(LoadError::Url(
            "several --url are the nodes of one tengen cluster; the baseline server is a single process".into(),
        ));
    }
    if !opts.server_pids.is_empty() && opts.server_pids.len() != servers.len() {
        return Err(LoadError::Url(format!(
            "{} --server-pid for {} --url: give one per URL, in the same order, or none",
            opts.server_pids.len(),
            servers.len()
        )));
    }
    if opts.games == 0 || opts.games > MAX_GAMES {
        return Err(LoadError::TooBig(format!(
            "--games must be 1 to {MAX_GAMES}"
        )));
    }
    if opts.duration_secs == 0 || opts.duration_secs > MAX_DURATION_SECS {
        return Err(LoadError::TooBig(format!(
            "--duration must be 1 to {MAX_DURATION_SECS} seconds"
        )));
    }
    Ok(servers)
}

/// How many worker processes hold the run's `connections` (0: this one), refused when
/// one process would hold more than it can.
fn checked_workers(opts: &Options, can_fork: bool, connections: u64) -> Result<u32, LoadError> {
    let limit = procfs::raise_nofile_limit();
    let workers = if can_fork {
        worker_count(opts, connections)
    } else {
        0
    };
    let processes = u64::from(workers.max(1));
    let per_process = connections.div_ceil(processes);
    let per_process_limit = MAX_CONNECTIONS_PER_PROCESS.min(limit.saturating_sub(200));
    if per_process > per_process_limit {
        return Err(LoadError::TooBig(format!(
            "{connections} connections in {processes} process(es) is {per_process} each, over the {per_process_limit} one process can hold here; use --workers"
        )));
    }
    Ok(workers)
}

/// The run's shares: one here, or one per worker process, each with its range of games.
async fn start_shards(
    games: u32,
    workers: u32,
    worker: Option<&dyn Fn() -> Command>,
    plan_for: impl Fn(u32, u32) -> Plan,
) -> Result<Vec<Shard>, LoadError> {
    let mut shards = Vec::new();
    match (workers, worker) {
        (0, _) | (_, None) => shards.push(Shard::local(plan_for(0, games))),
        (n, Some(make)) => {
            for k in 0..n {
                let first = (u64::from(games) * u64::from(k) / u64::from(n)) as u32;
                let end = (u64::from(games) * u64::from(k + 1) / u64::from(n)) as u32;
                if end > first {
                    shards.push(Shard::worker(make(), &plan_for(first, end - first)).await?);
                }
            }
        }
    }
    Ok(shards)
}

/// The servers' processes sampled at one moment (None where unknown or gone).
type Samples = Vec<Option<procfs::ProcSample>>;

fn sample_all(pids: &[Option<u32>]) -> Samples {
    pids.iter().map(|p| p.and_then(procfs::sample)).collect()
}

/// Samples the servers every 250 ms for `run`, keeping each one's peak memory in
/// `peaks`; the task ends with a last sample of each. None when no process is known.
fn spawn_sampler(
    pids: &[Option<u32>],
    peaks: &Arc<Vec<AtomicU64>>,
    run: Duration,
) -> Option<JoinHandle<Samples>> {
    pids.iter().any(Option::is_some).then(|| {
        let (peaks, pids) = (peaks.clone(), pids.to_vec());
        tokio::spawn(async move {
            let end = tokio::time::Instant::now() + run;
            let mut last = vec![None; pids.len()];
            while tokio::time::Instant::now() < end {
                for (i, pid) in pids.iter().enumerate() {
                    if let Some(s) = pid.and_then(procfs::sample) {
                        peaks[i].fetch_max(s.rss_bytes, Ordering::Relaxed);
                        last[i] = Some(s);
                    }
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            pids.iter()
                .zip(last)
                .map(|(pid, last)| pid.and_then(procfs::sample).or(last))
                .collect()
        })
    })
}

/// What the servers were sampled at, from before setup to the end of the run.
struct ServerSamples {
    pids: Vec<Option<u32>>,
    before: Samples,
    idle: Samples,
    at_go: Samples,
    at_end: Samples,
    peaks: Arc<Vec<AtomicU64>>,
}

impl ServerSamples {
    /// Each node's use of the machine, its connections counted from the plan: `held`
    /// (the connections set up) for one server, those planned for the node for several.
    fn node_use(&self, opts: &Options, nodes: usize, held: u64) -> Vec<Option<ServerUse>> {
        let mut planned = vec![0u64; nodes];
        for g in 0..opts.games {
            for seat in 0..2 + opts.spectators {
                planned[super::node_of(g, seat, nodes)] += 1;
            }
        }
        (0..nodes)
            .map(|i| {
                let (pid, before, idle, go, end) = (
                    self.pids[i]?,
                    self.before[i]?,
                    self.idle[i]?,
                    self.at_go[i]?,
                    (*self.at_end.get(i)?)?,
                );
                let conns = if nodes == 1 { held } else { planned[i] };
                Some(ServerUse::measured(
                    pid,
                    [before, idle, go, end],
                    self.peaks[i].load(Ordering::Relaxed),
                    conns,
                    opts.duration_secs as f64,
                ))
            })
            .collect()
    }
}

/// Runs the load and returns its report. `worker` makes the command that starts a worker
/// process of this program; without one, everything runs in this process.
pub async fn run(opts: Options, worker: Option<&dyn Fn() -> Command>) -> Result<Report, LoadError> {
    let servers = checked_servers(&opts)?;
    let server = servers[0];
    let connections = u64::from(opts.games) * (2 + u64::from(opts.spectators));
    let workers = checked_workers(&opts, worker.is_some(), connections)?;
    let sources = sources(&opts, server, busiest_share(&servers, connections))?;
    let run_id = format!(
        "{:x}",
        (u64::from(std::process::id()) << 20) ^ (crate::time::wall_ms() as u64 & 0xfffff)
    );
    let plan_for = |first_game: u32, games: u32| Plan {
        protocol: opts.protocol,
        urls: opts.urls.clone(),
        servers: servers.clone(),
        first_game,
        games,
        spectators: opts.spectators,
        move_interval_ms: opts.move_interval_ms,
        duration_ms: opts.duration_secs * 1000,
        board_size: opts.board_size,
        secret_hex: opts.secret.as_ref().map(hex::encode),
        run_id: run_id.clone(),
        sources: sources.clone(),
        setup_concurrency: opts.setup_concurrency,
        seed: opts.seed,
    };
    let pids: Vec<Option<u32>> = servers
        .iter()
        .enumerate()
        .map(|(i, s)| {
            opts.server_pids
                .get(i)
                .copied()
                .or_else(|| procfs::listener_pid(s.port()))
        })
        .collect();
    let before = sample_all(&pids);

    let mut shards = start_shards(opts.games, workers, worker, plan_for).await?;
    let setup_limit = Duration::from_secs(60 + connections / 50);
    let mut setups = Vec::new();
    for shard in &mut shards {
        let ready = tokio::time::timeout(setup_limit, shard.ready())
            .await
            .map_err(|_| LoadError::Worker("setup took too long".into()))??;
        setups.push(ready);
    }
    let storm_names = super::storm::usernames(&run_id, opts.login_storm);
    if !storm_names.is_empty() {
        super::storm::prepare(server, &storm_names).await?;
    }
    tokio::time::sleep(Duration::from_secs(opts.settle_secs)).await;
    let idle = sample_all(&pids);

    // The run: all shares start together; the server is sampled until the deadline.
    for shard in &mut shards {
        shard.go().await;
    }
    let at_go = sample_all(&pids);
    let peaks: Arc<Vec<AtomicU64>> = Arc::new(pids.iter().map(|_| AtomicU64::new(0)).collect());
    let sampler = spawn_sampler(&pids, &peaks, Duration::from_secs(opts.duration_secs));
    let storm = (!storm_names.is_empty()).then(|| {
        let start = Duration::from_secs(opts.duration_secs) / 3;
        tokio::spawn(async move {
            tokio::time::sleep(start).await;
            super::storm::run(server, &storm_names).await
        })
    });
    let done_limit = Duration::from_secs(opts.duration_secs + 60);
    let mut reports = Vec::new();
    for shard in shards {
        let report = tokio::time::timeout(done_limit, shard.done())
            .await
            .map_err(|_| LoadError::Worker("the run did not end in time".into()))??;
        reports.push(report);
    }
    let at_end = match sampler {
        Some(task) => task.await.unwrap_or_default(),
        None => Vec::new(),
    };
    if workers == 0
        && let Some(r) = reports.first_mut()
    {
        r.client_cpu_secs = procfs::own_cpu_secs();
    }

    let held: u64 = setups.iter().map(|s| s.connections).sum();
    let samples = ServerSamples {
        pids,
        before,
        idle,
        at_go,
        at_end,
        peaks,
    };
    let nodes = samples.node_use(&opts, servers.len(), held);
    let server_use = match nodes.as_slice() {
        [one] => one.clone(),
        several => ServerUse::sum(several, held, opts.duration_secs as f64),
    };
    let shape = RunShape {
        protocol: opts.protocol,
        url: opts.urls.join(" "),
        games: opts.games,
        spectators: opts.spectators,
        move_interval_ms: opts.move_interval_ms,
        duration_secs: opts.duration_secs as f64,
        workers: workers as usize,
        sources: sources.len(),
    };
    let mut report = Report::merge(shape, &setups, &reports, server_use);
    if servers.len() > 1 {
        report.nodes = nodes;
    }
    if let Some(storm) = storm {
        report.login_storm = storm.await.ok();
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_ports_are_counted_per_server_address() {
        let [a, b, c]: [SocketAddr; 3] =
            ["127.0.0.1:7600", "127.0.0.1:7601", "127.0.0.1:7602"].map(|s| s.parse().unwrap());
        assert_eq!(busiest_share(&[a], 45_000), 45_000);
        assert_eq!(busiest_share(&[a, b, c], 45_000), 15_000);
        assert_eq!(busiest_share(&[a, b, c], 45_001), 15_001);
        assert_eq!(busiest_share(&[a, a, b], 45_000), 30_000);
        assert_eq!(busiest_share(&[], 10), 10);
    }

    #[test]
    fn only_loopback_urls_are_accepted() {
        assert_eq!(
            resolve("ws://127.0.0.1:7480/ws").unwrap(),
            "127.0.0.1:7480".parse().unwrap()
        );
        assert_eq!(
            resolve("ws://localhost:9/ws").unwrap(),
            "127.0.0.1:9".parse().unwrap()
        );
        assert_eq!(
            resolve("ws://[::1]:7480/ws").unwrap(),
            "[::1]:7480".parse().unwrap()
        );
        assert!(resolve("ws://127.3.4.5:1/ws").is_ok());
        for bad in [
            "ws://10.0.0.1:7480/ws",
            "ws://192.168.1.2:80/ws",
            "ws://example.com/ws",
            "ws://8.8.8.8:53/",
        ] {
            assert!(
                matches!(resolve(bad), Err(LoadError::NotLoopback(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            resolve("http://127.0.0.1/ws"),
            Err(LoadError::Url(_))
        ));
    }
}
