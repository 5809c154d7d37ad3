//! The PostgreSQL side of [`CalendarStore`].

use tokio_postgres::Client;

use super::{PgStore, col, pg_error};
use crate::store::{CalendarRow, CalendarStore, StoreError};

async fn read(c: &mut Client, user_id: String) -> Result<Option<CalendarRow>, StoreError> {
    let Some(row) = c
        .query_opt(
            "SELECT time_zone, weekend FROM calendars WHERE user_id = $1",
            &[&user_id],
        )
        .await
        .map_err(pg_error)?
    else {
        return Ok(None);
    };
    let weekend: i64 = col(&row, 1)?;
    Ok(Some(CalendarRow {
        time_zone: col(&row, 0)?,
        weekend: u8::try_from(weekend).unwrap_or(0),
    }))
}

async fn put(c: &mut Client, user_id: String, row: CalendarRow) -> Result<(), StoreError> {
    c.execute(
        "INSERT INTO calendars (user_id, time_zone, weekend) VALUES ($1, $2, $3)
         ON CONFLICT (user_id) DO UPDATE SET time_zone = excluded.time_zone,
             weekend = excluded.weekend",
        &[&user_id, &row.time_zone, &i64::from(row.weekend)],
    )
    .await
    .map_err(pg_error)?;
    Ok(())
}

impl CalendarStore for PgStore {
    fn calendar(&self, user_id: &str) -> Result<Option<CalendarRow>, StoreError> {
        let user_id = user_id.to_owned();
        self.connections.run(move |c| Box::pin(read(c, user_id)))
    }

    fn put_calendar(&self, user_id: &str, row: &CalendarRow) -> Result<(), StoreError> {
        let (user_id, row) = (user_id.to_owned(), row.clone());
        self.connections
            .run(move |c| Box::pin(put(c, user_id, row)))
    }
}
