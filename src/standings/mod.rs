//! The server's ratings, kept current as rated games end (docs/RATINGS.md): a task that
//! owns the [`Ledger`], folds each finished rated game into it in the order the games
//! end, and records the change in the store. Never on a room's path: it hears of ended
//! games and changed results on the game-lifecycle bus ([`crate::lifecycle`]), and a
//! subscriber that lagged behind the bus catches up from the store as at start.
//!
//! Crash-consistent by construction: at start the ledger is replayed from the rated
//! games already applied, in their recorded order, and any finished rated game whose
//! change was never recorded (a crash came between) is applied then. The ratings are
//! always a fold over the results, which is also what [`rebuild`] does.
//!
//! A referee who changes a rated game's result after it ended leaves the ratings owing
//! a rebuild (a mark the store writes with the change); the task then rebuilds them all
//! from the stored results, on the news of the change or, after a crash, at start.

pub mod ranks;
pub mod view;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::{self, error::RecvError};

pub use ranks::Ranks;

use crate::lifecycle::GameNews;
use crate::protocol::GameSettings;
use crate::rating::{Ledger, Pool, RatedResult, Rating};
use crate::rules::GameResult;
use crate::store::{
    GameRecord, GameStatus, RatingChangeRow, RatingRecord, RatingRow, Store, StoreError,
};

/// The first wait after the store refuses a rating write; doubles up to [`LAST_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(200);
const LAST_RETRY: Duration = Duration::from_secs(30);

/// The rating task's window: the ranks it keeps.
pub struct Standings {
    ranks: Ranks,
}

impl Standings {
    /// Starts the rating task: it catches up with the store, then rates games as `news`
    /// says they end.
    pub fn spawn(store: Arc<dyn Store>, news: broadcast::Receiver<GameNews>) -> Standings {
        let ranks = Ranks::default();
        tokio::spawn(run(store, news, ranks.clone()));
        Standings { ranks }
    }

    /// The players' ranks, which this task keeps current (empty until it has caught up
    /// with the store at start).
    pub fn ranks(&self) -> &Ranks {
        &self.ranks
    }
}

/// The ledger, the games already in it, and the ranks it shows the lobby.
struct Rater {
    ledger: Ledger,
    applied: HashSet<String>,
    ranks: Ranks,
}

impl Rater {
    fn new(ranks: Ranks) -> Rater {
        Rater {
            ledger: Ledger::default(),
            applied: HashSet::new(),
            ranks,
        }
    }

    /// Folds one finished rated game into the ledger, updates both players' ranks, and
    /// says what to record. The ranks change before the store records the game, so a
    /// profile that shows the game is never ahead of the lobby's rank.
    ///
    /// Also returns how many games were in the ledger before this one: the store takes
    /// the record only if it holds exactly those (see [`RatingStore::record_rating`](crate::store::RatingStore::record_rating)).
    fn rate(&mut self, game: &GameRecord) -> (RatingRecord, u64) {
        let after = self.applied.len() as u64;
        self.applied.insert(game.id.clone());
        let record = rate(&mut self.ledger, game);
        for player in [&game.black, &game.white] {
            self.ranks.update(&self.ledger, player);
        }
        (record, after)
    }
}

