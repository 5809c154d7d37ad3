//! Exact counts in half points: komi, scores and margins never pass through a float
//! except when a number is shown or read. Its own module because the counting, the
//! results and the rulesets all name it, and none of them should depend on another
//! for it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A number of points in halves: 15 is 7.5 points, which is 3¾ stones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct HalfPoints(pub i32);

impl HalfPoints {
    /// The most points either way a count or komi can be read as: far above any count
    /// (25x25 is 625 points), so reading never overflows. Game settings bound komi more
    /// tightly.
    pub const MAX_POINTS: i32 = 1000;

    /// Points from a float that must be a whole multiple of ½ (komi as people write it),
    /// within ±[`HalfPoints::MAX_POINTS`].
    pub fn from_points(points: f64) -> Option<HalfPoints> {
        let halves = points * 2.0;
        (halves.is_finite()
            && halves.fract() == 0.0
            && halves.abs() <= f64::from(2 * Self::MAX_POINTS))
        .then_some(HalfPoints(halves as i32))
    }

    /// Reads `7.5`, `-3`, `0.5`.
    pub fn parse_points(s: &str) -> Option<HalfPoints> {
        s.trim()
            .parse::<f64>()
            .ok()
            .and_then(HalfPoints::from_points)
    }

    pub fn points(self) -> f64 {
        f64::from(self.0) / 2.0
    }

    /// The same amount in stones (one stone is two points).
    pub fn stones(self) -> f64 {
        f64::from(self.0) / 4.0
    }
}

impl fmt::Display for HalfPoints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let a = self.0.unsigned_abs();
        if a.is_multiple_of(2) {
            write!(f, "{sign}{}", a / 2)
        } else {
            write!(f, "{sign}{}.5", a / 2)
        }
    }
}

impl Serialize for HalfPoints {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.points())
    }
}

impl<'de> Deserialize<'de> for HalfPoints {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let p = f64::deserialize(d)?;
        HalfPoints::from_points(p).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "points must be a multiple of 0.5 from -{max} to {max}, not {p}",
                max = HalfPoints::MAX_POINTS
            ))
        })
    }
}
