//! The time control a game is played under, and the check that refuses impossible or
//! absurd settings before a game is created with them.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use thiserror::Error;

use super::Millis;

/// How much time each side has, in one of the time systems players know.
///
/// On the wire: `{"system":"byoyomi","main_ms":600000,"periods":5,"period_ms":30000}`.
/// Every system spends main time first; what follows main time differs per system.
/// Read by hand (see [`TimeControl::from_fields`]) so that a refusal names its field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "system", rename_all = "snake_case")]
#[schemars(deny_unknown_fields)]
pub enum TimeControl {
    /// Untimed: nobody ever loses on time (casual and correspondence-like games).
    None,
    /// Sudden death: `main_ms` for the whole game.
    Absolute {
        /// Time for the whole game.
        main_ms: Millis,
    },
    /// Fischer increment: `increment_ms` is added after each move, and main time is
    /// capped at `max_ms` when that is given, so time cannot be banked without limit.
    Fischer {
        /// Time at the start of the game.
        main_ms: Millis,
        /// Added to main time after every move made in time.
        increment_ms: Millis,
        /// Upper bound on main time after an increment.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_ms: Option<Millis>,
    },
    /// Japanese byo-yomi (docs/RULES.md §8.1): main time, then `periods` periods of `period_ms`.
    /// A move within the current period uses none; each full period used consumes one;
    /// using up the last period loses on time. `main_ms` may be 0 (straight byo-yomi).
    Byoyomi {
        /// Main time before the periods start; may be 0.
        main_ms: Millis,
        /// Number of periods.
        periods: u32,
        /// Length of one period.
        period_ms: Millis,
    },
    /// Canadian overtime: after main time, `moves` moves within `block_ms`; when they are
    /// made, a fresh block of `moves` moves in `block_ms` starts. `main_ms` may be 0.
    Canadian {
        /// Main time before the blocks start; may be 0.
        main_ms: Millis,
        /// Moves to make in each block.
        moves: u32,
        /// Time for each block.
        block_ms: Millis,
    },
    /// A fixed time for every move, unused time is not carried over.
    Simple {
        /// Time for each move.
        per_move_ms: Millis,
    },
}

/// The systems and their fields, as on the wire.
const SYSTEMS: &[(&str, &[&str])] = &[
    ("none", &[]),
    ("absolute", &["main_ms"]),
    ("fischer", &["main_ms", "increment_ms", "max_ms"]),
    ("byoyomi", &["main_ms", "periods", "period_ms"]),
    ("canadian", &["main_ms", "moves", "block_ms"]),
    ("simple", &["per_move_ms"]),
];

impl<'de> Deserialize<'de> for TimeControl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = Map::<String, Value>::deserialize(d)?;
        TimeControl::from_fields(fields).map_err(serde::de::Error::custom)
    }
}

