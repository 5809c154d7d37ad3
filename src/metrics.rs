//! Process-wide counters for `GET /metrics`, in the Prometheus text format. Plain atomics:
//! recording is a relaxed add, so hot paths pay next to nothing.

use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

use crate::protocol::Role;

static CONNECTIONS: [AtomicI64; 6] = [const { AtomicI64::new(0) }; 6];
static LIVE_GAMES: AtomicI64 = AtomicI64::new(0);
static MESSAGES_IN: AtomicU64 = AtomicU64::new(0);
static MESSAGES_OUT: AtomicU64 = AtomicU64::new(0);
static RATE_LIMITED: AtomicU64 = AtomicU64::new(0);
static SLOW_CONSUMERS: AtomicU64 = AtomicU64::new(0);
static MOVES: AtomicU64 = AtomicU64::new(0);
static FLAG_FALLS: AtomicU64 = AtomicU64::new(0);
static LAG_CREDIT_MS: AtomicU64 = AtomicU64::new(0);
static REJECTED: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];
const REJECT_REASONS: [&str; 6] = ["occupied", "suicide", "ko", "superko", "off_board", "other"];
static STORE_COMMIT: Histogram = Histogram::new();
static STORE_FSYNC: Histogram = Histogram::new();
/// The cluster's figures (all zero on a single node).
static OWNED_GAMES: AtomicI64 = AtomicI64::new(0);
static FORWARDED: AtomicU64 = AtomicU64::new(0);
static FORWARD_SUM_US: AtomicU64 = AtomicU64::new(0);
static RELAYED: AtomicU64 = AtomicU64::new(0);
static RELAY_DROPPED: AtomicU64 = AtomicU64::new(0);
static GAPS_FILLED: AtomicU64 = AtomicU64::new(0);
static RENEWALS: AtomicU64 = AtomicU64::new(0);
static TAKEOVERS: AtomicU64 = AtomicU64::new(0);
static LEASES_LOST: AtomicU64 = AtomicU64::new(0);

/// Label values of `tengen_connections`, indexed like `CONNECTIONS`.
const ROLES: [&str; 6] = ["anonymous", "player", "bot", "referee", "admin", "guest"];

fn role_index(role: Option<Role>) -> usize {
    match role {
        None => 0,
        Some(Role::Player) => 1,
        Some(Role::Bot) => 2,
        Some(Role::Referee) => 3,
        Some(Role::Admin) => 4,
        Some(Role::Guest) => 5,
    }
}

/// A connection of `role` (None: anonymous) opened (+1) or closed (-1).
pub fn connected(role: Option<Role>, delta: i64) {
    CONNECTIONS[role_index(role)].fetch_add(delta, Relaxed);
}

pub fn live_games(delta: i64) {
    LIVE_GAMES.fetch_add(delta, Relaxed);
}

pub fn message_in() {
    MESSAGES_IN.fetch_add(1, Relaxed);
}

pub fn messages_out(n: usize) {
    MESSAGES_OUT.fetch_add(n as u64, Relaxed);
}

pub fn rate_limited() {
    RATE_LIMITED.fetch_add(1, Relaxed);
}

pub fn slow_consumer() {
    SLOW_CONSUMERS.fetch_add(1, Relaxed);
}

pub fn move_played() {
    MOVES.fetch_add(1, Relaxed);
}

pub fn flag_fall() {
    FLAG_FALLS.fetch_add(1, Relaxed);
}

/// Lag compensation of `ms` credited to a player's clock.
pub fn lag_credit(ms: u64) {
    LAG_CREDIT_MS.fetch_add(ms, Relaxed);
}

/// A move refused by the rules, by reason (`occupied`, `ko`, ...).
pub fn move_rejected(reason: &str) {
    let i = REJECT_REASONS
        .iter()
        .position(|r| *r == reason)
        .unwrap_or(5);
    REJECTED[i].fetch_add(1, Relaxed);
}

/// One store commit took `micros`.
pub fn store_commit(micros: u64) {
    STORE_COMMIT.record(micros);
}

/// One flush of the store's log (the group commit's fsync) took `micros`.
pub fn store_fsync(micros: u64) {
    STORE_FSYNC.record(micros);
}

/// Latency buckets of every histogram, upper bounds in microseconds: the same for the
/// commit and the fsync, so that one can be read against the other.
const BUCKETS_US: [u64; 10] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 100_000, 1_000_000,
];

/// A latency histogram: a count per bucket of [`BUCKETS_US`] (and one above them) and
/// the sum.
struct Histogram {
    counts: [AtomicU64; BUCKETS_US.len() + 1],
    sum_us: AtomicU64,
}

impl Histogram {
    const fn new() -> Self {
        Histogram {
            counts: [const { AtomicU64::new(0) }; BUCKETS_US.len() + 1],
            sum_us: AtomicU64::new(0),
        }
    }

