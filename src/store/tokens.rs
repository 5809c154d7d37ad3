//! Personal API tokens in the store (`accounts/tokens/`): each row holds a token's
//! SHA-256, never the token, with its visible id, name, scopes, expiry and last use. A
//! revocation deletes the row and is numbered among the user changes in the same
//! transaction, so every server ends the connections that token opened
//! ([`crate::accounts::revoke`]).

use super::{StoreError, UserRecord};

/// One personal token, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRecord {
    /// The visible part of the token (`tgn_…`), unique; what lists and revocations name.
    pub id: String,
    pub user_id: String,
    /// What its owner called it.
    pub name: String,
    /// The scopes' wire names, separated by spaces.
    pub scopes: String,
    /// Hex SHA-256 of the whole token.
    pub hash: String,
    pub created_at_ms: i64,
    pub expires_at_ms: Option<i64>,
    /// When it last opened a connection or answered a request, to the minute
    /// ([`TOUCH_MS`]).
    pub last_used_ms: Option<i64>,
}

/// A token's last use is written at most this often, so a busy bot's requests do not
/// each write a row.
pub const TOUCH_MS: i64 = 60_000;

/// The columns of [`TokenRecord`] in the order both backends read them back.
pub(super) const TOKEN_COLUMNS: &str =
    "id, user_id, name, scopes, hash, created_at_ms, expires_at_ms, last_used_ms";

/// Personal tokens: the tokens part of [`Store`](super::Store). Synchronous like the
/// rest; async callers use `spawn_blocking`.
pub trait TokenStore {
    /// Stores a new token unless its user already has `max_per_user` unexpired ones
    /// (then `Ok(false)`, nothing stored). The user's expired tokens are deleted on the
    /// way, at `token.created_at_ms`.
    fn create_token(&self, token: &TokenRecord, max_per_user: usize) -> Result<bool, StoreError>;

    /// A user's tokens, oldest first.
    fn tokens(&self, user_id: &str) -> Result<Vec<TokenRecord>, StoreError>;

    /// Deletes `user_id`'s token `id` and numbers the revocation among the user changes;
    /// `Ok(false)` when the user has no such token.
    fn revoke_token(&self, user_id: &str, id: &str) -> Result<bool, StoreError>;

    /// The token hashed `hash` and its user, if stored; its last use becomes `now_ms`
    /// when the stored one is [`TOUCH_MS`] old or more. Expiry and a disabled user are
    /// the caller's to judge.
    fn use_token(
        &self,
        hash: &str,
        now_ms: i64,
    ) -> Result<Option<(TokenRecord, UserRecord)>, StoreError>;
}
