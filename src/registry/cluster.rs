//! A cluster: each game runs on the node that holds its lease (with a fencing number, in
//! the shared store); every other node that is asked for it runs a mirror of the
//! owner's room ([`crate::cluster::mirror`]). Leases are renewed on a thread of their
//! own; a game whose lease this node lost stops here; a game whose owner died is taken
//! over; a graceful stop hands every game here to the others. The waker of sleeping
//! correspondence games runs on one node of all, under a lease of its own.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::future::BoxFuture;

use super::waker::{self, Turn};
use super::{Placement, Registry};
use crate::cluster::singleton::Singleton;
use crate::cluster::{Node, mirror, owner};
use crate::protocol::{ErrorCode, Refusal};
use crate::room::{Prepared, RoomCmd, RoomHandle};
use crate::store::{Claim, StoreError};

#[derive(Clone)]
pub struct Clustered {
    node: Arc<Node>,
    /// The waker's lease, and the nudge a room that stops here sends it.
    waker: Singleton,
}

impl Clustered {
    pub fn new(node: Arc<Node>) -> Clustered {
        let waker = Singleton::of(&node, waker::JOB);
        Clustered { node, waker }
    }

    /// In a cluster, the room of a game: run here if nobody else does (its lease taken
    /// first, so its log is final when it is read), else a mirror of the owner's.
    async fn place(&self, registry: &Registry, game_id: &str) -> Result<RoomHandle, Refusal> {
        let node = &self.node;
        let _one_at_a_time = node.claiming.lock().await;
        if let Some(room) = registry.running(game_id) {
            return Ok(room);
        }
        match node.claim(game_id).await {
            Ok(Claim::Ours(fence)) => Ok(self.run_here(registry, game_id, fence).await?.0),
            Ok(Claim::Held { .. }) => {
                let game: Arc<str> = game_id.into();
                let ctx = registry.context();
                let mirror =
                    mirror::open(node.bus.clone(), ctx.news.clone(), ctx.store.clone(), game)
                        .await
                        .map_err(|e| Refusal::new(ErrorCode::Unavailable, e.to_string()))?;
                registry.replace(mirror.clone());
                Ok(mirror)
            }
            Err(StoreError::UnknownGame { .. }) => Err(Refusal::new(
                ErrorCode::NotFound,
                format!("no game `{game_id}`"),
            )),
            Err(e) => Err(Refusal::new(
                ErrorCode::Unavailable,
                format!("the store could not be reached: {e}"),
            )),
        }
    }

    /// Registers and starts the room of a game just stored, under this node's lease (if
    /// the store cannot give one, the game waits for a node to take it over, as after a
    /// crash).
    async fn open(&self, registry: &Registry, prepared: Prepared) {
        let game_id = prepared.handle().game_id.clone();
        let _one_at_a_time = self.node.claiming.lock().await;
        match self.node.claim(&game_id).await {
            Ok(Claim::Ours(fence)) => {
                self.start_here(registry, prepared.fenced(fence));
            }
            // Another node's sweep for games without an owner took it between its
            // creation here and this claim: it runs there, and is mirrored here on demand.
            Ok(Claim::Held { node: other }) => {
                tracing::info!(game = %game_id, %other, "a new game was taken by another node first")
            }
            Err(e) => {
                tracing::error!(game = %game_id, error = %e, "no lease for a new game; it waits to be taken over")
            }
        }
    }

    /// Runs the room of a game whose lease this node just took (under `fence`),
    /// rebuilt from its log, in place of whatever the registry held for it (returned).
    async fn run_here(
        &self,
        registry: &Registry,
        game_id: &str,
        fence: u64,
    ) -> Result<(RoomHandle, Option<RoomHandle>), Refusal> {
        let prepared = match registry.rebuild(game_id).await {
            Ok(prepared) => prepared.fenced(fence),
            Err(refusal) => {
                self.node.disown(game_id, fence).await;
                return Err(refusal);
            }
        };
        tracing::info!(game = %game_id, fence, "took the game over");
        // Before the room's first frame, which the relay publishes after this.
        self.node.took_over(game_id);
        Ok(self.start_here(registry, prepared))
    }

    /// Registers and starts a room this node owns, answering the other nodes for it.
    fn start_here(
        &self,
        registry: &Registry,
        prepared: Prepared,
    ) -> (RoomHandle, Option<RoomHandle>) {
        let room = prepared.handle().clone();
        let replaced = registry.replace(room.clone());
        tokio::spawn(owner::serve(self.node.bus.clone(), room.clone()));
        prepared.start();
        (room, replaced)
    }

    /// Takes over a game whose owner died or let it go, if nobody else has: its room
    /// runs here from now on, and a mirror of it here stops (its connections join the
    /// room here). The sweep's call, and the waker's for a sleeping game that is due.
    async fn take_over(&self, registry: &Registry, game_id: &str) -> Result<(), Refusal> {
        let _one_at_a_time = self.node.claiming.lock().await;
        if self.node.owns(game_id) && registry.registered(game_id).is_some() {
            return Ok(());
        }
        let claim = (self.node.claim(game_id).await)
            .map_err(|e| Refusal::new(ErrorCode::Unavailable, e.to_string()))?;
        if let Claim::Ours(fence) = claim {
            let (_, replaced) = self.run_here(registry, game_id, fence).await?;
            if let Some(mirror) = replaced {
                mirror.tell(RoomCmd::Release).await;
            }
        }
        Ok(())
    }

