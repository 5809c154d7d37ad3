//! Tournaments over HTTP (client-protocol/tournament.md#http): the list, one tournament,
//! a round's pairings (with each board's costs for its directors) and the standings with
//! the crosstable. Read-only; changes go over the WebSocket to the director task.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;

use super::extract::{GameIdPath, bearer};
use super::reply::problem;
use crate::accounts::tokens::scope::Scope;
use crate::hub::Hub;
use crate::protocol::{ErrorCode, Refusal, StandingView, TournamentView};
use crate::store::TournamentRecord;

/// `GET /api/tournaments`: the newest tournaments, newest first.
#[derive(Serialize, schemars::JsonSchema)]
pub(super) struct TournamentList {
    tournaments: Vec<TournamentRecord>,
}

/// `GET /api/tournaments/{id}/standings`: the standings with the crosstable's rows.
#[derive(Serialize, schemars::JsonSchema)]
pub(super) struct Standings {
    tournament_id: String,
    standings: Vec<StandingView>,
}

pub fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route("/api/tournaments", get(list))
        .route("/api/tournaments/{id}", get(one))
        .route("/api/tournaments/{id}/standings", get(standings))
        .route("/api/tournaments/{id}/rounds/{round}", get(round))
}

fn refused(refusal: Refusal) -> Response {
    let status = match refusal.code {
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::BAD_REQUEST,
    };
    problem(status, refusal.message)
}

/// Tournament `id` as the request's bearer (if any) may see it.
async fn view(hub: &Hub, headers: &HeaderMap, id: GameIdPath) -> Result<TournamentView, Response> {
    let Ok(Path(id)) = id else {
        return Err(problem(
            StatusCode::BAD_REQUEST,
            "the tournament id in the path cannot be read",
        ));
    };
    // A personal token shows a director's view only with `tournament:direct`.
    let viewer = match bearer(headers) {
        Some(token) => {
            let (user, grant) = crate::accounts::admit(hub.store(), &hub.verifier, token)
                .await
                .map_err(refused)?;
            grant.allows(Scope::TournamentDirect).then_some(user.id)
        }
        None => None,
    };
    hub.tournaments.view(&id, viewer).await.map_err(refused)
}

async fn list(State(hub): State<Arc<Hub>>) -> Response {
    match hub.tournaments.list().await {
        Ok(tournaments) => Json(TournamentList { tournaments }).into_response(),
        Err(refusal) => refused(refusal),
    }
}

async fn one(State(hub): State<Arc<Hub>>, headers: HeaderMap, id: GameIdPath) -> Response {
    match view(&hub, &headers, id).await {
        Ok(view) => Json(view).into_response(),
        Err(response) => response,
    }
}

async fn standings(State(hub): State<Arc<Hub>>, headers: HeaderMap, id: GameIdPath) -> Response {
    match view(&hub, &headers, id).await {
        Ok(view) => Json(Standings {
            tournament_id: view.tournament_id,
            standings: view.standings,
        })
        .into_response(),
        Err(response) => response,
    }
}

async fn round(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Response {
    let Ok(Path((id, round))) = path else {
        return problem(
            StatusCode::BAD_REQUEST,
            "the tournament id or the round in the path cannot be read",
        );
    };
    let Ok(number) = round.parse::<u8>() else {
        return problem(StatusCode::BAD_REQUEST, "a round is a number from 1");
    };
    match view(&hub, &headers, Ok(Path(id))).await {
        Ok(view) => match view.rounds.into_iter().find(|r| r.round == number) {
            Some(round) => Json(round).into_response(),
            None => problem(
                StatusCode::NOT_FOUND,
                format!("round {number} is not paired"),
            ),
        },
        Err(response) => response,
    }
}
