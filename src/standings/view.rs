//! The ratings as HTTP clients read them (client-protocol/ratings.md): a player's
//! profile and a pool's leaderboard, built from the store's rows.

use serde::{Deserialize, Serialize};

use crate::rating::{Pool, Rating, ShownRank};
use crate::rules::Color;
use crate::store::{EventRecord, GameRecord, RatingChangeRow, RatingRow};

/// The most rating changes a profile shows (the latest ones).
pub const HISTORY_LIMIT: u32 = 200;
/// The most players a leaderboard shows, and how many it shows unless asked.
pub const MAX_LEADERBOARD: u32 = 200;
pub const DEFAULT_LEADERBOARD: u32 = 50;
/// How many of a player's latest games lost by forfeit or on time an escaper record looks
/// at, and how many escapes it lists.
pub const ESCAPE_SCAN: u32 = 200;
pub const ESCAPES_LISTED: usize = 20;

/// `GET /api/users/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub id: String,
    /// The account's display name, or for a user without an account here the name they
    /// had in their latest game.
    pub name: String,
    /// Every pool, overall first; a pool never played shows a new player's rating.
    pub ratings: Vec<PoolStanding>,
    /// The latest rating changes (at most [`HISTORY_LIMIT`]), oldest first.
    pub history: Vec<HistoryEntry>,
    /// Games the player left and then lost by forfeit (a claim or the forfeit limit).
    pub escapes: Escapes,
}

/// An escaper record: among the player's latest [`ESCAPE_SCAN`] games lost by forfeit,
/// those lost after leaving ([`crate::archive::escaper`]), rated or not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Escapes {
    pub count: u32,
    /// The latest (at most [`ESCAPES_LISTED`]), newest first.
    pub recent: Vec<Escape>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Escape {
    pub game_id: String,
    /// When the game ended, server Unix ms.
    pub at: i64,
    pub opponent: String,
}

impl Escapes {
    /// `player`'s escapes among `losses` (the store's forfeit losses, newest first).
    pub fn of(player: &str, losses: &[(GameRecord, Vec<EventRecord>)]) -> Escapes {
        let mut escapes = Escapes::default();
        for (game, events) in losses {
            let (color, opponent) = if game.black == player {
                (Color::Black, &game.white)
            } else {
                (Color::White, &game.black)
            };
            if crate::archive::escaper(game, events) != Some(color) {
                continue;
            }
            escapes.count += 1;
            if escapes.recent.len() < ESCAPES_LISTED {
                escapes.recent.push(Escape {
                    game_id: game.id.clone(),
                    at: game.ended_at_ms.unwrap_or(0),
                    opponent: opponent.clone(),
                });
            }
        }
        escapes
    }
}

/// A player's standing in one pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoolStanding {
    /// `overall`, `9x9`, `13x13` or `19x19`.
    pub pool: String,
    pub rating: f64,
    pub deviation: f64,
    pub volatility: f64,
    /// `15k?` while provisional, `3d` after.
    pub rank: String,
    pub games: u32,
    pub won: u32,
    pub lost: u32,
    /// Drawn games: `games - won - lost`.
    pub drawn: u32,
    /// When the last game in this pool ended, server Unix ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_game_at: Option<i64>,
}

/// One game's change to one pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryEntry {
    pub game_id: String,
    pub pool: String,
    /// When the game ended, server Unix ms.
    pub at: i64,
    /// The player's colour in the game.
    pub color: String,
    pub opponent: String,
    pub rating_before: f64,
    pub deviation_before: f64,
    pub rating: f64,
    pub deviation: f64,
}

/// `GET /api/ratings`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Leaderboard {
    pub pool: String,
    pub players: Vec<LeaderboardEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeaderboardEntry {
    pub id: String,
    pub name: String,
    pub rating: f64,
    pub deviation: f64,
    pub rank: String,
    pub games: u32,
    pub won: u32,
    pub lost: u32,
}

fn rank(rating: f64, deviation: f64, volatility: f64) -> String {
    ShownRank::of(&Rating {
        rating,
        deviation,
        volatility,
    })
    .to_string()
}

impl Profile {
    /// The profile from a player's stored standings (any pools) and changes.
    pub fn new(
        id: String,
        name: String,
        rows: &[RatingRow],
        history: Vec<RatingChangeRow>,
        escapes: Escapes,
    ) -> Profile {
        let ratings = Pool::ALL
            .into_iter()
            .map(|pool| match rows.iter().find(|r| r.pool == pool.name()) {
                Some(r) => PoolStanding::from(r),
                None => PoolStanding::new_player(pool),
            })
            .collect();
        let history = history
            .into_iter()
            .map(|c| HistoryEntry {
                game_id: c.game_id,
                pool: c.pool,
                at: c.at_ms,
                color: c.color,
                opponent: c.opponent,
                rating_before: c.before[0],
                deviation_before: c.before[1],
                rating: c.after[0],
                deviation: c.after[1],
            })
            .collect();
        Profile {
            id,
            name,
            ratings,
            history,
            escapes,
        }
    }
}

impl PoolStanding {
    fn new_player(pool: Pool) -> PoolStanding {
        let r = Rating::NEW;
        PoolStanding {
            pool: pool.name().to_string(),
            rating: r.rating,
            deviation: r.deviation,
            volatility: r.volatility,
            rank: rank(r.rating, r.deviation, r.volatility),
            games: 0,
            won: 0,
            lost: 0,
            drawn: 0,
            last_game_at: None,
        }
    }
}

impl From<&RatingRow> for PoolStanding {
    fn from(r: &RatingRow) -> PoolStanding {
        PoolStanding {
            pool: r.pool.clone(),
            rating: r.rating,
            deviation: r.deviation,
            volatility: r.volatility,
            rank: rank(r.rating, r.deviation, r.volatility),
            games: r.games,
            won: r.won,
            lost: r.lost,
            drawn: r.games.saturating_sub(r.won + r.lost),
            last_game_at: r.last_game_ms,
        }
    }
}

impl LeaderboardEntry {
    pub fn new(r: &RatingRow, name: String) -> LeaderboardEntry {
        LeaderboardEntry {
            id: r.player.clone(),
            name,
            rating: r.rating,
            deviation: r.deviation,
            rank: rank(r.rating, r.deviation, r.volatility),
            games: r.games,
            won: r.won,
            lost: r.lost,
        }
    }
}
