//! The waker of sleeping correspondence games (one node): one task that reads the
//! store's deadline index and rebuilds the room of each game that is due, whose timer
//! then records what is due (a flag falls) before the room sleeps again or closes.
//!
//! It sleeps until the index's next deadline, and is nudged whenever a room stops (a
//! game that just went to sleep may be due sooner than what it waits for). In a cluster
//! it does not run: a due game counts among the games without an owner there, and the
//! node whose sweep claims its lease wakes it (`store::Leases::orphans`).

use std::sync::Weak;
use std::time::Duration;

use tokio::time::sleep_until;

use super::Registry;
use crate::clock::Millis;
use crate::correspondence::calendar;

/// Games woken in one round; more due wait for the next round, at once.
const BATCH: u32 = 256;
/// How soon a game still due after its wake is looked at again (its room's own commit
/// takes it out of the index; a store that failed is tried again).
const RECHECK: Millis = 1_000;
/// The longest sleep with nothing in the index: a game that fell asleep is a nudge.
const IDLE: Millis = 3_600_000;
/// The wait after the store could not be read.
const RETRY: Duration = Duration::from_secs(1);

pub fn spawn(registry: Weak<Registry>) {
    tokio::spawn(run(registry));
}

async fn run(registry: Weak<Registry>) {
    let Some(nudged) = registry.upgrade().map(|r| r.slept.clone()) else {
        return;
    };
    loop {
        let Some(next) = wake_due(&registry).await else {
            return;
        };
        tokio::select! {
            () = sleep_until(calendar::instant_at(next)) => {}
            () = nudged.notified() => {}
        }
    }
}

/// Wakes the games due now; returns when to look again (None: the server is going).
async fn wake_due(registry: &Weak<Registry>) -> Option<Millis> {
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
    for game_id in &due {
        if !registry.is_awake(game_id) {
            tracing::debug!(game = %game_id, "waking a correspondence game that is due");
            if let Err(refusal) = registry.room(game_id).await {
                tracing::warn!(game = %game_id, %refusal, "a due correspondence game could not be woken");
            }
        }
    }
    // A game due never (its player away) is in the index too: sleep at most IDLE.
    let next = next.map_or(now + IDLE, |t| (t.max(0) as Millis).min(now + IDLE));
    Some(match due.len() {
        0 => next,
        n if n as u32 == BATCH => now,
        _ => next.min(now + RECHECK),
    })
}
