//! What a room needs from the server around it, and nothing more: the store (the writer
//! for commits, the reader for old events a rejoining client missed), the lag settings,
//! one way to tell the registry what became of it, and in a cluster the relay to the other
//! nodes. A room never sees the hub, so
//! the hub can own the registry alone.

use std::sync::Arc;

use crate::clock::{LagSettings, TimeControl};
use crate::fanout::{Frame, Outbox};
use crate::protocol::{GameSummary, UserInfo};
use crate::rules::GameResult;
use crate::store::{Store, StoreWriter};

/// What a room tells the registry.
pub enum RoomNews {
    /// The game ended (committed): the players' slots are free, the lobby hears of it.
    Ended(GameSummary),
    /// The room stopped taking commands: the registry forgets this room (and only this
    /// one: a later room of the same game may have taken its place), and in a cluster
    /// its lease under `fence` is given up.
    Closed {
        game_id: Arc<str>,
        room: u64,
        fence: Option<u64>,
    },
    /// A referee's `replay` ruling ended game `of` (committed): the new game `game_id`,
    /// which the ruling names, starts between the same players.
    Replay { of: Arc<str>, game_id: String },
    /// A move was committed and `player` is to move, by `deadline_ms` (Unix ms) if
    /// their clock runs out then: said after every move of a correspondence game (for
    /// the lifecycle bus), and of any game whose player to move has no connection to it
    /// (`absent`; whether they are told is the notification service's call).
    YourMove {
        game_id: Arc<str>,
        player: UserInfo,
        opponent: UserInfo,
        clock: TimeControl,
        deadline_ms: Option<i64>,
        correspondence: bool,
        absent: bool,
    },
    /// The player to move in a correspondence game was warned that their time runs out
    /// at `deadline_ms` (committed): they get a `deadline` notice.
    DeadlineNear {
        game_id: Arc<str>,
        player: UserInfo,
        opponent: UserInfo,
        deadline_ms: i64,
    },
    /// A referee changed a finished game's result (committed).
    ResultChanged {
        game_id: Arc<str>,
        previous: GameResult,
        result: GameResult,
    },
    /// The room stopped because another node owns its game now (the store refused a
    /// commit under this room's fencing number): the registry forgets it, as for
    /// `Closed`, and joins these connections to the game wherever it runs now.
    Moved {
        game_id: Arc<str>,
        room: u64,
        fence: Option<u64>,
        members: Vec<Rejoin>,
    },
}

/// A connection to join to a game again, from just after the last event it was sent.
pub struct Rejoin {
    pub outbox: Outbox,
    pub user: Option<UserInfo>,
    pub since_seq: u64,
}

/// Which members of a room a relayed frame is for, as [`super::crowd::Crowd`] filters
/// them on the owner's node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// An event, for everyone but a tournament game's delayed spectators.
    Live,
    /// An event whose delay is over, for the delayed spectators.
    Delayed,
    /// Spectators' chat, for the spectators.
    Spectators,
}

/// Where a room's frames go beyond this node: the cluster's bus. Called in the order
/// the room sends them, never waiting (a relay that cannot keep up drops, and the
/// other nodes fill the gap from the store).
pub trait Relay: Send + Sync {
    /// A frame for `audience`; `seq` is its event's number (0 for chat, which has none).
    fn frame(&self, game: &str, seq: u64, audience: Audience, frame: &Frame);
    /// Whether this node owns `game` under `fence` by a lease known to run still: if
    /// not (it was paused, cut off from the store, the lease was found lost, or the game
    /// was claimed again for a newer room), the game's state may have moved on without
    /// this room, which must not answer for it from an old state.
    fn holds(&self, game: &str, fence: u64) -> bool;
    /// The room stopped on this node: its relays elsewhere must find the game anew.
    fn closed(&self, game: &str);
    /// Whether this node hears the others now: a player whose connection is on another
    /// node looks absent here while it does not, through no fault of theirs.
    fn hears_others(&self) -> bool;
}

/// Where a room (or a cluster's mirror of one) tells the registry what became of it.
pub type News = Arc<dyn Fn(RoomNews) + Send + Sync>;

/// A room's window on the server.
#[derive(Clone)]
pub struct RoomContext {
    pub writer: StoreWriter,
    pub store: Arc<dyn Store>,
    pub lag: LagSettings,
    pub news: News,
    /// The other nodes, in a cluster.
    pub relay: Option<Arc<dyn Relay>>,
    /// The vacation rules, for a day spent at a deadline.
    pub vacation: crate::correspondence::vacation::Policy,
    /// How long before a correspondence deadline its player is warned (0: never).
    pub deadline_warn_ms: crate::clock::Millis,
}
