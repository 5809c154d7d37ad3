//! The pieces of a room's commit that need no room: a step's events turned into the
//! store's batch and the frames everyone sees, and the backoff that keeps a failing
//! store from being retried in a tight loop by the clock.

use std::time::Duration;

use tokio::time::Instant;

use crate::fanout::{Frame, encode};
use crate::protocol::{ErrorCode, EventFrame, GameEvent, Refusal};
use crate::rules::GameResult;
use crate::store::{Append, EventRecord, StoreError};

/// A step's events, ready to store and then to send.
pub struct Staged {
    /// Everything the store commits in one transaction.
    pub batch: Vec<Append>,
    /// The public frames, in seq order.
    pub frames: Vec<Frame>,
    /// The result, when the step ended the game.
    pub ended: Option<String>,
    /// The result before and after, when a referee changed a finished game's.
    pub rejudged: Option<(GameResult, GameResult)>,
}

/// Encodes `events` (numbered from `first_seq`) once each: the stored form goes in the
/// batch, the public form (a sealed move without its vertex) in the frames.
pub fn stage(
    game_id: &str,
    first_seq: u64,
    events: Vec<GameEvent>,
    move_count: u32,
    wall_ms: i64,
) -> Staged {
    let mut batch = Vec::with_capacity(events.len() + 2);
    let mut frames = Vec::with_capacity(events.len());
    let mut ended = None;
    let mut rejudged = None;
    for (seq, event) in (first_seq..).zip(events) {
        let kind = event.kind();
        match &event {
            GameEvent::GameEnded { result, .. } => ended = Some(result.to_string()),
            GameEvent::ResultChanged {
                previous, result, ..
            } => rejudged = Some((*previous, *result)),
            _ => {}
        }
        let public = event.public();
        let stored = encode(&EventFrame {
            game_id: game_id.to_string(),
            seq,
            event,
        });
        batch.push(Append::Event(event_record(
            game_id, seq, kind, &stored, wall_ms,
        )));
        frames.push(match public {
            Some(event) => encode(&EventFrame {
                game_id: game_id.to_string(),
                seq,
                event,
            }),
            None => stored,
        });
    }
    batch.push(Append::MoveCount {
        game_id: game_id.to_string(),
        move_count,
    });
    if let Some(result) = &ended {
        batch.push(Append::Finish {
            game_id: game_id.to_string(),
            result: result.clone(),
            ended_at_ms: wall_ms,
        });
    }
    if let Some((_, result)) = &rejudged {
        batch.push(Append::Rejudge {
            game_id: game_id.to_string(),
            result: result.to_string(),
        });
    }
    Staged {
        batch,
        frames,
        ended,
        rejudged,
    }
}

/// One event as the store keeps it.
pub fn event_record(game_id: &str, seq: u64, kind: &str, frame: &Frame, at_ms: i64) -> EventRecord {
    EventRecord {
        game_id: game_id.to_string(),
        seq,
        kind: kind.to_string(),
        payload: frame.as_str().to_string(),
        at_ms,
    }
}

/// The answer when the store refuses a commit.
pub fn unavailable(e: &StoreError) -> Refusal {
    Refusal::new(
        ErrorCode::Unavailable,
        format!("the game could not be saved, so nothing changed: {e}"),
    )
}

/// The refusal of a command for a game that is moving to another node (in a cluster):
/// nothing was done, and sent again in a moment it reaches the game where it runs next.
pub fn moving() -> Refusal {
    Refusal::new(
        ErrorCode::Unavailable,
        "this game is moving to another server node; send it again in a moment",
    )
}

/// The first wait after the store refuses a commit the clock asked for.
const FIRST_RETRY: Duration = Duration::from_millis(100);
/// The longest wait between retries.
const LAST_RETRY: Duration = Duration::from_secs(5);

/// When a room may next ask a failing store for a commit of its own (a flag, a start):
/// waits double from [`FIRST_RETRY`] up to [`LAST_RETRY`] while the store keeps failing.
#[derive(Default)]
pub struct Backoff {
    /// Set while the store fails: the next retry's instant and the wait after it.
    failing: Option<(Instant, Duration)>,
}

impl Backoff {
    /// Not before this instant (none while the store works).
    pub fn retry_at(&self) -> Option<Instant> {
        self.failing.map(|(at, _)| at)
    }

    /// The store refused a commit at `now`. True when this starts a streak of failures
    /// (the one worth logging).
    pub fn failed(&mut self, now: Instant) -> bool {
        let wait = self
            .failing
            .map_or(FIRST_RETRY, |(_, wait)| (wait * 2).min(LAST_RETRY));
        let first = self.failing.is_none();
        self.failing = Some((now + wait, wait));
        first
    }

    /// The store committed. True when this ends a streak of failures.
    pub fn succeeded(&mut self) -> bool {
        self.failing.take().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Color, Move};

    #[test]
    fn a_sealed_move_is_stored_whole_and_sent_without_its_vertex() {
        let sealed = GameEvent::MoveSealed {
            by: Color::Black,
            move_number: 7,
            vertex: Some(Move::parse("D4", 19).expect("a vertex")),
            clock: None,
        };
        let staged = stage("g", 9, vec![sealed], 6, 1000);
        let Append::Event(stored) = &staged.batch[0] else {
            panic!("the event comes first")
        };
        assert_eq!(stored.seq, 9);
        assert!(stored.payload.contains("D4"), "{}", stored.payload);
        assert!(!staged.frames[0].contains("D4"), "{}", staged.frames[0]);
        assert!(matches!(
            staged.batch[1],
            Append::MoveCount { move_count: 6, .. }
        ));
        assert_eq!(staged.batch.len(), 2, "no finish for a game that goes on");
        assert_eq!(staged.ended, None);
    }

    #[test]
    fn retries_wait_longer_up_to_a_bound_and_only_a_streak_start_is_news() {
        let now = Instant::now();
        let mut backoff = Backoff::default();
        assert_eq!(backoff.retry_at(), None);
        assert!(backoff.failed(now));
        assert_eq!(backoff.retry_at(), Some(now + FIRST_RETRY));
        assert!(!backoff.failed(now));
        assert_eq!(backoff.retry_at(), Some(now + FIRST_RETRY * 2));
        for _ in 0..20 {
            backoff.failed(now);
        }
        assert_eq!(backoff.retry_at(), Some(now + LAST_RETRY));
        assert!(backoff.succeeded());
        assert!(!backoff.succeeded());
        assert_eq!(backoff.retry_at(), None);
    }
}
