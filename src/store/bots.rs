//! Bot accounts by self-service: turning a player's account into a bot's (once, and
//! only before any rated game, so no rating crosses from a person to a program), and
//! the small profile a bot declares for the public bots page (`GET /api/bots`).

use super::{StoreError, UserRecord};
use crate::protocol::Role;

/// What [`BotStore::make_bot`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MadeBot {
    /// The account is a bot's now; the change is numbered among the user changes.
    Made,
    /// No such user.
    Unknown,
    /// The account's role is not `player` (a guest, a referee, an admin, a bot already).
    NotAPlayer(Role),
    /// The account plays or played a rated game.
    Rated,
}

/// [`BotStore::make_bot`]'s question for both stores, whose games have the same columns
/// (`$1` is a named parameter to SQLite, a positional one to PostgreSQL): a rated game,
/// live or finished, or a rating.
pub(crate) const HAS_RATED_GAME: &str = "SELECT EXISTS (SELECT 1 FROM rated_games r
         JOIN games g ON g.id = r.game_id WHERE g.black = $1 OR g.white = $1)
     OR EXISTS (SELECT 1 FROM ratings WHERE player = $1)";

/// Bot accounts: the bots part of [`Store`](super::Store).
pub trait BotStore {
    /// Turns the player `id` into a bot, in one transaction with the checks.
    fn make_bot(&self, id: &str) -> Result<MadeBot, StoreError>;

    /// Replaces the bot `id`'s profile (JSON text, checked by the caller).
    fn set_bot_profile(&self, id: &str, profile: &str, at_ms: i64) -> Result<(), StoreError>;

    /// Enabled bot accounts ordered by id, after `after`, at most `limit`, each with its
    /// profile's JSON text if it set one.
    fn bots(
        &self,
        after: &str,
        limit: u32,
    ) -> Result<Vec<(UserRecord, Option<String>)>, StoreError>;
}
