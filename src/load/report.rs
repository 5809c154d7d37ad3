//! A whole run's figures: the shares' measurements merged, and the server's memory and
//! CPU; printed for people or as JSON.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::hist::{Histogram, Summary};
use super::procfs::ProcSample;
use super::{Protocol, SetupReport, ShardReport, Violations};

/// The server's use of this machine during a run, from `/proc`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerUse {
    pub pid: u32,
    /// Before the run's connections opened.
    pub rss_before_mib: f64,
    /// With every connection open and joined, before the first move.
    pub rss_idle_mib: f64,
    /// Idle RSS divided by the connections held.
    pub rss_per_idle_connection_kib: f64,
    /// What the connections (and their games) added, per connection.
    pub rss_added_per_connection_kib: f64,
    /// Highest RSS seen while moves were played.
    pub rss_peak_mib: f64,
    /// CPU seconds (user + system) while moves were played.
    pub cpu_secs: f64,
    /// `cpu_secs` over the run's length: 1.0 is one core busy.
    pub cores_busy: f64,
    pub threads: u64,
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

impl ServerUse {
    /// One process's use from its samples before the connections, idle with all of them,
    /// at the start of play and at its end; `peak_rss` is the highest RSS seen in play,
    /// `connections` those it held.
    pub fn measured(
        pid: u32,
        [before, idle, go, end]: [ProcSample; 4],
        peak_rss: u64,
        connections: u64,
        run_secs: f64,
    ) -> ServerUse {
        let mib = |b: u64| round1(b as f64 / (1024.0 * 1024.0));
        let per_conn = |b: u64| {
            if connections == 0 {
                0.0
            } else {
                round1(b as f64 / connections as f64 / 1024.0)
            }
        };
        let cpu = end.cpu_secs - go.cpu_secs;
        ServerUse {
            pid,
            rss_before_mib: mib(before.rss_bytes),
            rss_idle_mib: mib(idle.rss_bytes),
            rss_per_idle_connection_kib: per_conn(idle.rss_bytes),
            rss_added_per_connection_kib: per_conn(idle.rss_bytes.saturating_sub(before.rss_bytes)),
            rss_peak_mib: mib(peak_rss.max(end.rss_bytes)),
            cpu_secs: round2(cpu),
            cores_busy: round2(cpu / run_secs.max(1e-9)),
            threads: end.threads,
        }
    }

    /// The nodes of a cluster added up (pid 0: several processes), over the `connections`
    /// held by all; None unless every node was measured. The peak is the sum of each
    /// node's own peak, an upper bound of the peak of the sum. PostgreSQL and NATS,
    /// shared by the nodes, are not in it.
    pub fn sum(nodes: &[Option<ServerUse>], connections: u64, run_secs: f64) -> Option<ServerUse> {
        let nodes: Vec<&ServerUse> = nodes.iter().map(Option::as_ref).collect::<Option<_>>()?;
        if nodes.is_empty() {
            return None;
        }
        let total = |f: fn(&ServerUse) -> f64| nodes.iter().map(|n| f(n)).sum::<f64>();
        let (before, idle) = (total(|n| n.rss_before_mib), total(|n| n.rss_idle_mib));
        let per_conn = |mib: f64| {
            if connections == 0 {
                0.0
            } else {
                round1(mib * 1024.0 / connections as f64)
            }
        };
        let cpu = total(|n| n.cpu_secs);
        Some(ServerUse {
            pid: 0,
            rss_before_mib: round1(before),
            rss_idle_mib: round1(idle),
            rss_per_idle_connection_kib: per_conn(idle),
            rss_added_per_connection_kib: per_conn((idle - before).max(0.0)),
            rss_peak_mib: round1(total(|n| n.rss_peak_mib)),
            cpu_secs: round2(cpu),
            cores_busy: round2(cpu / run_secs.max(1e-9)),
            threads: nodes.iter().map(|n| n.threads).sum(),
        })
    }
}

