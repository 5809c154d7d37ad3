//! The life of a game as typed news that any part of the server may hear: a game
//! started, ended, or had its result changed after the fact (a referee's ruling,
//! corrected count or annulment). The game starter publishes `Started` and `Ended`, the
//! registry's news `ResultChanged`; the rating task subscribes, and tournaments and
//! notifications subscribe next, without the parts that publish knowing of them.
//!
//! Node-local: in a cluster each game's news is published on the node that runs it
//! (the owner of its lease), where its room commits; a subscriber that must hear every
//! game of the cluster runs on every node (as the rating task does: the store's
//! counted records make its writes once-only) or asks the owner's node. Every event is
//! committed to the store before it is published, so a subscriber that lagged behind
//! (the channel is bounded) catches up from the store, as it does at start.

use tokio::sync::broadcast;

use crate::protocol::{GameSettings, GameSummary, UserInfo};
use crate::rules::GameResult;

/// How many events a slow subscriber may fall behind before it is told it lagged.
const BACKLOG: usize = 1024;

/// One moment in a game's life, committed before anyone hears of it.
#[derive(Debug, Clone)]
pub enum GameNews {
    /// A game was stored and its room opened; its players were just told.
    Started {
        game_id: String,
        black: UserInfo,
        white: UserInfo,
        settings: GameSettings,
    },
    /// A game ended with its result.
    Ended(GameSummary),
    /// A finished game's result changed.
    ResultChanged {
        game_id: String,
        previous: GameResult,
        result: GameResult,
    },
    /// A correspondence game waits for `player`'s move (published after each move,
    /// the planned ones included), by `deadline_ms` (Unix ms) unless they have a plan
    /// or move first: what a notice of "your move", and a warning some time before the
    /// deadline, are made from. A later `YourMove` or `Ended` of the game replaces it.
    YourMove {
        game_id: String,
        player: UserInfo,
        deadline_ms: Option<i64>,
    },
}

/// The bus: publishing never waits, and costs nothing while nobody listens.
#[derive(Clone)]
pub struct Lifecycle {
    sender: broadcast::Sender<GameNews>,
}

impl Default for Lifecycle {
    fn default() -> Lifecycle {
        Lifecycle {
            sender: broadcast::Sender::new(BACKLOG),
        }
    }
}

impl Lifecycle {
    pub fn publish(&self, news: GameNews) {
        // An error only says that nobody listens now.
        let _ = self.sender.send(news);
    }

    /// Everything published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<GameNews> {
        self.sender.subscribe()
    }
}
