//! Every player's ratings, overall and per board size, as a fold over rated results.
//!
//! A rating change is derived from a game's result and the ratings before it, nothing
//! else, so replaying the same results in the same order ([`Ledger::rebuild`]) gives
//! exactly the ratings the live updates gave. Time enters only as each result's
//! `ended_at_ms`; the ledger never reads a clock.

use std::collections::HashMap;

use thiserror::Error;

use super::glicko2::{Rating, rate_game};
use super::rank::handicap_worth;
use crate::rules::{Color, GameResult, HandicapError, MAX_SIZE, MIN_SIZE, check_handicap};

/// One rating period per day away: how fast an absent player's deviation grows.
pub const RATING_PERIOD_MS: u64 = 86_400_000;

/// A finished rated game, as the store records it.
#[derive(Debug, Clone, PartialEq)]
pub struct RatedResult {
    pub game_id: String,
    /// When the game ended, in milliseconds since the Unix epoch.
    pub ended_at_ms: u64,
    pub black: String,
    pub white: String,
    pub size: u8,
    /// Handicap stones (0 for an even game).
    pub handicap: u8,
    pub result: GameResult,
}

/// The ratings a player is kept under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pool {
    /// Every rated game, any board size.
    Overall,
    Nine,
    Thirteen,
    Nineteen,
}

impl Pool {
    /// The board size's own pool; other sizes count only towards [`Pool::Overall`].
    pub fn of_size(size: u8) -> Option<Pool> {
        match size {
            9 => Some(Pool::Nine),
            13 => Some(Pool::Thirteen),
            19 => Some(Pool::Nineteen),
            _ => None,
        }
    }

    /// Every pool, overall first, in the order standings are kept.
    pub const ALL: [Pool; 4] = [Pool::Overall, Pool::Nine, Pool::Thirteen, Pool::Nineteen];

    /// The stored and shown name: `overall`, `9x9`, `13x13`, `19x19`.
    pub fn name(self) -> &'static str {
        match self {
            Pool::Overall => "overall",
            Pool::Nine => "9x9",
            Pool::Thirteen => "13x13",
            Pool::Nineteen => "19x19",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A player's rating in one pool and when it last changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    /// The rating after the player's last game, before any growth for time away since.
    pub rating: Rating,
    pub games: u32,
    /// Games won and lost; the rest of `games` were drawn.
    pub won: u32,
    pub lost: u32,
    pub last_game_ms: Option<u64>,
}

impl Standing {
    const NEW: Standing = Standing {
        rating: Rating::NEW,
        games: 0,
        won: 0,
        lost: 0,
        last_game_ms: None,
    };

    /// The rating a game ending at `at_ms` is rated from: the deviation grown by the rating
    /// periods since the last game.
    fn at(&self, at_ms: u64) -> Rating {
        match self.last_game_ms {
            None => self.rating,
            Some(last) => {
                let periods = at_ms.saturating_sub(last) as f64 / RATING_PERIOD_MS as f64;
                self.rating.after_idle(periods)
            }
        }
    }

    /// The standing after a game scored `score` (1 won, ½ drawn, 0 lost).
    fn after(&self, rating: Rating, at_ms: u64, score: f64) -> Standing {
        Standing {
            rating,
            games: self.games + 1,
            won: self.won + u32::from(score == 1.0),
            lost: self.lost + u32::from(score == 0.0),
            last_game_ms: Some(at_ms),
        }
    }
}

/// One pool's ratings before and after a game.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoolChange {
    pub pool: Pool,
    pub black: (Rating, Rating),
    pub white: (Rating, Rating),
}

/// What one rated game changed: the event a rebuild derives again.
#[derive(Debug, Clone, PartialEq)]
pub struct RatingChange {
    pub game_id: String,
    /// The overall pool first, then the board size's pool if it has one.
    pub pools: Vec<PoolChange>,
}

/// A result the ledger cannot rate; it changed nothing.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ResultError {
    #[error("game {0} has the same player on both sides, so it cannot be rated")]
    SamePlayer(String),
    #[error("game {game_id} is on a {size}x{size} board, and boards are {MIN_SIZE} to {MAX_SIZE}")]
    Size { game_id: String, size: u8 },
    #[error("game {game_id} cannot be rated: {cause}")]
    Handicap {
        game_id: String,
        cause: HandicapError,
    },
}

/// Every player's standings in every pool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    players: HashMap<String, [Standing; 4]>,
}

