//! The owner's side of relaying: each committed frame of a room published once on its
//! game's event subject, for every node, in the order the room sent it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use tokio::sync::mpsc;

use super::Tenure;
use super::bus::Bus;
use super::wire::Relayed;
use crate::fanout::Frame;
use crate::room::{Audience, Relay};

/// Messages waiting to be published: beyond this the relay drops (and the other nodes
/// fill the gap from the store) rather than let a slow bus grow memory.
const QUEUE: usize = 65_536;

/// [`Relay`] over the bus: rooms hand it frames without waiting; one task publishes
/// them in order.
pub struct BusRelay {
    bus: Bus,
    tx: mpsc::Sender<(String, Bytes)>,
    dropped: AtomicU64,
    tenure: Arc<Tenure>,
}

impl BusRelay {
    pub fn spawn(bus: Bus, tenure: Arc<Tenure>) -> BusRelay {
        let (tx, mut rx) = mpsc::channel::<(String, Bytes)>(QUEUE);
        let publisher = bus.clone();
        tokio::spawn(async move {
            while let Some((subject, payload)) = rx.recv().await {
                if let Err(e) = publisher.publish(subject, payload).await {
                    tracing::warn!(error = %e, "a relayed frame was not published");
                }
            }
        });
        BusRelay {
            bus,
            tx,
            dropped: AtomicU64::new(0),
            tenure,
        }
    }

    fn send(&self, game: &str, relayed: Relayed) {
        let subject = self.bus.game_events(game);
        if self.tx.try_send((subject, relayed.encode())).is_err() {
            crate::metrics::cluster_relay_dropped();
            if self
                .dropped
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(1000)
            {
                tracing::warn!(
                    "the bus falls behind; relayed frames are dropped (other nodes read them from the store)"
                );
            }
        }
    }
}

impl Relay for BusRelay {
    fn frame(&self, game: &str, seq: u64, audience: Audience, frame: &Frame) {
        crate::metrics::cluster_relayed();
        self.send(
            game,
            Relayed::Frame {
                seq,
                audience,
                frame: frame.clone(),
            },
        );
    }

    fn holds(&self, game: &str, fence: u64) -> bool {
        self.tenure.holds(game, fence)
    }

    fn closed(&self, game: &str) {
        self.send(game, Relayed::Closed);
    }

    fn hears_others(&self) -> bool {
        self.bus.is_connected()
    }
}
