//! Speed classes, as an `automatch` request names them (client-protocol/lobby.md): how
//! long a game's clock lets it last, in three bands a player picks from.

use serde::{Deserialize, Serialize};

/// A band of time controls, fastest first (the order is the derive's).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Speed {
    Blitz,
    Live,
    Long,
}
