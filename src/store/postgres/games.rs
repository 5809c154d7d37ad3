//! Games and their numbered events in PostgreSQL: the atomic batch ([`append`]), with
//! the game's row locked before its fence and next `seq` are checked, and the reads a
//! room, a restart and the archive make.

use std::collections::HashMap;
use std::ops::Range;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, GenericClient, IsolationLevel, Row, Statement, Transaction};

use super::{bad_row, bigint, col, pg_error};
use crate::store::{
    Append, EventRecord, GAME_COLUMNS, GameQuery, GameRecord, GameStatus, StoreError,
};

/// A statement's parameters.
pub(super) type Params<'a> = Vec<&'a (dyn ToSql + Sync)>;

pub(super) fn game_from_row(row: &Row) -> Result<GameRecord, StoreError> {
    let id: String = col(row, 0)?;
    let status_text: String = col(row, 7)?;
    let status = GameStatus::parse(&status_text)
        .ok_or_else(|| bad_row(format!("game {id} has the unknown status {status_text:?}")))?;
    let move_count: i64 = col(row, 10)?;
    Ok(GameRecord {
        created_at_ms: col(row, 1)?,
        settings: col(row, 2)?,
        black: col(row, 3)?,
        white: col(row, 4)?,
        black_name: col(row, 5)?,
        white_name: col(row, 6)?,
        status,
        result: col(row, 8)?,
        ended_at_ms: col(row, 9)?,
        move_count: u32::try_from(move_count)
            .map_err(|_| bad_row(format!("game {id} has {move_count} moves")))?,
        id,
    })
}

pub(super) fn event_from_row(row: &Row) -> Result<EventRecord, StoreError> {
    let game_id: String = col(row, 0)?;
    let seq: i64 = col(row, 1)?;
    Ok(EventRecord {
        seq: u64::try_from(seq)
            .map_err(|_| bad_row(format!("game {game_id} has the event number {seq}")))?,
        kind: col(row, 2)?,
        payload: col(row, 3)?,
        at_ms: col(row, 4)?,
        game_id,
    })
}

pub(super) async fn query_games(
    client: &impl GenericClient,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<GameRecord>, StoreError> {
    let rows = client.query(sql, params).await.map_err(pg_error)?;
    rows.iter().map(game_from_row).collect()
}

/// Writes the batch in one transaction, in order, or nothing of it.
pub(super) async fn append(client: &mut Client, batch: Vec<Append>) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    // The next seq of each existing game of the batch, its row locked; a game the batch
    // creates joins when it is created.
    let mut next = lock_games(&tx, &batch).await?;
    let mut prepared = Prepared {
        tx,
        statements: HashMap::new(),
    };
    for item in &batch {
        apply(&mut prepared, item, &mut next).await?;
    }
    prepared.tx.commit().await.map_err(pg_error)
}

/// A batch's transaction with the statements it has prepared: a statement repeated for
/// many items (an event per move, a move count per game) is parsed once per batch, and
/// each item then costs one round trip instead of two.
struct Prepared<'c> {
    tx: Transaction<'c>,
    statements: HashMap<&'static str, Statement>,
}

impl Prepared<'_> {
    async fn execute(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, StoreError> {
        let statement = match self.statements.get(sql) {
            Some(statement) => statement.clone(),
            None => {
                let statement = self.tx.prepare(sql).await.map_err(pg_error)?;
                self.statements.insert(sql, statement.clone());
                statement
            }
        };
        self.tx.execute(&statement, params).await.map_err(pg_error)
    }
}

