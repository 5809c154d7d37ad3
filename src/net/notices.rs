//! Notices at the edge: the WebSocket requests (`list_notices`, `mark_notices_read`, the
//! notification settings), the same settings over HTTP for the profile page
//! (`GET`/`PUT /api/notifications`, logged in), and the links mailed to players
//! (`/notify/unsubscribe`, `/notify/verify`), which need no login: their token is signed.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use super::extract::{bearer, from_object};
use super::reply::CodedProblem;
use crate::accounts::tokens::scope::Scope;
use crate::hub::Hub;
use crate::notify::Followed;
use crate::protocol::{
    ErrorCode, LobbyMsg, MailMode, NoticeKind, Refusal, RequestId, Role, ServerMsg, UserInfo,
};

/// The largest settings body `PUT /api/notifications` reads.
pub(super) const MAX_BODY_BYTES: usize = 4096;

/// The reply to one of the notice requests of a logged-in `user`.
pub(super) async fn answer(
    hub: &Hub,
    user: &UserInfo,
    id: Option<RequestId>,
    msg: LobbyMsg,
) -> Result<ServerMsg, Refusal> {
    let notices = &hub.notices;
    Ok(match msg {
        LobbyMsg::ListNotices { before, limit } => {
            let (notices, unread, next) = notices.list(&user.id, before, limit).await?;
            ServerMsg::Notices {
                id,
                notices,
                unread,
                next,
            }
        }
        LobbyMsg::MarkNoticesRead { up_to } => {
            notices.mark_read(&user.id, up_to).await?;
            ServerMsg::Ack {
                id,
                game_id: None,
                seq: None,
            }
        }
        LobbyMsg::GetNotificationSettings {} => ServerMsg::NotificationSettings {
            id,
            settings: notices.settings(&user.id).await?,
        },
        LobbyMsg::SetNotificationSettings {
            address,
            modes,
            push_kinds,
        } => ServerMsg::NotificationSettings {
            id,
            settings: (notices.set_settings(&user.id, address, modes, push_kinds)).await?,
        },
        _ => {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                "not a request about notices",
            ));
        }
    })
}

pub fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route(
            "/api/notifications",
            get(settings)
                .put(change)
                .layer(DefaultBodyLimit::max(MAX_BODY_BYTES)),
        )
        .route("/notify/unsubscribe", get(follow).post(follow))
        .route("/notify/verify", get(follow))
}

/// A refusal as the API answers it, with its stable code.
pub(super) fn refused(r: Refusal) -> Response {
    let status = match r.code {
        ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::LimitReached => StatusCode::CONFLICT,
        ErrorCode::Forbidden | ErrorCode::InsufficientScope => StatusCode::FORBIDDEN,
        ErrorCode::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::BAD_REQUEST,
    };
    let body = CodedProblem {
        error: r.message,
        code: r.code,
    };
    (status, Json(body)).into_response()
}

/// The logged-in user of a profile request that needs `need` of a personal token
/// (reading the settings any token may; changing them is acting as the account).
pub(super) async fn user_of(
    hub: &Hub,
    headers: &HeaderMap,
    need: fn(Role) -> Scope,
) -> Result<UserInfo, Response> {
    let Some(token) = bearer(headers) else {
        return Err(refused(Refusal::new(
            ErrorCode::Unauthorized,
            "notification settings need a token in an `Authorization: Bearer` header",
        )));
    };
    let (user, grant) = crate::accounts::admit(hub.store(), &hub.verifier, token)
        .await
        .map_err(refused)?;
    let need = need(user.role);
    if !grant.allows(need) {
        return Err(refused(Refusal::new(
            ErrorCode::InsufficientScope,
            format!(
                "this needs a login or a personal token with the `{}` scope",
                need.as_str()
            ),
        )));
    }
    Ok(user)
}

async fn settings(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Response {
    let user = match user_of(&hub, &headers, |_| Scope::Read).await {
        Ok(user) => user,
        Err(refusal) => return refusal,
    };
    match hub.notices.settings(&user.id).await {
        Ok(settings) => Json(settings).into_response(),
        Err(r) => refused(r),
    }
}

/// What `PUT /api/notifications` takes: what `set_notification_settings` does.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Change {
    /// A bare mail address; an empty string removes it; absent: unchanged.
    #[serde(default)]
    address: Option<String>,
    /// The kinds to change; those left out stay as they are.
    #[serde(default)]
    #[schemars(schema_with = "crate::protocol::mail_modes_schema")]
    modes: BTreeMap<NoticeKind, MailMode>,
    /// Whether the kinds named are pushed to your browsers; those left out stay.
    #[serde(default)]
    #[schemars(schema_with = "crate::protocol::push_kinds_schema")]
    push_kinds: BTreeMap<NoticeKind, bool>,
}

async fn change(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let user = match user_of(&hub, &headers, Scope::to_act_as).await {
        Ok(user) => user,
        Err(refusal) => return refusal,
    };
    let change: Change = match body_of(body, "{\"address\"?: ..., \"modes\"?: {...}}") {
        Ok(change) => change,
        Err(r) => return refused(r),
    };
    match (hub.notices)
        .set_settings(&user.id, change.address, change.modes, change.push_kinds)
        .await
    {
        Ok(settings) => Json(settings).into_response(),
        Err(r) => refused(r),
    }
}

/// A JSON object body of at most [`MAX_BODY_BYTES`] read into `T`; a refusal that says
/// the body must be `shape` otherwise.
pub(super) fn body_of<T: serde::de::DeserializeOwned>(
    body: Result<Bytes, BytesRejection>,
    shape: &str,
) -> Result<T, Refusal> {
    let body = match body {
        Ok(body) => body,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return Err(Refusal::new(
                ErrorCode::TooLarge,
                format!("the body is larger than {MAX_BODY_BYTES} bytes"),
            ));
        }
        Err(e) => {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                format!("the body cannot be read: {}", e.body_text()),
            ));
        }
    };
    from_object(&body).map_err(|e| {
        Refusal::new(
            ErrorCode::BadRequest,
            format!("the body must be {shape}: {e}"),
        )
    })
}

#[derive(Deserialize)]
struct LinkQuery {
    token: String,
}

/// A mailed link, followed: a sentence saying what it did.
async fn follow(
    State(hub): State<Arc<Hub>>,
    query: Result<Query<LinkQuery>, QueryRejection>,
) -> Response {
    let text = |status, text: String| {
        (
            status,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            text,
        )
            .into_response()
    };
    let Ok(Query(LinkQuery { token })) = query else {
        return text(StatusCode::BAD_REQUEST, "this link has no token\n".into());
    };
    match hub.notices.follow(&token).await {
        Ok(Followed::Unsubscribed(kinds)) => {
            let names: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
            text(
                StatusCode::OK,
                format!(
                    "Done: no more mail for {}. Your profile's notification settings turn it back on.\n",
                    names.join(", ")
                ),
            )
        }
        Ok(Followed::Verified) => text(
            StatusCode::OK,
            "Your address is confirmed: notices will be mailed to it.\n".into(),
        ),
        Ok(Followed::Stale) => text(
            StatusCode::CONFLICT,
            "This link is for an address your account no longer has: nothing changed.\n".into(),
        ),
        Err(r) if r.code == ErrorCode::Unavailable => {
            text(StatusCode::SERVICE_UNAVAILABLE, format!("{}\n", r.message))
        }
        Err(r) => text(StatusCode::BAD_REQUEST, format!("{}\n", r.message)),
    }
}
