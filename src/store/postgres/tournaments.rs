//! Tournaments and their numbered logs in PostgreSQL. An append locks the tournament's
//! row (`FOR UPDATE`) while it checks the next number, and `(tournament_id, seq)` is the
//! entries' primary key, so two nodes can never both write entry n.

use tokio_postgres::{Client, GenericClient, Row};

use super::{PgStore, bigint, col, pg_error};
use crate::store::{StoreError, TournamentEntry, TournamentRecord, TournamentStore};

fn record(row: &Row) -> Result<TournamentRecord, StoreError> {
    Ok(TournamentRecord {
        id: col(row, 0)?,
        name: col(row, 1)?,
        created_at_ms: col(row, 2)?,
        stage: col(row, 3)?,
    })
}

async fn insert_entry(
    tx: &impl GenericClient,
    id: &str,
    e: &TournamentEntry,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO tournament_entries (tournament_id, seq, at_ms, kind, payload)
         VALUES ($1, $2, $3, $4, $5)",
        &[&id, &bigint(e.seq), &e.at_ms, &e.kind, &e.payload],
    )
    .await
    .map_err(pg_error)?;
    Ok(())
}

async fn create(
    client: &mut Client,
    r: TournamentRecord,
    first: TournamentEntry,
) -> Result<(), StoreError> {
    if first.seq != 1 {
        return Err(StoreError::TournamentOutOfOrder {
            id: r.id,
            seq: first.seq,
            expected: 1,
        });
    }
    let tx = client.transaction().await.map_err(pg_error)?;
    let inserted = tx
        .execute(
            "INSERT INTO tournaments (id, name, created_at_ms, stage) VALUES ($1, $2, $3, $4)
             ON CONFLICT (id) DO NOTHING",
            &[&r.id, &r.name, &r.created_at_ms, &r.stage],
        )
        .await
        .map_err(pg_error)?;
    if inserted == 0 {
        return Err(StoreError::DuplicateTournament { id: r.id });
    }
    insert_entry(&tx, &r.id, &first).await?;
    tx.commit().await.map_err(pg_error)
}

async fn append(
    client: &mut Client,
    id: String,
    entries: Vec<TournamentEntry>,
    stage: String,
) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    if tx
        .query_opt("SELECT 1 FROM tournaments WHERE id = $1 FOR UPDATE", &[&id])
        .await
        .map_err(pg_error)?
        .is_none()
    {
        return Err(StoreError::UnknownTournament { id });
    }
    let row = tx
        .query_one(
            "SELECT max(seq) FROM tournament_entries WHERE tournament_id = $1",
            &[&id],
        )
        .await
        .map_err(pg_error)?;
    let next = col::<Option<i64>>(&row, 0)?.unwrap_or(0).unsigned_abs() + 1;
    for (expected, e) in (next..).zip(&entries) {
        if e.seq != expected {
            return Err(StoreError::TournamentOutOfOrder {
                id,
                seq: e.seq,
                expected,
            });
        }
        insert_entry(&tx, &id, e).await?;
    }
    tx.execute(
        "UPDATE tournaments SET stage = $2 WHERE id = $1",
        &[&id, &stage],
    )
    .await
    .map_err(pg_error)?;
    tx.commit().await.map_err(pg_error)
}

async fn list(client: &mut Client, limit: u32) -> Result<Vec<TournamentRecord>, StoreError> {
    let rows = client
        .query(
            "SELECT id, name, created_at_ms, stage FROM tournaments
             ORDER BY created_at_ms DESC, id DESC LIMIT $1",
            &[&i64::from(limit)],
        )
        .await
        .map_err(pg_error)?;
    rows.iter().map(record).collect()
}

async fn one(
    client: &mut Client,
    id: String,
) -> Result<Option<(TournamentRecord, Vec<TournamentEntry>)>, StoreError> {
    let Some(row) = client
        .query_opt(
            "SELECT id, name, created_at_ms, stage FROM tournaments WHERE id = $1",
            &[&id],
        )
        .await
        .map_err(pg_error)?
    else {
        return Ok(None);
    };
    let found = record(&row)?;
    let rows = client
        .query(
            "SELECT seq, at_ms, kind, payload FROM tournament_entries
             WHERE tournament_id = $1 ORDER BY seq",
            &[&id],
        )
        .await
        .map_err(pg_error)?;
    let entries = rows
        .iter()
        .map(|row| {
            Ok(TournamentEntry {
                seq: col::<i64>(row, 0)?.unsigned_abs(),
                at_ms: col(row, 1)?,
                kind: col(row, 2)?,
                payload: col(row, 3)?,
            })
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(Some((found, entries)))
}

async fn unfinished(client: &mut Client) -> Result<Vec<String>, StoreError> {
    let rows = client
        .query(
            "SELECT id FROM tournaments WHERE stage <> 'finished' ORDER BY created_at_ms, id",
            &[],
        )
        .await
        .map_err(pg_error)?;
    rows.iter().map(|row| col(row, 0)).collect()
}

impl TournamentStore for PgStore {
    fn create_tournament(
        &self,
        record: &TournamentRecord,
        first: &TournamentEntry,
    ) -> Result<(), StoreError> {
        let (record, first) = (record.clone(), first.clone());
        self.connections
            .run(move |c| Box::pin(create(c, record, first)))
    }

    fn append_tournament(
        &self,
        id: &str,
        entries: &[TournamentEntry],
        stage: &str,
    ) -> Result<(), StoreError> {
        let (id, entries, stage) = (id.to_owned(), entries.to_vec(), stage.to_owned());
        self.connections
            .run(move |c| Box::pin(append(c, id, entries, stage)))
    }

    fn tournaments(&self, limit: u32) -> Result<Vec<TournamentRecord>, StoreError> {
        self.connections.run(move |c| Box::pin(list(c, limit)))
    }

    fn tournament(
        &self,
        id: &str,
    ) -> Result<Option<(TournamentRecord, Vec<TournamentEntry>)>, StoreError> {
        let id = id.to_owned();
        self.connections.run(move |c| Box::pin(one(c, id)))
    }

    fn unfinished_tournaments(&self) -> Result<Vec<String>, StoreError> {
        self.connections.run(|c| Box::pin(unfinished(c)))
    }
}