async fn run(store: Arc<dyn Store>, mut news: broadcast::Receiver<GameNews>, ranks: Ranks) {
    let mut rater = caught_up(&store, &ranks).await;
    loop {
        let game_id = match news.recv().await {
            // Rated or not (its result is committed): the task reads its row.
            Ok(GameNews::Ended(game)) => game.game_id,
            // Committed with the rebuild it owes if rated.
            Ok(GameNews::ResultChanged { .. }) => {
                let rebuilt = retry("rebuilding the ratings after a changed result", || {
                    let (store, ranks) = (store.clone(), ranks.clone());
                    async move {
                        tokio::task::spawn_blocking(move || settle(&*store, &ranks))
                            .await
                            .unwrap_or(Err(StoreError::Poisoned))
                    }
                })
                .await;
                if let Some((fresh, games)) = rebuilt {
                    rater = fresh;
                    tracing::info!(games, "rebuilt the ratings after a changed result");
                }
                continue;
            }
            Ok(GameNews::Started { .. } | GameNews::YourMove { .. }) => continue,
            // What was missed is in the store: the games ended meanwhile are pending there.
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(
                    missed,
                    "the rating task fell behind the game news; catching up from the store"
                );
                rater = caught_up(&store, &ranks).await;
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        if rater.applied.contains(&game_id) {
            continue;
        }
        let row = retry("reading an ended game", || {
            let (store, id) = (store.clone(), game_id.clone());
            async move {
                tokio::task::spawn_blocking(move || store.game(&id))
                    .await
                    .unwrap_or(Err(StoreError::Poisoned))
            }
        })
        .await;
        let Some(game) = row.filter(|g| g.status == GameStatus::Finished && is_rated(g)) else {
            continue;
        };
        let (record, after) = rater.rate(&game);
        let changes = record.changes.len();
        let s = store.clone();
        let recorded = tokio::task::spawn_blocking(move || s.record_rating(&record, after))
            .await
            .unwrap_or(Err(StoreError::Poisoned));
        match recorded {
            Ok(()) => tracing::info!(game = %game.id, changes, "rated a game"),
            // Another server sharing the store rated a game first, or the store failed:
            // start again from what the store holds, which rates this game too.
            Err(e) => {
                tracing::info!(game = %game.id, error = %e, "rating again from the store");
                rater = caught_up(&store, &ranks).await;
            }
        }
    }
}

/// A rater that holds every rated game the store has, the pending ones rated and
/// recorded ([`catch_up`]), retried until the store answers.
async fn caught_up(store: &Arc<dyn Store>, ranks: &Ranks) -> Rater {
    retry("catching up with rated games", || {
        let (store, ranks) = (store.clone(), ranks.clone());
        async move {
            tokio::task::spawn_blocking(move || catch_up(&*store, ranks))
                .await
                .unwrap_or(Err(StoreError::Poisoned))
        }
    })
    .await
}

/// Runs `attempt` until the store takes it, waiting longer after each failure: ratings
/// must be applied in order, so a failing store holds the queue rather than skip a game.
async fn retry<T, F, Fut>(what: &str, mut attempt: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    let mut wait = FIRST_RETRY;
    loop {
        match attempt().await {
            Ok(value) => return value,
            Err(e) => {
                tracing::error!(error = %e, "the store failed while {what}; retrying");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(LAST_RETRY);
            }
        }
    }
}

/// Replays the applied games into a fresh ledger, then applies and records the pending
/// ones (finished, never recorded), oldest ending first.
fn catch_up(store: &dyn Store, ranks: Ranks) -> Result<Rater, StoreError> {
    if let Some((rater, games)) = settle(store, &ranks)? {
        tracing::info!(games, "rebuilt the ratings a changed result owed");
        return Ok(rater);
    }
    let games = store.rated_games()?;
    let mut rater = Rater::new(ranks);
    for game in &games.applied {
        rater.rate(game);
    }
    for game in &games.pending {
        let (record, after) = rater.rate(game);
        store.record_rating(&record, after)?;
        tracing::info!(game = %game.id, "rated a game that ended before the last stop");
    }
    Ok(rater)
}

/// `tengen ratings rebuild`: replays every rated result in its order of application (then
/// the pending ones) and replaces every recorded change and standing with the replay's.
/// Returns how many games were replayed.
pub fn rebuild(store: &dyn Store) -> Result<usize, StoreError> {
    rebuilt(store, &Ranks::default()).map(|(_, games)| games)
}

/// [`rebuild`], giving the ledger it ends with and settling the rebuilds owed before it
/// read the games (one owed by a change made while it ran stays owed). The ranks in
/// `shown` become the rebuilt ones just before the store has them (a player whose only
/// rated game was annulled loses theirs).
fn rebuilt(store: &dyn Store, shown: &Ranks) -> Result<(Rater, usize), StoreError> {
    let owed = store.ratings_owed()?;
    let games = store.rated_games()?;
    let mut rater = Rater::new(Ranks::default());
    let records: Vec<RatingRecord> = games
        .applied
        .iter()
        .chain(&games.pending)
        .map(|game| rater.rate(game).0)
        .collect();
    // The ranks first, as when a game is rated: a profile is never ahead of the lobby.
    shown.replace_with(&rater.ranks);
    rater.ranks = shown.clone();
    store.replace_ratings(&records, owed)?;
    Ok((rater, records.len()))
}

/// Rebuilds if a changed result owes it; None when nothing is owed.
fn settle(store: &dyn Store, shown: &Ranks) -> Result<Option<(Rater, usize)>, StoreError> {
    if store.ratings_owed()? == 0 {
        return Ok(None);
    }
    rebuilt(store, shown).map(Some)
}

/// A player's overall rating as last recorded (a new player's 1500 if none), which
/// automatch pairs by.
pub fn overall_rating(store: &dyn Store, player: &str) -> Result<f64, StoreError> {
    let rows = store.player_ratings(player)?;
    Ok(rows
        .iter()
        .find(|r| r.pool == Pool::Overall.name())
        .map_or(Rating::NEW.rating, |r| r.rating))
}

fn is_rated(game: &GameRecord) -> bool {
    serde_json::from_str::<GameSettings>(&game.settings).is_ok_and(|s| s.rated)
}

/// A finished game's row as the ledger reads it.
fn rated_result(game: &GameRecord) -> Result<RatedResult, String> {
    let settings: GameSettings =
        serde_json::from_str(&game.settings).map_err(|e| format!("its settings: {e}"))?;
    let result: GameResult = game
        .result
        .as_deref()
        .ok_or("it has no result")?
        .parse()
        .map_err(|e| format!("its result: {e}"))?;
    Ok(RatedResult {
        game_id: game.id.clone(),
        ended_at_ms: game.ended_at_ms.unwrap_or(0).max(0) as u64,
        black: game.black.clone(),
        white: game.white.clone(),
        size: settings.board_size,
        handicap: settings.handicap,
        result,
    })
}

/// Rates one game in `ledger` and gives what to record. A game the ledger cannot rate
/// (an unreadable row, the same player on both sides) is recorded with no change, so it
/// is neither retried nor rated by a later rebuild differently.
fn rate(ledger: &mut Ledger, game: &GameRecord) -> RatingRecord {
    let unrated = || RatingRecord {
        game_id: game.id.clone(),
        changes: Vec::new(),
        standings: Vec::new(),
    };
    let result = match rated_result(game) {
        Ok(result) => result,
        Err(why) => {
            tracing::warn!(game = %game.id, "a rated game cannot be read, so it rates nothing: {why}");
            return unrated();
        }
    };
    let change = match ledger.apply(&result) {
        Ok(Some(change)) => change,
        Ok(None) => return unrated(),
        Err(e) => {
            tracing::warn!(game = %game.id, "{e}");
            return unrated();
        }
    };
    let at_ms = result.ended_at_ms as i64;
    let triple = |r: Rating| [r.rating, r.deviation, r.volatility];
    let mut changes = Vec::with_capacity(change.pools.len() * 2);
    let mut standings = Vec::with_capacity(change.pools.len() * 2);
    for pool in &change.pools {
        let sides = [
            ("black", &result.black, &result.white, pool.black),
            ("white", &result.white, &result.black, pool.white),
        ];
        for (color, player, opponent, (before, after)) in sides {
            changes.push(RatingChangeRow {
                game_id: game.id.clone(),
                pool: pool.pool.name().to_string(),
                color: color.to_string(),
                player: player.clone(),
                opponent: opponent.clone(),
                at_ms,
                before: triple(before),
                after: triple(after),
            });
            let s = ledger.standing(player, pool.pool);
            standings.push(RatingRow {
                player: player.clone(),
                pool: pool.pool.name().to_string(),
                rating: s.rating.rating,
                deviation: s.rating.deviation,
                volatility: s.rating.volatility,
                games: s.games,
                won: s.won,
                lost: s.lost,
                last_game_ms: s.last_game_ms.map(|ms| ms as i64),
            });
        }
    }
    RatingRecord {
        game_id: game.id.clone(),
        changes,
        standings,
    }
}
