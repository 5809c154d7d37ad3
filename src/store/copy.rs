//! Copying a SQLite store into PostgreSQL (`tengen store migrate`): every table row for
//! row, parents before children, keeping each row's key, so that a second run finds every
//! row present and changes nothing. A game in both stores whose logs end at different
//! events is refused before anything is written, and the copy is checked afterwards.

use std::collections::BTreeMap;

use super::{PgStore, SqliteStore, StoreError};

/// How a column is stored (SQLite's types on one side, PostgreSQL's on the other).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Int,
    Real,
    Text,
    /// An integer 0/1 in SQLite, a `BOOLEAN` in PostgreSQL.
    Bool,
}

/// One value of a row, NULL as `None`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
    Bool(Option<bool>),
}

/// A table and its columns, named alike in both schemas.
pub(crate) struct Table {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Kind)],
    /// SQLite keeps this table's `id` as its rowid (spectators' chat).
    pub id_is_rowid: bool,
}

use Kind::{Bool, Int, Real, Text};

/// Every table, parents before the tables whose rows name them.
pub(crate) const TABLES: &[Table] = &[
    table(
        "users",
        &[
            ("id", Text),
            ("origin", Text),
            ("display_name", Text),
            ("role", Text),
            ("password_hash", Text),
            ("disabled", Bool),
            ("created_at_ms", Int),
        ],
    ),
    table(
        "games",
        &[
            ("id", Text),
            ("created_at_ms", Int),
            ("settings", Text),
            ("black", Text),
            ("white", Text),
            ("black_name", Text),
            ("white_name", Text),
            ("status", Text),
            ("result", Text),
            ("ended_at_ms", Int),
            ("move_count", Int),
            ("fence", Int),
        ],
    ),
    table(
        "events",
        &[
            ("game_id", Text),
            ("seq", Int),
            ("kind", Text),
            ("payload", Text),
            ("at_ms", Int),
        ],
    ),
    // A correspondence game's next deadline and its players' plans, which its log does
    // not hold: without them the game would never wake to flag, nor play a planned reply.
    table(
        "correspondence_deadlines",
        &[("game_id", Text), ("due_ms", Int), ("summary", Text)],
    ),
    table(
        "plans",
        &[("game_id", Text), ("color", Text), ("plan", Text)],
    ),
    table(
        "refresh_tokens",
        &[
            ("hash", Text),
            ("family", Text),
            ("user_id", Text),
            ("issued_at_ms", Int),
            ("expires_at_ms", Int),
            ("state", Text),
        ],
    ),
    table(
        "invites",
        &[
            ("hash", Text),
            ("created_at_ms", Int),
            ("expires_at_ms", Int),
            ("used_by", Text),
        ],
    ),
    table(
        "api_tokens",
        &[
            ("id", Text),
            ("user_id", Text),
            ("name", Text),
            ("scopes", Text),
            ("hash", Text),
            ("created_at_ms", Int),
            ("expires_at_ms", Int),
            ("last_used_ms", Int),
        ],
    ),
    table(
        "bot_profiles",
        &[("user_id", Text), ("profile", Text), ("updated_at_ms", Int)],
    ),
    table("rated_games", &[("game_id", Text), ("applied", Int)]),
    table(
        "rating_changes",
        &[
            ("game_id", Text),
            ("pool", Text),
            ("color", Text),
            ("player", Text),
            ("opponent", Text),
            ("at_ms", Int),
            ("rating_before", Real),
            ("deviation_before", Real),
            ("volatility_before", Real),
            ("rating", Real),
            ("deviation", Real),
            ("volatility", Real),
        ],
    ),
    table(
        "ratings",
        &[
            ("player", Text),
            ("pool", Text),
            ("rating", Real),
            ("deviation", Real),
            ("volatility", Real),
            ("games", Int),
            ("won", Int),
            ("lost", Int),
            ("last_game_ms", Int),
        ],
    ),
    table("ratings_owed", &[("id", Int), ("game_id", Text)]),
    table(
        "blocks",
        &[("blocker", Text), ("blocked", Text), ("at_ms", Int)],
    ),
    table(
        "reports",
        &[
            ("id", Int),
            ("reporter", Text),
            ("user", Text),
            ("game_id", Text),
            ("from_seq", Int),
            ("to_seq", Int),
            ("reason", Text),
            ("at_ms", Int),
            ("open", Bool),
        ],
    ),
    Table {
        name: "kibitz",
        columns: &[
            ("id", Int),
            ("game_id", Text),
            ("at_ms", Int),
            ("user_id", Text),
            ("name", Text),
            ("text", Text),
        ],
        id_is_rowid: true,
    },
    table(
        "reviews",
        &[
            ("id", Text),
            ("created_at_ms", Int),
            ("owner", Text),
            ("game_id", Text),
            ("move_number", Int),
            ("sgf", Text),
        ],
    ),
    table(
        "notices",
        &[
            ("id", Int),
            ("account", Text),
            ("kind", Text),
            ("payload", Text),
            ("at_ms", Int),
            ("read", Bool),
            ("digest", Bool),
        ],
    ),
    table(
        "mail_prefs",
        &[
            ("account", Text),
            ("address", Text),
            ("verified", Bool),
            ("modes", Text),
            ("last_digest_ms", Int),
        ],
    ),
    table(
        "calendars",
        &[("user_id", Text), ("time_zone", Text), ("weekend", Int)],
    ),
    table(
        "push_subscriptions",
        &[
            ("endpoint", Text),
            ("account", Text),
            ("p256dh", Text),
            ("auth", Text),
            ("created_ms", Int),
        ],
    ),
    table(
        "vacations",
        &[
            ("user_id", Text),
            ("balance_ms", Int),
            ("as_of_ms", Int),
            ("away_since_ms", Int),
            ("warned", Bool),
            ("paid_until_ms", Int),
        ],
    ),
];

