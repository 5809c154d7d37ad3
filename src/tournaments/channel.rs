//! A tournament's channel on this node: the connections here that watch each tournament,
//! and the frames its director sends them. In a cluster the director runs on one node
//! and the watchers are on every node: each frame is also published on the bus, and the
//! frames of directors elsewhere are handed to the watchers here ([`super::cluster`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::PoisonError;

use tokio::sync::mpsc;

use crate::fanout::{Frame, Outbox};
use crate::protocol::{ErrorCode, Refusal};

/// Connections watching one tournament on one node at most.
pub const MAX_WATCHERS: usize = 10_000;

/// Frames waiting to go out on the bus at most; beyond, a frame is dropped for the
/// other nodes (their watchers read the tournament again on reconnecting).
pub const OUTGOING: usize = 1024;

/// The watchers here, by tournament, and where frames go for the other nodes.
#[derive(Default)]
pub struct Channel {
    watchers: Mutex<HashMap<String, Vec<Outbox>>>,
    /// The frames for the other nodes, in order, to the task that publishes them.
    outgoing: Mutex<Option<mpsc::Sender<(String, Frame)>>>,
}

impl Channel {
    /// From now on, frames told here go to the other nodes too, through `outgoing`.
    pub fn publish_to(&self, outgoing: mpsc::Sender<(String, Frame)>) {
        *self.outgoing.lock().unwrap_or_else(PoisonError::into_inner) = Some(outgoing);
    }

    /// Adds `outbox` to the watchers of `id` (once).
    pub fn watch(&self, id: &str, outbox: Outbox) -> Result<(), Refusal> {
        let mut all = self.watchers.lock().unwrap_or_else(PoisonError::into_inner);
        let watchers = all.entry(id.to_string()).or_default();
        if watchers.iter().any(|w| w.conn() == outbox.conn()) {
            return Ok(());
        }
        if watchers.len() >= MAX_WATCHERS {
            return Err(Refusal::new(
                ErrorCode::LimitReached,
                "this tournament has as many watchers as it takes",
            ));
        }
        watchers.push(outbox);
        Ok(())
    }

    pub fn unwatch(&self, id: &str, conn: u64) {
        let mut all = self.watchers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(watchers) = all.get_mut(id) {
            watchers.retain(|w| w.conn() != conn);
            if watchers.is_empty() {
                all.remove(id);
            }
        }
    }

    /// A frame of the director of `id`, running here: to the watchers here and to the
    /// other nodes.
    pub fn tell(&self, id: &str, frame: Frame) {
        self.deliver(id, frame.clone());
        let outgoing = self.outgoing.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(outgoing) = outgoing.as_ref()
            && outgoing.try_send((id.to_string(), frame)).is_err()
        {
            tracing::warn!(tournament = %id, "a tournament event was not sent to the other nodes");
        }
    }

    /// A frame of `id` to the watchers here, forgetting those whose connection is gone.
    pub fn deliver(&self, id: &str, frame: Frame) {
        let mut all = self.watchers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(watchers) = all.get_mut(id) {
            watchers.retain(|w| w.push(frame.clone()));
            if watchers.is_empty() {
                all.remove(id);
            }
        }
    }
}
