//! The SQLite store's [`TournamentStore`]: a row per tournament and its numbered log.

use rusqlite::{OptionalExtension, Row};

use super::SqliteStore;
use crate::store::{StoreError, TournamentEntry, TournamentRecord, TournamentStore};

const RECORD_COLUMNS: &str = "id, name, created_at_ms, stage";

fn record(row: &Row<'_>) -> rusqlite::Result<TournamentRecord> {
    Ok(TournamentRecord {
        id: row.get(0)?,
        name: row.get(1)?,
        created_at_ms: row.get(2)?,
        stage: row.get(3)?,
    })
}

fn insert_entry(
    tx: &rusqlite::Transaction<'_>,
    id: &str,
    e: &TournamentEntry,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO tournament_entries (tournament_id, seq, at_ms, kind, payload)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(rusqlite::params![
        id,
        e.seq as i64,
        e.at_ms,
        e.kind,
        e.payload
    ])?;
    Ok(())
}

impl TournamentStore for SqliteStore {
    fn create_tournament(
        &self,
        r: &TournamentRecord,
        first: &TournamentEntry,
    ) -> Result<(), StoreError> {
        let db = self.db_err();
        self.in_transaction(|tx| {
            let inserted = tx
                .execute(
                    "INSERT INTO tournaments (id, name, created_at_ms, stage)
                     VALUES (?1, ?2, ?3, ?4) ON CONFLICT (id) DO NOTHING",
                    rusqlite::params![r.id, r.name, r.created_at_ms, r.stage],
                )
                .map_err(&db)?;
            if inserted == 0 {
                return Err(StoreError::DuplicateTournament { id: r.id.clone() });
            }
            if first.seq != 1 {
                return Err(StoreError::TournamentOutOfOrder {
                    id: r.id.clone(),
                    seq: first.seq,
                    expected: 1,
                });
            }
            insert_entry(tx, &r.id, first).map_err(&db)
        })
    }

    fn append_tournament(
        &self,
        id: &str,
        entries: &[TournamentEntry],
        stage: &str,
    ) -> Result<(), StoreError> {
        let db = self.db_err();
        self.in_transaction(|tx| {
            let last: Option<i64> = tx
                .query_row(
                    "SELECT (SELECT max(seq) FROM tournament_entries WHERE tournament_id = ?1)
                     FROM tournaments WHERE id = ?1",
                    [id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(&db)?
                .ok_or_else(|| StoreError::UnknownTournament { id: id.to_string() })?;
            let next = last.unwrap_or(0).unsigned_abs() + 1;
            for (expected, e) in (next..).zip(entries) {
                if e.seq != expected {
                    return Err(StoreError::TournamentOutOfOrder {
                        id: id.to_string(),
                        seq: e.seq,
                        expected,
                    });
                }
                insert_entry(tx, id, e).map_err(&db)?;
            }
            tx.execute(
                "UPDATE tournaments SET stage = ?2 WHERE id = ?1",
                rusqlite::params![id, stage],
            )
            .map_err(&db)?;
            Ok(())
        })
    }

    fn tournaments(&self, limit: u32) -> Result<Vec<TournamentRecord>, StoreError> {
        let conn = self.lock()?;
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {RECORD_COLUMNS} FROM tournaments
                 ORDER BY created_at_ms DESC, id DESC LIMIT ?1"
            ))
            .map_err(self.db_err())?;
        let rows = stmt.query_map([limit], record).map_err(self.db_err())?;
        rows.collect::<Result<_, _>>().map_err(self.db_err())
    }

    fn tournament(
        &self,
        id: &str,
    ) -> Result<Option<(TournamentRecord, Vec<TournamentEntry>)>, StoreError> {
        let conn = self.lock()?;
        let Some(found) = conn
            .prepare_cached(&format!(
                "SELECT {RECORD_COLUMNS} FROM tournaments WHERE id = ?1"
            ))
            .map_err(self.db_err())?
            .query_row([id], record)
            .optional()
            .map_err(self.db_err())?
        else {
            return Ok(None);
        };
        let mut stmt = conn
            .prepare_cached(
                "SELECT seq, at_ms, kind, payload FROM tournament_entries
                 WHERE tournament_id = ?1 ORDER BY seq",
            )
            .map_err(self.db_err())?;
        let rows = stmt
            .query_map([id], |row| {
                Ok(TournamentEntry {
                    seq: row.get::<_, i64>(0)?.unsigned_abs(),
                    at_ms: row.get(1)?,
                    kind: row.get(2)?,
                    payload: row.get(3)?,
                })
            })
            .map_err(self.db_err())?;
        let entries = rows.collect::<Result<_, _>>().map_err(self.db_err())?;
        Ok(Some((found, entries)))
    }

    fn unfinished_tournaments(&self) -> Result<Vec<String>, StoreError> {
        let conn = self.lock()?;
        let mut stmt = conn
            .prepare_cached(
                "SELECT id FROM tournaments WHERE stage <> 'finished'
                 ORDER BY created_at_ms, id",
            )
            .map_err(self.db_err())?;
        let rows = stmt
            .query_map([], |row| row.get(0))
            .map_err(self.db_err())?;
        rows.collect::<Result<_, _>>().map_err(self.db_err())
    }
}