/// Everything a run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub protocol: Protocol,
    pub url: String,
    pub games: u32,
    pub spectators: u32,
    pub connections_planned: u64,
    pub move_interval_ms: u64,
    pub duration_secs: f64,
    /// Processes that held the connections (0: the tool's own).
    pub workers: usize,
    /// Source addresses the connections came from (0: the kernel chose).
    pub sources: usize,
    pub setup: SetupReport,
    pub moves: u64,
    pub moves_per_sec: f64,
    pub deliveries: u64,
    pub deliveries_per_sec: f64,
    /// Player's send to each spectator's receipt.
    pub move_to_spectator: Summary,
    /// Player's send to the opponent's receipt.
    pub move_to_opponent: Summary,
    /// Player's send to its acknowledgement (tengen) or its echo (baseline).
    pub move_to_ack: Summary,
    pub errors: BTreeMap<String, u64>,
    pub error_total: u64,
    pub violations: Violations,
    pub violation_total: u64,
    pub unmatched: u64,
    pub exhausted_games: u64,
    pub server: Option<ServerUse>,
    /// With several URLs: each node's use, in the order of the URLs (None: its process
    /// was not found); `server` is then their sum.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<Option<ServerUse>>,
    /// CPU seconds the load tool itself used (all its processes).
    pub client_cpu_secs: f64,
    /// The logins of `--login-storm`, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login_storm: Option<super::storm::StormReport>,
}

/// What the whole run asked for, to label the report.
#[derive(Debug, Clone)]
pub struct RunShape {
    pub protocol: Protocol,
    pub url: String,
    pub games: u32,
    pub spectators: u32,
    pub move_interval_ms: u64,
    pub duration_secs: f64,
    pub workers: usize,
    pub sources: usize,
}