    fn record(&self, micros: u64) {
        let i = BUCKETS_US
            .iter()
            .position(|&b| micros <= b)
            .unwrap_or(BUCKETS_US.len());
        self.counts[i].fetch_add(1, Relaxed);
        self.sum_us.fetch_add(micros, Relaxed);
    }

    /// The family `name` in seconds: header, cumulative buckets, sum and count.
    fn render(&self, out: &mut String, name: &str, help: &str) {
        header(out, name, "histogram", help);
        let mut cumulative = 0;
        for (count, bound) in self.counts.iter().zip(BUCKETS_US) {
            cumulative += count.load(Relaxed);
            let _ = writeln!(
                out,
                "{name}_bucket{{le=\"{}\"}} {cumulative}",
                seconds(bound)
            );
        }
        cumulative += self.counts[BUCKETS_US.len()].load(Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {cumulative}");
        let _ = writeln!(out, "{name}_sum {}", seconds(self.sum_us.load(Relaxed)));
        let _ = writeln!(out, "{name}_count {cumulative}");
    }
}

/// Games this node owns the lease of: +1 when it takes one, -1 when it lets it go.
pub fn owned_games(delta: i64) {
    OWNED_GAMES.fetch_add(delta, Relaxed);
}

/// A command forwarded to another node answered after `micros` (the bus's round trip
/// plus the owner's work).
pub fn cluster_forwarded(micros: u64) {
    FORWARDED.fetch_add(1, Relaxed);
    FORWARD_SUM_US.fetch_add(micros, Relaxed);
}

pub fn cluster_relayed() {
    RELAYED.fetch_add(1, Relaxed);
}

pub fn cluster_relay_dropped() {
    RELAY_DROPPED.fetch_add(1, Relaxed);
}

/// Relayed frames a mirror missed and read from the store instead.
pub fn cluster_gap_filled(frames: usize) {
    GAPS_FILLED.fetch_add(frames as u64, Relaxed);
}

/// One round of lease renewals.
pub fn cluster_renewal() {
    RENEWALS.fetch_add(1, Relaxed);
}

/// A game taken over from a node whose lease had lapsed (or that handed it over).
pub fn cluster_takeover() {
    TAKEOVERS.fetch_add(1, Relaxed);
}

/// A game this node found owned by another node (a lapsed lease, a refused write).
pub fn cluster_lease_lost() {
    LEASES_LOST.fetch_add(1, Relaxed);
}

/// Everything, in the Prometheus text exposition format (version 0.0.4).
pub fn render(rooms: usize) -> String {
    let mut out = String::with_capacity(4096);

    header(
        &mut out,
        "tengen_build_info",
        "gauge",
        "Always 1; the version is a label.",
    );
    let _ = writeln!(
        out,
        "tengen_build_info{{version=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION")
    );

    header(
        &mut out,
        "tengen_connections",
        "gauge",
        "Open WebSocket connections by role.",
    );
    for (i, role) in ROLES.iter().enumerate() {
        let _ = writeln!(
            out,
            "tengen_connections{{role=\"{role}\"}} {}",
            CONNECTIONS[i].load(Relaxed)
        );
    }

    scalars(&mut out, node_scalars(rooms));

    header(
        &mut out,
        "tengen_moves_rejected_total",
        "counter",
        "Moves refused by the rules, by reason.",
    );
    for (i, reason) in REJECT_REASONS.iter().enumerate() {
        let _ = writeln!(
            out,
            "tengen_moves_rejected_total{{reason=\"{reason}\"}} {}",
            REJECTED[i].load(Relaxed)
        );
    }

    STORE_COMMIT.render(
        &mut out,
        "tengen_store_commit_seconds",
        "Time from handing a game's events to the store until they are durable.",
    );
    STORE_FSYNC.render(
        &mut out,
        "tengen_store_fsync_seconds",
        "Time the store's log took to flush to disk, once per group commit (SQLite with store.sync = full only).",
    );
    scalars(&mut out, cluster_scalars());
    out
}

