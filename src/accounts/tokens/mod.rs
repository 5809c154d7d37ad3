//! Personal API tokens: a logged-in user creates, names, scopes and revokes tokens for
//! their programs (a bot, a script), instead of asking the operator for one. A token is
//! `tgn_` and 12 hex digits (its visible id, shown in lists) then `_` and 64 hex digits
//! of secret; it is shown once, and the store keeps only its SHA-256 (the secret is 256
//! random bits, so a plain hash cannot be reversed, and it is checked on every request,
//! where argon2 would cost too much). It is checked against the store on each use: a
//! revoked one, an expired one and a disabled account's are refused at once, and a
//! revocation ends the connections it opened on every server ([`super::revoke`]).
//! The routes are `net/tokens.rs`; the scopes and what each request needs are
//! [`scope`].

pub mod open;
pub mod scope;
pub mod wire;

use std::sync::Arc;

use super::{digest, fresh_secret, problem, unavailable};
use crate::auth::display_name;
use crate::protocol::{ErrorCode, Refusal, Role, UserInfo};
use crate::store::{Origin, Store, StoreError, TokenRecord};
use crate::time::wall_ms;
use scope::{Grant, Scope, Scopes};
use wire::{CreateTokenRequest, CreatedToken, TokenList, TokenView};

use super::wire::{AuthCode, AuthProblem};

/// What every personal token starts with, so the server tells it from a JWT at a glance.
pub const PREFIX: &str = "tgn_";
/// Longest lifetime a token may be given, in days.
pub const MAX_EXPIRY_DAYS: u32 = 365;

/// Whether `token` is a personal token (else a JWT).
pub fn is_personal(token: &str) -> bool {
    token.starts_with(PREFIX)
}

/// The user a personal token names and its grant, if the token is stored, unexpired and
/// its account enabled; its last use is noted on the way.
pub async fn admit(store: &Arc<dyn Store>, token: &str) -> Result<(UserInfo, Grant), Refusal> {
    let (store, hash, now) = (store.clone(), digest(token), wall_ms());
    let found = tokio::task::spawn_blocking(move || store.use_token(&hash, now))
        .await
        .map_err(|e| Refusal::new(ErrorCode::Unavailable, e.to_string()))?
        .map_err(|e| {
            tracing::error!(error = %e, "cannot look up a personal token");
            Refusal::new(
                ErrorCode::Unavailable,
                "The server cannot check the token now; try again later.",
            )
        })?;
    let refused = |m: &str| Err(Refusal::new(ErrorCode::Unauthorized, m));
    let Some((token, user)) = found else {
        return refused("The personal token is unknown or was revoked.");
    };
    if token.expires_at_ms.is_some_and(|at| at <= now) {
        return refused("The personal token has expired; create a new one.");
    }
    if user.disabled {
        return refused("This account is disabled; ask the server's operator.");
    }
    let grant = Grant::Personal {
        token: token.id,
        scopes: Scopes::from_text(&token.scopes),
    };
    Ok((
        UserInfo {
            id: user.id,
            name: user.display_name,
            role: user.role,
        },
        grant,
    ))
}

/// The token desk: creates, lists and revokes a user's tokens.
pub struct Tokens {
    store: Arc<dyn Store>,
    /// Tokens one account may hold (`auth.max_personal_tokens`).
    max: usize,
}

fn view(t: TokenRecord) -> TokenView {
    TokenView {
        scopes: Scopes::from_text(&t.scopes).list(),
        id: t.id,
        name: t.name,
        created_at: t.created_at_ms,
        expires_at: t.expires_at_ms,
        last_used_at: t.last_used_ms,
    }
}

impl Tokens {
    pub fn new(store: Arc<dyn Store>, max: usize) -> Tokens {
        Tokens { store, max }
    }

