//! Process-wide counters for `GET /metrics`, in the Prometheus text format. Plain atomics:
//! recording is a relaxed add, so hot paths pay next to nothing.

use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

use crate::protocol::Role;

static CONNECTIONS: [AtomicI64; 5] = [const { AtomicI64::new(0) }; 5];
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
/// Store commit latency buckets, upper bounds in microseconds.
const COMMIT_BUCKETS_US: [u64; 10] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 100_000, 1_000_000,
];
static COMMIT_HIST: [AtomicU64; 11] = [const { AtomicU64::new(0) }; 11];
static COMMIT_SUM_US: AtomicU64 = AtomicU64::new(0);

fn role_index(role: Option<Role>) -> usize {
    match role {
        None => 0,
        Some(Role::Player) => 1,
        Some(Role::Bot) => 2,
        Some(Role::Referee) => 3,
        Some(Role::Admin) => 4,
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
    let i = COMMIT_BUCKETS_US
        .iter()
        .position(|&b| micros <= b)
        .unwrap_or(COMMIT_BUCKETS_US.len());
    COMMIT_HIST[i].fetch_add(1, Relaxed);
    COMMIT_SUM_US.fetch_add(micros, Relaxed);
}

/// Everything, in the Prometheus text exposition format.
pub fn render() -> String {
    let mut out = String::with_capacity(4096);
    let mut metric = |name: &str, kind: &str, help: &str| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    };
    metric(
        "tengen_connections",
        "gauge",
        "Open WebSocket connections by role.",
    );
    let _ = &mut metric;
    drop(metric);
    for (i, role) in ["anonymous", "player", "bot", "referee", "admin"]
        .iter()
        .enumerate()
    {
        let _ = writeln!(
            out,
            "tengen_connections{{role=\"{role}\"}} {}",
            CONNECTIONS[i].load(Relaxed)
        );
    }
    let simple: [(&str, &str, &str, u64); 8] = [
        (
            "tengen_live_games",
            "gauge",
            "Games being played.",
            LIVE_GAMES.load(Relaxed).max(0) as u64,
        ),
        (
            "tengen_messages_in_total",
            "counter",
            "Client messages received.",
            MESSAGES_IN.load(Relaxed),
        ),
        (
            "tengen_messages_out_total",
            "counter",
            "Frames written to clients.",
            MESSAGES_OUT.load(Relaxed),
        ),
        (
            "tengen_rate_limited_total",
            "counter",
            "Messages refused by the rate limit.",
            RATE_LIMITED.load(Relaxed),
        ),
        (
            "tengen_slow_consumers_total",
            "counter",
            "Connections dropped for not keeping up.",
            SLOW_CONSUMERS.load(Relaxed),
        ),
        (
            "tengen_moves_total",
            "counter",
            "Moves accepted (rate: moves per second).",
            MOVES.load(Relaxed),
        ),
        (
            "tengen_flag_falls_total",
            "counter",
            "Games lost on time by the server's timer.",
            FLAG_FALLS.load(Relaxed),
        ),
        (
            "tengen_lag_credit_ms_total",
            "counter",
            "Milliseconds of lag compensation credited.",
            LAG_CREDIT_MS.load(Relaxed),
        ),
    ];
    for (name, kind, help, value) in simple {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
        );
    }
    let _ = writeln!(
        out,
        "# HELP tengen_moves_rejected_total Moves refused by the rules, by reason.\n# TYPE tengen_moves_rejected_total counter"
    );
    for (i, reason) in REJECT_REASONS.iter().enumerate() {
        let _ = writeln!(
            out,
            "tengen_moves_rejected_total{{reason=\"{reason}\"}} {}",
            REJECTED[i].load(Relaxed)
        );
    }
    let _ = writeln!(
        out,
        "# HELP tengen_store_commit_seconds Store commit latency.\n# TYPE tengen_store_commit_seconds histogram"
    );
    let mut cumulative = 0;
    for (i, bound) in COMMIT_BUCKETS_US.iter().enumerate() {
        cumulative += COMMIT_HIST[i].load(Relaxed);
        let _ = writeln!(
            out,
            "tengen_store_commit_seconds_bucket{{le=\"{}\"}} {cumulative}",
            *bound as f64 / 1e6
        );
    }
    cumulative += COMMIT_HIST[COMMIT_BUCKETS_US.len()].load(Relaxed);
    let _ = writeln!(
        out,
        "tengen_store_commit_seconds_bucket{{le=\"+Inf\"}} {cumulative}"
    );
    let _ = writeln!(
        out,
        "tengen_store_commit_seconds_sum {}",
        COMMIT_SUM_US.load(Relaxed) as f64 / 1e6
    );
    let _ = writeln!(out, "tengen_store_commit_seconds_count {cumulative}");
    out
}
