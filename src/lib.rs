//! tengen (天元): an online Go server under the Chinese rules.
//!
//! The layers, from the wire down (`docs/ARCHITECTURE.md`; the rules of Go: `docs/RULES.md`):
//! [`net`] accepts HTTP and WebSocket connections, [`protocol`] holds every message that
//! crosses the wire, [`room`] runs one actor task per game, [`clock`] and [`rules`] are the
//! pure cores the room consults, and [`store`] is the durable event log.

pub mod accounts;
pub mod archive;
pub mod auth;
pub mod away;
pub mod bot;
pub mod calendars;
pub mod clock;
pub mod cluster;
pub mod config;
pub mod correspondence;
pub mod desk;
pub mod estimate;
pub mod fanout;
pub mod hub;
pub mod ids;
pub mod lifecycle;
pub mod load;
pub mod lobby;
pub mod metrics;
pub mod net;
pub mod notify;
pub mod protocol;
pub mod rating;
pub mod registry;
pub mod room;
pub mod rules;
pub mod server;
pub mod shutdown;
pub mod standings;
pub mod starter;
pub mod store;
pub mod time;
pub mod tournament;
pub mod tournaments;
