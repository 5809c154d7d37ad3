//! The PostgreSQL backend of [`Store`]: the same log, rows and refusals as
//! [`SqliteStore`](crate::store::SqliteStore), in a database several server processes
//! share. Concurrent appends to one game are serialised by locking the game's row
//! (`SELECT … FOR UPDATE`) in the transaction that checks its fence and next `seq`, and
//! `(game_id, seq)` is the events' primary key, so two nodes can never both write event n.
//!
//! The trait is synchronous and the client async: [`connections`] runs the client on a
//! runtime of its own. A lost connection is a [`StoreError::Postgres`] for that call and
//! is opened afresh on the next one; the URL's password is never in an error or a log.

mod accounts;
mod connections;
mod copy;
mod fairplay;
mod games;
mod leases;
mod mutes;
mod ratings;
mod reviews;
mod schema;

use std::fmt;
use std::ops::Range;

use tokio_postgres::Row;
use tokio_postgres::types::FromSql;

use super::{
    Append, EventRecord, GameQuery, GameRecord, KibitzRecord, NewReport, RatedGames,
    RatingChangeRow, RatingRecord, RatingRow, ReviewRecord, Store, StoreError, StoredReport,
};
use connections::Connections;

/// The game database in PostgreSQL.
pub struct PgStore {
    connections: Connections,
}

