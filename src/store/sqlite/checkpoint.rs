//! Moving into the database file what is kept beside it: the WAL's pages, copied by a
//! thread and connection of their own (the checkpointer), and the move log's events,
//! copied at each checkpoint, when the store stops, and at open after a crash.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use super::last_seqs::stored_last_seq;
use super::move_log::{self, Logged, MoveLog};
use super::{BUSY_TIMEOUT, SyncMode, move_log_err};
use crate::store::StoreError;

/// An event from the move log, checked when it was logged; one SQLite holds already (a
/// copy that raced another, or one replayed after a crash) is left as it is.
const COPY_EVENT: &str = "INSERT INTO events (game_id, seq, kind, payload, at_ms, move_count)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (game_id, seq) DO NOTHING";

/// WAL frames (pages) past which the checkpointer also resets the log; SQLite's own
/// automatic checkpoint threshold.
pub(super) const CHECKPOINT_PAGES: i64 = 1000;
/// How often the checkpointer copies committed pages into the database file.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);

/// Copies the WAL into the database file from a thread and connection of its own, so
/// that commits never wait for a checkpoint: SQLite's automatic checkpoint runs inside
/// the commit that crosses the threshold, and stalls every game waiting on that group
/// for tens to hundreds of milliseconds on an ordinary disk (`tengen load` showed it).
/// Durability is unchanged: commits are synced to the WAL exactly as before.
///
/// A checkpoint cannot weaken it either, though in `full` mode the group commit writes
/// a transaction first and flushes the log after ([`EventLog::append_unsynced`](crate::store::EventLog::append_unsynced)):
/// this connection runs at the configured `synchronous` (never `OFF`), at which SQLite
/// fsyncs the log before copying its pages into the database file, fsyncs the database
/// file after, and only then counts those pages as copied. The writer overwrites the log
/// from its start (the "reset") only once every page in it is counted, so what it
/// overwrites is already durable in the database file, acknowledged or not.
pub(super) struct Checkpointer {
    /// Dropping it tells the thread to stop.
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread and turns the writer's automatic checkpoints off; None (and
    /// automatic checkpoints stay on) when a second connection cannot be had.
    pub(super) fn start(
        path: &Path,
        sync: SyncMode,
        writer: &Arc<Mutex<Connection>>,
        db: Arc<File>,
        log: Option<Arc<MoveLog>>,
    ) -> Option<Checkpointer> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let own = Connection::open_with_flags(path, flags).ok()?;
        own.busy_timeout(BUSY_TIMEOUT).ok()?;
        own.pragma_update(None, "synchronous", sync.pragma_value())
            .ok()?;
        writer
            .lock()
            .ok()?
            .pragma_update_and_check(None, "wal_autocheckpoint", 0, |r| r.get::<_, i64>(0))
            .ok()?;
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let weak = Arc::downgrade(writer);
        let path = path.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("sqlite-checkpoint".into())
            .spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(CHECKPOINT_EVERY)
                {
                    if let Some(log) = &log
                        && let Err(e) = fold(&own, log, false)
                    {
                        tracing::warn!(path = %path.display(), error = %e, "copying the move log into the database failed");
                    }
                    if let Err(e) = Checkpointer::run(&own, &db, &weak) {
                        tracing::warn!(path = %path.display(), error = %e, "a WAL checkpoint failed");
                    }
                }
                // The store is closing, so nothing appends any more: the last events
                // go into the database, and the log's files are emptied.
                if let Some(log) = &log {
                    match fold(&own, log, true) {
                        Ok(true) => {
                            if let Err(e) = log.reset() {
                                tracing::warn!(path = %path.display(), error = %e, "emptying the move log failed; the next start copies it again");
                            }
                        }
                        Ok(false) => {}
                        Err(e) => {
                            tracing::warn!(path = %path.display(), error = %e, "copying the move log into the database failed; the next start does it");
                        }
                    }
                }
            });
        match thread {
            Ok(thread) => Some(Checkpointer {
                stop: Some(stop),
                thread: Some(thread),
            }),
            Err(_) => {
                let conn = writer.lock().ok()?;
                let _ = conn.pragma_update_and_check(
                    None,
                    "wal_autocheckpoint",
                    CHECKPOINT_PAGES,
                    |r| r.get::<_, i64>(0),
                );
                None
            }
        }
    }

    /// Copies every committed page without holding up the writer. Once the log has
    /// grown past [`CHECKPOINT_PAGES`], flushes the pages copied into the database file,
    /// then copies the few pages committed meanwhile with the writer held for that
    /// moment, so that its next commit starts the log afresh instead of growing it
    /// forever.
    ///
    /// SQLite flushes the database file only in a checkpoint that reaches the log's end,
    /// which under steady writes is only the held one: without the flush before it, the
    /// held checkpoint wrote back everything the first one copied (thousands of pages,
    /// 6 ms median and 12 ms at worst on the benchmark's disk) while every game waited,
    /// twice a second: with the flush first, a hold is 1.3 ms median and p99 move
    /// latency fell by about 40% (BENCHMARKS.md, issue 17, fifth pass).
    fn run(
        own: &Connection,
        db: &File,
        writer: &std::sync::Weak<Mutex<Connection>>,
    ) -> Result<(), CheckpointError> {
        let passive = |c: &Connection| {
            c.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get::<_, i64>(1))
        };
        let log = passive(own)?;
        if log >= CHECKPOINT_PAGES {
            db.sync_data().map_err(CheckpointError::Flush)?;
            if let Some(writer) = writer.upgrade() {
                let _held = writer.lock();
                passive(own)?;
            }
        }
        Ok(())
    }
}

