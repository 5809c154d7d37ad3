//! Bots: put any GTP engine on the server. `tengen bot` connects as a bot account, posts
//! a standing offer, and plays every game the account gets with one engine process per
//! game, speaking GTP to the engine and the WebSocket protocol to the server.
//!
//! - [`gtp`]: the engine process and the GTP wire format (no game, no server).
//! - [`time`]: the game's time control as `time_settings` / `time_left`.
//! - [`scoring`]: what to mark, accept or reject in the dead-stone phase (pure).
//! - [`bridge`]: one game between the server's events and one engine.
//! - [`connection`]: the connection loop, reconnects, and the table of games.
//! - [`config`]: what the bot is told to do, and its TOML file.
//!
//! A bot is a client like any other: it never reaches into the server's state, so what
//! it does a bot written against the protocol directly can do too.

pub mod bridge;
pub mod config;
pub mod connection;
pub mod gtp;
pub mod scoring;
pub mod time;

pub use config::{BotConfig, BotFile, ChallengePlan, Entry};
pub use connection::{BotError, Summary, run};
