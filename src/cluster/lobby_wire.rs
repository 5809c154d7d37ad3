//! What the nodes' lobbies say to each other ([`super::lobby`]): news of changes, and
//! requests to one node with their answers. JSON, so that a node can tell what it
//! cannot read.

use serde::{Deserialize, Serialize};

use crate::lobby::Change;
use crate::lobby::automatch::{Seeker, Wish};
use crate::protocol::{CalledGame, ErrorCode, GameSummary, UserInfo};

/// An automatch request as it travels to the leader.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    user: UserInfo,
    rating: f64,
    wish: Wish,
}

impl Request {
    pub(super) fn of(seeker: &Seeker) -> Request {
        Request {
            user: seeker.user.clone(),
            rating: seeker.rating,
            wish: seeker.wish.clone(),
        }
    }

    /// A seeker waiting from now (a request made again starts its wait again).
    pub(super) fn seeker(self) -> Seeker {
        Seeker {
            user: self.user,
            rating: self.rating,
            wish: self.wish,
            since: tokio::time::Instant::now(),
        }
    }
}

/// A change, the node it comes from (and that node's boot), and its number among that
/// node's news since it started: a gap means news was lost, and the node's items are
/// copied again.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct News {
    pub node: String,
    pub boot: u64,
    pub seq: u64,
    pub change: Change,
}

/// What one node asks of another.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum Ask {
    /// All its items, for a node that just heard of it.
    Snapshot {},
    Accept {
        accepter: UserInfo,
        challenge_id: String,
        seed: Option<String>,
    },
    Withdraw {
        user: UserInfo,
        challenge_id: String,
        decline: bool,
    },
    /// Its running games, for a game list.
    Games {},
    /// Its games with calls `user` may answer, and those that name `user` their referee.
    RefereeCalls { user: UserInfo },
    /// Queue an automatch request (asked of the leader).
    Automatch { request: Request },
    /// Withdraw `user`'s automatch request (asked of the leader).
    AutomatchCancel { user: String },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum Answer {
    /// The node's items, made after its news number `seq` (of its boot `boot`).
    Snapshot {
        changes: Vec<Change>,
        boot: u64,
        seq: u64,
    },
    Accepted {
        game_id: String,
    },
    Done {},
    Refused {
        code: ErrorCode,
        message: String,
    },
    Games {
        games: Vec<GameSummary>,
    },
    RefereeCalls {
        games: Vec<CalledGame>,
        assigned: Vec<GameSummary>,
    },
}
