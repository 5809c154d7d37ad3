//! The game archive over HTTP: `GET /api/games` (live and recent, paged, by player),
//! `GET /api/games/{id}` (the JSON record) and `GET /api/games/{id}/sgf`.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::extract::GameIdPath;
use super::record::view;
use super::reply::{blocking, problem};
use crate::archive::{self, ListedGame};
use crate::hub::Hub;
use crate::store::{GameQuery, GameStatus};

pub fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route("/api/games", get(list))
        .route("/api/games/{id}", get(one))
        .route("/api/games/{id}/sgf", get(sgf))
}

/// The query of `GET /api/games`, read by hand rather than by the framework's extractor,
/// whose refusals are plain text: every refusal here is `{"error": ...}` naming the
/// parameter.
#[derive(Debug, Default, PartialEq)]
struct ListQuery {
    player: Option<String>,
    status: Option<GameStatus>,
    /// Paging cursor: `created_at_ms:game_id` of the last game of the previous page.
    before: Option<(i64, String)>,
    limit: Option<u32>,
}

/// A page of `GET /api/games`.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub(super) struct GamePage {
    games: Vec<ListedGame>,
    /// The `before` of the next page; null on the last page.
    next: Option<String>,
}

const PARAMETERS: &str = "`player`, `status`, `limit` and `before`";

impl ListQuery {
    /// Reads the decoded `name=value` pairs; each parameter may come once.
    fn parse(pairs: Vec<(String, String)>) -> Result<ListQuery, String> {
        let mut q = ListQuery::default();
        let mut seen: Vec<String> = Vec::new();
        for (name, value) in pairs {
            if seen.contains(&name) {
                return Err(format!("the parameter `{name}` is given more than once"));
            }
            match name.as_str() {
                "player" if value.is_empty() => {
                    return Err("`player` must be a user id, not empty".into());
                }
                "player" => q.player = Some(value),
                "status" => {
                    q.status = Some(GameStatus::parse(&value).ok_or_else(|| {
                        format!("`status` must be `live` or `finished`, not {value:?}")
                    })?)
                }
                "limit" => {
                    let limit = value
                        .parse::<u32>()
                        .ok()
                        .filter(|&l| l <= GameQuery::MAX_LIMIT)
                        .ok_or_else(|| {
                            format!(
                                "`limit` must be a whole number from 0 to {}, not {value:?}",
                                GameQuery::MAX_LIMIT
                            )
                        })?;
                    q.limit = Some(limit);
                }
                "before" => {
                    // A `next` is `<created_at_ms>:<game id>`, the id in base 36.
                    let cursor = value
                        .split_once(':')
                        .filter(|(_, id)| {
                            (1..=64).contains(&id.len())
                                && id.bytes().all(|b| b.is_ascii_alphanumeric())
                        })
                        .and_then(|(ms, id)| {
                            let ms = ms.parse::<i64>().ok().filter(|&ms| ms >= 0)?;
                            Some((ms, id.to_string()))
                        })
                        .ok_or_else(|| {
                            format!(
                                "`before` must be the `next` value of a previous page, not {value:?}"
                            )
                        })?;
                    q.before = Some(cursor);
                }
                _ => {
                    return Err(format!(
                        "unknown parameter `{name}`; the parameters are {PARAMETERS}"
                    ));
                }
            }
            seen.push(name);
        }
        Ok(q)
    }
}

async fn list(State(hub): State<Arc<Hub>>, Query(pairs): Query<Vec<(String, String)>>) -> Response {
    let q = match ListQuery::parse(pairs) {
        Ok(q) => q,
        Err(why) => return problem(StatusCode::BAD_REQUEST, why),
    };
    let (before_ms, before_id) = q.before.unzip();
    let query = GameQuery {
        player: q.player,
        status: q.status,
        before_ms,
        before_id,
        limit: q.limit.unwrap_or(GameQuery::DEFAULT_LIMIT),
    };
    let limit = query.effective_limit() as usize;
    let store = hub.store().clone();
    let page = blocking(move || {
        let games = store.list_games(&query)?;
        // A full page has a next one only if a game is left after it, so that the
        // last page's `next` is null even when it is full.
        let last = games.last().filter(|_| games.len() == limit);
        let next = match last {
            Some(last) => {
                let after = GameQuery {
                    before_ms: Some(last.created_at_ms),
                    before_id: Some(last.id.clone()),
                    limit: 1,
                    ..query
                };
                let more = !store.list_games(&after)?.is_empty();
                more.then(|| format!("{}:{}", last.created_at_ms, last.id))
            }
            None => None,
        };
        Ok((games, next))
    });
    let (games, next) = match page.await {
        Ok(page) => page,
        Err(r) => return r,
    };
    let mut games: Vec<ListedGame> = games.into_iter().map(ListedGame::from).collect();
    if games.iter().any(|g| g.delayed) {
        // The spectators' count, as `list_games` has it (0 for a game no node runs now).
        let running = hub.list_games().await;
        for game in games.iter_mut().filter(|g| g.delayed) {
            game.move_count = running
                .iter()
                .find(|r| r.game_id == game.game_id)
                .map_or(0, |r| r.move_number);
        }
    }
    Json(GamePage { games, next }).into_response()
}

async fn one(State(hub): State<Arc<Hub>>, path: GameIdPath) -> Response {
    match view(&hub, path).await {
        Ok(v) => Json(v).into_response(),
        Err(r) => r,
    }
}

async fn sgf(State(hub): State<Arc<Hub>>, path: GameIdPath) -> Response {
    match view(&hub, path).await {
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
