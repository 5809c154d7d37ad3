//! The SQLite store's [`EventLog`]: every batch in one immediate transaction, each
//! event's `seq` checked against its game's last (kept in memory, [`LastSeqs`]), and in
//! `full` mode the group commit's plain moves written to the move log instead, flushed
//! with the WAL by [`EventLog::sync_log`].

use std::collections::{BTreeSet, HashMap};
use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior};

use super::checkpoint::{CheckpointError, copy_in, fold};
use super::games::{LAST_MOVE_COUNT, game_exists};
use super::last_seqs::{LastSeqs, stored_last_seq};
use super::move_log::{self, Logged, sync_directory_of};
use super::{DbErr, SqliteStore, SyncMode, move_log_err, ratings};
use crate::store::{
    Append, Durability, EventLog, EventRecord, GameRecord, KibitzRecord, StoreError,
};

/// One event, its `seq` already checked against the game's last.
pub(super) const INSERT_EVENT: &str =
    "INSERT INTO events (game_id, seq, kind, payload, at_ms, move_count)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

impl SqliteStore {
    /// Runs `apply` for every item inside one immediate transaction; any error rolls the
    /// whole batch back (the transaction is dropped uncommitted).
    fn write<'a>(&self, items: impl IntoIterator<Item = Write<'a>>) -> Result<(), StoreError> {
        self.write_on(&mut *self.lock()?, items)
    }

    fn write_on<'a>(
        &self,
        conn: &mut Connection,
        items: impl IntoIterator<Item = Write<'a>>,
    ) -> Result<(), StoreError> {
        let mut last_seqs = self.last_seqs.lock().map_err(|_| StoreError::Poisoned)?;
        let written = self.write_in(conn, &mut last_seqs, items);
        if written.is_err() {
            last_seqs.forget_all();
        }
        written
    }

    fn write_in<'a>(
        &self,
        conn: &mut Connection,
        last_seqs: &mut LastSeqs,
        items: impl IntoIterator<Item = Write<'a>>,
    ) -> Result<(), StoreError> {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.db_err())?;
        let items: Vec<Write<'a>> = items.into_iter().collect();
        // A game's logged events go in first, so that what follows sees them.
        let copied = match &self.log {
            Some(log) => log
                .of_games(items.iter().map(Write::game_id).collect::<BTreeSet<_>>())
                .map_err(self.log_err())?,
            None => Vec::new(),
        };
        copy_in(&tx, &copied).map_err(self.db_err())?;
        let mut items = items.into_iter().peekable();
        while let Some(item) = items.next() {
            // A step's move count follows its last event, and is stored on it.
            let counted = match (&item, items.peek()) {
                (
                    Write::Event(event),
                    Some(Write::MoveCount {
                        game_id,
                        move_count,
                    }),
                ) if *game_id == event.game_id => Some(*move_count),
                _ => None,
            };
            if counted.is_some() {
                items.next();
            }
            self.apply(&tx, last_seqs, item, counted)?;
        }
        tx.commit().map_err(self.db_err())?;
        match &self.log {
            Some(log) if !copied.is_empty() => log.forget(&copied).map_err(self.log_err()),
            _ => Ok(()),
        }
    }

    /// The game's last event number in the file (0 before its first event).
    fn last_seq(&self, conn: &Connection, game_id: &str) -> Result<u64, StoreError> {
        stored_last_seq(conn, game_id)
            .map_err(self.db_err())?
            .ok_or_else(|| StoreError::UnknownGame {
                game_id: game_id.to_owned(),
            })
    }

    /// Refuses events to be logged unless each follows its game's last one, logged or
    /// stored, changing nothing. A game not in [`LastSeqs`] is looked up, in the log
    /// and then in the file.
    fn check_seqs(&self, logged: &[Logged]) -> Result<(), StoreError> {
        let mut known: HashMap<&str, u64> = HashMap::new();
        let mut missing = Vec::new();
        {
            let last_seqs = self.last_seqs.lock().map_err(|_| StoreError::Poisoned)?;
            for l in logged {
                let game = l.event.game_id.as_str();
                match last_seqs.get(game) {
                    Some(seq) => {
                        known.entry(game).or_insert(seq);
                    }
                    None => missing.push(game),
                }
            }
        }
        if !missing.is_empty() {
            let conn = self.conn.lock().map_err(|_| StoreError::Poisoned)?;
            for game in missing {
                if known.contains_key(game) {
                    continue;
                }
                let logged = self.log.as_ref().map(|log| log.last_seq(game)).transpose();
                let last = match logged.map_err(self.log_err())?.flatten() {
                    Some(seq) => seq,
                    None => self.last_seq(&conn, game)?,
                };
                known.insert(game, last);
            }
        }
        for l in logged {
            let game = l.event.game_id.as_str();
            let expected = known.get(game).copied().unwrap_or(0).saturating_add(1);
            if l.event.seq != expected || i64::try_from(l.event.seq).is_err() {
                return Err(StoreError::SeqOutOfOrder {
                    game_id: game.to_owned(),
                    seq: l.event.seq,
                    expected,
                });
            }
            known.insert(game, l.event.seq);
        }
        Ok(())
    }

    /// Applies one item; `move_count`, for an event, is the game's count after it.
    fn apply(
        &self,
        tx: &Transaction<'_>,
        last_seqs: &mut LastSeqs,
        item: Write<'_>,
        move_count: Option<u32>,
    ) -> Result<(), StoreError> {
        let db = self.db_err();
        match item {
            Write::Create(game) => insert_game(tx, game, &db),
            Write::Event(event) => self.insert_event(tx, last_seqs, event, move_count),
            Write::MoveCount {
                game_id,
                move_count,
            } => set_move_count(tx, game_id, move_count, &db),
            Write::Finish {
                game_id,
                result,
                ended_at_ms,
            } => {
                finish_game(tx, game_id, result, ended_at_ms, &db)?;
                super::deadlines::clear_deadline(tx, game_id, &db)?;
                super::plans::set_plan(tx, game_id, "black", None, &db)?;
                super::plans::set_plan(tx, game_id, "white", None, &db)?;
                last_seqs.finished(game_id);
                Ok(())
            }
            Write::Rejudge { game_id, result } => {
                rejudge(tx, game_id, result, &db)?;
                // In the same transaction, so a crash cannot lose the rebuild it owes.
                ratings::owe_rebuild(tx, game_id, &db)
            }
            Write::Kibitz(line) => insert_kibitz(tx, line, &db),
            Write::Rated(game_id) => ratings::mark_rated(tx, game_id, &db),
            Write::Fence { game_id, fence } => claim_fence(tx, game_id, fence, &db),
            Write::Deadline {
                game_id,
                due_ms,
                summary,
            } => super::deadlines::set_deadline(tx, game_id, due_ms, summary, &db),
            Write::Plan {
                game_id,
                color,
                plan,
            } => super::plans::set_plan(tx, game_id, color, plan, &db),
        }
    }

    /// Inserts a game's next event, its `seq` checked against the game's last, and keeps
    /// the number for the next one. `move_count` is the game's count after it.
    fn insert_event(
        &self,
        tx: &Transaction<'_>,
        last_seqs: &mut LastSeqs,
        event: &EventRecord,
        move_count: Option<u32>,
    ) -> Result<(), StoreError> {
        let db = self.db_err();
        let last = match last_seqs.get(&event.game_id) {
            Some(last) => last,
            None => self.last_seq(tx, &event.game_id)?,
        };
        let expected = last.saturating_add(1);
        if event.seq != expected {
            return Err(StoreError::SeqOutOfOrder {
                game_id: event.game_id.clone(),
                seq: event.seq,
                expected,
            });
        }
        let seq = i64::try_from(event.seq).map_err(|_| StoreError::SeqOutOfOrder {
            game_id: event.game_id.clone(),
            seq: event.seq,
            expected,
        })?;
        tx.prepare_cached(INSERT_EVENT)
            .map_err(&db)?
            .execute(rusqlite::params![
                event.game_id,
                seq,
                event.kind,
                event.payload,
                event.at_ms,
                move_count,
            ])
            .map_err(&db)?;
        last_seqs.appended(&event.game_id, event.seq);
        Ok(())
    }
}

