//! Who is on the other end of a connection, as tokens name them.

use serde::{Deserialize, Serialize};

/// What an account may do.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    #[default]
    Player,
    Bot,
    Referee,
    Admin,
    /// A passwordless identity that lasts as long as its refresh cookie: plays unrated
    /// games only.
    Guest,
}

impl Role {
    /// Whether games of this user may be rated: any account but a guest's.
    pub fn may_play_rated(self) -> bool {
        self != Role::Guest
    }
}

/// A user as other clients see them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UserInfo {
    pub id: String,
    pub name: String,
    pub role: Role,
}