impl Ledger {
    /// Replays `results` in the order given, which must be the order they were applied
    /// live (the store's order of recording), and stops at the first one it refuses.
    pub fn rebuild<'a>(
        results: impl IntoIterator<Item = &'a RatedResult>,
    ) -> Result<Ledger, ResultError> {
        let mut ledger = Ledger::default();
        for result in results {
            ledger.apply(result)?;
        }
        Ok(ledger)
    }

    /// A player's standing in a pool; a player who never played one has the new rating.
    pub fn standing(&self, player: &str, pool: Pool) -> Standing {
        self.players
            .get(player)
            .map_or(Standing::NEW, |pools| pools[pool.index()])
    }

    /// Rates one game as its own rating period in the overall pool and its size's pool.
    ///
    /// Both players are rated from their ratings before the game, their deviations grown
    /// for the days since each one's last game there. Black's expected score counts the
    /// handicap's worth ([`handicap_worth`]). A result with no winner and no draw (void,
    /// double forfeit) rates nothing and gives `None`.
    pub fn apply(&mut self, result: &RatedResult) -> Result<Option<RatingChange>, ResultError> {
        let game_id = || result.game_id.clone();
        if result.black == result.white {
            return Err(ResultError::SamePlayer(game_id()));
        }
        if !(MIN_SIZE..=MAX_SIZE).contains(&result.size) {
            return Err(ResultError::Size {
                game_id: game_id(),
                size: result.size,
            });
        }
        check_handicap(result.handicap).map_err(|cause| ResultError::Handicap {
            game_id: game_id(),
            cause,
        })?;
        let Some(black_score) = black_score(&result.result) else {
            return Ok(None);
        };
        let worth = handicap_worth(result.size, result.handicap);
        let at = result.ended_at_ms;
        let pools: Vec<Pool> = std::iter::once(Pool::Overall)
            .chain(Pool::of_size(result.size))
            .collect();
        let mut black = self.standings(&result.black);
        let mut white = self.standings(&result.white);
        let mut changes = Vec::with_capacity(pools.len());
        for pool in pools {
            let (b, w) = (&mut black[pool.index()], &mut white[pool.index()]);
            let (b_before, w_before) = (b.at(at), w.at(at));
            let b_after = rate_game(b_before, w_before.shifted(-worth), black_score);
            let w_after = rate_game(w_before, b_before.shifted(worth), 1.0 - black_score);
            changes.push(PoolChange {
                pool,
                black: (b.rating, b_after),
                white: (w.rating, w_after),
            });
            *b = b.after(b_after, at, black_score);
            *w = w.after(w_after, at, 1.0 - black_score);
        }
        self.players.insert(result.black.clone(), black);
        self.players.insert(result.white.clone(), white);
        Ok(Some(RatingChange {
            game_id: game_id(),
            pools: changes,
        }))
    }

    fn standings(&self, player: &str) -> [Standing; 4] {
        self.players
            .get(player)
            .copied()
            .unwrap_or([Standing::NEW; 4])
    }
}

