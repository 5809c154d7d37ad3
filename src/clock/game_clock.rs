//! The clock of one game: both sides' clocks, which one runs and since when, pause, and
//! the one deadline the room arms a timer for.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::Millis;
use super::player::PlayerClock;
use super::settings::TimeControl;
use super::weekend::Weekend;
use crate::rules::Color;

/// A side lost on time. Final: once a game clock has recorded a flag, its clocks stay
/// stopped and every later move, start, pause or stop reports the same flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error, Serialize, Deserialize)]
#[error("Time has run out for {color}.")]
pub struct Flagged {
    /// The side whose time ran out.
    pub color: Color,
}

/// What a move cost its player, for the move event and the logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MoveCharge {
    /// Time the clock ran, from its start to the move.
    pub elapsed_ms: Millis,
    /// Lag credit applied: `min(lag_credit_ms, elapsed_ms)`.
    pub credit_ms: Millis,
    /// Time actually charged: `elapsed_ms - credit_ms`.
    pub charged_ms: Millis,
}

/// Both sides' clocks as they stand at one instant, the running side's thinking time so
/// far already deducted. The server adds `server_time` when it sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClockView {
    /// Black's clock at that instant.
    pub black: PlayerClock,
    /// White's clock at that instant.
    pub white: PlayerClock,
    /// The side whose clock is running, if any.
    pub running: Option<Color>,
    /// Whether the game is paused (then `running` is `None`).
    pub paused: bool,
    /// The running side's weekend that its clock meets next, before its deadline
    /// (correspondence games with `weekends`), so that a client counting down from this
    /// view stands the clock still through it; absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weekend: Option<WeekendSpan>,
}

/// A stretch of the running side's weekend days, in server Unix ms: its clock stands
/// still from `from` until `until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WeekendSpan {
    /// When it begins; absent when it is under way at the view's instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Millis>,
    /// When the clock runs again.
    pub until: Millis,
}

impl ClockView {
    /// One side's clock in this view.
    pub fn player(&self, color: Color) -> &PlayerClock {
        match color {
            Color::Black => &self.black,
            Color::White => &self.white,
        }
    }

    fn player_mut(&mut self, color: Color) -> &mut PlayerClock {
        match color {
            Color::Black => &mut self.black,
            Color::White => &mut self.white,
        }
    }

    /// A referee's bonus (`delta_ms` > 0, added to main time) or penalty (< 0, spent like
    /// thinking time, so byo-yomi periods go once main time is gone). A penalty of all
    /// the time left flags `color`.
    pub fn adjust(&mut self, tc: &TimeControl, color: Color, delta_ms: i64) -> Result<(), Flagged> {
        let side = self.player_mut(color);
        if delta_ms >= 0 {
            side.main_ms = side.main_ms.saturating_add(delta_ms.unsigned_abs());
            return Ok(());
        }
        side.spend(tc, delta_ms.unsigned_abs())
            .map_err(|_| Flagged { color })
    }
}

/// The side whose clock runs and the instant it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Turn {
    color: Color,
    since: Millis,
}

/// A game's clock: a pure state machine driven by the room with the instants at which
/// things happen. At most one side's clock runs; time is charged to a side's
/// [`PlayerClock`] whenever its clock stops (a move, a pause, a stop); while it runs,
/// only the instant it started is kept, so nothing needs updating between events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameClock {
    time_control: TimeControl,
    /// Black's and White's clocks, by [`Color::index`].
    sides: [PlayerClock; 2],
    turn: Option<Turn>,
    paused: Option<Color>,
    flagged: Option<Color>,
    /// The sides on vacation (correspondence games), by [`Color::index`]: an away
    /// side's clock stands still even on its turn, and runs again from its return.
    #[serde(default)]
    away: [bool; 2],
    /// The weekends each side's running clock stands still on (correspondence games
    /// with `weekends`), by [`Color::index`]: taken from `next_weekends` whenever the
    /// side's clock starts, so a change made during a turn counts from the next one.
    #[serde(skip)]
    weekends: [Option<Weekend>; 2],
    #[serde(skip)]
    next_weekends: [Option<Weekend>; 2],
}

impl GameClock {
    /// Both sides with full time, no clock running.
    pub fn new(time_control: TimeControl) -> Self {
        let full = PlayerClock::new(&time_control);
        Self {
            time_control,
            sides: [full, full],
            turn: None,
            paused: None,
            flagged: None,
            away: [false; 2],
            weekends: [None, None],
            next_weekends: [None, None],
        }
    }

