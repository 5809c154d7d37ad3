//! Vacation days (client-protocol/correspondence.md#vacation), as pure arithmetic: how
//! an account's balance grows with time up to its cap, what a vacation costs, and what
//! a deadline comes to. Never does I/O: the store keeps each change these functions
//! decide in one transaction (`VacationStore::change_vacation`).
//!
//! The rules: an account starts with `vacation_start_days` and gains
//! `vacation_days_per_30` every 30 days, continuously, never above `vacation_cap_days`.
//! A day at a deadline is the account's, not a game's: a player out of time in a game
//! that allows vacation spends one whole day, from that deadline, and every deadline of
//! theirs that comes before that day is over is covered by it for nothing. A vacation
//! taken on request costs the hours it lasted outside the last day so spent, each hour
//! begun counted whole, and ends by itself when the balance is spent.

use crate::config::CorrespondenceConfig;
use crate::store::VacationRow;

pub const HOUR_MS: i64 = 3_600_000;
pub const DAY_MS: i64 = 24 * HOUR_MS;
/// The accrual period.
const PERIOD_MS: i64 = 30 * DAY_MS;

/// What a player's deadline in a game that allows vacation comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeadlineDay {
    /// A day spent before (at a deadline of this game or another) runs until `until_ms`:
    /// the clock stands still until then, and nothing more is spent.
    Covered { until_ms: i64 },
    /// A whole day is spent now: the clock stands still until `until_ms`, a day after
    /// the deadline.
    Spent { until_ms: i64 },
    /// Less than a day is left: the flag falls.
    Flag,
}

/// The server's vacation rules, in ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    per_period_ms: i64,
    cap_ms: i64,
    start_ms: i64,
    /// How long before a vacation runs out its player is warned.
    pub warn_ms: i64,
}

impl Policy {
    pub fn new(c: &CorrespondenceConfig) -> Policy {
        Policy {
            per_period_ms: i64::from(c.vacation_days_per_30) * DAY_MS,
            cap_ms: i64::from(c.vacation_cap_days) * DAY_MS,
            start_ms: i64::from(c.vacation_start_days) * DAY_MS,
            warn_ms: i64::from(c.vacation_warn_hours) * HOUR_MS,
        }
    }

    /// The account's vacation brought up to `now_ms`: its start balance the first time,
    /// then what it gained since last time, up to the cap.
    pub fn settle(&self, row: Option<VacationRow>, now_ms: i64) -> VacationRow {
        let Some(row) = row else {
            return VacationRow {
                balance_ms: self.start_ms,
                as_of_ms: now_ms,
                away_since_ms: None,
                warned: false,
                paid_until_ms: None,
            };
        };
        let elapsed = i128::from(now_ms.saturating_sub(row.as_of_ms).max(0));
        let gained = elapsed * i128::from(self.per_period_ms) / i128::from(PERIOD_MS);
        let balance = i128::from(row.balance_ms.max(0)) + gained;
        VacationRow {
            balance_ms: i64::try_from(balance).map_or(self.cap_ms, |b| b.min(self.cap_ms)),
            as_of_ms: now_ms.max(row.as_of_ms),
            ..row
        }
    }

    /// `start_vacation` at `now_ms`: away from now if at home with an hour of balance;
    /// else as it was (brought up to date).
    pub fn go(&self, row: Option<VacationRow>, now_ms: i64) -> VacationRow {
        let row = self.settle(row, now_ms);
        if row.away_since_ms.is_some() || row.balance_ms < HOUR_MS {
            return row;
        }
        VacationRow {
            away_since_ms: Some(row.as_of_ms),
            warned: false,
            ..row
        }
    }

    /// `end_vacation` at `now_ms`: the vacation's cost taken off, and at home.
    pub fn back(&self, row: Option<VacationRow>, now_ms: i64) -> VacationRow {
        let row = self.settle(row, now_ms);
        if row.away_since_ms.is_none() {
            return row;
        }
        VacationRow {
            balance_ms: row.balance_ms - Policy::cost(&row, row.as_of_ms),
            away_since_ms: None,
            warned: false,
            ..row
        }
    }

