//! The embedded SQLite backend of [`Store`]: one file, one connection behind a mutex, WAL
//! journal, and in `full` mode a move log beside it for plain moves (`move_log`). With
//! `postgres/`, the only place in tengen that writes SQL.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::types::{Type, Value};
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, Transaction, TransactionBehavior};

use super::{
    Append, Durability, EventRecord, GameQuery, GameRecord, GameStatus, KibitzRecord, NewReport,
    RatedGames, RatingChangeRow, RatingRecord, RatingRow, ReviewRecord, Store, StoreError,
    StoredReport,
};
use super::{GAME_COLUMNS, game_columns_before_count, migrations, ratings};
use last_seqs::LastSeqs;
use move_log::{Logged, MoveLog};

mod accounts;
mod copy;
mod last_seqs;
mod move_log;
mod mutes;

/// How long a statement waits for another process's lock (an operator's `sqlite3` shell,
/// a backup) before failing, rather than failing at once.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Enough for every statement this module (and the ratings') prepares, so none is ever
/// re-parsed.
const STATEMENT_CACHE: usize = 48;

/// A game's last event number before its first append since the store opened (no row:
/// no such game); until the game ends, later appends know it ([`LastSeqs`]). Its parameter
/// appears once: SQLite re-prepares `SELECT EXISTS (.. ?1), (SELECT max(seq) .. ?1)`
/// on every run, which under load cost a parse and a query plan per move.
const LAST_SEQ: &str =
    "SELECT (SELECT max(seq) FROM events WHERE game_id = games.id) FROM games WHERE id = ?1";

/// One event, its `seq` already checked against the game's last.
const INSERT_EVENT: &str = "INSERT INTO events (game_id, seq, kind, payload, at_ms, move_count)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

/// An event from the move log, checked when it was logged; one SQLite holds already (a
/// copy that raced another, or one replayed after a crash) is left as it is.
const COPY_EVENT: &str = "INSERT INTO events (game_id, seq, kind, payload, at_ms, move_count)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (game_id, seq) DO NOTHING";

/// A game's move count as this store keeps it: on the game's last event that carries
/// one ([`Append::MoveCount`] is folded into the event before it, so a move writes its
/// event's page and not also the game's row), else in the game's row (a game without
/// counted events, or one stored before events carried counts). A finished game's count
/// is copied into its row when it ends.
const LAST_MOVE_COUNT: &str = "coalesce((SELECT e.move_count FROM events e \
     WHERE e.game_id = games.id AND e.move_count IS NOT NULL ORDER BY e.seq DESC LIMIT 1), \
     games.move_count)";

/// A game's move count, live or finished, as an expression over `games`.
fn move_count_column() -> String {
    format!("CASE WHEN games.status = 'live' THEN {LAST_MOVE_COUNT} ELSE games.move_count END")
}

/// [`GAME_COLUMNS`] for queries that may return live games: their count as above.
fn live_game_columns() -> String {
    format!("{}, {}", game_columns_before_count!(), move_count_column())
}

/// How hard each commit is pushed to the disk (`PRAGMA synchronous`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// `synchronous = FULL` (the default): every commit is fsynced before it returns, so
    /// an acknowledged move survives a process crash, `SIGKILL`, a kernel panic and a
    /// power loss. Costs one fsync per transaction, which is why the
    /// [`StoreWriter`](crate::store::StoreWriter) puts many games' moves into one
    /// transaction.
    #[default]
    Full,
    /// `synchronous = NORMAL` in WAL mode: a commit is written to the operating system but
    /// fsynced only at checkpoints, so an acknowledged move survives a process crash or
    /// `SIGKILL`, but the last commits before a power loss or kernel panic may be lost (the
    /// file stays consistent, never corrupt). Much faster on slow disks.
    Normal,
}

impl SyncMode {
    fn pragma_value(self) -> &'static str {
        match self {
            SyncMode::Full => "FULL",
            SyncMode::Normal => "NORMAL",
        }
    }
}

/// The game database in one SQLite file.
///
/// All access goes through one connection behind a mutex: SQLite serialises writers
/// anyway, and the [`StoreWriter`](crate::store::StoreWriter) batches writes so the
/// mutex is taken once per group of commits, not once per move.
pub struct SqliteStore {
    /// Declared first so that it stops (and closes its connection) before `conn` closes.
    checkpointer: Option<Checkpointer>,
    conn: Arc<Mutex<Connection>>,
    /// The database file, held open for the checkpointer's flush. Declared after `conn`
    /// and closed only after it: closing any descriptor of a file drops every POSIX lock
    /// this process holds on that file, SQLite's included.
    db_file: Option<Arc<File>>,
    path: PathBuf,
    /// The write-ahead log beside it (`<path>-wal`), which [`Store::sync_log`] flushes.
    wal: PathBuf,
    /// The log, held open from the first flush that finds it. SQLite keeps one log file,
    /// rewriting it from its start after a checkpoint, and removes it only when its last
    /// connection closes, which `conn` does only with the store. Opening it for each
    /// flush cost an `openat` and a `close` a group; and a descriptor held across
    /// write-back is where the kernel reports a failed write-back to, while one opened
    /// after it may not see the error. SQLite takes no locks on this file, so closing
    /// it drops none of SQLite's.
    wal_file: Mutex<Option<File>>,
    /// The connection runs at `synchronous = NORMAL` for the group commit
    /// ([`Store::append_unsynced`]) and goes back to `sync` only when something else
    /// takes it ([`SqliteStore::lock`]): switching costs a parsed statement and expires
    /// every prepared one, which twice per group was 5-7% of a loaded server's CPU.
    /// Read and written only with `conn` locked.
    relaxed: AtomicBool,
    /// Taken inside a write, with `conn` locked if at all (`conn`, then this, then the
    /// log's own lock).
    last_seqs: Mutex<LastSeqs>,
    /// In `full` mode, where the group commit puts plain events (None when another
    /// process holds it, or without a checkpointer thread to copy from it).
    log: Option<Arc<MoveLog>>,
    /// The group commit wrote to SQLite since the last [`Store::sync_log`]: with a move
    /// log, most groups do not, and their flush leaves SQLite's log alone.
    wal_dirty: AtomicBool,
    sync: SyncMode,
    read_only: bool,
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .field("sync", &self.sync)
            .field("read_only", &self.read_only)
            .finish_non_exhaustive()
    }
}

/// WAL frames (pages) past which the checkpointer also resets the log; SQLite's own
/// automatic checkpoint threshold.
const CHECKPOINT_PAGES: i64 = 1000;
/// How often the checkpointer copies committed pages into the database file.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);

