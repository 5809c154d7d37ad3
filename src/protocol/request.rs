//! The client's request id, echoed in every reply: its own module so that the server's
//! messages and the client's can both name it without naming each other.

use serde::{Deserialize, Serialize};

/// The client's request id, echoed in the reply: any string or number it likes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum RequestId {
    Number(u64),
    Text(String),
}
