//! The PostgreSQL side of [`MuteStore`].

use tokio_postgres::Client;

use super::{PgStore, col, pg_error};
use crate::store::{MuteStore, StoreError};

async fn set_mute(
    client: &mut Client,
    muter: String,
    muted: String,
    on: bool,
    at_ms: i64,
) -> Result<(), StoreError> {
    match on {
        true => {
            client
                .execute(
                    "INSERT INTO mutes (muter, muted, at_ms) VALUES ($1, $2, $3)
                     ON CONFLICT DO NOTHING",
                    &[&muter, &muted, &at_ms],
                )
                .await
        }
        false => {
            client
                .execute(
                    "DELETE FROM mutes WHERE muter = $1 AND muted = $2",
                    &[&muter, &muted],
                )
                .await
        }
    }
    .map_err(pg_error)?;
    Ok(())
}

async fn mutes(client: &mut Client) -> Result<Vec<(String, String)>, StoreError> {
    let rows = client
        .query("SELECT muter, muted FROM mutes ORDER BY muter, muted", &[])
        .await
        .map_err(pg_error)?;
    rows.iter()
        .map(|row| Ok((col(row, 0)?, col(row, 1)?)))
        .collect()
}

impl MuteStore for PgStore {
    fn set_mute(&self, muter: &str, muted: &str, on: bool, at_ms: i64) -> Result<(), StoreError> {
        let (muter, muted) = (muter.to_owned(), muted.to_owned());
        self.connections
            .run(move |c| Box::pin(set_mute(c, muter, muted, on, at_ms)))
    }

    fn mutes(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.connections.run(|c| Box::pin(mutes(c)))
    }
}