fn unknown_game(game_id: &str) -> StoreError {
    StoreError::UnknownGame {
        game_id: game_id.to_owned(),
    }
}

/// Creates a game's row; [`StoreError::DuplicateGame`] if its id is taken.
fn insert_game(tx: &Transaction<'_>, game: &GameRecord, db: DbErr<'_>) -> Result<(), StoreError> {
    let inserted = tx
        .prepare_cached(
            "INSERT INTO games (id, created_at_ms, settings, black, white, black_name,
                 white_name, status, result, ended_at_ms, move_count)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
             ON CONFLICT (id) DO NOTHING",
        )
        .map_err(db)?
        .execute(rusqlite::params![
            game.id,
            game.created_at_ms,
            game.settings,
            game.black,
            game.white,
            game.black_name,
            game.white_name,
            game.status.as_str(),
            game.result,
            game.ended_at_ms,
            game.move_count,
        ])
        .map_err(db)?;
    if inserted == 0 {
        return Err(StoreError::DuplicateGame {
            game_id: game.id.clone(),
        });
    }
    Ok(())
}

/// A count with no event of its game just before it: on the game's last event, or on
/// the game itself when it has none.
fn set_move_count(
    tx: &Transaction<'_>,
    game_id: &str,
    move_count: u32,
    db: DbErr<'_>,
) -> Result<(), StoreError> {
    let on_event = tx
        .prepare_cached(
            "UPDATE events SET move_count = ?2 WHERE game_id = ?1
             AND seq = (SELECT max(seq) FROM events WHERE game_id = ?1)",
        )
        .map_err(db)?
        .execute(rusqlite::params![game_id, move_count])
        .map_err(db)?;
    let updated = match on_event {
        0 => tx
            .prepare_cached("UPDATE games SET move_count = ?2 WHERE id = ?1")
            .map_err(db)?
            .execute(rusqlite::params![game_id, move_count])
            .map_err(db)?,
        n => n,
    };
    if updated == 0 {
        return Err(unknown_game(game_id));
    }
    Ok(())
}

