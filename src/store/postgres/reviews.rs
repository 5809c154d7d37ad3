//! Saved analysis boards (reviews) in PostgreSQL.

use tokio_postgres::Client;

use super::{PgStore, bad_row, col, pg_error};
use crate::store::{ReviewRecord, ReviewStore, StoreError};

async fn save(client: &mut Client, r: ReviewRecord) -> Result<(), StoreError> {
    let move_number = r.move_number.map(i64::from);
    client
        .execute(
            "INSERT INTO reviews (id, created_at_ms, owner, game_id, move_number, sgf)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &r.id,
                &r.created_at_ms,
                &r.owner,
                &r.game_id,
                &move_number,
                &r.sgf,
            ],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

async fn review(client: &mut Client, id: String) -> Result<Option<ReviewRecord>, StoreError> {
    let Some(row) = client
        .query_opt(
            "SELECT id, created_at_ms, owner, game_id, move_number, sgf FROM reviews
             WHERE id = $1",
            &[&id],
        )
        .await
        .map_err(pg_error)?
    else {
        return Ok(None);
    };
    let move_number: Option<i64> = col(&row, 4)?;
    Ok(Some(ReviewRecord {
        id: col(&row, 0)?,
        created_at_ms: col(&row, 1)?,
        owner: col(&row, 2)?,
        game_id: col(&row, 3)?,
        move_number: move_number
            .map(u32::try_from)
            .transpose()
            .map_err(|_| bad_row(format!("review {id} starts after move {move_number:?}")))?,
        sgf: col(&row, 5)?,
    }))
}

async fn count(client: &mut Client, owner: String) -> Result<u64, StoreError> {
    let row = client
        .query_one("SELECT count(*) FROM reviews WHERE owner = $1", &[&owner])
        .await
        .map_err(pg_error)?;
    Ok(col::<i64>(&row, 0)?.unsigned_abs())
}

impl ReviewStore for PgStore {
    fn save_review(&self, review: &ReviewRecord) -> Result<(), StoreError> {
        let review = review.clone();
        self.connections
            .run(move |c| Box::pin(self::save(c, review)))
    }

    fn review(&self, id: &str) -> Result<Option<ReviewRecord>, StoreError> {
        let id = id.to_owned();
        self.connections.run(move |c| Box::pin(self::review(c, id)))
    }

    fn count_reviews(&self, owner: &str) -> Result<u64, StoreError> {
        let owner = owner.to_owned();
        self.connections
            .run(move |c| Box::pin(self::count(c, owner)))
    }
}
