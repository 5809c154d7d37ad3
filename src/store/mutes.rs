//! Who mutes whom: a user who mutes another no longer receives their chat, in any game,
//! while everyone else still does (client-protocol/referee.md#mute-and-unmute). Plain
//! rows `(muter, muted)`, kept across restarts; [`MuteStore`] is a supertrait of
//! [`Store`](super::Store), with one conformance scenario for both backends in
//! `tests/store_backends.rs`.

use super::StoreError;

/// The mutes half of the store. Synchronous like the rest; async callers use
/// `spawn_blocking`.
pub trait MuteStore {
    /// Records that `muter` mutes `muted` (`on`), or no longer does; repeating either
    /// changes nothing.
    fn set_mute(&self, muter: &str, muted: &str, on: bool, at_ms: i64) -> Result<(), StoreError>;

    /// Every mute, `(muter, muted)`, ordered by muter and muted: what a server loads at
    /// start.
    fn mutes(&self) -> Result<Vec<(String, String)>, StoreError>;
}
