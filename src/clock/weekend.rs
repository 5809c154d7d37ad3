//! A correspondence player's weekend (client-protocol/correspondence.md#weekends): the
//! days of the week, midnight to midnight in their own time zone, on which their clock
//! stands still in a game that allows it. Pure calendar arithmetic on Unix ms.
//!
//! It lives with the clock, not with `correspondence`, because [`GameClock`] charges
//! by it, and the clock stands below everything else. The time zones come from the
//! tz database bundled into the binary (`jiff`'s `tzdb-bundle-always`), so a deadline
//! does not depend on the machine's `/usr/share/zoneinfo`.
//!
//! [`GameClock`]: super::GameClock

use jiff::Timestamp;
use jiff::civil::{Date, Weekday};
use jiff::tz::TimeZone;
use thiserror::Error;

use super::Millis;

/// The most weekend days a player may name: five days of seven always run.
pub const MAX_DAYS: usize = 2;

/// Why a weekend was not made.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WeekendError {
    #[error("{0:?} is not an IANA time zone (such as \"Europe/Berlin\")")]
    Zone(String),
    #[error("a weekend has at most {MAX_DAYS} days")]
    TooManyDays,
}

/// A time zone and the days of the week that are weekend there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weekend {
    zone: TimeZone,
    /// The IANA name the zone was made from, as the player wrote it.
    name: String,
    /// Bit `d` set: the day `d` days after Monday is weekend.
    days: u8,
}

impl Weekend {
    /// The weekend of `days` in the IANA zone `zone`: refused unless the zone is in the
    /// bundled database and there are at most [`MAX_DAYS`] days (repeats count once).
    pub fn new(zone: &str, days: &[Weekday]) -> Result<Weekend, WeekendError> {
        let tz = jiff::tz::db()
            .get(zone)
            .ok()
            .filter(|tz| tz.iana_name().is_some())
            .ok_or_else(|| WeekendError::Zone(zone.to_string()))?;
        let days = days
            .iter()
            .fold(0u8, |set, d| set | 1 << d.to_monday_zero_offset());
        if days.count_ones() as usize > MAX_DAYS {
            return Err(WeekendError::TooManyDays);
        }
        Ok(Weekend {
            zone: tz,
            name: zone.to_string(),
            days,
        })
    }

    /// The IANA name of the zone.
    pub fn zone(&self) -> &str {
        &self.name
    }

    /// The weekend days, Monday first.
    pub fn days(&self) -> Vec<Weekday> {
        (0..7)
            .filter(|d| self.days & 1 << d != 0)
            .filter_map(|d| Weekday::from_monday_zero_offset(d).ok())
            .collect()
    }

    /// The time between `from` and `to` (Unix ms) that is not weekend: what a clock
    /// running over it is charged. Zero when `to <= from`.
    pub fn chargeable(&self, from: Millis, to: Millis) -> Millis {
        let mut charged = 0;
        self.walk(from, |start, end, rest| {
            if start >= to {
                return true;
            }
            if !rest {
                charged += end.min(to) - start;
            }
            false
        });
        charged
    }

    /// When a clock started at `from` with `amount` of time has charged it all: the
    /// first instant `t` with `chargeable(from, t) == amount`. Never inside a weekend
    /// (for `amount > 0`): the clock runs out on a working day, or at the very start
    /// of a weekend when its last working day used it all.
    pub fn deadline(&self, from: Millis, amount: Millis) -> Millis {
        if amount == 0 {
            return from;
        }
        let (mut left, mut due) = (amount, Millis::MAX);
        self.walk(from, |start, end, rest| {
            if rest {
                return false;
            }
            if left <= end - start {
                due = start + left;
                return true;
            }
            left -= end - start;
            false
        });
        due
    }

    /// The first stretch of weekend at or after `from`: `(start, end)` with
    /// `from <= start < end`, consecutive weekend days as one (`start == from` when
    /// `from` falls in one). None without weekend days.
    pub fn next_rest(&self, from: Millis) -> Option<(Millis, Millis)> {
        if self.days == 0 {
            return None;
        }
        let mut found: Option<(Millis, Millis)> = None;
        self.walk(from, |start, end, rest| match (rest, &mut found) {
            (true, Some(stretch)) => {
                stretch.1 = end;
                false
            }
            (true, None) => {
                found = Some((start, end));
                false
            }
            (false, found) => found.is_some(),
        });
        found.filter(|(start, end)| start < end)
    }

    /// Calls `f(start, end, rest)` for each stretch of a local day from `from` on (the
    /// first starts at `from`), in order, until it answers true. Past the last instant
    /// the calendar knows, one stretch runs to the end of time, working.
    fn walk(&self, from: Millis, mut f: impl FnMut(Millis, Millis, bool) -> bool) {
        let mut start = from;
        let mut day = instant(from).map(|t| t.to_zoned_datetime(self.zone.clone()).date());
        loop {
            let Some(today) = day else {
                f(start, Millis::MAX, false);
                return;
            };
            let tomorrow = today.tomorrow().ok();
            let end = tomorrow
                .and_then(|d| self.midnight(d))
                .unwrap_or(Millis::MAX)
                .max(start);
            let rest = self.days & 1 << today.weekday().to_monday_zero_offset() != 0;
            if f(start, end, rest) || end == Millis::MAX {
                return;
            }
            (start, day) = (end, tomorrow);
        }
    }

