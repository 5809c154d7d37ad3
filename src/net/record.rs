//! The stored game a path names, as the archive shows it: read by the record, the SGF
//! and the estimate routes alike, and game by game by a tournament's SGF archive.

use std::sync::Arc;

use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::Response;

use super::extract::GameIdPath;
use super::reply::{blocking, problem};
use crate::archive::{self, GameView};
use crate::hub::Hub;
use crate::store::{GameStatus, Store, StoreError};

/// A stored game as the archive may show it.
pub(super) enum Stored {
    Shown(Box<GameView>),
    /// A tournament game in play: its spectators see moves late, and the record would
    /// show them at once, so it is published when the game ends.
    InPlay,
    /// Its log could not be read.
    Unreadable,
}

/// Game `id` from the store (None: no such game), with its events and, once it is over,
/// its spectators' chat.
pub(super) fn stored(store: &dyn Store, id: &str) -> Result<Option<Stored>, StoreError> {
    let Some(row) = store.game(id)? else {
        return Ok(None);
    };
    let tournament = serde_json::from_str::<crate::protocol::GameSettings>(&row.settings)
        .is_ok_and(|s| s.fair_play == crate::protocol::FairPlay::Tournament);
    if tournament && row.status == GameStatus::Live {
        return Ok(Some(Stored::InPlay));
    }
    let events = store.events(id)?;
    // Spectators' chat is evidence, kept from the players while they play.
    let kibitz = match row.status {
        GameStatus::Finished => store.kibitz(id)?,
        _ => Vec::new(),
    };
    Ok(Some(match archive::game_view(&row, &events) {
        Some(mut view) => {
            view.kibitz = kibitz.into_iter().map(Into::into).collect();
            Stored::Shown(Box::new(view))
        }
        None => Stored::Unreadable,
    }))
}

/// The game `path` names, or the refusal to answer with.
pub(super) async fn view(hub: &Arc<Hub>, path: GameIdPath) -> Result<GameView, Response> {
    let Path(id) = path.map_err(|e| {
        problem(
            StatusCode::BAD_REQUEST,
            format!("the game id in the path cannot be read: {}", e.body_text()),
        )
    })?;
    let store = hub.store().clone();
    match blocking(move || stored(store.as_ref(), &id)).await? {
        Some(Stored::Shown(view)) => Ok(*view),
        None => Err(problem(StatusCode::NOT_FOUND, "no such game")),
        Some(Stored::InPlay) => Err(problem(
            StatusCode::FORBIDDEN,
            "a tournament game's record is published when it ends",
        )),
        Some(Stored::Unreadable) => Err(problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the game's log could not be read",
        )),
    }
}
