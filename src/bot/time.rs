//! The game's time control in the words GTP engines understand: `time_settings`,
//! `kgs-time_settings` and `time_left`, all in whole seconds. Pure functions.
//!
//! GTP's own `time_settings main byo_yomi_time byo_yomi_stones` knows only Canadian
//! overtime, so the systems it cannot say are mapped to the nearest Canadian form: a
//! Japanese byo-yomi period is "one stone per period", a Fischer increment is "one stone
//! per increment". `kgs-time_settings` says byo-yomi exactly and is preferred when the
//! engine lists it.

use std::time::Duration;

use crate::clock::{Millis, PlayerClock, TimeControl};
use crate::rules::Color;

/// Whole seconds, rounded down: an engine told too little time is safe, too much is not.
fn secs(ms: Millis) -> u64 {
    ms / 1000
}

/// The `time_settings` command for `tc` (GTP 2 §6.3.6).
pub fn time_settings(tc: &TimeControl) -> String {
    let (main, byo, stones) = match *tc {
        // Byo-yomi time with zero stones means "no time limit".
        TimeControl::None => (0, 1, 0),
        TimeControl::Absolute { main_ms } => (secs(main_ms), 0, 0),
        TimeControl::Fischer {
            main_ms,
            increment_ms,
            ..
        } => (
            secs(main_ms),
            secs(increment_ms),
            u32::from(increment_ms > 0),
        ),
        TimeControl::Byoyomi {
            main_ms, period_ms, ..
        } => (secs(main_ms), secs(period_ms), 1),
        TimeControl::Canadian {
            main_ms,
            moves,
            block_ms,
        } => (secs(main_ms), secs(block_ms), moves),
        TimeControl::Simple { per_move_ms } => (0, secs(per_move_ms), 1),
    };
    format!("time_settings {main} {byo} {stones}")
}

/// The `kgs-time_settings` command for `tc` (the KGS extension: `none`, `absolute`,
/// `byoyomi main period periods`, `canadian main block stones`).
pub fn kgs_time_settings(tc: &TimeControl) -> String {
    let args = match *tc {
        TimeControl::None => "none".to_string(),
        TimeControl::Absolute { main_ms } => format!("absolute {}", secs(main_ms)),
        TimeControl::Fischer {
            main_ms,
            increment_ms,
            ..
        } if increment_ms > 0 => format!("canadian {} {} 1", secs(main_ms), secs(increment_ms)),
        TimeControl::Fischer { main_ms, .. } => format!("absolute {}", secs(main_ms)),
        TimeControl::Byoyomi {
            main_ms,
            periods,
            period_ms,
        } => format!("byoyomi {} {} {periods}", secs(main_ms), secs(period_ms)),
        TimeControl::Canadian {
            main_ms,
            moves,
            block_ms,
        } => format!("canadian {} {} {moves}", secs(main_ms), secs(block_ms)),
        TimeControl::Simple { per_move_ms } => format!("byoyomi 0 {} 1", secs(per_move_ms)),
    };
    format!("kgs-time_settings {args}")
}

/// The `time_left` command for `color` with `clock` under `tc`, or `None` for untimed
/// games. `kgs` says whether the engine was set up with `kgs-time_settings` (then a
/// byo-yomi side in overtime reports periods left, as KGS does; otherwise stones left
/// in the Canadian reading of [`time_settings`]).
pub fn time_left(tc: &TimeControl, color: Color, clock: &PlayerClock, kgs: bool) -> Option<String> {
    let (time, stones) = match *tc {
        TimeControl::None => return None,
        TimeControl::Absolute { .. } | TimeControl::Fischer { .. } => (clock.main_ms, 0),
        TimeControl::Byoyomi { .. } if clock.main_ms > 0 => (clock.main_ms, 0),
        TimeControl::Byoyomi { .. } if kgs => (clock.period_ms, clock.periods_left),
        TimeControl::Byoyomi { .. } => (clock.period_ms, 1),
        TimeControl::Canadian { .. } if clock.main_ms > 0 => (clock.main_ms, 0),
        TimeControl::Canadian { .. } => (clock.period_ms, clock.moves_left),
        TimeControl::Simple { .. } => (clock.period_ms, 1),
    };
    let color = match color {
        Color::Black => "b",
        Color::White => "w",
    };
    Some(format!("time_left {color} {} {stones}", secs(time)))
}

