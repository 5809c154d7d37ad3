//! Game rooms: one actor task per game ([`actor`]) around a pure state machine
//! ([`live`]), with its crowd of players and spectators ([`crowd`]).

mod actor;
mod crowd;
mod live;

pub use actor::{Room, RoomCmd, RoomHandle};
pub use live::{Action, LiveGame, MAX_CHAT_CHARS, Moment, ReplayError, Step};
