//! Accounts in the store: users (local, guest, or first seen on an identity service's
//! token), refresh tokens (only their hashes) grouped in families, and invite codes (only
//! their hashes). [`AccountStore`] is a supertrait of [`Store`](super::Store), so every
//! backend keeps accounts beside games, durably; nothing about an account lives only in
//! memory.

use serde::{Deserialize, Serialize};

use super::StoreError;
use crate::protocol::Role;

/// Where an identity comes from. One id has one origin for good, so a token of an
/// external identity service can never speak for a local account or a guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Registered here (`/api/auth/register`, `tengen user add`), with a password.
    Local,
    /// First seen on a token signed by the configured external key.
    External,
    /// A passwordless guest (`/api/auth/guest`).
    Guest,
}

impl Origin {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Local => "local",
            Origin::External => "external",
            Origin::Guest => "guest",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(text: &str) -> Option<Origin> {
        match text {
            "local" => Some(Origin::Local),
            "external" => Some(Origin::External),
            "guest" => Some(Origin::Guest),
            _ => None,
        }
    }
}

/// The columns of [`UserRecord`] in the order both backends read them back.
pub(super) const USER_COLUMNS: &str =
    "id, origin, display_name, role, password_hash, disabled, created_at_ms";

/// A role's stored spelling (its wire name).
pub(super) fn role_text(role: Role) -> String {
    match serde_json::to_value(role) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "player".into(),
    }
}

/// Parses a role's stored spelling.
pub(super) fn parse_role(text: &str) -> Option<Role> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).ok()
}

/// One user row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserRecord {
    /// The user id: a local account's canonical username, a guest's generated name, an
    /// external user's `sub`.
    pub id: String,
    pub origin: Origin,
    pub display_name: String,
    pub role: Role,
    /// The argon2id PHC string; only local accounts have one.
    #[serde(skip)]
    pub password_hash: Option<String>,
    pub disabled: bool,
    pub created_at_ms: i64,
}

/// A change to a user; changing the password or disabling also revokes every refresh
/// token of the user, in the same transaction, and disabling, enabling or a new role is
/// numbered among the user changes ([`AccountStore::user_changes`]). Disabling also
/// forgets, in that transaction, whatever would still send the account its notices:
/// its browsers' push subscriptions, its mail address, and its place in the digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserChange {
    Password(String),
    Disabled(bool),
    Role(Role),
}

/// One numbered change to a user's standing ([`AccountStore::user_changes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandingChange {
    pub seq: u64,
    pub user_id: String,
    /// The personal token revoked, when that is the change; the connections it opened
    /// end, and no other.
    pub token: Option<String>,
}

/// A new refresh token, stored by its SHA-256 only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRefresh {
    /// Hex SHA-256 of the token the client holds.
    pub hash: String,
    pub issued_at_ms: i64,
    pub expires_at_ms: i64,
}

/// What presenting a refresh token did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rotation {
    /// The token was live: it is used up and the new one replaces it in its family.
    Rotated(UserRecord),
    /// The token was already used: someone replays it, so its whole family is now
    /// revoked.
    Replayed,
    /// Unknown, expired or revoked: nothing changed.
    Invalid,
    /// The user is disabled: the family is revoked.
    Disabled,
}

/// What a look at an external token's user found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sighting {
    /// An external user (now recorded if new) who may connect.
    Admitted,
    /// The user is disabled.
    Disabled,
    /// The id belongs to a local account or a guest: the external token is refused.
    Clash(Origin),
}

/// An invite code, stored by its SHA-256 only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewInvite {
    pub hash: String,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
}

/// [`AccountStore::has_played`]'s query for both stores, whose games and ratings have the
/// same columns (`$1` is a named parameter to SQLite, a positional one to PostgreSQL).
pub(crate) const HAS_PLAYED: &str = "SELECT EXISTS (SELECT 1 FROM games WHERE black = $1)
     OR EXISTS (SELECT 1 FROM games WHERE white = $1)
     OR EXISTS (SELECT 1 FROM ratings WHERE player = $1)";

/// Users, refresh tokens and invites: the accounts part of [`Store`](super::Store).
/// Synchronous like the rest; callers on the async side use `spawn_blocking`.
pub trait AccountStore {
    /// Creates a user; [`StoreError::DuplicateUser`] if the id is taken. With `invite`
    /// (an invite's hash), the invite must be unused and unexpired at `now_ms`
    /// ([`StoreError::InvalidInvite`]) and is used up by this user, atomically.
    fn create_user(
        &self,
        user: &UserRecord,
        invite: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError>;

    /// One user, if the id is known.
    fn user(&self, id: &str) -> Result<Option<UserRecord>, StoreError>;

    /// The accounts whose display name is exactly `name`, at most `limit`, by id (a
    /// tournament's import matches players by name, and only a unique match).
    fn users_named(&self, name: &str, limit: u32) -> Result<Vec<UserRecord>, StoreError>;

    /// The ids of local accounts that are not plain ASCII: the only ones whose case
    /// folding can differ from the lower case an account registered before usernames
    /// were folded was stored under (`straße`, which `strasse` must not take).
    fn non_ascii_local_ids(&self) -> Result<Vec<String>, StoreError>;

    /// Whether `id` plays in a stored game or has a rating: a user of the server's own
    /// tokens has no row, and a new account must not take their games and standing.
    fn has_played(&self, id: &str) -> Result<bool, StoreError>;

    /// Users ordered by id, starting after `after`, at most `limit`.
    fn users(&self, after: &str, limit: u32) -> Result<Vec<UserRecord>, StoreError>;

    /// Changes a user; [`StoreError::UnknownUser`] if there is none.
    fn update_user(&self, id: &str, change: &UserChange) -> Result<(), StoreError>;

    /// Looks at the user of a valid external token: records them at first sight, and
    /// says whether they may connect.
    fn sight_external(
        &self,
        id: &str,
        display_name: &str,
        now_ms: i64,
    ) -> Result<Sighting, StoreError>;

    /// Starts a new family of refresh tokens for `user_id` with `token`. Expired tokens
    /// are deleted on the way, and when the user already has `max_families` live
    /// families, the oldest are revoked so the user keeps at most that many.
    fn start_refresh_family(
        &self,
        user_id: &str,
        token: &NewRefresh,
        max_families: usize,
    ) -> Result<(), StoreError>;

    /// Presents the refresh token hashed `old`: if live at `new.issued_at_ms`, it is used
    /// up and `new` joins its family.
    fn rotate_refresh(&self, old: &str, new: &NewRefresh) -> Result<Rotation, StoreError>;

    /// Revokes the family of the refresh token hashed `hash` (logout); an unknown hash
    /// changes nothing.
    fn revoke_refresh_family(&self, hash: &str) -> Result<(), StoreError>;

    /// Stores an invite code's hash.
    fn create_invite(&self, invite: &NewInvite) -> Result<(), StoreError>;

    /// The changes to users' standing (disabled, enabled, a new role, a revoked personal
    /// token) numbered after `after`, oldest first, at most `limit`. [`update_user`] and
    /// [`revoke_token`] number each in its own transaction, so a running server, which
    /// may not be the process that made the change (`tengen user disable`), learns of it
    /// by reading them ([`crate::accounts::revoke`]).
    ///
    /// [`update_user`]: AccountStore::update_user
    /// [`revoke_token`]: super::TokenStore::revoke_token
    fn user_changes(&self, after: u64, limit: u32) -> Result<Vec<StandingChange>, StoreError>;

    /// The number of the latest change to a user's standing (0 when there is none).
    fn last_user_change(&self) -> Result<u64, StoreError>;
}
