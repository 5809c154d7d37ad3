//! The versioned schema of the SQLite game database: an ordered list of migrations, the
//! file's `PRAGMA user_version` saying how many have run. Never edit a released
//! migration; append a new one.

use std::path::Path;
use std::sync::Arc;

use rusqlite::Connection;

use crate::store::StoreError;

/// `PRAGMA application_id` of a tengen database ("TGEN"), so another program's SQLite
/// file is recognised and refused instead of having tables added to it.
pub(crate) const APPLICATION_ID: i64 = 0x5447_454E;

/// Migration `i` (0-based) brings the schema from version `i` to version `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: games and their numbered events.
    "
    CREATE TABLE games (
        id            TEXT PRIMARY KEY NOT NULL,
        created_at_ms INTEGER NOT NULL,
        settings      TEXT NOT NULL,
        black         TEXT NOT NULL,
        white         TEXT NOT NULL,
        black_name    TEXT NOT NULL,
        white_name    TEXT NOT NULL,
        status        TEXT NOT NULL CHECK (status IN ('live', 'finished')),
        result        TEXT,
        ended_at_ms   INTEGER,
        move_count    INTEGER NOT NULL DEFAULT 0 CHECK (move_count >= 0)
    ) STRICT;
    CREATE INDEX games_by_created ON games (created_at_ms, id);
    CREATE INDEX games_by_status ON games (status, created_at_ms, id);
    CREATE INDEX games_by_black ON games (black, created_at_ms, id);
    CREATE INDEX games_by_white ON games (white, created_at_ms, id);
    CREATE TABLE events (
        game_id TEXT NOT NULL REFERENCES games (id),
        seq     INTEGER NOT NULL CHECK (seq >= 1),
        kind    TEXT NOT NULL,
        payload TEXT NOT NULL,
        at_ms   INTEGER NOT NULL,
        PRIMARY KEY (game_id, seq)
    ) STRICT, WITHOUT ROWID;
    ",
    // 2: ratings (docs/RATINGS.md): which games are rated and in what order their
    // ratings were applied, the change each made, and every player's current standings.
    "
    CREATE TABLE rated_games (
        game_id TEXT PRIMARY KEY NOT NULL REFERENCES games (id),
        applied INTEGER UNIQUE CHECK (applied >= 1)
    ) STRICT;
    CREATE TABLE rating_changes (
        game_id           TEXT NOT NULL REFERENCES games (id),
        pool              TEXT NOT NULL,
        color             TEXT NOT NULL CHECK (color IN ('black', 'white')),
        player            TEXT NOT NULL,
        opponent          TEXT NOT NULL,
        at_ms             INTEGER NOT NULL,
        rating_before     REAL NOT NULL,
        deviation_before  REAL NOT NULL,
        volatility_before REAL NOT NULL,
        rating            REAL NOT NULL,
        deviation         REAL NOT NULL,
        volatility        REAL NOT NULL,
        PRIMARY KEY (game_id, pool, color)
    ) STRICT;
    CREATE INDEX rating_changes_by_player ON rating_changes (player, at_ms);
    CREATE TABLE ratings (
        player       TEXT NOT NULL,
        pool         TEXT NOT NULL,
        rating       REAL NOT NULL,
        deviation    REAL NOT NULL,
        volatility   REAL NOT NULL,
        games        INTEGER NOT NULL CHECK (games >= 0),
        won          INTEGER NOT NULL CHECK (won >= 0),
        lost         INTEGER NOT NULL CHECK (lost >= 0),
        last_game_ms INTEGER,
        PRIMARY KEY (player, pool)
    ) STRICT;
    CREATE INDEX ratings_by_pool ON ratings (pool, rating DESC, player);
    ",
    // 3: accounts: users, refresh tokens and invites (hashes only for both).
    "
    CREATE TABLE users (
        id            TEXT PRIMARY KEY NOT NULL,
        origin        TEXT NOT NULL CHECK (origin IN ('local', 'external', 'guest')),
        display_name  TEXT NOT NULL,
        role          TEXT NOT NULL,
        password_hash TEXT,
        disabled      INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
        created_at_ms INTEGER NOT NULL
    ) STRICT;
    CREATE TABLE refresh_tokens (
        hash          TEXT PRIMARY KEY NOT NULL,
        family        TEXT NOT NULL,
        user_id       TEXT NOT NULL REFERENCES users (id),
        issued_at_ms  INTEGER NOT NULL,
        expires_at_ms INTEGER NOT NULL,
        state         TEXT NOT NULL CHECK (state IN ('live', 'used', 'revoked'))
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX refresh_by_family ON refresh_tokens (family);
    CREATE INDEX refresh_by_user ON refresh_tokens (user_id, state, issued_at_ms);
    CREATE INDEX refresh_by_expiry ON refresh_tokens (expires_at_ms);
    CREATE TABLE invites (
        hash          TEXT PRIMARY KEY NOT NULL,
        created_at_ms INTEGER NOT NULL,
        expires_at_ms INTEGER NOT NULL,
        used_by       TEXT REFERENCES users (id)
    ) STRICT, WITHOUT ROWID;
    ",
    // 4: reviews, saved analysis boards (a tree of moves as SGF) to share by link.
    "
    CREATE TABLE reviews (
        id            TEXT PRIMARY KEY NOT NULL,
        created_at_ms INTEGER NOT NULL,
        owner         TEXT NOT NULL,
        game_id       TEXT,
        move_number   INTEGER CHECK (move_number >= 0),
        sgf           TEXT NOT NULL
    ) STRICT;
    CREATE INDEX reviews_by_owner ON reviews (owner);
    ",
    // 5: fair play: who blocks whom, reports to referees, spectators' chat kept as
    // evidence, and the rated games whose result a referee changed after the ratings
    // took it (the ratings owe a rebuild until one settles them; AUTOINCREMENT, so a
    // mark's number is never reused and never mistaken for one already settled).
    "
    CREATE TABLE blocks (
        blocker TEXT NOT NULL,
        blocked TEXT NOT NULL,
        at_ms   INTEGER NOT NULL,
        PRIMARY KEY (blocker, blocked)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE reports (
        id       INTEGER PRIMARY KEY,
        reporter TEXT NOT NULL,
        user     TEXT,
        game_id  TEXT,
        from_seq INTEGER,
        to_seq   INTEGER,
        reason   TEXT NOT NULL,
        at_ms    INTEGER NOT NULL,
        open     INTEGER NOT NULL DEFAULT 1 CHECK (open IN (0, 1))
    ) STRICT;
    CREATE INDEX reports_open ON reports (open, reporter, id);
    CREATE TABLE kibitz (
        game_id TEXT NOT NULL REFERENCES games (id),
        at_ms   INTEGER NOT NULL,
        user_id TEXT NOT NULL,
        name    TEXT NOT NULL,
        text    TEXT NOT NULL
    ) STRICT;
    CREATE INDEX kibitz_by_game ON kibitz (game_id, at_ms);
    CREATE TABLE ratings_owed (
        id      INTEGER PRIMARY KEY AUTOINCREMENT,
        game_id TEXT NOT NULL REFERENCES games (id)
    ) STRICT;
    ",
    // 6: the fencing number of the lease that owns each game (`Append::Fence`): only a
    // claim at least as high may write, so a former owner is shut out for good.
    "
    ALTER TABLE games ADD COLUMN fence INTEGER NOT NULL DEFAULT 0 CHECK (fence >= 0);
    ",
    // 7: a game's move count after an event, on the event that ends a step
    // (`Append::MoveCount`), so a move writes only its event's page and not also the
    // game's row; `games.move_count` keeps a finished game's count and an older one's.
    "
    ALTER TABLE events ADD COLUMN move_count INTEGER CHECK (move_count >= 0);
    ",
    // 8: the numbered changes to users' standing (disabled, enabled, a new role), which
    // a running server reads to end the connections they concern (accounts/revoke.rs).
    "
    CREATE TABLE user_changes (
        seq     INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id TEXT NOT NULL
    ) STRICT;
    ",
    // 9: who mutes whom (store/mutes.rs).
    "
    CREATE TABLE mutes (
        muter TEXT NOT NULL,
        muted TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        PRIMARY KEY (muter, muted)
    ) STRICT, WITHOUT ROWID;
    ",
    // 10: tournaments, each a numbered log of entries its director task folds
    // (store/tournaments.rs).
    "
    CREATE TABLE tournaments (
        id            TEXT PRIMARY KEY NOT NULL,
        name          TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        stage         TEXT NOT NULL
    ) STRICT;
    CREATE INDEX tournaments_by_created ON tournaments (created_at_ms, id);
    CREATE TABLE tournament_entries (
        tournament_id TEXT NOT NULL REFERENCES tournaments (id),
        seq           INTEGER NOT NULL CHECK (seq >= 1),
        at_ms         INTEGER NOT NULL,
        kind          TEXT NOT NULL,
        payload       TEXT NOT NULL,
        PRIMARY KEY (tournament_id, seq)
    ) STRICT, WITHOUT ROWID;
    ",
    // 11: correspondence games: the deadline index of those not finished
    // (store/deadlines.rs), and the players' plans of conditional moves (store/plans.rs).
    "
    CREATE TABLE correspondence_deadlines (
        game_id TEXT PRIMARY KEY NOT NULL REFERENCES games (id),
        due_ms  INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX correspondence_deadlines_by_due ON correspondence_deadlines (due_ms);
    CREATE TABLE plans (
        game_id TEXT NOT NULL REFERENCES games (id),
        color   TEXT NOT NULL CHECK (color IN ('black', 'white')),
        plan    TEXT NOT NULL,
        PRIMARY KEY (game_id, color)
    ) STRICT, WITHOUT ROWID;
    ",
    // 12: each account's notices, its newest kept (store/notices.rs), and its mail
    // preferences.
    "
    CREATE TABLE notices (
        id      INTEGER PRIMARY KEY AUTOINCREMENT,
        account TEXT NOT NULL,
        kind    TEXT NOT NULL,
        payload TEXT NOT NULL,
        at_ms   INTEGER NOT NULL,
        read    INTEGER NOT NULL DEFAULT 0 CHECK (read IN (0, 1)),
        digest  INTEGER NOT NULL CHECK (digest IN (0, 1))
    ) STRICT;
    CREATE INDEX notices_by_account ON notices (account, id);
    CREATE INDEX notices_for_digest ON notices (account) WHERE digest;
    CREATE TABLE mail_prefs (
        account        TEXT PRIMARY KEY NOT NULL,
        address        TEXT,
        verified       INTEGER NOT NULL DEFAULT 0 CHECK (verified IN (0, 1)),
        modes          TEXT NOT NULL,
        last_digest_ms INTEGER
    ) STRICT;
    ",
    // 13: personal API tokens (store/tokens.rs; only their hashes), a revoked token's id
    // among the user changes, and the profiles bots declare (store/bots.rs).
    "
    ALTER TABLE user_changes ADD COLUMN token TEXT;
    CREATE TABLE api_tokens (
        id            TEXT PRIMARY KEY NOT NULL,
        user_id       TEXT NOT NULL,
        name          TEXT NOT NULL,
        scopes        TEXT NOT NULL,
        hash          TEXT NOT NULL UNIQUE,
        created_at_ms INTEGER NOT NULL,
        expires_at_ms INTEGER,
        last_used_ms  INTEGER
    ) STRICT;
    CREATE INDEX api_tokens_by_user ON api_tokens (user_id, created_at_ms);
    CREATE TABLE bot_profiles (
        user_id       TEXT PRIMARY KEY NOT NULL,
        profile       TEXT NOT NULL,
        updated_at_ms INTEGER NOT NULL
    ) STRICT;
    ",
    // 14: each account's vacation for correspondence games (store/vacations.rs).
    "
    CREATE TABLE vacations (
        user_id       TEXT PRIMARY KEY NOT NULL,
        balance_ms    INTEGER NOT NULL,
        as_of_ms      INTEGER NOT NULL,
        away_since_ms INTEGER,
        warned        INTEGER NOT NULL DEFAULT 0
    ) STRICT;
    CREATE INDEX vacations_away ON vacations (away_since_ms) WHERE away_since_ms IS NOT NULL;
    ",
    // 15: each account's time zone and weekend days (store/calendars.rs).
    "
    CREATE TABLE calendars (
        user_id   TEXT PRIMARY KEY NOT NULL,
        time_zone TEXT NOT NULL,
        weekend   INTEGER NOT NULL
    ) STRICT;
    ",
    // 16: browsers' Web Push subscriptions (store/push.rs).
    "
    CREATE TABLE push_subscriptions (
        endpoint   TEXT PRIMARY KEY NOT NULL,
        account    TEXT NOT NULL,
        p256dh     TEXT NOT NULL,
        auth       TEXT NOT NULL,
        created_ms INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX push_subscriptions_by_account ON push_subscriptions (account, created_ms);
    ",
    // 17: accounts by display name, for a tournament's import matching players by name.
    "
    CREATE INDEX users_by_display_name ON users (display_name);
    ",
    // 18: until when the last vacation day spent at a deadline runs, per account
    // (store/vacations.rs): one day covers every game of the account due in it.
    "
    ALTER TABLE vacations ADD COLUMN paid_until_ms INTEGER;
    ",
    // 19: what a player's list of correspondence games shows of each while it sleeps
    // (store/deadlines.rs); a row written before has none, and its game is woken to be
    // listed until its next commit writes one.
    "
    ALTER TABLE correspondence_deadlines ADD COLUMN summary TEXT;
    ",
];

/// The schema version this build writes and understands.
pub(crate) fn latest_version() -> i64 {
    // A handful of migrations; the cast cannot truncate.
    MIGRATIONS.len() as i64
}

/// Reads the file's schema version, refusing a file this build must not touch.
///
/// Runs before anything writes, so a refused file is left byte for byte as it was.
pub(crate) fn check_version(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    let read = |pragma: &str| -> Result<i64, StoreError> {
        conn.pragma_query_value(None, pragma, |row| row.get::<_, i64>(0))
            .map_err(|source| classify_read_error(path, source))
    };
    let version = read("user_version")?;
    let application_id = read("application_id")?;
    if application_id != 0 && application_id != APPLICATION_ID {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            detail: format!("its application id is {application_id:#x}, another program's"),
        });
    }
    if version > latest_version() {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found: version,
            supported: latest_version(),
        });
    }
    if version == 0 {
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))
            .map_err(|source| classify_read_error(path, source))?;
        if tables > 0 {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                detail: format!(
                    "it has {tables} schema objects but no tengen schema version, so it belongs to another program"
                ),
            });
        }
    }
    Ok(version)
}

