//! One side's clock: what it has left, and how thinking time and a finished move are
//! charged to it under each time system.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::Millis;
use super::settings::TimeControl;

/// A side's available time was used up. The player clock does not know its colour;
/// [`GameClock`](super::GameClock) turns this into [`Flagged`](super::Flagged).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("The player's time has run out.")]
pub struct OutOfTime;

/// What one side has left. These are the fields the protocol shows; which of them matter
/// depends on the [`TimeControl`] passed to every method (the clock does not store it,
/// so both sides of a game share one copy).
///
/// Invariant while the side has not flagged: `remaining_ms` is positive. After a flag
/// every time field is zero.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct PlayerClock {
    /// Main time left.
    pub main_ms: Millis,
    /// Byo-yomi periods left, counting the current one; 0 in other systems.
    pub periods_left: u32,
    /// Time left in the current byo-yomi period, Canadian block, or simple per-move
    /// allowance; 0 in other systems.
    pub period_ms: Millis,
    /// Moves still to make in the current Canadian block; 0 in other systems.
    pub moves_left: u32,
}

impl PlayerClock {
    /// A full clock at the start of a game.
    pub fn new(tc: &TimeControl) -> Self {
        match *tc {
            TimeControl::None => Self::default(),
            TimeControl::Absolute { main_ms } => Self {
                main_ms,
                ..Self::default()
            },
            TimeControl::Fischer {
                main_ms, max_ms, ..
            } => Self {
                main_ms: main_ms.min(max_ms.unwrap_or(Millis::MAX)),
                ..Self::default()
            },
            TimeControl::Byoyomi {
                main_ms,
                periods,
                period_ms,
            } => Self {
                main_ms,
                periods_left: periods,
                period_ms,
                moves_left: 0,
            },
            TimeControl::Canadian {
                main_ms,
                moves,
                block_ms,
            } => Self {
                main_ms,
                periods_left: 0,
                period_ms: block_ms,
                moves_left: moves,
            },
            TimeControl::Simple { per_move_ms } => Self {
                period_ms: per_move_ms,
                ..Self::default()
            },
        }
    }

    /// How long this side could think, starting now, before it flags: its deadline is
    /// `started_at + remaining_ms`. `None` when untimed.
    ///
    /// Byo-yomi: `main + current period left + (periods_left - 1) * period`.
    /// Canadian: `main + block left`. Simple: per-move time left. Others: main time.
    pub fn remaining_ms(&self, tc: &TimeControl) -> Option<Millis> {
        let overtime = match *tc {
            TimeControl::None => return None,
            TimeControl::Absolute { .. } | TimeControl::Fischer { .. } => 0,
            TimeControl::Byoyomi { period_ms, .. } => match self.periods_left.checked_sub(1) {
                None => 0,
                Some(later) => self
                    .period_ms
                    .saturating_add(u64::from(later).saturating_mul(period_ms)),
            },
            TimeControl::Canadian { .. } | TimeControl::Simple { .. } => self.period_ms,
        };
        Some(self.main_ms.saturating_add(overtime))
    }

    /// Charges `elapsed_ms` of thinking that did not end in a move (a pause, an
    /// adjournment, or a display of the running clock). Main time drains first, the rest
    /// goes into overtime. In byo-yomi each full period used consumes one, and a partial
    /// period stays used (the period is not reset, because no move was made).
    /// Flags iff `elapsed_ms >= remaining_ms`; on a flag every time field becomes zero.
    /// Without a flag, `remaining_ms` drops by exactly `elapsed_ms`.
    pub fn spend(&mut self, tc: &TimeControl, elapsed_ms: Millis) -> Result<(), OutOfTime> {
        let Some(remaining) = self.remaining_ms(tc) else {
            return Ok(());
        };
        if elapsed_ms >= remaining {
            self.run_out();
            return Err(OutOfTime);
        }
        let from_main = elapsed_ms.min(self.main_ms);
        self.main_ms -= from_main;
        let overtime = elapsed_ms - from_main;
        if overtime == 0 {
            return Ok(());
        }
        match *tc {
            TimeControl::Byoyomi { period_ms, .. } => self.spend_periods(overtime, period_ms),
            // Canadian block or simple per-move time; `overtime < period_ms` here because
            // `elapsed_ms < remaining`. Absolute and Fischer never get here.
            _ => self.period_ms = self.period_ms.saturating_sub(overtime),
        }
        Ok(())
    }

