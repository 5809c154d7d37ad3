//! `GET /api/games/{id}/estimate`: [`crate::estimate`] of a game in play, from its
//! stored record; a finished game has its result instead (409).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

use super::extract::GameIdPath;
use super::record::view;
use super::reply::problem;
use crate::estimate::estimate;
use crate::hub::Hub;
use crate::store::GameStatus;

pub fn routes() -> Router<Arc<Hub>> {
    Router::new().route("/api/games/{id}/estimate", get(handler))
}

async fn handler(State(hub): State<Arc<Hub>>, path: GameIdPath) -> Response {
    let v = match view(&hub, path).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    if v.status == GameStatus::Finished {
        return problem(
            StatusCode::CONFLICT,
            format!(
                "game `{}` is over ({}): estimates are for games in play",
                v.game_id,
                v.result.as_deref().unwrap_or("no result")
            ),
        );
    }
    match estimate(&v) {
        Some(e) => Json(e).into_response(),
        None => problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the game's moves could not be replayed",
        ),
    }
}
