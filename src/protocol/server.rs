//! Server → client messages that are not numbered game events (replies, the lobby,
//! snapshots and spectators' chat), and [`decode_server`], which reads any server frame.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::calendar::Calendar;
use super::error::ErrorCode;
use super::event::{EventFrame, GameEvent, NigiriProof, ScoreView};
use super::names;
use super::notice::{Notice, NotificationSettings, Vacation};
use super::offer::BotListing;
use super::plan::StoredPlan;
use super::request::RequestId;
use super::settings::GameSettings;
use super::summary::{CorrespondenceGame, GameSummary, Phase};
use super::tournament::{
    AppealView, DrawView, PlayerView, RoundView, StandingView, TournamentSetup, TournamentView,
};
use super::user::UserInfo;
use crate::clock::ClockView;
use crate::rules::{Color, GameResult, Move, Vertex};

/// An open seek (no `to`) or a direct challenge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Challenge {
    pub challenge_id: String,
    pub from: UserInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    pub settings: GameSettings,
    pub created_at: i64,
    /// The author's rank (lobby.md#ranks): absent for a player with no rated game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_rank: Option<String>,
    /// For `nigiri`: sha256 of the server's secret, fixed before anyone accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nigiri_commitment: Option<String>,
}

/// A player's seat: who, and whether connected now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Seat {
    pub user: UserInfo,
    pub online: bool,
    /// Referee warnings this player has had in this game (absent when none).
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub warnings: u8,
}

fn is_zero_u8(n: &u8) -> bool {
    *n == 0
}

/// One move of the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MoveRecord {
    pub color: Color,
    pub vertex: Move,
}

/// A line of the players' chat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChatLine {
    pub seq: u64,
    pub from: UserInfo,
    pub text: String,
    pub at: i64,
}

/// Prisoners each side has taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Prisoners {
    pub black: u32,
    pub white: u32,
}

/// Everything a client needs to draw a game from nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Snapshot {
    pub game_id: String,
    /// The last event's number; events that follow continue from it.
    pub seq: u64,
    pub settings: GameSettings,
    pub black: Seat,
    pub white: Seat,
    pub phase: Phase,
    /// Rows from the top: `X` black, `O` white, `.` empty.
    pub board: Vec<String>,
    pub handicap_stones: Vec<Vertex>,
    pub moves: Vec<MoveRecord>,
    pub prisoners: Prisoners,
    pub to_move: Color,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockView>,
    pub server_time: i64,
    /// Marks in the scoring phase.
    pub dead: Vec<Vertex>,
    /// The seq of the event that set the current marks (for `accept_score`).
    #[serde(default)]
    pub marks_seq: u64,
    /// Who has accepted the current marks.
    pub accepted: Vec<Color>,
    pub disputes: u32,
    /// Clocks stopped by agreement.
    #[serde(default)]
    pub paused: bool,
    /// A referee's scheduled adjournment (server Unix ms): from then the player to move
    /// may only seal; a sealed move is opened by the referee.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjourn_at: Option<i64>,
    /// Clocks stopped by a referee (an organiser's break): only a referee resumes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub referee_paused: bool,
    /// Adjourned with a sealed move: by whom.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_by: Option<Color>,
    /// A pending request to pause or to resume, and who made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_requested_by: Option<Color>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_requested_by: Option<Color>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<GameResult>,
    /// How the game ended, as in `game_ended` (`double_forfeit` tells it from `void`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<ScoreView>,
    /// The players' latest chat lines (spectators' chat is not kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chat: Vec<ChatLine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nigiri: Option<NigiriProof>,
    /// Your colour when you play in this game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub you: Option<Color>,
    /// Correspondence games: your own stored plan of conditional moves, sent to you alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<StoredPlan>,
}