    /// The time control this clock runs under.
    pub fn time_control(&self) -> &TimeControl {
        &self.time_control
    }

    /// One side's clock as last charged (without the running side's time since it
    /// started; see [`view`](Self::view) for that).
    pub fn player(&self, color: Color) -> &PlayerClock {
        &self.sides[color.index()]
    }

    fn player_mut(&mut self, color: Color) -> &mut PlayerClock {
        &mut self.sides[color.index()]
    }

    /// Starts `color`'s clock at `now`: the first move of the game, or after an
    /// adjournment. A clock already running is stopped first and charged its time so far
    /// (which can flag it); a pause is ended.
    pub fn start(&mut self, color: Color, now: Millis) -> Result<(), Flagged> {
        self.halt(now)?;
        self.paused = None;
        self.begin(color, now);
        Ok(())
    }

    /// `color` has moved at `now`. Stops its clock, charges `now - started`, minus the
    /// lag credit (never below zero), applies the system's per-move rules (increment,
    /// period reset, Canadian count), and starts the opponent's clock at `now`.
    ///
    /// A move at or after the mover's deadline is late whatever the lag credit: the
    /// result is `Flagged` and the mover's time is zero. If `color`'s clock was not
    /// running (not started yet, after `stop`, or while paused) the move costs nothing;
    /// a clock running for the other side is charged its time first, as by `stop`. The
    /// room enforces turn order and refuses moves during a pause, so that is only the
    /// first move of a game and a sealed move played at resumption.
    pub fn on_move(
        &mut self,
        color: Color,
        now: Millis,
        lag_credit_ms: Millis,
    ) -> Result<MoveCharge, Flagged> {
        let charge = match self.turn {
            Some(turn) if turn.color == color && self.flagged.is_none() => {
                self.turn = None;
                let elapsed_ms = self.used(turn, now);
                let tc = self.time_control;
                let clock = self.player_mut(color);
                if clock
                    .remaining_ms(&tc)
                    .is_some_and(|left| elapsed_ms >= left)
                {
                    return Err(self.record_flag(color));
                }
                let credit_ms = lag_credit_ms.min(elapsed_ms);
                let charged_ms = elapsed_ms - credit_ms;
                if clock.charge(&tc, charged_ms).is_err() {
                    return Err(self.record_flag(color));
                }
                MoveCharge {
                    elapsed_ms,
                    credit_ms,
                    charged_ms,
                }
            }
            _ => {
                self.halt(now)?;
                let tc = self.time_control;
                if self.player_mut(color).charge(&tc, 0).is_err() {
                    return Err(self.record_flag(color));
                }
                MoveCharge::default()
            }
        };
        self.paused = None;
        self.begin(color.opponent(), now);
        Ok(charge)
    }

    /// The instant the running side flags: the room arms one timer for it. `None` when
    /// untimed, paused, stopped, or after a flag. [`check_flag`](Self::check_flag) first
    /// returns `Some` at exactly this instant.
    pub fn deadline(&self) -> Option<Millis> {
        if self.flagged.is_some() {
            return None;
        }
        let turn = self.turn.filter(|turn| !self.is_away(turn.color))?;
        let left = self.player(turn.color).remaining_ms(&self.time_control)?;
        Some(match &self.weekends[turn.color.index()] {
            Some(weekend) => weekend.deadline(turn.since, left),
            None => turn.since.saturating_add(left),
        })
    }

    /// The side that has lost on time by `now`, if any: the running side once
    /// `now >= deadline`, or a flag already recorded.
    pub fn check_flag(&self, now: Millis) -> Option<Color> {
        if self.flagged.is_some() {
            return self.flagged;
        }
        let deadline = self.deadline()?;
        let turn = self.turn?;
        (now >= deadline).then_some(turn.color)
    }

    /// The flag recorded by a move, pause or stop at or after a deadline, if any.
    pub fn flagged(&self) -> Option<Color> {
        self.flagged
    }

    /// Pauses the game at `now` (an agreed pause does not count against either clock).
    /// The running side is charged the time used so far, without a move: in byo-yomi
    /// every full period used is consumed and a partial period stays used (it is only
    /// reset by a move), so a pause neither gives nor takes time. Does nothing if no
    /// clock is running. Fails if the running side had already flagged.
    pub fn pause(&mut self, now: Millis) -> Result<(), Flagged> {
        let running = self.turn.map(|turn| turn.color);
        self.halt(now)?;
        if running.is_some() {
            self.paused = running;
        }
        Ok(())
    }

