//! The PostgreSQL store's [`EventLog`]: the atomic batch ([`append`]), with each game's
//! row locked before its fence and next `seq` are checked.

use std::collections::HashMap;

use tokio_postgres::{Client, Transaction};

use super::prepared::Prepared;
use super::{PgStore, bad_row, bigint, col, pg_error};
use crate::store::{Append, EventLog, EventRecord, GameRecord, StoreError};

/// Writes the batch in one transaction, in order, or nothing of it.
async fn append(client: &mut Client, batch: Vec<Append>) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    // The next seq of each existing game of the batch, its row locked; a game the batch
    // creates joins when it is created.
    let mut next = lock_games(&tx, &batch).await?;
    let mut prepared = Prepared::new(tx);
    for item in &batch {
        apply(&mut prepared, item, &mut next).await?;
    }
    prepared.commit().await
}

async fn apply<'b>(
    b: &mut Prepared<'_>,
    item: &'b Append,
    next: &mut HashMap<&'b str, u64>,
) -> Result<(), StoreError> {
    match item {
        Append::Create(game) => {
            insert_game(b, game).await?;
            next.insert(&game.id, 1);
            Ok(())
        }
        Append::Event(event) => {
            let Some(&expected) = next.get(event.game_id.as_str()) else {
                return Err(unknown(&event.game_id));
            };
            insert_event(b, event, expected).await?;
            next.insert(&event.game_id, expected.saturating_add(1));
            Ok(())
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
            found(updated, game_id)
        }
        Append::Finish {
            game_id,
            result,
            ended_at_ms,
        } => {
            finish_game(b, game_id, result, *ended_at_ms).await?;
            super::plans::set_plan(b, game_id, "black", None).await?;
            super::plans::set_plan(b, game_id, "white", None).await?;
            super::deadlines::clear_deadline(b, game_id).await
        }
        Append::Rejudge { game_id, result } => rejudge(b, game_id, result).await,
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
            found(inserted, &line.game_id)
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
            Ok(())
        }
        Append::Fence { game_id, fence } => claim_fence(b, game_id, *fence).await,
        Append::Deadline {
            game_id,
            due_ms,
            summary,
        } => super::deadlines::set_deadline(b, game_id, *due_ms, summary.as_deref()).await,
        Append::Plan {
            game_id,
            color,
            plan,
        } => super::plans::set_plan(b, game_id, color, plan.as_deref()).await,
    }
}

/// Creates a game's row; [`StoreError::DuplicateGame`] if its id is taken.
async fn insert_game(b: &mut Prepared<'_>, game: &GameRecord) -> Result<(), StoreError> {
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
    Ok(())
}

/// Inserts a game's event, refused unless its `seq` is `expected`, the game's next.
async fn insert_event(
    b: &mut Prepared<'_>,
    event: &EventRecord,
    expected: u64,
) -> Result<(), StoreError> {
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
    Ok(())
}

/// Marks a live game finished with its result.
async fn finish_game(
    b: &mut Prepared<'_>,
    game_id: &str,
    result: &str,
    ended_at_ms: i64,
) -> Result<(), StoreError> {
    let updated = b
        .execute(
            "UPDATE games SET status = 'finished', result = $2, ended_at_ms = $3
             WHERE id = $1 AND status = 'live'",
            &[&game_id, &result, &ended_at_ms],
        )
        .await?;
    if updated == 0 {
        return Err(match exists(&b.tx, game_id).await? {
            true => StoreError::AlreadyFinished {
                game_id: game_id.to_owned(),
            },
            false => unknown(game_id),
        });
    }
    Ok(())
}

/// Replaces a finished game's result, and owes the ratings a rebuild if it was rated.
async fn rejudge(b: &mut Prepared<'_>, game_id: &str, result: &str) -> Result<(), StoreError> {
    let updated = b
        .execute(
            "UPDATE games SET result = $2 WHERE id = $1 AND status = 'finished'",
            &[&game_id, &result],
        )
        .await?;
    found(updated, game_id)?;
    // In the same transaction, so a crash cannot lose the rebuild it owes.
    b.execute(
        "INSERT INTO ratings_owed (game_id)
         SELECT game_id FROM rated_games WHERE game_id = $1",
        &[&game_id],
    )
    .await?;
    Ok(())
}

/// Raises a game's fence to `fence`, refused with [`StoreError::Fenced`] if it is
/// already higher.
async fn claim_fence(b: &mut Prepared<'_>, game_id: &str, fence: u64) -> Result<(), StoreError> {
    // A number past BIGINT cannot be stored, so it is refused as stale like any claim
    // the stored fence does not allow (NULL compares as not allowed).
    let claimed = i64::try_from(fence).ok();
    let updated = b
        .execute(
            "UPDATE games SET fence = $2 WHERE id = $1 AND fence <= $2",
            &[&game_id, &claimed],
        )
        .await?;
    if updated == 0 {
        // A new statement, so it sees the fence that refused the claim.
        let current =
            b.tx.query_opt("SELECT fence FROM games WHERE id = $1", &[&game_id])
                .await
                .map_err(pg_error)?;
        return Err(match current {
            None => unknown(game_id),
            Some(row) => StoreError::Fenced {
                game_id: game_id.to_owned(),
                fence,
                current: col::<i64>(&row, 0)?.unsigned_abs(),
            },
        });
    }
    Ok(())
}

/// `Ok` when a statement about `game_id` changed a row, else [`StoreError::UnknownGame`].
fn found(rows: u64, game_id: &str) -> Result<(), StoreError> {
    match rows {
        0 => Err(unknown(game_id)),
        _ => Ok(()),
    }
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

/// Proves the connection is up and may write: a read-only server or transaction refuses
/// the (empty) update. Rolled back: nothing changes.
async fn check_writable(client: &mut Client) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    tx.execute("UPDATE games SET move_count = move_count WHERE false", &[])
        .await
        .map_err(pg_error)?;
    tx.rollback().await.map_err(pg_error)
}

impl EventLog for PgStore {
    fn append(&self, batch: &[Append]) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let batch = batch.to_vec();
        self.connections
            .run(move |c| Box::pin(self::append(c, batch)))
    }

    /// Nothing to do: PostgreSQL makes each commit durable itself before `append`
    /// returns, so `append_unsynced` (the default, `append`) never leaves a sync behind.
    fn sync_log(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn check_writable(&self) -> Result<(), StoreError> {
        self.connections.run(|c| Box::pin(self::check_writable(c)))
    }
}