/// Copies the move log's events into the database if a copy is due (or `all`), in one
/// transaction at the store's `synchronous` (so flushed when it commits), before the log
/// may write over them; whether there were any.
pub(super) fn fold(conn: &Connection, log: &MoveLog, all: bool) -> Result<bool, CheckpointError> {
    let Some(events) = log.fold_due(all).map_err(CheckpointError::Log)? else {
        return Ok(false);
    };
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    copy_in(&tx, &events)?;
    tx.commit()?;
    log.folded(&events).map_err(CheckpointError::Log)?;
    Ok(true)
}

/// Inserts logged events, leaving any the database already holds.
pub(super) fn copy_in(conn: &Connection, events: &[Logged]) -> rusqlite::Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let mut insert = conn.prepare_cached(COPY_EVENT)?;
    for Logged { event, move_count } in events {
        insert.execute(rusqlite::params![
            event.game_id,
            i64::try_from(event.seq).unwrap_or(i64::MAX),
            event.kind,
            event.payload,
            event.at_ms,
            move_count,
        ])?;
    }
    Ok(())
}

/// Why a checkpoint or a copy of the move log failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum CheckpointError {
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error("flushing the database file: {0}")]
    Flush(std::io::Error),
    #[error("the move log: {0}")]
    Log(std::io::Error),
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Takes the database's move log, copying whatever its files hold into the database
/// first (a crash or a stop left it there); None when another process has it.
pub(super) fn take_move_log(
    conn: &mut Connection,
    path: &Path,
) -> Result<Option<Arc<MoveLog>>, StoreError> {
    let failed = move_log_err(path);
    let Some(opened) = MoveLog::open(path).map_err(&failed)? else {
        tracing::info!(path = %path.display(), "another process holds the move log; this one writes to the database directly");
        return Ok(None);
    };
    if !opened.recovered.is_empty() {
        replay(conn, path, &opened.recovered)?;
        tracing::info!(path = %path.display(), events = opened.recovered.len(), "copied the move log into the database");
    }
    opened.log.reset().map_err(failed)?;
    Ok(Some(Arc::new(opened.log)))
}

/// Copies recovered events into the database: those it holds already are skipped, and
/// the rest must follow each game's last event, or the log is not this database's.
fn replay(conn: &mut Connection, path: &Path, events: &[Logged]) -> Result<(), StoreError> {
    let db = |cause| StoreError::Sqlite {
        path: path.to_path_buf(),
        cause: Arc::new(cause),
    };
    let foreign = |detail: String| StoreError::Corrupt {
        path: move_log::files_of(path),
        detail: format!("{detail}; the move log does not belong to this database"),
    };
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    let mut last: HashMap<&str, u64> = HashMap::new();
    let mut fresh = Vec::new();
    for logged in events {
        let game = logged.event.game_id.as_str();
        let known = match last.get(game) {
            Some(&seq) => seq,
            None => stored_last_seq(&tx, game)
                .map_err(db)?
                .ok_or_else(|| foreign(format!("game {game} is not in the database")))?,
        };
        if logged.event.seq <= known {
            continue;
        }
        if logged.event.seq != known + 1 {
            return Err(foreign(format!(
                "game {game} has event {known} and the log's next is {}",
                logged.event.seq
            )));
        }
        last.insert(game, logged.event.seq);
        fresh.push(logged.clone());
    }
    copy_in(&tx, &fresh).map_err(db)?;
    tx.commit().map_err(db)
}