    /// A player's deadline at `deadline_ms`, in a game that allows vacation, decided at
    /// `now_ms` (a game woken late decides a deadline long past the same way): covered
    /// while the last day spent runs; else a day spent from the deadline if what is
    /// left (less what a vacation under way has cost so far) is a whole day; else the
    /// flag. With the account's vacation after it.
    pub fn at_deadline(
        &self,
        row: Option<VacationRow>,
        deadline_ms: i64,
        now_ms: i64,
    ) -> (DeadlineDay, VacationRow) {
        let row = self.settle(row, now_ms);
        if let Some(until_ms) = row.paid_until_ms.filter(|until| *until > deadline_ms) {
            return (DeadlineDay::Covered { until_ms }, row);
        }
        if row.balance_ms.saturating_sub(Policy::cost(&row, now_ms)) < DAY_MS {
            return (DeadlineDay::Flag, row);
        }
        let until_ms = deadline_ms.saturating_add(DAY_MS);
        let spent = VacationRow {
            balance_ms: row.balance_ms - DAY_MS,
            paid_until_ms: Some(until_ms),
            ..row
        };
        (DeadlineDay::Spent { until_ms }, spent)
    }

    /// When a vacation taken at `row.away_since_ms` runs out, its balance spent: later by
    /// the part of the last day spent at a deadline that falls in it, if that day begins
    /// before the balance would be spent.
    pub fn ends_at(row: &VacationRow) -> Option<i64> {
        let since = row.away_since_ms?;
        let unpaid = since.saturating_add(row.balance_ms.max(0));
        Some(match Policy::paid_within(row, since, unpaid) {
            0 => unpaid,
            _ => unpaid.saturating_add(Policy::paid_within(row, since, i64::MAX)),
        })
    }

    /// What a vacation from `since` to `now` costs: each hour begun counted whole, but
    /// never more than the balance. The part of the last day spent at a deadline that
    /// falls in it is paid already.
    pub fn cost(row: &VacationRow, now_ms: i64) -> i64 {
        let Some(since) = row.away_since_ms else {
            return 0;
        };
        let lasted = now_ms.saturating_sub(since).max(0) - Policy::paid_within(row, since, now_ms);
        let hours = (lasted + HOUR_MS - 1) / HOUR_MS;
        (hours.saturating_mul(HOUR_MS)).min(row.balance_ms.max(0))
    }

