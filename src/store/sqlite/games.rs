//! The SQLite store's [`GameStore`]: games' rows and events, where a live game's latest
//! events and move count may still be in the move log rather than the file.

use std::ops::Range;

use rusqlite::types::{Type, Value};
use rusqlite::{Connection, OptionalExtension, Row};

use super::SqliteStore;
use crate::store::{
    EventRecord, GameQuery, GameRecord, GameStatus, GameStore, StoreError,
    game_columns_before_count,
};

/// A game's move count as this store keeps it: on the game's last event that carries
/// one ([`Append::MoveCount`] is folded into the event before it, so a move writes its
/// event's page and not also the game's row), else in the game's row (a game without
/// counted events, or one stored before events carried counts). A finished game's count
/// is copied into its row when it ends.
pub(super) const LAST_MOVE_COUNT: &str = "coalesce((SELECT e.move_count FROM events e \
     WHERE e.game_id = games.id AND e.move_count IS NOT NULL ORDER BY e.seq DESC LIMIT 1), \
     games.move_count)";

/// A game's move count, live or finished, as an expression over `games`.
pub(super) fn move_count_column() -> String {
    format!("CASE WHEN games.status = 'live' THEN {LAST_MOVE_COUNT} ELSE games.move_count END")
}

/// [`GAME_COLUMNS`] for queries that may return live games: their count as above.
fn live_game_columns() -> String {
    format!("{}, {}", game_columns_before_count!(), move_count_column())
}

/// Whether the game has a row, for telling an unknown game from a refused change.
pub(super) fn game_exists(
    conn: &Connection,
    game_id: &str,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<bool, StoreError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM games WHERE id = ?1")
        .map_err(db)?
        .query_row([game_id], |_| Ok(()))
        .optional()
        .map_err(db)?
        .is_some())
}

impl SqliteStore {
    fn read_events(
        &self,
        conn: &Connection,
        id: &str,
        seqs: Range<u64>,
    ) -> Result<Vec<EventRecord>, StoreError> {
        let db = self.db_err();
        // Taken before the file is read: an event copied in between is then in both,
        // never in neither.
        let logged = match &self.log {
            Some(log) => log.events(id, seqs.clone()).map_err(self.log_err())?,
            None => Vec::new(),
        };
        let mut stmt = conn
            .prepare_cached(
                "SELECT game_id, seq, kind, payload, at_ms FROM events
                 WHERE game_id = ?1 AND seq >= ?2 AND seq < ?3 ORDER BY seq",
            )
            .map_err(&db)?;
        let bound = |seq: u64| i64::try_from(seq).unwrap_or(i64::MAX);
        let rows = stmt
            .query_map((id, bound(seqs.start), bound(seqs.end)), |row| {
                Ok(EventRecord {
                    game_id: row.get(0)?,
                    seq: u64::try_from(row.get::<_, i64>(1)?).map_err(|err| {
                        rusqlite::Error::FromSqlConversionFailure(1, Type::Integer, Box::new(err))
                    })?,
                    kind: row.get(2)?,
                    payload: row.get(3)?,
                    at_ms: row.get(4)?,
                })
            })
            .map_err(&db)?;
        let mut events: Vec<EventRecord> =
            rows.map(|row| row.map_err(&db)).collect::<Result<_, _>>()?;
        let stored = events.last().map_or(0, |e| e.seq);
        events.extend(logged.into_iter().filter(|e| e.seq > stored));
        Ok(events)
    }

    fn game_from_row(&self, row: &Row<'_>) -> Result<GameRecord, StoreError> {
        let db = self.db_err();
        let id: String = row.get(0).map_err(&db)?;
        let status_text: String = row.get(7).map_err(&db)?;
        let status = GameStatus::parse(&status_text).ok_or_else(|| StoreError::BadRow {
            path: self.path.clone(),
            detail: format!("game {id} has the unknown status {status_text:?}"),
        })?;
        Ok(GameRecord {
            created_at_ms: row.get(1).map_err(&db)?,
            settings: row.get(2).map_err(&db)?,
            black: row.get(3).map_err(&db)?,
            white: row.get(4).map_err(&db)?,
            black_name: row.get(5).map_err(&db)?,
            white_name: row.get(6).map_err(&db)?,
            status,
            result: row.get(8).map_err(&db)?,
            ended_at_ms: row.get(9).map_err(&db)?,
            move_count: row.get(10).map_err(&db)?,
            id,
        })
    }

