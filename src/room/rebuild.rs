//! Rebuilding a game from its stored log: after a restart, or to show a finished game.
//! Every event is replayed through the same rules as live play, and the last ones are
//! kept as the room's recent frames.

use super::live::{LiveGame, Moment, ReplayError};
use super::ring::{Ring, public_frame};
use crate::clock::{LagSettings, Millis};
use crate::protocol::EventFrame;
use crate::rules::Color;
use crate::store::EventRecord;
use crate::time::wall_ms;

/// A game rebuilt from stored frames: the game, its recent public frames, and the
/// players the log showed online, now gone (the room records it when it starts).
pub struct Rebuilt {
    pub live: LiveGame,
    pub recent: Ring,
    pub gone: Vec<Color>,
}

/// Replays stored events (in seq order) into a game.
pub fn rebuild(
    events: &[EventRecord],
    lag: LagSettings,
    now: Millis,
) -> Result<Rebuilt, ReplayError> {
    let at = Moment {
        now,
        wall_ms: wall_ms(),
        lag_ms: 0,
    };
    let mut live: Option<LiveGame> = None;
    let mut recent = Ring::starting_at(1);
    let held_from = events.len().saturating_sub(super::ring::RECENT);
    for (i, record) in events.iter().enumerate() {
        let text = record.payload.as_str();
        let frame: EventFrame = serde_json::from_str(text).map_err(|e| ReplayError {
            seq: i as u64 + 1,
            reason: format!("unreadable: {e}"),
        })?;
        match live.as_mut() {
            // A log that does not apply fails the whole rebuild, so no copy per event.
            Some(game) => game.apply_in_place(&frame.event, frame.seq, at)?,
            None => {
                live = Some(LiveGame::create(&frame.event, at, lag)?);
            }
        }
        if i == held_from {
            recent = Ring::starting_at(frame.seq);
        }
        if i >= held_from {
            recent.push(public_frame(frame, text));
        }
    }
    let mut live = live.ok_or_else(|| ReplayError {
        seq: 1,
        reason: "the log is empty".to_string(),
    })?;
    let gone = live.settle_after_restart(now);
    Ok(Rebuilt { live, recent, gone })
}
