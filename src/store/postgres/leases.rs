//! [`Leases`] in PostgreSQL: the owner, the lease's end and the fence are columns of the
//! game's row, so a claim is one `UPDATE` that only one node can win, and the database's
//! clock is the only clock that decides whether a lease has lapsed. A tournament's
//! director and a job one node does for all (`singleton_leases`) are leased the same
//! way, without a fence.

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
             AND id NOT IN (SELECT game_id FROM correspondence_deadlines)
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

/// A lease without a fence, kept in its row's `owner` and `lease_until`: a tournament's
/// director, or a job one node does for all. Claimed and given up the same way; only
/// the table and the column naming the row differ.
#[derive(Clone, Copy)]
enum Unfenced {
    Tournament,
    Singleton,
}

impl Unfenced {
    /// The table, and the column that names a row in it.
    fn row(self) -> (&'static str, &'static str) {
        match self {
            Unfenced::Tournament => ("tournaments", "id"),
            Unfenced::Singleton => ("singleton_leases", "name"),
        }
    }

    /// Takes (or extends) the lease on row `key` for `node` if nobody else holds it
    /// unexpired: one `UPDATE` that only one node can win, as a game's claim. None if
    /// there is no such row.
    async fn claim(
        self,
        c: &Client,
        key: &str,
        node: &str,
        ms: i64,
    ) -> Result<Option<Claim>, StoreError> {
        let (table, column) = self.row();
        let won = c
            .execute(
                &format!(
                    "UPDATE {table} SET owner = $2,
                         lease_until = clock_timestamp() + $3 * interval '1 millisecond'
                     WHERE {column} = $1
                         AND (owner IS NULL OR owner = $2 OR lease_until < clock_timestamp())"
                ),
                &[&key, &node, &(ms as f64)],
            )
            .await
            .map_err(pg_error)?;
        if won == 1 {
            return Ok(Some(Claim::Ours(0)));
        }
        let held = c
            .query_opt(
                &format!("SELECT owner FROM {table} WHERE {column} = $1"),
                &[&key],
            )
            .await
            .map_err(pg_error)?;
        held.map(|row| {
            Ok(Claim::Held {
                node: col::<Option<String>>(&row, 0)?.unwrap_or_default(),
            })
        })
        .transpose()
    }

    /// Gives up `node`'s lease on row `key`, if it holds it.
    async fn release(self, c: &Client, key: &str, node: &str) -> Result<(), StoreError> {
        let (table, column) = self.row();
        c.execute(
            &format!(
                "UPDATE {table} SET owner = NULL, lease_until = NULL
                 WHERE {column} = $1 AND owner = $2"
            ),
            &[&key, &node],
        )
        .await
        .map_err(pg_error)?;
        Ok(())
    }
}

/// A job's lease, its row made by the first claim of its name.
async fn claim_singleton(c: &Client, name: &str, node: &str, ms: i64) -> Result<Claim, StoreError> {
    if let Some(claim) = Unfenced::Singleton.claim(c, name, node, ms).await? {
        return Ok(claim);
    }
    c.execute(
        "INSERT INTO singleton_leases (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
        &[&name],
    )
    .await
    .map_err(pg_error)?;
    // Rows are never deleted: the one just made (or made by another node meanwhile).
    Unfenced::Singleton
        .claim(c, name, node, ms)
        .await?
        .ok_or_else(|| StoreError::Postgres {
            detail: format!("the lease row of `{name}` is missing right after its insert"),
        })
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
        self.connections.run(move |c| {
            Box::pin(async move {
                let claim = Unfenced::Tournament.claim(c, &id, &node, ms).await?;
                claim.ok_or(StoreError::UnknownTournament { id })
            })
        })
    }

    fn release_tournament(&self, id: &str, node: &str) -> Result<(), StoreError> {
        let (id, node) = (id.to_owned(), node.to_owned());
        self.connections.run(move |c| {
            Box::pin(async move { Unfenced::Tournament.release(c, &id, &node).await })
        })
    }

    fn claim_singleton(&self, name: &str, node: &str, lease_ms: u64) -> Result<Claim, StoreError> {
        let (name, node, ms) = (name.to_owned(), node.to_owned(), bigint(lease_ms));
        self.connections
            .run(move |c| Box::pin(async move { claim_singleton(c, &name, &node, ms).await }))
    }

    fn release_singleton(&self, name: &str, node: &str) -> Result<(), StoreError> {
        let (name, node) = (name.to_owned(), node.to_owned());
        self.connections.run(move |c| {
            Box::pin(async move { Unfenced::Singleton.release(c, &name, &node).await })
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
