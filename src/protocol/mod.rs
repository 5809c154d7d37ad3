//! The wire format: every message that crosses a WebSocket, and the error codes. The only
//! module that knows the JSON shapes; `client-protocol/` documents them and a test checks
//! its examples against these types.

mod calendar;
mod client;
mod error;
mod event;
mod names;
mod notice;
mod offer;
mod plan;
mod referee;
mod request;
pub mod schema;
mod server;
mod settings;
mod speed;
mod summary;
mod tournament;
mod user;

pub use calendar::{Calendar, Day};
pub use client::{ClientMsg, DecodeError, GameAction, LobbyMsg, Request, decode, request_id};
pub use error::{ErrorCode, Refusal};
pub use event::{EventFrame, GameEvent, GroupTax, NigiriProof, ScoreView};
pub use notice::{
    MailMode, Notice, NoticeKind, NoticePayload, NotificationSettings, Vacation, mail_modes_schema,
    push_kinds_schema,
};
pub use offer::{BotListing, BotOffer, time_system};
pub use plan::{Branch, StoredPlan};
pub use referee::{CalledGame, MAX_REASON_CHARS, RefereeCall, Report, Ruling};
pub use request::RequestId;
pub use server::{
    Challenge, ChatLine, MoveRecord, Prisoners, Seat, ServerFrame, ServerMsg, Snapshot,
    decode_server,
};
pub use settings::{ColorChoice, FairPlay, GameSettings, HandicapPlacement};
pub use speed::Speed;
pub use summary::{CorrespondenceGame, GameSummary, Phase};
pub use tournament::{
    AdjustmentView, AppealView, BoardView, DrawView, PlayerView, RoundView, Stage, StandingView,
    TournamentAction, TournamentSetup, TournamentView,
};
pub use user::{Role, UserInfo};

/// Bumped when a change could break an existing client.
pub const PROTOCOL_VERSION: u32 = 1;
