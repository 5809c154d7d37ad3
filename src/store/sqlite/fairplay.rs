//! Fair play in SQLite: blocks, reports, spectators' chat and forfeit losses, as plain
//! rows apart from the game log.

use rusqlite::OptionalExtension;
use rusqlite::types::Value;

use super::SqliteStore;
use crate::store::{
    EventRecord, FairPlayStore, GAME_COLUMNS, GameRecord, KibitzRecord, NewReport, StoreError,
    StoredReport,
};

impl FairPlayStore for SqliteStore {
    fn set_block(
        &self,
        blocker: &str,
        blocked: &str,
        on: bool,
        at_ms: i64,
    ) -> Result<(), StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let sql = match on {
            true => {
                "INSERT INTO blocks (blocker, blocked, at_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT DO NOTHING"
            }
            false => "DELETE FROM blocks WHERE blocker = ?1 AND blocked = ?2 AND ?3 = ?3",
        };
        conn.prepare_cached(sql)
            .map_err(&db)?
            .execute(rusqlite::params![blocker, blocked, at_ms])
            .map_err(&db)?;
        Ok(())
    }

    fn blocks(&self) -> Result<Vec<(String, String)>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached("SELECT blocker, blocked FROM blocks ORDER BY blocker, blocked")
            .map_err(&db)?;
        let rows = stmt
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }

    fn file_report(&self, r: &NewReport) -> Result<u64, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        // SQLite integers are i64; a seq never comes near 2^63.
        let (from, to) = r
            .seqs
            .map_or((None, None), |(a, b)| (Some(a as i64), Some(b as i64)));
        conn.prepare_cached(
            "INSERT INTO reports (reporter, user, game_id, from_seq, to_seq, reason, at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .map_err(&db)?
        .execute(rusqlite::params![
            r.reporter, r.user, r.game_id, from, to, r.reason, r.at_ms
        ])
        .map_err(&db)?;
        Ok(conn.last_insert_rowid() as u64)
    }

    fn open_reports(
        &self,
        reporter: Option<&str>,
        limit: u32,
    ) -> Result<Vec<StoredReport>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, reporter, user, game_id, from_seq, to_seq, reason, at_ms
                 FROM reports WHERE open = 1 AND (?1 IS NULL OR reporter = ?1)
                 ORDER BY id LIMIT ?2",
            )
            .map_err(&db)?;
        let rows = stmt
            .query_map(rusqlite::params![reporter, limit], |row| {
                let from: Option<i64> = row.get(4)?;
                let to: Option<i64> = row.get(5)?;
                let id: i64 = row.get(0)?;
                Ok(StoredReport {
                    id: id as u64,
                    report: NewReport {
                        reporter: row.get(1)?,
                        user: row.get(2)?,
                        game_id: row.get(3)?,
                        seqs: from.zip(to).map(|(a, b)| (a as u64, b as u64)),
                        reason: row.get(6)?,
                        at_ms: row.get(7)?,
                    },
                })
            })
            .map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }

    fn forfeit_losses(
        &self,
        player: &str,
        limit: u32,
    ) -> Result<Vec<(GameRecord, Vec<EventRecord>)>, StoreError> {
        let mut conn = self.lock()?;
        // One read transaction, so each game's events match its row.
        let tx = conn.transaction().map_err(self.db_err())?;
        let sql = format!(
            "SELECT {GAME_COLUMNS} FROM games
             WHERE status = 'finished'
               AND ((black = ?1 AND result IN ('W+F', 'W+T')) OR (white = ?1 AND result IN ('B+F', 'B+T')))
             ORDER BY ended_at_ms DESC, id DESC LIMIT ?2"
        );
        let games = self.query_games(
            &tx,
            &sql,
            &[
                Value::Text(player.to_owned()),
                Value::Integer(i64::from(limit)),
            ],
        )?;
        let db = self.db_err();
        let mut out = Vec::with_capacity(games.len());
        {
            let mut stmt = tx
                .prepare_cached(
                    "SELECT game_id, seq, kind, payload, at_ms FROM events
                     WHERE game_id = ?1 AND kind IN ('presence', 'warned', 'ruled', 'game_ended')
                     ORDER BY seq",
                )
                .map_err(&db)?;
            for game in games {
                let events = stmt
                    .query_map([&game.id], |row| {
                        Ok(EventRecord {
                            game_id: row.get(0)?,
                            seq: row.get::<_, i64>(1)?.max(0) as u64,
                            kind: row.get(2)?,
                            payload: row.get(3)?,
                            at_ms: row.get(4)?,
                        })
                    })
                    .map_err(&db)?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(&db)?;
                out.push((game, events));
            }
        }
        tx.commit().map_err(&db)?;
        Ok(out)
    }

    fn kibitz(&self, game_id: &str) -> Result<Vec<KibitzRecord>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached(
                "SELECT game_id, at_ms, user_id, name, text FROM kibitz
                 WHERE game_id = ?1 ORDER BY at_ms, rowid",
            )
            .map_err(&db)?;
        let rows = stmt
            .query_map([game_id], |row| {
                Ok(KibitzRecord {
                    game_id: row.get(0)?,
                    at_ms: row.get(1)?,
                    user_id: row.get(2)?,
                    name: row.get(3)?,
                    text: row.get(4)?,
                })
            })
            .map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }

    fn close_report(&self, id: u64) -> Result<bool, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let open = conn
            .prepare_cached("UPDATE reports SET open = 0 WHERE id = ?1 AND open = 1 RETURNING id")
            .map_err(&db)?
            .query_row([id as i64], |_| Ok(()))
            .optional()
            .map_err(&db)?;
        Ok(open.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SyncMode;

    fn store() -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("t.sqlite"), SyncMode::Full).expect("open");
        (dir, store)
    }

    #[test]
    fn blocks_are_set_once_and_cleared() {
        let (_dir, s) = store();
        s.set_block("a", "b", true, 1).unwrap();
        s.set_block("a", "b", true, 2).unwrap();
        s.set_block("c", "a", true, 3).unwrap();
        assert_eq!(
            s.blocks().unwrap(),
            [("a".into(), "b".into()), ("c".into(), "a".into())]
        );
        s.set_block("a", "b", false, 4).unwrap();
        assert_eq!(s.blocks().unwrap(), [("c".into(), "a".into())]);
    }

    #[test]
    fn reports_are_numbered_listed_while_open_and_closed_once() {
        let (_dir, s) = store();
        let report = |reporter: &str| NewReport {
            reporter: reporter.into(),
            user: Some("x".into()),
            game_id: Some("g".into()),
            seqs: Some((2, 5)),
            reason: "why".into(),
            at_ms: 9,
        };
        let first = s.file_report(&report("a")).unwrap();
        let second = s.file_report(&report("b")).unwrap();
        assert!(second > first);
        let open = s.open_reports(None, 10).unwrap();
        assert_eq!(open.len(), 2);
        assert_eq!(open[0].report, report("a"));
        assert_eq!(s.open_reports(Some("b"), 10).unwrap()[0].id, second);
        assert!(s.close_report(first).unwrap());
        assert!(!s.close_report(first).unwrap());
        assert_eq!(s.open_reports(None, 10).unwrap().len(), 1);
    }
}
