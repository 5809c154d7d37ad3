//! The time a room's game runs on: a live game's own monotonic milliseconds from when
//! its room started, or for a correspondence game the calendar (Unix milliseconds), so
//! that its clocks, stored with the events, run on across sleeps and restarts.

use std::time::Duration;

use tokio::time::Instant;

use super::live::Moment;
use crate::clock::Millis;
use crate::correspondence::calendar;
use crate::protocol::GameSettings;
use crate::time::wall_ms;

#[derive(Debug, Clone, Copy)]
pub enum Timeline {
    /// Milliseconds since this instant: a live game, whose clocks stop across restarts.
    Room(Instant),
    /// The calendar: a correspondence game.
    Calendar,
}

impl Timeline {
    /// The timeline a game with `settings` runs on, starting now.
    pub fn of(settings: &GameSettings) -> Timeline {
        match settings.correspondence {
            true => Timeline::Calendar,
            false => Timeline::Room(Instant::now()),
        }
    }

    pub fn now(&self) -> Millis {
        match self {
            Timeline::Room(epoch) => epoch.elapsed().as_millis() as Millis,
            Timeline::Calendar => calendar::now_ms(),
        }
    }

    /// The wall time records carry: the calendar's own for a correspondence game, whose
    /// rebuild times its clocks by them.
    pub fn wall_ms(&self) -> i64 {
        match self {
            Timeline::Room(_) => wall_ms(),
            Timeline::Calendar => calendar::now_ms() as i64,
        }
    }

    /// The instant `ms` on this timeline comes, for a timer.
    pub fn instant(&self, ms: Millis) -> Instant {
        match self {
            Timeline::Room(epoch) => *epoch + Duration::from_millis(ms),
            Timeline::Calendar => calendar::instant_at(ms),
        }
    }

    /// This instant, for an action from a connection with one-way latency `lag_ms`.
    pub fn moment(&self, lag_ms: u64) -> Moment {
        Moment {
            now: self.now(),
            wall_ms: self.wall_ms(),
            lag_ms,
        }
    }
}