/// Names as a list for a sentence: "`a`, `b` or `c`" (with `last` = "or").
pub(crate) fn listed(names: &[&str], last: &str) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        Some((end, rest)) if !rest.is_empty() => format!("{} {last} {end}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

impl TimeControl {
    /// Every system's name, as on the wire.
    pub fn system_names() -> impl Iterator<Item = &'static str> {
        SYSTEMS.iter().map(|(name, _)| *name)
    }

    /// Reads a time control from its JSON fields. Every system refuses the fields it does
    /// not have (`none` included), and each refusal starts with the field it is about
    /// (`main_ms must be ...`), so that a caller can put its own path in front.
    pub fn from_fields(mut fields: Map<String, Value>) -> Result<TimeControl, String> {
        let systems: Vec<&str> = TimeControl::system_names().collect();
        // "expected one of" with the names in backticks, as serde says it (the protocol
        // docs test reads the names from this sentence).
        let refuse = |shown: String| {
            format!(
                "system is {shown}, expected one of {}",
                listed(&systems, "or")
            )
        };
        let system = match fields.remove("system") {
            Some(Value::String(s)) => s,
            Some(other) => return Err(refuse(other.to_string())),
            None => return Err(refuse("missing".into())),
        };
        let Some(&(system, known)) = SYSTEMS.iter().find(|(name, _)| *name == system) else {
            return Err(refuse(format!("{system:?}")));
        };
        if let Some(extra) = fields.keys().find(|k| !known.contains(&k.as_str())) {
            let has = if known.is_empty() {
                "has no other fields".to_string()
            } else {
                format!("has {}", listed(known, "and"))
            };
            return Err(format!(
                "{extra} is not a field of the `{system}` system, which {has}"
            ));
        }
        let number = |name: &str| -> Result<Option<u64>, String> {
            match fields.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| format!("{name} must be a whole number from 0 up, not {v}")),
            }
        };
        let required = |name: &str| -> Result<u64, String> {
            number(name)?.ok_or_else(|| format!("{name} is missing"))
        };
        let count = |name: &str| -> Result<u32, String> {
            let n = required(name)?;
            u32::try_from(n).map_err(|_| format!("{name} must be at most {}, not {n}", u32::MAX))
        };
        Ok(match system {
            "absolute" => TimeControl::Absolute {
                main_ms: required("main_ms")?,
            },
            "fischer" => TimeControl::Fischer {
                main_ms: required("main_ms")?,
                increment_ms: required("increment_ms")?,
                max_ms: number("max_ms")?,
            },
            "byoyomi" => TimeControl::Byoyomi {
                main_ms: required("main_ms")?,
                periods: count("periods")?,
                period_ms: required("period_ms")?,
            },
            "canadian" => TimeControl::Canadian {
                main_ms: required("main_ms")?,
                moves: count("moves")?,
                block_ms: required("block_ms")?,
            },
            "simple" => TimeControl::Simple {
                per_move_ms: required("per_move_ms")?,
            },
            // `none`, the only system left once `SYSTEMS` knew the name.
            _ => TimeControl::None,
        })
    }

    /// Whether a side can lose on time; the room arms no timer for untimed games.
    pub fn is_timed(&self) -> bool {
        !matches!(self, Self::None)
    }

    /// The main time, before any overtime: `None` when untimed, 0 for `simple` (which
    /// has only its time per move).
    pub fn main_ms(&self) -> Option<Millis> {
        match *self {
            Self::None => None,
            Self::Absolute { main_ms }
            | Self::Fischer { main_ms, .. }
            | Self::Byoyomi { main_ms, .. }
            | Self::Canadian { main_ms, .. } => Some(main_ms),
            Self::Simple { .. } => Some(0),
        }
    }

    /// Refuses settings that cannot be played (a zero where time is needed, a cap below
    /// the starting time) or are absurd for this server (above `limits`), naming the
    /// field so the client can fix its request.
    pub fn validate(&self, limits: &ClockLimits) -> Result<(), ClockError> {
        match *self {
            Self::None => Ok(()),
            Self::Absolute { main_ms } => {
                positive("main_ms", main_ms)?;
                at_most("main_ms", main_ms, limits.max_main_ms)
            }
            Self::Fischer {
                main_ms,
                increment_ms,
                max_ms,
            } => {
                // The increment is only added after a move, so a clock starting at zero
                // would flag before the first move whatever the increment is.
                if main_ms == 0 {
                    return Err(ClockError::InvalidField {
                        field: "main_ms",
                        reason: "must be positive, because the increment is only added after a move",
                    });
                }
                at_most("main_ms", main_ms, limits.max_main_ms)?;
                at_most("increment_ms", increment_ms, limits.max_period_ms)?;
                if let Some(max_ms) = max_ms {
                    if max_ms < main_ms {
                        return Err(ClockError::InvalidField {
                            field: "max_ms",
                            reason: "must not be below main_ms",
                        });
                    }
                    at_most("max_ms", max_ms, limits.max_main_ms)?;
                }
                Ok(())
            }
            Self::Byoyomi {
                main_ms,
                periods,
                period_ms,
            } => {
                at_most("main_ms", main_ms, limits.max_main_ms)?;
                positive("periods", u64::from(periods))?;
                at_most("periods", u64::from(periods), u64::from(limits.max_periods))?;
                positive("period_ms", period_ms)?;
                at_most("period_ms", period_ms, limits.max_period_ms)
            }
            Self::Canadian {
                main_ms,
                moves,
                block_ms,
            } => {
                at_most("main_ms", main_ms, limits.max_main_ms)?;
                positive("moves", u64::from(moves))?;
                at_most("moves", u64::from(moves), u64::from(limits.max_moves))?;
                positive("block_ms", block_ms)?;
                at_most("block_ms", block_ms, limits.max_period_ms)
            }
            Self::Simple { per_move_ms } => {
                positive("per_move_ms", per_move_ms)?;
                at_most("per_move_ms", per_move_ms, limits.max_period_ms)
            }
        }
    }
}

