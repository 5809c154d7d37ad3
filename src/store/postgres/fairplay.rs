//! Fair play in PostgreSQL: blocks, reports to referees, spectators' chat, and the games
//! an escaper record is read from. Plain rows beside the game log.

use tokio_postgres::Client;

use super::games::{event_from_row, query_games, snapshot};
use super::{PgStore, bigint, col, pg_error};
use crate::store::{
    EventRecord, FairPlayStore, GAME_COLUMNS, GameRecord, KibitzRecord, NewReport, StoreError,
    StoredReport,
};

async fn set_block(
    client: &mut Client,
    blocker: String,
    blocked: String,
    on: bool,
    at_ms: i64,
) -> Result<(), StoreError> {
    let done = match on {
        true => {
            client
                .execute(
                    "INSERT INTO blocks (blocker, blocked, at_ms) VALUES ($1, $2, $3)
                     ON CONFLICT DO NOTHING",
                    &[&blocker, &blocked, &at_ms],
                )
                .await
        }
        false => {
            client
                .execute(
                    "DELETE FROM blocks WHERE blocker = $1 AND blocked = $2",
                    &[&blocker, &blocked],
                )
                .await
        }
    };
    done.map_err(pg_error)?;
    Ok(())
}

async fn blocks(client: &mut Client) -> Result<Vec<(String, String)>, StoreError> {
    let rows = client
        .query(
            "SELECT blocker, blocked FROM blocks ORDER BY blocker, blocked",
            &[],
        )
        .await
        .map_err(pg_error)?;
    rows.iter().map(|r| Ok((col(r, 0)?, col(r, 1)?))).collect()
}

async fn file_report(client: &mut Client, r: NewReport) -> Result<u64, StoreError> {
    let (from, to) = r
        .seqs
        .map_or((None, None), |(a, b)| (Some(bigint(a)), Some(bigint(b))));
    let row = client
        .query_one(
            r#"INSERT INTO reports (reporter, "user", game_id, from_seq, to_seq, reason, at_ms)
               VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id"#,
            &[
                &r.reporter,
                &r.user,
                &r.game_id,
                &from,
                &to,
                &r.reason,
                &r.at_ms,
            ],
        )
        .await
        .map_err(pg_error)?;
    Ok(col::<i64>(&row, 0)?.unsigned_abs())
}

async fn open_reports(
    client: &mut Client,
    reporter: Option<String>,
    limit: u32,
) -> Result<Vec<StoredReport>, StoreError> {
    let rows = client
        .query(
            r#"SELECT id, reporter, "user", game_id, from_seq, to_seq, reason, at_ms
               FROM reports WHERE open AND ($1::TEXT IS NULL OR reporter = $1)
               ORDER BY id LIMIT $2"#,
            &[&reporter, &i64::from(limit)],
        )
        .await
        .map_err(pg_error)?;
    rows.iter()
        .map(|row| {
            let from: Option<i64> = col(row, 4)?;
            let to: Option<i64> = col(row, 5)?;
            Ok(StoredReport {
                id: col::<i64>(row, 0)?.unsigned_abs(),
                report: NewReport {
                    reporter: col(row, 1)?,
                    user: col(row, 2)?,
                    game_id: col(row, 3)?,
                    seqs: from
                        .zip(to)
                        .map(|(a, b)| (a.unsigned_abs(), b.unsigned_abs())),
                    reason: col(row, 6)?,
                    at_ms: col(row, 7)?,
                },
            })
        })
        .collect()
}

async fn close_report(client: &mut Client, id: u64) -> Result<bool, StoreError> {
    let closed = client
        .execute(
            "UPDATE reports SET open = false WHERE id = $1 AND open",
            &[&bigint(id)],
        )
        .await
        .map_err(pg_error)?;
    Ok(closed > 0)
}

async fn kibitz(client: &mut Client, game_id: String) -> Result<Vec<KibitzRecord>, StoreError> {
    let rows = client
        .query(
            "SELECT game_id, at_ms, user_id, name, text FROM kibitz
             WHERE game_id = $1 ORDER BY at_ms, id",
            &[&game_id],
        )
        .await
        .map_err(pg_error)?;
    rows.iter()
        .map(|row| {
            Ok(KibitzRecord {
                game_id: col(row, 0)?,
                at_ms: col(row, 1)?,
                user_id: col(row, 2)?,
                name: col(row, 3)?,
                text: col(row, 4)?,
            })
        })
        .collect()
}

async fn forfeit_losses(
    client: &mut Client,
    player: String,
    limit: u32,
) -> Result<Vec<(GameRecord, Vec<EventRecord>)>, StoreError> {
    let tx = snapshot(client).await?;
    let sql = format!(
        "SELECT {GAME_COLUMNS} FROM games
         WHERE status = 'finished'
           AND ((black = $1 AND result IN ('W+F', 'W+T')) OR (white = $1 AND result IN ('B+F', 'B+T')))
         ORDER BY ended_at_ms DESC, id DESC LIMIT $2"
    );
    let games = query_games(&tx, &sql, &[&player, &i64::from(limit)]).await?;
    let mut out = Vec::with_capacity(games.len());
    for game in games {
        let rows = tx
            .query(
                "SELECT game_id, seq, kind, payload, at_ms FROM events
                 WHERE game_id = $1 AND kind IN ('presence', 'warned', 'ruled', 'game_ended')
                 ORDER BY seq",
                &[&game.id],
            )
            .await
            .map_err(pg_error)?;
        let events = rows.iter().map(event_from_row).collect::<Result<_, _>>()?;
        out.push((game, events));
    }
    tx.commit().await.map_err(pg_error)?;
    Ok(out)
}

impl FairPlayStore for PgStore {
    fn set_block(
        &self,
        blocker: &str,
        blocked: &str,
        on: bool,
        at_ms: i64,
    ) -> Result<(), StoreError> {
        let (blocker, blocked) = (blocker.to_owned(), blocked.to_owned());
        self.connections
            .run(move |c| Box::pin(self::set_block(c, blocker, blocked, on, at_ms)))
    }

    fn blocks(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.connections.run(|c| Box::pin(self::blocks(c)))
    }

    fn file_report(&self, report: &NewReport) -> Result<u64, StoreError> {
        let report = report.clone();
        self.connections
            .run(move |c| Box::pin(self::file_report(c, report)))
    }

    fn open_reports(
        &self,
        reporter: Option<&str>,
        limit: u32,
    ) -> Result<Vec<StoredReport>, StoreError> {
        let reporter = reporter.map(str::to_owned);
        self.connections
            .run(move |c| Box::pin(self::open_reports(c, reporter, limit)))
    }

    fn close_report(&self, id: u64) -> Result<bool, StoreError> {
        self.connections
            .run(move |c| Box::pin(self::close_report(c, id)))
    }

    fn kibitz(&self, game_id: &str) -> Result<Vec<KibitzRecord>, StoreError> {
        let game_id = game_id.to_owned();
        self.connections
            .run(move |c| Box::pin(self::kibitz(c, game_id)))
    }

    fn forfeit_losses(
        &self,
        player: &str,
        limit: u32,
    ) -> Result<Vec<(GameRecord, Vec<EventRecord>)>, StoreError> {
        let player = player.to_owned();
        self.connections
            .run(move |c| Box::pin(self::forfeit_losses(c, player, limit)))
    }
}
