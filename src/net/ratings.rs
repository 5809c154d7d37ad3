//! Ratings over HTTP (client-protocol/ratings.md): `GET /api/users/{id}` (a player's
//! profile) and `GET /api/ratings` (a pool's leaderboard). Read-only, from the store;
//! refusals are `{"error": ...}` as in the archive.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::reply::{blocking, problem};
use crate::accounts::username::Username;
use crate::hub::Hub;
use crate::rating::Pool;
use crate::standings::view::{
    DEFAULT_LEADERBOARD, ESCAPE_SCAN, Escapes, HISTORY_LIMIT, Leaderboard, LeaderboardEntry,
    MAX_LEADERBOARD, Profile,
};

pub fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route("/api/users/{id}", get(profile))
        .route("/api/ratings", get(leaderboard))
}

async fn profile(
    State(hub): State<Arc<Hub>>,
    path: Result<Path<String>, PathRejection>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Response {
    if let Some((name, _)) = pairs.first() {
        return problem(
            StatusCode::BAD_REQUEST,
            format!("unknown parameter `{name}`; a profile takes no parameters"),
        );
    }
    let Ok(Path(id)) = path else {
        return problem(
            StatusCode::BAD_REQUEST,
            "the user id in the path cannot be read",
        );
    };
    let store = hub.store().clone();
    // Ids are exact, but an account's is its folded username, so `ALICE` finds `alice`.
    let folded = Username::canonical(&id)
        .ok()
        .map(Username::into_string)
        .filter(|folded| *folded != id);
    let found = blocking(move || {
        for id in std::iter::once(id).chain(folded) {
            let name = store.player_name(&id)?;
            let rows = store.player_ratings(&id)?;
            if name.is_none() && rows.is_empty() {
                continue;
            }
            let history = store.rating_history(&id, HISTORY_LIMIT)?;
            let escapes = Escapes::of(&id, &store.forfeit_losses(&id, ESCAPE_SCAN)?);
            let name = name.unwrap_or_else(|| id.clone());
            return Ok(Some(Profile::new(id, name, &rows, history, escapes)));
        }
        Ok(None)
    })
    .await;
    match found {
        Ok(Some(profile)) => Json(profile).into_response(),
        Ok(None) => problem(
            StatusCode::NOT_FOUND,
            "no such player: no account and no game here",
        ),
        Err(response) => response,
    }
}

/// The query of `GET /api/ratings`: each parameter at most once, refusals naming it.
fn leaderboard_query(pairs: Vec<(String, String)>) -> Result<(Pool, u32), String> {
    let (mut pool, mut limit) = (Pool::Overall, DEFAULT_LEADERBOARD);
    let mut seen: Vec<String> = Vec::new();
    for (name, value) in pairs {
        if seen.contains(&name) {
            return Err(format!("the parameter `{name}` is given more than once"));
        }
        match name.as_str() {
            "size" => {
                pool = value
                    .parse::<u8>()
                    .ok()
                    .and_then(Pool::of_size)
                    .ok_or_else(|| {
                        format!(
                            "`size` must be 9, 13 or 19 (leave it out for overall), not {value:?}"
                        )
                    })?
            }
            "limit" => limit = value
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=MAX_LEADERBOARD).contains(n))
                .ok_or_else(|| {
                    format!(
                        "`limit` must be a whole number from 1 to {MAX_LEADERBOARD}, not {value:?}"
                    )
                })?,
            _ => {
                return Err(format!(
                    "unknown parameter `{name}`; the parameters are `size` and `limit`"
                ));
            }
        }
        seen.push(name);
    }
    Ok((pool, limit))
}

async fn leaderboard(
    State(hub): State<Arc<Hub>>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Response {
    let (pool, limit) = match leaderboard_query(pairs) {
        Ok(q) => q,
        Err(why) => return problem(StatusCode::BAD_REQUEST, why),
    };
    let store = hub.store().clone();
    let board = blocking(move || {
        let rows = store.leaderboard(pool.name(), limit)?;
        let mut players = Vec::with_capacity(rows.len());
        for row in &rows {
            let name = store
                .player_name(&row.player)?
                .unwrap_or_else(|| row.player.clone());
            players.push(LeaderboardEntry::new(row, name));
        }
        Ok(Leaderboard {
            pool: pool.name().to_string(),
            players,
        })
    })
    .await;
    match board {
        Ok(board) => Json(board).into_response(),
        Err(response) => response,
    }
}