/// A metric with one value: its name, type, help and value.
type Scalar = (&'static str, &'static str, &'static str, String);

fn scalars(out: &mut String, list: impl IntoIterator<Item = Scalar>) {
    for (name, kind, help, value) in list {
        header(out, name, kind, help);
        let _ = writeln!(out, "{name} {value}");
    }
}

/// This node's games, messages and moves.
fn node_scalars(rooms: usize) -> [Scalar; 9] {
    [
        (
            "tengen_rooms",
            "gauge",
            "Game rooms running on this node (a sleeping correspondence game holds none).",
            rooms.to_string(),
        ),
        (
            "tengen_live_games",
            "gauge",
            "Games being played.",
            LIVE_GAMES.load(Relaxed).max(0).to_string(),
        ),
        (
            "tengen_messages_in_total",
            "counter",
            "Client messages received (after the rate and size limits).",
            MESSAGES_IN.load(Relaxed).to_string(),
        ),
        (
            "tengen_messages_out_total",
            "counter",
            "Frames written to clients.",
            MESSAGES_OUT.load(Relaxed).to_string(),
        ),
        (
            "tengen_rate_limited_total",
            "counter",
            "Messages refused by the rate limit.",
            RATE_LIMITED.load(Relaxed).to_string(),
        ),
        (
            "tengen_slow_consumers_total",
            "counter",
            "Connections dropped for not keeping up with their outbound queue.",
            SLOW_CONSUMERS.load(Relaxed).to_string(),
        ),
        (
            "tengen_moves_total",
            "counter",
            "Moves accepted (take rate() for moves per second).",
            MOVES.load(Relaxed).to_string(),
        ),
        (
            "tengen_flag_falls_total",
            "counter",
            "Games lost on time by the server's timer.",
            FLAG_FALLS.load(Relaxed).to_string(),
        ),
        (
            "tengen_lag_credit_seconds_total",
            "counter",
            "Lag compensation credited to players' clocks.",
            seconds(LAG_CREDIT_MS.load(Relaxed) * 1_000),
        ),
    ]
}

/// This node's part in a cluster (all zero on a single node).
fn cluster_scalars() -> [Scalar; 9] {
    [
        (
            "tengen_cluster_owned_games",
            "gauge",
            "Games whose lease this node holds (cluster only).",
            OWNED_GAMES.load(Relaxed).max(0).to_string(),
        ),
        (
            "tengen_cluster_forwarded_total",
            "counter",
            "Commands forwarded to the node that owns their game.",
            FORWARDED.load(Relaxed).to_string(),
        ),
        (
            "tengen_cluster_forward_seconds_total",
            "counter",
            "Time forwarded commands waited for their answer (divide by the count for the bus latency).",
            seconds(FORWARD_SUM_US.load(Relaxed)),
        ),
        (
            "tengen_cluster_relayed_total",
            "counter",
            "Frames this node published once for every node.",
            RELAYED.load(Relaxed).to_string(),
        ),
        (
            "tengen_cluster_relay_dropped_total",
            "counter",
            "Frames not published because the bus fell behind (other nodes read them from the store).",
            RELAY_DROPPED.load(Relaxed).to_string(),
        ),
        (
            "tengen_cluster_gap_frames_total",
            "counter",
            "Relayed frames this node missed and read from the store.",
            GAPS_FILLED.load(Relaxed).to_string(),
        ),
        (
            "tengen_cluster_lease_renewals_total",
            "counter",
            "Rounds of lease renewal.",
            RENEWALS.load(Relaxed).to_string(),
        ),
        (
            "tengen_cluster_takeovers_total",
            "counter",
            "Games taken over from a node that died or handed them over.",
            TAKEOVERS.load(Relaxed).to_string(),
        ),
        (
            "tengen_cluster_leases_lost_total",
            "counter",
            "Games found owned by another node after this node held them.",
            LEASES_LOST.load(Relaxed).to_string(),
        ),
    ]
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// Microseconds as seconds, exactly (no float rounding such as `0.00025000000000000006`).
fn seconds(micros: u64) -> String {
    let (whole, frac) = (micros / 1_000_000, micros % 1_000_000);
    if frac == 0 {
        whole.to_string()
    } else {
        format!("{whole}.{:06}", frac)
            .trim_end_matches('0')
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_exact_decimals() {
        assert_eq!(seconds(0), "0");
        assert_eq!(seconds(250), "0.00025");
        assert_eq!(seconds(1_000_000), "1");
        assert_eq!(seconds(2_500_000), "2.5");
    }

    #[test]
    fn every_sample_line_belongs_to_a_declared_family() {
        let text = render(3);
        assert!(text.lines().any(|l| l == "tengen_rooms 3"), "{text}");
        let mut declared = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                declared.push(rest.split(' ').next().unwrap_or_default().to_string());
            } else if !line.starts_with('#') {
                let name = line.split(['{', ' ']).next().unwrap_or_default();
                assert!(
                    declared.iter().any(|d| name == d
                        || name
                            .strip_prefix(d.as_str())
                            .is_some_and(|s| ["_bucket", "_sum", "_count"].contains(&s))),
                    "{line} has no # TYPE before it"
                );
                let value = line.rsplit(' ').next().unwrap_or_default();
                assert!(
                    value.parse::<f64>().is_ok(),
                    "{line}: the value is not a number"
                );
            }
        }
        assert!(declared.len() >= 11, "{declared:?}");
    }
}
