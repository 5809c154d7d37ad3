//! Players' plans of conditional moves in correspondence games
//! (client-protocol/correspondence.md#plans): one row per game and colour, the plan as
//! JSON text the store does not read. Written in the log's batches
//! ([`Append::Plan`](super::Append::Plan)), with the move a plan follows, so a plan
//! survives restarts and take-overs exactly as far as the moves do; read when a room is
//! rebuilt; gone with the game's [`Append::Finish`](super::Append::Finish). Never part of a game's events: nobody but its player sees a plan.

use super::StoreError;

/// Reading plans. Synchronous like the rest; async callers use `spawn_blocking`.
pub trait PlanStore {
    /// The game's plans, `(colour, plan)`, black first.
    fn plans(&self, game_id: &str) -> Result<Vec<(String, String)>, StoreError>;
}