impl fmt::Debug for PgStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Deliberately without the URL: it holds the password.
        f.debug_struct("PgStore").finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`) and
    /// brings its schema up to date; a database from a newer tengen is refused untouched.
    pub fn open(url: &str) -> Result<Self, StoreError> {
        let store = PgStore {
            connections: Connections::new(url)?,
        };
        store
            .connections
            .run(|client| Box::pin(schema::migrate(client)))?;
        Ok(store)
    }
}

/// A PostgreSQL error as the store reports it: the server's message when it sent one,
/// else the client's (which names no part of the URL).
pub(super) fn pg_error(err: tokio_postgres::Error) -> StoreError {
    let detail = match err.as_db_error() {
        Some(db) => format!("{} {}: {}", db.severity(), db.code().code(), db.message()),
        None => match std::error::Error::source(&err) {
            Some(source) => format!("{err}: {source}"),
            None => err.to_string(),
        },
    };
    StoreError::Postgres { detail }
}

/// Column `index` of `row`, or an error naming the column (never a panic, whatever the
/// database holds).
pub(super) fn col<'a, T: FromSql<'a>>(row: &'a Row, index: usize) -> Result<T, StoreError> {
    row.try_get(index).map_err(|e| StoreError::Postgres {
        detail: format!("column {index} could not be read: {e}"),
    })
}

/// A stored value this build cannot use.
pub(super) fn bad_row(detail: String) -> StoreError {
    StoreError::Postgres {
        detail: format!("the database holds an unreadable value: {detail}"),
    }
}

/// A `u64` number (a seq, a fence) as PostgreSQL's `BIGINT`, saturating: none comes near.
pub(super) fn bigint(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Store for PgStore {
    fn create_game(&self, game: &GameRecord) -> Result<(), StoreError> {
        self.append(&[Append::Create(game.clone())])
    }

    fn append(&self, batch: &[Append]) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let batch = batch.to_vec();
        self.connections
            .run(move |c| Box::pin(games::append(c, batch)))
    }

    /// Nothing to do: PostgreSQL makes each commit durable itself before `append`
    /// returns, so `append_unsynced` (the default, `append`) never leaves a sync behind.
    fn sync_log(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn unfinished_games(&self) -> Result<Vec<(GameRecord, Vec<EventRecord>)>, StoreError> {
        self.connections
            .run(|c| Box::pin(games::unfinished_games(c)))
    }

    fn game(&self, id: &str) -> Result<Option<GameRecord>, StoreError> {
        let id = id.to_owned();
        self.connections.run(move |c| Box::pin(games::game(c, id)))
    }

    fn events_in(&self, id: &str, seqs: Range<u64>) -> Result<Vec<EventRecord>, StoreError> {
        let id = id.to_owned();
        self.connections
            .run(move |c| Box::pin(games::events_in(c, id, seqs)))
    }

    fn list_games(&self, query: &GameQuery) -> Result<Vec<GameRecord>, StoreError> {
        let query = query.clone();
        self.connections
            .run(move |c| Box::pin(games::list_games(c, query)))
    }

    fn check_writable(&self) -> Result<(), StoreError> {
        self.connections.run(|c| Box::pin(games::check_writable(c)))
    }

    fn set_block(
        &self,
        blocker: &str,
        blocked: &str,
        on: bool,
        at_ms: i64,
    ) -> Result<(), StoreError> {
        let (blocker, blocked) = (blocker.to_owned(), blocked.to_owned());
        self.connections
            .run(move |c| Box::pin(fairplay::set_block(c, blocker, blocked, on, at_ms)))
    }

    fn blocks(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.connections.run(|c| Box::pin(fairplay::blocks(c)))
    }

    fn file_report(&self, report: &NewReport) -> Result<u64, StoreError> {
        let report = report.clone();
        self.connections
            .run(move |c| Box::pin(fairplay::file_report(c, report)))
    }

    fn open_reports(
        &self,
        reporter: Option<&str>,
        limit: u32,
    ) -> Result<Vec<StoredReport>, StoreError> {
        let reporter = reporter.map(str::to_owned);
        self.connections
            .run(move |c| Box::pin(fairplay::open_reports(c, reporter, limit)))
    }

    fn close_report(&self, id: u64) -> Result<bool, StoreError> {
        self.connections
            .run(move |c| Box::pin(fairplay::close_report(c, id)))
    }

    fn kibitz(&self, game_id: &str) -> Result<Vec<KibitzRecord>, StoreError> {
        let game_id = game_id.to_owned();
        self.connections
            .run(move |c| Box::pin(fairplay::kibitz(c, game_id)))
    }

    fn forfeit_losses(
        &self,
        player: &str,
        limit: u32,
    ) -> Result<Vec<(GameRecord, Vec<EventRecord>)>, StoreError> {
        let player = player.to_owned();
        self.connections
            .run(move |c| Box::pin(fairplay::forfeit_losses(c, player, limit)))
    }

    fn rated_games(&self) -> Result<RatedGames, StoreError> {
        self.connections.run(|c| Box::pin(ratings::rated_games(c)))
    }

    fn record_rating(&self, record: &RatingRecord, after: u64) -> Result<(), StoreError> {
        let records = vec![record.clone()];
        self.connections
            .run(move |c| Box::pin(ratings::record(c, records, None, after)))
    }

    fn replace_ratings(&self, records: &[RatingRecord], settled: i64) -> Result<(), StoreError> {
        let records = records.to_vec();
        self.connections
            .run(move |c| Box::pin(ratings::record(c, records, Some(settled), 0)))
    }

    fn ratings_owed(&self) -> Result<i64, StoreError> {
        self.connections.run(|c| Box::pin(ratings::owed(c)))
    }

    fn player_ratings(&self, player: &str) -> Result<Vec<RatingRow>, StoreError> {
        let player = player.to_owned();
        self.connections
            .run(move |c| Box::pin(ratings::player_ratings(c, player)))
    }

    fn rating_history(&self, player: &str, limit: u32) -> Result<Vec<RatingChangeRow>, StoreError> {
        let player = player.to_owned();
        self.connections
            .run(move |c| Box::pin(ratings::rating_history(c, player, limit)))
    }

    fn leaderboard(&self, pool: &str, limit: u32) -> Result<Vec<RatingRow>, StoreError> {
        let pool = pool.to_owned();
        self.connections
            .run(move |c| Box::pin(ratings::leaderboard(c, pool, limit)))
    }

    fn player_name(&self, player: &str) -> Result<Option<String>, StoreError> {
        let player = player.to_owned();
        self.connections
            .run(move |c| Box::pin(ratings::player_name(c, player)))
    }

    fn save_review(&self, review: &ReviewRecord) -> Result<(), StoreError> {
        let review = review.clone();
        self.connections
            .run(move |c| Box::pin(reviews::save(c, review)))
    }

    fn review(&self, id: &str) -> Result<Option<ReviewRecord>, StoreError> {
        let id = id.to_owned();
        self.connections
            .run(move |c| Box::pin(reviews::review(c, id)))
    }

    fn count_reviews(&self, owner: &str) -> Result<u64, StoreError> {
        let owner = owner.to_owned();
        self.connections
            .run(move |c| Box::pin(reviews::count(c, owner)))
    }
}