/// Black's score: 1 for a win, 0.5 for a draw (jigo or declared), 0 for a loss; `None`
/// when the game has no result to rate.
fn black_score(result: &GameResult) -> Option<f64> {
    match (result.winner(), result) {
        (Some(Color::Black), _) => Some(1.0),
        (Some(Color::White), _) => Some(0.0),
        (None, GameResult::Score { .. } | GameResult::Draw) => Some(0.5),
        (None, _) => None,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::rating::glicko2::{MAX_DEVIATION, MAX_VOLATILITY};
    use crate::rules::HalfPoints;

    const DAY: u64 = RATING_PERIOD_MS;

    fn game(id: &str, at: u64, black: &str, white: &str, result: &str) -> RatedResult {
        RatedResult {
            game_id: id.into(),
            ended_at_ms: at,
            black: black.into(),
            white: white.into(),
            size: 19,
            handicap: 0,
            result: result.parse().unwrap(),
        }
    }

    fn rating(ledger: &Ledger, player: &str, pool: Pool) -> Rating {
        ledger.standing(player, pool).rating
    }

    #[test]
    fn a_first_game_between_new_players_moves_them_by_equal_and_opposite_amounts() {
        let mut ledger = Ledger::default();
        ledger.apply(&game("g1", DAY, "ann", "bob", "B+R")).unwrap();
        let (ann, bob) = (
            rating(&ledger, "ann", Pool::Overall),
            rating(&ledger, "bob", Pool::Overall),
        );
        assert!(ann.rating > 1500.0);
        assert!((ann.rating - 1500.0 + bob.rating - 1500.0).abs() < 1e-9);
        assert_eq!(ann.deviation, bob.deviation);
        assert_eq!(ledger.standing("ann", Pool::Overall).games, 1);
        assert_eq!(ledger.standing("ann", Pool::Overall).won, 1);
        assert_eq!(ledger.standing("bob", Pool::Overall).lost, 1);
    }

    #[test]
    fn a_game_updates_the_overall_pool_and_its_own_size_only() {
        let mut ledger = Ledger::default();
        let mut nine = game("g1", DAY, "ann", "bob", "W+3.5");
        nine.size = 9;
        let change = ledger.apply(&nine).unwrap().unwrap();
        let pools: Vec<Pool> = change.pools.iter().map(|p| p.pool).collect();
        assert_eq!(pools, [Pool::Overall, Pool::Nine]);
        assert!(rating(&ledger, "bob", Pool::Nine).rating > 1500.0);
        assert_eq!(ledger.standing("bob", Pool::Nineteen).games, 0);

        let mut seven = game("g2", DAY, "ann", "bob", "W+3.5");
        seven.size = 7;
        let change = ledger.apply(&seven).unwrap().unwrap();
        assert_eq!(change.pools.len(), 1);
        assert_eq!(ledger.standing("bob", Pool::Overall).games, 2);
        assert_eq!(ledger.standing("bob", Pool::Nine).games, 1);
    }

    #[test]
    fn a_draw_between_equals_keeps_both_ratings() {
        let mut ledger = Ledger::default();
        ledger.apply(&game("g1", DAY, "ann", "bob", "0")).unwrap();
        ledger
            .apply(&game("g2", DAY, "ann", "bob", "Draw"))
            .unwrap();
        for player in ["ann", "bob"] {
            assert!((rating(&ledger, player, Pool::Overall).rating - 1500.0).abs() < 1e-9);
            assert_eq!(ledger.standing(player, Pool::Overall).games, 2);
        }
    }

    #[test]
    fn an_expected_handicap_win_gains_black_less_than_an_even_win() {
        let mut even = Ledger::default();
        even.apply(&game("g1", DAY, "ann", "bob", "B+R")).unwrap();
        let mut handicap = Ledger::default();
        let mut given = game("g1", DAY, "ann", "bob", "B+R");
        given.handicap = 4;
        handicap.apply(&given).unwrap();
        let (even_gain, handicap_gain) = (
            rating(&even, "ann", Pool::Overall).rating - 1500.0,
            rating(&handicap, "ann", Pool::Overall).rating - 1500.0,
        );
        assert!(0.0 < handicap_gain && handicap_gain < even_gain);
    }

    #[test]
    fn time_away_grows_the_deviation_so_the_next_game_moves_the_rating_more() {
        let history = |second_at| {
            let mut ledger = Ledger::default();
            for (i, at) in [DAY, DAY + 1].into_iter().enumerate() {
                ledger
                    .apply(&game(&format!("g{i}"), at, "ann", "bob", "B+R"))
                    .unwrap();
            }
            let before = rating(&ledger, "ann", Pool::Overall);
            ledger
                .apply(&game("g9", second_at, "ann", "bob", "W+R"))
                .unwrap();
            before.rating - rating(&ledger, "ann", Pool::Overall).rating
        };
        let soon = history(DAY + 2);
        let after_a_year = history(DAY + 365 * DAY);
        assert!(0.0 < soon && soon < after_a_year);
    }

    #[test]
    fn a_change_records_the_stored_ratings_before_and_the_new_ones_after() {
        let mut ledger = Ledger::default();
        ledger.apply(&game("g1", DAY, "ann", "bob", "B+R")).unwrap();
        let stored = rating(&ledger, "ann", Pool::Overall);
        let change = ledger
            .apply(&game("g2", 90 * DAY, "ann", "cid", "B+T"))
            .unwrap()
            .unwrap();
        assert_eq!(change.game_id, "g2");
        let overall = change.pools[0];
        assert_eq!(
            overall.black,
            (stored, rating(&ledger, "ann", Pool::Overall))
        );
        assert_eq!(overall.white.0, Rating::NEW);
    }

    #[test]
    fn results_without_a_winner_or_a_draw_rate_nothing() {
        let mut ledger = Ledger::default();
        for result in [GameResult::Void, GameResult::DoubleForfeit] {
            let mut voided = game("g1", DAY, "ann", "bob", "B+R");
            voided.result = result;
            assert_eq!(ledger.apply(&voided), Ok(None));
        }
        assert_eq!(ledger, Ledger::default());
    }

    #[test]
    fn refused_results_name_the_game_and_change_nothing() {
        let mut ledger = Ledger::default();
        ledger.apply(&game("g0", DAY, "ann", "bob", "B+R")).unwrap();
        let before = ledger.clone();
        let mut sized = game("g2", DAY, "ann", "bob", "B+R");
        sized.size = 30;
        let mut handicapped = game("g3", DAY, "ann", "bob", "B+R");
        handicapped.handicap = 1;
        let refusals = [
            (
                game("g1", DAY, "ann", "ann", "B+R"),
                "game g1 has the same player",
            ),
            (sized, "game g2 is on a 30x30 board"),
            (
                handicapped,
                "game g3 cannot be rated: a handicap is from 2 to 9 stones",
            ),
        ];
        for (result, message) in refusals {
            let error = ledger.apply(&result).unwrap_err();
            assert!(error.to_string().starts_with(message), "{error}");
            assert_eq!(ledger, before);
        }
        let refused = game("g1", DAY, "ann", "ann", "B+R");
        assert_eq!(
            Ledger::rebuild([&refused]),
            Err(ResultError::SamePlayer("g1".into()))
        );
    }

    fn any_result() -> impl Strategy<Value = GameResult> {
        let color = prop_oneof![Just(Color::Black), Just(Color::White)];
        prop_oneof![
            6 => (color.clone(), 1..100i32).prop_map(|(winner, m)| GameResult::Score {
                winner: Some(winner),
                margin: HalfPoints(m),
            }),
            4 => color.clone().prop_map(|winner| GameResult::Resignation { winner }),
            1 => color.clone().prop_map(|winner| GameResult::Time { winner }),
            1 => color.prop_map(|winner| GameResult::Forfeit { winner }),
            1 => Just(GameResult::Draw),
            1 => Just(GameResult::Void),
            1 => Just(GameResult::DoubleForfeit),
        ]
    }

    /// A few hundred results among a handful of players, with gaps from none to a year
    /// (clocks that step back included), every size and handicap (nine stones on 5x5 too), and some refused.
    fn any_history() -> impl Strategy<Value = Vec<RatedResult>> {
        let one = (
            0..8u8,
            0..8u8,
            prop_oneof![Just(9u8), Just(13), Just(19), Just(5), Just(40)],
            prop_oneof![8 => Just(0u8), 4 => 2..=9u8, 1 => Just(1)],
            prop_oneof![Just(0u64), 0..DAY, 0..365 * DAY],
            any::<bool>(),
            any_result(),
        );
        proptest::collection::vec(one, 200..400).prop_map(|games| {
            let mut at = 10 * 365 * DAY;
            games
                .into_iter()
                .enumerate()
                .map(|(i, (b, w, size, handicap, gap, back, result))| {
                    at = if back { at - gap / 100 } else { at + gap };
                    RatedResult {
                        game_id: format!("g{i}"),
                        ended_at_ms: at,
                        black: format!("p{b}"),
                        white: format!("p{w}"),
                        size,
                        handicap,
                        result,
                    }
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn rebuild_gives_exactly_the_ratings_the_incremental_updates_gave(
            history in any_history(),
        ) {
            let mut live = Ledger::default();
            let mut applied = Vec::new();
            let mut last_change: HashMap<(String, usize), Rating> = HashMap::new();
            for result in &history {
                let before = live.clone();
                match live.apply(result) {
                    Err(_) => prop_assert_eq!(&live, &before),
                    Ok(None) => {
                        prop_assert_eq!(&live, &before);
                        applied.push(result);
                    }
                    Ok(Some(change)) => {
                        applied.push(result);
                        for pool in &change.pools {
                            let i = pool.pool.index();
                            last_change.insert((result.black.clone(), i), pool.black.1);
                            last_change.insert((result.white.clone(), i), pool.white.1);
                        }
                    }
                }
            }
            prop_assert_eq!(Ledger::rebuild(applied.iter().copied()), Ok(live.clone()));
            // The recorded events alone give every player's current ratings.
            for ((player, i), rating) in &last_change {
                prop_assert_eq!(live.players[player][*i].rating, *rating);
            }
            for pools in live.players.values() {
                for standing in pools {
                    let r = standing.rating;
                    prop_assert!(r.rating.is_finite() && r.volatility.is_finite());
                    prop_assert!(r.deviation > 0.0 && r.deviation <= MAX_DEVIATION);
                    prop_assert!(r.volatility > 0.0 && r.volatility <= MAX_VOLATILITY);
                }
            }
        }
    }
}
