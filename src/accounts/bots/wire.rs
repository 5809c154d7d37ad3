//! The JSON bodies of the bot-account routes (`POST /api/account/bot`,
//! `PUT /api/account/bot-profile`, `GET /api/bots`; client-protocol/bots.md#bot-accounts).
//! Plain serde structs, kept apart from the handlers so an API description can be
//! generated from them.

use serde::{Deserialize, Serialize};

use crate::protocol::{BotOffer, UserInfo};

/// `POST /api/account/bot`: turning one's own account into a bot account, for good.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MakeBotRequest {
    /// The account's username again, as the confirmation that this cannot be undone.
    pub confirm: String,
}

/// Which games a bot takes, as to rating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RatedChoice {
    Rated,
    Unrated,
    Either,
}

/// What a bot declares about itself for the bots page: its engine and the games it
/// accepts. The `offer` is the standing offer's shape (client-protocol/bots.md#offer):
/// board sizes, rulesets, time systems and main-time range, handicap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BotProfile {
    /// The engine and its version, e.g. `GNU Go 3.8`: 1 to 40 characters.
    pub engine: String,
    pub offer: BotOffer,
    pub rated: RatedChoice,
}

/// One bot account on the bots page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BotEntry {
    pub user: UserInfo,
    /// Whether it has a connection now (on any node of a cluster).
    pub online: bool,
    /// Absent until the bot sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<BotProfile>,
}

/// `GET /api/bots`: enabled bot accounts by id, a page at a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BotPage {
    pub bots: Vec<BotEntry>,
    /// The `after` for the next page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}