    /// Ends a pause at `now`: the side that was running runs again from `now`. Does
    /// nothing if not paused or after a flag.
    pub fn resume(&mut self, now: Millis) {
        if self.flagged.is_some() {
            return;
        }
        if let Some(color) = self.paused.take() {
            self.begin(color, now);
        }
    }

    /// Whether the game is paused.
    pub fn is_paused(&self) -> bool {
        self.paused.is_some()
    }

    /// Stops the clocks at `now` (game over, or adjournment: the sealer is charged the
    /// time used before sealing, as by `pause`). Restart with [`start`](Self::start) or
    /// play the sealed move with [`on_move`](Self::on_move). Fails if the running side
    /// had already flagged.
    pub fn stop(&mut self, now: Millis) -> Result<(), Flagged> {
        self.paused = None;
        self.halt(now)
    }

    /// Puts back both sides' clocks as a stored view shows them, with no clock running:
    /// a game rebuilt after a restart charges nobody for the downtime until the room
    /// starts the clock of the side to move again.
    pub fn restore(&mut self, view: ClockView) {
        self.sides = [view.black, view.white];
        self.turn = None;
        self.paused = None;
    }

    /// As [`restore`](Self::restore) from the clocks at `now`, for a game rebuilt after a
    /// restart, except that a pause stays one: the side it held runs again when play
    /// resumes, and until then the view says the clocks are paused.
    pub fn settle(&mut self, now: Millis) {
        let paused = self.paused;
        self.restore(self.view(now));
        self.paused = paused;
    }

    /// How long the running side's clock has run by `now` (None when no clock runs).
    pub fn elapsed(&self, now: Millis) -> Option<Millis> {
        self.turn.map(|turn| self.used(turn, now))
    }

    /// The time `turn` has used by `now`: none while its side is away, nor on its
    /// weekend days.
    fn used(&self, turn: Turn, now: Millis) -> Millis {
        match (self.is_away(turn.color), &self.weekends[turn.color.index()]) {
            (true, _) => 0,
            (false, Some(weekend)) => weekend.chargeable(turn.since, now),
            (false, None) => now.saturating_sub(turn.since),
        }
    }

    /// `color`'s clock runs from `since`, charged by the weekend it has now.
    fn begin(&mut self, color: Color, since: Millis) {
        let i = color.index();
        self.weekends[i].clone_from(&self.next_weekends[i]);
        self.turn = Some(Turn { color, since });
    }

    /// `color`'s clock stands still on `weekend` from now on, or never (None): at once
    /// when it is not running or had no weekend yet (the game's start), else from its
    /// next start (the turn under way keeps the calendar it began with, so a weekend
    /// cannot be moved onto a deadline).
    pub fn set_weekend(&mut self, color: Color, weekend: Option<Weekend>) {
        let i = color.index();
        if self.running() != Some(color) || self.next_weekends[i].is_none() {
            self.weekends[i].clone_from(&weekend);
        }
        self.next_weekends[i] = weekend;
    }

    /// The weekend `color`'s clock will be charged by from its next start.
    pub fn weekend(&self, color: Color) -> Option<&Weekend> {
        self.next_weekends[color.index()].as_ref()
    }

    /// When the running side's clock started (moved later by a [`hold`](Self::hold)).
    pub fn since(&self) -> Option<Millis> {
        self.turn.map(|turn| turn.since)
    }

    /// Whether `color` is on vacation: its clock stands still.
    pub fn is_away(&self, color: Color) -> bool {
        self.away[color.index()]
    }

    /// `color` goes on vacation (`away`) or comes back at `now`. Going, a running clock
    /// of theirs is charged its time so far (which can flag it) and then stands still;
    /// back, it runs from `now`.
    pub fn set_away(&mut self, color: Color, away: bool, now: Millis) -> Result<(), Flagged> {
        if let Some(color) = self.flagged {
            return Err(Flagged { color });
        }
        if let Some(turn) = self.turn.filter(|turn| turn.color == color) {
            let tc = self.time_control;
            let used = self.used(turn, now);
            if self.player_mut(color).spend(&tc, used).is_err() {
                return Err(self.record_flag(color));
            }
            self.begin(color, now);
        }
        self.away[color.index()] = away;
        Ok(())
    }

    /// Holds `color`'s running clock for `ms` of its time (a vacation day at its
    /// deadline): its deadline moves that much later, as if the clock had stood still.
    /// With a weekend, `ms` of the time it charges: the turn's start moves past that
    /// much working time, since moving it within a weekend would not move the deadline.
    pub fn hold(&mut self, color: Color, ms: Millis) {
        let weekend = &self.weekends[color.index()];
        if let Some(turn) = self.turn.as_mut().filter(|turn| turn.color == color) {
            turn.since = match weekend {
                Some(weekend) => weekend.deadline(turn.since, ms),
                None => turn.since.saturating_add(ms),
            };
        }
    }

