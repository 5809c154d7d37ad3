//! Tournaments in a cluster: one node runs each tournament's director, under a lease in
//! the shared store ([`Leases::claim_tournament`]) that it renews while it runs it; the
//! other nodes forward it their requests over the bus and hand the frames it publishes
//! to their own watchers. A node that finds a tournament whose lease lapsed (its node
//! died) takes it over: its director reads the log, and the results of games that ended
//! meanwhile, from the store.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::channel::{Channel, OUTGOING};
use super::director::{Command, Reply, Request, ask};
use crate::cluster::Node;
use crate::cluster::bus::{Bus, BusError};
use crate::fanout::Frame;
use crate::protocol::{ErrorCode, Refusal};
use crate::store::{Claim, Leases, StoreError};

/// How long a node waits for the director on another node to answer.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(10);

/// Orphaned tournaments one sweep takes over at most.
const SWEEP: u32 = 16;

/// This node's part in running tournaments with the others.
pub struct Link {
    pub bus: Bus,
    /// The node's id, the owner the store's leases name.
    pub node: String,
    pub leases: Arc<dyn Leases>,
    pub lease: Duration,
}

impl Link {
    /// `node`'s link: its bus, its id and its leases.
    pub fn of(node: &Node) -> Link {
        Link {
            bus: node.bus.clone(),
            node: node.id().to_owned(),
            leases: node.leases(),
            lease: node.lease(),
        }
    }
}

/// A director's frame on the bus, with the node (its incarnation) that sent it.
#[derive(Serialize, Deserialize)]
struct Event {
    from: String,
    tournament: String,
    frame: String,
}

impl Link {
    fn commands(&self, id: &str) -> String {
        self.bus.subject(&format!("tournament.{id}.cmd"))
    }

    fn events(&self) -> String {
        self.bus.subject("tournament.ev")
    }

    async fn blocking<T: Send + 'static>(
        &self,
        call: impl FnOnce(&dyn Leases, &str) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (leases, node) = (self.leases.clone(), self.node.clone());
        tokio::task::spawn_blocking(move || call(leases.as_ref(), &node))
            .await
            .map_err(|_| StoreError::WriterStopped)?
    }

    /// Takes or renews the lease on directing `id`.
    pub async fn claim(&self, id: &str) -> Result<Claim, StoreError> {
        let (id, ms) = (id.to_owned(), self.lease.as_millis() as u64);
        self.blocking(move |l, node| l.claim_tournament(&id, node, ms))
            .await
    }

    /// Gives up the lease on `id` (the node stops), so another node need not wait.
    pub async fn release(&self, id: &str) {
        let wanted = id.to_owned();
        if let Err(e) = self
            .blocking(move |l, node| l.release_tournament(&wanted, node))
            .await
        {
            tracing::warn!(tournament = %id, error = %e, "a tournament's lease was not released; it lapses instead");
        }
    }

    /// Tournaments whose director's node died, or that have none.
    pub async fn orphans(&self) -> Vec<String> {
        self.blocking(|l, _| l.orphan_tournaments(SWEEP))
            .await
            .unwrap_or_else(|e| {
                tracing::error!(error = %e, "could not look for tournaments without a director");
                Vec::new()
            })
    }

    /// Sends `request` to the node that runs the director of `id`.
    pub async fn forward(&self, id: &str, request: &Request) -> Result<Reply, Refusal> {
        let payload = serde_json::to_vec(request)
            .map_err(|e| Refusal::new(ErrorCode::Unavailable, e.to_string()))?;
        let answer = self
            .bus
            .request(self.commands(id), Bytes::from(payload), FORWARD_TIMEOUT)
            .await
            .map_err(|e| {
                let refusal = Refusal::new(
                    ErrorCode::Unavailable,
                    format!("the tournament's director cannot be reached: {e}"),
                );
                match e {
                    // Its node died: another takes it over within a lease.
                    BusError::NoResponders { .. } => {
                        refusal.retry_after(self.lease.as_millis() as u64)
                    }
                    _ => refusal,
                }
            })?;
        serde_json::from_slice(&answer).map_err(|e| {
            Refusal::new(
                ErrorCode::Unavailable,
                format!("an unreadable answer from the tournament's director: {e}"),
            )
        })
    }

    /// Answers the other nodes' requests for the director of `id`, running here, until
    /// it stops.
    pub fn serve(&self, id: &str, director: mpsc::Sender<Command>) {
        let (bus, subject, id) = (self.bus.clone(), self.commands(id), id.to_owned());
        tokio::spawn(async move {
            let mut requests = match bus.subscribe(subject).await {
                Ok(requests) => requests,
                Err(e) => {
                    tracing::error!(tournament = %id, error = %e, "cannot take requests from other nodes; stopping the director here");
                    let _ = director.send(Command::Stop).await;
                    return;
                }
            };
            loop {
                tokio::select! {
                    message = requests.next() => {
                        let Some(message) = message else { break };
                        let Some(to) = message.reply else { continue };
                        let reply = match serde_json::from_slice::<Request>(&message.payload) {
                            Ok(request) => ask(&director, request).await,
                            Err(e) => Reply::Refused(Refusal::new(
                                ErrorCode::BadRequest,
                                format!("unreadable forward: {e}"),
                            ).into()),
                        };
                        let Ok(bytes) = serde_json::to_vec(&reply) else { continue };
                        if let Err(e) = bus.client().publish(to, Bytes::from(bytes)).await {
                            tracing::warn!(error = %e, "an answer to another node was not sent");
                        }
                    }
                    () = director.closed() => break,
                }
            }
        });
    }

    /// Relays tournament frames: those of the directors here out to the other nodes (in
    /// order, through one task), those of the others' directors in to `channel`'s
    /// watchers here.
    pub async fn relay(&self, channel: Arc<Channel>) -> Result<(), BusError> {
        let subject = self.events();
        let mut heard = self.bus.subscribe(subject.clone()).await?;
        let (outgoing, mut frames) = mpsc::channel::<(String, Frame)>(OUTGOING);
        channel.publish_to(outgoing);
        let (bus, me) = (self.bus.clone(), self.bus.node().to_owned());
        tokio::spawn({
            let me = me.clone();
            async move {
                while let Some((tournament, frame)) = frames.recv().await {
                    let event = Event {
                        from: me.clone(),
                        tournament,
                        frame: frame.as_str().to_owned(),
                    };
                    let Ok(payload) = serde_json::to_vec(&event) else {
                        continue;
                    };
                    if let Err(e) = bus.publish(subject.clone(), Bytes::from(payload)).await {
                        tracing::warn!(error = %e, "a tournament event was not sent to the other nodes");
                    }
                }
            }
        });
        tokio::spawn(async move {
            while let Some(message) = heard.next().await {
                match serde_json::from_slice::<Event>(&message.payload) {
                    Ok(event) if event.from != me => {
                        channel.deliver(&event.tournament, Frame::from(event.frame));
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "an unreadable tournament event on the bus")
                    }
                }
            }
        });
        self.bus.round_trip().await
    }
}
