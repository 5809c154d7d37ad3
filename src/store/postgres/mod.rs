//! The PostgreSQL backend of the store's traits, each implemented in the file of its
//! name (`log.rs`, `games.rs`, `accounts.rs`, …): the same log, rows and refusals as
//! [`SqliteStore`](crate::store::SqliteStore), in a database several server processes
//! share. Concurrent appends to one game are serialised by locking the game's row
//! (`SELECT … FOR UPDATE`) in the transaction that checks its fence and next `seq`, and
//! `(game_id, seq)` is the events' primary key, so two nodes can never both write event n.
//!
//! The trait is synchronous and the client async: [`connections`] runs the client on a
//! runtime of its own. A lost connection is a [`StoreError::Postgres`] for that call and
//! is opened afresh on the next one; the URL's password is never in an error or a log.

mod accounts;
mod bots;
mod calendars;
mod connections;
mod copy;
mod deadlines;
mod fairplay;
mod games;
mod leases;
mod log;
mod mutes;
mod notices;
mod plans;
mod prepared;
mod push;
mod ratings;
mod reviews;
mod schema;
mod tokens;
mod tournaments;
mod vacations;

use std::fmt;

use tokio_postgres::Row;
use tokio_postgres::types::FromSql;

use super::StoreError;
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