    /// The side whose clock is running, if any.
    pub fn running(&self) -> Option<Color> {
        self.turn.map(|turn| turn.color)
    }

    /// Both clocks as they stand at `now`, for the clients. A running side that has run
    /// out by `now` shows zero.
    pub fn view(&self, now: Millis) -> ClockView {
        let mut view = ClockView {
            black: self.sides[0],
            white: self.sides[1],
            // An away side's clock stands still: to clients, none runs.
            running: self.running().filter(|c| !self.is_away(*c)),
            paused: self.is_paused(),
            weekend: self.weekend_ahead(now),
        };
        if let (Some(turn), None) = (self.turn, self.flagged) {
            // A flag leaves the copy at zero, which is what the view should show.
            let _ = view
                .player_mut(turn.color)
                .spend(&self.time_control, self.used(turn, now));
        }
        view
    }

    /// The weekend the running side's clock meets next from `now`, if that is before
    /// its deadline (past it, the flag has fallen first).
    fn weekend_ahead(&self, now: Millis) -> Option<WeekendSpan> {
        let turn = self.turn.filter(|turn| !self.is_away(turn.color))?;
        let deadline = self.deadline()?;
        let weekend = self.weekends[turn.color.index()].as_ref()?;
        let (from, until) = weekend.next_rest(now.max(turn.since))?;
        (from < deadline).then_some(WeekendSpan {
            from: (from > now).then_some(from),
            until,
        })
    }

    /// Stops the running clock at `now`, charging its time without a move.
    fn halt(&mut self, now: Millis) -> Result<(), Flagged> {
        if let Some(color) = self.flagged {
            return Err(Flagged { color });
        }
        let Some(turn) = self.turn.take() else {
            return Ok(());
        };
        let tc = self.time_control;
        let elapsed_ms = self.used(turn, now);
        if self.player_mut(turn.color).spend(&tc, elapsed_ms).is_err() {
            return Err(self.record_flag(turn.color));
        }
        Ok(())
    }

