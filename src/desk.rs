//! A player's correspondence games not over, for their dashboard
//! (client-protocol/correspondence.md#list_correspondence): each as its room sums it up
//! (whose move, the deadline) and whether its player keeps a plan in it.
//!
//! A sleeping game is woken to be summed up, as a join would: its deadline lives in its
//! clock, which only its room replays. The list is the store's page of the player's live
//! games, so it is bounded by [`GameQuery::MAX_LIMIT`].

use std::sync::Arc;

use crate::protocol::{CorrespondenceGame, ErrorCode, GameSettings, Refusal};
use crate::registry::Registry;
use crate::room::RoomCmd;
use crate::rules::Color;
use crate::store::{GameQuery, GameRecord, GameStatus, Store, StoreError};

/// `user_id`'s correspondence games not over, as the store has them.
pub async fn live_games(store: &Arc<dyn Store>, user_id: &str) -> Result<Vec<GameRecord>, Refusal> {
    let (store, who) = (store.clone(), user_id.to_string());
    let games = blocking(move || {
        store.list_games(&GameQuery {
            player: Some(who),
            status: Some(GameStatus::Live),
            limit: GameQuery::MAX_LIMIT,
            ..GameQuery::default()
        })
    })
    .await?;
    Ok(games
        .into_iter()
        .filter(|g| {
            serde_json::from_str::<GameSettings>(&g.settings).is_ok_and(|s| s.correspondence)
        })
        .collect())
}

/// `user_id`'s dashboard: each game's summary, their colour, and whether they keep a
/// plan there. A game whose room cannot be reached now is left out.
pub async fn list(
    store: &Arc<dyn Store>,
    games: &Registry,
    user_id: &str,
) -> Result<Vec<CorrespondenceGame>, Refusal> {
    let mut listed = Vec::new();
    for record in live_games(store, user_id).await? {
        let you = if record.black == user_id {
            Color::Black
        } else {
            Color::White
        };
        let (reader, id) = (store.clone(), record.id.clone());
        let plans = blocking(move || reader.plans(&id)).await?;
        let planned = plans.iter().any(|(color, _)| *color == you.to_string());
        let Ok(room) = games.room(&record.id).await else {
            continue;
        };
        if let Ok(game) = room.ask(|reply| RoomCmd::Summary { reply }).await {
            listed.push(CorrespondenceGame { game, you, planned });
        }
    }
    Ok(listed)
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, Refusal> {
    match tokio::task::spawn_blocking(f).await {
        Ok(done) => done.map_err(|e| Refusal::new(ErrorCode::Unavailable, e.to_string())),
        Err(e) => Err(Refusal::new(ErrorCode::Unavailable, e.to_string())),
    }
}
