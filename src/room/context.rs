//! What a room needs from the server around it, and nothing more: the store (the writer
//! for commits, the reader for old events a rejoining client missed), the lag settings,
//! and one way to tell the registry what became of it. A room never sees the hub, so
//! the hub can own the registry alone.

use std::sync::Arc;

use crate::clock::LagSettings;
use crate::protocol::GameSummary;
use crate::rules::GameResult;
use crate::store::{Store, StoreWriter};

/// What a room tells the registry.
pub enum RoomNews {
    /// The game ended (committed): the players' slots are free, the lobby hears of it.
    Ended(GameSummary),
    /// The room stopped taking commands: the registry forgets this room (and only this
    /// one: a later room of the same game may have taken its place).
    Closed { game_id: Arc<str>, room: u64 },
    /// A referee changed a finished game's result (committed).
    ResultChanged {
        game_id: Arc<str>,
        previous: GameResult,
        result: GameResult,
    },
}

/// A room's window on the server.
#[derive(Clone)]
pub struct RoomContext {
    pub writer: StoreWriter,
    pub store: Arc<dyn Store>,
    pub lag: LagSettings,
    pub news: Arc<dyn Fn(RoomNews) + Send + Sync>,
}
