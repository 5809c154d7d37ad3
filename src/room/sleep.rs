//! Correspondence games that sleep: a room whose correspondence game nobody has joined
//! for a while stops, and its game lives on in the store alone, with its next deadline
//! in the store's deadline index, until the waker or a join rebuilds it.

use std::time::Duration;

use super::live::LiveGame;
use crate::protocol::Phase;
use crate::store::Append;

/// How long a correspondence game's room stays up with nobody joined: a player who
/// reloads the page or moves between two of their games finds it awake.
pub const SLEEP_AFTER: Duration = Duration::from_secs(30);

/// The deadline index's row for `live` after a commit, for its batch: a correspondence
/// game not over. One with nothing that will happen by itself (its player to move is
/// on vacation) is due never (`i64::MAX`): a command wakes it. The row also keeps the
/// game's summary while it sleeps (`asleep`).
pub fn deadline(game_id: &str, live: &LiveGame) -> Option<Append> {
    if !live.settings.correspondence || live.phase() == Phase::Ended {
        return None;
    }
    let due_ms = live
        .next_timer()
        .map_or(i64::MAX, |ms| i64::try_from(ms).unwrap_or(i64::MAX));
    Some(Append::Deadline {
        game_id: game_id.to_string(),
        due_ms,
        summary: asleep(game_id, live),
    })
}

/// What `list_correspondence` says of the game while it sleeps (`desk`): the summary its
/// room gives with nobody watching, as JSON. Nothing that summary holds changes until
/// the game's next commit (its deadline is an instant, not a countdown), so the one
/// written with each commit is the room's word until the next. None for a game whose
/// spectators see it late: what they may see changes as time passes, so its room sums
/// it up.
fn asleep(game_id: &str, live: &LiveGame) -> Option<String> {
    if live.settings.delays_spectators() {
        return None;
    }
    serde_json::to_string(&live.summary(game_id, live.seq(), 0)).ok()
}

/// Whether `live`'s room may stop while nobody is joined: a correspondence game not over.
pub fn may_sleep(live: &LiveGame) -> bool {
    live.settings.correspondence && live.phase() != Phase::Ended
}
