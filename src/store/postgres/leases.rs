//! [`Leases`] in PostgreSQL: the owner, the lease's end and the fence are columns of the
//! game's row, so a claim is one `UPDATE` that only one node can win, and the database's
//! clock is the only clock that decides whether a lease has lapsed.

use tokio_postgres::{Client, Transaction};

use super::{PgStore, bigint, col, pg_error};
use crate::store::{Claim, Leases, StoreError};

async fn claim(c: &mut Client, game: String, node: String, ms: i64) -> Result<Claim, StoreError> {
    let won = c
        .query_opt(
            "UPDATE games SET owner = $2, fence = fence + 1,
                 lease_until = clock_timestamp() + $3 * interval '1 millisecond'
             WHERE id = $1 AND (owner IS NULL OR owner = $2 OR lease_until < clock_timestamp())
             RETURNING fence",
            &[&game, &node, &(ms as f64)],
        )
        .await
        .map_err(pg_error)?;
    if let Some(row) = won {
        return Ok(Claim::Ours(col::<i64>(&row, 0)?.unsigned_abs()));
    }
    let held = c
        .query_opt("SELECT owner FROM games WHERE id = $1", &[&game])
        .await
        .map_err(pg_error)?;
    match held {
        None => Err(StoreError::UnknownGame { game_id: game }),
        Some(row) => Ok(Claim::Held {
            node: col::<Option<String>>(&row, 0)?.unwrap_or_default(),
        }),
    }
}

async fn renew(
    c: &mut Client,
    node: String,
    games: Vec<(String, u64)>,
    ms: i64,
) -> Result<Vec<String>, StoreError> {
    let (ids, fences): (Vec<String>, Vec<i64>) =
        games.iter().map(|(id, f)| (id.clone(), bigint(*f))).unzip();
    let tx = c.transaction().await.map_err(pg_error)?;
    lock_in_order(&tx, &ids).await?;
    let kept = tx
        .query(
            "UPDATE games AS g SET lease_until = clock_timestamp() + $4 * interval '1 millisecond'
             FROM unnest($2::text[], $3::bigint[]) AS held(id, fence)
             WHERE g.id = held.id AND g.owner = $1 AND g.fence = held.fence
             RETURNING g.id",
            &[&node, &ids, &fences, &(ms as f64)],
        )
        .await
        .map_err(pg_error)?;
    let kept: Vec<String> = kept
        .iter()
        .map(|row| col::<String>(row, 0))
        .collect::<Result<_, _>>()?;
    tx.commit().await.map_err(pg_error)?;
    Ok(ids.into_iter().filter(|id| !kept.contains(id)).collect())
}

/// Locks the rows of `games` in id order, the order every batch of appends locks them
/// in (`games::append`), so a renewal and a commit never wait on each other in a circle.
async fn lock_in_order(tx: &Transaction<'_>, games: &[String]) -> Result<(), StoreError> {
    tx.query(
        "SELECT 1 FROM games WHERE id = ANY($1) ORDER BY id FOR UPDATE",
        &[&games],
    )
    .await
    .map_err(pg_error)?;
    Ok(())
}