    /// Records `color`'s flag: its time is zero and no clock runs from now on.
    fn record_flag(&mut self, color: Color) -> Flagged {
        let tc = self.time_control;
        // Spending everything that is left zeroes the clock.
        let _ = self.player_mut(color).spend(&tc, Millis::MAX);
        self.turn = None;
        self.paused = None;
        self.flagged = Some(color);
        Flagged { color }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const B: Color = Color::Black;
    const W: Color = Color::White;
    const P: u64 = 30_000;

    fn byo(main_ms: u64, periods: u32) -> GameClock {
        GameClock::new(TimeControl::Byoyomi {
            main_ms,
            periods,
            period_ms: P,
        })
    }

    #[test]
    fn a_side_on_its_weekend_stands_still_and_a_change_counts_from_its_next_turn() {
        use crate::clock::weekend::weekday_at;
        const DAY: Millis = 86_400_000;
        // Thursday 4 June 2026, 00:00 UTC.
        let thu = 1_780_531_200_000;
        assert_eq!(weekday_at("UTC", thu), Some(jiff::civil::Weekday::Thursday));
        let fri_sat = [jiff::civil::Weekday::Friday, jiff::civil::Weekday::Saturday];
        let weekend = Weekend::new("UTC", &fri_sat).unwrap();
        let mut g = GameClock::new(TimeControl::Simple {
            per_move_ms: 2 * DAY,
        });
        g.start(B, thu).unwrap();
        // The first weekend counts at once, though Black's clock runs.
        g.set_weekend(B, Some(weekend.clone()));
        // Thursday, then Friday and Saturday off: due at Monday's midnight.
        assert_eq!(g.deadline(), Some(thu + 4 * DAY));
        assert_eq!(g.view(thu + 3 * DAY).black.period_ms, DAY);
        assert_eq!(g.check_flag(thu + 4 * DAY - 1), None);
        assert_eq!(g.check_flag(thu + 4 * DAY), Some(B));
        // White has no weekend: their clock runs through it.
        g.on_move(B, thu + 3 * DAY, 0).unwrap();
        assert_eq!(g.deadline(), Some(thu + 5 * DAY));
        // Black drops their weekend during White's turn: it counts from Black's next.
        g.set_weekend(B, Some(Weekend::new("UTC", &[]).unwrap()));
        g.on_move(W, thu + 4 * DAY, 0).unwrap();
        assert_eq!(g.deadline(), Some(thu + 6 * DAY));
        // Black takes it back during their own turn: this turn keeps none.
        g.set_weekend(B, Some(weekend.clone()));
        assert_eq!(g.weekend(B), Some(&weekend));
        assert_eq!(g.deadline(), Some(thu + 6 * DAY));
        g.on_move(B, thu + 5 * DAY, 0).unwrap();
        g.on_move(W, thu + 6 * DAY, 0).unwrap();
        // From Wednesday 10 June, weekend again: Wednesday and Thursday use the two
        // days, so the flag falls at the weekend's first instant, not after it.
        assert_eq!(g.deadline(), Some(thu + 8 * DAY));
        g.on_move(B, thu + 7 * DAY + 1, 0).unwrap();
        g.on_move(W, thu + 8 * DAY, 0).unwrap();
        // Started on the weekend (Friday 12 June): the clock runs from Sunday.
        assert_eq!(g.deadline(), Some(thu + 12 * DAY));
    }

    #[test]
    fn a_hold_of_a_turn_begun_on_its_weekend_moves_its_deadline_by_working_time() {
        const DAY: Millis = 86_400_000;
        // Thursday 4 June 2026, 00:00 UTC; Friday and Saturday off.
        let thu = 1_780_531_200_000;
        let fri_sat = [jiff::civil::Weekday::Friday, jiff::civil::Weekday::Saturday];
        let mut g = GameClock::new(TimeControl::Absolute { main_ms: 2 * DAY });
        g.set_weekend(B, Weekend::new("UTC", &fri_sat).ok());
        // Begun Friday noon: it runs from Sunday, due Tuesday.
        g.start(B, thu + DAY + DAY / 2).unwrap();
        assert_eq!(g.deadline(), Some(thu + 5 * DAY));
        // A day held is a day of its working time: Wednesday, not the same Tuesday
        // (a start moved to Saturday noon would still be due on Tuesday).
        g.hold(B, DAY);
        assert_eq!(g.deadline(), Some(thu + 6 * DAY));
        g.hold(B, 5 * 3_600_000);
        assert_eq!(g.deadline(), Some(thu + 6 * DAY + 5 * 3_600_000));
    }

    #[test]
    fn the_view_names_the_weekend_the_running_clock_meets_next() {
        const DAY: Millis = 86_400_000;
        // Thursday 4 June 2026, 00:00 UTC; Black's weekend Friday and Saturday.
        let thu = 1_780_531_200_000;
        let fri_sat = [jiff::civil::Weekday::Friday, jiff::civil::Weekday::Saturday];
        let mut g = GameClock::new(TimeControl::Simple {
            per_move_ms: 3 * DAY,
        });
        g.set_weekend(B, Some(Weekend::new("UTC", &fri_sat).unwrap()));
        let noon = thu + DAY / 2;
        g.start(B, noon).unwrap();
        let both_days = WeekendSpan {
            from: Some(thu + DAY),
            until: thu + 3 * DAY,
        };
        assert_eq!(g.view(noon).weekend, Some(both_days));
        // Under way: no `from`, and the time shown stands at what Thursday left.
        let saturday = g.view(thu + 2 * DAY);
        assert_eq!(
            saturday.weekend,
            Some(WeekendSpan {
                from: None,
                until: thu + 3 * DAY
            })
        );
        assert_eq!(saturday.black.period_ms, 3 * DAY - DAY / 2);
        // The next weekend, a week later, comes after the deadline: none is named.
        assert_eq!(g.deadline(), Some(noon + 5 * DAY));
        assert_eq!(g.view(thu + 4 * DAY).weekend, None);
        // Away, the clock stands still anyway; White has no weekend.
        let mut away = g.clone();
        away.set_away(B, true, noon).unwrap();
        assert_eq!(away.view(noon).weekend, None);
        g.on_move(B, thu + 4 * DAY, 0).unwrap();
        assert_eq!(g.view(thu + 4 * DAY).weekend, None);
    }

    #[test]
    fn an_away_side_stands_still_and_a_hold_moves_its_deadline() {
        let mut g = GameClock::new(TimeControl::Absolute { main_ms: 1_000 });
        g.start(B, 0).unwrap();
        g.set_away(B, true, 300).unwrap();
        assert_eq!(g.deadline(), None);
        assert_eq!(g.view(5_000).black.main_ms, 700);
        assert_eq!(g.view(5_000).running, None);
        g.set_away(B, false, 5_000).unwrap();
        assert_eq!(g.deadline(), Some(5_700));
        g.hold(B, 1_000);
        assert_eq!(g.deadline(), Some(6_700));
        // Holding the side not running changes nothing.
        g.hold(W, 1_000);
        assert_eq!(g.deadline(), Some(6_700));
        // Away on the opponent's turn: their own turn then stands still from its start.
        g.on_move(B, 6_000, 0).unwrap();
        g.set_away(B, true, 6_100).unwrap();
        g.on_move(W, 6_500, 0).unwrap();
        assert_eq!(g.deadline(), None);
        assert_eq!(g.view(99_000).black.main_ms, 700);
    }

    #[test]
    fn untimed_runs_but_never_flags() {
        let mut g = GameClock::new(TimeControl::None);
        g.start(B, 0).unwrap();
        assert_eq!(g.running(), Some(B));
        assert_eq!(g.deadline(), None);
        assert_eq!(g.check_flag(u64::MAX), None);
        let charge = g.on_move(B, 1_000_000_000, 0).unwrap();
        assert_eq!(charge.charged_ms, 1_000_000_000);
        assert_eq!(g.running(), Some(W));
    }

    #[test]
    fn a_move_switches_clocks_and_charges_the_mover() {
        let mut g = GameClock::new(TimeControl::Absolute { main_ms: 60_000 });
        g.start(B, 1_000).unwrap();
        assert_eq!(g.deadline(), Some(61_000));
        let charge = g.on_move(B, 11_000, 0).unwrap();
        assert_eq!(
            charge,
            MoveCharge {
                elapsed_ms: 10_000,
                credit_ms: 0,
                charged_ms: 10_000
            }
        );
        assert_eq!(g.player(B).main_ms, 50_000);
        assert_eq!(g.running(), Some(W));
        assert_eq!(g.deadline(), Some(71_000));
    }

    #[test]
    fn a_move_exactly_at_the_deadline_is_late() {
        let mut g = GameClock::new(TimeControl::Absolute { main_ms: 60_000 });
        g.start(B, 0).unwrap();
        let mut early = g.clone();
        assert!(early.on_move(B, 59_999, 0).is_ok());
        assert_eq!(g.on_move(B, 60_000, 0), Err(Flagged { color: B }));
        assert_eq!(g.player(B).main_ms, 0);
        assert_eq!(g.running(), None);
        assert_eq!(g.deadline(), None);
        assert_eq!(g.check_flag(60_000), Some(B));
        assert_eq!(g.flagged(), Some(B));
        // A flag is final.
        assert_eq!(g.on_move(W, 70_000, 0), Err(Flagged { color: B }));
        assert_eq!(g.start(W, 70_000), Err(Flagged { color: B }));
    }

    #[test]
    fn lag_credit_cannot_save_a_late_move() {
        let mut g = GameClock::new(TimeControl::Absolute { main_ms: 60_000 });
        g.start(B, 0).unwrap();
        assert_eq!(g.on_move(B, 60_100, 1_000), Err(Flagged { color: B }));
    }

    #[test]
    fn lag_credit_keeps_a_byoyomi_move_inside_its_period() {
        let mut g = byo(0, 3);
        g.start(B, 0).unwrap();
        let charge = g.on_move(B, P + 200, 300).unwrap();
        assert_eq!(charge.charged_ms, P - 100);
        assert_eq!(g.player(B).periods_left, 3);
        // Without the credit the same move consumes a period.
        let mut g = byo(0, 3);
        g.start(B, 0).unwrap();
        g.on_move(B, P + 200, 0).unwrap();
        assert_eq!(g.player(B).periods_left, 2);
    }

    #[test]
    fn lag_credit_never_makes_elapsed_negative() {
        let mut g = GameClock::new(TimeControl::Absolute { main_ms: 60_000 });
        g.start(B, 1_000).unwrap();
        let charge = g.on_move(B, 1_300, 5_000).unwrap();
        assert_eq!(
            charge,
            MoveCharge {
                elapsed_ms: 300,
                credit_ms: 300,
                charged_ms: 0
            }
        );
        assert_eq!(g.player(B).main_ms, 60_000);
    }

    #[test]
    fn byoyomi_boundaries_through_the_game_clock() {
        let mut g = byo(0, 2);
        g.start(B, 0).unwrap();
        g.on_move(B, P, 0).unwrap();
        assert_eq!(g.player(B).periods_left, 1, "exactly P consumes one");
        g.on_move(W, P + P - 1, 0).unwrap();
        assert_eq!(g.player(W).periods_left, 2, "P - 1 consumes none");
        // Black in the last period: P - 1 survives, P flags.
        let mut survives = g.clone();
        survives.on_move(B, 2 * P - 1 + P - 1, 0).unwrap();
        assert_eq!(survives.player(B).periods_left, 1);
        assert_eq!(g.deadline(), Some(2 * P - 1 + P));
        assert_eq!(g.on_move(B, 2 * P - 1 + P, 0), Err(Flagged { color: B }));
    }

    #[test]
    fn deadline_is_the_first_instant_check_flag_sees() {
        let mut g = byo(10_000, 3);
        g.start(W, 500).unwrap();
        let d = g.deadline().unwrap();
        assert_eq!(d, 500 + 10_000 + 3 * P);
        assert_eq!(g.check_flag(d - 1), None);
        assert_eq!(g.check_flag(d), Some(W));
        assert_eq!(g.check_flag(d + 1), Some(W));
    }

    #[test]
    fn pause_excludes_paused_time() {
        let mut g = GameClock::new(TimeControl::Absolute { main_ms: 60_000 });
        g.start(B, 0).unwrap();
        g.pause(10_000).unwrap();
        assert!(g.is_paused());
        assert_eq!(g.running(), None);
        assert_eq!(g.deadline(), None);
        assert_eq!(g.check_flag(1_000_000), None);
        assert_eq!(g.view(500_000).black.main_ms, 50_000);
        g.resume(1_000_000);
        assert!(!g.is_paused());
        assert_eq!(g.running(), Some(B));
        assert_eq!(g.deadline(), Some(1_050_000));
        g.on_move(B, 1_005_000, 0).unwrap();
        assert_eq!(g.player(B).main_ms, 45_000);
    }

    #[test]
    fn pause_in_byoyomi_keeps_the_partial_period_used() {
        let mut g = byo(0, 3);
        g.start(B, 0).unwrap();
        g.pause(40_000).unwrap();
        let b = g.player(B);
        assert_eq!((b.periods_left, b.period_ms), (2, 20_000));
        g.resume(100_000);
        assert_eq!(g.deadline(), Some(100_000 + 20_000 + P));
        g.on_move(B, 119_999, 0).unwrap();
        let b = g.player(B);
        assert_eq!((b.periods_left, b.period_ms), (2, P));
    }

    #[test]
    fn pause_after_the_deadline_reports_the_flag() {
        let mut g = GameClock::new(TimeControl::Simple { per_move_ms: 5_000 });
        g.start(W, 0).unwrap();
        assert_eq!(g.pause(5_000), Err(Flagged { color: W }));
        assert!(!g.is_paused());
        assert_eq!(g.check_flag(5_000), Some(W));
    }

    #[test]
    fn stop_and_sealed_move() {
        let mut g = GameClock::new(TimeControl::Fischer {
            main_ms: 60_000,
            increment_ms: 10_000,
            max_ms: None,
        });
        g.start(B, 0).unwrap();
        // Black seals a move after 20 s; the clocks stop.
        g.stop(20_000).unwrap();
        assert_eq!(g.running(), None);
        assert_eq!(g.deadline(), None);
        assert_eq!(g.player(B).main_ms, 40_000);
        // At resumption the sealed move is played: no further time, increment added.
        let charge = g.on_move(B, 9_000_000, 0).unwrap();
        assert_eq!(charge, MoveCharge::default());
        assert_eq!(g.player(B).main_ms, 50_000);
        assert_eq!(g.running(), Some(W));
        assert_eq!(g.deadline(), Some(9_060_000));
    }

    #[test]
    fn first_move_without_a_started_clock_costs_nothing() {
        let mut g = GameClock::new(TimeControl::Absolute { main_ms: 60_000 });
        assert_eq!(g.running(), None);
        g.on_move(B, 5_000, 0).unwrap();
        assert_eq!(g.player(B).main_ms, 60_000);
        assert_eq!(g.running(), Some(W));
    }

    #[test]
    fn view_deducts_the_running_sides_time() {
        let mut g = byo(10_000, 3);
        g.start(B, 0).unwrap();
        let v = g.view(10_000 + P + 5_000);
        assert_eq!(v.black.main_ms, 0);
        assert_eq!(v.black.periods_left, 2);
        assert_eq!(v.black.period_ms, P - 5_000);
        assert_eq!(v.white, PlayerClock::new(g.time_control()));
        assert_eq!(v.running, Some(B));
        assert!(!v.paused);
        // The view does not change the clock.
        assert_eq!(g.player(B).main_ms, 10_000);
        // Past the deadline the running side shows zero.
        let v = g.view(g.deadline().unwrap());
        assert_eq!(v.black, PlayerClock::default());
    }

    #[test]
    fn view_json_shape() {
        let g = GameClock::new(TimeControl::Canadian {
            main_ms: 0,
            moves: 10,
            block_ms: 300_000,
        });
        let json = serde_json::to_value(g.view(0)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "black": {"main_ms":0,"periods_left":0,"period_ms":300000,"moves_left":10},
                "white": {"main_ms":0,"periods_left":0,"period_ms":300000,"moves_left":10},
                "running": null,
                "paused": false
            })
        );
    }

    fn time_control() -> impl Strategy<Value = TimeControl> {
        prop_oneof![
            (1u64..20_000).prop_map(|main_ms| TimeControl::Absolute { main_ms }),
            (
                1u64..20_000,
                0u64..5_000,
                proptest::option::of(20_000u64..30_000)
            )
                .prop_map(|(main_ms, increment_ms, max_ms)| TimeControl::Fischer {
                    main_ms,
                    increment_ms,
                    max_ms
                }),
            (0u64..20_000, 1u32..5, 1u64..5_000).prop_map(|(main_ms, periods, period_ms)| {
                TimeControl::Byoyomi {
                    main_ms,
                    periods,
                    period_ms,
                }
            }),
            (0u64..20_000, 1u32..5, 1u64..10_000).prop_map(|(main_ms, moves, block_ms)| {
                TimeControl::Canadian {
                    main_ms,
                    moves,
                    block_ms,
                }
            }),
            (1u64..5_000).prop_map(|per_move_ms| TimeControl::Simple { per_move_ms }),
        ]
    }

    /// One step of a game: think for a while, then move with a lag credit, or pause.
    #[derive(Debug, Clone, Copy)]
    enum Step {
        Move { think: u64, credit: u64 },
        Pause { think: u64, paused_for: u64 },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (0u64..12_000, 0u64..1_500).prop_map(|(think, credit)| Step::Move { think, credit }),
            1 => (0u64..12_000, 0u64..100_000)
                .prop_map(|(think, paused_for)| Step::Pause { think, paused_for }),
        ]
    }

    proptest! {
        #[test]
        fn deadline_is_exactly_where_the_flag_falls(
            tc in time_control(),
            steps in proptest::collection::vec(step(), 1..40),
        ) {
            prop_assert_eq!(tc.validate(&super::super::ClockLimits::default()), Ok(()));
            let mut g = GameClock::new(tc);
            let mut now = 1_000;
            g.start(B, now).unwrap();
            for step in steps {
                let side = g.running().unwrap();
                let d = g.deadline().unwrap();
                prop_assert!(d > now);
                prop_assert_eq!(g.check_flag(d - 1), None);
                prop_assert_eq!(g.check_flag(d), Some(side));
                // The view's remaining time counts down to the deadline exactly.
                let shown = *g.view(d - 1).player(side);
                prop_assert_eq!(shown.remaining_ms(&tc), Some(1));
                match step {
                    Step::Move { think, credit } => {
                        now += think;
                        let before = *g.player(side);
                        let result = g.on_move(side, now, credit);
                        if now >= d {
                            prop_assert_eq!(result, Err(Flagged { color: side }));
                            prop_assert_eq!(g.check_flag(now), Some(side));
                            prop_assert_eq!(g.player(side).remaining_ms(&tc), Some(0));
                            return Ok(());
                        }
                        let charge = result.unwrap();
                        prop_assert_eq!(charge.elapsed_ms, think);
                        prop_assert!(charge.credit_ms <= credit.min(think));
                        prop_assert_eq!(charge.charged_ms, think - charge.credit_ms);
                        let mut expected = before;
                        expected.charge(&tc, charge.charged_ms).unwrap();
                        prop_assert_eq!(*g.player(side), expected);
                        prop_assert_eq!(g.running(), Some(side.opponent()));
                    }
                    Step::Pause { think, paused_for } => {
                        now += think;
                        if now >= d {
                            prop_assert_eq!(g.pause(now), Err(Flagged { color: side }));
                            return Ok(());
                        }
                        g.pause(now).unwrap();
                        let left = g.player(side).remaining_ms(&tc).unwrap();
                        prop_assert_eq!(left, d - now, "a pause neither gives nor takes time");
                        now += paused_for;
                        g.resume(now);
                        prop_assert_eq!(g.deadline(), Some(d + paused_for));
                    }
                }
            }
        }
    }
}
