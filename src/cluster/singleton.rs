//! Jobs that one node of the cluster does for all of them (the waker of sleeping
//! correspondence games, `registry/waker.rs`), each under a lease named for the job in
//! the shared store ([`Leases::claim_singleton`]). Every node claims it every third of a
//! lease, as the directors of tournaments are kept (`tournaments/cluster.rs`): for its
//! holder the claim is the renewal, and another node takes the job within a lease of its
//! holder's death, or at once after its holder stopped and gave it up.
//!
//! Any node can nudge the holder over the bus (`<cluster>.job.<name>.nudge`): something
//! changed that it may want to look at again. NATS delivers at most once, so the holder
//! must not depend on a nudge: it looks again by itself, at a bounded period.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::{Notify, watch};

use super::Node;
use super::bus::{Bus, BusError};
use crate::store::{Claim, Leases, StoreError};

/// One job's lease, as this node claims it.
#[derive(Clone)]
pub struct Singleton {
    name: &'static str,
    bus: Bus,
    leases: Arc<dyn Leases>,
    /// This node's id, the owner the lease names.
    node: String,
    lease: Duration,
    /// Set once [`Singleton::hold`] has stopped and given the lease up.
    given_up: Arc<watch::Sender<bool>>,
}

impl Singleton {
    /// Job `name` as `node` claims it.
    pub fn of(node: &Node, name: &'static str) -> Singleton {
        Singleton {
            name,
            bus: node.bus.clone(),
            leases: node.leases(),
            node: node.id().to_owned(),
            lease: node.lease(),
            given_up: Arc::new(watch::channel(false).0),
        }
    }

    async fn blocking<T: Send + 'static>(
        &self,
        call: impl FnOnce(&dyn Leases, &str, &str) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (leases, name, node) = (self.leases.clone(), self.name, self.node.clone());
        tokio::task::spawn_blocking(move || call(leases.as_ref(), name, &node))
            .await
            .map_err(|_| StoreError::WriterStopped)?
    }

    /// Takes or renews the lease; whether this node holds it now. A store that cannot
    /// be reached says no: the job waits here until a claim succeeds (here or elsewhere).
    async fn claim(&self) -> bool {
        let ms = self.lease.as_millis() as u64;
        match self
            .blocking(move |l, name, node| l.claim_singleton(name, node, ms))
            .await
        {
            Ok(Claim::Ours(_)) => true,
            Ok(Claim::Held { .. }) => false,
            Err(e) => {
                tracing::warn!(job = self.name, error = %e, "a job's lease could not be claimed or renewed");
                false
            }
        }
    }

    async fn release(&self) {
        if let Err(e) = (self.blocking(|l, name, node| l.release_singleton(name, node))).await {
            tracing::warn!(job = self.name, error = %e, "a job's lease was not released; it lapses instead");
        }
    }

    /// Holds the job's lease whenever this node can, until `stop` flips (the node
    /// stops), and then gives it up so another node need not wait for it to lapse. The
    /// watch says whether this node holds it now; a job that sees it go false stops.
    pub fn hold(&self, mut stop: watch::Receiver<bool>) -> watch::Receiver<bool> {
        let (held, holds) = watch::channel(false);
        let me = self.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(me.lease / 3);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = ticks.tick() => {}
                    _ = stop.wait_for(|stop| *stop) => break,
                }
                let now = me.claim().await;
                match (held.send_replace(now), now) {
                    (false, true) => tracing::info!(job = me.name, "this node does the job now"),
                    (true, false) => {
                        tracing::warn!(job = me.name, "this node no longer does the job")
                    }
                    _ => {}
                }
            }
            held.send_replace(false);
            me.release().await;
            me.given_up.send_replace(true);
        });
        holds
    }

    /// Returns once [`Singleton::hold`] has stopped and given the lease up, so a node
    /// that stops leaves only after another can take the job.
    pub async fn given_up(&self) {
        let _ = self.given_up.subscribe().wait_for(|done| *done).await;
    }

    fn nudges(&self) -> String {
        self.bus.subject(&format!("job.{}.nudge", self.name))
    }

    /// Tells the job's holder, wherever it runs, to look again (at most once: see the
    /// module's comment).
    pub async fn nudge(&self) {
        if let Err(e) = self.bus.publish(self.nudges(), Bytes::new()).await {
            tracing::debug!(job = self.name, error = %e, "a nudge was not sent");
        }
    }

    /// From now on, whenever any node nudges the job, `heard` is told (whether or not
    /// this node holds the job: one that takes it later looks at once anyway).
    pub async fn heed(&self, heard: Arc<Notify>) -> Result<(), BusError> {
        let mut nudges = self.bus.subscribe(self.nudges()).await?;
        tokio::spawn(async move {
            while nudges.next().await.is_some() {
                heard.notify_one();
            }
        });
        Ok(())
    }
}
