//! The PostgreSQL side of [`VacationStore`], and the day a log batch takes off a balance.

use tokio_postgres::{Client, Row};

use super::prepared::Prepared;
use super::{PgStore, col, pg_error};
use crate::store::{StoreError, VacationRow, VacationStore};

fn vacation(row: &Row, at: usize) -> Result<VacationRow, StoreError> {
    Ok(VacationRow {
        balance_ms: col(row, at)?,
        as_of_ms: col(row, at + 1)?,
        away_since_ms: col(row, at + 2)?,
        warned: col(row, at + 3)?,
    })
}

/// Takes `ms` off `user_id`'s balance, in a log batch's transaction.
pub(super) async fn spend(b: &mut Prepared<'_>, user_id: &str, ms: i64) -> Result<(), StoreError> {
    b.execute(
        "UPDATE vacations SET balance_ms = balance_ms - $2 WHERE user_id = $1",
        &[&user_id, &ms],
    )
    .await?;
    Ok(())
}

async fn read(c: &mut Client, user_id: String) -> Result<Option<VacationRow>, StoreError> {
    c.query_opt(
        "SELECT balance_ms, as_of_ms, away_since_ms, warned FROM vacations WHERE user_id = $1",
        &[&user_id],
    )
    .await
    .map_err(pg_error)?
    .map(|row| vacation(&row, 0))
    .transpose()
}

async fn put(c: &mut Client, user_id: String, v: VacationRow) -> Result<(), StoreError> {
    c.execute(
        "INSERT INTO vacations (user_id, balance_ms, as_of_ms, away_since_ms, warned)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (user_id) DO UPDATE SET balance_ms = excluded.balance_ms,
             as_of_ms = excluded.as_of_ms, away_since_ms = excluded.away_since_ms,
             warned = excluded.warned",
        &[
            &user_id,
            &v.balance_ms,
            &v.as_of_ms,
            &v.away_since_ms,
            &v.warned,
        ],
    )
    .await
    .map_err(pg_error)?;
    Ok(())
}

async fn away(c: &mut Client) -> Result<Vec<(String, VacationRow)>, StoreError> {
    c.query(
        "SELECT user_id, balance_ms, as_of_ms, away_since_ms, warned FROM vacations
         WHERE away_since_ms IS NOT NULL ORDER BY user_id",
        &[],
    )
    .await
    .map_err(pg_error)?
    .iter()
    .map(|row| Ok((col(row, 0)?, vacation(row, 1)?)))
    .collect()
}

impl VacationStore for PgStore {
    fn vacation(&self, user_id: &str) -> Result<Option<VacationRow>, StoreError> {
        let user_id = user_id.to_owned();
        self.connections.run(move |c| Box::pin(read(c, user_id)))
    }

    fn put_vacation(&self, user_id: &str, row: &VacationRow) -> Result<(), StoreError> {
        let (user_id, row) = (user_id.to_owned(), *row);
        self.connections
            .run(move |c| Box::pin(put(c, user_id, row)))
    }

    fn away_accounts(&self) -> Result<Vec<(String, VacationRow)>, StoreError> {
        self.connections.run(move |c| Box::pin(away(c)))
    }
}
