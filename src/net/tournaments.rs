//! Tournaments over HTTP (client-protocol/tournament.md#http): the list, one tournament,
//! a round's pairings (with each board's costs for its directors), the standings with
//! the crosstable, and the exchange files of the published rounds (the EGF results
//! table, OpenGotha's XML, every game's SGF in one archive), and a director's import of an
//! OpenGotha player list (too large for a WebSocket message). Every other change goes
//! over the WebSocket to the director task.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::extract::rejection::BytesRejection;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;
use serde_json::json;

use super::extract::{GameIdPath, bearer};
use super::record::{Stored, stored};
use super::reply::{blocking, problem};
use crate::accounts::tokens::scope::Scope;
use crate::archive;
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
        .route(
            "/api/tournaments/{id}/players",
            post(import).layer(DefaultBodyLimit::max(MAX_IMPORT_BYTES)),
        )
}

/// The largest OpenGotha file `POST /api/tournaments/{id}/players` reads: a player's
/// element is about 400 bytes, and a tournament takes 2,000 players.
pub const MAX_IMPORT_BYTES: usize = 2 * 1024 * 1024;

/// A refusal as the API answers it: `{"error": message, "code": code}`.
fn refused(refusal: Refusal) -> Response {
    let status = match refusal.code {
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorCode::Forbidden | ErrorCode::InsufficientScope => StatusCode::FORBIDDEN,
        ErrorCode::WrongPhase | ErrorCode::LimitReached => StatusCode::CONFLICT,
        ErrorCode::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::BAD_REQUEST,
    };
    let body = json!({"error": refusal.message, "code": refusal.code});
    (status, Json(body)).into_response()
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

/// A director registers the players of an OpenGotha file; the answer is
/// `{"registered": <how many were new>}`.
async fn import(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    id: GameIdPath,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let refusal = |code, message: String| refused(Refusal::new(code, message));
    let id = match tournament_id(id) {
        Ok(id) => id,
        Err(r) => return refused(r),
    };
    let body = match body {
        Ok(body) => body,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            let why = format!("an imported file is limited to {MAX_IMPORT_BYTES} bytes");
            return refusal(ErrorCode::TooLarge, why);
        }
        Err(e) => return refusal(ErrorCode::BadRequest, e.body_text()),
    };
    let Some(token) = bearer(&headers) else {
        let why = "importing players needs a director's token in an `Authorization: Bearer` header";
        return refusal(ErrorCode::Unauthorized, why.into());
    };
    let user = match crate::accounts::admit(hub.store(), &hub.verifier, token).await {
        Ok((user, grant)) if grant.allows(Scope::TournamentDirect) => user,
        Ok(_) => {
            let why = "importing players needs a personal token with the `tournament:direct` scope";
            return refusal(ErrorCode::InsufficientScope, why.into());
        }
        Err(r) => return refused(r),
    };
    let Ok(xml) = std::str::from_utf8(&body) else {
        let why = "the OpenGotha file cannot be read: it is not UTF-8 text";
        return refusal(ErrorCode::InvalidFile, why.into());
    };
    match hub.tournaments.import(&id, user, xml).await {
        Ok(registered) => Json(json!({ "registered": registered })).into_response(),
        Err(r) => refused(r),
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
