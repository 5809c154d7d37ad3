//! The JSON bodies of the account routes (`client-protocol/accounts.md`): what clients
//! send, what they get back, and every refusal's stable code.

use serde::{Deserialize, Serialize};

use crate::protocol::UserInfo;

/// `POST /api/auth/register`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterRequest {
    pub username: String,
    pub password: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invite: Option<String>,
}

/// `POST /api/auth/login`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    pub username: String,
    pub password: String,
}

/// `POST /api/auth/password`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordRequest {
    pub old: String,
    pub new: String,
}

/// What a successful register, login, refresh, password change or guest answers; the
/// refresh token travels beside it in a cookie, never in the body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionBody {
    /// An HS256 JWT for the WebSocket (`/ws?token=` or `Authorization: Bearer`).
    pub access_token: String,
    /// Always `"Bearer"`.
    pub token_type: String,
    /// Seconds until the access token expires.
    pub expires_in: u64,
    pub user: UserInfo,
}

/// Why an account request was refused. The wire form is the snake_case name; it never
/// changes once published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuthCode {
    /// Not JSON, not UTF-8, a missing, unknown or mistyped field.
    BadRequest,
    /// The body is larger than the routes read.
    TooLarge,
    /// The username is not 3-24 letters, digits, `_` or `-`.
    InvalidUsername,
    /// The username is reserved (`admin`, `guest…`, …).
    UsernameReserved,
    /// Someone has this username already (in any case or normalisation).
    UsernameTaken,
    /// The display name is empty, too long or holds control characters.
    InvalidDisplayName,
    /// The new password is too short, too common, or the username.
    WeakPassword,
    /// The password is longer than the cap.
    PasswordTooLong,
    /// Unknown username or wrong password: one answer for both.
    InvalidCredentials,
    /// The account is disabled by an operator.
    AccountDisabled,
    /// Too many failed logins or new identities; `retry_after` says when to try again.
    RateLimited,
    /// `auth.registration` is `closed` (or guests are off).
    RegistrationClosed,
    /// `auth.registration` is `invite` and no invite was given.
    InviteRequired,
    /// The invite is unknown, used or expired.
    InvalidInvite,
    /// No refresh cookie, or an unknown, expired or revoked one.
    InvalidRefresh,
    /// A refresh token was used twice: its whole family is revoked; log in again.
    RefreshReused,
    /// No valid access token where one is needed.
    Unauthorized,
    /// The identity cannot do this (a guest or external user changing a password).
    Forbidden,
    /// The server cannot take the request now (store failure, hashing queue full).
    Unavailable,
    /// The body is not sent as `Content-Type: application/json`.
    UnsupportedMediaType,
    /// A browser sent the request for a page of another site (`Origin`, `Sec-Fetch-Site`).
    CrossOrigin,
    /// The route takes a session's access token, and a personal API token was sent.
    SessionRequired,
    /// A personal token's name is empty, too long or holds control characters.
    InvalidTokenName,
    /// No scope, or one the server does not know.
    InvalidScope,
    /// A scope the account's role may not hold (`bot` for a person, `play` for a bot).
    ScopeNotAllowed,
    /// `expires_in_days` outside 1 to 365.
    InvalidExpiry,
    /// The account holds `auth.max_personal_tokens` tokens already.
    TooManyTokens,
    /// The caller holds no token with this id.
    UnknownToken,
    /// The personal token lacks the scope the request needs.
    InsufficientScope,
    /// Turning an account into a bot needs `confirm` to repeat the username.
    ConfirmationRequired,
    /// Only a `player` account may become a bot.
    NotAPlayer,
    /// The account plays or played a rated game, so it cannot become a bot.
    RatedGamesPlayed,
    /// Only a bot account has a bot profile.
    NotABot,
    /// The bot profile is not one the server can show (engine name, offer).
    InvalidBotProfile,
}

/// A refusal's body: `{"error": sentence, "code": code}` and, for `rate_limited`,
/// `retry_after` in seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthProblem {
    pub error: String,
    pub code: AuthCode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
}