/// Copies the WAL into the database file from a thread and connection of its own, so
/// that commits never wait for a checkpoint: SQLite's automatic checkpoint runs inside
/// the commit that crosses the threshold, and stalls every game waiting on that group
/// for tens to hundreds of milliseconds on an ordinary disk (`tengen load` showed it).
/// Durability is unchanged: commits are synced to the WAL exactly as before.
///
/// A checkpoint cannot weaken it either, though in `full` mode the group commit writes
/// a transaction first and flushes the log after ([`SqliteStore::append_unsynced`]):
/// this connection runs at the configured `synchronous` (never `OFF`), at which SQLite
/// fsyncs the log before copying its pages into the database file, fsyncs the database
/// file after, and only then counts those pages as copied. The writer overwrites the log
/// from its start (the "reset") only once every page in it is counted, so what it
/// overwrites is already durable in the database file, acknowledged or not.
struct Checkpointer {
    /// Dropping it tells the thread to stop.
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread and turns the writer's automatic checkpoints off; None (and
    /// automatic checkpoints stay on) when a second connection cannot be had.
    fn start(
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
fn fold(conn: &Connection, log: &MoveLog, all: bool) -> Result<bool, CheckpointError> {
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
fn copy_in(conn: &Connection, events: &[Logged]) -> rusqlite::Result<()> {
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
enum CheckpointError {
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

impl SqliteStore {
    /// Opens (creating if missing) the game database at `path` and brings its schema up
    /// to date.
    ///
    /// Sets WAL journalling, `sync`, a busy timeout and foreign keys, and runs `PRAGMA
    /// quick_check` (which reads the whole file, so open time grows with its size). A file
    /// that is not a tengen database, is damaged, or comes from a newer tengen is refused
    /// with an error naming it, and is never deleted or rewritten.
    pub fn open(path: &Path, sync: SyncMode) -> Result<Self, StoreError> {
        Self::open_inner(path, sync, false)
    }

    /// Opens an existing, up-to-date game database for reading only.
    ///
    /// For inspection tools and for proving the readiness probe: writes through this
    /// store (and [`Store::check_writable`]) fail even for root, whom file permissions do
    /// not stop. Nothing in the file is changed, not even the journal mode.
    pub fn open_read_only(path: &Path) -> Result<Self, StoreError> {
        Self::open_inner(path, SyncMode::Full, true)
    }

    fn open_inner(path: &Path, sync: SyncMode, read_only: bool) -> Result<Self, StoreError> {
        if path.is_dir() {
            return Err(StoreError::IsDirectory {
                path: path.to_path_buf(),
            });
        }
        let flags = if read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
        };
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            cause: Arc::new(source),
        };
        let mut conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);

        // Everything up to the migrations only reads, so a refused file stays untouched.
        let version = migrations::check_version(&conn, path)?;
        quick_check(&conn, path)?;

        let db_err = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            cause: Arc::new(source),
        };
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(db_err)?;
        if read_only {
            if version != migrations::latest_version() {
                return Err(StoreError::Corrupt {
                    path: path.to_path_buf(),
                    detail: format!(
                        "its schema version is {version}, older than {}, and a read-only open cannot upgrade it",
                        migrations::latest_version()
                    ),
                });
            }
        } else {
            let mode: String = conn
                .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
                .map_err(db_err)?;
            if !mode.eq_ignore_ascii_case("wal") {
                tracing::warn!(path = %path.display(), mode, "the game database is not in WAL mode");
            }
            conn.pragma_update(None, "synchronous", sync.pragma_value())
                .map_err(db_err)?;
            migrations::migrate(&mut conn, path, version)?;
        }
        let log = match (read_only, sync) {
            (false, SyncMode::Full) => take_move_log(&mut conn, path)?,
            _ => None,
        };
        let conn = Arc::new(Mutex::new(conn));
        // Without it the checkpointer does not start, and SQLite's own checkpoints run.
        let db_file = match read_only {
            true => None,
            // For writing, as the log is (`open_if_present`): some systems refuse to
            // flush a file opened read-only.
            false => match OpenOptions::new().write(true).open(path) {
                Ok(file) => Some(Arc::new(file)),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "the game database could not be opened for its checkpointer");
                    None
                }
            },
        };
        let checkpointer = db_file
            .clone()
            .and_then(|db| Checkpointer::start(path, sync, &conn, db, log.clone()));
        // Without the checkpointer's thread nothing would copy the log's events.
        let log = log.filter(|_| checkpointer.is_some());
        let wal = move_log::side_path(path, "-wal");
        Ok(SqliteStore {
            checkpointer,
            conn,
            db_file,
            path: path.to_path_buf(),
            wal,
            wal_file: Mutex::new(None),
            relaxed: AtomicBool::new(false),
            last_seqs: Mutex::default(),
            log,
            wal_dirty: AtomicBool::new(false),
            sync,
            read_only,
        })
    }

    /// The database file, for logs and error messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The sync mode this store was opened with.
    pub fn sync_mode(&self) -> SyncMode {
        self.sync
    }

    /// Closes the connection and reports a failure to do so cleanly (dropping the store
    /// closes it too, silently). SQLite checkpoints the WAL into the main file here.
    pub fn close(self) -> Result<(), StoreError> {
        let SqliteStore {
            checkpointer,
            conn,
            db_file,
            path,
            ..
        } = self;
        // Its connection closes first, so this one is the last and checkpoints.
        drop(checkpointer);
        let conn = Arc::try_unwrap(conn)
            .map_err(|_| StoreError::Poisoned)?
            .into_inner()
            .map_err(|_| StoreError::Poisoned)?;
        let closed = conn.close().map_err(|(_, source)| StoreError::Sqlite {
            path,
            cause: Arc::new(source),
        });
        drop(db_file);
        closed
    }

    /// The connection, at the configured `synchronous` (see `relaxed`).
    pub(super) fn lock(&self) -> Result<MutexGuard<'_, Connection>, StoreError> {
        let conn = self.conn.lock().map_err(|_| StoreError::Poisoned)?;
        if self.relaxed.load(Ordering::Relaxed) {
            self.set_synchronous(&conn, self.sync)?;
            self.relaxed.store(false, Ordering::Relaxed);
        }
        Ok(conn)
    }

    fn set_synchronous(&self, conn: &Connection, mode: SyncMode) -> Result<(), StoreError> {
        conn.pragma_update(None, "synchronous", mode.pragma_value())
            .map_err(self.db_err())
    }

    pub(super) fn db_err(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        |source| StoreError::Sqlite {
            path: self.path.clone(),
            cause: Arc::new(source),
        }
    }

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

    fn log_err(&self) -> impl Fn(io::Error) -> StoreError + '_ {
        move_log_err(&self.path)
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
            Write::Create(game) => {
                let inserted = tx
                    .prepare_cached(
                        "INSERT INTO games (id, created_at_ms, settings, black, white, black_name,
                             white_name, status, result, ended_at_ms, move_count)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                         ON CONFLICT (id) DO NOTHING",
                    )
                    .map_err(&db)?
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
                    .map_err(&db)?;
                if inserted == 0 {
                    return Err(StoreError::DuplicateGame {
                        game_id: game.id.clone(),
                    });
                }
            }
            Write::Event(event) => {
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
            }
            // A count with no event of its game just before it: on the game's last
            // event, or on the game itself when it has none.
            Write::MoveCount {
                game_id,
                move_count,
            } => {
                let on_event = tx
                    .prepare_cached(
                        "UPDATE events SET move_count = ?2 WHERE game_id = ?1
                         AND seq = (SELECT max(seq) FROM events WHERE game_id = ?1)",
                    )
                    .map_err(&db)?
                    .execute(rusqlite::params![game_id, move_count])
                    .map_err(&db)?;
                let updated = match on_event {
                    0 => tx
                        .prepare_cached("UPDATE games SET move_count = ?2 WHERE id = ?1")
                        .map_err(&db)?
                        .execute(rusqlite::params![game_id, move_count])
                        .map_err(&db)?,
                    n => n,
                };
                if updated == 0 {
                    return Err(StoreError::UnknownGame {
                        game_id: game_id.to_owned(),
                    });
                }
            }
            Write::Finish {
                game_id,
                result,
                ended_at_ms,
            } => {
                let updated = tx
                    .prepare_cached(&format!(
                        "UPDATE games SET status = 'finished', result = ?2, ended_at_ms = ?3,
                             move_count = {LAST_MOVE_COUNT}
                         WHERE id = ?1 AND status = 'live'"
                    ))
                    .map_err(&db)?
                    .execute(rusqlite::params![game_id, result, ended_at_ms])
                    .map_err(&db)?;
                if updated == 0 {
                    let exists = tx
                        .prepare_cached("SELECT 1 FROM games WHERE id = ?1")
                        .map_err(&db)?
                        .query_row([game_id], |_| Ok(()))
                        .optional()
                        .map_err(&db)?
                        .is_some();
                    return Err(if exists {
                        StoreError::AlreadyFinished {
                            game_id: game_id.to_owned(),
                        }
                    } else {
                        StoreError::UnknownGame {
                            game_id: game_id.to_owned(),
                        }
                    });
                }
                last_seqs.finished(game_id);
            }
            Write::Rejudge { game_id, result } => {
                let updated = tx
                    .prepare_cached(
                        "UPDATE games SET result = ?2 WHERE id = ?1 AND status = 'finished'",
                    )
                    .map_err(&db)?
                    .execute(rusqlite::params![game_id, result])
                    .map_err(&db)?;
                if updated == 0 {
                    return Err(StoreError::UnknownGame {
                        game_id: game_id.to_owned(),
                    });
                }
                // In the same transaction, so a crash cannot lose the rebuild it owes.
                ratings::owe_rebuild(tx, game_id, &db)?;
            }
            Write::Kibitz(line) => {
                let inserted = tx
                    .prepare_cached(
                        "INSERT INTO kibitz (game_id, at_ms, user_id, name, text)
                         SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM games WHERE id = ?1)",
                    )
                    .map_err(&db)?
                    .execute(rusqlite::params![
                        line.game_id,
                        line.at_ms,
                        line.user_id,
                        line.name,
                        line.text
                    ])
                    .map_err(&db)?;
                if inserted == 0 {
                    return Err(StoreError::UnknownGame {
                        game_id: line.game_id.clone(),
                    });
                }
            }
            Write::Rated(game_id) => ratings::mark_rated(tx, game_id, &db)?,
            Write::Fence { game_id, fence } => {
                // A number past SQLite's integers cannot be stored, so it is refused as
                // stale like any claim the stored fence does not allow.
                let claimed = i64::try_from(fence).ok();
                let updated = tx
                    .prepare_cached("UPDATE games SET fence = ?2 WHERE id = ?1 AND fence <= ?2")
                    .map_err(&db)?
                    .execute(rusqlite::params![game_id, claimed])
                    .map_err(&db)?;
                if updated == 0 {
                    let current: Option<i64> = tx
                        .prepare_cached("SELECT fence FROM games WHERE id = ?1")
                        .map_err(&db)?
                        .query_row([game_id], |row| row.get(0))
                        .optional()
                        .map_err(&db)?;
                    return Err(match current {
                        None => StoreError::UnknownGame {
                            game_id: game_id.to_owned(),
                        },
                        Some(current) => StoreError::Fenced {
                            game_id: game_id.to_owned(),
                            fence,
                            current: current.unsigned_abs(),
                        },
                    });
                }
            }
        }
        Ok(())
    }

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
            | Write::Fence { game_id, .. } => game_id,
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