/// How long to wait for the engine to choose a move: everything left on `clock` plus a
/// margin (past that the game is lost on time anyway), or `untimed` for untimed games.
pub fn move_deadline(tc: &TimeControl, clock: Option<&PlayerClock>, untimed: Duration) -> Duration {
    const MARGIN: Duration = Duration::from_secs(10);
    match clock.and_then(|c| c.remaining_ms(tc)) {
        Some(ms) => Duration::from_millis(ms) + MARGIN,
        None => untimed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(
        main_ms: Millis,
        periods_left: u32,
        period_ms: Millis,
        moves_left: u32,
    ) -> PlayerClock {
        PlayerClock {
            main_ms,
            periods_left,
            period_ms,
            moves_left,
        }
    }

    #[test]
    fn every_time_system_has_a_time_settings_command() {
        let cases = [
            (
                TimeControl::None,
                "time_settings 0 1 0",
                "kgs-time_settings none",
            ),
            (
                TimeControl::Absolute { main_ms: 300_000 },
                "time_settings 300 0 0",
                "kgs-time_settings absolute 300",
            ),
            (
                TimeControl::Byoyomi {
                    main_ms: 600_000,
                    periods: 5,
                    period_ms: 30_000,
                },
                "time_settings 600 30 1",
                "kgs-time_settings byoyomi 600 30 5",
            ),
            (
                TimeControl::Canadian {
                    main_ms: 0,
                    moves: 25,
                    block_ms: 600_000,
                },
                "time_settings 0 600 25",
                "kgs-time_settings canadian 0 600 25",
            ),
            (
                TimeControl::Fischer {
                    main_ms: 120_000,
                    increment_ms: 5_500,
                    max_ms: None,
                },
                "time_settings 120 5 1",
                "kgs-time_settings canadian 120 5 1",
            ),
            (
                TimeControl::Fischer {
                    main_ms: 120_000,
                    increment_ms: 0,
                    max_ms: None,
                },
                "time_settings 120 0 0",
                "kgs-time_settings absolute 120",
            ),
            (
                TimeControl::Simple {
                    per_move_ms: 10_000,
                },
                "time_settings 0 10 1",
                "kgs-time_settings byoyomi 0 10 1",
            ),
        ];
        for (tc, gtp, kgs) in cases {
            assert_eq!(time_settings(&tc), gtp, "{tc:?}");
            assert_eq!(kgs_time_settings(&tc), kgs, "{tc:?}");
        }
    }

    #[test]
    fn time_left_reports_main_time_then_overtime() {
        let byo = TimeControl::Byoyomi {
            main_ms: 600_000,
            periods: 5,
            period_ms: 30_000,
        };
        let in_main = clock(12_999, 5, 30_000, 0);
        assert_eq!(
            time_left(&byo, Color::Black, &in_main, false).unwrap(),
            "time_left b 12 0"
        );
        let in_byoyomi = clock(0, 3, 30_000, 0);
        assert_eq!(
            time_left(&byo, Color::White, &in_byoyomi, false).unwrap(),
            "time_left w 30 1"
        );
        assert_eq!(
            time_left(&byo, Color::White, &in_byoyomi, true).unwrap(),
            "time_left w 30 3"
        );
        let canadian = TimeControl::Canadian {
            main_ms: 0,
            moves: 25,
            block_ms: 600_000,
        };
        assert_eq!(
            time_left(&canadian, Color::Black, &clock(0, 0, 415_000, 17), false).unwrap(),
            "time_left b 415 17"
        );
        let fischer = TimeControl::Fischer {
            main_ms: 60_000,
            increment_ms: 2_000,
            max_ms: None,
        };
        assert_eq!(
            time_left(&fischer, Color::Black, &clock(71_500, 0, 0, 0), true).unwrap(),
            "time_left b 71 0"
        );
        assert_eq!(
            time_left(
                &TimeControl::None,
                Color::Black,
                &PlayerClock::default(),
                false
            ),
            None
        );
    }

    #[test]
    fn a_move_may_take_what_is_left_on_the_clock() {
        let untimed = Duration::from_secs(300);
        assert_eq!(move_deadline(&TimeControl::None, None, untimed), untimed);
        let byo = TimeControl::Byoyomi {
            main_ms: 0,
            periods: 3,
            period_ms: 10_000,
        };
        // The current period (4 s left) and two more periods, then the margin.
        let c = clock(0, 3, 4_000, 0);
        assert_eq!(
            move_deadline(&byo, Some(&c), untimed),
            Duration::from_secs(24 + 10)
        );
    }
}
