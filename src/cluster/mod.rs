//! Several nodes acting as one server (docs/ARCHITECTURE.md §8): games owned through
//! leases with fencing numbers in the shared store, commands forwarded to a game's
//! owner and its frames relayed to every node over NATS.

pub mod automatch;
pub mod bus;
pub mod lobby;
pub mod lobby_wire;
pub mod members;
pub mod numbers;

pub use bus::{Bus, BusError};
