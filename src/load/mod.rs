//! Load generation and the baseline it is measured against (`tengen load`). Opens games
//! of two players and a crowd of spectators, plays random legal moves at a fixed pace and
//! measures, per move, the time from the player's send to each receipt; checks every
//! connection's event numbers; samples the server's memory and CPU from `/proc`; runs
//! the same load against a minimal fan-out server with no game logic ([`baseline`]).
//!
//! Owns the load client and its statistics; never targets anything but loopback
//! addresses, and every run is bounded in connections and in time.

pub mod baseline;
mod conn;
mod error;
pub mod fleet;
pub mod hist;
mod play;
pub mod procfs;
mod report;
mod shard;
pub mod storm;
pub mod wire;

use std::net::{IpAddr, SocketAddr};

use serde::{Deserialize, Serialize};

pub use error::LoadError;
pub use report::{Report, ServerUse};
pub use shard::run_shard;
pub use wire::Protocol;

/// Connections one process holds at most (the hard open-file limit here is 20,000).
pub const MAX_CONNECTIONS_PER_PROCESS: u64 = 19_000;
/// Seconds a run may last at most.
pub const MAX_DURATION_SECS: u64 = 600;
/// Games one run may open at most.
pub const MAX_GAMES: u32 = 20_000;

/// One process's share of a run: a range of games and how to play them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    pub protocol: Protocol,
    /// The nodes' WebSocket URLs (`ws://127.0.0.1:7480/ws`): one for a single server,
    /// several for the nodes of one cluster.
    pub urls: Vec<String>,
    /// Their addresses, resolved from the URLs (loopback only), in the same order.
    pub servers: Vec<SocketAddr>,
    /// Index of this share's first game in the whole run.
    pub first_game: u32,
    pub games: u32,
    pub spectators: u32,
    pub move_interval_ms: u64,
    pub duration_ms: u64,
    pub board_size: u8,
    /// HS256 secret to mint player tokens with (tengen), hex.
    #[serde(default)]
    pub secret_hex: Option<String>,
    /// Names this run's users and rooms apart from earlier runs'.
    pub run_id: String,
    /// Local addresses to connect from, round robin by connection; empty: the kernel's.
    #[serde(default)]
    pub sources: Vec<IpAddr>,
    /// Games set up at once.
    pub setup_concurrency: usize,
    pub seed: u64,
}

impl Plan {
    /// The node connection `seat` of game `game` goes to: its players create the game on
    /// node `game % n` (seat 0), then Black stays there, White (seat 1) moves to the
    /// next node and spectator `i` sits on node `(game + i) % n`, so that every game is
    /// watched from every node and one of its players plays through a node that does
    /// not own it.
    pub fn node(&self, game: u32, seat: u32) -> usize {
        node_of(game, seat, self.urls.len())
    }

    /// Connections this share opens.
    pub fn connections(&self) -> u64 {
        u64::from(self.games) * (2 + u64::from(self.spectators))
    }
}

/// See [`Plan::node`].
pub fn node_of(game: u32, seat: u32, nodes: usize) -> usize {
    ((u64::from(game) + u64::from(seat)) % nodes.max(1) as u64) as usize
}

/// A share's setup, reported before the moves start.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SetupReport {
    /// Connections open and joined.
    pub connections: u64,
    /// Games whose players are seated and joined.
    pub games: u32,
    /// Games or spectators that could not be set up.
    pub failed: u64,
    pub secs: f64,
}

/// Checks of the numbered event stream, per connection and game.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Violations {
    /// An event number skipped.
    pub gaps: u64,
    /// An event number that went backwards or repeated.
    pub out_of_order: u64,
    /// Connections that had not received a game's last move when the run ended.
    pub missing_at_end: u64,
}

impl Violations {
    pub fn total(&self) -> u64 {
        self.gaps + self.out_of_order + self.missing_at_end
    }

    pub fn add(&mut self, o: &Violations) {
        self.gaps += o.gaps;
        self.out_of_order += o.out_of_order;
        self.missing_at_end += o.missing_at_end;
    }
}

/// What one share measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ShardReport {
    pub setup: SetupReport,
    /// Moves acknowledged (tengen) or echoed (baseline) during the run.
    pub moves: u64,
    /// `move_played` frames received by all connections during the run.
    pub deliveries: u64,
    /// Seconds the moves were driven.
    pub run_secs: f64,
    /// Player's send to each spectator's receipt.
    pub spectator: hist::Histogram,
    /// Player's send to the opponent's receipt.
    pub opponent: hist::Histogram,
    /// Player's send to the mover's acknowledgement (tengen) or echo (baseline).
    pub ack: hist::Histogram,
    /// Errors by kind (refusals by code, closes by code, time-outs, broken sockets).
    pub errors: std::collections::BTreeMap<String, u64>,
    pub violations: Violations,
    /// Spectator receipts whose move was sent too long ago to be matched to its send.
    pub unmatched: u64,
    /// Games that ran out of legal moves other than passes (their clients stopped).
    pub exhausted: u64,
    /// CPU seconds this share's process used in all.
    pub client_cpu_secs: f64,
}
