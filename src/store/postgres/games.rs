//! Games and their numbered events in PostgreSQL, as [`GameStore`] reads them: the reads
//! a room, a restart and the archive make.

use std::collections::HashMap;
use std::ops::Range;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, GenericClient, IsolationLevel, Row, Transaction};

use super::{PgStore, bad_row, bigint, col, pg_error};
use crate::store::{
    EventRecord, GAME_COLUMNS, GameQuery, GameRecord, GameStatus, GameStore, StoreError,
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

async fn unfinished_games(
    client: &mut Client,
) -> Result<Vec<(GameRecord, Vec<EventRecord>)>, StoreError> {
    let tx = snapshot(client).await?;
    let sql = format!(
        "SELECT {GAME_COLUMNS} FROM games WHERE status = 'live'
             AND id NOT IN (SELECT game_id FROM correspondence_deadlines)
         ORDER BY created_at_ms, id"
    );
    let games = query_games(&tx, &sql, &[]).await?;
    let rows = tx
        .query(
            "SELECT e.game_id, e.seq, e.kind, e.payload, e.at_ms
             FROM events e JOIN games g ON g.id = e.game_id
             WHERE g.status = 'live'
                 AND g.id NOT IN (SELECT game_id FROM correspondence_deadlines)
             ORDER BY e.game_id, e.seq",
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

async fn game(client: &mut Client, id: String) -> Result<Option<GameRecord>, StoreError> {
    let sql = format!("SELECT {GAME_COLUMNS} FROM games WHERE id = $1");
    Ok(query_games(&*client, &sql, &[&id]).await?.pop())
}

async fn events_in(
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

async fn list_games(client: &mut Client, query: GameQuery) -> Result<Vec<GameRecord>, StoreError> {
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

impl GameStore for PgStore {
    fn unfinished_games(&self) -> Result<Vec<(GameRecord, Vec<EventRecord>)>, StoreError> {
        self.connections
            .run(|c| Box::pin(self::unfinished_games(c)))
    }

    fn game(&self, id: &str) -> Result<Option<GameRecord>, StoreError> {
        let id = id.to_owned();
        self.connections.run(move |c| Box::pin(self::game(c, id)))
    }

    fn events_in(&self, id: &str, seqs: Range<u64>) -> Result<Vec<EventRecord>, StoreError> {
        let id = id.to_owned();
        self.connections
            .run(move |c| Box::pin(self::events_in(c, id, seqs)))
    }

    fn list_games(&self, query: &GameQuery) -> Result<Vec<GameRecord>, StoreError> {
        let query = query.clone();
        self.connections
            .run(move |c| Box::pin(self::list_games(c, query)))
    }
}