/// The error of the move log of the database at `db`.
fn move_log_err(db: &Path) -> impl Fn(io::Error) -> StoreError + '_ {
    |cause| StoreError::MoveLog {
        path: move_log::files_of(db),
        cause: Arc::new(cause),
    }
}

/// Takes the database's move log, copying whatever its files hold into the database
/// first (a crash or a stop left it there); None when another process has it.
fn take_move_log(conn: &mut Connection, path: &Path) -> Result<Option<Arc<MoveLog>>, StoreError> {
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

/// The game's last event number in the file (0 before its first); None if no such game.
fn stored_last_seq(conn: &Connection, game_id: &str) -> rusqlite::Result<Option<u64>> {
    let last: Option<Option<i64>> = conn
        .prepare_cached(LAST_SEQ)?
        .query_row([game_id], |row| row.get(0))
        .optional()?;
    Ok(last.map(|seq| seq.unwrap_or(0).unsigned_abs()))
}

/// Opens `file` to be flushed; None when there is no such file.
fn open_if_present(file: &Path) -> io::Result<Option<File>> {
    // Opened for writing: some systems refuse to flush a file opened read-only.
    match OpenOptions::new().write(true).open(file) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Flushes the directory holding `file`, so that the file's name survives a power loss.
#[cfg(unix)]
fn sync_directory_of(file: &Path) -> io::Result<()> {
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)?.sync_all()
}

/// Elsewhere a directory cannot be opened and flushed like a file; the name is left to
/// the file system.
#[cfg(not(unix))]
fn sync_directory_of(_file: &Path) -> io::Result<()> {
    Ok(())
}

/// Refuses a file whose pages SQLite finds damaged, quoting the first few complaints.
fn quick_check(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let mut problems = Vec::new();
    conn.pragma_query(None, "quick_check", |row| {
        problems.push(row.get::<_, String>(0)?);
        Ok(())
    })
    .map_err(|source| migrations::classify_read_error(path, source))?;
    if problems.len() == 1 && problems[0] == "ok" {
        return Ok(());
    }
    let shown: Vec<&str> = problems.iter().take(3).map(String::as_str).collect();
    Err(StoreError::Corrupt {
        path: path.to_path_buf(),
        detail: format!("quick_check found: {}", shown.join("; ")),
    })
}

impl Store for SqliteStore {
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
    /// [`Store::sync_log`] before anyone is told, runs without SQLite's own fsync.
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

    fn unfinished_games(&self) -> Result<Vec<(GameRecord, Vec<EventRecord>)>, StoreError> {
        let mut conn = self.lock()?;
        // One read transaction, so every game's events match its row.
        let tx = conn.transaction().map_err(self.db_err())?;
        let sql = format!(
            "SELECT {} FROM games WHERE status = 'live' ORDER BY created_at_ms, id",
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

    fn save_review(&self, r: &ReviewRecord) -> Result<(), StoreError> {
        let conn = self.lock()?;
        conn.execute(
            "INSERT INTO reviews (id, created_at_ms, owner, game_id, move_number, sgf) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![r.id, r.created_at_ms, r.owner, r.game_id, r.move_number, r.sgf],
        )
        .map_err(self.db_err())?;
        Ok(())
    }

    fn review(&self, id: &str) -> Result<Option<ReviewRecord>, StoreError> {
        let conn = self.lock()?;
        let mut stmt = conn
            .prepare_cached("SELECT id, created_at_ms, owner, game_id, move_number, sgf FROM reviews WHERE id = ?1")
            .map_err(self.db_err())?;
        let mut rows = stmt
            .query_map([id], |row| {
                Ok(ReviewRecord {
                    id: row.get(0)?,
                    created_at_ms: row.get(1)?,
                    owner: row.get(2)?,
                    game_id: row.get(3)?,
                    move_number: row.get(4)?,
                    sgf: row.get(5)?,
                })
            })
            .map_err(self.db_err())?;
        rows.next().transpose().map_err(self.db_err())
    }

    fn count_reviews(&self, owner: &str) -> Result<u64, StoreError> {
        let conn = self.lock()?;
        let n: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM reviews WHERE owner = ?1",
                [owner],
                |row| row.get(0),
            )
            .map_err(self.db_err())?;
        Ok(n.unsigned_abs())
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

    fn set_block(
        &self,
        blocker: &str,
        blocked: &str,
        on: bool,
        at_ms: i64,
    ) -> Result<(), StoreError> {
        self.sql_set_block(blocker, blocked, on, at_ms)
    }

    fn blocks(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.sql_blocks()
    }

    fn file_report(&self, report: &NewReport) -> Result<u64, StoreError> {
        self.sql_file_report(report)
    }

    fn open_reports(
        &self,
        reporter: Option<&str>,
        limit: u32,
    ) -> Result<Vec<StoredReport>, StoreError> {
        self.sql_open_reports(reporter, limit)
    }

    fn close_report(&self, id: u64) -> Result<bool, StoreError> {
        self.sql_close_report(id)
    }

    fn kibitz(&self, game_id: &str) -> Result<Vec<KibitzRecord>, StoreError> {
        self.sql_kibitz(game_id)
    }

    fn forfeit_losses(
        &self,
        player: &str,
        limit: u32,
    ) -> Result<Vec<(GameRecord, Vec<EventRecord>)>, StoreError> {
        self.sql_forfeit_losses(player, limit)
    }

    fn rated_games(&self) -> Result<RatedGames, StoreError> {
        let mut conn = self.lock()?;
        let tx = conn.transaction().map_err(self.db_err())?;
        let (applied, pending) = ratings::rated_games_sql(GAME_COLUMNS);
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
        ratings::record(&tx, record, after, &self.db_err())?;
        tx.commit().map_err(self.db_err())
    }

    fn ratings_owed(&self) -> Result<i64, StoreError> {
        ratings::owed(&*self.lock()?, &self.db_err())
    }

    fn replace_ratings(&self, records: &[RatingRecord], settled: i64) -> Result<(), StoreError> {
        let mut conn = self.lock()?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.db_err())?;
        let db = self.db_err();
        ratings::clear(&tx, settled, &db)?;
        for (after, record) in (0..).zip(records) {
            ratings::record(&tx, record, after, &db)?;
        }
        tx.commit().map_err(self.db_err())
    }

    fn player_ratings(&self, player: &str) -> Result<Vec<RatingRow>, StoreError> {
        ratings::player_ratings(&*self.lock()?, player, &self.db_err())
    }

    fn rating_history(&self, player: &str, limit: u32) -> Result<Vec<RatingChangeRow>, StoreError> {
        ratings::rating_history(&*self.lock()?, player, limit, &self.db_err())
    }

    fn leaderboard(&self, pool: &str, limit: u32) -> Result<Vec<RatingRow>, StoreError> {
        ratings::leaderboard(&*self.lock()?, pool, limit, &self.db_err())
    }

    fn player_name(&self, player: &str) -> Result<Option<String>, StoreError> {
        ratings::player_name(&*self.lock()?, player, &self.db_err())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;
    use tempfile::TempDir;

    fn temp_db() -> (TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("games.sqlite");
        (dir, path)
    }

    fn open(path: &Path) -> SqliteStore {
        SqliteStore::open(path, SyncMode::Normal).expect("open the store")
    }

    fn game(id: &str, created_at_ms: i64, black: &str, white: &str) -> GameRecord {
        GameRecord {
            id: id.to_owned(),
            created_at_ms,
            settings: r#"{"size":19,"komi":7.5}"#.to_owned(),
            black: black.to_owned(),
            white: white.to_owned(),
            black_name: format!("{black} the Black"),
            white_name: format!("{white} the White"),
            status: GameStatus::Live,
            result: None,
            ended_at_ms: None,
            move_count: 0,
        }
    }

    fn event(game_id: &str, seq: u64) -> EventRecord {
        EventRecord {
            game_id: game_id.to_owned(),
            seq,
            kind: "move_played".to_owned(),
            payload: format!(r#"{{"vertex":"D{seq}"}}"#),
            at_ms: 1_000 + seq as i64,
        }
    }

    fn events(game_id: &str, seqs: std::ops::RangeInclusive<u64>) -> Vec<Append> {
        seqs.map(|seq| Append::Event(event(game_id, seq))).collect()
    }

    #[test]
    fn a_game_and_its_events_round_trip_through_the_file() {
        let (_dir, path) = temp_db();
        let store = open(&path);
        let g = game("g1", 10, "alice", "bob");
        store.create_game(&g).expect("create");
        store.append(&events("g1", 1..=2)).expect("first events");
        let mut batch = events("g1", 3..=4);
        batch.push(Append::MoveCount {
            game_id: "g1".to_owned(),
            move_count: 4,
        });
        store.append(&batch).expect("more events");
        // A game can also be created in the same batch as its first event.
        store
            .append(&[
                Append::Create(game("g2", 11, "carol", "dave")),
                Append::Event(event("g2", 1)),
            ])
            .expect("create with first event");

        let expected = GameRecord {
            move_count: 4,
            ..g.clone()
        };
        assert_eq!(store.game("g1").expect("read"), Some(expected.clone()));
        let want: Vec<EventRecord> = (1..=4).map(|seq| event("g1", seq)).collect();
        assert_eq!(store.events("g1").expect("events"), want);
        assert_eq!(
            store.events_in("g1", 2..4).expect("a range of events"),
            want[1..3],
            "a range reads its seqs only, the end excluded"
        );
        assert_eq!(store.events("g2").expect("events"), vec![event("g2", 1)]);
        assert_eq!(store.game("nope").expect("read"), None);
        assert!(store.events("nope").expect("events").is_empty());
        store.close().expect("close");

        let store = open(&path);
        assert_eq!(store.game("g1").expect("read"), Some(expected));
        assert_eq!(store.events("g1").expect("events"), want);
    }

    /// What the file itself holds: the game row's move count and each event's.
    fn stored_counts(store: &SqliteStore, id: &str) -> (i64, Vec<Option<i64>>) {
        let conn = store.lock().expect("lock");
        let row = conn
            .query_row("SELECT move_count FROM games WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .expect("the game's row");
        let mut stmt = conn
            .prepare("SELECT move_count FROM events WHERE game_id = ?1 ORDER BY seq")
            .expect("prepare");
        let events = stmt
            .query_map([id], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        (row, events)
    }

    #[test]
    fn a_move_count_is_kept_on_its_event_and_copied_into_the_row_when_the_game_ends() {
        let (_dir, path) = temp_db();
        let store = open(&path);
        store.create_game(&game("g", 1, "a", "b")).expect("create");
        let count = |move_count| Append::MoveCount {
            game_id: "g".to_owned(),
            move_count,
        };
        let read = |store: &SqliteStore| store.game("g").expect("read").map(|g| g.move_count);

        store
            .append(&[Append::Event(event("g", 1)), count(1)])
            .expect("a move");
        assert_eq!(read(&store), Some(1));
        assert_eq!(
            stored_counts(&store, "g"),
            (0, vec![Some(1)]),
            "the move wrote its event, not the game's row"
        );
        // An event that is not a move carries no count; the last counted one still says.
        store.append(&events("g", 2..=2)).expect("an event");
        assert_eq!(read(&store), Some(1));
        // A count with no event before it goes on the game's last event.
        store.append(&[count(5)]).expect("a count alone");
        assert_eq!(stored_counts(&store, "g"), (0, vec![Some(1), Some(5)]));
        let listed = store.list_games(&GameQuery::default()).expect("list");
        assert_eq!(listed.iter().map(|g| g.move_count).collect::<Vec<_>>(), [5]);

        store
            .append(&[Append::Finish {
                game_id: "g".to_owned(),
                result: "B+R".to_owned(),
                ended_at_ms: 9,
            }])
            .expect("finish");
        assert_eq!(stored_counts(&store, "g").0, 5, "copied into the row");
        assert_eq!(read(&store), Some(5));

        // A game with no events keeps a count in its row.
        store.create_game(&game("e", 2, "a", "b")).expect("create");
        store
            .append(&[Append::MoveCount {
                game_id: "e".to_owned(),
                move_count: 2,
            }])
            .expect("a count");
        assert_eq!(stored_counts(&store, "e"), (2, vec![]));
        assert_eq!(
            store.game("e").expect("read").map(|g| g.move_count),
            Some(2)
        );
    }

    fn synchronous(store: &SqliteStore) -> i64 {
        store
            .lock()
            .expect("lock")
            .pragma_query_value(None, "synchronous", |r| r.get(0))
            .expect("pragma")
    }

    /// Events with something else about their game in the batch, which SQLite writes
    /// (plain events go to the move log).
    fn with_chat(game_id: &str, seqs: std::ops::RangeInclusive<u64>) -> Vec<Append> {
        let mut batch = events(game_id, seqs);
        batch.push(Append::Kibitz(kibitz(game_id, 1)));
        batch
    }

    /// A store in `full` mode (so with a move log) holding game "g".
    fn full_store_with_game() -> (TempDir, PathBuf, SqliteStore) {
        let (dir, path) = temp_db();
        let store = SqliteStore::open(&path, SyncMode::Full).expect("open");
        store
            .create_game(&game("g", 1, "alice", "bob"))
            .expect("create");
        (dir, path, store)
    }

    /// The game's events `seqs`, then its move count after them (one per event).
    fn counted(game_id: &str, seqs: std::ops::RangeInclusive<u64>) -> Vec<Append> {
        let move_count = *seqs.end() as u32;
        let mut batch = events(game_id, seqs);
        batch.push(Append::MoveCount {
            game_id: game_id.into(),
            move_count,
        });
        batch
    }

    /// How many of the game's events SQLite itself holds.
    fn in_file(store: &SqliteStore, id: &str) -> i64 {
        store
            .conn
            .lock()
            .expect("lock")
            .query_row(
                "SELECT count(*) FROM events WHERE game_id = ?1",
                [id],
                |r| r.get(0),
            )
            .expect("count")
    }

    #[test]
    fn in_full_mode_a_group_write_leaves_the_flush_to_sync_log() {
        let (_dir, _path, store) = full_store_with_game();
        let written = store.append_unsynced(&with_chat("g", 1..=2));
        assert_eq!(written.expect("written"), Durability::AfterSyncLog);
        // The connection stays at NORMAL (1) for the next group, unswitched...
        let raw = |store: &SqliteStore| -> i64 {
            let conn = store.conn.lock().expect("lock");
            conn.pragma_query_value(None, "synchronous", |r| r.get(0))
                .expect("pragma")
        };
        assert_eq!(raw(&store), 1);
        store
            .append_unsynced(&with_chat("g", 3..=3))
            .expect("written");
        assert_eq!(raw(&store), 1);
        // ...and anything else that takes it finds FULL (2) again.
        assert_eq!(synchronous(&store), 2);
        assert_eq!(raw(&store), 2);
        store.sync_log().expect("flushed");
        // A rejected group write changes nothing; whatever comes next still finds FULL.
        let refused = store.append_unsynced(&events("g", 2..=2));
        assert!(
            matches!(refused, Err(StoreError::SeqOutOfOrder { .. })),
            "{refused:?}"
        );
        assert_eq!(synchronous(&store), 2);
        assert_eq!(store.events("g").expect("events").len(), 3);
    }

    #[test]
    fn appending_events_prepares_its_statements_once() {
        let (_dir, _path, store) = full_store_with_game();
        for seq in 1..=20 {
            store
                .append_unsynced(&with_chat("g", seq..=seq))
                .expect("written");
        }
        let conn = store.conn.lock().expect("lock");
        let check = conn.prepare_cached(LAST_SEQ).expect("cached");
        assert_eq!(
            check.get_status(rusqlite::StatementStatus::Run),
            1,
            "the game's last number is read from the file once, then known"
        );
        let insert = conn.prepare_cached(INSERT_EVENT).expect("cached");
        assert_eq!(insert.get_status(rusqlite::StatementStatus::Run), 20);
        assert_eq!(insert.get_status(rusqlite::StatementStatus::RePrepare), 0);
    }

    #[test]
    fn plain_events_go_to_the_move_log_and_reads_see_them_before_and_after_the_copy() {
        let (_dir, _path, store) = full_store_with_game();
        assert_eq!(
            store
                .append_unsynced(&counted("g", 1..=3))
                .expect("written"),
            Durability::AfterSyncLog
        );
        store.sync_log().expect("flushed");
        assert_eq!(in_file(&store, "g"), 0, "logged, not in SQLite yet");
        assert_eq!(
            store.events("g").expect("events"),
            (1..=3).map(|n| event("g", n)).collect::<Vec<_>>()
        );
        assert_eq!(store.game("g").expect("game").expect("found").move_count, 3);
        // A rejected plain event writes nothing anywhere.
        let refused = store.append_unsynced(&events("g", 3..=3));
        assert!(
            matches!(refused, Err(StoreError::SeqOutOfOrder { expected: 4, .. })),
            "{refused:?}"
        );
        let log = store.log.clone().expect("a move log");
        assert!(fold(&store.conn.lock().expect("lock"), &log, true).expect("copied"));
        assert_eq!(in_file(&store, "g"), 3, "copied in");
        assert_eq!(store.events("g").expect("events").len(), 3, "once each");
        assert_eq!(store.game("g").expect("game").expect("found").move_count, 3);
        store
            .append_unsynced(&events("g", 4..=4))
            .expect("the next one");
        assert_eq!(store.events_in("g", 3..5).expect("events").len(), 2);
    }

    #[test]
    fn finishing_a_game_copies_its_logged_events_in_first() {
        let (_dir, _path, store) = full_store_with_game();
        store.append_unsynced(&counted("g", 1..=2)).expect("logged");
        let finish = [
            Append::Event(event("g", 3)),
            Append::Finish {
                game_id: "g".into(),
                result: "B+R".into(),
                ended_at_ms: 9,
            },
        ];
        store.append_unsynced(&finish).expect("finished");
        store.sync_log().expect("flushed");
        assert_eq!(in_file(&store, "g"), 3);
        let finished = store.game("g").expect("game").expect("found");
        assert_eq!(
            (finished.status, finished.move_count),
            (GameStatus::Finished, 2)
        );
        assert_eq!(store.events("g").expect("events").len(), 3);
    }

    /// Copies the files of the database `from` with these suffixes that exist to the
    /// same names beside `to`.
    fn copy_beside(from: &Path, to: &Path, suffixes: &[&str]) {
        for suffix in suffixes {
            let src = move_log::side_path(from, suffix);
            if src.exists() {
                fs::copy(&src, move_log::side_path(to, suffix)).expect("copy");
            }
        }
    }

    /// Copies the database, its SQLite log and the move log as a crash would leave
    /// them: what was flushed, with the store still open.
    fn crash_copy(from: &Path, to: &Path) {
        copy_beside(from, to, &["", "-wal", "-moves-0", "-moves-1"]);
    }

    #[test]
    fn logged_events_outlive_a_crash_and_are_copied_in_at_the_next_open() {
        let (dir, path, store) = full_store_with_game();
        store.append_unsynced(&events("g", 1..=4)).expect("logged");
        store.sync_log().expect("flushed");
        let copy = dir.path().join("after-crash.sqlite");
        crash_copy(&path, &copy);
        // A second store on the same file finds the log taken, and writes directly.
        let beside = SqliteStore::open(&path, SyncMode::Full).expect("open beside");
        assert!(beside.log.is_none());
        drop(beside);

        let reopened = SqliteStore::open(&copy, SyncMode::Full).expect("reopen");
        assert_eq!(in_file(&reopened, "g"), 4, "copied in at the open");
        assert_eq!(reopened.events("g").expect("events").len(), 4);
        reopened
            .append_unsynced(&events("g", 5..=5))
            .expect("the next one");
        reopened.sync_log().expect("flushed");
        drop(reopened);
        // Closing copies the rest in.
        let raw = Connection::open(&copy).expect("raw");
        let stored: i64 = raw
            .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
            .expect("count");
        assert_eq!(stored, 5);
    }

    #[test]
    fn a_move_log_that_does_not_fit_the_database_is_refused() {
        let (dir, path, store) = full_store_with_game();
        store.append_unsynced(&events("g", 1..=2)).expect("logged");
        store.sync_log().expect("flushed");
        let other = dir.path().join("other.sqlite");
        drop(SqliteStore::open(&other, SyncMode::Full).expect("another database"));
        copy_beside(&path, &other, &["-moves-0", "-moves-1"]);
        let refused = SqliteStore::open(&other, SyncMode::Full);
        assert!(
            matches!(refused, Err(StoreError::Corrupt { .. })),
            "{refused:?}"
        );
    }

    #[test]
    fn in_normal_mode_a_group_write_is_all_there_is() {
        let (_dir, path) = temp_db();
        let store = open(&path);
        store
            .create_game(&game("g", 1, "alice", "bob"))
            .expect("create");
        let written = store.append_unsynced(&events("g", 1..=1));
        assert_eq!(written.expect("written"), Durability::Durable);
        assert_eq!(synchronous(&store), 1, "NORMAL");
    }

    #[test]
    fn a_missing_log_has_nothing_to_flush() {
        let (dir, path) = temp_db();
        let missing = open_if_present(&dir.path().join("games.sqlite-wal"));
        assert!(missing.expect("no error").is_none());
        fs::write(&path, b"x").expect("write");
        assert!(open_if_present(&path).expect("opened").is_some());
    }

    #[test]
    fn the_log_is_checkpointed_while_open_and_reused_under_steady_writes() {
        let (_dir, path) = temp_db();
        let store = open(&path);
        let wal = PathBuf::from(format!("{}-wal", path.display()));
        let size = |p: &Path| fs::metadata(p).map_or(0, |m| m.len());
        for g in 0..200 {
            store
                .create_game(&game(&format!("g{g}"), g, "alice", "bob"))
                .expect("create");
        }
        // The log is held open from here on.
        store.sync_log().expect("flushed");
        let db_before = size(&path);
        // One commit per move, games all over the file, with no pause: every commit adds
        // at least one page to the log, and no commit ever checkpoints by itself. Write
        // until the checkpointer has copied pages in and the log is well under what was
        // written, however slowly its thread is scheduled; a log that only grows never
        // gets there, and the cap ends the test with it failing.
        const CAP: u64 = 200_000;
        let (mut commits, mut seq) = (0u64, 0u64);
        let reused = |commits: u64| size(&wal) < commits * 4096 / 2;
        while commits < CAP
            && !(commits >= 2 * CHECKPOINT_PAGES as u64
                && size(&path) > db_before
                && reused(commits))
        {
            seq += 1;
            for g in 0..200 {
                store
                    .append(&events(&format!("g{g}"), seq..=seq))
                    .expect("append");
                commits += 1;
            }
        }
        assert!(size(&path) > db_before, "the checkpointer copied pages in");
        assert!(
            reused(commits),
            "the log was reused, not grown: {} bytes for {commits} commits",
            size(&wal)
        );
        assert_eq!(store.events("g7").expect("events").len() as u64, seq);
        #[cfg(unix)]
        {
            // Rewritten from its start, the log is still the file first opened, so the
            // descriptor `sync_log` holds flushes the log SQLite writes.
            use std::os::unix::fs::MetadataExt;
            let held = store.wal_file.lock().expect("lock");
            let held = held.as_ref().expect("held").metadata().expect("fstat");
            let now = fs::metadata(&wal).expect("stat");
            assert_eq!((held.dev(), held.ino()), (now.dev(), now.ino()));
            assert!(held.nlink() > 0);
        }
        store.sync_log().expect("flushed");
        store.close().expect("close");
        assert!(
            !wal.exists(),
            "closing still folds the log in and removes it"
        );
    }

    #[test]
    fn only_live_games_come_back_for_recovery() {
        let (_dir, path) = temp_db();
        let store = open(&path);
        for (id, at) in [("late", 30), ("early", 10), ("done", 20)] {
            store
                .create_game(&game(id, at, "alice", "bob"))
                .expect("create");
        }
        store.append(&events("late", 1..=3)).expect("events");
        store.append(&events("done", 1..=2)).expect("events");
        store.append(&events("early", 1..=1)).expect("events");
        store
            .append(&[
                Append::Event(event("done", 3)),
                Append::Finish {
                    game_id: "done".to_owned(),
                    result: "W+R".to_owned(),
                    ended_at_ms: 99,
                },
            ])
            .expect("finish");

        let live = store.unfinished_games().expect("unfinished");
        let ids: Vec<&str> = live.iter().map(|(g, _)| g.id.as_str()).collect();
        assert_eq!(ids, ["early", "late"], "oldest first, finished left out");
        let seqs: Vec<u64> = live[1].1.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [1, 2, 3]);
        assert!(live[1].1.iter().all(|e| e.game_id == "late"));

        let done = store.game("done").expect("read").expect("exists");
        assert_eq!(done.status, GameStatus::Finished);
        assert_eq!(done.result.as_deref(), Some("W+R"));
        assert_eq!(done.ended_at_ms, Some(99));

        // A result is never overwritten.
        let again = store.append(&[Append::Finish {
            game_id: "done".to_owned(),
            result: "B+R".to_owned(),
            ended_at_ms: 100,
        }]);
        assert!(
            matches!(again, Err(StoreError::AlreadyFinished { .. })),
            "{again:?}"
        );
        let done = store.game("done").expect("read").expect("exists");
        assert_eq!(done.result.as_deref(), Some("W+R"));
    }

    fn kibitz(game_id: &str, at_ms: i64) -> KibitzRecord {
        KibitzRecord {
            game_id: game_id.to_owned(),
            at_ms,
            user_id: "kibitzer".to_owned(),
            name: "Kibitzer".to_owned(),
            text: format!("line at {at_ms}"),
        }
    }

    #[test]
    fn spectators_chat_is_kept_per_game_oldest_first() {
        let (_dir, path) = temp_db();
        let store = open(&path);
        store.create_game(&game("g", 1, "a", "b")).expect("create");
        store.create_game(&game("h", 1, "a", "b")).expect("create");
        let lines = [kibitz("g", 20), kibitz("h", 5), kibitz("g", 10)];
        store
            .append(&lines.map(Append::Kibitz))
            .expect("kept in one batch");
        drop(store);
        let store = open(&path);
        let kept = store.kibitz("g").expect("read");
        assert_eq!(kept, [kibitz("g", 10), kibitz("g", 20)]);
        assert_eq!(store.kibitz("none").expect("read"), []);
    }

    #[test]
    fn requests_about_unknown_or_taken_games_are_refused() {
        let (_dir, path) = temp_db();
        let store = open(&path);
        store.create_game(&game("g", 1, "a", "b")).expect("create");
        let dup = store.create_game(&game("g", 2, "c", "d"));
        assert!(
            matches!(dup, Err(StoreError::DuplicateGame { .. })),
            "{dup:?}"
        );
        assert_eq!(
            store.game("g").expect("read").map(|g| g.black),
            Some("a".to_owned())
        );

        let unknown = [
            Append::Event(event("x", 1)),
            Append::MoveCount {
                game_id: "x".to_owned(),
                move_count: 1,
            },
            Append::Finish {
                game_id: "x".to_owned(),
                result: "0".to_owned(),
                ended_at_ms: 1,
            },
            Append::Kibitz(kibitz("x", 1)),
        ];
        for item in unknown {
            let err = store.append(std::slice::from_ref(&item));
            assert!(
                matches!(err, Err(StoreError::UnknownGame { .. })),
                "{item:?}: {err:?}"
            );
            assert!(err.err().is_some_and(|e| e.is_rejection()));
        }
    }

    fn fence(game_id: &str, fence: u64) -> Append {
        Append::Fence {
            game_id: game_id.to_owned(),
            fence,
        }
    }

    fn stored_fence(store: &SqliteStore, game_id: &str) -> i64 {
        store
            .lock()
            .expect("lock")
            .query_row("SELECT fence FROM games WHERE id = ?1", [game_id], |row| {
                row.get(0)
            })
            .expect("fence")
    }

    #[test]
    fn a_fence_only_grows_and_a_stale_claim_rolls_the_batch_back() {
        let (_dir, path) = temp_db();
        let store = open(&path);
        store.create_game(&game("g", 1, "a", "b")).expect("create");
        assert_eq!(stored_fence(&store, "g"), 0, "a new game is unfenced");
        store
            .append(&[fence("g", 0)])
            .expect("an equal claim passes");
        store
            .append(&[fence("g", 5)])
            .expect("a higher claim passes");
        assert_eq!(stored_fence(&store, "g"), 5);
        store
            .append(&[fence("g", 5), Append::Event(event("g", 1))])
            .expect("the owner claims again and writes");

        // A former owner's claim fails, and with it everything in its batch.
        let err = store.append(&[
            Append::Create(game("h", 2, "c", "d")),
            fence("g", 4),
            Append::Event(event("g", 2)),
        ]);
        assert!(
            matches!(
                err,
                Err(StoreError::Fenced {
                    fence: 4,
                    current: 5,
                    ..
                })
            ),
            "{err:?}"
        );
        assert!(err.err().is_some_and(|e| e.is_rejection()));
        assert_eq!(store.game("h").expect("read"), None);
        assert_eq!(store.events("g").expect("events").len(), 1);
        assert_eq!(stored_fence(&store, "g"), 5);

        // A number SQLite cannot hold is no claim either.
        let err = store.append(&[fence("g", u64::MAX)]);
        assert!(matches!(err, Err(StoreError::Fenced { .. })), "{err:?}");
        assert_eq!(stored_fence(&store, "g"), 5);

        let err = store.append(&[fence("x", 1)]);
        assert!(
            matches!(err, Err(StoreError::UnknownGame { .. })),
            "{err:?}"
        );
    }

    #[test]
    fn game_lists_page_newest_first_without_skipping_ties() {
        let (_dir, path) = temp_db();
        let store = open(&path);
        let games = [
            game("a", 100, "alice", "bob"),
            game("b", 200, "carol", "alice"),
            game("c", 200, "bob", "carol"),
            game("d", 200, "alice", "dave"),
            game("e", 300, "bob", "dave"),
            game("f", 400, "alice", "carol"),
            game("g", 500, "erin", "bob"),
        ];
        let batch: Vec<Append> = games.iter().cloned().map(Append::Create).collect();
        store.append(&batch).expect("create");
        store
            .append(&[Append::Finish {
                game_id: "f".to_owned(),
                result: "B+3.5".to_owned(),
                ended_at_ms: 450,
            }])
            .expect("finish");

        let all = store.list_games(&GameQuery::default()).expect("list");
        let ids: Vec<&str> = all.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["g", "f", "e", "d", "c", "b", "a"]);

        // Pages of 2 with the (created_at_ms, id) cursor cross the three-way tie at 200.
        let mut paged = Vec::new();
        let mut query = GameQuery {
            limit: 2,
            ..GameQuery::default()
        };
        loop {
            let page = store.list_games(&query).expect("page");
            assert!(page.len() <= 2);
            let Some(last) = page.last() else { break };
            query.before_ms = Some(last.created_at_ms);
            query.before_id = Some(last.id.clone());
            paged.extend(page.into_iter().map(|g| g.id));
        }
        assert_eq!(paged, ["g", "f", "e", "d", "c", "b", "a"]);

        // A bare millisecond cursor excludes that whole millisecond.
        let before = store
            .list_games(&GameQuery {
                before_ms: Some(200),
                ..GameQuery::default()
            })
            .expect("list");
        assert_eq!(
            before.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(),
            ["a"]
        );

        let alice = store
            .list_games(&GameQuery {
                player: Some("alice".to_owned()),
                ..GameQuery::default()
            })
            .expect("list");
        let ids: Vec<&str> = alice.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["f", "d", "b", "a"], "alice as Black or White");

        let alice_live_page = store
            .list_games(&GameQuery {
                player: Some("alice".to_owned()),
                status: Some(GameStatus::Live),
                before_ms: Some(200),
                before_id: Some("d".to_owned()),
                limit: 1,
            })
            .expect("list");
        let ids: Vec<&str> = alice_live_page.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["b"]);

        let finished = store
            .list_games(&GameQuery {
                status: Some(GameStatus::Finished),
                ..GameQuery::default()
            })
            .expect("list");
        assert_eq!(
            finished.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(),
            ["f"]
        );

        let none = store
            .list_games(&GameQuery {
                limit: 0,
                ..GameQuery::default()
            })
            .expect("list");
        assert!(none.is_empty());
    }

    #[test]
    fn a_list_never_returns_more_than_the_cap() {
        let (_dir, path) = temp_db();
        let store = open(&path);
        let batch: Vec<Append> = (0..GameQuery::MAX_LIMIT + 5)
            .map(|i| Append::Create(game(&format!("g{i:03}"), i64::from(i), "a", "b")))
            .collect();
        store.append(&batch).expect("create");
        let page = store
            .list_games(&GameQuery {
                limit: u32::MAX,
                ..GameQuery::default()
            })
            .expect("list");
        assert_eq!(page.len(), GameQuery::MAX_LIMIT as usize);
        assert_eq!(page[0].id, "g204");
    }

    #[test]
    fn a_duplicate_seq_fails_the_whole_batch() {
        let (_dir, path) = temp_db();
        let store = open(&path);
        store.create_game(&game("g", 1, "a", "b")).expect("create");
        store.append(&events("g", 1..=2)).expect("events");

        let err = store.append(&[Append::Event(event("g", 2))]);
        assert!(
            matches!(
                err,
                Err(StoreError::SeqOutOfOrder {
                    seq: 2,
                    expected: 3,
                    ..
                })
            ),
            "{err:?}"
        );

        // A duplicate after good items: nothing of the batch may be written.
        let mut replaced = event("g", 1);
        replaced.payload = r#"{"vertex":"Q16"}"#.to_owned();
        let err = store.append(&[
            Append::Create(game("h", 2, "c", "d")),
            Append::Event(event("g", 3)),
            Append::MoveCount {
                game_id: "g".to_owned(),
                move_count: 3,
            },
            Append::Event(replaced),
        ]);
        assert!(
            matches!(
                err,
                Err(StoreError::SeqOutOfOrder {
                    seq: 1,
                    expected: 4,
                    ..
                })
            ),
            "{err:?}"
        );
        assert_eq!(store.game("h").expect("read"), None);
        assert_eq!(
            store.game("g").expect("read").map(|g| g.move_count),
            Some(0)
        );
        let want: Vec<EventRecord> = (1..=2).map(|seq| event("g", seq)).collect();
        assert_eq!(
            store.events("g").expect("events"),
            want,
            "history unchanged"
        );
        store
            .append(&[Append::Event(event("g", 3))])
            .expect("the rolled-back event's number is still the next");
    }

    #[test]
    fn a_gap_or_zero_seq_is_refused() {
        let (_dir, path) = temp_db();
        let store = open(&path);
        store.create_game(&game("g", 1, "a", "b")).expect("create");
        for seq in [0, 2] {
            let err = store.append(&[Append::Event(event("g", seq))]);
            assert!(
                matches!(err, Err(StoreError::SeqOutOfOrder { expected: 1, .. })),
                "seq {seq}: {err:?}"
            );
        }
        store.append(&events("g", 1..=2)).expect("events");
        let err = store.append(&[Append::Event(event("g", 4))]);
        assert!(
            matches!(
                err,
                Err(StoreError::SeqOutOfOrder {
                    seq: 4,
                    expected: 3,
                    ..
                })
            ),
            "{err:?}"
        );
        let err = store.append(&[Append::Event(event("g", u64::MAX))]);
        assert!(
            matches!(err, Err(StoreError::SeqOutOfOrder { .. })),
            "{err:?}"
        );
        assert_eq!(store.events("g").expect("events").len(), 2);
    }

    /// Deterministic bytes that are not a SQLite header.
    fn garbage(len: usize) -> Vec<u8> {
        let mut state: u32 = 0x2545_f491;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                state.to_le_bytes()[0]
            })
            .collect()
    }

    fn assert_refused_untouched(path: &Path, err: StoreError, bytes: &[u8]) {
        let text = err.to_string();
        assert!(
            text.contains(&path.display().to_string()),
            "the message names the file: {text}"
        );
        assert_eq!(fs::read(path).expect("read back"), bytes, "file unchanged");
        let wal = PathBuf::from(format!("{}-wal", path.display()));
        assert!(!wal.exists(), "no WAL file was created beside it");
    }

    #[test]
    fn a_file_of_garbage_is_refused_and_left_alone() {
        let (_dir, path) = temp_db();
        for bytes in [garbage(8192), b"hello, this is not a database\n".to_vec()] {
            fs::write(&path, &bytes).expect("write garbage");
            let err = SqliteStore::open(&path, SyncMode::Full).expect_err("refused");
            assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
            assert_refused_untouched(&path, err, &bytes);
        }
    }

    #[test]
    fn a_damaged_page_is_caught_by_the_quick_check() {
        let (_dir, path) = temp_db();
        let store = open(&path);
        store.create_game(&game("g", 1, "a", "b")).expect("create");
        store.append(&events("g", 1..=50)).expect("events");
        store.close().expect("close");
        let mut bytes = fs::read(&path).expect("read");
        let page_size = 4096;
        assert!(bytes.len() > 2 * page_size, "the file has a second page");
        // Scribble over the b-tree header of page 2.
        for byte in &mut bytes[page_size..page_size + 12] {
            *byte = 0xff;
        }
        fs::write(&path, &bytes).expect("damage");
        let err = SqliteStore::open(&path, SyncMode::Full).expect_err("refused");
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
        assert_refused_untouched(&path, err, &bytes);
    }

    #[test]
    fn a_directory_is_not_a_database() {
        let (dir, _path) = temp_db();
        let err = SqliteStore::open(dir.path(), SyncMode::Full).expect_err("refused");
        assert!(matches!(err, StoreError::IsDirectory { .. }), "{err:?}");
        assert!(err.to_string().contains(&dir.path().display().to_string()));
    }

    #[test]
    fn a_database_from_a_newer_tengen_is_refused() {
        let (_dir, path) = temp_db();
        {
            let conn = Connection::open(&path).expect("raw open");
            conn.execute_batch(&format!(
                "CREATE TABLE games (id TEXT PRIMARY KEY);
                 PRAGMA application_id = {};
                 PRAGMA user_version = 99;",
                migrations::APPLICATION_ID
            ))
            .expect("make a future schema");
        }
        let bytes = fs::read(&path).expect("read");
        let err = SqliteStore::open(&path, SyncMode::Full).expect_err("refused");
        assert!(
            matches!(err, StoreError::TooNew { found: 99, .. }),
            "{err:?}"
        );
        assert_refused_untouched(&path, err, &bytes);
    }

    #[test]
    fn another_programs_database_is_refused() {
        let (_dir, path) = temp_db();
        {
            let conn = Connection::open(&path).expect("raw open");
            conn.execute_batch("CREATE TABLE notes (body TEXT);")
                .expect("someone else's schema");
        }
        let bytes = fs::read(&path).expect("read");
        let err = SqliteStore::open(&path, SyncMode::Full).expect_err("refused");
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
        assert_refused_untouched(&path, err, &bytes);
    }

    #[test]
    fn reopening_keeps_everything_and_migrates_once() {
        let (_dir, path) = temp_db();
        let store = SqliteStore::open(&path, SyncMode::Full).expect("open");
        assert_eq!(store.sync_mode(), SyncMode::Full);
        assert_eq!(store.path(), path);
        store.create_game(&game("g", 1, "a", "b")).expect("create");
        store.append(&events("g", 1..=3)).expect("events");
        store.close().expect("close");

        for _ in 0..2 {
            let store = SqliteStore::open(&path, SyncMode::Full).expect("reopen");
            assert_eq!(store.events("g").expect("events").len(), 3);
            let conn = store.lock().expect("lock");
            let version: i64 = conn
                .pragma_query_value(None, "user_version", |row| row.get(0))
                .expect("version");
            assert_eq!(version, migrations::latest_version());
            let mode: String = conn
                .pragma_query_value(None, "journal_mode", |row| row.get(0))
                .expect("mode");
            assert_eq!(mode, "wal");
            let sync: i64 = conn
                .pragma_query_value(None, "synchronous", |row| row.get(0))
                .expect("sync");
            assert_eq!(sync, 2, "FULL");
        }
    }

    #[test]
    fn a_read_only_database_fails_the_writability_check() {
        let (dir, path) = temp_db();
        let store = open(&path);
        store.create_game(&game("g", 1, "a", "b")).expect("create");
        store.check_writable().expect("a fresh store is writable");
        store.close().expect("close");
        let before = fs::read(&path).expect("read");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).expect("chmod file");

        // Root (as in CI) ignores permission bits, so a chmod alone proves nothing there.
        // SQLite's own read-only open is the mechanism that holds for everyone. (The
        // directory stays writable for this part: a reader of a WAL database must be
        // able to create its shared-memory file.)
        let read_only = SqliteStore::open_read_only(&path).expect("open read-only");
        assert_eq!(read_only.events("g").expect("reads work").len(), 0);
        let err = read_only.check_writable().expect_err("not writable");
        assert!(matches!(err, StoreError::Sqlite { .. }), "{err:?}");
        assert!(err.to_string().contains(&path.display().to_string()));
        let write = read_only.append(&[Append::Event(event("g", 1))]);
        assert!(write.is_err(), "{write:?}");
        drop(read_only);

        // Where the permission bits do bite (not root), a normal open of a 0444 file in a
        // 0555 directory must not pass the check either. Probe: if we can still create a
        // file in the directory, we are privileged and this part cannot fail honestly.
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o555)).expect("chmod dir");
        let privileged = fs::write(dir.path().join("probe"), b"x").is_ok();
        if !privileged {
            let outcome = SqliteStore::open(&path, SyncMode::Full).and_then(|s| s.check_writable());
            assert!(
                outcome.is_err(),
                "a 0444 file in a 0555 directory is not writable"
            );
        }

        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod dir");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).expect("chmod file");
        assert_eq!(
            fs::read(&path).expect("read"),
            before,
            "nothing was written"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Whatever numbers arrive, alone or in batches, the store keeps exactly the
        /// 1, 2, 3 … prefix it accepted, per game, and refuses everything else: a batch
        /// with one wrong number writes nothing of itself.
        #[test]
        fn only_the_next_seq_is_ever_accepted(
            batches in proptest::collection::vec(
                proptest::collection::vec((0usize..3, 0u64..6), 1..4),
                1..40,
            )
        ) {
            let (_dir, path) = temp_db();
            let store = open(&path);
            let ids = ["g0", "g1", "g2"];
            for (i, id) in ids.iter().enumerate() {
                store.create_game(&game(id, i as i64, "a", "b")).expect("create");
            }
            let mut next = [1u64; 3];
            for batch in batches {
                let items: Vec<Append> =
                    batch.iter().map(|&(g, seq)| Append::Event(event(ids[g], seq))).collect();
                let outcome = store.append(&items);
                let mut after = next;
                let mut first_wrong = None;
                for &(g, seq) in &batch {
                    if seq != after[g] {
                        first_wrong = Some(after[g]);
                        break;
                    }
                    after[g] += 1;
                }
                match first_wrong {
                    None => {
                        prop_assert!(outcome.is_ok(), "{:?}", outcome);
                        next = after;
                    }
                    Some(want) => prop_assert!(
                        matches!(outcome, Err(StoreError::SeqOutOfOrder { expected, .. }) if expected == want),
                        "{:?}", outcome
                    ),
                }
            }
            for (g, id) in ids.iter().enumerate() {
                let seqs: Vec<u64> = store.events(id).expect("events").iter().map(|e| e.seq).collect();
                prop_assert_eq!(seqs, (1..next[g]).collect::<Vec<_>>());
            }
        }

        /// Through the move log, whatever mix of plain groups (some with a wrong
        /// number), groups SQLite writes, copies, clean reopenings and crashes: every
        /// game reads back exactly the events accepted, each once, in order.
        #[test]
        fn the_move_log_loses_and_repeats_nothing(
            ops in proptest::collection::vec((0u8..6, 0usize..3, 1u64..4, any::<bool>()), 1..24)
        ) {
            let (dir, path) = temp_db();
            let mut path = path;
            let mut store = SqliteStore::open(&path, SyncMode::Full).expect("open");
            let ids = ["g0", "g1", "g2"];
            for (i, id) in ids.iter().enumerate() {
                store.create_game(&game(id, i as i64, "a", "b")).expect("create");
            }
            let mut next = [1u64; 3];
            for (step, (op, g, n, flag)) in ops.into_iter().enumerate() {
                let first = next[g];
                match op {
                    // Plain events: to the log; a wrong first number writes nothing.
                    0 | 1 => {
                        let start = if flag && op == 1 { first + 1 } else { first };
                        let outcome = store.append_unsynced(&events(ids[g], start..=start + n - 1));
                        if start == first {
                            prop_assert!(outcome.is_ok(), "{:?}", outcome);
                            next[g] += n;
                        } else {
                            prop_assert!(matches!(outcome, Err(StoreError::SeqOutOfOrder { .. })), "{:?}", outcome);
                        }
                        store.sync_log().expect("flushed");
                    }
                    // Events with chat: SQLite, after the game's logged events.
                    2 => {
                        store.append_unsynced(&with_chat(ids[g], first..=first + n - 1)).expect("written");
                        store.sync_log().expect("flushed");
                        next[g] += n;
                    }
                    3 => {
                        let log = store.log.clone().expect("a move log");
                        fold(&store.conn.lock().expect("lock"), &log, flag).expect("copied");
                    }
                    // A clean stop and a new start.
                    4 => {
                        drop(store);
                        store = SqliteStore::open(&path, SyncMode::Full).expect("reopen");
                    }
                    // A crash: the files as they are, opened elsewhere.
                    _ => {
                        let copy = dir.path().join(format!("crash-{step}.sqlite"));
                        crash_copy(&path, &copy);
                        drop(store);
                        path = copy;
                        store = SqliteStore::open(&path, SyncMode::Full).expect("recover");
                    }
                }
                for (g, id) in ids.iter().enumerate() {
                    let seqs: Vec<u64> = store.events(id).expect("events").iter().map(|e| e.seq).collect();
                    prop_assert_eq!(seqs, (1..next[g]).collect::<Vec<_>>());
                }
            }
        }
    }
}
