//! Who owns each game when several nodes share one store (docs/ARCHITECTURE.md §8).
//!
//! A lease lives in the store beside the game it is about, with the fencing number that
//! every append of its owner carries ([`super::Append::Fence`]): taking a game over and
//! refusing its former owner's writes are then one row in one database, judged by one
//! clock (the database's), not two systems that must agree.

use super::StoreError;

/// The answer to [`Leases::claim`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The game is this node's now, under this fencing number (higher than any before).
    Ours(u64),
    /// Another node holds an unexpired lease on it.
    Held { node: String },
}

/// Game leases with fencing numbers; only a store that several nodes share has them.
pub trait Leases: Send + Sync + 'static {
    /// Takes `game` for `node` for `lease_ms` if nobody holds an unexpired lease on it
    /// (or `node` itself does: a node restarted under its old id), with a fencing number
    /// above every earlier one; [`StoreError::UnknownGame`] if there is no such game.
    fn claim(&self, game: &str, node: &str, lease_ms: u64) -> Result<Claim, StoreError>;

    /// Extends `node`'s leases on `games` (each with the fencing number it holds them
    /// by) for `lease_ms`; returns the games among them that are no longer `node`'s.
    fn renew(
        &self,
        node: &str,
        games: &[(String, u64)],
        lease_ms: u64,
    ) -> Result<Vec<String>, StoreError>;

    /// Games not finished whose lease has lapsed or that never had one, at most
    /// `limit`: what a node takes over after another one died. Not the correspondence
    /// games in the deadline index that are not due yet: they sleep until due or asked
    /// for, and a due one is woken by the node that claims it.
    fn orphans(&self, limit: u32) -> Result<Vec<String>, StoreError>;

    /// Gives up `node`'s leases on `games` (each with the fencing number it holds them
    /// by) at once (a room that closed, a node that stops), so another node may take
    /// them without waiting for them to lapse. A lease `node` has claimed again since,
    /// under a higher number, is kept: it belongs to a newer room than the one closing.
    fn release(&self, node: &str, games: &[(String, u64)]) -> Result<(), StoreError>;

    /// Takes (or, for its holder, extends) the lease on running the director of
    /// tournament `id` for `node`, as [`Leases::claim`] does a game's. No fencing number
    /// (`Ours(0)`): the tournament's log numbers its entries, so a former director's
    /// next write is refused anyway ([`StoreError::TournamentOutOfOrder`]).
    /// [`StoreError::UnknownTournament`] if there is no such tournament.
    fn claim_tournament(&self, id: &str, node: &str, lease_ms: u64) -> Result<Claim, StoreError>;

    /// Gives up `node`'s lease on tournament `id`, if it holds it.
    fn release_tournament(&self, id: &str, node: &str) -> Result<(), StoreError>;

    /// Tournaments not finished whose director's lease lapsed or that never had one, at
    /// most `limit`, oldest first.
    fn orphan_tournaments(&self, limit: u32) -> Result<Vec<String>, StoreError>;
}
