//! The embedded SQLite backend of the store's traits: one file, one connection behind a
//! mutex, WAL journal, and in `full` mode a move log beside it for plain moves
//! (`move_log`). With `postgres/`, the only place in tengen that writes SQL.
//!
//! This file opens and closes the database; each trait of the store is implemented in
//! the file of its name (`log.rs`, `games.rs`, `accounts.rs`, `ratings.rs`,
//! `fairplay.rs`, `reviews.rs`), and what only SQLite needs sits beside them: the move
//! log, the checkpointer that copies it and the WAL into the database file, the cache of
//! last event numbers, and the schema's migrations.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::store::StoreError;
use checkpoint::{Checkpointer, take_move_log};
use last_seqs::LastSeqs;
use move_log::MoveLog;

mod accounts;
mod bots;
mod calendars;
mod checkpoint;
mod copy;
mod deadlines;
mod fairplay;
mod games;
mod last_seqs;
mod log;
mod migrations;
mod move_log;
mod mutes;
mod notices;
mod plans;
mod push;
mod ratings;
mod reviews;
#[cfg(test)]
mod tests;
mod tokens;
mod tournaments;
mod vacations;

/// How a write turns SQLite's error into the store's ([`SqliteStore::db_err`]).
pub(super) type DbErr<'a> = &'a dyn Fn(rusqlite::Error) -> StoreError;

/// How long a statement waits for another process's lock (an operator's `sqlite3` shell,
/// a backup) before failing, rather than failing at once.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Enough for every statement this module (and the ratings') prepares, so none is ever
/// re-parsed.
const STATEMENT_CACHE: usize = 64;

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
    /// The write-ahead log beside it (`<path>-wal`), which [`EventLog::sync_log`](crate::store::EventLog::sync_log) flushes.
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
    /// ([`EventLog::append_unsynced`](crate::store::EventLog::append_unsynced)) and goes back to `sync` only when something else
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
    /// The group commit wrote to SQLite since the last [`EventLog::sync_log`](crate::store::EventLog::sync_log): with a move
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
    /// store (and [`EventLog::check_writable`](crate::store::EventLog::check_writable)) fail even for root, whom file permissions do
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

    /// How a write turns SQLite's error into the store's (it names the database file);
    /// a [`DbErr`] borrows it.
    pub(super) fn db_err(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        |source| StoreError::Sqlite {
            path: self.path.clone(),
            cause: Arc::new(source),
        }
    }

    fn log_err(&self) -> impl Fn(io::Error) -> StoreError + '_ {
        move_log_err(&self.path)
    }
}

/// The error of the move log of the database at `db`.
fn move_log_err(db: &Path) -> impl Fn(io::Error) -> StoreError + '_ {
    |cause| StoreError::MoveLog {
        path: move_log::files_of(db),
        cause: Arc::new(cause),
    }
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