    /// Charges a finished move that took `elapsed_ms` (already net of any lag credit):
    /// [`spend`](Self::spend), then the system's per-move bookkeeping: Fischer adds the
    /// increment (capped at `max_ms`), byo-yomi resets the current period to a full one,
    /// simple resets the per-move time, and Canadian counts the move in the block when it
    /// was finished in overtime (main time at zero, including a move that ends exactly
    /// as main time does); after the block's last move a fresh block starts.
    pub fn charge(&mut self, tc: &TimeControl, elapsed_ms: Millis) -> Result<(), OutOfTime> {
        self.spend(tc, elapsed_ms)?;
        match *tc {
            TimeControl::None | TimeControl::Absolute { .. } => {}
            TimeControl::Fischer {
                increment_ms,
                max_ms,
                ..
            } => {
                self.main_ms = self
                    .main_ms
                    .saturating_add(increment_ms)
                    .min(max_ms.unwrap_or(Millis::MAX));
            }
            TimeControl::Byoyomi { period_ms, .. } => self.period_ms = period_ms,
            TimeControl::Canadian {
                moves, block_ms, ..
            } => {
                if self.main_ms == 0 {
                    self.moves_left = self.moves_left.saturating_sub(1);
                    if self.moves_left == 0 {
                        self.moves_left = moves;
                        self.period_ms = block_ms;
                    }
                }
            }
            TimeControl::Simple { per_move_ms } => self.period_ms = per_move_ms,
        }
        Ok(())
    }

    /// Byo-yomi overtime: the current period absorbs what it can; each full period past
    /// that consumes another; what is left of the last one touched becomes the current
    /// period. The caller guarantees at least one period survives.
    fn spend_periods(&mut self, overtime: Millis, full_period_ms: Millis) {
        if overtime < self.period_ms {
            self.period_ms -= overtime;
            return;
        }
        let past_current = overtime - self.period_ms;
        let further = past_current.checked_div(full_period_ms).unwrap_or(0);
        let consumed = u32::try_from(further.saturating_add(1)).unwrap_or(u32::MAX);
        self.periods_left = self.periods_left.saturating_sub(consumed);
        self.period_ms = full_period_ms - past_current.checked_rem(full_period_ms).unwrap_or(0);
    }

