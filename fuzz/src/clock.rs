//! The clock arithmetic on any settings and any sequence of moves, pauses, stops and
//! resumptions at increasing instants, with lag credit from a real quota: nothing
//! overflows or panics (fuzz builds check overflow), and the rules of
//! client-protocol/clocks.md hold at every step: a side flags exactly when `now`
//! reaches its deadline, a flag is final and zeroes the side's clock, a side that has
//! not flagged has time left, a move is charged its elapsed time less a credit that
//! never exceeds it, and no clock ever shows more than its settings give.

use tengen::clock::{
    ClockLimits, Flagged, GameClock, LagQuota, LagSettings, Millis, PlayerClock, TimeControl,
};
use tengen::rules::Color;

use crate::bytes::Bytes;

/// A duration: mostly seconds to minutes, sometimes anything up to `u64::MAX`.
fn millis(bytes: &mut Bytes) -> Millis {
    match bytes.u8() % 8 {
        0 => 0,
        1 => u64::from(bytes.u8()),
        2..=5 => u64::from(bytes.u32() % 3_600_000),
        6 => u64::from(bytes.u32()),
        _ => bytes.u64(),
    }
}

fn count(bytes: &mut Bytes) -> u32 {
    match bytes.u8() % 4 {
        0 => 0,
        1 | 2 => u32::from(bytes.u8()),
        _ => bytes.u32(),
    }
}

fn time_control(bytes: &mut Bytes) -> TimeControl {
    match bytes.u8() % 6 {
        0 => TimeControl::None,
        1 => TimeControl::Absolute {
            main_ms: millis(bytes),
        },
        2 => TimeControl::Fischer {
            main_ms: millis(bytes),
            increment_ms: millis(bytes),
            max_ms: (bytes.u8() & 1 == 1).then(|| millis(bytes)),
        },
        3 => TimeControl::Byoyomi {
            main_ms: millis(bytes),
            periods: count(bytes),
            period_ms: millis(bytes),
        },
        4 => TimeControl::Canadian {
            main_ms: millis(bytes),
            moves: count(bytes),
            block_ms: millis(bytes),
        },
        _ => TimeControl::Simple {
            per_move_ms: millis(bytes),
        },
    }
}

/// The most a side's clock may show under `tc`: what it starts with, or for Fischer
/// the cap (or anything, uncapped).
fn within_settings(tc: &TimeControl, c: &PlayerClock) -> bool {
    match *tc {
        TimeControl::None => *c == PlayerClock::default(),
        TimeControl::Absolute { main_ms } => c.main_ms <= main_ms && c.period_ms == 0,
        TimeControl::Fischer { max_ms, .. } => max_ms.is_none_or(|max| c.main_ms <= max),
        TimeControl::Byoyomi {
            main_ms,
            periods,
            period_ms,
        } => c.main_ms <= main_ms && c.periods_left <= periods && c.period_ms <= period_ms,
        TimeControl::Canadian {
            main_ms,
            moves,
            block_ms,
        } => c.main_ms <= main_ms && c.moves_left <= moves && c.period_ms <= block_ms,
        TimeControl::Simple { per_move_ms } => c.main_ms == 0 && c.period_ms <= per_move_ms,
    }
}

/// The last instant a game may see. The room counts milliseconds from its start, so the
/// timeline never nears `u64::MAX`, where sums of instants and durations saturate (and a
/// deadline of `u64::MAX` would mean both "now" and "never").
const LATEST: Millis = 1 << 62;

