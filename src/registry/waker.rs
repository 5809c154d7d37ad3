//! The waker of sleeping correspondence games: one task that reads the store's deadline
//! index and wakes each game that is due, whose room's timer then records what is due (a
//! flag falls) before the room sleeps again or closes.
//!
//! It sleeps until the index's next deadline, and is nudged whenever a room stops (a game
//! that just went to sleep may be due sooner than what it waits for). On one node it
//! always runs and wakes a game by rebuilding its room. In a cluster it runs on one node
//! at a time, the holder of the lease on the job [`JOB`] (`cluster::singleton`): it wakes
//! a due game by claiming the game's own lease and rebuilding its room there, or leaves
//! it to the live node that holds it, whose room's timer sees to it. The nodes' sweeps
//! for games without an owner leave the games of the index to it
//! (`store::Leases::orphans`), so each due game has one node responsible for it. A room
//! that stops on another node nudges it over the bus; since the bus may lose a nudge, it
//! reads the index at least once a lease there.

use std::sync::Weak;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::sleep_until;

use super::Registry;
use crate::clock::Millis;
use crate::correspondence::calendar;

/// The name of the waker's lease in a cluster.
pub const JOB: &str = "waker";

/// Games woken in one round; more due wait for the next round, at once.
const BATCH: u32 = 256;
/// How soon a game still due after its wake is looked at again (its room's own commit
/// takes it out of the index; a store that failed, or a lease not yet lapsed, is tried
/// again).
const RECHECK: Millis = 1_000;
/// The longest sleep on one node with nothing in the index: a game that fell asleep is a
/// nudge, and a nudge there is never lost.
const IDLE: Millis = 3_600_000;
/// The wait after the store could not be read.
const RETRY: Duration = Duration::from_secs(1);

/// When this node wakes games, and how long it trusts an index it has read.
pub struct Turn {
    /// Whether this node holds the waker's lease now; None on one node: always.
    held: Option<watch::Receiver<bool>>,
    /// The longest sleep: how late a game whose nudge was lost is woken at worst.
    longest: Millis,
}

impl Turn {
    /// One node: its waker always runs.
    pub fn always() -> Turn {
        Turn {
            held: None,
            longest: IDLE,
        }
    }

    /// A node of a cluster: its waker runs while `held` says it holds the lease, and
    /// reads the index at least once a `lease`.
    pub fn while_held(held: watch::Receiver<bool>, lease: Duration) -> Turn {
        Turn {
            held: Some(held),
            longest: lease.as_millis() as Millis,
        }
    }

    fn holds(&self) -> bool {
        self.held.as_ref().is_none_or(|held| *held.borrow())
    }

    /// Returns once this node's turn has come: false if it never will (its lease is no
    /// longer kept: the node stops).
    async fn begins(&mut self) -> bool {
        match &mut self.held {
            None => true,
            Some(held) => held.wait_for(|held| *held).await.is_ok(),
        }
    }

    /// Returns once this node's turn has ended (never on one node).
    async fn ends(&mut self) {
        match &mut self.held {
            None => std::future::pending().await,
            Some(held) => {
                let _ = held.wait_for(|held| !*held).await;
            }
        }
    }
}

pub fn spawn(registry: Weak<Registry>, turn: Turn) {
    tokio::spawn(run(registry, turn));
}

async fn run(registry: Weak<Registry>, mut turn: Turn) {
    let Some(nudged) = registry.upgrade().map(|r| r.slept.clone()) else {
        return;
    };
    loop {
        if !turn.begins().await {
            return;
        }
        let Some(next) = wake_due(&registry, &turn).await else {
            return;
        };
        tokio::select! {
            () = sleep_until(calendar::instant_at(next)) => {}
            () = nudged.notified() => {}
            () = turn.ends() => {}
        }
    }
}

/// Wakes the games due now; returns when to look again (None: the server is going).
async fn wake_due(registry: &Weak<Registry>, turn: &Turn) -> Option<Millis> {
    let registry = registry.upgrade().filter(|r| !r.stopping())?;
    let now = calendar::now_ms();
    let store = registry.context().store.clone();
    let at = i64::try_from(now).unwrap_or(i64::MAX);
    let read = tokio::task::spawn_blocking(move || {
        Ok::<_, crate::store::StoreError>((store.due_games(at, BATCH)?, store.next_deadline(at)?))
    })
    .await;
    let (due, next) = match read {
        Ok(Ok(read)) => read,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "the deadline index could not be read; trying again");
            return Some(now + RETRY.as_millis() as Millis);
        }
        Err(e) => {
            tracing::error!(error = %e, "the deadline index read did not finish");
            return Some(now + RETRY.as_millis() as Millis);
        }
    };
    let mut woken = 0;
    for game_id in due.iter().take_while(|_| turn.holds()) {
        tracing::debug!(game = %game_id, "a correspondence game is due");
        match registry.place.wake(&registry, game_id).await {
            Ok(here) => woken += usize::from(here),
            Err(refusal) => {
                tracing::warn!(game = %game_id, %refusal, "a due correspondence game could not be woken")
            }
        }
    }
    // A game due never (its player away) is in the index too: sleep at most `longest`.
    let longest = now + turn.longest;
    let next = next.map_or(longest, |t| (t.max(0) as Millis).min(longest));
    Some(match due.len() {
        0 => next,
        // A full batch that woke games: the next one at once. One whose games all run
        // already (their rooms record what is due and leave the index) is read again
        // after RECHECK, not in a loop.
        n if n as u32 == BATCH && woken > 0 => now,
        _ => next.min(now + RECHECK),
    })
}
