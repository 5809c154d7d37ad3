//! Pure clock arithmetic for every time system: never reads a clock, never does I/O.
//!
//! Time comes in as [`Millis`], milliseconds on a monotonic timeline the caller chooses
//! (the room converts its `tokio::time::Instant`), so every function here is a
//! deterministic function of its inputs and is tested without sleeping.
//!
//! One rule holds for every system: a side's time runs out at the instant its available
//! time is used up. It has flagged iff `now >= deadline`; a move arriving exactly at the
//! deadline is late.
//!
//! - [`settings`]: the [`TimeControl`] a game is played under, and its validation.
//! - [`player`]: one side's [`PlayerClock`] and how a move is charged to it.
//! - [`game_clock`]: the [`GameClock`] of a game (both sides, whose clock runs, pause,
//!   the next deadline the room arms a timer for).
//! - [`lag`]: the [`LagQuota`] that gives back time lost to the network.
//! - [`weekend`]: a correspondence player's [`Weekend`], on which their clock stands.

pub mod game_clock;
pub mod lag;
pub mod player;
pub mod settings;
pub mod weekend;

pub use game_clock::{ClockView, Flagged, GameClock, MoveCharge};
pub use lag::{LagQuota, LagSettings};
pub use player::{OutOfTime, PlayerClock};
pub use settings::{ClockError, ClockLimits, TimeControl};
pub use weekend::{Weekend, WeekendError};

/// Milliseconds on the caller's monotonic timeline (an instant) or a duration in
/// milliseconds; plain `u64` so the clock stays free of any time source.
pub type Millis = u64;