/// A message from the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMsg {
    /// The first message on every connection.
    Welcome {
        protocol: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user: Option<UserInfo>,
        server_time: i64,
    },
    Error {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        code: ErrorCode,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        game_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// When waiting lifts the refusal (a `claim_win` too early): the ms left to wait.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
    },
    Pong {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        server_time: i64,
    },
    /// A request succeeded; for game actions `seq` is the number of the event it caused.
    Ack {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        game_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
    },
    /// Reply to `auth`.
    Authenticated {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        user: UserInfo,
    },
    Seeks {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        challenges: Vec<Challenge>,
    },
    Games {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        games: Vec<GameSummary>,
    },
    /// The reply to `list_correspondence`.
    CorrespondenceGames {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        games: Vec<CorrespondenceGame>,
    },
    /// The reply to `report`.
    ReportFiled {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        report_id: u64,
    },
    /// The reply to `list_mutes`: the ids of the users you mute, sorted.
    Mutes {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        users: Vec<String>,
    },
    /// The reply to `list_reports`.
    Reports {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        reports: Vec<super::referee::Report>,
    },
    /// The reply to `list_referee_calls`.
    RefereeCalls {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        games: Vec<super::referee::CalledGame>,
        /// The games not over whose settings name the asker as their referee.
        assigned: Vec<GameSummary>,
    },
    Bots {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        bots: Vec<BotListing>,
    },
    /// Reply to `seek` and `challenge`.
    ChallengeCreated {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        challenge: Challenge,
    },
    /// A new open seek (to lobby watchers) or a challenge addressed to you.
    ChallengeAdded {
        challenge: Challenge,
    },
    /// A seek or challenge is gone: `accepted`, `declined`, `cancelled` or `disconnected`.
    ChallengeRemoved {
        challenge_id: String,
        reason: String,
    },
    /// A game you play in has started; `join` it to play.
    GameStarted {
        game_id: String,
        black: UserInfo,
        white: UserInfo,
        settings: GameSettings,
    },
    /// Lobby watchers: a game started or ended.
    GameListed {
        game: GameSummary,
    },
    Snapshot(Box<Snapshot>),
    /// Spectators' chat: not numbered, never sent to the players.
    Kibitz {
        game_id: String,
        from: UserInfo,
        text: String,
        at: i64,
    },
    /// The server is going away (shutdown); reconnect later and `join` with `since_seq`.
    Closing {
        reason: String,
    },
    /// Reply to `create_tournament` and `watch_tournament`: the whole tournament.
    Tournament {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        tournament: Box<TournamentView>,
    },
    /// Tournament channel: a player registered, withdrew or was disqualified.
    RegistrationChanged {
        tournament_id: String,
        player: PlayerView,
    },
    /// Tournament channel: a round was proposed (or changed by a swap), not yet final.
    RoundPaired {
        tournament_id: String,
        round: RoundView,
    },
    /// Tournament channel: a round was published and its games created.
    RoundStarted {
        tournament_id: String,
        round: RoundView,
    },
    /// Tournament channel: a board's result, or its change by a ruling or correction.
    BoardResult {
        tournament_id: String,
        round: u8,
        board: u16,
        game_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<crate::tournament::field::Outcome>,
    },
    /// Tournament channel: the standings after a change.
    StandingsChanged {
        tournament_id: String,
        standings: Vec<StandingView>,
    },
    /// Tournament channel: an appeal to the chief referee, or its ruling.
    AppealChanged {
        tournament_id: String,
        appeal: AppealView,
    },
    /// Tournament channel: a director replaced the setup (before round one is paired),
    /// and with it each round's draw: the new commitments.
    SetupChanged {
        tournament_id: String,
        setup: Box<TournamentSetup>,
        draws: Vec<DrawView>,
    },
    /// Tournament channel: a director gave `player` (a user id) the bye of `round`
    /// ahead of its pairing.
    ByeGiven {
        tournament_id: String,
        player: String,
        round: u8,
    },
    /// The reply to `list_notices`; `next` is the `before` of the following page.
    Notices {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        notices: Vec<Notice>,
        unread: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        next: Option<u64>,
    },
    /// A new notice, to every connection of its account.
    Notice {
        notice: Notice,
        unread: u64,
    },
    /// How many notices are unread, to every connection of the account, after
    /// `mark_notices_read`.
    UnreadNotices {
        unread: u64,
    },
    /// The reply to `get_vacation`, `start_vacation` and `end_vacation` (not `vacation`:
    /// that is a game's event).
    VacationStatus {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        vacation: Vacation,
    },
    /// The reply to `get_calendar` and `set_calendar`.
    Calendar {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        calendar: Calendar,
    },
    /// The reply to `get_notification_settings` and `set_notification_settings`.
    NotificationSettings {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        settings: NotificationSettings,
    },
}