/// Runs every migration after `from`, each in its own transaction together with the
/// `user_version` bump, so a crash mid-upgrade leaves a consistent earlier version.
pub(crate) fn migrate(conn: &mut Connection, path: &Path, from: i64) -> Result<(), StoreError> {
    for (index, sql) in MIGRATIONS.iter().enumerate() {
        let version = index as i64 + 1;
        if version <= from {
            continue;
        }
        let failed = |source| StoreError::Migration {
            path: path.to_path_buf(),
            version,
            cause: Arc::new(source),
        };
        let tx = conn.transaction().map_err(failed)?;
        tx.execute_batch(sql).map_err(failed)?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(failed)?;
        tx.pragma_update(None, "user_version", version)
            .map_err(failed)?;
        tx.commit().map_err(failed)?;
        tracing::info!(path = %path.display(), version, "migrated the game database");
    }
    Ok(())
}

/// Turns SQLite's "not a database" and "corrupt" codes into [`StoreError::Corrupt`], so
/// the message says what is wrong with the file rather than just "could not read".
pub(crate) fn classify_read_error(path: &Path, source: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    match source.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) | Some(ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path: path.to_path_buf(),
            detail: source.to_string(),
        },
        _ => StoreError::Sqlite {
            path: path.to_path_buf(),
            cause: Arc::new(source),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{
        Append, EventLog, EventRecord, GameStore, SqliteStore, StoreError, SyncMode,
    };

    /// A database file at schema `version` holding `rows` (SQL), opened by this build.
    fn upgraded(version: usize, rows: &str) -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(format!("v{version}.sqlite"));
        {
            let conn = Connection::open(&path).expect("raw open");
            for sql in &MIGRATIONS[..version] {
                conn.execute_batch(sql).expect("an older schema");
            }
            conn.execute_batch(&format!(
                "{rows}
                 PRAGMA application_id = {APPLICATION_ID};
                 PRAGMA user_version = {version};"
            ))
            .expect("rows of that version");
        }
        let store = SqliteStore::open(&path, SyncMode::Normal).expect("upgraded");
        (dir, store)
    }

    #[test]
    fn migration_7_keeps_a_live_games_count_from_its_row_until_a_move_carries_one() {
        let (_dir, store) = upgraded(
            6,
            "INSERT INTO games (id, created_at_ms, settings, black, white, black_name,
                 white_name, status, move_count)
             VALUES ('old', 1, '{}', 'a', 'b', 'A', 'B', 'live', 4);
             INSERT INTO events (game_id, seq, kind, payload, at_ms)
             VALUES ('old', 1, 'move_played', '{}', 1);",
        );
        let count = || store.game("old").expect("read").map(|g| g.move_count);
        assert_eq!(count(), Some(4), "the row's count, its events having none");
        store
            .append(&[
                Append::Event(EventRecord {
                    game_id: "old".into(),
                    seq: 2,
                    kind: "move_played".into(),
                    payload: "{}".into(),
                    at_ms: 2,
                }),
                Append::MoveCount {
                    game_id: "old".into(),
                    move_count: 5,
                },
            ])
            .expect("a move after the upgrade");
        assert_eq!(count(), Some(5));
    }

    #[test]
    fn migration_6_gives_existing_games_fence_0() {
        let (_dir, store) = upgraded(
            5,
            "INSERT INTO games (id, created_at_ms, settings, black, white, black_name,
                 white_name, status)
             VALUES ('old', 1, '{}', 'a', 'b', 'A', 'B', 'live');",
        );
        let claim = |fence| {
            store.append(&[Append::Fence {
                game_id: "old".into(),
                fence,
            }])
        };
        claim(0).expect("an old game starts at fence 0");
        claim(3).expect("and takes a claim");
        let stale = claim(2);
        assert!(
            matches!(stale, Err(StoreError::Fenced { current: 3, .. })),
            "{stale:?}"
        );
    }
}
