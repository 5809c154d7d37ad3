//! A player's calendar on the wire (client-protocol/correspondence.md#weekends): their
//! time zone and weekend days, which stand their clock still in correspondence games
//! with `weekends`. `clock::Weekend` does the arithmetic.

use serde::{Deserialize, Serialize};

use crate::clock::{Weekend, WeekendError};

/// A day of the week.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Day {
    Monday,
    Tuesday,
    Wednesday,
    Thursday,
    Friday,
    Saturday,
    Sunday,
}

impl Day {
    const ALL: [Day; 7] = [
        Day::Monday,
        Day::Tuesday,
        Day::Wednesday,
        Day::Thursday,
        Day::Friday,
        Day::Saturday,
        Day::Sunday,
    ];

    fn weekday(self) -> jiff::civil::Weekday {
        use jiff::civil::Weekday as W;
        [
            W::Monday,
            W::Tuesday,
            W::Wednesday,
            W::Thursday,
            W::Friday,
            W::Saturday,
            W::Sunday,
        ][self as usize]
    }
}

/// A player's time zone and weekend days.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Calendar {
    /// An IANA time zone name, such as `Europe/Berlin`.
    pub time_zone: String,
    /// The weekend days, at most two (none: no weekend).
    pub weekend: Vec<Day>,
}

impl Default for Calendar {
    /// UTC, Saturday and Sunday.
    fn default() -> Self {
        Calendar {
            time_zone: "UTC".into(),
            weekend: vec![Day::Saturday, Day::Sunday],
        }
    }
}

impl Calendar {
    /// The weekend this calendar names, checked: an IANA zone, at most two days.
    pub fn weekend(&self) -> Result<Weekend, WeekendError> {
        let days: Vec<_> = self.weekend.iter().map(|d| d.weekday()).collect();
        Weekend::new(&self.time_zone, &days)
    }

    /// The weekend days as bits, Monday the lowest (how the store keeps them).
    pub fn weekend_bits(&self) -> u8 {
        self.weekend.iter().fold(0, |bits, d| bits | 1 << *d as u8)
    }

    /// The calendar of `time_zone` and the days of `bits`, in the week's order.
    pub fn from_bits(time_zone: String, bits: u8) -> Calendar {
        let weekend = Day::ALL
            .into_iter()
            .filter(|d| bits & 1 << *d as u8 != 0)
            .collect();
        Calendar { time_zone, weekend }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_keep_the_days_in_the_weeks_order() {
        let c = Calendar {
            time_zone: "Asia/Dubai".into(),
            weekend: vec![Day::Saturday, Day::Friday],
        };
        let back = Calendar::from_bits(c.time_zone.clone(), c.weekend_bits());
        assert_eq!(back.weekend, vec![Day::Friday, Day::Saturday]);
        assert_eq!(back.weekend().unwrap().zone(), "Asia/Dubai");
        assert!(Calendar::default().weekend().is_ok());
    }
}