fn positive(field: &'static str, value: u64) -> Result<(), ClockError> {
    if value == 0 {
        return Err(ClockError::InvalidField {
            field,
            reason: "must be positive",
        });
    }
    Ok(())
}

fn at_most(field: &'static str, value: u64, limit: u64) -> Result<(), ClockError> {
    if value > limit {
        return Err(ClockError::AboveLimit {
            field,
            value,
            limit,
        });
    }
    Ok(())
}

/// A day in milliseconds, the unit correspondence clocks are set in.
pub const DAY_MS: Millis = 24 * 60 * 60 * 1000;

/// The largest settings this server accepts, so one request cannot create a game that
/// holds a room open for weeks. Configurable; the defaults suit public play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClockLimits {
    /// Largest main time (also bounds Fischer's `max_ms`). Default 24 hours.
    pub max_main_ms: Millis,
    /// Largest byo-yomi period, Canadian block, simple per-move time or Fischer
    /// increment. Default 1 hour.
    pub max_period_ms: Millis,
    /// Most byo-yomi periods. Default 100.
    pub max_periods: u32,
    /// Most moves in a Canadian block. Default 1000.
    pub max_moves: u32,
    /// Largest main time of a correspondence game (in place of `max_main_ms`). Default
    /// 180 days.
    pub max_correspondence_main_ms: Millis,
    /// Largest period, block, per-move time or increment of a correspondence game (in
    /// place of `max_period_ms`). Default 30 days.
    pub max_correspondence_period_ms: Millis,
}

impl ClockLimits {
    /// The limits a correspondence game's clock is checked against: its days in place
    /// of a live game's hours.
    pub fn for_correspondence(&self) -> ClockLimits {
        ClockLimits {
            max_main_ms: self.max_correspondence_main_ms,
            max_period_ms: self.max_correspondence_period_ms,
            ..*self
        }
    }
}

impl Default for ClockLimits {
    fn default() -> Self {
        Self {
            max_main_ms: 24 * 60 * 60 * 1000,
            max_period_ms: 60 * 60 * 1000,
            max_periods: 100,
            max_moves: 1000,
            max_correspondence_main_ms: 180 * DAY_MS,
            max_correspondence_period_ms: 30 * DAY_MS,
        }
    }
}

/// Why a time control was refused; names the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ClockError {
    /// The value cannot be played (zero where time is needed, or inconsistent).
    #[error("The time setting `{field}` {reason}.")]
    InvalidField {
        /// The JSON field name.
        field: &'static str,
        /// What the value must be, as the end of a sentence.
        reason: &'static str,
    },
    /// The value is above this server's limit.
    #[error("The time setting `{field}` is {value}, above this server's limit of {limit}.")]
    AboveLimit {
        /// The JSON field name.
        field: &'static str,
        /// The value requested.
        value: u64,
        /// The largest value accepted.
        limit: u64,
    },
}

impl ClockError {
    /// The JSON field at fault, whatever the reason.
    pub fn field(&self) -> &'static str {
        match self {
            Self::InvalidField { field, .. } | Self::AboveLimit { field, .. } => field,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(tc: TimeControl) -> Result<(), ClockError> {
        tc.validate(&ClockLimits::default())
    }

    fn field_of(tc: TimeControl) -> &'static str {
        match check(tc) {
            Err(e) => e.field(),
            Ok(()) => panic!("{tc:?} should be refused"),
        }
    }

    #[test]
    fn byoyomi_json_form() {
        let json = r#"{"system":"byoyomi","main_ms":600000,"periods":5,"period_ms":30000}"#;
        let tc: TimeControl = serde_json::from_str(json).unwrap();
        assert_eq!(
            tc,
            TimeControl::Byoyomi {
                main_ms: 600_000,
                periods: 5,
                period_ms: 30_000
            }
        );
        assert_eq!(serde_json::to_string(&tc).unwrap(), json);
    }

