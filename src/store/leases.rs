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
    /// games in the deadline index, due or not: they sleep until due or asked for, and
    /// the one node that holds the waker's lease ([`Leases::claim_singleton`]) wakes
    /// each when it is due, so a due game has one node responsible for it, not every
    /// node's sweep at once.
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

    /// Takes (or, for its holder, extends) the lease named `name` on a job that one
    /// node does for the whole cluster (the waker of sleeping correspondence games), as
    /// [`Leases::claim_tournament`] does a director's; a name never claimed before is
    /// free. No fencing number (`Ours(0)`): such a job must be harmless done twice for a
    /// moment (a holder paused past its lease, back before it hears it lost it); the
    /// waker's is, since every game it wakes is claimed under the game's own lease.
    fn claim_singleton(&self, name: &str, node: &str, lease_ms: u64) -> Result<Claim, StoreError>;

    /// Gives up `node`'s lease named `name`, if it holds it (the node stops).
    fn release_singleton(&self, name: &str, node: &str) -> Result<(), StoreError>;
}