const fn table(name: &'static str, columns: &'static [(&'static str, Kind)]) -> Table {
    Table {
        name,
        columns,
        id_is_rowid: false,
    }
}

/// Each game and its last `seq` ([`Tally::last_seqs`]): the same SQL on both stores.
pub(crate) const LAST_SEQS: &str = "SELECT g.id, coalesce(max(e.seq), 0) FROM games g
     LEFT JOIN events e ON e.game_id = g.id GROUP BY g.id";
/// Each account and what tells it apart ([`Tally::accounts`]): the same SQL on both.
pub(crate) const ACCOUNTS: &str =
    "SELECT id, created_at_ms || ':' || coalesce(password_hash, '') FROM users";

/// What a store holds, as far as the copy is checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub games: u64,
    pub events: u64,
    pub users: u64,
    /// Each game's last `seq` (0 for a game without events).
    pub last_seqs: BTreeMap<String, u64>,
    /// Each account's creation time and password hash, which tell apart two accounts
    /// that happen to share a name.
    pub accounts: BTreeMap<String, String>,
}

/// What a copy did and found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopySummary {
    /// Rows written per table (0 everywhere on a second run).
    pub copied: Vec<(&'static str, u64)>,
    pub source: Tally,
    pub target: Tally,
}

/// Copies every row of `from` that `to` lacks, then checks that every game of `from` is
/// in `to` with the same last event, and that `to` has at least as many games, events and
/// users. Refused with [`StoreError::Postgres`] naming the game or the account, before
/// anything is written, when a game in both ends at a different event or an account in
/// both is another one of the same name (a row already there is never overwritten, so
/// the copy would have given this store's games to the other account).
pub fn sqlite_to_postgres(from: &SqliteStore, to: &PgStore) -> Result<CopySummary, StoreError> {
    let source = from.tally()?;
    let before = to.tally()?;
    if let Some((game, seq, theirs)) = clash(&source.last_seqs, &before.last_seqs) {
        return Err(StoreError::Postgres {
            detail: format!(
                "game {game} is in both stores, but its last event is {seq} in SQLite and {theirs} in PostgreSQL; nothing was copied"
            ),
        });
    }
    if let Some((user, _, _)) = clash(&source.accounts, &before.accounts) {
        return Err(StoreError::Postgres {
            detail: format!(
                "the account {user} is in both stores, but they are two accounts (created at different times or with different passwords); nothing was copied"
            ),
        });
    }
    let mut copied = Vec::with_capacity(TABLES.len());
    for table in TABLES {
        let rows = from.export_rows(table)?;
        copied.push((table.name, to.import_rows(table, rows)?));
    }
    let target = to.tally()?;
    for (game, seq) in &source.last_seqs {
        if target.last_seqs.get(game) != Some(seq) {
            return Err(StoreError::Postgres {
                detail: format!(
                    "after the copy, game {game} does not end at event {seq} in PostgreSQL"
                ),
            });
        }
    }
    let short = [
        ("games", source.games, target.games),
        ("events", source.events, target.events),
        ("users", source.users, target.users),
    ];
    if let Some((what, ours, theirs)) = short.into_iter().find(|(_, s, t)| t < s) {
        return Err(StoreError::Postgres {
            detail: format!(
                "after the copy, PostgreSQL has {theirs} {what} where SQLite has {ours}"
            ),
        });
    }
    Ok(CopySummary {
        copied,
        source,
        target,
    })
}

/// The first key in both maps whose values differ, with ours and theirs.
fn clash<'a, V: PartialEq>(
    ours: &'a BTreeMap<String, V>,
    theirs: &'a BTreeMap<String, V>,
) -> Option<(&'a str, &'a V, &'a V)> {
    ours.iter().find_map(|(key, v)| {
        theirs
            .get(key)
            .filter(|t| *t != v)
            .map(|t| (key.as_str(), v, t))
    })
}