/// Marks a live game finished with its result, its move count copied into its row.
fn finish_game(
    tx: &Transaction<'_>,
    game_id: &str,
    result: &str,
    ended_at_ms: i64,
    db: DbErr<'_>,
) -> Result<(), StoreError> {
    let updated = tx
        .prepare_cached(&format!(
            "UPDATE games SET status = 'finished', result = ?2, ended_at_ms = ?3,
                 move_count = {LAST_MOVE_COUNT}
             WHERE id = ?1 AND status = 'live'"
        ))
        .map_err(db)?
        .execute(rusqlite::params![game_id, result, ended_at_ms])
        .map_err(db)?;
    if updated == 0 {
        return Err(if game_exists(tx, game_id, db)? {
            StoreError::AlreadyFinished {
                game_id: game_id.to_owned(),
            }
        } else {
            unknown_game(game_id)
        });
    }
    Ok(())
}

/// Replaces a finished game's result.
fn rejudge(
    tx: &Transaction<'_>,
    game_id: &str,
    result: &str,
    db: DbErr<'_>,
) -> Result<(), StoreError> {
    let updated = tx
        .prepare_cached("UPDATE games SET result = ?2 WHERE id = ?1 AND status = 'finished'")
        .map_err(db)?
        .execute(rusqlite::params![game_id, result])
        .map_err(db)?;
    if updated == 0 {
        return Err(unknown_game(game_id));
    }
    Ok(())
}

/// Keeps a spectators' chat line of an existing game.
fn insert_kibitz(
    tx: &Transaction<'_>,
    line: &KibitzRecord,
    db: DbErr<'_>,
) -> Result<(), StoreError> {
    let inserted = tx
        .prepare_cached(
            "INSERT INTO kibitz (game_id, at_ms, user_id, name, text)
             SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM games WHERE id = ?1)",
        )
        .map_err(db)?
        .execute(rusqlite::params![
            line.game_id,
            line.at_ms,
            line.user_id,
            line.name,
            line.text
        ])
        .map_err(db)?;
    if inserted == 0 {
        return Err(unknown_game(&line.game_id));
    }
    Ok(())
}

/// Raises a game's fence to `fence`, refused with [`StoreError::Fenced`] if it is
/// already higher.
fn claim_fence(
    tx: &Transaction<'_>,
    game_id: &str,
    fence: u64,
    db: DbErr<'_>,
) -> Result<(), StoreError> {
    // A number past SQLite's integers cannot be stored, so it is refused as stale like
    // any claim the stored fence does not allow.
    let claimed = i64::try_from(fence).ok();
    let updated = tx
        .prepare_cached("UPDATE games SET fence = ?2 WHERE id = ?1 AND fence <= ?2")
        .map_err(db)?
        .execute(rusqlite::params![game_id, claimed])
        .map_err(db)?;
    if updated == 0 {
        let current: Option<i64> = tx
            .prepare_cached("SELECT fence FROM games WHERE id = ?1")
            .map_err(db)?
            .query_row([game_id], |row| row.get(0))
            .optional()
            .map_err(db)?;
        return Err(match current {
            None => unknown_game(game_id),
            Some(current) => StoreError::Fenced {
                game_id: game_id.to_owned(),
                fence,
                current: current.unsigned_abs(),
            },
        });
    }
    Ok(())
}

