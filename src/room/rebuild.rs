//! Rebuilding a game from its stored log: after a restart, to show a finished game, or
//! to wake a correspondence game. Every event is replayed through the same rules as live
//! play, and the last ones are kept as the room's recent frames. A correspondence game is
//! replayed on the calendar, each event at the wall time it records, so its clock runs on
//! from its last move as if the room had never stopped.

use super::live::{LiveGame, Moment, ReplayError};
use super::ring::{Ring, public_frame};
use super::timeline::Timeline;
use crate::clock::{LagSettings, Millis};
use crate::protocol::{EventFrame, GameEvent};
use crate::rules::Color;
use crate::store::EventRecord;
use crate::time::wall_ms;

/// A game rebuilt from stored frames: the game, its recent public frames, and the
/// players the log showed online, now gone (the room records it when it starts), and
/// the time it runs on.
pub struct Rebuilt {
    pub live: LiveGame,
    pub recent: Ring,
    pub gone: Vec<Color>,
    pub timeline: Timeline,
}

/// The wall time an event records, if it records one.
fn recorded_at(event: &GameEvent) -> Option<i64> {
    match event {
        GameEvent::GameCreated { created_at: at, .. }
        | GameEvent::MovePlayed { at, .. }
        | GameEvent::Chat { at, .. }
        | GameEvent::RefereeCalled { at, .. } => Some(*at),
        _ => None,
    }
}

/// Replays stored events (in seq order) into a game.
pub fn rebuild(events: &[EventRecord], lag: LagSettings) -> Result<Rebuilt, ReplayError> {
    let mut at = Moment {
        now: 0,
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
        if let Some(t) = recorded_at(&frame.event)
            && live.as_ref().is_none_or(|g| g.settings.correspondence)
        {
            at.now = at.now.max(t.max(0) as Millis);
        }
        match live.as_mut() {
            // A log that does not apply fails the whole rebuild, so no copy per event.
            Some(game) => game.apply_in_place(&frame.event, frame.seq, at)?,
            None => {
                if let GameEvent::GameCreated { settings, .. } = &frame.event
                    && !settings.correspondence
                {
                    // A live game's timeline is its new room's, which starts now.
                    at.now = 0;
                }
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
    let timeline = Timeline::of(&live.settings);
    let gone = live.settle_after_restart(timeline.now());
    Ok(Rebuilt {
        live,
        recent,
        gone,
        timeline,
    })
}
