//! The game archive over HTTP: `GET /api/games` (live and recent, paged, by player),
//! `GET /api/games/{id}` (the JSON record) and `GET /api/games/{id}/sgf`.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use crate::archive::{self, GameView, ListedGame};
use crate::hub::Hub;
use crate::store::{GameQuery, GameStatus};

pub fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route("/api/games", get(list))
        .route("/api/games/{id}", get(one))
        .route("/api/games/{id}/sgf", get(sgf))
}

#[derive(Deserialize)]
struct ListQuery {
    player: Option<String>,
    status: Option<String>,
    /// Paging cursor: the `next` value of the previous page.
    before: Option<String>,
    limit: Option<u32>,
}

fn problem(status: StatusCode, message: impl Into<String>) -> Response {
    let body = serde_json::json!({"error": message.into()});
    (status, Json(body)).into_response()
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, crate::store::StoreError> + Send + 'static,
) -> Result<T, Response> {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(problem(StatusCode::SERVICE_UNAVAILABLE, e.to_string())),
        Err(e) => Err(problem(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
    }
}

async fn list(State(hub): State<Arc<Hub>>, Query(q): Query<ListQuery>) -> Response {
    let status = match q.status.as_deref() {
        None => None,
        Some(s) => match GameStatus::parse(s) {
            Some(status) => Some(status),
            None => return problem(StatusCode::BAD_REQUEST, "status is `live` or `finished`"),
        },
    };
    // The cursor is `created_at_ms:game_id` of the last game of the previous page.
    let (before_ms, before_id) = match q.before.as_deref().map(|b| b.split_once(':')) {
        None => (None, None),
        Some(Some((ms, id))) => match ms.parse() {
            Ok(ms) => (Some(ms), Some(id.to_string())),
            Err(_) => return problem(StatusCode::BAD_REQUEST, "bad `before` cursor"),
        },
        Some(None) => return problem(StatusCode::BAD_REQUEST, "bad `before` cursor"),
    };
    let query = GameQuery {
        player: q.player,
        status,
        before_ms,
        before_id,
        limit: q.limit.unwrap_or(GameQuery::DEFAULT_LIMIT),
    };
    let limit = query.effective_limit() as usize;
    let store = hub.store().clone();
    let games = match blocking(move || store.list_games(&query)).await {
        Ok(g) => g,
        Err(r) => return r,
    };
    let next = (games.len() == limit && limit > 0)
        .then(|| {
            games
                .last()
                .map(|g| format!("{}:{}", g.created_at_ms, g.id))
        })
        .flatten();
    let games: Vec<ListedGame> = games.into_iter().map(ListedGame::from).collect();
    Json(serde_json::json!({"games": games, "next": next})).into_response()
}

async fn view(hub: &Arc<Hub>, id: String) -> Result<GameView, Response> {
    let store = hub.store().clone();
    let found = blocking(move || {
        let row = store.game(&id)?;
        let events = match &row {
            Some(_) => store.events(&id)?,
            None => Vec::new(),
        };
        Ok(row.map(|r| (r, events)))
    })
    .await?;
    let (row, events) = found.ok_or_else(|| problem(StatusCode::NOT_FOUND, "no such game"))?;
    archive::game_view(&row, &events).ok_or_else(|| {
        problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the game's log could not be read",
        )
    })
}

async fn one(State(hub): State<Arc<Hub>>, Path(id): Path<String>) -> Response {
    match view(&hub, id).await {
        Ok(v) => Json(v).into_response(),
        Err(r) => r,
    }
}

async fn sgf(State(hub): State<Arc<Hub>>, Path(id): Path<String>) -> Response {
    match view(&hub, id).await {
        Ok(v) => (
            [
                (
                    header::CONTENT_TYPE,
                    "application/x-go-sgf; charset=utf-8".to_string(),
                ),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"tengen-{}.sgf\"", v.game_id),
                ),
            ],
            archive::sgf(&v),
        )
            .into_response(),
        Err(r) => r,
    }
}