    #[test]
    fn other_json_forms() {
        let none: TimeControl = serde_json::from_str(r#"{"system":"none"}"#).unwrap();
        assert_eq!(none, TimeControl::None);
        assert!(!none.is_timed());
        let fischer: TimeControl =
            serde_json::from_str(r#"{"system":"fischer","main_ms":1,"increment_ms":2}"#).unwrap();
        assert_eq!(
            fischer,
            TimeControl::Fischer {
                main_ms: 1,
                increment_ms: 2,
                max_ms: None
            }
        );
        assert!(fischer.is_timed());
        assert_eq!(
            serde_json::to_string(&fischer).unwrap(),
            r#"{"system":"fischer","main_ms":1,"increment_ms":2}"#
        );
        let simple: TimeControl =
            serde_json::from_str(r#"{"system":"simple","per_move_ms":5000}"#).unwrap();
        assert_eq!(simple, TimeControl::Simple { per_move_ms: 5000 });
    }

    #[test]
    fn unknown_fields_and_systems_are_refused() {
        assert!(
            serde_json::from_str::<TimeControl>(r#"{"system":"absolute","main_ms":1,"x":2}"#)
                .is_err()
        );
        assert!(serde_json::from_str::<TimeControl>(r#"{"system":"hourglass"}"#).is_err());
        assert!(serde_json::from_str::<TimeControl>(r#"{"system":"absolute"}"#).is_err());
    }

    /// Why `json` is not a time control.
    fn refusal(json: &str) -> String {
        serde_json::from_str::<TimeControl>(json)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn none_has_no_fields() {
        for json in [
            r#"{"system":"none","main_ms":60000}"#,
            r#"{"system":"none","periods":5,"period_ms":30000}"#,
        ] {
            let message = refusal(json);
            assert!(message.contains("the `none` system"), "{json}: {message}");
        }
    }

    #[test]
    fn reading_refusals_start_with_the_field() {
        for (json, field) in [
            (r#"{"system":"absolute","main_ms":-5}"#, "main_ms "),
            (r#"{"system":"absolute","main_ms":"5"}"#, "main_ms "),
            (
                r#"{"system":"byoyomi","main_ms":0,"periods":1.5,"period_ms":1}"#,
                "periods ",
            ),
            (
                r#"{"system":"byoyomi","main_ms":0,"periods":5000000000,"period_ms":1}"#,
                "periods ",
            ),
            (
                r#"{"system":"canadian","main_ms":0,"moves":3}"#,
                "block_ms ",
            ),
            (
                r#"{"system":"simple","per_move_ms":1,"main_ms":1}"#,
                "main_ms ",
            ),
            (r#"{"system":"hourglass"}"#, "system "),
            (r#"{"system":7}"#, "system "),
            (r#"{}"#, "system "),
        ] {
            let message = refusal(json);
            assert!(message.starts_with(field), "{json}: {message}");
        }
        assert_eq!(
            refusal(r#"{"system":"fischer","main_ms":1,"increment_ms":1,"moves":1}"#),
            "moves is not a field of the `fischer` system, which has `main_ms`, `increment_ms` and `max_ms`"
        );
    }

    #[test]
    fn sensible_settings_pass() {
        let ok = [
            TimeControl::None,
            TimeControl::Absolute { main_ms: 300_000 },
            TimeControl::Fischer {
                main_ms: 300_000,
                increment_ms: 0,
                max_ms: None,
            },
            TimeControl::Fischer {
                main_ms: 300_000,
                increment_ms: 5_000,
                max_ms: Some(300_000),
            },
            TimeControl::Byoyomi {
                main_ms: 0,
                periods: 5,
                period_ms: 30_000,
            },
            TimeControl::Canadian {
                main_ms: 0,
                moves: 25,
                block_ms: 600_000,
            },
            TimeControl::Simple {
                per_move_ms: 10_000,
            },
        ];
        for tc in ok {
            assert_eq!(check(tc), Ok(()), "{tc:?}");
        }
    }

    #[test]
    fn zeros_are_refused_naming_the_field() {
        assert_eq!(
            check(TimeControl::Byoyomi {
                main_ms: 0,
                periods: 5,
                period_ms: 0
            }),
            Err(ClockError::InvalidField {
                field: "period_ms",
                reason: "must be positive"
            })
        );
        assert_eq!(field_of(TimeControl::Absolute { main_ms: 0 }), "main_ms");
        assert_eq!(
            field_of(TimeControl::Byoyomi {
                main_ms: 1,
                periods: 0,
                period_ms: 1
            }),
            "periods"
        );
        assert_eq!(
            field_of(TimeControl::Canadian {
                main_ms: 1,
                moves: 0,
                block_ms: 1
            }),
            "moves"
        );
        assert_eq!(
            field_of(TimeControl::Canadian {
                main_ms: 1,
                moves: 1,
                block_ms: 0
            }),
            "block_ms"
        );
        assert_eq!(
            field_of(TimeControl::Simple { per_move_ms: 0 }),
            "per_move_ms"
        );
        assert_eq!(
            field_of(TimeControl::Fischer {
                main_ms: 0,
                increment_ms: 0,
                max_ms: None
            }),
            "main_ms"
        );
        assert_eq!(
            field_of(TimeControl::Fischer {
                main_ms: 0,
                increment_ms: 5_000,
                max_ms: None
            }),
            "main_ms"
        );
    }

    #[test]
    fn fischer_cap_below_main_is_refused() {
        assert_eq!(
            check(TimeControl::Fischer {
                main_ms: 60_000,
                increment_ms: 1_000,
                max_ms: Some(59_999)
            }),
            Err(ClockError::InvalidField {
                field: "max_ms",
                reason: "must not be below main_ms"
            })
        );
    }

    #[test]
    fn absurd_values_are_refused_naming_the_field() {
        let limits = ClockLimits::default();
        let day = limits.max_main_ms;
        let hour = limits.max_period_ms;
        assert_eq!(check(TimeControl::Absolute { main_ms: day }), Ok(()));
        assert_eq!(
            check(TimeControl::Absolute { main_ms: day + 1 }),
            Err(ClockError::AboveLimit {
                field: "main_ms",
                value: day + 1,
                limit: day
            })
        );
        assert_eq!(
            field_of(TimeControl::Byoyomi {
                main_ms: 0,
                periods: 101,
                period_ms: 1
            }),
            "periods"
        );
        assert_eq!(
            field_of(TimeControl::Byoyomi {
                main_ms: 0,
                periods: 1,
                period_ms: hour + 1
            }),
            "period_ms"
        );
        assert_eq!(
            field_of(TimeControl::Canadian {
                main_ms: 0,
                moves: 1001,
                block_ms: 1
            }),
            "moves"
        );
        assert_eq!(
            field_of(TimeControl::Canadian {
                main_ms: 0,
                moves: 1,
                block_ms: hour + 1
            }),
            "block_ms"
        );
        assert_eq!(
            field_of(TimeControl::Simple {
                per_move_ms: hour + 1
            }),
            "per_move_ms"
        );
        assert_eq!(
            field_of(TimeControl::Fischer {
                main_ms: 1,
                increment_ms: hour + 1,
                max_ms: None
            }),
            "increment_ms"
        );
        assert_eq!(
            field_of(TimeControl::Fischer {
                main_ms: 1,
                increment_ms: 1,
                max_ms: Some(day + 1)
            }),
            "max_ms"
        );
    }

    #[test]
    fn error_texts_are_sentences() {
        let e = ClockError::InvalidField {
            field: "period_ms",
            reason: "must be positive",
        };
        assert_eq!(
            e.to_string(),
            "The time setting `period_ms` must be positive."
        );
        let e = ClockError::AboveLimit {
            field: "periods",
            value: 101,
            limit: 100,
        };
        assert_eq!(
            e.to_string(),
            "The time setting `periods` is 101, above this server's limit of 100."
        );
    }

    #[test]
    fn limits_have_the_documented_defaults() {
        let l = ClockLimits::default();
        assert_eq!(l.max_main_ms, 86_400_000);
        assert_eq!(l.max_period_ms, 3_600_000);
        assert_eq!(l.max_periods, 100);
        assert_eq!(l.max_moves, 1000);
    }
}