    /// Stops the room here of a game whose lease another node took, so its connections
    /// join the game where it runs now. Unless this node has claimed it again since, what
    /// the registry holds for it is that room, or a mirror that replaced it (when the
    /// room stepped aside first), whose connections then join again: harmless.
    async fn let_go(&self, registry: &Registry, game: &str) {
        if self.node.owns(game) {
            return;
        }
        if let Some(room) = registry.registered(game) {
            tracing::warn!(%game, "another node owns this game now; stopping it here");
            room.tell(RoomCmd::Release).await;
        }
    }

    /// Claims the waker's lease until the node stops, runs the waker while it holds
    /// it, and hands it the nudges of every node's rooms that stop.
    fn keep_waker(&self, registry: &Weak<Registry>) {
        let Some(stopping) = registry.upgrade().map(|r| r.stopping.clone()) else {
            return;
        };
        let held = self.waker.hold(stopping);
        waker::spawn(registry.clone(), Turn::while_held(held, self.node.lease()));
        let (waker, registry) = (self.waker.clone(), registry.clone());
        tokio::spawn(async move {
            let Some(slept) = registry.upgrade().map(|r| r.slept.clone()) else {
                return;
            };
            if let Err(e) = waker.heed(slept).await {
                tracing::error!(error = %e, "the waker hears no nudge from the other nodes; it reads the deadline index once a lease");
            }
        });
    }

    /// After this node was cut off from the others (NATS down or out of reach), the
    /// owners of the games it mirrors may have counted its connections gone: each mirror
    /// stops, and its connections join their games again where they run.
    async fn rejoin_mirrors(&self, registry: &Registry) {
        let mirrors = registry.mirrors();
        tracing::info!(
            games = mirrors.len(),
            "back in touch with the other nodes; joining their games again"
        );
        for mirror in mirrors {
            mirror.tell(RoomCmd::Release).await;
        }
    }
}

impl Placement for Clustered {
    fn place<'a>(
        &'a self,
        registry: &'a Registry,
        game_id: &'a str,
    ) -> BoxFuture<'a, Result<RoomHandle, Refusal>> {
        Box::pin(Clustered::place(self, registry, game_id))
    }

    fn open<'a>(&'a self, registry: &'a Registry, prepared: Prepared) -> BoxFuture<'a, ()> {
        Box::pin(Clustered::open(self, registry, prepared))
    }

    /// Its lease goes, and then the waker, wherever it runs, reads the deadline index
    /// again: the game may have gone to sleep, due before anything the waker knew of.
    fn disown(&self, game_id: &str, fence: Option<u64>) {
        if let Some(fence) = fence {
            let (node, waker, game) = (self.node.clone(), self.waker.clone(), game_id.to_owned());
            tokio::spawn(async move {
                node.disown(&game, fence).await;
                waker.nudge().await;
            });
        }
    }

    fn wake<'a>(
        &'a self,
        registry: &'a Registry,
        game_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, Refusal>> {
        Box::pin(async move {
            let ran = self.node.owns(game_id) && registry.registered(game_id).is_some();
            self.take_over(registry, game_id).await?;
            Ok(!ran && self.node.owns(game_id))
        })
    }

    fn runs_here(&self, game_id: &str) -> bool {
        self.node.owns(game_id)
    }

    /// Stops every room this node runs and gives up their leases, and the waker's
    /// (its keeper stops with the registry), so the other nodes take them over at once.
    fn hand_over<'a>(&'a self, registry: &'a Registry) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let rooms = registry.running_here();
            for room in &rooms {
                room.tell(RoomCmd::Release).await;
            }
            let stopped = futures_util::future::join_all(rooms.iter().map(RoomHandle::closed));
            let _ = tokio::time::timeout(Duration::from_secs(2), stopped).await;
            self.node.release_all().await;
            let _ = tokio::time::timeout(Duration::from_secs(2), self.waker.given_up()).await;
        })
    }

    fn patience(&self) -> Duration {
        self.node.lease() * 3
    }

    /// Renews this node's leases on a thread of their own, so neither busy workers nor
    /// a burst of take-overs here delays them ([`Node::keep_leases`]); stops here the
    /// rooms of games whose leases were lost; takes over games whose owner died, on a
    /// task of its own; and runs the waker while this node holds its lease.
    fn keep(&self, registry: Weak<Registry>) {
        self.keep_waker(&registry);
        match self.node.keep_leases() {
            Ok(mut lost) => {
                let (registry, me) = (registry.clone(), self.clone());
                tokio::spawn(async move {
                    while let Some(games) = lost.recv().await {
                        let Some(registry) = registry.upgrade() else {
                            return;
                        };
                        for game in games {
                            me.let_go(&registry, &game).await;
                        }
                    }
                });
            }
            Err(e) => {
                tracing::error!(error = %e, "the lease renewal thread did not start: this node answers for no game")
            }
        }
        let me = self.clone();
        let every = self.node.lease() / 3;
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut heard = true;
            loop {
                ticks.tick().await;
                let Some(registry) = registry.upgrade() else {
                    return;
                };
                if registry.stopping() {
                    return;
                }
                let hears = me.node.bus.is_connected();
                if hears && !heard {
                    me.rejoin_mirrors(&registry).await;
                }
                heard = hears;
                for game in me.node.orphans().await {
                    if let Err(e) = me.take_over(&registry, &game).await {
                        tracing::warn!(%game, error = %e, "could not take over a game");
                    }
                }
            }
        });
    }
}
