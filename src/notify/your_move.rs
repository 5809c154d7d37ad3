//! Which games send "your move" to a player who has no connection to them: those slow
//! enough that the player may well be away, judged by the time a move may take once main
//! time is spent. Live games never do, so a blitz game does not spam its players.

use crate::clock::{Millis, TimeControl};

/// The time a player may take over one move once main time is spent (the whole game's,
/// for sudden death); None when untimed, which is as slow as a game gets.
pub fn move_time_ms(tc: &TimeControl) -> Option<Millis> {
    Some(match *tc {
        TimeControl::None => return None,
        TimeControl::Absolute { main_ms } => main_ms,
        TimeControl::Fischer { increment_ms, .. } => increment_ms,
        TimeControl::Byoyomi { period_ms, .. } => period_ms,
        TimeControl::Canadian {
            moves, block_ms, ..
        } => block_ms / Millis::from(moves.max(1)),
        TimeControl::Simple { per_move_ms } => per_move_ms,
    })
}

/// Whether a game under `tc` tells an absent player it is their move.
pub fn tells_absent_player(tc: &TimeControl, min_ms: Millis) -> bool {
    move_time_ms(tc).is_none_or(|ms| ms >= min_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Millis = 3_600_000;

    #[test]
    fn only_slow_games_tell_an_absent_player() {
        let slow = [
            TimeControl::None,
            TimeControl::Simple {
                per_move_ms: 3 * 24 * HOUR,
            },
            TimeControl::Fischer {
                main_ms: 10 * 24 * HOUR,
                increment_ms: 24 * HOUR,
                max_ms: None,
            },
            TimeControl::Byoyomi {
                main_ms: 0,
                periods: 1,
                period_ms: HOUR,
            },
            TimeControl::Canadian {
                main_ms: 0,
                moves: 10,
                block_ms: 10 * HOUR,
            },
        ];
        let live = [
            TimeControl::Byoyomi {
                main_ms: 20 * 60_000,
                periods: 5,
                period_ms: 30_000,
            },
            TimeControl::Fischer {
                main_ms: 5 * 60_000,
                increment_ms: 3_000,
                max_ms: None,
            },
            TimeControl::Absolute {
                main_ms: 30 * 60_000,
            },
            TimeControl::Canadian {
                main_ms: 0,
                moves: 25,
                block_ms: 10 * 60_000,
            },
        ];
        for tc in slow {
            assert!(tells_absent_player(&tc, HOUR), "{tc:?}");
        }
        for tc in live {
            assert!(!tells_absent_player(&tc, HOUR), "{tc:?}");
        }
    }
}
