//! Lease renewal on an OS thread of its own (`lease-renewal`), off the tokio scheduler:
//! a node whose workers are swamped by connections, or busy taking games over, still
//! renews on time, where a renewal task would wait its turn behind them and let the
//! node's tenure go stale. The thread only renews; what follows from a lost lease
//! (stopping the room) is the async side's, handed over through a bounded queue.
//!
//! Safety is [`Tenure`]'s and unchanged: a renewal marks the tenure with the instant its
//! statement *started*, so the node answers for its games only while a lease has not
//! passed since a moment the store still knew them as its own. A node paused (SIGSTOP)
//! pauses this thread with it; a node cut off from the store fails to renew. Either way
//! no mark is made and the node goes stale within a lease, as the store's lease lapses.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use tokio::sync::mpsc::error::TrySendError;

use super::Tenure;
use crate::store::Leases;

/// How many batches of lost games wait for the async side at most; beyond, the thread
/// keeps them and hands them over at a later renewal rather than wait itself.
const LOST_BATCHES: usize = 4;

/// What the thread renews with.
pub(super) struct Renewer {
    pub(super) tenure: Arc<Tenure>,
    pub(super) leases: Arc<dyn Leases>,
    pub(super) node: String,
    pub(super) lease_ms: u64,
}

impl Renewer {
    /// Starts renewing every quarter of a lease until `stop` is sent to or dropped (the
    /// node lets its games go, or is dropped) or the returned queue of lost games is
    /// dropped (nobody is left to stop their rooms).
    ///
    /// A quarter, not a third: a renewal must *start and succeed* within a lease of the
    /// last good one, and under load a statement may wait for a pooled connection or
    /// behind a batch of appends holding its rows. A quarter leaves room for one renewal
    /// to fail or run late with two more tries before the tenure goes stale, for one
    /// more small `UPDATE` per node per lease.
    pub(super) fn spawn(
        self,
        stop: Receiver<()>,
    ) -> std::io::Result<tokio::sync::mpsc::Receiver<Vec<String>>> {
        let (lost, lost_rx) = tokio::sync::mpsc::channel(LOST_BATCHES);
        std::thread::Builder::new()
            .name("lease-renewal".into())
            .spawn(move || self.run(&stop, &lost))?;
        Ok(lost_rx)
    }

    fn run(&self, stop: &Receiver<()>, lost: &tokio::sync::mpsc::Sender<Vec<String>>) {
        let every = Duration::from_millis(self.lease_ms / 4);
        let mut unsent: Vec<String> = Vec::new();
        let mut next = Instant::now();
        loop {
            // Paced by the starts of renewals, so a slow one does not push back the next.
            match stop.recv_timeout(next.saturating_duration_since(Instant::now())) {
                Err(RecvTimeoutError::Timeout) if !lost.is_closed() => {}
                _ => return,
            }
            next = Instant::now() + every;
            unsent.extend(self.renew());
            if unsent.is_empty() {
                continue;
            }
            match lost.try_send(std::mem::take(&mut unsent)) {
                Ok(()) => {}
                Err(TrySendError::Full(games)) => unsent = games,
                Err(TrySendError::Closed(_)) => return,
            }
        }
    }

    /// Renews every lease the node holds; returns the games it lost meanwhile, already
    /// out of its tenure.
    fn renew(&self) -> Vec<String> {
        let games: Vec<(String, u64)> = self
            .tenure
            .owned
            .iter()
            .map(|e| (e.key().to_string(), *e.value()))
            .collect();
        let started = Instant::now();
        if games.is_empty() {
            self.tenure.mark(started);
            return Vec::new();
        }
        let renewed = self.leases.renew(&self.node, &games, self.lease_ms);
        crate::metrics::cluster_renewal();
        match renewed {
            Ok(lost) => {
                // The lost games go first: nothing may answer for them as fresh. A game
                // claimed here again meanwhile, under a newer number, is not lost.
                let lost: HashSet<String> = lost.into_iter().collect();
                let lost: Vec<String> = games
                    .into_iter()
                    .filter(|(game, fence)| lost.contains(game) && self.tenure.forget(game, *fence))
                    .map(|(game, _)| game)
                    .collect();
                lost.iter()
                    .for_each(|_| crate::metrics::cluster_lease_lost());
                self.tenure.mark(started);
                lost
            }
            Err(e) => {
                tracing::error!(error = %e, "leases could not be renewed");
                Vec::new()
            }
        }
    }
}
