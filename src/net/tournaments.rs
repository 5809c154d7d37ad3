//! Tournaments over HTTP (client-protocol/tournament.md#http): the list, one tournament,
//! a round's pairings (with each board's costs for its directors), the standings with
//! the crosstable, and the exchange files of the published rounds (the EGF results
//! table, OpenGotha's XML, every game's SGF in one archive). Read-only; changes go over
//! the WebSocket to the director task.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use super::extract::{GameIdPath, bearer};
use super::record::{Stored, stored};
use super::reply::{blocking, problem};
use crate::accounts::tokens::scope::Scope;
use crate::archive;
use crate::hub::Hub;
use crate::protocol::{ErrorCode, Refusal, TournamentView};
use crate::tournament::exchange::zip;
use crate::tournaments::state::Tournament;

pub fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route("/api/tournaments", get(list))
        .route("/api/tournaments/{id}", get(one))
        .route("/api/tournaments/{id}/standings", get(standings))
        .route("/api/tournaments/{id}/rounds/{round}", get(round))
        .route("/api/tournaments/{id}/export/egf", get(egf))
        .route("/api/tournaments/{id}/export/opengotha", get(opengotha))
        .route("/api/tournaments/{id}/export/sgf", get(sgf))
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

fn tournament_id(id: GameIdPath) -> Result<String, Refusal> {
    id.map(|Path(id)| id).map_err(|_| {
        Refusal::new(
            ErrorCode::BadRequest,
            "the tournament id in the path cannot be read",
        )
    })
}

/// Tournament `id` as the request's bearer (if any) may see it.
async fn view(hub: &Hub, headers: &HeaderMap, id: GameIdPath) -> Result<TournamentView, Response> {
    let id = tournament_id(id).map_err(refused)?;
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
        Ok(tournaments) => Json(json!({ "tournaments": tournaments })).into_response(),
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
        Ok(view) => Json(json!({
            "tournament_id": view.tournament_id,
            "standings": view.standings,
        }))
        .into_response(),
        Err(response) => response,
    }
}

async fn round(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Path((id, round)): Path<(String, String)>,
) -> Response {
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

/// A file to save: its media type, its name (`tengen-<id>.<extension>`) and its bytes.
fn download(media: &str, id: &str, extension: &str, body: impl IntoResponse) -> Response {
    (
        [
            (header::CONTENT_TYPE, media.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"tengen-{id}.{extension}\""),
            ),
        ],
        body,
    )
        .into_response()
}

/// One of the tournament's files, as `file` writes it from the tournament now.
async fn file(
    hub: &Hub,
    id: GameIdPath,
    (media, extension): (&str, &str),
    file: fn(&Tournament) -> String,
) -> Response {
    let id = match tournament_id(id) {
        Ok(id) => id,
        Err(refusal) => return refused(refusal),
    };
    match hub.tournaments.current(&id).await {
        Ok(t) => download(media, &id, extension, file(&t)),
        Err(refusal) => refused(refusal),
    }
}

async fn egf(State(hub): State<Arc<Hub>>, id: GameIdPath) -> Response {
    let text = ("text/plain; charset=utf-8", "h9");
    file(&hub, id, text, Tournament::egf_table).await
}

async fn opengotha(State(hub): State<Arc<Hub>>, id: GameIdPath) -> Response {
    let xml = ("application/xml; charset=utf-8", "xml");
    file(&hub, id, xml, Tournament::opengotha).await
}

/// Every ended game of the published rounds as SGF, made as `GET /api/games/{id}/sgf`
/// makes it, in one ZIP archive; a game still in play is left out until it ends.
async fn sgf(State(hub): State<Arc<Hub>>, id: GameIdPath) -> Response {
    let id = match tournament_id(id) {
        Ok(id) => id,
        Err(refusal) => return refused(refusal),
    };
    let files = match hub.tournaments.current(&id).await {
        Ok(t) => t.game_files(),
        Err(refusal) => return refused(refusal),
    };
    let store = hub.store().clone();
    let read = blocking(move || {
        let mut games = Vec::with_capacity(files.len());
        for (name, game) in files {
            match stored(store.as_ref(), &game)? {
                Some(Stored::Shown(view)) => games.push((name, archive::sgf(&view))),
                Some(Stored::InPlay) | None => {}
                Some(Stored::Unreadable) => return Ok(Err(game)),
            }
        }
        Ok(Ok(games))
    });
    let games = match read.await {
        Ok(Ok(games)) => games,
        Ok(Err(game)) => {
            return problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the log of game {game} could not be read"),
            );
        }
        Err(response) => return response,
    };
    match zip::sgf_archive(&games) {
        Ok(bytes) => download("application/zip", &id, "zip", bytes),
        Err(e) => problem(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}
