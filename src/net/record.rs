//! The stored game a path names, as the archive shows it: read by the record, the SGF
//! and the estimate routes alike.

use std::sync::Arc;

use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::Response;

use super::extract::GameIdPath;
use super::reply::{blocking, problem};
use crate::archive::{self, GameView};
use crate::hub::Hub;

/// The game `path` names with its events (and, once it is over, its spectators' chat),
/// or the refusal to answer with.
pub(super) async fn view(hub: &Arc<Hub>, path: GameIdPath) -> Result<GameView, Response> {
    let Path(id) = path.map_err(|e| {
        problem(
            StatusCode::BAD_REQUEST,
            format!("the game id in the path cannot be read: {}", e.body_text()),
        )
    })?;
    let store = hub.store().clone();
    let found = blocking(move || {
        let row = store.game(&id)?;
        let events = match &row {
            Some(_) => store.events(&id)?,
            None => Vec::new(),
        };
        // Spectators' chat is evidence, kept from the players while they play.
        let kibitz = match &row {
            Some(r) if r.status == crate::store::GameStatus::Finished => store.kibitz(&id)?,
            _ => Vec::new(),
        };
        Ok(row.map(|r| (r, events, kibitz)))
    })
    .await?;
    let (row, events, kibitz) =
        found.ok_or_else(|| problem(StatusCode::NOT_FOUND, "no such game"))?;
    let tournament = serde_json::from_str::<crate::protocol::GameSettings>(&row.settings)
        .is_ok_and(|s| s.fair_play == crate::protocol::FairPlay::Tournament);
    if tournament && row.status == crate::store::GameStatus::Live {
        // Its spectators see moves late; the record would show them at once.
        return Err(problem(
            StatusCode::FORBIDDEN,
            "a tournament game's record is published when it ends",
        ));
    }
    let mut view = archive::game_view(&row, &events).ok_or_else(|| {
        problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the game's log could not be read",
        )
    })?;
    view.kibitz = kibitz.into_iter().map(Into::into).collect();
    Ok(view)
}
