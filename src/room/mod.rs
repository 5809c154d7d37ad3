//! Game rooms: one actor task per game ([`actor`]) around a pure state machine
//! ([`live`]), with its crowd of players and spectators ([`crowd`]), its recent events
//! ([`ring`]), the game rebuilt from its log ([`rebuild`]), the commit's staging and
//! backoff ([`commit`]), and the narrow window on the server it runs in ([`context`]).

mod actor;
mod commit;
mod context;
mod crowd;
mod live;
mod plans;
mod rebuild;
mod ring;
mod sleep;
mod timeline;

pub use actor::{Gone, NewGame, Opening, Prepared, Room, RoomCmd, RoomHandle};
pub use commit::{Staged, event_record, moving, stage, unavailable};
pub use context::{Audience, News, Rejoin, Relay, RoomContext, RoomNews};
pub use live::{LiveGame, MAX_CHAT_CHARS, Moment, ReplayError, Step};
pub use ring::stored_frames;
pub use sleep::deadline;
pub use timeline::Timeline;