    /// The first instant of local day `date` (Unix ms), if the calendar holds it.
    fn midnight(&self, date: Date) -> Option<Millis> {
        let zoned = date.to_zoned_datetime(self.zone.clone()).ok()?;
        Millis::try_from(zoned.timestamp().as_millisecond()).ok()
    }
}

/// `ms` as an instant, if the calendar holds it.
fn instant(ms: Millis) -> Option<Timestamp> {
    Timestamp::from_millisecond(i64::try_from(ms).ok()?).ok()
}

/// The weekday of `ms` in `zone`, for a caller that picks weekend days relative to a
/// moment (tests, and the web page's preview). None for an unknown zone.
pub fn weekday_at(zone: &str, ms: Millis) -> Option<Weekday> {
    let tz = jiff::tz::db().get(zone).ok()?;
    Some(instant(ms)?.to_zoned_datetime(tz).weekday())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const HOUR: Millis = 3_600_000;
    const SAT_SUN: [Weekday; 2] = [Weekday::Saturday, Weekday::Sunday];

    /// Unix ms of a civil time in `zone`.
    fn at(zone: &str, s: &str) -> Millis {
        let dt: jiff::civil::DateTime = s.parse().unwrap();
        dt.in_tz(zone).unwrap().timestamp().as_millisecond() as Millis
    }

    #[test]
    fn only_iana_zones_and_at_most_two_days() {
        assert!(Weekend::new("Europe/Berlin", &SAT_SUN).is_ok());
        assert!(Weekend::new("UTC", &[]).is_ok());
        for bad in ["Mars/Olympus", "", "+02:00", "../../etc/passwd"] {
            assert_eq!(
                Weekend::new(bad, &SAT_SUN),
                Err(WeekendError::Zone(bad.into()))
            );
        }
        let three = [Weekday::Friday, Weekday::Saturday, Weekday::Sunday];
        assert_eq!(Weekend::new("UTC", &three), Err(WeekendError::TooManyDays));
        // A day named twice counts once.
        let w = Weekend::new("Asia/Tokyo", &[Weekday::Friday, Weekday::Friday]).unwrap();
        assert_eq!(w.days(), vec![Weekday::Friday]);
        assert_eq!(w.zone(), "Asia/Tokyo");
    }

    #[test]
    fn a_weekend_in_the_players_zone_is_not_charged() {
        let z = "America/New_York";
        let w = Weekend::new(z, &SAT_SUN).unwrap();
        // Friday noon to Monday noon, New York time: one day charged.
        let (fri, mon) = (at(z, "2026-06-05T12:00"), at(z, "2026-06-08T12:00"));
        assert_eq!(w.chargeable(fri, mon), 24 * HOUR);
        // Thirteen hours from Friday noon: twelve by midnight, one on Monday.
        assert_eq!(w.deadline(fri, 13 * HOUR), at(z, "2026-06-08T01:00"));
        // Started in the weekend, the clock runs from Monday's midnight.
        let sat = at(z, "2026-06-06T09:30");
        assert_eq!(w.deadline(sat, HOUR), at(z, "2026-06-08T01:00"));
        assert_eq!(w.chargeable(sat, at(z, "2026-06-07T23:59")), 0);
        // Twelve hours exactly from Friday noon: due at the weekend's first instant.
        assert_eq!(w.deadline(fri, 12 * HOUR), at(z, "2026-06-06T00:00"));
    }

    #[test]
    fn another_zone_and_other_days_move_the_weekend() {
        let w = Weekend::new("Asia/Dubai", &[Weekday::Friday, Weekday::Saturday]).unwrap();
        // Thursday 20:00 UTC is midnight into Friday in Dubai (UTC+4).
        let thu = at("UTC", "2026-06-04T20:00");
        assert_eq!(w.chargeable(at("UTC", "2026-06-04T12:00"), thu), 8 * HOUR);
        assert_eq!(w.deadline(thu, HOUR), at("UTC", "2026-06-06T21:00"));
        // No weekend days: everything is charged.
        let none = Weekend::new("Asia/Dubai", &[]).unwrap();
        assert_eq!(none.deadline(thu, 100 * HOUR), thu + 100 * HOUR);
    }

    #[test]
    fn a_weekend_is_as_long_as_its_days_across_a_dst_change() {
        let z = "Europe/Berlin";
        let w = Weekend::new(z, &SAT_SUN).unwrap();
        // 29 March 2026: clocks go forward, Sunday has 23 hours.
        let (fri, mon) = (at(z, "2026-03-27T00:00"), at(z, "2026-03-30T00:00"));
        assert_eq!(mon - fri, 71 * HOUR);
        assert_eq!(w.chargeable(fri, mon), 24 * HOUR);
        assert_eq!(w.deadline(fri, 25 * HOUR), at(z, "2026-03-30T01:00"));
        // 25 October 2026: clocks go back, Sunday has 25 hours.
        let (fri, mon) = (at(z, "2026-10-23T00:00"), at(z, "2026-10-26T00:00"));
        assert_eq!(mon - fri, 73 * HOUR);
        assert_eq!(w.chargeable(fri, mon), 24 * HOUR);
        assert_eq!(w.deadline(fri, 25 * HOUR), at(z, "2026-10-26T01:00"));
        // A Sunday weekend day in a zone whose midnight is skipped by DST still
        // begins and ends: Santiago went forward at midnight on 7 September 2025.
        let s = "America/Santiago";
        let sun = Weekend::new(s, &[Weekday::Sunday]).unwrap();
        let (sat, mon) = (at(s, "2025-09-06T12:00"), at(s, "2025-09-08T12:00"));
        assert_eq!(sun.chargeable(sat, mon), 24 * HOUR);
    }

    #[test]
    fn the_next_rest_joins_consecutive_days() {
        let z = "America/New_York";
        let w = Weekend::new(z, &SAT_SUN).unwrap();
        let (fri, sat, mon) = (
            at(z, "2026-06-05T12:00"),
            at(z, "2026-06-06T09:30"),
            at(z, "2026-06-08T00:00"),
        );
        assert_eq!(w.next_rest(fri), Some((at(z, "2026-06-06T00:00"), mon)));
        assert_eq!(w.next_rest(sat), Some((sat, mon)));
        // Sunday and Monday are consecutive across the week's end.
        let sun_mon = Weekend::new(z, &[Weekday::Monday, Weekday::Sunday]).unwrap();
        assert_eq!(
            sun_mon.next_rest(fri),
            Some((at(z, "2026-06-07T00:00"), at(z, "2026-06-09T00:00")))
        );
        // Two days apart: only the first.
        let apart = Weekend::new(z, &[Weekday::Tuesday, Weekday::Friday]).unwrap();
        assert_eq!(
            apart.next_rest(mon),
            Some((at(z, "2026-06-09T00:00"), at(z, "2026-06-10T00:00")))
        );
        assert_eq!(Weekend::new(z, &[]).unwrap().next_rest(fri), None);
    }

    #[test]
    fn the_end_of_time_is_working_time() {
        let w = Weekend::new("UTC", &SAT_SUN).unwrap();
        assert_eq!(w.deadline(Millis::MAX - 5, 3), Millis::MAX - 2);
        assert_eq!(w.deadline(Millis::MAX - 5, 10), Millis::MAX);
        assert_eq!(w.chargeable(Millis::MAX - 5, Millis::MAX), 5);
    }

    fn weekends() -> impl Strategy<Value = Weekend> {
        let zones = prop::sample::select(vec![
            "UTC",
            "Europe/Berlin",
            "America/New_York",
            "Australia/Lord_Howe",
            "Asia/Kolkata",
            "Pacific/Chatham",
            "America/Santiago",
        ]);
        (zones, prop::collection::vec(0i8..7, 0..=MAX_DAYS)).prop_map(|(z, days)| {
            let days: Vec<Weekday> = days
                .into_iter()
                .filter_map(|d| Weekday::from_monday_zero_offset(d).ok())
                .collect();
            Weekend::new(z, &days).unwrap()
        })
    }

    /// 2020 to 2030, in ms.
    fn instants() -> impl Strategy<Value = Millis> {
        1_577_836_800_000u64..1_893_456_000_000
    }

    proptest! {
        #[test]
        fn the_deadline_is_where_the_charge_reaches_the_amount(
            w in weekends(), from in instants(), amount in 1u64..(60 * 24 * HOUR),
        ) {
            let due = w.deadline(from, amount);
            prop_assert_eq!(w.chargeable(from, due), amount);
            prop_assert!(w.chargeable(from, due - 1) < amount);
            // The weekend never holds more than its share of a week's days.
            prop_assert!(due - from <= amount + amount * 2 / 5 + 3 * 24 * HOUR);
        }

        #[test]
        fn charges_add_up_and_never_exceed_the_wall_time(
            w in weekends(), a in instants(), d1 in 0u64..(30 * 24 * HOUR), d2 in 0u64..(30 * 24 * HOUR),
        ) {
            let (b, c) = (a + d1, a + d1 + d2);
            prop_assert_eq!(w.chargeable(a, b) + w.chargeable(b, c), w.chargeable(a, c));
            prop_assert!(w.chargeable(a, c) <= c - a);
            prop_assert!(w.chargeable(a, c) + 8 * 24 * HOUR >= (c - a) * 5 / 7);
        }
    }
}
