//! Vacation days (client-protocol/correspondence.md#vacation), as pure arithmetic: how
//! an account's balance grows with time up to its cap, and what a vacation costs.
//!
//! The rules: an account starts with `vacation_start_days` and gains
//! `vacation_days_per_30` every 30 days, continuously, never above `vacation_cap_days`.
//! A day at a deadline (a player out of time in a game that allows vacation) costs one
//! whole day; a vacation taken on request costs the hours it lasted, each hour begun
//! counted whole, and ends by itself when the balance is spent.

use crate::config::CorrespondenceConfig;
use crate::store::VacationRow;

pub const HOUR_MS: i64 = 3_600_000;
pub const DAY_MS: i64 = 24 * HOUR_MS;
/// The accrual period.
const PERIOD_MS: i64 = 30 * DAY_MS;

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

    /// When a vacation taken at `row.away_since_ms` runs out, its balance spent.
    pub fn ends_at(row: &VacationRow) -> Option<i64> {
        row.away_since_ms
            .map(|since| since.saturating_add(row.balance_ms.max(0)))
    }

    /// What a vacation from `since` to `now` costs: each hour begun counted whole, but
    /// never more than the balance.
    pub fn cost(row: &VacationRow, now_ms: i64) -> i64 {
        let Some(since) = row.away_since_ms else {
            return 0;
        };
        let lasted = now_ms.saturating_sub(since).max(0);
        let hours = (lasted + HOUR_MS - 1) / HOUR_MS;
        (hours.saturating_mul(HOUR_MS)).min(row.balance_ms.max(0))
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
            balance_ms: 2 * DAY_MS,
            as_of_ms: 0,
            away_since_ms: Some(0),
            warned: false,
        };
        assert_eq!(Policy::cost(&row, 1), HOUR_MS);
        assert_eq!(Policy::cost(&row, 3 * HOUR_MS), 3 * HOUR_MS);
        assert_eq!(Policy::cost(&row, 5 * DAY_MS), 2 * DAY_MS);
        assert_eq!(Policy::ends_at(&row), Some(2 * DAY_MS));
    }
}
