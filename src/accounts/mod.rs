//! accounts: people who sign up and log in on this server, guests, and what an access
//! token may stand for. Owns the rules (usernames, passwords, abuse limits, refresh-token
//! rotation) and the decisions; the HTTP shapes are in [`wire`] and the routes in
//! `net/auth.rs`; every account lives in the store ([`crate::store::AccountStore`]).
//! Never hashes a password on an async worker, never keeps a password or a refresh
//! token in clear, and never logs either.

pub mod admit;
pub mod bots;
pub mod limiter;
pub mod mutes;
pub mod password;
pub mod rated;
pub mod revoke;
pub mod tokens;
pub mod username;
pub mod wire;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

use tokio::sync::OnceCell;

use sha2::{Digest, Sha256};

use crate::auth::{Signer, Verifier, display_name, local_claims, sign};
use crate::config::{AuthConfig, Registration};
use crate::protocol::{Role, UserInfo};
use crate::store::{NewRefresh, Origin, Rotation, Store, StoreError, UserChange, UserRecord};
use crate::time::wall_ms;
use limiter::{Limiter, RetryAfter};
use password::{Hasher, PasswordError};
use username::{GUEST_PREFIX, Username, UsernameError};
use wire::{AuthCode, AuthProblem, LoginRequest, PasswordRequest, RegisterRequest, SessionBody};

pub use admit::admit;

/// Live refresh-token families (devices) one user keeps at most; a login past it revokes
/// the oldest.
pub const MAX_SESSIONS_PER_USER: usize = 10;

/// A fresh random secret (a refresh token, an invite code): 32 random bytes in hex.
pub fn fresh_secret() -> String {
    hex::encode(rand::random::<[u8; 32]>())
}

/// What the store keeps of a secret: its SHA-256 in hex. The secrets are 256 random bits,
/// so a plain hash cannot be reversed and needs no salt.
pub fn digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// A session handed out: the body, and the refresh token for the cookie.
#[derive(Debug)]
pub struct Issued {
    pub body: SessionBody,
    pub refresh_token: String,
}

fn problem(code: AuthCode, message: impl Into<String>) -> AuthProblem {
    AuthProblem {
        error: message.into(),
        code,
        retry_after: None,
    }
}

fn rate_limited(wait: RetryAfter, what: &str) -> AuthProblem {
    AuthProblem {
        error: format!("{what}; try again in {} s.", wait.secs()),
        code: AuthCode::RateLimited,
        retry_after: Some(wait.secs()),
    }
}

fn unavailable(e: impl std::fmt::Display) -> AuthProblem {
    // The store's own text names files; it goes to the log, not to the client.
    tracing::error!(error = %e, "an account request failed in the store");
    problem(
        AuthCode::Unavailable,
        "The account store cannot take the request now; try again later.",
    )
}