/// A borrowed [`Append`], so `create_game` need not clone its record.
enum Write<'a> {
    Create(&'a GameRecord),
    Event(&'a EventRecord),
    MoveCount {
        game_id: &'a str,
        move_count: u32,
    },
    Finish {
        game_id: &'a str,
        result: &'a str,
        ended_at_ms: i64,
    },
    Rejudge {
        game_id: &'a str,
        result: &'a str,
    },
    Kibitz(&'a KibitzRecord),
    Rated(&'a str),
    Fence {
        game_id: &'a str,
        fence: u64,
    },
    Deadline {
        game_id: &'a str,
        due_ms: i64,
        summary: Option<&'a str>,
    },
    Plan {
        game_id: &'a str,
        color: &'a str,
        plan: Option<&'a str>,
    },
}

impl Write<'_> {
    fn game_id(&self) -> &str {
        match self {
            Write::Create(game) => &game.id,
            Write::Event(event) => &event.game_id,
            Write::Kibitz(line) => &line.game_id,
            Write::MoveCount { game_id, .. }
            | Write::Finish { game_id, .. }
            | Write::Rejudge { game_id, .. }
            | Write::Rated(game_id)
            | Write::Fence { game_id, .. }
            | Write::Deadline { game_id, .. }
            | Write::Plan { game_id, .. } => game_id,
        }
    }
}

impl<'a> From<&'a Append> for Write<'a> {
    fn from(item: &'a Append) -> Self {
        match item {
            Append::Create(game) => Write::Create(game),
            Append::Event(event) => Write::Event(event),
            Append::MoveCount {
                game_id,
                move_count,
            } => Write::MoveCount {
                game_id,
                move_count: *move_count,
            },
            Append::Finish {
                game_id,
                result,
                ended_at_ms,
            } => Write::Finish {
                game_id,
                result,
                ended_at_ms: *ended_at_ms,
            },
            Append::Rejudge { game_id, result } => Write::Rejudge { game_id, result },
            Append::Kibitz(line) => Write::Kibitz(line),
            Append::Rated { game_id } => Write::Rated(game_id),
            Append::Fence { game_id, fence } => Write::Fence {
                game_id,
                fence: *fence,
            },
            Append::Deadline {
                game_id,
                due_ms,
                summary,
            } => Write::Deadline {
                game_id,
                due_ms: *due_ms,
                summary: summary.as_deref(),
            },
            Append::Plan {
                game_id,
                color,
                plan,
            } => Write::Plan {
                game_id,
                color,
                plan: plan.as_deref(),
            },
        }
    }
}

/// Splits a group commit's batch into what SQLite writes (every item about a game
/// that has anything but plain events in the batch) and the events the move log takes,
/// each with the move count that follows it.
fn split_for_log(batch: &[Append]) -> (Vec<Write<'_>>, Vec<Logged>) {
    let plain = |i: usize| match &batch[i] {
        Append::Event(_) => true,
        // A count right after its game's event is stored on that event.
        Append::MoveCount { game_id, .. } => {
            i > 0 && matches!(&batch[i - 1], Append::Event(e) if e.game_id == *game_id)
        }
        _ => false,
    };
    let direct_games: BTreeSet<&str> = (0..batch.len())
        .filter(|&i| !plain(i))
        .map(|i| batch[i].game_id())
        .collect();
    let mut direct = Vec::new();
    let mut logged: Vec<Logged> = Vec::new();
    for item in batch {
        if direct_games.contains(item.game_id()) {
            direct.push(Write::from(item));
            continue;
        }
        match item {
            Append::Event(event) => logged.push(Logged {
                event: event.clone(),
                move_count: None,
            }),
            Append::MoveCount { move_count, .. } => {
                if let Some(last) = logged.last_mut() {
                    last.move_count = Some(*move_count);
                }
            }
            _ => {}
        }
    }
    (direct, logged)
}

/// Opens `file` to be flushed; None when there is no such file.
pub(super) fn open_if_present(file: &Path) -> io::Result<Option<File>> {
    // Opened for writing: some systems refuse to flush a file opened read-only.
    match OpenOptions::new().write(true).open(file) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

impl EventLog for SqliteStore {
    fn create_game(&self, game: &GameRecord) -> Result<(), StoreError> {
        self.write([Write::Create(game)])
    }

    fn append(&self, batch: &[Append]) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        self.write(batch.iter().map(Write::from))
    }

    /// In `full` mode the transaction commits at `synchronous = NORMAL` (written to the
    /// operating system, the log not fsynced), and the connection goes back to `FULL`
    /// before any other use ([`SqliteStore::lock`]): only the group commit, which calls
    /// [`EventLog::sync_log`](crate::store::EventLog::sync_log) before anyone is told, runs without SQLite's own fsync.
    ///
    /// Plain events (and the move count after them) go to the move log instead, unless
    /// something else in the batch is about their game: their `seq` is checked first, so
    /// a rejected batch writes nothing anywhere.
    fn append_unsynced(&self, batch: &[Append]) -> Result<Durability, StoreError> {
        if self.sync != SyncMode::Full || batch.is_empty() {
            return self.append(batch).map(|()| Durability::Durable);
        }
        let (direct, logged) = match &self.log {
            Some(log) if !log.is_full() => split_for_log(batch),
            _ => (batch.iter().map(Write::from).collect(), Vec::new()),
        };
        if !logged.is_empty() {
            self.check_seqs(&logged)?;
        }
        if !direct.is_empty() {
            let mut conn = self.conn.lock().map_err(|_| StoreError::Poisoned)?;
            if !self.relaxed.load(Ordering::Relaxed) {
                self.set_synchronous(&conn, SyncMode::Normal)?;
                self.relaxed.store(true, Ordering::Relaxed);
            }
            self.wal_dirty.store(true, Ordering::Relaxed);
            self.write_on(&mut conn, direct)?;
        }
        if let Some(log) = self.log.as_ref().filter(|_| !logged.is_empty()) {
            let seqs: Vec<(String, u64)> = logged
                .iter()
                .map(|l| (l.event.game_id.clone(), l.event.seq))
                .collect();
            log.append(logged).map_err(self.log_err())?;
            let mut last_seqs = self.last_seqs.lock().map_err(|_| StoreError::Poisoned)?;
            for (game, seq) in seqs {
                last_seqs.appended(&game, seq);
            }
        }
        Ok(Durability::AfterSyncLog)
    }

    /// Flushes the write-ahead log with `fdatasync`. No log file means nothing to flush:
    /// SQLite removes it only when its last connection closes, after copying it into the
    /// database file and syncing that. The flush that first finds the log also flushes
    /// the directory, so that a log created since the store opened keeps its name after
    /// a power loss (SQLite's own first sync of a new log does the same), and keeps the
    /// log open for the next ones (`wal_file`).
    ///
    /// With a move log, flushes what was logged since, and SQLite's log only if the
    /// group wrote to it.
    fn sync_log(&self) -> Result<(), StoreError> {
        if let Some(log) = &self.log {
            log.sync().map_err(|cause| StoreError::Sync {
                path: move_log::files_of(&self.path),
                cause: Arc::new(cause),
            })?;
            if !self.wal_dirty.swap(false, Ordering::Relaxed) {
                return Ok(());
            }
        }
        let failed = |source| StoreError::Sync {
            path: self.wal.clone(),
            cause: Arc::new(source),
        };
        let mut held = self.wal_file.lock().map_err(|_| StoreError::Poisoned)?;
        if held.is_none() {
            let Some(log) = open_if_present(&self.wal).map_err(failed)? else {
                return Ok(());
            };
            sync_directory_of(&self.wal).map_err(failed)?;
            *held = Some(log);
        }
        match held.as_ref() {
            Some(log) => log.sync_data().map_err(failed),
            None => Ok(()),
        }
    }

    fn fold_log(&self) -> Result<(), StoreError> {
        let Some(log) = &self.log else {
            return Ok(());
        };
        let conn = self.lock()?;
        fold(&conn, log, true).map(|_| ()).map_err(|e| match e {
            CheckpointError::Sqlite(cause) => StoreError::Sqlite {
                path: self.path.clone(),
                cause: Arc::new(cause),
            },
            CheckpointError::Log(cause) | CheckpointError::Flush(cause) => {
                move_log_err(&self.path)(cause)
            }
        })
    }

    fn check_writable(&self) -> Result<(), StoreError> {
        let mut conn = self.lock()?;
        // BEGIN IMMEDIATE takes the write lock (failing on a read-only file or connection,
        // or when another process holds the lock past the busy timeout); the no-op update
        // makes SQLite open the file for writing. Rolled back: nothing changes.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.db_err())?;
        tx.execute("UPDATE games SET move_count = move_count WHERE 0", [])
            .map_err(self.db_err())?;
        tx.rollback().map_err(self.db_err())
    }
}
