//! The self-service routes of an account: personal API tokens (`GET`/`POST /api/tokens`,
//! `DELETE /api/tokens/{id}`), turning the account into a bot (`POST /api/account/bot`),
//! a bot's profile (`PUT /api/account/bot-profile`), and the public bots page
//! (`GET /api/bots`); client-protocol/accounts.md#personal-api-tokens and
//! bots.md#bot-accounts. Managing tokens and the account takes a session's access token,
//! never a personal token, so a leaked token cannot mint others or change its account.
//! The decisions are in [`crate::accounts::tokens`] and [`crate::accounts::bots`].

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use serde::Serialize;

use super::account_reply::{MAX_BODY_BYTES, body, refusal, same_origin};
use super::extract::bearer;
use crate::accounts::bots;
use crate::accounts::tokens::Tokens;
use crate::accounts::tokens::scope::{Grant, Scope};
use crate::accounts::wire::{AuthCode, AuthProblem};
use crate::hub::Hub;
use crate::protocol::{ErrorCode, UserInfo};

#[derive(Clone)]
struct Desk {
    hub: Arc<Hub>,
    tokens: Arc<Tokens>,
}

/// The routes, to merge into the server's router.
pub fn routes<S: Clone + Send + Sync + 'static>(hub: &Arc<Hub>) -> Router<S> {
    let max = hub.config.auth.max_personal_tokens;
    let desk = Desk {
        hub: hub.clone(),
        tokens: Arc::new(Tokens::new(hub.store().clone(), max)),
    };
    Router::new()
        .route("/api/tokens", get(list).post(create))
        .route("/api/tokens/{id}", delete(revoke))
        .route("/api/account/bot", post(make_bot))
        .route("/api/account/bot-profile", put(bot_profile))
        .route("/api/bots", get(bots_page))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(desk)
}

fn problem(code: AuthCode, message: impl Into<String>) -> AuthProblem {
    AuthProblem {
        error: message.into(),
        code,
        retry_after: None,
    }
}

/// The caller named by the bearer token, after the same-origin check, and what the token
/// grants.
async fn caller(desk: &Desk, headers: &HeaderMap) -> Result<(UserInfo, Grant), AuthProblem> {
    same_origin(desk.hub.config.auth.public_url.as_deref(), headers)?;
    let token = bearer(headers).ok_or_else(|| {
        problem(
            AuthCode::Unauthorized,
            "Send your access token as `Authorization: Bearer <token>`.",
        )
    })?;
    crate::accounts::admit(desk.hub.store(), &desk.hub.verifier, token)
        .await
        .map_err(|r| match r.code {
            ErrorCode::Unavailable => problem(AuthCode::Unavailable, r.message),
            _ => problem(AuthCode::Unauthorized, r.message),
        })
}

/// [`caller`], who must have logged in (a session's access token, not a personal one).
async fn signed_in(desk: &Desk, headers: &HeaderMap) -> Result<UserInfo, AuthProblem> {
    match caller(desk, headers).await? {
        (user, Grant::Session) => Ok(user),
        (_, Grant::Personal { .. }) => Err(problem(
            AuthCode::SessionRequired,
            "Personal API tokens and the account are managed with a login's access token, not with a personal token.",
        )),
    }
}

/// A JSON answer, never cached (it may hold a secret, and it is one user's).
fn json<T: Serialize>(status: StatusCode, value: &T) -> Response {
    let mut response = (status, Json(value)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn answer<T: Serialize>(status: StatusCode, result: Result<T, AuthProblem>) -> Response {
    match result {
        Ok(value) => json(status, &value),
        Err(p) => refusal(p),
    }
}

async fn list(State(desk): State<Desk>, headers: HeaderMap) -> Response {
    let result = match signed_in(&desk, &headers).await {
        Ok(user) => desk.tokens.list(&user).await,
        Err(p) => Err(p),
    };
    answer(StatusCode::OK, result)
}

async fn create(
    State(desk): State<Desk>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        let user = signed_in(&desk, &headers).await?;
        desk.tokens.create(&user, body(&headers, bytes)?).await
    };
    let result = result.await;
    answer(StatusCode::CREATED, result)
}

async fn revoke(
    State(desk): State<Desk>,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
) -> Response {
    let user = match signed_in(&desk, &headers).await {
        Ok(user) => user,
        Err(p) => return refusal(p),
    };
    let Ok(Path(id)) = id else {
        return refusal(problem(AuthCode::UnknownToken, "No such token."));
    };
    match desk.tokens.revoke(&user, &id).await {
        Ok(()) => (
            StatusCode::NO_CONTENT,
            [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        )
            .into_response(),
        Err(p) => refusal(p),
    }
}

/// `POST /api/account/bot`'s answer: the account as it is now.
#[derive(Serialize, schemars::JsonSchema)]
pub(super) struct MadeBot {
    user: UserInfo,
}

async fn make_bot(
    State(desk): State<Desk>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    let result = async {
        let user = signed_in(&desk, &headers).await?;
        let user = bots::make_bot(desk.hub.store(), &user, body(&headers, bytes)?).await?;
        Ok(MadeBot { user })
    };
    let result = result.await;
    answer(StatusCode::OK, result)
}

/// The bot's profile, set with a login's access token or with the bot's own `bot`
/// token (so a bot program may declare what it plays).
async fn bot_profile(
    State(desk): State<Desk>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Response {
    let result = match caller(&desk, &headers).await {
        Ok((_, grant)) if !grant.allows(Scope::Bot) => Err(problem(
            AuthCode::InsufficientScope,
            "Setting a bot's profile needs a login or a personal token with the `bot` scope.",
        )),
        Ok((user, _)) => match body(&headers, bytes) {
            Ok(profile) => bots::set_profile(desk.hub.store(), &user, profile).await,
            Err(p) => Err(p),
        },
        Err(p) => Err(p),
    };
    answer(StatusCode::OK, result)
}

/// The public bots page: no token needed. `?after=` is the last id of the page before;
/// other parameters are ignored.
async fn bots_page(
    State(desk): State<Desk>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Response {
    let after = pairs
        .into_iter()
        .find(|(k, _)| k == "after")
        .map(|(_, v)| v)
        .unwrap_or_default();
    let lobby = desk.hub.lobby.clone();
    let result = bots::page(desk.hub.store(), after, |id| lobby.is_online(id)).await;
    match result {
        Ok(page) => (StatusCode::OK, Json(page)).into_response(),
        Err(p) => refusal(p),
    }
}