    async fn on_store<T: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, AuthProblem> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || work(store.as_ref()))
            .await
            .map_err(unavailable)?
            .map_err(unavailable)
    }

    /// `POST /api/tokens` for `user`, who logged in with a session.
    pub async fn create(
        &self,
        user: &UserInfo,
        req: CreateTokenRequest,
    ) -> Result<CreatedToken, AuthProblem> {
        let name = display_name(&req.name)
            .map_err(|why| {
                problem(
                    AuthCode::InvalidTokenName,
                    format!("The token's name {why}."),
                )
            })?
            .to_string();
        if req.scopes.is_empty() {
            return Err(problem(
                AuthCode::InvalidScope,
                "Give the token at least one scope: read, play, bot or tournament:direct.",
            ));
        }
        if let Some(scope) = req.scopes.iter().find(|s| !s.allowed_to(user.role)) {
            return Err(problem(
                AuthCode::ScopeNotAllowed,
                not_allowed_text(*scope, user.role),
            ));
        }
        let now = wall_ms();
        let expires_at_ms = match req.expires_in_days {
            None => None,
            Some(days) if (1..=MAX_EXPIRY_DAYS).contains(&days) => {
                Some(now.saturating_add(i64::from(days) * 86_400_000))
            }
            Some(days) => {
                return Err(problem(
                    AuthCode::InvalidExpiry,
                    format!(
                        "`expires_in_days` must be from 1 to {MAX_EXPIRY_DAYS}, not {days}; leave it out for a token that never expires."
                    ),
                ));
            }
        };
        let id = user.id.clone();
        let account = self.on_store(move |s| s.user(&id)).await?;
        if !account.is_some_and(|a| a.origin != Origin::Guest && !a.disabled) {
            return Err(problem(
                AuthCode::Forbidden,
                "Only an enabled account on this server (not a guest) may hold personal tokens.",
            ));
        }
        let id = format!("{PREFIX}{}", hex::encode(rand::random::<[u8; 6]>()));
        let secret = format!("{id}_{}", fresh_secret());
        let record = TokenRecord {
            id,
            user_id: user.id.clone(),
            name,
            scopes: Scopes::of(req.scopes).to_text(),
            hash: digest(&secret),
            created_at_ms: now,
            expires_at_ms,
            last_used_ms: None,
        };
        let (row, max) = (record.clone(), self.max);
        if !self.on_store(move |s| s.create_token(&row, max)).await? {
            return Err(problem(
                AuthCode::TooManyTokens,
                format!("An account holds at most {max} personal tokens; revoke one first."),
            ));
        }
        tracing::info!(user = %user.id, token = %record.id, scopes = %record.scopes, "created a personal token");
        Ok(CreatedToken {
            token: secret,
            view: view(record),
        })
    }

    /// `GET /api/tokens`.
    pub async fn list(&self, user: &UserInfo) -> Result<TokenList, AuthProblem> {
        let id = user.id.clone();
        let tokens = self.on_store(move |s| s.tokens(&id)).await?;
        Ok(TokenList {
            tokens: tokens.into_iter().map(view).collect(),
            max: self.max,
        })
    }

    /// `DELETE /api/tokens/{id}`: the token is gone, and its connections end.
    pub async fn revoke(&self, user: &UserInfo, token: &str) -> Result<(), AuthProblem> {
        let (id, token) = (user.id.clone(), token.to_string());
        let shown = token.clone();
        if !self.on_store(move |s| s.revoke_token(&id, &token)).await? {
            return Err(problem(
                AuthCode::UnknownToken,
                format!("You hold no token {shown:?}."),
            ));
        }
        tracing::info!(user = %user.id, token = %shown, "revoked a personal token");
        Ok(())
    }
}

fn not_allowed_text(scope: Scope, role: Role) -> String {
    let why = match scope {
        Scope::Bot => {
            "only a bot account's tokens may act as a bot (turn the account into a bot first)"
        }
        Scope::Play => "a bot account acts with the `bot` scope",
        Scope::TournamentDirect => "it is for tournament directors: referee and admin accounts",
        Scope::Read => "",
    };
    let role = serde_json::to_string(&role).unwrap_or_default();
    format!(
        "The scope `{}` is not for this account (role {role}): {why}.",
        scope.as_str()
    )
}
