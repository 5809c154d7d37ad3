//! The calendar correspondence clocks run on: Unix milliseconds that advance with tokio's
//! clock.
//!
//! A correspondence deadline is a moment in the world (Tuesday 18:00 UTC), kept in the
//! store, so it is wall time; but the room's timers sleep on tokio's monotonic clock,
//! and tests pause that clock to move days in an instant. The calendar joins the two:
//! the wall time once, when first read, then tokio's time since. One anchor for the
//! whole process, so a server started again in the same process (as the restart tests
//! do) carries on the same timeline, and a restart in production charges the downtime
//! because the anchor is taken anew from the wall clock.

use std::sync::OnceLock;
use std::time::Duration;

use tokio::time::Instant;

use crate::clock::Millis;

/// The wall time (Unix ms) and tokio instant the calendar counts from.
static ANCHOR: OnceLock<(Millis, Instant)> = OnceLock::new();

/// How far back the anchor is set: tokio's paused clocks (one per test runtime) start
/// at the real instant they are made, so an anchor an hour back is before every one of
/// them, and no runtime reads the calendar stuck at its anchor.
const BACK: Duration = Duration::from_secs(3600);

fn anchor() -> (Millis, Instant) {
    *ANCHOR.get_or_init(|| {
        let (wall, now) = (crate::time::wall_ms().max(0) as Millis, Instant::now());
        match now.checked_sub(BACK) {
            Some(earlier) => (wall.saturating_sub(BACK.as_millis() as Millis), earlier),
            None => (wall, now),
        }
    })
}

/// Now, in Unix milliseconds.
pub fn now_ms() -> Millis {
    let (wall, at) = anchor();
    wall + at.elapsed().as_millis() as Millis
}

/// The tokio instant of calendar time `ms`, for a timer (a past one is the anchor, which
/// has passed).
pub fn instant_at(ms: Millis) -> Instant {
    let (wall, at) = anchor();
    at + Duration::from_millis(ms.saturating_sub(wall))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_calendar_moves_with_tokios_clock() {
        let before = now_ms();
        tokio::time::sleep(Duration::from_secs(3 * 86_400)).await;
        assert_eq!(now_ms() - before, 3 * 86_400_000);
        let due = now_ms() + 5_000;
        assert_eq!(instant_at(due), Instant::now() + Duration::from_secs(5));
    }
}
