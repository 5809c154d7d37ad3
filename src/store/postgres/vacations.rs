//! The PostgreSQL side of [`VacationStore`]. A change locks the account's row (`FOR
//! UPDATE`), so two nodes changing it at once take turns: the second decides on the
//! row the first kept.

use tokio_postgres::{Client, Row};

use super::{PgStore, col, pg_error};
use crate::store::{StoreError, VacationChange, VacationRow, VacationStore};

const COLUMNS: &str = "balance_ms, as_of_ms, away_since_ms, warned, paid_until_ms";
/// Tries at a change: one more than the first row inserted by another node at once.
const TRIES: usize = 3;

fn vacation(row: &Row, at: usize) -> Result<VacationRow, StoreError> {
    Ok(VacationRow {
        balance_ms: col(row, at)?,
        as_of_ms: col(row, at + 1)?,
        away_since_ms: col(row, at + 2)?,
        warned: col(row, at + 3)?,
        paid_until_ms: col(row, at + 4)?,
    })
}

async fn read(c: &mut Client, user_id: String) -> Result<Option<VacationRow>, StoreError> {
    c.query_opt(
        &format!("SELECT {COLUMNS} FROM vacations WHERE user_id = $1"),
        &[&user_id],
    )
    .await
    .map_err(pg_error)?
    .map(|row| vacation(&row, 0))
    .transpose()
}

async fn change(
    c: &mut Client,
    user_id: String,
    change: VacationChange,
) -> Result<(Option<VacationRow>, VacationRow), StoreError> {
    for _ in 0..TRIES {
        let tx = c.transaction().await.map_err(pg_error)?;
        let before = tx
            .query_opt(
                &format!("SELECT {COLUMNS} FROM vacations WHERE user_id = $1 FOR UPDATE"),
                &[&user_id],
            )
            .await
            .map_err(pg_error)?
            .map(|row| vacation(&row, 0))
            .transpose()?;
        let v = change(before);
        let values: [&(dyn tokio_postgres::types::ToSql + Sync); 6] = [
            &user_id,
            &v.balance_ms,
            &v.as_of_ms,
            &v.away_since_ms,
            &v.warned,
            &v.paid_until_ms,
        ];
        let sql = match before {
            Some(_) => {
                "UPDATE vacations SET balance_ms = $2, as_of_ms = $3, away_since_ms = $4,
                     warned = $5, paid_until_ms = $6
                 WHERE user_id = $1"
            }
            // A first row another node inserts meanwhile wins: this try finds nothing
            // to do and the next one decides on that row, locked.
            None => {
                "INSERT INTO vacations (user_id, balance_ms, as_of_ms, away_since_ms, warned,
                     paid_until_ms)
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (user_id) DO NOTHING"
            }
        };
        if tx.execute(sql, &values).await.map_err(pg_error)? == 1 {
            tx.commit().await.map_err(pg_error)?;
            return Ok((before, v));
        }
    }
    Err(StoreError::Postgres {
        detail: format!("the vacation of {user_id} changed under every one of {TRIES} tries"),
    })
}

async fn away(c: &mut Client) -> Result<Vec<(String, VacationRow)>, StoreError> {
    c.query(
        &format!(
            "SELECT user_id, {COLUMNS} FROM vacations
             WHERE away_since_ms IS NOT NULL ORDER BY user_id"
        ),
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

    fn change_vacation(
        &self,
        user_id: &str,
        change_with: VacationChange,
    ) -> Result<(Option<VacationRow>, VacationRow), StoreError> {
        let user_id = user_id.to_owned();
        self.connections
            .run(move |c| Box::pin(change(c, user_id, change_with)))
    }

    fn away_accounts(&self) -> Result<Vec<(String, VacationRow)>, StoreError> {
        self.connections.run(move |c| Box::pin(away(c)))
    }
}
