//! Pure rating core (docs/RATINGS.md): Glicko-2 ratings, kyu/dan ranks, handicap worth,
//! and the ledger that folds rated results into every player's ratings. Never does I/O,
//! never reads a clock: time comes in with each result, so a rebuild replays exactly.
//!
//! - [`glicko2`]: the [`Rating`] and the paper's update for one rating period.
//! - [`rank`]: the [`Rank`] a rating is shown as, and [`handicap_worth`].
//! - [`ledger`]: the [`Ledger`] of standings per player, overall and per board size.

pub mod glicko2;
pub mod ledger;
pub mod rank;

pub use glicko2::{Game, Rating, rate, rate_game};
pub use ledger::{Ledger, Pool, PoolChange, RatedResult, RatingChange, ResultError, Standing};
pub use rank::{Rank, ShownRank, handicap_worth};
