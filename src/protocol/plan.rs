//! A plan of conditional moves on the wire (client-protocol/correspondence.md#plans);
//! `correspondence::plan` checks and answers it.

use serde::{Deserialize, Serialize};

use crate::rules::Vertex;

/// One answer: if the opponent plays `when`, the planner plays `play`, and `then` is
/// the plan for the opponent's next move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Branch {
    #[serde(rename = "if")]
    pub when: Vertex,
    pub play: Vertex,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub then: Vec<Branch>,
}

/// A player's own stored plan, as their snapshot carries it: the branches answering the
/// opponent's move `move_number`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StoredPlan {
    pub move_number: u32,
    pub replies: Vec<Branch>,
}
