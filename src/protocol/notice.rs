//! Notices on the wire (client-protocol/notifications.md): what happened while a player
//! looked away, each of a typed kind with what it is about, and how each kind is mailed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::user::UserInfo;
use crate::rules::GameResult;

/// What a notice says happened.
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
pub enum NoticeKind {
    /// The opponent moved in a game you had no connection to.
    YourMove,
    /// A deadline of yours is within the warning time.
    Deadline,
    /// A game of yours ended.
    GameEnded,
    /// Someone challenged you.
    ChallengeReceived,
    /// A tournament round you play in was paired.
    RoundPaired,
    /// Your vacation is running out.
    VacationEnding,
}

impl NoticeKind {
    pub const ALL: [NoticeKind; 6] = [
        NoticeKind::YourMove,
        NoticeKind::Deadline,
        NoticeKind::GameEnded,
        NoticeKind::ChallengeReceived,
        NoticeKind::RoundPaired,
        NoticeKind::VacationEnding,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        super::names::name_of(&self, "")
    }

    /// The kind of a wire name.
    pub fn parse(name: &str) -> Option<NoticeKind> {
        NoticeKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// What a notice is about; each kind fills what it has.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoticePayload {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opponent: Option<UserInfo>,
    /// A deadline (server Unix ms): a move's, or the end of a vacation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<GameResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
}

/// A kept notice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Notice {
    /// Grows with every notice: the paging cursor and what `mark_notices_read` names.
    pub notice_id: u64,
    pub kind: NoticeKind,
    pub payload: NoticePayload,
    /// When (server Unix ms).
    pub at: i64,
    pub read: bool,
}

/// An account's vacation for its correspondence games
/// (client-protocol/correspondence.md#vacation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Vacation {
    /// The vacation left (ms), before what the vacation under way has cost so far.
    pub balance_ms: i64,
    /// Away since (server Unix ms); absent: at home.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub away_since: Option<i64>,
    /// When the vacation under way ends by itself, its balance spent (server Unix ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_at: Option<i64>,
    /// When the day spent at a deadline that runs now ends (server Unix ms): until then
    /// each of your deadlines in a game that allows vacation is covered by it, and
    /// costs nothing more. Absent: no such day runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paid_until: Option<i64>,
    /// After `start_vacation`: the games whose clock of yours stands still now.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paused: Vec<String>,
    /// After `start_vacation`: your correspondence games whose clock runs on, because
    /// they do not allow vacation (`settings.vacation: false`) or could not be reached.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub running: Vec<String>,
}

/// How a kind of notice is mailed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MailMode {
    /// A mail of its own at once.
    Immediate,
    /// In the next digest.
    Digest,
    /// Not mailed.
    Off,
}

/// The schema of a map from each kind of notice to its mail mode: one property per
/// kind and no other. schemars leaves the keys of a map free when the key is an enum with
/// documented variants, and a client could then be told any key is fine.
pub fn mail_modes_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
    kinds_schema::<MailMode>(g)
}

/// The schema of a map from each kind of notice to whether it is pushed.
pub fn push_kinds_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
    kinds_schema::<bool>(g)
}

/// A map from each kind of notice to a `T`, one property per kind and no other.
fn kinds_schema<T: schemars::JsonSchema>(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mode = g.subschema_for::<T>().to_value();
    let kinds: serde_json::Map<String, serde_json::Value> = NoticeKind::ALL
        .iter()
        .map(|kind| (kind.as_str().to_string(), mode.clone()))
        .collect();
    schemars::json_schema!({
        "type": "object",
        "properties": kinds,
        "additionalProperties": false,
    })
}

/// An account's notification settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NotificationSettings {
    /// Where mail goes; absent: nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Whether the address was proven by the link mailed to it; mail goes only to a
    /// verified address.
    pub verified: bool,
    /// How each kind is mailed (every kind is listed).
    #[schemars(schema_with = "mail_modes_schema")]
    pub modes: BTreeMap<NoticeKind, MailMode>,
    /// Whether this server sends mail at all.
    pub mail: bool,
    /// Which kinds are pushed to the browsers you subscribed (every kind is listed).
    #[schemars(schema_with = "push_kinds_schema")]
    pub push_kinds: BTreeMap<NoticeKind, bool>,
    /// Whether this server sends Web Push notifications at all.
    pub push: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_back_from_their_wire_names() {
        for kind in NoticeKind::ALL {
            assert_eq!(NoticeKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(NoticeKind::GameEnded.as_str(), "game_ended");
        assert_eq!(NoticeKind::parse("nonsense"), None);
    }
}
