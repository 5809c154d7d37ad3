//! Lag compensation: a per-player quota of time given back for network delay, so a
//! player on a slow line is not charged for their packets' travel, while a player who
//! lies about their lag gains at most a small, bounded amount (lichess's scheme).
//!
//! The lag itself is measured elsewhere (the connection layer) and passed in as data.

use serde::{Deserialize, Serialize};

use super::Millis;

/// Limits on lag compensation, configurable per server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LagSettings {
    /// Most credit for one move. Default 1000 ms.
    pub max_credit_per_move_ms: Millis,
    /// Quota at the start of a game. Default 3000 ms.
    pub quota_initial_ms: Millis,
    /// Quota never grows above this. Default 5000 ms.
    pub quota_max_ms: Millis,
    /// Quota regained after every move. Default 250 ms.
    pub regen_per_move_ms: Millis,
}

impl Default for LagSettings {
    fn default() -> Self {
        Self {
            max_credit_per_move_ms: 1000,
            quota_initial_ms: 3000,
            quota_max_ms: 5000,
            regen_per_move_ms: 250,
        }
    }
}

/// One player's lag quota for one game.
///
/// For each move, with `quota` the quota before the move:
///
/// ```text
/// credit = min(estimated_lag_ms, max_credit_per_move_ms, quota, elapsed_ms)
/// quota  = min(quota - credit + regen_per_move_ms, quota_max_ms)
/// ```
///
/// The quota starts at `min(quota_initial_ms, quota_max_ms)`. The credit is subtracted
/// from the move's elapsed time before any time-system accounting (so in byo-yomi it can
/// keep a move inside its period); it never exceeds the elapsed time, and it cannot save
/// a move that arrives at or after the deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LagQuota {
    settings: LagSettings,
    quota_ms: Millis,
}

impl LagQuota {
    /// A full initial quota.
    pub fn new(settings: LagSettings) -> Self {
        Self {
            settings,
            quota_ms: settings.quota_initial_ms.min(settings.quota_max_ms),
        }
    }

    /// The quota left now, before the next move.
    pub fn quota_ms(&self) -> Millis {
        self.quota_ms
    }

    /// The credit for one move, by the formula on [`LagQuota`]; updates the quota.
    /// Call once per move, even when no lag was measured (0), so the quota regenerates.
    pub fn credit(&mut self, estimated_lag_ms: Millis, elapsed_ms: Millis) -> Millis {
        let credit = estimated_lag_ms
            .min(self.settings.max_credit_per_move_ms)
            .min(self.quota_ms)
            .min(elapsed_ms);
        self.quota_ms = (self.quota_ms - credit)
            .saturating_add(self.settings.regen_per_move_ms)
            .min(self.settings.quota_max_ms);
        credit
    }
}

impl Default for LagQuota {
    fn default() -> Self {
        Self::new(LagSettings::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credit_is_bounded_by_the_per_move_cap() {
        let mut q = LagQuota::default();
        assert_eq!(q.credit(5_000, 10_000), 1_000);
        assert_eq!(q.quota_ms(), 3_000 - 1_000 + 250);
    }

    #[test]
    fn credit_is_the_lag_when_small() {
        let mut q = LagQuota::default();
        assert_eq!(q.credit(120, 10_000), 120);
        assert_eq!(q.quota_ms(), 3_000 - 120 + 250);
    }

    #[test]
    fn credit_never_exceeds_the_elapsed_time() {
        let mut q = LagQuota::default();
        assert_eq!(q.credit(800, 300), 300);
        assert_eq!(q.credit(800, 0), 0);
    }

    #[test]
    fn credit_is_bounded_by_the_quota() {
        let mut q = LagQuota::default();
        // 3000 → 2250 → 1500 → 750 → 0 (+250 after each move).
        assert_eq!(q.credit(1_000, 10_000), 1_000);
        assert_eq!(q.credit(1_000, 10_000), 1_000);
        assert_eq!(q.credit(1_000, 10_000), 1_000);
        assert_eq!(q.quota_ms(), 750);
        assert_eq!(q.credit(1_000, 10_000), 750);
        assert_eq!(q.quota_ms(), 250);
        assert_eq!(q.credit(1_000, 10_000), 250);
        assert_eq!(q.quota_ms(), 250);
    }

    #[test]
    fn quota_regenerates_up_to_its_maximum() {
        let mut q = LagQuota::default();
        for _ in 0..8 {
            assert_eq!(q.credit(0, 10_000), 0);
        }
        assert_eq!(q.quota_ms(), 5_000, "3000 + 8 × 250 = 5000");
        q.credit(0, 10_000);
        assert_eq!(q.quota_ms(), 5_000, "never above the maximum");
    }

    #[test]
    fn initial_quota_is_clamped_to_the_maximum() {
        let q = LagQuota::new(LagSettings {
            quota_initial_ms: 9_000,
            ..LagSettings::default()
        });
        assert_eq!(q.quota_ms(), 5_000);
    }

    #[test]
    fn settings_json_defaults() {
        let s: LagSettings = serde_json::from_str(r#"{"regen_per_move_ms":100}"#).unwrap();
        assert_eq!(
            s,
            LagSettings {
                regen_per_move_ms: 100,
                ..LagSettings::default()
            }
        );
        assert!(serde_json::from_str::<LagSettings>(r#"{"bogus":1}"#).is_err());
    }
}