impl Report {
    /// Merges the shares' setups and measurements.
    pub fn merge(
        shape: RunShape,
        setups: &[SetupReport],
        shards: &[ShardReport],
        server: Option<ServerUse>,
    ) -> Report {
        let mut setup = SetupReport::default();
        for s in setups {
            setup.connections += s.connections;
            setup.games += s.games;
            setup.failed += s.failed;
            setup.secs = setup.secs.max(s.secs);
        }
        let (mut spectator, mut opponent, mut ack) = (
            Histogram::default(),
            Histogram::default(),
            Histogram::default(),
        );
        let mut errors = BTreeMap::new();
        let mut violations = Violations::default();
        let (mut moves, mut deliveries, mut unmatched, mut exhausted) = (0, 0, 0, 0);
        let (mut run_secs, mut client_cpu_secs) = (0f64, 0f64);
        for r in shards {
            spectator.merge(&r.spectator);
            opponent.merge(&r.opponent);
            ack.merge(&r.ack);
            for (k, n) in &r.errors {
                *errors.entry(k.clone()).or_insert(0) += n;
            }
            violations.add(&r.violations);
            moves += r.moves;
            deliveries += r.deliveries;
            unmatched += r.unmatched;
            exhausted += r.exhausted;
            run_secs = run_secs.max(r.run_secs);
            client_cpu_secs += r.client_cpu_secs;
        }
        let per_sec = |n: u64| {
            if run_secs > 0.0 {
                (n as f64 / run_secs).round()
            } else {
                0.0
            }
        };
        Report {
            protocol: shape.protocol,
            url: shape.url,
            games: shape.games,
            spectators: shape.spectators,
            connections_planned: u64::from(shape.games) * (2 + u64::from(shape.spectators)),
            move_interval_ms: shape.move_interval_ms,
            duration_secs: shape.duration_secs,
            workers: shape.workers,
            sources: shape.sources,
            setup,
            moves,
            moves_per_sec: per_sec(moves),
            deliveries,
            deliveries_per_sec: per_sec(deliveries),
            move_to_spectator: spectator.summary(),
            move_to_opponent: opponent.summary(),
            move_to_ack: ack.summary(),
            error_total: errors.values().sum(),
            errors,
            violation_total: violations.total(),
            violations,
            unmatched,
            exhausted_games: exhausted,
            server,
            nodes: Vec::new(),
            client_cpu_secs: (client_cpu_secs * 100.0).round() / 100.0,
            login_storm: None,
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let server = match self.protocol {
            Protocol::Tengen => "tengen",
            Protocol::Baseline => "baseline",
        };
        writeln!(
            f,
            "{server} at {}: {} games x (2 players + {} spectators) = {} connections, a move per game every {} ms, {} s",
            self.url,
            self.games,
            self.spectators,
            self.connections_planned,
            self.move_interval_ms,
            self.duration_secs
        )?;
        writeln!(
            f,
            "  setup       {} connections, {} games in {:.1} s ({} failed; {} processes, {} source addresses)",
            self.setup.connections,
            self.setup.games,
            self.setup.secs,
            self.setup.failed,
            self.workers.max(1),
            self.sources.max(1)
        )?;
        writeln!(
            f,
            "  moves       {} ({}/s); deliveries {} ({}/s)",
            self.moves, self.moves_per_sec, self.deliveries, self.deliveries_per_sec
        )?;
        writeln!(f, "  → spectator {}", self.move_to_spectator)?;
        writeln!(f, "  → opponent  {}", self.move_to_opponent)?;
        writeln!(f, "  → ack       {}", self.move_to_ack)?;
        let errors = if self.errors.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = self
                .errors
                .iter()
                .map(|(k, n)| format!("{k}: {n}"))
                .collect();
            format!(" ({})", list.join(", "))
        };
        writeln!(f, "  errors      {}{errors}", self.error_total)?;
        writeln!(
            f,
            "  violations  {} (gaps {}, out of order {}, missing at end {}); unmatched {}; games out of moves {}",
            self.violation_total,
            self.violations.gaps,
            self.violations.out_of_order,
            self.violations.missing_at_end,
            self.unmatched,
            self.exhausted_games
        )?;
        if let Some(s) = &self.server {
            let who = if self.nodes.is_empty() {
                format!("pid {}", s.pid)
            } else {
                format!(
                    "{} nodes summed (not PostgreSQL, not NATS)",
                    self.nodes.len()
                )
            };
            writeln!(
                f,
                "  server      {who}: RSS {:.1} MiB before, {:.1} MiB idle with all connections ({:.1} KiB per connection, {:.1} KiB added per connection), peak {:.1} MiB while playing; CPU {:.1} s ({:.2} cores), {} threads",
                s.rss_before_mib,
                s.rss_idle_mib,
                s.rss_per_idle_connection_kib,
                s.rss_added_per_connection_kib,
                s.rss_peak_mib,
                s.cpu_secs,
                s.cores_busy,
                s.threads
            )?;
        }
        for (i, node) in self.nodes.iter().enumerate() {
            match node {
                Some(s) => writeln!(
                    f,
                    "  node {i}      pid {}: RSS {:.1} MiB idle ({:.1} KiB per planned connection), peak {:.1} MiB; CPU {:.1} s ({:.2} cores), {} threads",
                    s.pid,
                    s.rss_idle_mib,
                    s.rss_per_idle_connection_kib,
                    s.rss_peak_mib,
                    s.cpu_secs,
                    s.cores_busy,
                    s.threads
                )?,
                None => writeln!(
                    f,
                    "  node {i}      (its process was not found: not measured)"
                )?,
            }
        }
        if let Some(s) = &self.login_storm {
            writeln!(
                f,
                "  logins      {} at once during play: {} ok, {} failed in {} s ({}/s)",
                s.logins, s.ok, s.failed, s.secs, s.logins_per_sec
            )?;
        }
        write!(f, "  load tool   CPU {:.1} s", self.client_cpu_secs)
    }
}
