//! Reviews over HTTP: an analysis board saved as SGF (`POST /api/reviews`, logged in),
//! then shared by its id (`GET /api/reviews/{id}`, its `/sgf`). A review is stored and
//! shared like a game record; its SGF is checked to be one readable game and bounded in
//! size, and each user's reviews are bounded in number.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use super::extract::{GameIdPath, bearer};
use super::reply::{blocking, problem};
use crate::accounts::tokens::scope::Scope;
use crate::hub::Hub;
use crate::protocol::ErrorCode;
use crate::store::ReviewRecord;

/// The largest SGF a review may hold.
pub const MAX_SGF_BYTES: usize = 64 * 1024;
/// The largest body `POST /api/reviews` reads: the largest SGF as a JSON string (each
/// line break, quote or backslash escaped takes two bytes) and the other fields.
pub const MAX_BODY_BYTES: usize = 2 * MAX_SGF_BYTES + 1024;

/// What `POST /api/reviews` takes.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct NewReview {
    sgf: String,
    game_id: Option<String>,
    move_number: Option<u32>,
}

/// A review as `GET /api/reviews/{id}` answers it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(super) struct ReviewView {
    review_id: String,
    owner: String,
    created_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    game_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    move_number: Option<u32>,
    sgf: String,
}

/// What `POST /api/reviews` answers.
#[derive(Serialize, schemars::JsonSchema)]
pub(super) struct SavedReview {
    review_id: String,
    /// The web client's page that opens the review.
    url: String,
}

pub fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route(
            "/api/reviews",
            post(create).layer(DefaultBodyLimit::max(MAX_BODY_BYTES)),
        )
        .route("/api/reviews/{id}", get(one))
        .route("/api/reviews/{id}/sgf", get(sgf))
}

async fn create(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    // A body past the server's limit is refused in the archive's JSON shape, not as text.
    let body = match body {
        Ok(body) => body,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return problem(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("a review's SGF is limited to {MAX_SGF_BYTES} bytes"),
            );
        }
        Err(e) => {
            return problem(
                StatusCode::BAD_REQUEST,
                format!("the body cannot be read: {}", e.body_text()),
            );
        }
    };
    let Some(token) = bearer(&headers) else {
        return problem(
            StatusCode::UNAUTHORIZED,
            "saving a review needs a token in an `Authorization: Bearer` header",
        );
    };
    // As at WebSocket connect: a disabled account's unexpired token saves nothing.
    let user = match crate::accounts::admit(hub.store(), &hub.verifier, token).await {
        Ok((user, grant)) if grant.allows(Scope::to_act_as(user.role)) => user,
        Ok((user, _)) => {
            let need = Scope::to_act_as(user.role).as_str();
            return problem(
                StatusCode::FORBIDDEN,
                format!("saving a review needs a personal token with the `{need}` scope"),
            );
        }
        Err(refusal) if refusal.code == ErrorCode::Unavailable => {
            return problem(StatusCode::SERVICE_UNAVAILABLE, refusal.message);
        }
        Err(refusal) => return problem(StatusCode::UNAUTHORIZED, refusal.message),
    };
    let new: NewReview = match serde_json::from_slice(&body) {
        Ok(new) => new,
        Err(e) => {
            return problem(
                StatusCode::BAD_REQUEST,
                format!(
                    "the body must be {{\"sgf\": ..., \"game_id\"?: ..., \"move_number\"?: ...}}: {e}"
                ),
            );
        }
    };
    if new.sgf.len() > MAX_SGF_BYTES {
        return problem(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a review's SGF is limited to {MAX_SGF_BYTES} bytes"),
        );
    }
    match crate::rules::sgf::parse(&new.sgf) {
        Ok(games) if games.len() == 1 => {}
        Ok(games) => {
            return problem(
                StatusCode::BAD_REQUEST,
                format!("a review's SGF holds one game, not {}", games.len()),
            );
        }
        Err(e) => {
            return problem(
                StatusCode::BAD_REQUEST,
                format!("the SGF cannot be read: {e}"),
            );
        }
    }
    let review = ReviewRecord {
        id: crate::ids::new_id(),
        created_at_ms: crate::time::wall_ms(),
        owner: user.id,
        game_id: new.game_id,
        move_number: new.move_number,
        sgf: new.sgf,
    };
    // A guest is made in one request and lasts as long as a cookie: it keeps few.
    let most = match user.role {
        crate::protocol::Role::Guest => hub.config.limits.max_reviews_per_guest,
        _ => hub.config.limits.max_reviews_per_user,
    };
    let store = hub.store().clone();
    let (owner, game_id) = (review.owner.clone(), review.game_id.clone());
    let checked = blocking(move || {
        let game_known = match &game_id {
            Some(id) => store.game(id)?.is_some(),
            None => true,
        };
        Ok((store.count_reviews(&owner)?, game_known))
    })
    .await;
    match checked {
        Err(r) => return r,
        Ok((_, false)) => return problem(StatusCode::NOT_FOUND, "no such game"),
        Ok((n, true)) if n >= most => {
            return problem(
                StatusCode::CONFLICT,
                format!("you keep {n} reviews already, the most a user may keep"),
            );
        }
        Ok(_) => {}
    }
    let id = review.id.clone();
    let store = hub.store().clone();
    if let Err(r) = blocking(move || store.save_review(&review)).await {
        return r;
    }
    let url = format!("/#/analysis?review={id}");
    (
        StatusCode::CREATED,
        Json(SavedReview { review_id: id, url }),
    )
        .into_response()
}

async fn find(hub: &Arc<Hub>, path: GameIdPath) -> Result<ReviewRecord, Response> {
    let id = path
        .map_err(|e| {
            problem(
                StatusCode::BAD_REQUEST,
                format!(
                    "the review id in the path cannot be read: {}",
                    e.body_text()
                ),
            )
        })?
        .0;
    let store = hub.store().clone();
    blocking(move || store.review(&id))
        .await?
        .ok_or_else(|| problem(StatusCode::NOT_FOUND, "no such review"))
}

async fn one(State(hub): State<Arc<Hub>>, path: GameIdPath) -> Response {
    match find(&hub, path).await {
        Ok(r) => Json(ReviewView {
            review_id: r.id,
            owner: r.owner,
            created_at: r.created_at_ms,
            game_id: r.game_id,
            move_number: r.move_number,
            sgf: r.sgf,
        })
        .into_response(),
        Err(r) => r,
    }
}

async fn sgf(State(hub): State<Arc<Hub>>, path: GameIdPath) -> Response {
    match find(&hub, path).await {
        Ok(r) => (
            [
                (
                    header::CONTENT_TYPE,
                    "application/x-go-sgf; charset=utf-8".to_string(),
                ),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"tengen-review-{}.sgf\"", r.id),
                ),
            ],
            r.sgf,
        )
            .into_response(),
        Err(r) => r,
    }
}
