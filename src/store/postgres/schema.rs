//! The versioned schema of the PostgreSQL game database: an ordered list of migrations,
//! and `tengen_schema.version` saying how many have run. The tables mirror the SQLite
//! schema (`store/sqlite/migrations.rs`) with PostgreSQL's types: `BIGINT` for every
//! number of milliseconds, `seq` and fence. Text that is sorted or compared for paging is
//! `COLLATE "C"`, so it sorts by bytes as SQLite does and a cursor means the same on
//! both. Never edit a released migration; append a new one.

use tokio_postgres::Client;

use super::{col, pg_error};
use crate::store::StoreError;

/// Taken for the whole upgrade, so servers starting together migrate one at a time.
const MIGRATION_LOCK: i64 = 0x5447_454E;

/// Migration `i` (0-based) brings the schema from version `i` to version `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: everything SQLite's versions 1 to 6 hold.
    r#"
    CREATE TABLE games (
        id            TEXT COLLATE "C" PRIMARY KEY,
        created_at_ms BIGINT NOT NULL,
        settings      TEXT NOT NULL,
        black         TEXT COLLATE "C" NOT NULL,
        white         TEXT COLLATE "C" NOT NULL,
        black_name    TEXT NOT NULL,
        white_name    TEXT NOT NULL,
        status        TEXT NOT NULL CHECK (status IN ('live', 'finished')),
        result        TEXT,
        ended_at_ms   BIGINT,
        move_count    BIGINT NOT NULL DEFAULT 0 CHECK (move_count >= 0),
        fence         BIGINT NOT NULL DEFAULT 0 CHECK (fence >= 0)
    );
    CREATE INDEX games_by_created ON games (created_at_ms, id);
    CREATE INDEX games_by_status ON games (status, created_at_ms, id);
    CREATE INDEX games_by_black ON games (black, created_at_ms, id);
    CREATE INDEX games_by_white ON games (white, created_at_ms, id);
    CREATE TABLE events (
        game_id TEXT COLLATE "C" NOT NULL REFERENCES games (id),
        seq     BIGINT NOT NULL CHECK (seq >= 1),
        kind    TEXT NOT NULL,
        payload TEXT NOT NULL,
        at_ms   BIGINT NOT NULL,
        PRIMARY KEY (game_id, seq)
    );
    CREATE TABLE rated_games (
        game_id TEXT COLLATE "C" PRIMARY KEY REFERENCES games (id),
        applied BIGINT UNIQUE CHECK (applied >= 1)
    );
    CREATE TABLE rating_changes (
        game_id           TEXT COLLATE "C" NOT NULL REFERENCES games (id),
        pool              TEXT COLLATE "C" NOT NULL,
        color             TEXT NOT NULL CHECK (color IN ('black', 'white')),
        player            TEXT COLLATE "C" NOT NULL,
        opponent          TEXT NOT NULL,
        at_ms             BIGINT NOT NULL,
        rating_before     DOUBLE PRECISION NOT NULL,
        deviation_before  DOUBLE PRECISION NOT NULL,
        volatility_before DOUBLE PRECISION NOT NULL,
        rating            DOUBLE PRECISION NOT NULL,
        deviation         DOUBLE PRECISION NOT NULL,
        volatility        DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (game_id, pool, color)
    );
    CREATE INDEX rating_changes_by_player ON rating_changes (player, at_ms);
    CREATE TABLE ratings (
        player       TEXT COLLATE "C" NOT NULL,
        pool         TEXT COLLATE "C" NOT NULL,
        rating       DOUBLE PRECISION NOT NULL,
        deviation    DOUBLE PRECISION NOT NULL,
        volatility   DOUBLE PRECISION NOT NULL,
        games        BIGINT NOT NULL CHECK (games >= 0),
        won          BIGINT NOT NULL CHECK (won >= 0),
        lost         BIGINT NOT NULL CHECK (lost >= 0),
        last_game_ms BIGINT,
        PRIMARY KEY (player, pool)
    );
    CREATE INDEX ratings_by_pool ON ratings (pool, rating DESC, player);
    CREATE TABLE users (
        id            TEXT COLLATE "C" PRIMARY KEY,
        origin        TEXT NOT NULL CHECK (origin IN ('local', 'external', 'guest')),
        display_name  TEXT NOT NULL,
        role          TEXT NOT NULL,
        password_hash TEXT,
        disabled      BOOLEAN NOT NULL DEFAULT false,
        created_at_ms BIGINT NOT NULL
    );
    CREATE TABLE refresh_tokens (
        hash          TEXT COLLATE "C" PRIMARY KEY,
        family        TEXT COLLATE "C" NOT NULL,
        user_id       TEXT COLLATE "C" NOT NULL REFERENCES users (id),
        issued_at_ms  BIGINT NOT NULL,
        expires_at_ms BIGINT NOT NULL,
        state         TEXT NOT NULL CHECK (state IN ('live', 'used', 'revoked'))
    );
    CREATE INDEX refresh_by_family ON refresh_tokens (family);
    CREATE INDEX refresh_by_user ON refresh_tokens (user_id, state, issued_at_ms);
    CREATE INDEX refresh_by_expiry ON refresh_tokens (expires_at_ms);
    CREATE TABLE invites (
        hash          TEXT COLLATE "C" PRIMARY KEY,
        created_at_ms BIGINT NOT NULL,
        expires_at_ms BIGINT NOT NULL,
        used_by       TEXT COLLATE "C" REFERENCES users (id)
    );
    CREATE TABLE reviews (
        id            TEXT COLLATE "C" PRIMARY KEY,
        created_at_ms BIGINT NOT NULL,
        owner         TEXT COLLATE "C" NOT NULL,
        game_id       TEXT,
        move_number   BIGINT CHECK (move_number >= 0),
        sgf           TEXT NOT NULL
    );
    CREATE INDEX reviews_by_owner ON reviews (owner);
    CREATE TABLE blocks (
        blocker TEXT COLLATE "C" NOT NULL,
        blocked TEXT COLLATE "C" NOT NULL,
        at_ms   BIGINT NOT NULL,
        PRIMARY KEY (blocker, blocked)
    );
    CREATE TABLE reports (
        id       BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        reporter TEXT COLLATE "C" NOT NULL,
        "user"   TEXT,
        game_id  TEXT,
        from_seq BIGINT,
        to_seq   BIGINT,
        reason   TEXT NOT NULL,
        at_ms    BIGINT NOT NULL,
        open     BOOLEAN NOT NULL DEFAULT true
    );
    CREATE INDEX reports_open ON reports (open, reporter, id);
    CREATE TABLE kibitz (
        id      BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        game_id TEXT COLLATE "C" NOT NULL REFERENCES games (id),
        at_ms   BIGINT NOT NULL,
        user_id TEXT NOT NULL,
        name    TEXT NOT NULL,
        text    TEXT NOT NULL
    );
    CREATE INDEX kibitz_by_game ON kibitz (game_id, at_ms, id);
    CREATE TABLE ratings_owed (
        id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        game_id TEXT COLLATE "C" NOT NULL REFERENCES games (id)
    );
    "#,
    // 2: who owns each game, and until when (store/leases.rs): the lease and the fence
    // in one row, judged by the database's clock.
    r#"
    ALTER TABLE games ADD COLUMN owner TEXT, ADD COLUMN lease_until TIMESTAMPTZ;
    CREATE INDEX games_live_by_lease ON games (lease_until) WHERE status = 'live';
    "#,
    // 3: SQLite's version 8, the numbered changes to users' standing.
    r#"
    CREATE TABLE user_changes (
        seq     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT COLLATE "C" NOT NULL
    );
    "#,
    // 4: SQLite's version 9, who mutes whom.
    r#"
    CREATE TABLE mutes (
        muter TEXT COLLATE "C" NOT NULL,
        muted TEXT COLLATE "C" NOT NULL,
        at_ms BIGINT NOT NULL,
        PRIMARY KEY (muter, muted)
    );
    "#,
    // 5: SQLite's version 10, tournaments and their logs.
    r#"
    CREATE TABLE tournaments (
        id            TEXT COLLATE "C" PRIMARY KEY,
        name          TEXT NOT NULL,
        created_at_ms BIGINT NOT NULL,
        stage         TEXT NOT NULL
    );
    CREATE INDEX tournaments_by_created ON tournaments (created_at_ms, id);
    CREATE TABLE tournament_entries (
        tournament_id TEXT COLLATE "C" NOT NULL REFERENCES tournaments (id),
        seq           BIGINT NOT NULL CHECK (seq >= 1),
        at_ms         BIGINT NOT NULL,
        kind          TEXT NOT NULL,
        payload       TEXT NOT NULL,
        PRIMARY KEY (tournament_id, seq)
    );
    "#,
    // 6: SQLite's version 11, correspondence games' deadline index and plans.
    r#"
    CREATE TABLE correspondence_deadlines (
        game_id TEXT COLLATE "C" PRIMARY KEY REFERENCES games (id),
        due_ms  BIGINT NOT NULL
    );
    CREATE INDEX correspondence_deadlines_by_due ON correspondence_deadlines (due_ms);
    CREATE TABLE plans (
        game_id TEXT COLLATE "C" NOT NULL REFERENCES games (id),
        color   TEXT NOT NULL CHECK (color IN ('black', 'white')),
        plan    TEXT NOT NULL,
        PRIMARY KEY (game_id, color)
    );
    "#,
    // 7: SQLite's version 12, notices and mail preferences.
    r#"
    CREATE TABLE notices (
        id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account TEXT COLLATE "C" NOT NULL,
        kind    TEXT NOT NULL,
        payload TEXT NOT NULL,
        at_ms   BIGINT NOT NULL,
        read    BOOLEAN NOT NULL DEFAULT false,
        digest  BOOLEAN NOT NULL
    );
    CREATE INDEX notices_by_account ON notices (account, id);
    CREATE INDEX notices_for_digest ON notices (account) WHERE digest;
    CREATE TABLE mail_prefs (
        account        TEXT COLLATE "C" PRIMARY KEY,
        address        TEXT,
        verified       BOOLEAN NOT NULL DEFAULT false,
        modes          TEXT NOT NULL,
        last_digest_ms BIGINT
    );
    "#,
    // 8: SQLite's version 13, personal API tokens and bots' profiles.
    r#"
    ALTER TABLE user_changes ADD COLUMN token TEXT;
    CREATE TABLE api_tokens (
        id            TEXT COLLATE "C" PRIMARY KEY,
        user_id       TEXT COLLATE "C" NOT NULL,
        name          TEXT NOT NULL,
        scopes        TEXT NOT NULL,
        hash          TEXT NOT NULL UNIQUE,
        created_at_ms BIGINT NOT NULL,
        expires_at_ms BIGINT,
        last_used_ms  BIGINT
    );
    CREATE INDEX api_tokens_by_user ON api_tokens (user_id, created_at_ms);
    CREATE TABLE bot_profiles (
        user_id       TEXT COLLATE "C" PRIMARY KEY,
        profile       TEXT NOT NULL,
        updated_at_ms BIGINT NOT NULL
    );
    "#,
    // 9: SQLite's version 14, each account's vacation for correspondence games.
    r#"
    CREATE TABLE vacations (
        user_id       TEXT COLLATE "C" PRIMARY KEY,
        balance_ms    BIGINT NOT NULL,
        as_of_ms      BIGINT NOT NULL,
        away_since_ms BIGINT,
        warned        BOOLEAN NOT NULL DEFAULT false
    );
    CREATE INDEX vacations_away ON vacations (away_since_ms) WHERE away_since_ms IS NOT NULL;
    "#,
    // 10: SQLite's version 15, each account's time zone and weekend days.
    r#"
    CREATE TABLE calendars (
        user_id   TEXT COLLATE "C" PRIMARY KEY,
        time_zone TEXT NOT NULL,
        weekend   BIGINT NOT NULL
    );
    "#,
    // 11: SQLite's version 16, browsers' Web Push subscriptions.
    r#"
    CREATE TABLE push_subscriptions (
        endpoint   TEXT COLLATE "C" PRIMARY KEY,
        account    TEXT COLLATE "C" NOT NULL,
        p256dh     TEXT NOT NULL,
        auth       TEXT NOT NULL,
        created_ms BIGINT NOT NULL
    );
    CREATE INDEX push_subscriptions_by_account ON push_subscriptions (account, created_ms);
    "#,
    // 12: which node runs each tournament's director, and until when (PostgreSQL only,
    // as the games' leases); SQLite's version 17, accounts by display name.
    r#"
    ALTER TABLE tournaments ADD COLUMN owner TEXT, ADD COLUMN lease_until TIMESTAMPTZ;
    CREATE INDEX users_by_display_name ON users (display_name);
    "#,
    // 13: SQLite's version 18, until when the last vacation day spent at a deadline runs.
    r#"
    ALTER TABLE vacations ADD COLUMN paid_until_ms BIGINT;
    "#,
    // 14: which node does each job that one node does for the cluster (the waker of
    // sleeping correspondence games), and until when (PostgreSQL only, as the leases).
    r#"
    CREATE TABLE singleton_leases (
        name        TEXT COLLATE "C" PRIMARY KEY,
        owner       TEXT,
        lease_until TIMESTAMPTZ
    );
    "#,
    // 15: SQLite's version 19, what a player's list of correspondence games shows of
    // each while it sleeps.
    r#"
    ALTER TABLE correspondence_deadlines ADD COLUMN summary TEXT;
    "#,
];

