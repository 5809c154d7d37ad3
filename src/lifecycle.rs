//! The life of a game as typed news that any part of the server may hear: a game
//! started, ended, or had its result changed after the fact (a referee's ruling,
//! corrected count or annulment). The game starter publishes `Started` and `Ended`, the
//! registry's news `ResultChanged`; the rating task subscribes, and tournaments and
//! notifications subscribe next, without the parts that publish knowing of them.
//!
//! Each game's news is published on the node that runs it (the owner of its lease),
//! where its room commits. There are two ways to listen: [`Lifecycle::subscribe`] hears
//! this node's games only (the rating task runs on every node, each folding the games it
//! ran), [`Lifecycle::subscribe_all`] hears every game of the cluster, the other nodes'
//! news relayed over NATS ([`crate::cluster::news`]), for a part that runs on one node
//! for all (a tournament's director). Every event is committed to the store before it
//! is published, so a subscriber that lagged behind (the channels are bounded) or
//! missed news while NATS was away catches up from the store, as it does at start.

use tokio::sync::broadcast;

use crate::protocol::{GameSettings, GameSummary, UserInfo};
use crate::rules::GameResult;

/// How many events a slow subscriber may fall behind before it is told it lagged.
const BACKLOG: usize = 1024;

/// One moment in a game's life, committed before anyone hears of it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "news", rename_all = "snake_case")]
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
    /// This node's games.
    here: broadcast::Sender<GameNews>,
    /// Every game of the cluster: this node's and those relayed from the others.
    everywhere: broadcast::Sender<GameNews>,
}

impl Default for Lifecycle {
    fn default() -> Lifecycle {
        Lifecycle {
            here: broadcast::Sender::new(BACKLOG),
            everywhere: broadcast::Sender::new(BACKLOG),
        }
    }
}

impl Lifecycle {
    /// News of a game this node runs.
    pub fn publish(&self, news: GameNews) {
        // An error only says that nobody listens now.
        let _ = self.here.send(news.clone());
        let _ = self.everywhere.send(news);
    }

    /// News of a game another node runs, relayed from it.
    pub fn heard_elsewhere(&self, news: GameNews) {
        let _ = self.everywhere.send(news);
    }

    /// This node's news from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<GameNews> {
        self.here.subscribe()
    }

    /// Every node's news from now on (on a single node, the same as `subscribe`).
    pub fn subscribe_all(&self) -> broadcast::Receiver<GameNews> {
        self.everywhere.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(id: &str) -> GameNews {
        GameNews::ResultChanged {
            game_id: id.into(),
            previous: "B+R".parse().expect("a result"),
            result: "W+R".parse().expect("a result"),
        }
    }

    #[test]
    fn news_from_elsewhere_reaches_only_those_who_listen_to_every_node() {
        let bus = Lifecycle::default();
        let (mut here, mut all) = (bus.subscribe(), bus.subscribe_all());
        bus.publish(ended("a"));
        bus.heard_elsewhere(ended("b"));
        assert_eq!(here.try_recv().ok(), Some(ended("a")));
        assert!(
            here.try_recv().is_err(),
            "another node's news is not this node's"
        );
        assert_eq!(all.try_recv().ok(), Some(ended("a")));
        assert_eq!(all.try_recv().ok(), Some(ended("b")));
    }
}
