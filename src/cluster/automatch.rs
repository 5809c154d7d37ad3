//! Automatch across nodes: one queue for the whole cluster, on the leader (the lowest
//! node id alive). Requests and cancels are asked of it; it pairs, creates the games and
//! tells every node the requests are over. Each node remembers the requests made on it
//! until then, and makes them again to the next leader when the leader goes.

use std::collections::HashMap;

use super::lobby::{ASK_TIMEOUT, Home, Link, refused};
use super::lobby_wire::{Answer, Ask, Request};
use crate::lobby::Lobby;
use crate::lobby::automatch::Seeker;
use crate::protocol::{ErrorCode, Refusal};

impl Link {
    /// Whether this node holds the automatch queue.
    pub fn leads(&self) -> bool {
        *self.members.leader() == *self.bus.node()
    }

    pub(super) fn requests(&self) -> std::sync::MutexGuard<'_, HashMap<String, Request>> {
        // Each change to the map is one insert or remove: a panic cannot leave it torn.
        self.requests.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues an automatch request made on this node at the leader's.
    pub async fn automatch(&self, lobby: &Lobby, seeker: Seeker) -> Result<(), Refusal> {
        let request = Request::of(&seeker);
        (self.requests()).insert(seeker.user.id.clone(), request.clone());
        self.queue(lobby, request).await
    }

    /// Puts a request in the leader's queue: here, or by asking the leader.
    pub(super) async fn queue(&self, lobby: &Lobby, request: Request) -> Result<(), Refusal> {
        let leader = self.members.leader();
        if *leader == *self.bus.node() {
            lobby.automatch.put(request.seeker());
            return Ok(());
        }
        match self
            .ask(&leader, &Ask::Automatch { request }, ASK_TIMEOUT)
            .await?
        {
            Answer::Done {} => Ok(()),
            other => Err(refused(other)),
        }
    }

    /// Withdraws `user`'s request from the leader's queue; false when it held none.
    pub(super) async fn cancel_at_leader(
        &self,
        lobby: &Lobby,
        user: &str,
    ) -> Result<bool, Refusal> {
        let leader = self.members.leader();
        if *leader == *self.bus.node() {
            return Ok(lobby.cancel_here(user));
        }
        let ask = Ask::AutomatchCancel {
            user: user.to_string(),
        };
        match self.ask(&leader, &ask, ASK_TIMEOUT).await? {
            Answer::Done {} => Ok(true),
            Answer::Refused {
                code: ErrorCode::NotFound,
                ..
            } => Ok(false),
            other => Err(refused(other)),
        }
    }

    /// Moves the requests queued here to the leader, once this node no longer leads; one
    /// the leader cannot take now waits here for the next round.
    pub async fn hand_over(&self, lobby: &Lobby) {
        for seeker in lobby.automatch.take_all() {
            if let Err(e) = self.queue(lobby, Request::of(&seeker)).await {
                tracing::warn!(error = %e, "an automatch request could not be handed over");
                lobby.automatch.put_back(vec![seeker]);
            }
        }
    }

    /// Makes every request made here again, to a new leader (the last one went).
    async fn requeue(&self, lobby: &Lobby) {
        let requests: Vec<Request> = self.requests().values().cloned().collect();
        for request in requests {
            if let Err(e) = self.queue(lobby, request).await {
                tracing::warn!(error = %e, "an automatch request could not be made again");
            }
        }
    }

    /// Forgets a node that went (its lobby items, its connections in the games here);
    /// when it held the automatch queue, the requests made here go to the next leader.
    pub(super) async fn gone(&self, hub: &dyn Home, node: &str) {
        hub.lobby().forget_node(node);
        hub.node_gone(node).await;
        if self.members.leads_or_led(node) {
            self.requeue(hub.lobby()).await;
        }
    }
}