/// The schema version this build writes and understands.
fn latest_version() -> i64 {
    // A handful of migrations; the cast cannot truncate.
    MIGRATIONS.len() as i64
}

/// Brings the database's schema up to date in one transaction, under a lock every tengen
/// server takes for it; a database from a newer tengen is refused and left untouched.
pub(super) async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(pg_error)?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS tengen_schema (version BIGINT NOT NULL)")
        .await
        .map_err(pg_error)?;
    let version: i64 = match tx
        .query_opt("SELECT max(version) FROM tengen_schema", &[])
        .await
        .map_err(pg_error)?
    {
        Some(row) => col::<Option<i64>>(&row, 0)?.unwrap_or(0),
        None => 0,
    };
    if version > latest_version() {
        return Err(StoreError::Postgres {
            detail: format!(
                "the database has schema version {version}, newer than version {} that this build of tengen understands; run a newer tengen instead (the database was left untouched)",
                latest_version()
            ),
        });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
        tx.batch_execute(sql).await.map_err(pg_error)?;
        tracing::info!(version = index + 1, "migrated the PostgreSQL game database");
    }
    tx.execute("DELETE FROM tengen_schema", &[])
        .await
        .map_err(pg_error)?;
    tx.execute(
        "INSERT INTO tengen_schema (version) VALUES ($1)",
        &[&latest_version()],
    )
    .await
    .map_err(pg_error)?;
    tx.commit().await.map_err(pg_error)
}