pub fn check(data: &[u8]) {
    let mut bytes = Bytes::new(data);
    let tc = time_control(&mut bytes);
    // Settings the server accepts get every invariant; any other settings must still
    // not panic or overflow.
    let valid = tc.validate(&ClockLimits::default()).is_ok();
    let lag = LagSettings {
        max_credit_per_move_ms: millis(&mut bytes),
        quota_initial_ms: millis(&mut bytes),
        quota_max_ms: millis(&mut bytes),
        regen_per_move_ms: millis(&mut bytes),
    };
    let mut quotas = [LagQuota::new(lag), LagQuota::new(lag)];
    let mut clock = GameClock::new(tc);
    let mut now: Millis = u64::from(bytes.u32());
    let mut steps = 0;
    while !bytes.is_empty() && steps < 1_000 {
        steps += 1;
        now = now.saturating_add(millis(&mut bytes)).min(LATEST);
        let op = bytes.u8();
        let color = if op & 0x80 == 0 {
            Color::Black
        } else {
            Color::White
        };
        let before = clock.clone();
        let deadline = clock.deadline();
        let running = clock.running();
        let flagged = clock.flagged();
        match op % 8 {
            0 => {
                let result = clock.start(color, now);
                settled(&before, now, valid, result.err());
                if result.is_ok() {
                    assert_eq!(clock.running(), Some(color));
                    assert!(!clock.is_paused());
                }
            }
            1..=4 => {
                let moving = running == Some(color);
                let elapsed = if moving { clock.elapsed(now) } else { None };
                let quota = &mut quotas[color.index()];
                let quota_before = quota.quota_ms();
                let credit = quota.credit(millis(&mut bytes), elapsed.unwrap_or(0));
                assert!(credit <= quota_before && credit <= lag.max_credit_per_move_ms);
                assert!(quota.quota_ms() <= lag.quota_max_ms);
                let result = clock.on_move(color, now, credit);
                match result {
                    Ok(charge) => {
                        assert_eq!(flagged, None);
                        assert_eq!(charge.elapsed_ms, elapsed.unwrap_or(0));
                        assert_eq!(charge.credit_ms, credit.min(charge.elapsed_ms));
                        assert_eq!(charge.charged_ms, charge.elapsed_ms - charge.credit_ms);
                        if moving {
                            assert!(deadline.is_none_or(|d| now < d), "a late move was taken");
                        }
                        assert_eq!(clock.running(), Some(color.opponent()));
                        assert_eq!(clock.elapsed(now), Some(0));
                    }
                    Err(Flagged { color: lost }) => {
                        assert_eq!(clock.flagged(), Some(lost));
                        match flagged {
                            Some(earlier) => assert_eq!(lost, earlier, "a flag is final"),
                            None if moving => {
                                assert_eq!(lost, color);
                                assert!(deadline.is_some_and(|d| now >= d), "an early flag");
                            }
                            None => {
                                // Only the side whose clock ran can have run out
                                // (under settings that give the mover some time).
                                if valid && running.is_some() {
                                    assert!(deadline.is_some_and(|d| now >= d));
                                    assert_eq!(Some(lost), running);
                                }
                            }
                        }
                    }
                }
            }
            5 => {
                let result = clock.pause(now);
                settled(&before, now, valid, result.err());
                if result.is_ok() {
                    assert_eq!(clock.running(), None);
                    assert_eq!(clock.is_paused(), running.is_some() || before.is_paused());
                }
            }
            6 => {
                clock.resume(now);
                if flagged.is_none() && before.is_paused() {
                    assert!(clock.running().is_some());
                    assert!(!clock.is_paused());
                }
            }
            _ => {
                let result = clock.stop(now);
                settled(&before, now, valid, result.err());
                assert_eq!(clock.running(), None);
                assert!(!clock.is_paused());
            }
        }
        invariants(&clock, now, valid);
    }
}

/// After a start, pause or stop: it flagged iff the running side's deadline had come
/// (or a flag was already recorded), and a side that stopped in time lost exactly the
/// time it ran.
fn settled(before: &GameClock, now: Millis, valid: bool, flag: Option<Flagged>) {
    let due = before.check_flag(now);
    assert_eq!(flag.map(|f| f.color), due, "flagged at {now}");
    // Exact only where no sum saturates: settings the server accepts.
    if let (None, Some(color), true) = (due, before.running(), valid) {
        let tc = before.time_control();
        let left = before.player(color).remaining_ms(tc);
        let elapsed = before.elapsed(now).unwrap_or(0);
        let view = before.view(now);
        assert_eq!(
            view.player(color).remaining_ms(tc),
            left.map(|l| l - elapsed),
            "the view charges exactly the time run"
        );
    }
}

fn invariants(clock: &GameClock, now: Millis, valid: bool) {
    let tc = clock.time_control();
    if let Some(lost) = clock.flagged() {
        assert_eq!(clock.running(), None);
        assert_eq!(clock.deadline(), None);
        assert_eq!(clock.check_flag(Millis::MAX), Some(lost));
        if tc.is_timed() {
            assert_eq!(clock.player(lost).remaining_ms(tc), Some(0));
        }
    }
    match (clock.deadline(), clock.running()) {
        (Some(deadline), Some(color)) => {
            assert!(tc.is_timed());
            assert_eq!(clock.check_flag(deadline), Some(color));
            if deadline > 0 {
                assert_eq!(clock.check_flag(deadline - 1), None);
            }
        }
        (Some(_), None) => panic!("a deadline with no clock running"),
        (None, running) => {
            assert!(!tc.is_timed() || running.is_none() || clock.flagged().is_some());
        }
    }
    let view = clock.view(now);
    for color in [Color::Black, Color::White] {
        let side = clock.player(color);
        if valid {
            assert!(within_settings(tc, side), "{color}: {side:?} under {tc:?}");
            assert!(within_settings(tc, view.player(color)));
            if tc.is_timed() && clock.flagged() != Some(color) {
                assert!(
                    side.remaining_ms(tc).is_some_and(|left| left > 0),
                    "{color} has not flagged but has no time: {side:?} under {tc:?}"
                );
            }
        }
        let shown = view.player(color).remaining_ms(tc);
        assert!(
            shown <= side.remaining_ms(tc),
            "the view shows more than is left"
        );
    }
}
