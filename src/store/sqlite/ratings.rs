//! Ratings in SQLite: which games are rated and the order their ratings were applied in
//! (`rated_games`), the change each made (`rating_changes`), and every player's
//! standings (`ratings`). Plain rows: the rating service computes them, this file only
//! writes and reads them.

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior};

use super::SqliteStore;
use super::games::game_exists;
use crate::store::ratings::rated_games_sql;
use crate::store::{
    GAME_COLUMNS, RatedGames, RatingChangeRow, RatingRecord, RatingRow, RatingStore, StoreError,
};

/// Marks a game rated (in its creating batch).
pub(super) fn mark_rated(
    tx: &Connection,
    game_id: &str,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<(), StoreError> {
    if !game_exists(tx, game_id, db)? {
        return Err(StoreError::UnknownGame {
            game_id: game_id.to_owned(),
        });
    }
    tx.prepare_cached("INSERT INTO rated_games (game_id) VALUES (?1) ON CONFLICT DO NOTHING")
        .map_err(db)?
        .execute([game_id])
        .map_err(db)?;
    Ok(())
}

/// Writes one game's record as the next applied.
fn record(
    tx: &Connection,
    record: &RatingRecord,
    after: u64,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<(), StoreError> {
    let pending = tx
        .prepare_cached("SELECT 1 FROM rated_games WHERE game_id = ?1 AND applied IS NULL")
        .map_err(db)?
        .query_row([&record.game_id], |_| Ok(()))
        .optional()
        .map_err(db)?
        .is_some();
    if !pending {
        return Err(StoreError::UnknownGame {
            game_id: record.game_id.clone(),
        });
    }
    let applied: i64 = tx
        .prepare_cached("SELECT coalesce(max(applied), 0) FROM rated_games")
        .map_err(db)?
        .query_row([], |row| row.get(0))
        .map_err(db)?;
    if applied.unsigned_abs() != after {
        return Err(StoreError::RatingsMoved {
            applied: applied.unsigned_abs(),
            after,
        });
    }
    tx.prepare_cached("UPDATE rated_games SET applied = ?2 WHERE game_id = ?1")
        .map_err(db)?
        .execute(rusqlite::params![record.game_id, after as i64 + 1])
        .map_err(db)?;
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO rating_changes (game_id, pool, color, player, opponent, at_ms,
                 rating_before, deviation_before, volatility_before, rating, deviation, volatility)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )
        .map_err(db)?;
    for c in &record.changes {
        insert
            .execute(rusqlite::params![
                c.game_id,
                c.pool,
                c.color,
                c.player,
                c.opponent,
                c.at_ms,
                c.before[0],
                c.before[1],
                c.before[2],
                c.after[0],
                c.after[1],
                c.after[2],
            ])
            .map_err(db)?;
    }
    let mut upsert = tx
        .prepare_cached(
            "INSERT INTO ratings (player, pool, rating, deviation, volatility, games, won, lost,
                 last_game_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (player, pool) DO UPDATE SET rating = ?3, deviation = ?4,
                 volatility = ?5, games = ?6, won = ?7, lost = ?8, last_game_ms = ?9",
        )
        .map_err(db)?;
    for s in &record.standings {
        upsert
            .execute(rusqlite::params![
                s.player,
                s.pool,
                s.rating,
                s.deviation,
                s.volatility,
                s.games,
                s.won,
                s.lost,
                s.last_game_ms,
            ])
            .map_err(db)?;
    }
    Ok(())
}

/// Forgets every applied game, change and standing (the first step of a rebuild), and
/// the rebuilds owed up to mark `settled`.
fn clear(
    tx: &Connection,
    settled: i64,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<(), StoreError> {
    tx.execute_batch(
        "DELETE FROM rating_changes; DELETE FROM ratings; UPDATE rated_games SET applied = NULL;",
    )
    .map_err(db)?;
    tx.prepare_cached("DELETE FROM ratings_owed WHERE id <= ?1")
        .map_err(db)?
        .execute([settled])
        .map_err(db)?;
    Ok(())
}

/// A rated game's result changed after it ended: the ratings owe a rebuild (nothing for
/// an unrated game). Each change leaves its own mark, so a rebuild that read the games
/// before it cannot settle it.
pub(super) fn owe_rebuild(
    tx: &Connection,
    game_id: &str,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO ratings_owed (game_id) SELECT game_id FROM rated_games WHERE game_id = ?1",
    )
    .map_err(db)?
    .execute([game_id])
    .map_err(db)?;
    Ok(())
}

/// The latest mark of a rebuild owed, 0 when none is.
fn owed(conn: &Connection, db: &dyn Fn(rusqlite::Error) -> StoreError) -> Result<i64, StoreError> {
    conn.prepare_cached("SELECT coalesce(max(id), 0) FROM ratings_owed")
        .map_err(db)?
        .query_row([], |row| row.get(0))
        .map_err(db)
}

const RATING_COLUMNS: &str =
    "player, pool, rating, deviation, volatility, games, won, lost, last_game_ms";

fn rating_row(row: &Row<'_>) -> rusqlite::Result<RatingRow> {
    Ok(RatingRow {
        player: row.get(0)?,
        pool: row.get(1)?,
        rating: row.get(2)?,
        deviation: row.get(3)?,
        volatility: row.get(4)?,
        games: row.get(5)?,
        won: row.get(6)?,
        lost: row.get(7)?,
        last_game_ms: row.get(8)?,
    })
}

fn player_ratings(
    conn: &Connection,
    player: &str,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<Vec<RatingRow>, StoreError> {
    let sql = format!("SELECT {RATING_COLUMNS} FROM ratings WHERE player = ?1 ORDER BY pool");
    let mut stmt = conn.prepare_cached(&sql).map_err(db)?;
    let rows = stmt.query_map([player], rating_row).map_err(db)?;
    rows.map(|r| r.map_err(db)).collect()
}

fn leaderboard(
    conn: &Connection,
    pool: &str,
    limit: u32,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<Vec<RatingRow>, StoreError> {
    let sql = format!(
        "SELECT {RATING_COLUMNS} FROM ratings WHERE pool = ?1
         ORDER BY rating DESC, player LIMIT ?2"
    );
    let mut stmt = conn.prepare_cached(&sql).map_err(db)?;
    let rows = stmt
        .query_map(rusqlite::params![pool, limit], rating_row)
        .map_err(db)?;
    rows.map(|r| r.map_err(db)).collect()
}

fn rating_history(
    conn: &Connection,
    player: &str,
    limit: u32,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<Vec<RatingChangeRow>, StoreError> {
    // The latest `limit` by order of application, returned oldest first.
    let mut stmt = conn
        .prepare_cached(
            "SELECT c.game_id, c.pool, c.color, c.player, c.opponent, c.at_ms,
                    c.rating_before, c.deviation_before, c.volatility_before,
                    c.rating, c.deviation, c.volatility
             FROM rating_changes c JOIN rated_games r ON r.game_id = c.game_id
             WHERE c.player = ?1 ORDER BY r.applied DESC, c.pool LIMIT ?2",
        )
        .map_err(db)?;
    let rows = stmt
        .query_map(rusqlite::params![player, limit], |row| {
            Ok(RatingChangeRow {
                game_id: row.get(0)?,
                pool: row.get(1)?,
                color: row.get(2)?,
                player: row.get(3)?,
                opponent: row.get(4)?,
                at_ms: row.get(5)?,
                before: [row.get(6)?, row.get(7)?, row.get(8)?],
                after: [row.get(9)?, row.get(10)?, row.get(11)?],
            })
        })
        .map_err(db)?;
    let mut history = rows.map(|r| r.map_err(db)).collect::<Result<Vec<_>, _>>()?;
    history.reverse();
    Ok(history)
}

fn player_name(
    conn: &Connection,
    player: &str,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<Option<String>, StoreError> {
    conn.prepare_cached(
        "SELECT COALESCE(
             (SELECT display_name FROM users WHERE id = ?1),
             (SELECT CASE WHEN black = ?1 THEN black_name ELSE white_name END FROM games
              WHERE black = ?1 OR white = ?1 ORDER BY created_at_ms DESC, id DESC LIMIT 1))",
    )
    .map_err(db)?
    .query_row([player], |row| row.get(0))
    .map_err(db)
}

impl RatingStore for SqliteStore {
    fn rated_games(&self) -> Result<RatedGames, StoreError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction().map_err(self.db_err())?;
        let (applied, pending) = rated_games_sql(GAME_COLUMNS);
        let games = RatedGames {
            applied: self.query_games(&tx, &applied, &[])?,
            pending: self.query_games(&tx, &pending, &[])?,
        };
        tx.commit().map_err(self.db_err())?;
        Ok(games)
    }

    fn record_rating(&self, record: &RatingRecord, after: u64) -> Result<(), StoreError> {
        let mut conn = self.lock()?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.db_err())?;
        self::record(&tx, record, after, &self.db_err())?;
        tx.commit().map_err(self.db_err())
    }

    fn ratings_owed(&self) -> Result<i64, StoreError> {
        owed(&*self.lock()?, &self.db_err())
    }

    fn replace_ratings(&self, records: &[RatingRecord], settled: i64) -> Result<(), StoreError> {
        let mut conn = self.lock()?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.db_err())?;
        let db = self.db_err();
        clear(&tx, settled, &db)?;
        for (after, record) in (0..).zip(records) {
            self::record(&tx, record, after, &db)?;
        }
        tx.commit().map_err(self.db_err())
    }

    fn player_ratings(&self, player: &str) -> Result<Vec<RatingRow>, StoreError> {
        player_ratings(&*self.lock()?, player, &self.db_err())
    }

    fn rating_history(&self, player: &str, limit: u32) -> Result<Vec<RatingChangeRow>, StoreError> {
        rating_history(&*self.lock()?, player, limit, &self.db_err())
    }

    fn leaderboard(&self, pool: &str, limit: u32) -> Result<Vec<RatingRow>, StoreError> {
        leaderboard(&*self.lock()?, pool, limit, &self.db_err())
    }

    fn player_name(&self, player: &str) -> Result<Option<String>, StoreError> {
        player_name(&*self.lock()?, player, &self.db_err())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Role;
    use crate::store::{
        AccountStore, Append, EventLog, GameRecord, GameStatus, Origin, SqliteStore, SyncMode,
        UserRecord,
    };

    fn store() -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("t.db"), SyncMode::Normal).expect("open");
        (dir, store)
    }

    fn game(id: &str, at: i64, black: &str, white: &str) -> GameRecord {
        GameRecord {
            id: id.into(),
            created_at_ms: at,
            settings: "{}".into(),
            black: black.into(),
            white: white.into(),
            black_name: black.to_uppercase(),
            white_name: white.to_uppercase(),
            status: GameStatus::Live,
            result: None,
            ended_at_ms: None,
            move_count: 0,
        }
    }

    fn finish(id: &str, ended_at_ms: i64) -> Append {
        Append::Finish {
            game_id: id.into(),
            result: "B+R".into(),
            ended_at_ms,
        }
    }

    fn row(player: &str, pool: &str, rating: f64) -> RatingRow {
        RatingRow {
            player: player.into(),
            pool: pool.into(),
            rating,
            deviation: 300.0,
            volatility: 0.06,
            games: 1,
            won: 1,
            lost: 0,
            last_game_ms: Some(5),
        }
    }

    fn record(game_id: &str, black: (&str, f64), white: (&str, f64)) -> RatingRecord {
        let change = |color: &str, (player, rating): (&str, f64), opponent: &str| RatingChangeRow {
            game_id: game_id.into(),
            pool: "overall".into(),
            color: color.into(),
            player: player.into(),
            opponent: opponent.into(),
            at_ms: 5,
            before: [1500.0, 350.0, 0.06],
            after: [rating, 300.0, 0.06],
        };
        RatingRecord {
            game_id: game_id.into(),
            changes: vec![
                change("black", black, white.0),
                change("white", white, black.0),
            ],
            standings: vec![
                row(black.0, "overall", black.1),
                row(white.0, "overall", white.1),
            ],
        }
    }

    fn ids(games: &[GameRecord]) -> Vec<&str> {
        games.iter().map(|g| g.id.as_str()).collect()
    }

    #[test]
    fn finished_rated_games_wait_until_recorded_then_keep_their_order() {
        let (_dir, store) = store();
        let rated = |id: &str| Append::Rated { game_id: id.into() };
        store
            .append(&[
                Append::Create(game("late", 1, "ann", "bob")),
                rated("late"),
                Append::Create(game("early", 2, "ann", "bob")),
                rated("early"),
                Append::Create(game("live", 3, "ann", "bob")),
                rated("live"),
                Append::Create(game("unrated", 4, "ann", "bob")),
                finish("late", 20),
                finish("early", 10),
                finish("unrated", 5),
            ])
            .expect("written");
        let games = store.rated_games().expect("read");
        assert!(games.applied.is_empty());
        assert_eq!(ids(&games.pending), ["early", "late"], "by when they ended");
        // Applied in another order than they ended: the order of application is kept.
        store
            .record_rating(&record("late", ("ann", 1600.0), ("bob", 1400.0)), 0)
            .unwrap();
        // A record made before "late" was applied is refused: the standings moved on.
        let stale = store.record_rating(&record("early", ("ann", 1650.0), ("bob", 1350.0)), 0);
        assert!(
            matches!(
                stale,
                Err(StoreError::RatingsMoved {
                    applied: 1,
                    after: 0
                })
            ),
            "{stale:?}"
        );
        store
            .record_rating(&record("early", ("ann", 1650.0), ("bob", 1350.0)), 1)
            .unwrap();
        let games = store.rated_games().expect("read");
        assert_eq!(ids(&games.applied), ["late", "early"]);
        assert!(games.pending.is_empty());
        // Recording a game twice, or a game that is not rated, changes nothing.
        for id in ["late", "unrated", "nowhere"] {
            let twice = store.record_rating(&record(id, ("ann", 0.0), ("bob", 0.0)), 2);
            assert!(
                matches!(twice, Err(StoreError::UnknownGame { .. })),
                "{twice:?}"
            );
        }
        assert_eq!(
            store.player_ratings("ann").unwrap(),
            [row("ann", "overall", 1650.0)]
        );
        let marked = store.append(&[Append::Rated {
            game_id: "nowhere".into(),
        }]);
        assert!(
            matches!(marked, Err(StoreError::UnknownGame { .. })),
            "{marked:?}"
        );
    }

    #[test]
    fn reads_serve_profiles_and_leaderboards_and_a_replace_starts_over() {
        let (_dir, store) = store();
        let mut batch = Vec::new();
        for (i, id) in ["g1", "g2", "g3"].into_iter().enumerate() {
            batch.push(Append::Create(game(
                id,
                i as i64,
                "ann",
                if i == 2 { "cid" } else { "bob" },
            )));
            batch.push(Append::Rated { game_id: id.into() });
            batch.push(finish(id, 10 + i as i64));
        }
        store.append(&batch).expect("written");
        let records = [
            record("g1", ("ann", 1600.0), ("bob", 1400.0)),
            record("g2", ("ann", 1700.0), ("bob", 1300.0)),
            record("g3", ("ann", 1750.0), ("cid", 1450.0)),
        ];
        for (after, r) in records.iter().enumerate() {
            store.record_rating(r, after as u64).unwrap();
        }
        let board = store.leaderboard("overall", 2).unwrap();
        let top: Vec<(&str, f64)> = board
            .iter()
            .map(|r| (r.player.as_str(), r.rating))
            .collect();
        assert_eq!(top, [("ann", 1750.0), ("cid", 1450.0)]);
        assert!(store.leaderboard("9x9", 10).unwrap().is_empty());
        let history = store.rating_history("ann", 2).unwrap();
        let seen: Vec<(&str, f64)> = history
            .iter()
            .map(|c| (c.game_id.as_str(), c.after[0]))
            .collect();
        assert_eq!(
            seen,
            [("g2", 1700.0), ("g3", 1750.0)],
            "the latest, oldest first"
        );
        assert_eq!(store.player_name("bob").unwrap().as_deref(), Some("BOB"));
        assert_eq!(store.player_name("nobody").unwrap(), None);
        let account = |id: &str, name: &str| UserRecord {
            id: id.into(),
            origin: Origin::Local,
            display_name: name.into(),
            role: Role::Player,
            password_hash: None,
            disabled: false,
            created_at_ms: 1,
        };
        for (id, name) in [("bob", "Bob L."), ("newcomer", "New")] {
            store.create_user(&account(id, name), None, 1).unwrap();
        }
        assert_eq!(
            store.player_name("bob").unwrap().as_deref(),
            Some("Bob L."),
            "the account's name over the game's"
        );
        assert_eq!(
            store.player_name("newcomer").unwrap().as_deref(),
            Some("New"),
            "an account that has not played"
        );

        store.replace_ratings(&records[..1], 0).unwrap();
        let games = store.rated_games().unwrap();
        assert_eq!(ids(&games.applied), ["g1"]);
        assert_eq!(ids(&games.pending), ["g2", "g3"]);
        assert_eq!(
            store.player_ratings("ann").unwrap(),
            [row("ann", "overall", 1600.0)]
        );
        assert!(store.player_ratings("cid").unwrap().is_empty());
        assert_eq!(store.rating_history("ann", 10).unwrap().len(), 1);
    }
}
