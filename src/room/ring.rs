//! The public frames of a game's most recent events, for a rejoining client's catch-up.
//! Bounded, so a long game costs a room the same memory as a short one; anything older
//! is read back from the store.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

use crate::fanout::{Frame, encode};
use crate::protocol::{ErrorCode, EventFrame, Refusal};
use crate::store::Store;

/// Recent events a room keeps in memory.
pub const RECENT: usize = 512;

/// The last [`RECENT`] public frames, with the seq of the oldest.
pub struct Ring {
    frames: VecDeque<Frame>,
    /// The seq of `frames[0]`; one past the last when empty.
    first_seq: u64,
}

impl Ring {
    /// An empty ring whose next frame will have seq `next_seq`.
    pub fn starting_at(next_seq: u64) -> Ring {
        Ring {
            frames: VecDeque::new(),
            first_seq: next_seq,
        }
    }

    /// Adds the next event's frame, dropping the oldest when full.
    pub fn push(&mut self, frame: Frame) {
        if self.frames.len() == RECENT {
            self.frames.pop_front();
            self.first_seq += 1;
        }
        self.frames.push_back(frame);
    }

    /// The seq of the oldest frame held (one past the last when none is).
    pub fn first_seq(&self) -> u64 {
        self.first_seq
    }

    /// The frames after seq `since` that the ring holds.
    pub fn after(&self, since: u64) -> impl Iterator<Item = &Frame> {
        let skip = since.saturating_sub(self.first_seq - 1) as usize;
        self.frames.iter().skip(skip)
    }
}

/// An event's frame as everyone may see it: a sealed move's vertex stays hidden (see
/// [`crate::protocol::GameEvent::public`]). `stored` is `frame` as the log holds it.
pub fn public_frame(frame: EventFrame, stored: &str) -> Frame {
    match frame.event.public() {
        Some(event) => encode(&EventFrame { event, ..frame }),
        None => Frame::from(stored.to_string()),
    }
}

/// The public frames of every event of `game_id` after seq `since`: those `recent`
/// holds from memory, older ones from the store.
pub async fn missed_since(
    recent: &Ring,
    store: &Arc<dyn Store>,
    game_id: &str,
    since: u64,
) -> Result<Vec<Frame>, Refusal> {
    let held = recent.first_seq();
    let mut missed = Vec::new();
    if since + 1 < held {
        missed = stored_frames(store, game_id, since + 1..held).await?;
        missed.reserve(RECENT);
    }
    missed.extend(recent.after(since).cloned());
    Ok(missed)
}

/// The public frames of the events of `game_id` numbered `seqs`, read from the store (on
/// the blocking pool); all of them or an error.
pub async fn stored_frames(
    store: &Arc<dyn Store>,
    game_id: &str,
    seqs: Range<u64>,
) -> Result<Vec<Frame>, Refusal> {
    let unreadable = |e: &dyn std::fmt::Display| {
        tracing::error!(error = %e, "could not read missed events back");
        Refusal::new(
            ErrorCode::Unavailable,
            format!("the events you missed could not be read: {e}"),
        )
    };
    let (store, id) = (store.clone(), game_id.to_string());
    let want = seqs.end.saturating_sub(seqs.start);
    let records = tokio::task::spawn_blocking(move || store.events_in(&id, seqs))
        .await
        .map_err(|e| unreadable(&e))?
        .map_err(|e| unreadable(&e))?;
    if records.len() as u64 != want {
        let gap = format!("{} of {want} events found", records.len());
        return Err(unreadable(&gap));
    }
    let mut frames = Vec::with_capacity(records.len());
    for record in records {
        let frame: EventFrame =
            serde_json::from_str(&record.payload).map_err(|e| unreadable(&e))?;
        frames.push(public_frame(frame, &record.payload));
    }
    Ok(frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_most_recent_frames_by_seq() {
        let mut ring = Ring::starting_at(1);
        assert_eq!(ring.after(0).count(), 0);
        for seq in 1..=RECENT as u64 + 10 {
            ring.push(Frame::from(seq.to_string()));
        }
        assert_eq!(ring.first_seq(), 11);
        let after = |since| ring.after(since).map(|f| f.to_string()).collect::<Vec<_>>();
        assert_eq!(after(RECENT as u64 + 8), ["521", "522"]);
        assert_eq!(after(10).len(), RECENT);
        assert_eq!(after(10)[0], "11");
        assert_eq!(after(RECENT as u64 + 10), Vec::<String>::new());
    }
}
