//! A player's correspondence games not over, for their dashboard
//! (client-protocol/correspondence.md#list_correspondence): each as its room sums it up
//! (whose move, the deadline) and whether its player keeps a plan in it.
//!
//! Listing wakes no game. One whose room runs (here, or on its node through a mirror
//! here) is asked; one asleep is summed up from the store, by the summary its room wrote
//! beside its deadline with its last commit (`room::sleep`), which says what the room
//! would, with nobody joined. Only a game the store keeps no such summary for (its
//! spectators see it late, or its row is older than the summaries) is woken to be summed
//! up, as a join would. The list is one read of the store, bounded by
//! [`GameQuery::MAX_LIMIT`].

use std::sync::Arc;

use crate::protocol::{CorrespondenceGame, GameSummary, Refusal};
use crate::registry::Registry;
use crate::room::RoomCmd;
use crate::rules::Color;
use crate::store::{DeskRow, GameQuery, Store, blocking};

/// What a failed store call of the dashboard names.
const WHAT: &str = "correspondence games";

/// `user_id`'s dashboard: each game's summary, their colour, and whether they keep a
/// plan there. A game whose room cannot be reached now is left out.
pub async fn list(
    store: &Arc<dyn Store>,
    games: &Registry,
    user_id: &str,
) -> Result<Vec<CorrespondenceGame>, Refusal> {
    let (reader, who) = (store.clone(), user_id.to_string());
    let rows = blocking(WHAT, move || reader.desk(&who, GameQuery::MAX_LIMIT)).await?;
    let mut listed = Vec::with_capacity(rows.len());
    for row in rows {
        let Some(game) = summary(games, &row).await else {
            continue;
        };
        let you = if game.black.id == user_id {
            Color::Black
        } else {
            Color::White
        };
        listed.push(CorrespondenceGame {
            game,
            you,
            planned: row.planned,
        });
    }
    Ok(listed)
}

/// A game's summary: its running room's, else the one stored for it asleep, else that
/// of its room woken for it; None when no room of it can be reached now.
async fn summary(games: &Registry, row: &DeskRow) -> Option<GameSummary> {
    if let Some(awake) = games.summary(&row.game_id).await {
        return Some(awake);
    }
    let stored = row.summary.as_deref();
    if let Some(asleep) = stored.and_then(|s| serde_json::from_str(s).ok()) {
        return Some(asleep);
    }
    let room = games.room(&row.game_id).await.ok()?;
    room.ask(|reply| RoomCmd::Summary { reply }).await.ok()
}