fn password_problem(e: PasswordError) -> AuthProblem {
    let code = match e {
        PasswordError::TooLong => AuthCode::PasswordTooLong,
        PasswordError::TooShort(_) | PasswordError::TooCommon | PasswordError::SameAsUsername => {
            AuthCode::WeakPassword
        }
        PasswordError::Busy | PasswordError::Hash(_) => return unavailable(e),
    };
    problem(code, capitalised(&e.to_string()))
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

const WRONG_CREDENTIALS: &str = "The username or the password is wrong.";

/// The account desk of one server: registers, logs in, rotates and revokes.
pub struct Accounts {
    store: Arc<dyn Store>,
    auth: AuthConfig,
    /// The HS256 secret access tokens are signed with.
    secret: Vec<u8>,
    hasher: Hasher,
    limiter: Limiter,
    /// Accounts registered before usernames were case-folded whose id is not their
    /// folding (`straße`), by that folding (`strasse`): read once, since no new account
    /// can be one.
    unfolded: OnceCell<HashMap<String, String>>,
}

impl Accounts {
    pub fn new(auth: &AuthConfig, store: Arc<dyn Store>, secret: Vec<u8>) -> Accounts {
        Accounts {
            store,
            auth: auth.clone(),
            secret,
            hasher: Hasher::for_this_machine(),
            limiter: Limiter::new(auth.registrations_per_hour),
            unfolded: OnceCell::new(),
        }
    }

    /// The account registered before usernames were folded that `name` stands for, if
    /// any: `Straße`, `STRASSE` and `strasse` all find the old `straße`.
    async fn unfolded(&self, name: &Username) -> Result<Option<String>, AuthProblem> {
        let ids = self
            .unfolded
            .get_or_try_init(|| async {
                let ids = self
                    .on_store(|s| s.non_ascii_local_ids())
                    .await?
                    .map_err(unavailable)?;
                Ok::<_, AuthProblem>(username::unfolded(ids))
            })
            .await?;
        Ok(ids.get(name.as_str()).cloned())
    }

    /// Seconds a refresh token lives.
    pub fn refresh_ttl_secs(&self) -> u64 {
        self.auth.refresh_ttl_days * 86_400
    }

    /// Whether the refresh cookie is `Secure`: when the public URL is https.
    pub fn secure_cookie(&self) -> bool {
        self.auth
            .public_url
            .as_deref()
            .is_some_and(|u| u.starts_with("https://"))
    }

    /// Runs a store call on the blocking pool.
    async fn on_store<T: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<Result<T, StoreError>, AuthProblem> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || work(store.as_ref()))
            .await
            .map_err(unavailable)
    }

    fn access_token(&self, user: &UserRecord) -> Result<SessionBody, AuthProblem> {
        let claims = local_claims(
            &self.auth,
            &user.id,
            Some(&user.display_name),
            user.role,
            self.auth.access_ttl_secs,
        );
        let access_token = sign(&self.secret, &claims).map_err(unavailable)?;
        Ok(SessionBody {
            access_token,
            token_type: "Bearer".into(),
            expires_in: self.auth.access_ttl_secs,
            user: UserInfo {
                id: user.id.clone(),
                name: user.display_name.clone(),
                role: user.role,
            },
        })
    }

    fn new_refresh(&self) -> (String, NewRefresh) {
        let token = fresh_secret();
        let now = wall_ms();
        let ttl_ms = i64::try_from(self.refresh_ttl_secs() * 1000).unwrap_or(i64::MAX);
        let record = NewRefresh {
            hash: digest(&token),
            issued_at_ms: now,
            expires_at_ms: now.saturating_add(ttl_ms),
        };
        (token, record)
    }

    /// Starts a new session (a refresh family) for `user`.
    async fn start_session(&self, user: UserRecord) -> Result<Issued, AuthProblem> {
        let body = self.access_token(&user)?;
        let (refresh_token, record) = self.new_refresh();
        let id = user.id.clone();
        self.on_store(move |s| s.start_refresh_family(&id, &record, MAX_SESSIONS_PER_USER))
            .await?
            .map_err(unavailable)?;
        Ok(Issued {
            body,
            refresh_token,
        })
    }

    /// `POST /api/auth/register`.
    pub async fn register(
        &self,
        req: RegisterRequest,
        from: IpAddr,
    ) -> Result<Issued, AuthProblem> {
        // The cap comes first at every route that takes a password (accounts.md).
        password::check_length(&req.password).map_err(password_problem)?;
        let invite = match (self.auth.registration, req.invite.as_deref()) {
            (Registration::Closed, _) => {
                return Err(problem(
                    AuthCode::RegistrationClosed,
                    "Registration is closed on this server; ask its operator for an account.",
                ));
            }
            (Registration::Invite, None) => {
                return Err(problem(
                    AuthCode::InviteRequired,
                    "This server registers by invitation only; send the `invite` code you were given.",
                ));
            }
            (Registration::Invite, Some(code)) => Some(digest(code.trim())),
            (Registration::Open, _) => None,
        };
        let username = Username::parse(&req.username).map_err(|e| {
            let code = match e {
                UsernameError::Reserved(_) => AuthCode::UsernameReserved,
                _ => AuthCode::InvalidUsername,
            };
            problem(code, capitalised(&e.to_string()))
        })?;
        let shown = match req.display_name.as_deref() {
            Some(name) => display_name(name)
                .map_err(|why| {
                    problem(
                        AuthCode::InvalidDisplayName,
                        format!("The display name {why}."),
                    )
                })?
                .to_string(),
            None => req.username.trim().to_string(),
        };
        password::check_new(&req.password, username.as_str()).map_err(password_problem)?;
        self.limiter
            .may_register(from)
            .map_err(|w| rate_limited(w, "Too many new accounts from this address"))?;
        let id = username.as_str().to_string();
        let old = self.unfolded(&username).await?.is_some();
        let taken = self
            .on_store(move |s| Ok(old || s.user(&id)?.is_some() || s.has_played(&id)?))
            .await?
            .map_err(unavailable)?;
        if taken {
            return Err(taken_problem(&username));
        }
        let hash = self
            .hasher
            .hash(req.password)
            .await
            .map_err(password_problem)?;
        let user = UserRecord {
            id: username.as_str().to_string(),
            origin: Origin::Local,
            display_name: shown,
            role: Role::Player,
            password_hash: Some(hash),
            disabled: false,
            created_at_ms: wall_ms(),
        };
        let row = user.clone();
        self.on_store(move |s| s.create_user(&row, invite.as_deref(), wall_ms()))
            .await?
            .map_err(|e| match e {
                StoreError::DuplicateUser { .. } => taken_problem(&username),
                StoreError::InvalidInvite => problem(
                    AuthCode::InvalidInvite,
                    "The invite code is unknown, already used or expired.",
                ),
                e => unavailable(e),
            })?;
        self.limiter.registered(from);
        tracing::info!(user = %user.id, "registered an account");
        self.start_session(user).await
    }

    /// `POST /api/auth/login`.
    pub async fn login(&self, req: LoginRequest, from: IpAddr) -> Result<Issued, AuthProblem> {
        password::check_length(&req.password).map_err(password_problem)?;
        let canonical = Username::canonical(&req.username).ok();
        // Failures of a name that cannot exist still count, under its plain spelling.
        let key = match &canonical {
            Some(name) => name.as_str().to_string(),
            None => req
                .username
                .trim()
                .to_lowercase()
                .chars()
                .take(64)
                .collect(),
        };
        self.limiter
            .may_log_in(&key, from)
            .map_err(|w| rate_limited(w, "Too many failed logins"))?;
        let user = match canonical {
            Some(name) => {
                let old = self.unfolded(&name).await?;
                self.on_store(move |s| match s.user(name.as_str())? {
                    None => old.map_or(Ok(None), |old| s.user(&old)),
                    found => Ok(found),
                })
                .await?
                .map_err(unavailable)?
            }
            None => None,
        };
        let stored = user
            .as_ref()
            .filter(|u| u.origin == Origin::Local)
            .and_then(|u| u.password_hash.clone());
        let matches = self
            .hasher
            .verify(req.password, stored)
            .await
            .map_err(password_problem)?;
        let user = match user {
            Some(user) if matches => user,
            _ => {
                self.limiter.login_failed(&key, from);
                return Err(problem(AuthCode::InvalidCredentials, WRONG_CREDENTIALS));
            }
        };
        self.limiter.login_succeeded(&key);
        if user.disabled {
            return Err(disabled_problem());
        }
        self.start_session(user).await
    }

    /// `POST /api/auth/refresh` with the cookie's token.
    pub async fn refresh(&self, token: Option<String>) -> Result<Issued, AuthProblem> {
        let token = token.ok_or_else(no_refresh)?;
        let (refresh_token, record) = self.new_refresh();
        let old = digest(&token);
        let rotation = self
            .on_store(move |s| s.rotate_refresh(&old, &record))
            .await?
            .map_err(unavailable)?;
        match rotation {
            Rotation::Rotated(user) => Ok(Issued {
                body: self.access_token(&user)?,
                refresh_token,
            }),
            Rotation::Replayed => {
                tracing::warn!("a used refresh token was presented again; its family is revoked");
                Err(problem(
                    AuthCode::RefreshReused,
                    "This refresh token was already used, so every session that came from the same login is now ended; log in again.",
                ))
            }
            Rotation::Invalid => Err(no_refresh()),
            Rotation::Disabled => Err(disabled_problem()),
        }
    }

    /// `POST /api/auth/logout`: ends the cookie's session (its whole family). Without a
    /// cookie, or with an unknown one, there is nothing to end.
    pub async fn logout(&self, token: Option<String>) -> Result<(), AuthProblem> {
        let Some(token) = token else { return Ok(()) };
        let hash = digest(&token);
        self.on_store(move |s| s.revoke_refresh_family(&hash))
            .await?
            .map_err(unavailable)
    }

    /// `POST /api/auth/password` for the holder of `bearer`: every session of the user
    /// ends, and a new one starts for this client.
    pub async fn change_password(
        &self,
        verifier: &Verifier,
        bearer: Option<&str>,
        req: PasswordRequest,
        from: IpAddr,
    ) -> Result<Issued, AuthProblem> {
        password::check_length(&req.old).map_err(password_problem)?;
        password::check_length(&req.new).map_err(password_problem)?;
        let bearer = bearer.ok_or_else(|| {
            problem(
                AuthCode::Unauthorized,
                "Send the access token as `Authorization: Bearer <token>`.",
            )
        })?;
        if tokens::is_personal(bearer) {
            return Err(problem(
                AuthCode::SessionRequired,
                "A personal API token cannot change the password; log in.",
            ));
        }
        let (who, signer) = verifier
            .verify_signed(bearer)
            .map_err(|why| problem(AuthCode::Unauthorized, why))?;
        let id = who.id.clone();
        let user = match signer {
            Signer::Local => self
                .on_store(move |s| s.user(&id))
                .await?
                .map_err(unavailable)?,
            Signer::External => None,
        };
        let Some((user, stored)) = user.and_then(|u| {
            let hash = u
                .password_hash
                .clone()
                .filter(|_| u.origin == Origin::Local)?;
            Some((u, hash))
        }) else {
            return Err(problem(
                AuthCode::Forbidden,
                "Only an account registered on this server has a password to change.",
            ));
        };
        if user.disabled {
            return Err(disabled_problem());
        }
        password::check_new(&req.new, &user.id).map_err(password_problem)?;
        self.limiter
            .may_log_in(&user.id, from)
            .map_err(|w| rate_limited(w, "Too many wrong passwords"))?;
        if !self
            .hasher
            .verify(req.old, Some(stored))
            .await
            .map_err(password_problem)?
        {
            self.limiter.login_failed(&user.id, from);
            return Err(problem(
                AuthCode::InvalidCredentials,
                "The old password is wrong.",
            ));
        }
        let hash = self.hasher.hash(req.new).await.map_err(password_problem)?;
        let id = user.id.clone();
        self.on_store(move |s| s.update_user(&id, &UserChange::Password(hash)))
            .await?
            .map_err(unavailable)?;
        tracing::info!(user = %user.id, "password changed; every session revoked");
        self.start_session(user).await
    }

    /// `POST /api/auth/guest`: a new guest identity.
    pub async fn guest(&self, from: IpAddr) -> Result<Issued, AuthProblem> {
        if !self.auth.guests {
            return Err(problem(
                AuthCode::RegistrationClosed,
                "This server does not take guests; log in or register.",
            ));
        }
        self.limiter
            .may_register(from)
            .map_err(|w| rate_limited(w, "Too many new guests from this address"))?;
        let id = format!("{GUEST_PREFIX}-{}", hex::encode(rand::random::<[u8; 5]>()));
        let user = UserRecord {
            display_name: id.clone(),
            id,
            origin: Origin::Guest,
            role: Role::Guest,
            password_hash: None,
            disabled: false,
            created_at_ms: wall_ms(),
        };
        let row = user.clone();
        self.on_store(move |s| s.create_user(&row, None, wall_ms()))
            .await?
            .map_err(unavailable)?;
        self.limiter.registered(from);
        self.start_session(user).await
    }
}

fn taken_problem(username: &Username) -> AuthProblem {
    problem(
        AuthCode::UsernameTaken,
        format!(
            "The username {:?} is taken; choose another.",
            username.as_str()
        ),
    )
}

fn disabled_problem() -> AuthProblem {
    problem(
        AuthCode::AccountDisabled,
        "This account is disabled; ask the server's operator.",
    )
}

fn no_refresh() -> AuthProblem {
    problem(
        AuthCode::InvalidRefresh,
        "No valid refresh token: log in again.",
    )
}
