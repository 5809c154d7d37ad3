//! store: owns the durable event log of every game (the games and their numbered events)
//! and the rows kept beside it (accounts, ratings, fair play, reviews, leases); it never
//! interprets an event's meaning, never decides what is legal, and no SQL lives outside
//! `src/store/`.
//!
//! The room commits every accepted event here *before* it acknowledges or broadcasts it,
//! so after a crash or restart [`GameStore::unfinished_games`] gives back exactly what
//! players were told. The log is generic: an event is a `(kind, JSON text)` pair numbered
//! by a per-game `seq` (1, 2, 3 … with no gaps), and the store refuses a duplicate or
//! gapped number instead of overwriting history.
//!
//! [`SqliteStore`] is the embedded backend; [`PgStore`] keeps the same rows in PostgreSQL,
//! which several nodes can share (each game owned by one node at a time, fenced with
//! [`Append::Fence`]). [`StoreWriter`] puts many games' commits into one transaction (one
//! fsync) from an async context.
//!
//! # One small trait per kind of row
//!
//! Each kind of row has a trait of its own in a file of its own here, with its record
//! types: [`EventLog`] (writing games and events, `log.rs`), [`GameStore`] (reading them,
//! `games.rs`), [`AccountStore`], [`TokenStore`], [`BotStore`], [`RatingStore`],
//! [`FairPlayStore`], [`ReviewStore`], [`MuteStore`], [`TournamentStore`],
//! [`DeadlineStore`], [`PlanStore`], [`NoticeStore`] and,
//! for a shared database only, [`Leases`]. Each backend implements a trait in the file
//! of the same name under its folder: `sqlite/ratings.rs`, `postgres/ratings.rs`. SQLite-
//! only machinery (the move log, migrations, the checkpointer) lives under `sqlite/`,
//! PostgreSQL's (its connections and schema) under `postgres/`.
//!
//! [`Store`] is every trait but [`Leases`] at once, what most of the server holds as
//! `Arc<dyn Store>`; a type has it as soon as it has them all. To add a kind of row (say
//! mutes): write `mutes.rs` with its records and a `MuteStore` trait, implement it in
//! `sqlite/mutes.rs` and `postgres/mutes.rs` (each backend's schema gets its table),
//! add `MuteStore` to [`Store`]'s list and its blanket impl below, and give it
//! scenarios in `tests/store_backends.rs`, which runs each on both backends. No existing
//! impl block changes.

mod accounts;
mod bots;
mod calendars;
mod call;
pub mod copy;
mod deadlines;
mod error;
mod fairplay;
mod games;
mod leases;
mod log;
mod mutes;
mod notices;
mod plans;
mod postgres;
mod push;
mod ratings;
mod reviews;
mod sqlite;
mod tokens;
mod tournaments;
mod vacations;
mod writer;

pub use accounts::{
    AccountStore, NewInvite, NewRefresh, Origin, Rotation, Sighting, StandingChange, UserChange,
    UserRecord,
};
pub use bots::{BotStore, MadeBot};
pub use calendars::{CalendarRow, CalendarStore};
pub use call::blocking;
pub use deadlines::{DeadlineStore, DeskRow};
pub use error::StoreError;
pub use fairplay::{FairPlayStore, KibitzRecord, NewReport, StoredReport};
pub use games::{EventRecord, GameQuery, GameRecord, GameStatus, GameStore};
use games::{GAME_COLUMNS, game_columns_before_count};
pub use leases::{Claim, Leases};
pub use log::{Append, Durability, EventLog};
pub use mutes::MuteStore;
pub use notices::{MailPrefs, NewNotice, NoticeRow, NoticeStore};
pub use plans::PlanStore;
pub use postgres::PgStore;
pub use push::{PushStore, PushSubscription, Subscribed};
pub use ratings::{RatedGames, RatingChangeRow, RatingRecord, RatingRow, RatingStore};
pub use reviews::{ReviewRecord, ReviewStore};
pub use sqlite::{SqliteStore, SyncMode};
pub use tokens::{TOUCH_MS, TokenRecord, TokenStore};
pub use tournaments::{TournamentEntry, TournamentRecord, TournamentStore};
pub use vacations::{VacationChange, VacationRow, VacationStore};
pub use writer::{MAX_BATCH_REQUESTS, StoreWriter};

/// The whole store as the room, the HTTP handlers and the services see it: every trait
/// above but [`Leases`], which only a shared database has.
///
/// Synchronous on purpose: SQLite is a blocking library, and [`PgStore`] runs its async
/// client on a runtime of its own, so a call is safe from any thread. Async callers go
/// through [`StoreWriter`] for writes (which batches them) and `spawn_blocking` for reads.
pub trait Store:
    EventLog
    + GameStore
    + AccountStore
    + TokenStore
    + BotStore
    + RatingStore
    + FairPlayStore
    + ReviewStore
    + MuteStore
    + TournamentStore
    + DeadlineStore
    + PlanStore
    + NoticeStore
    + PushStore
    + VacationStore
    + CalendarStore
{
}

impl<S> Store for S where
    S: EventLog
        + GameStore
        + AccountStore
        + TokenStore
        + BotStore
        + RatingStore
        + FairPlayStore
        + ReviewStore
        + MuteStore
        + TournamentStore
        + DeadlineStore
        + PlanStore
        + NoticeStore
        + PushStore
        + VacationStore
        + CalendarStore
{
}