    /// How much of `[from, to)` the last day spent at a deadline covers.
    fn paid_within(row: &VacationRow, from: i64, to: i64) -> i64 {
        let Some(until) = row.paid_until_ms else {
            return 0;
        };
        let start = from.max(until.saturating_sub(DAY_MS));
        to.min(until).saturating_sub(start).max(0)
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy::new(&CorrespondenceConfig::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home(balance_ms: i64) -> VacationRow {
        VacationRow {
            balance_ms,
            as_of_ms: 0,
            away_since_ms: None,
            warned: false,
            paid_until_ms: None,
        }
    }

    #[test]
    fn an_account_starts_with_its_days_and_gains_up_to_the_cap() {
        let p = Policy::default();
        let first = p.settle(None, 1_000);
        assert_eq!(first.balance_ms, 10 * DAY_MS);
        // 5 days every 30: 30 days later, 15.
        let later = p.settle(Some(first), 1_000 + 30 * DAY_MS);
        assert_eq!(later.balance_ms, 15 * DAY_MS);
        // A year later, the cap of 30.
        let year = p.settle(Some(later), 1_000 + 365 * DAY_MS);
        assert_eq!(year.balance_ms, 30 * DAY_MS);
    }

    #[test]
    fn a_vacation_costs_its_hours_begun_and_ends_when_spent() {
        let row = VacationRow {
            away_since_ms: Some(0),
            ..home(2 * DAY_MS)
        };
        assert_eq!(Policy::cost(&row, 1), HOUR_MS);
        assert_eq!(Policy::cost(&row, 3 * HOUR_MS), 3 * HOUR_MS);
        assert_eq!(Policy::cost(&row, 5 * DAY_MS), 2 * DAY_MS);
        assert_eq!(Policy::ends_at(&row), Some(2 * DAY_MS));
    }

    #[test]
    fn deadlines_within_a_day_spent_cost_one_day() {
        // No accrual, so the balance only moves by what is spent.
        let p = Policy {
            per_period_ms: 0,
            ..Policy::default()
        };
        let t = 100 * DAY_MS;
        // Three games whose deadlines fall within one day, each decided as it comes.
        let (first, row) = p.at_deadline(Some(home(3 * DAY_MS)), t, t);
        assert_eq!(
            first,
            DeadlineDay::Spent {
                until_ms: t + DAY_MS
            }
        );
        assert_eq!(row.balance_ms, 2 * DAY_MS);
        let (second, row) = p.at_deadline(Some(row), t, t + 5);
        assert_eq!(
            second,
            DeadlineDay::Covered {
                until_ms: t + DAY_MS
            }
        );
        let (third, row) = p.at_deadline(Some(row), t + 20 * HOUR_MS, t + 20 * HOUR_MS);
        assert_eq!(
            third,
            DeadlineDay::Covered {
                until_ms: t + DAY_MS
            }
        );
        assert_eq!(row.balance_ms, 2 * DAY_MS);
        // The day is over and the games are due again: one more day, for all of them.
        let (next, row) = p.at_deadline(Some(row), t + DAY_MS, t + DAY_MS);
        assert_eq!(
            next,
            DeadlineDay::Spent {
                until_ms: t + 2 * DAY_MS
            }
        );
        let (same, row) = p.at_deadline(Some(row), t + DAY_MS, t + DAY_MS);
        assert_eq!(
            same,
            DeadlineDay::Covered {
                until_ms: t + 2 * DAY_MS
            }
        );
        assert_eq!(row.balance_ms, DAY_MS);
        let (last, row) = p.at_deadline(Some(row), t + 2 * DAY_MS, t + 2 * DAY_MS);
        assert_eq!(
            last,
            DeadlineDay::Spent {
                until_ms: t + 3 * DAY_MS
            }
        );
        // None left: the next deadline after the day flags.
        assert_eq!(row.balance_ms, 0);
        let (flag, after) = p.at_deadline(Some(row), t + 3 * DAY_MS, t + 3 * DAY_MS);
        assert_eq!(flag, DeadlineDay::Flag);
        assert_eq!(
            (after.balance_ms, after.paid_until_ms),
            (0, row.paid_until_ms)
        );
    }

    #[test]
    fn a_deadline_needs_a_whole_day_left_after_a_vacation_under_way() {
        let p = Policy {
            per_period_ms: 0,
            ..Policy::default()
        };
        // Away since 0 with 30 hours: by hour 7, 7 are spent and 23 left.
        let row = VacationRow {
            away_since_ms: Some(0),
            ..home(30 * HOUR_MS)
        };
        assert_eq!(
            p.at_deadline(Some(row), 7 * HOUR_MS, 7 * HOUR_MS).0,
            DeadlineDay::Flag
        );
        let (day, row) = p.at_deadline(Some(row), 5 * HOUR_MS, 5 * HOUR_MS);
        assert_eq!(
            day,
            DeadlineDay::Spent {
                until_ms: 29 * HOUR_MS
            }
        );
        // The day is not charged twice: the vacation still ends at hour 30.
        assert_eq!(Policy::ends_at(&row), Some(30 * HOUR_MS));
        assert_eq!(Policy::cost(&row, 6 * HOUR_MS), 5 * HOUR_MS);
    }

    #[test]
    fn a_vacation_is_not_charged_for_the_day_spent_before_it() {
        let p = Policy {
            per_period_ms: 0,
            ..Policy::default()
        };
        // A day spent at a deadline at hour 0, then away from hour 4 for two days.
        let (_, row) = p.at_deadline(Some(home(5 * DAY_MS)), 0, 0);
        let away = p.go(Some(row), 4 * HOUR_MS);
        assert_eq!(away.away_since_ms, Some(4 * HOUR_MS));
        // The 20 hours left of the day are free: the 4 days left last 4 days and 20 hours.
        assert_eq!(Policy::ends_at(&away), Some(5 * DAY_MS));
        let back = p.back(Some(away), 4 * HOUR_MS + 2 * DAY_MS);
        assert_eq!(back.balance_ms, 4 * DAY_MS - (2 * DAY_MS - 20 * HOUR_MS));
        assert_eq!(back.away_since_ms, None);
        // Under an hour left: going away changes nothing.
        let poor = p.go(Some(home(HOUR_MS - 1)), 0);
        assert_eq!(poor.away_since_ms, None);
    }
}