/// Any frame the server sends, as a client reads it: one type to match on instead of
/// `type` strings.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerFrame {
    Msg(ServerMsg),
    Event(EventFrame),
    /// A `type` this build does not know (a newer server added it). Clients ignore such
    /// frames, but a numbered one still counts: its `game_id` and `seq` are kept.
    Unknown {
        kind: String,
        game_id: Option<String>,
        seq: Option<u64>,
    },
}

/// Reads one frame from the server. The `type` picks the type it is read into (the event
/// and message names come from the serde types), so a frame that does not fit the type
/// it names is an error, not a silent guess.
pub fn decode_server(text: &str) -> Result<ServerFrame, serde_json::Error> {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(rename = "type", borrow)]
        kind: Cow<'a, str>,
        #[serde(default)]
        game_id: Option<String>,
        #[serde(default)]
        seq: Option<u64>,
    }
    let head: Head = serde_json::from_str(text)?;
    let kind = head.kind.as_ref();
    Ok(if names::tags::<GameEvent>("type").contains(&kind) {
        ServerFrame::Event(serde_json::from_str(text)?)
    } else if names::tags::<ServerMsg>("type").contains(&kind) {
        ServerFrame::Msg(serde_json::from_str(text)?)
    } else {
        ServerFrame::Unknown {
            kind: head.kind.into_owned(),
            game_id: head.game_id,
            seq: head.seq,
        }
    })
}

impl Serialize for ServerFrame {
    /// The frame as the server wrote it (an unknown one as far as it was read).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Unread<'a> {
            #[serde(rename = "type")]
            kind: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            game_id: &'a Option<String>,
            #[serde(skip_serializing_if = "Option::is_none")]
            seq: &'a Option<u64>,
        }
        match self {
            ServerFrame::Msg(msg) => msg.serialize(serializer),
            ServerFrame::Event(frame) => frame.serialize(serializer),
            ServerFrame::Unknown { kind, game_id, seq } => {
                Unread { kind, game_id, seq }.serialize(serializer)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_decode_by_their_type() {
        let ack = decode_server(r#"{"type":"ack","id":3,"game_id":"g","seq":7}"#).unwrap();
        assert_eq!(
            ack,
            ServerFrame::Msg(ServerMsg::Ack {
                id: Some(RequestId::Number(3)),
                game_id: Some("g".into()),
                seq: Some(7)
            })
        );
        let ev = decode_server(
            r#"{"game_id":"g","seq":2,"type":"presence","color":"white","online":false}"#,
        )
        .unwrap();
        assert!(
            matches!(&ev, ServerFrame::Event(f) if f.seq == 2 && matches!(f.event, GameEvent::Presence { online: false, .. })),
            "{ev:?}"
        );
        // A newer server's event still carries its number.
        let new = decode_server(r#"{"game_id":"g","seq":9,"type":"comet","tail":1}"#).unwrap();
        assert_eq!(
            new,
            ServerFrame::Unknown {
                kind: "comet".into(),
                game_id: Some("g".into()),
                seq: Some(9)
            }
        );
        // A known type with the wrong fields is an error, not an unknown frame.
        assert!(decode_server(r#"{"type":"ack","seq":"x"}"#).is_err());
        assert!(decode_server(r#"{"seq":1}"#).is_err());
        assert!(decode_server("nonsense").is_err());
    }
}
