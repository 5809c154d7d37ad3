//! `[correspondence]`: the vacation every account accrues for its correspondence games
//! (client-protocol/correspondence.md#vacation), and how long before a deadline the
//! player to move is warned.

use serde::{Deserialize, Serialize};

/// Vacation and warnings in correspondence games.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CorrespondenceConfig {
    /// Vacation days an account gains every 30 days.
    pub vacation_days_per_30: u32,
    /// The most vacation days an account holds; it gains no more while it has these.
    pub vacation_cap_days: u32,
    /// The vacation days a new account starts with.
    pub vacation_start_days: u32,
    /// A player away is sent `vacation_ending` this many hours before their days run out.
    pub vacation_warn_hours: u32,
    /// The player to move in a correspondence game is sent `deadline` this many hours
    /// before their time runs out (0: never).
    pub deadline_warn_hours: u32,
}

impl Default for CorrespondenceConfig {
    fn default() -> Self {
        CorrespondenceConfig {
            vacation_days_per_30: 5,
            vacation_cap_days: 30,
            vacation_start_days: 10,
            vacation_warn_hours: 24,
            deadline_warn_hours: 24,
        }
    }
}

/// The longest warning, 30 days: as long as a period of a correspondence clock.
const MAX_WARN_HOURS: u32 = 720;

impl CorrespondenceConfig {
    /// The first setting out of range: its key and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.vacation_days_per_30 > 30 {
            return Err((
                "correspondence.vacation_days_per_30",
                "must be from 0 to 30 (days gained in 30 days)".into(),
            ));
        }
        if !(1..=365).contains(&self.vacation_cap_days) {
            return Err((
                "correspondence.vacation_cap_days",
                "must be from 1 to 365".into(),
            ));
        }
        if self.vacation_start_days > self.vacation_cap_days {
            return Err((
                "correspondence.vacation_start_days",
                format!(
                    "is {}, above correspondence.vacation_cap_days ({})",
                    self.vacation_start_days, self.vacation_cap_days
                ),
            ));
        }
        let warnings = [
            (
                "correspondence.vacation_warn_hours",
                self.vacation_warn_hours,
            ),
            (
                "correspondence.deadline_warn_hours",
                self.deadline_warn_hours,
            ),
        ];
        for (key, hours) in warnings {
            if hours > MAX_WARN_HOURS {
                return Err((key, format!("must be from 0 to {MAX_WARN_HOURS} (30 days)")));
            }
        }
        Ok(())
    }
}
