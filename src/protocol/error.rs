//! Error codes: stable strings a client can match on, one per way a request can fail.

use serde::{Deserialize, Serialize};

/// Why a request was refused. The wire form is the snake_case name; it never changes
/// once published (client-protocol/errors.md lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Malformed JSON, a missing or mistyped field, or impossible settings.
    BadRequest,
    /// A `type` the server does not know.
    UnknownType,
    /// No valid token, or the token was refused.
    Unauthorized,
    /// Authenticated, but not allowed to do this (a spectator playing, say).
    Forbidden,
    /// No such game, seek, challenge or user.
    NotFound,
    /// It is the opponent's move.
    NotYourTurn,
    /// The rules forbid the move; `reason` says which rule.
    IllegalMove,
    /// The request names a move number that is not the next one (a duplicate or old retry).
    StaleMove,
    /// The game is not in the phase this request belongs to.
    WrongPhase,
    /// Too many messages; slow down.
    RateLimited,
    /// The message is larger than the server accepts.
    TooLarge,
    /// A per-user limit (open seeks, live games) is reached.
    LimitReached,
    /// The server cannot take the request now (store failure, shutting down).
    Unavailable,
    /// A rated game (seek, challenge, accept, automatch) with a player who may not play
    /// rated games: guests play unrated games only.
    RatedNotAllowed,
    /// Registering for a tournament you are already registered in.
    AlreadyRegistered,
    /// Registering outside the tournament's registration window, or after it finished.
    RegistrationClosed,
    /// Registering with a rank outside the tournament's limits.
    OutsideLimits,
    /// Pairing a round before every game of the last one has a result.
    RoundNotFinished,
    /// Publishing a round that is already published.
    AlreadyPublished,
    /// A swap by hand that would pair two players who have already met.
    RepeatGame,
    /// A notification address that is not a mail address.
    InvalidAddress,
    /// The personal API token this connection logged in with lacks the scope the
    /// request needs (client-protocol/accounts.md#scopes).
    InsufficientScope,
    /// Going on vacation with less than an hour of vacation left
    /// (client-protocol/correspondence.md#vacation).
    NoVacationLeft,
    /// A calendar whose `time_zone` is not an IANA time zone
    /// (client-protocol/correspondence.md#weekends).
    InvalidTimeZone,
    /// A file that cannot be read: an OpenGotha import that is not well-formed XML, not
    /// a tournament, or names an unknown rank.
    InvalidFile,
    /// A Web Push subscription the server cannot use: an endpoint that is not an
    /// `https://` URL of a push service, or keys of the wrong length or kind
    /// (client-protocol/notifications.md#web-push).
    InvalidSubscription,
}

impl ErrorCode {
    /// The wire name (what serde writes), for logs and counters.
    pub fn as_str(self) -> &'static str {
        super::names::name_of(&self, "")
    }
}

/// A refusal: the code, a sentence for people, and for illegal moves the rule broken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    pub code: ErrorCode,
    pub message: String,
    /// For `illegal_move`: `occupied`, `suicide`, `ko`, `superko` or `off_board`.
    pub reason: Option<&'static str>,
    /// For a refusal that time will lift (a `claim_win` too early): how long from now.
    pub retry_after_ms: Option<u64>,
}

impl Refusal {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
            reason: None,
            retry_after_ms: None,
        }
    }

    /// The same refusal, lifted `ms` from now.
    pub fn retry_after(self, ms: u64) -> Refusal {
        Refusal {
            retry_after_ms: Some(ms),
            ..self
        }
    }

    pub fn illegal(err: crate::rules::IllegalMove) -> Refusal {
        Refusal {
            code: ErrorCode::IllegalMove,
            message: err.to_string(),
            reason: Some(err.reason()),
            retry_after_ms: None,
        }
    }
}