    /// The state after a flag: nothing left.
    fn run_out(&mut self) {
        self.main_ms = 0;
        self.period_ms = 0;
        self.periods_left = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u64 = 30_000;

    fn byo(main_ms: u64, periods: u32) -> TimeControl {
        TimeControl::Byoyomi {
            main_ms,
            periods,
            period_ms: P,
        }
    }

    /// A fresh clock charged one move.
    fn after_move(tc: TimeControl, elapsed: u64) -> Result<PlayerClock, OutOfTime> {
        let mut c = PlayerClock::new(&tc);
        c.charge(&tc, elapsed).map(|()| c)
    }

    #[test]
    fn untimed_never_flags() {
        let tc = TimeControl::None;
        let mut c = PlayerClock::new(&tc);
        assert_eq!(c.remaining_ms(&tc), None);
        assert_eq!(c.charge(&tc, u64::MAX), Ok(()));
        assert_eq!(c.spend(&tc, u64::MAX), Ok(()));
    }

    #[test]
    fn absolute_flags_at_exactly_main_time() {
        let tc = TimeControl::Absolute { main_ms: 60_000 };
        let c = after_move(tc, 59_999).unwrap();
        assert_eq!(c.main_ms, 1);
        assert_eq!(c.remaining_ms(&tc), Some(1));
        assert_eq!(after_move(tc, 60_000), Err(OutOfTime));
    }

    #[test]
    fn fischer_adds_increment_after_the_move() {
        let tc = TimeControl::Fischer {
            main_ms: 10_000,
            increment_ms: 5_000,
            max_ms: None,
        };
        assert_eq!(after_move(tc, 9_999).unwrap().main_ms, 5_001);
        // The increment does not rescue a move made after main time ran out.
        assert_eq!(after_move(tc, 10_000), Err(OutOfTime));
    }

    #[test]
    fn fischer_cap_bounds_main_time() {
        let tc = TimeControl::Fischer {
            main_ms: 10_000,
            increment_ms: 5_000,
            max_ms: Some(12_000),
        };
        let mut c = PlayerClock::new(&tc);
        c.charge(&tc, 1_000).unwrap();
        assert_eq!(c.main_ms, 12_000, "9 s + 5 s capped at 12 s");
        c.charge(&tc, 4_000).unwrap();
        assert_eq!(c.main_ms, 12_000, "8 s + 5 s capped at 12 s");
        c.charge(&tc, 10_000).unwrap();
        assert_eq!(c.main_ms, 7_000, "2 s + 5 s is under the cap");
    }

    #[test]
    fn byoyomi_move_within_a_period_uses_none() {
        let c = after_move(byo(0, 5), P - 1).unwrap();
        assert_eq!(c.periods_left, 5);
        assert_eq!(c.period_ms, P, "the period resets after a move");
    }

    #[test]
    fn byoyomi_move_at_exactly_one_period_consumes_one() {
        let c = after_move(byo(0, 5), P).unwrap();
        assert_eq!(c.periods_left, 4);
        assert_eq!(c.period_ms, P);
    }

    #[test]
    fn byoyomi_last_period() {
        let c = after_move(byo(0, 1), P - 1).unwrap();
        assert_eq!((c.periods_left, c.period_ms), (1, P));
        assert_eq!(after_move(byo(0, 1), P), Err(OutOfTime));
        // Reaching the last period by using up the others, then the same boundary.
        let mut c = PlayerClock::new(&byo(0, 3));
        c.charge(&byo(0, 3), 2 * P).unwrap();
        assert_eq!(c.periods_left, 1);
        let mut survivor = c;
        assert_eq!(survivor.charge(&byo(0, 3), P - 1), Ok(()));
        assert_eq!(c.charge(&byo(0, 3), P), Err(OutOfTime));
        assert_eq!(c, PlayerClock::default(), "a flagged clock is all zero");
    }

    #[test]
    fn byoyomi_main_time_spills_into_periods() {
        let tc = byo(10_000, 3);
        // Main time drained, then P - 1 into the first period: no period consumed.
        let c = after_move(tc, 10_000 + P - 1).unwrap();
        assert_eq!((c.main_ms, c.periods_left, c.period_ms), (0, 3, P));
        // Main time drained, then exactly P: one period consumed.
        let c = after_move(tc, 10_000 + P).unwrap();
        assert_eq!((c.main_ms, c.periods_left, c.period_ms), (0, 2, P));
        // A move ending exactly as main time does enters byo-yomi with nothing used.
        let c = after_move(tc, 10_000).unwrap();
        assert_eq!((c.main_ms, c.periods_left, c.period_ms), (0, 3, P));
        // Within main time nothing happens to the periods.
        let c = after_move(tc, 9_999).unwrap();
        assert_eq!((c.main_ms, c.periods_left, c.period_ms), (1, 3, P));
    }

    #[test]
    fn byoyomi_one_long_move_consumes_several_periods() {
        let tc = byo(10_000, 5);
        let c = after_move(tc, 10_000 + 3 * P + 7).unwrap();
        assert_eq!((c.main_ms, c.periods_left, c.period_ms), (0, 2, P));
        let c = after_move(tc, 10_000 + 3 * P - 1).unwrap();
        assert_eq!(c.periods_left, 3);
        assert_eq!(after_move(tc, 10_000 + 5 * P - 1).unwrap().periods_left, 1);
        assert_eq!(after_move(tc, 10_000 + 5 * P), Err(OutOfTime));
    }

    #[test]
    fn byoyomi_partial_period_stays_used_without_a_move() {
        let tc = byo(0, 3);
        let mut c = PlayerClock::new(&tc);
        // Thinking 40 s then pausing: one full period consumed, 10 s into the next.
        c.spend(&tc, 40_000).unwrap();
        assert_eq!((c.periods_left, c.period_ms), (2, 20_000));
        assert_eq!(c.remaining_ms(&tc), Some(3 * P - 40_000));
        // After resuming, 20 s more uses up that period.
        let mut more = c;
        more.charge(&tc, 20_000).unwrap();
        assert_eq!((more.periods_left, more.period_ms), (1, P));
        // 19.999 s more is a move within the period: reset to a full one.
        c.charge(&tc, 19_999).unwrap();
        assert_eq!((c.periods_left, c.period_ms), (2, P));
    }

    #[test]
    fn canadian_block_resets_after_its_moves() {
        let tc = TimeControl::Canadian {
            main_ms: 1_000,
            moves: 3,
            block_ms: 60_000,
        };
        let mut c = PlayerClock::new(&tc);
        c.charge(&tc, 500).unwrap();
        assert_eq!((c.main_ms, c.moves_left, c.period_ms), (500, 3, 60_000));
        // Spills 10 s into the block: counts as the first block move.
        c.charge(&tc, 10_500).unwrap();
        assert_eq!((c.main_ms, c.moves_left, c.period_ms), (0, 2, 50_000));
        c.charge(&tc, 20_000).unwrap();
        assert_eq!((c.moves_left, c.period_ms), (1, 30_000));
        c.charge(&tc, 29_999).unwrap();
        assert_eq!((c.moves_left, c.period_ms), (3, 60_000), "fresh block");
    }

    #[test]
    fn canadian_flags_when_the_block_runs_out() {
        let tc = TimeControl::Canadian {
            main_ms: 0,
            moves: 3,
            block_ms: 60_000,
        };
        let mut c = PlayerClock::new(&tc);
        c.charge(&tc, 59_000).unwrap();
        assert_eq!((c.moves_left, c.period_ms), (2, 1_000));
        let mut late = c;
        assert_eq!(late.charge(&tc, 1_000), Err(OutOfTime));
        assert_eq!(c.charge(&tc, 999), Ok(()));
    }

    #[test]
    fn canadian_move_ending_exactly_with_main_time_counts_in_the_block() {
        let tc = TimeControl::Canadian {
            main_ms: 5_000,
            moves: 2,
            block_ms: 60_000,
        };
        let c = after_move(tc, 5_000).unwrap();
        assert_eq!((c.main_ms, c.moves_left, c.period_ms), (0, 1, 60_000));
    }

    #[test]
    fn simple_resets_every_move() {
        let tc = TimeControl::Simple {
            per_move_ms: 10_000,
        };
        let mut c = PlayerClock::new(&tc);
        c.charge(&tc, 9_999).unwrap();
        assert_eq!(c.period_ms, 10_000);
        c.spend(&tc, 4_000).unwrap();
        assert_eq!(c.remaining_ms(&tc), Some(6_000));
        c.charge(&tc, 5_999).unwrap();
        assert_eq!(c.period_ms, 10_000);
        assert_eq!(c.charge(&tc, 10_000), Err(OutOfTime));
    }

    #[test]
    fn serializes_the_protocol_fields() {
        let c = PlayerClock::new(&byo(600_000, 5));
        assert_eq!(
            serde_json::to_value(c).unwrap(),
            serde_json::json!({"main_ms":600000,"periods_left":5,"period_ms":30000,"moves_left":0})
        );
    }
}