async fn orphans(c: &mut Client, limit: i64) -> Result<Vec<String>, StoreError> {
    c.query(
        "SELECT id FROM games
         WHERE status = 'live' AND (owner IS NULL OR lease_until < clock_timestamp())
             AND id NOT IN (SELECT game_id FROM correspondence_deadlines
                 WHERE due_ms > (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
         ORDER BY created_at_ms, id LIMIT $1",
        &[&limit],
    )
    .await
    .map_err(pg_error)?
    .iter()
    .map(|row| col::<String>(row, 0))
    .collect()
}

async fn release(
    c: &mut Client,
    node: String,
    games: Vec<(String, u64)>,
) -> Result<(), StoreError> {
    let (ids, fences): (Vec<String>, Vec<i64>) =
        games.iter().map(|(id, f)| (id.clone(), bigint(*f))).unzip();
    let tx = c.transaction().await.map_err(pg_error)?;
    lock_in_order(&tx, &ids).await?;
    tx.execute(
        "UPDATE games AS g SET owner = NULL, lease_until = NULL
         FROM unnest($2::text[], $3::bigint[]) AS held(id, fence)
         WHERE g.id = held.id AND g.owner = $1 AND g.fence = held.fence",
        &[&node, &ids, &fences],
    )
    .await
    .map_err(pg_error)?;
    tx.commit().await.map_err(pg_error)
}

async fn claim_tournament(
    c: &mut Client,
    id: String,
    node: String,
    ms: i64,
) -> Result<Claim, StoreError> {
    let won = c
        .execute(
            "UPDATE tournaments SET owner = $2,
                 lease_until = clock_timestamp() + $3 * interval '1 millisecond'
             WHERE id = $1 AND (owner IS NULL OR owner = $2 OR lease_until < clock_timestamp())",
            &[&id, &node, &(ms as f64)],
        )
        .await
        .map_err(pg_error)?;
    if won == 1 {
        return Ok(Claim::Ours(0));
    }
    let held = c
        .query_opt("SELECT owner FROM tournaments WHERE id = $1", &[&id])
        .await
        .map_err(pg_error)?;
    match held {
        None => Err(StoreError::UnknownTournament { id }),
        Some(row) => Ok(Claim::Held {
            node: col::<Option<String>>(&row, 0)?.unwrap_or_default(),
        }),
    }
}

async fn orphan_tournaments(c: &mut Client, limit: i64) -> Result<Vec<String>, StoreError> {
    c.query(
        "SELECT id FROM tournaments
         WHERE stage <> 'finished' AND (owner IS NULL OR lease_until < clock_timestamp())
         ORDER BY created_at_ms, id LIMIT $1",
        &[&limit],
    )
    .await
    .map_err(pg_error)?
    .iter()
    .map(|row| col::<String>(row, 0))
    .collect()
}

impl Leases for PgStore {
    fn claim_tournament(&self, id: &str, node: &str, lease_ms: u64) -> Result<Claim, StoreError> {
        let (id, node, ms) = (id.to_owned(), node.to_owned(), bigint(lease_ms));
        self.connections
            .run(move |c| Box::pin(claim_tournament(c, id, node, ms)))
    }

    fn release_tournament(&self, id: &str, node: &str) -> Result<(), StoreError> {
        let (id, node) = (id.to_owned(), node.to_owned());
        self.connections.run(move |c| {
            Box::pin(async move {
                c.execute(
                    "UPDATE tournaments SET owner = NULL, lease_until = NULL
                     WHERE id = $1 AND owner = $2",
                    &[&id, &node],
                )
                .await
                .map_err(pg_error)?;
                Ok(())
            })
        })
    }

    fn orphan_tournaments(&self, limit: u32) -> Result<Vec<String>, StoreError> {
        let limit = i64::from(limit);
        self.connections
            .run(move |c| Box::pin(orphan_tournaments(c, limit)))
    }

    fn claim(&self, game: &str, node: &str, lease_ms: u64) -> Result<Claim, StoreError> {
        let (game, node, ms) = (game.to_owned(), node.to_owned(), bigint(lease_ms));
        self.connections
            .run(move |c| Box::pin(claim(c, game, node, ms)))
    }

    fn renew(
        &self,
        node: &str,
        games: &[(String, u64)],
        lease_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        let (node, games, ms) = (node.to_owned(), games.to_vec(), bigint(lease_ms));
        self.connections
            .run(move |c| Box::pin(renew(c, node, games, ms)))
    }

    fn orphans(&self, limit: u32) -> Result<Vec<String>, StoreError> {
        let limit = i64::from(limit);
        self.connections.run(move |c| Box::pin(orphans(c, limit)))
    }

    fn release(&self, node: &str, games: &[(String, u64)]) -> Result<(), StoreError> {
        if games.is_empty() {
            return Ok(());
        }
        let (node, games) = (node.to_owned(), games.to_vec());
        self.connections
            .run(move |c| Box::pin(release(c, node, games)))
    }
}