    pub(super) fn query_games(
        &self,
        conn: &Connection,
        sql: &str,
        params: &[Value],
    ) -> Result<Vec<GameRecord>, StoreError> {
        let db = self.db_err();
        let mut stmt = conn.prepare_cached(sql).map_err(&db)?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(&db)?;
        let mut games = Vec::new();
        while let Some(row) = rows.next().map_err(&db)? {
            games.push(self.game_from_row(row)?);
        }
        // A live game's count is on its last counted event, which may be logged still.
        if let Some(log) = &self.log {
            for game in games.iter_mut().filter(|g| g.status == GameStatus::Live) {
                if let Some(count) = log.last_move_count(&game.id).map_err(self.log_err())? {
                    game.move_count = count;
                }
            }
        }
        Ok(games)
    }
}

impl GameStore for SqliteStore {
    fn unfinished_games(&self) -> Result<Vec<(GameRecord, Vec<EventRecord>)>, StoreError> {
        let mut conn = self.lock()?;
        // One read transaction, so every game's events match its row.
        let tx = conn.transaction().map_err(self.db_err())?;
        let sql = format!(
            "SELECT {} FROM games WHERE status = 'live'
                 AND id NOT IN (SELECT game_id FROM correspondence_deadlines)
             ORDER BY created_at_ms, id",
            live_game_columns()
        );
        let games = self.query_games(&tx, &sql, &[])?;
        let mut out = Vec::with_capacity(games.len());
        for game in games {
            let events = self.read_events(&tx, &game.id, 1..u64::MAX)?;
            out.push((game, events));
        }
        tx.commit().map_err(self.db_err())?;
        Ok(out)
    }

    fn game(&self, id: &str) -> Result<Option<GameRecord>, StoreError> {
        let conn = self.lock()?;
        let sql = format!("SELECT {} FROM games WHERE id = ?1", live_game_columns());
        let mut games = self.query_games(&conn, &sql, &[Value::Text(id.to_owned())])?;
        Ok(games.pop())
    }

    fn events_in(&self, id: &str, seqs: Range<u64>) -> Result<Vec<EventRecord>, StoreError> {
        let conn = self.lock()?;
        self.read_events(&conn, id, seqs)
    }

    fn list_games(&self, query: &GameQuery) -> Result<Vec<GameRecord>, StoreError> {
        let limit = query.effective_limit();
        if limit == 0 {
            return Ok(Vec::new());
        }
        // The SQL is assembled from fixed fragments only (values are bound), so each of
        // the eight shapes is prepared once and served from the statement cache, and each
        // can use its index instead of `?n IS NULL OR …` filters that defeat them.
        let mut conditions = Vec::new();
        let mut params = Vec::new();
        if let Some(player) = &query.player {
            params.push(Value::Text(player.clone()));
            conditions.push(format!("(black = ?{n} OR white = ?{n})", n = params.len()));
        }
        if let Some(status) = query.status {
            params.push(Value::Text(status.as_str().to_owned()));
            conditions.push(format!("status = ?{}", params.len()));
        }
        if let Some(before_ms) = query.before_ms {
            params.push(Value::Integer(before_ms));
            let ms = params.len();
            // An empty id sorts before every id, so without `before_id` the whole
            // millisecond `before_ms` is excluded.
            params.push(Value::Text(query.before_id.clone().unwrap_or_default()));
            conditions.push(format!("(created_at_ms, id) < (?{ms}, ?{})", params.len()));
        }
        params.push(Value::Integer(i64::from(limit)));
        let filter = if conditions.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", conditions.join(" AND "))
        };
        let sql = format!(
            "SELECT {} FROM games {filter}
             ORDER BY created_at_ms DESC, id DESC LIMIT ?{}",
            live_game_columns(),
            params.len()
        );
        let conn = self.lock()?;
        self.query_games(&conn, &sql, &params)
    }
}