async fn apply<'b>(
    b: &mut Prepared<'_>,
    item: &'b Append,
    next: &mut HashMap<&'b str, u64>,
) -> Result<(), StoreError> {
    match item {
        Append::Create(game) => {
            let move_count = i64::from(game.move_count);
            let inserted = b
                .execute(
                    "INSERT INTO games (id, created_at_ms, settings, black, white, black_name,
                         white_name, status, result, ended_at_ms, move_count)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                     ON CONFLICT (id) DO NOTHING",
                    &[
                        &game.id,
                        &game.created_at_ms,
                        &game.settings,
                        &game.black,
                        &game.white,
                        &game.black_name,
                        &game.white_name,
                        &game.status.as_str(),
                        &game.result,
                        &game.ended_at_ms,
                        &move_count,
                    ],
                )
                .await?;
            if inserted == 0 {
                return Err(StoreError::DuplicateGame {
                    game_id: game.id.clone(),
                });
            }
            next.insert(&game.id, 1);
        }
        Append::Event(event) => {
            let Some(&expected) = next.get(event.game_id.as_str()) else {
                return Err(unknown(&event.game_id));
            };
            if event.seq != expected || i64::try_from(event.seq).is_err() {
                return Err(StoreError::SeqOutOfOrder {
                    game_id: event.game_id.clone(),
                    seq: event.seq,
                    expected,
                });
            }
            b.execute(
                "INSERT INTO events (game_id, seq, kind, payload, at_ms)
                 VALUES ($1, $2, $3, $4, $5)",
                &[
                    &event.game_id,
                    &bigint(event.seq),
                    &event.kind,
                    &event.payload,
                    &event.at_ms,
                ],
            )
            .await?;
            next.insert(&event.game_id, expected.saturating_add(1));
        }
        Append::MoveCount {
            game_id,
            move_count,
        } => {
            let updated = b
                .execute(
                    "UPDATE games SET move_count = $2 WHERE id = $1",
                    &[game_id, &i64::from(*move_count)],
                )
                .await?;
            if updated == 0 {
                return Err(unknown(game_id));
            }
        }
        Append::Finish {
            game_id,
            result,
            ended_at_ms,
        } => {
            let updated = b
                .execute(
                    "UPDATE games SET status = 'finished', result = $2, ended_at_ms = $3
                     WHERE id = $1 AND status = 'live'",
                    &[game_id, result, ended_at_ms],
                )
                .await?;
            if updated == 0 {
                return Err(match exists(&b.tx, game_id).await? {
                    true => StoreError::AlreadyFinished {
                        game_id: game_id.clone(),
                    },
                    false => unknown(game_id),
                });
            }
        }
        Append::Rejudge { game_id, result } => {
            let updated = b
                .execute(
                    "UPDATE games SET result = $2 WHERE id = $1 AND status = 'finished'",
                    &[game_id, result],
                )
                .await?;
            if updated == 0 {
                return Err(unknown(game_id));
            }
            // In the same transaction, so a crash cannot lose the rebuild it owes.
            b.execute(
                "INSERT INTO ratings_owed (game_id)
                 SELECT game_id FROM rated_games WHERE game_id = $1",
                &[game_id],
            )
            .await?;
        }
        Append::Kibitz(line) => {
            let inserted = b
                .execute(
                    "INSERT INTO kibitz (game_id, at_ms, user_id, name, text)
                     SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM games WHERE id = $1)",
                    &[
                        &line.game_id,
                        &line.at_ms,
                        &line.user_id,
                        &line.name,
                        &line.text,
                    ],
                )
                .await?;
            if inserted == 0 {
                return Err(unknown(&line.game_id));
            }
        }
        Append::Rated { game_id } => {
            if !exists(&b.tx, game_id).await? {
                return Err(unknown(game_id));
            }
            b.execute(
                "INSERT INTO rated_games (game_id) VALUES ($1) ON CONFLICT DO NOTHING",
                &[game_id],
            )
            .await?;
        }
        Append::Fence { game_id, fence } => {
            // A number past BIGINT cannot be stored, so it is refused as stale like any
            // claim the stored fence does not allow (NULL compares as not allowed).
            let claimed = i64::try_from(*fence).ok();
            let updated = b
                .execute(
                    "UPDATE games SET fence = $2 WHERE id = $1 AND fence <= $2",
                    &[game_id, &claimed],
                )
                .await?;
            if updated == 0 {
                // A new statement, so it sees the fence that refused the claim.
                let current =
                    b.tx.query_opt("SELECT fence FROM games WHERE id = $1", &[game_id])
                        .await
                        .map_err(pg_error)?;
                return Err(match current {
                    None => unknown(game_id),
                    Some(row) => StoreError::Fenced {
                        game_id: game_id.clone(),
                        fence: *fence,
                        current: col::<i64>(&row, 0)?.unsigned_abs(),
                    },
                });
            }
        }
    }
    Ok(())
}

/// Locks the rows of every game the batch names until the transaction ends, in the
/// order of their ids (so two nodes whose batches share games take turns instead of
/// deadlocking), then reads each one's next seq. Two statements on purpose: under READ
/// COMMITTED the second one's snapshot is taken after the locks were granted, so it sees
/// the events of whoever held them before.
async fn lock_games<'b>(
    tx: &Transaction<'_>,
    batch: &'b [Append],
) -> Result<HashMap<&'b str, u64>, StoreError> {
    let mut ids: Vec<&str> = batch.iter().map(Append::game_id).collect();
    ids.sort_unstable();
    ids.dedup();
    tx.query(
        "SELECT 1 FROM games WHERE id = ANY($1) ORDER BY id FOR UPDATE",
        &[&ids],
    )
    .await
    .map_err(pg_error)?;
    let rows = tx
        .query(
            "SELECT g.id, (SELECT coalesce(max(e.seq), 0) FROM events e WHERE e.game_id = g.id)
             FROM games g WHERE g.id = ANY($1)",
            &[&ids],
        )
        .await
        .map_err(pg_error)?;
    let mut next = HashMap::with_capacity(rows.len());
    for row in &rows {
        let id: String = col(row, 0)?;
        let last: i64 = col(row, 1)?;
        let last = u64::try_from(last)
            .map_err(|_| bad_row(format!("game {id} has a negative event number")))?;
        // Keyed by the batch's own string, which the query matched exactly.
        if let Ok(i) = ids.binary_search(&id.as_str()) {
            next.insert(ids[i], last.saturating_add(1));
        }
    }
    Ok(next)
}

async fn exists(tx: &Transaction<'_>, game_id: &str) -> Result<bool, StoreError> {
    Ok(tx
        .query_opt("SELECT 1 FROM games WHERE id = $1", &[&game_id])
        .await
        .map_err(pg_error)?
        .is_some())
}

fn unknown(game_id: &str) -> StoreError {
    StoreError::UnknownGame {
        game_id: game_id.to_owned(),
    }
}

/// A read-only transaction on one snapshot, so rows read together agree with each other.
pub(super) async fn snapshot(client: &mut Client) -> Result<Transaction<'_>, StoreError> {
    client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(pg_error)
}

pub(super) async fn unfinished_games(
    client: &mut Client,
) -> Result<Vec<(GameRecord, Vec<EventRecord>)>, StoreError> {
    let tx = snapshot(client).await?;
    let sql = format!(
        "SELECT {GAME_COLUMNS} FROM games WHERE status = 'live' ORDER BY created_at_ms, id"
    );
    let games = query_games(&tx, &sql, &[]).await?;
    let rows = tx
        .query(
            "SELECT e.game_id, e.seq, e.kind, e.payload, e.at_ms
             FROM events e JOIN games g ON g.id = e.game_id
             WHERE g.status = 'live' ORDER BY e.game_id, e.seq",
            &[],
        )
        .await
        .map_err(pg_error)?;
    tx.commit().await.map_err(pg_error)?;
    let mut events: HashMap<String, Vec<EventRecord>> = HashMap::new();
    for row in &rows {
        let event = event_from_row(row)?;
        events.entry(event.game_id.clone()).or_default().push(event);
    }
    Ok(games
        .into_iter()
        .map(|game| {
            let log = events.remove(&game.id).unwrap_or_default();
            (game, log)
        })
        .collect())
}

pub(super) async fn game(
    client: &mut Client,
    id: String,
) -> Result<Option<GameRecord>, StoreError> {
    let sql = format!("SELECT {GAME_COLUMNS} FROM games WHERE id = $1");
    Ok(query_games(&*client, &sql, &[&id]).await?.pop())
}

pub(super) async fn events_in(
    client: &mut Client,
    id: String,
    seqs: Range<u64>,
) -> Result<Vec<EventRecord>, StoreError> {
    let rows = client
        .query(
            "SELECT game_id, seq, kind, payload, at_ms FROM events
             WHERE game_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq",
            &[&id, &bigint(seqs.start), &bigint(seqs.end)],
        )
        .await
        .map_err(pg_error)?;
    rows.iter().map(event_from_row).collect()
}

pub(super) async fn list_games(
    client: &mut Client,
    query: GameQuery,
) -> Result<Vec<GameRecord>, StoreError> {
    let limit = i64::from(query.effective_limit());
    if limit == 0 {
        return Ok(Vec::new());
    }
    let status = query.status.map(GameStatus::as_str);
    // An empty id sorts before every id, so without `before_id` the whole millisecond
    // `before_ms` is excluded.
    let before_id = query.before_id.clone().unwrap_or_default();
    let mut conditions = Vec::new();
    let mut params: Params<'_> = Vec::new();
    if let Some(player) = &query.player {
        params.push(player);
        conditions.push(format!("(black = ${n} OR white = ${n})", n = params.len()));
    }
    if let Some(status) = &status {
        params.push(status);
        conditions.push(format!("status = ${}", params.len()));
    }
    if let Some(before_ms) = &query.before_ms {
        params.push(before_ms);
        params.push(&before_id);
        let n = params.len();
        conditions.push(format!("(created_at_ms, id) < (${}, ${n})", n - 1));
    }
    params.push(&limit);
    let filter = match conditions.is_empty() {
        true => String::new(),
        false => format!("WHERE {}", conditions.join(" AND ")),
    };
    let sql = format!(
        "SELECT {GAME_COLUMNS} FROM games {filter}
         ORDER BY created_at_ms DESC, id DESC LIMIT ${}",
        params.len()
    );
    query_games(&*client, &sql, &params).await
}

/// Proves the connection is up and may write: a read-only server or transaction refuses
/// the (empty) update. Rolled back: nothing changes.
pub(super) async fn check_writable(client: &mut Client) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    tx.execute("UPDATE games SET move_count = move_count WHERE false", &[])
        .await
        .map_err(pg_error)?;
    tx.rollback().await.map_err(pg_error)
}
