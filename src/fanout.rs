//! How frames leave the server: serialised once ([`encode`]) and queued on each
//! connection's own bounded outbound queue ([`Outbox`]). Rooms, the lobby and the
//! connections all use it, so it belongs to none of them.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use tokio::sync::mpsc::error::TryRecvError;
use tokio::sync::{Notify, mpsc};

/// One serialised JSON text frame, shared by every queue it is pushed to.
pub type Frame = axum::extract::ws::Utf8Bytes;

/// Serialises a message once, for any number of receivers.
pub fn encode<T: Serialize>(msg: &T) -> Frame {
    match serde_json::to_string(msg) {
        Ok(text) => Frame::from(text),
        // Our message types always serialise; if one ever does not, say so on the wire.
        Err(e) => Frame::from(format!(
            r#"{{"type":"error","code":"unavailable","message":"the server could not encode a message: {e}"}}"#
        )),
    }
}

/// What one slot of a queue holds: a live frame, or a whole catch-up (the events a
/// rejoining client missed), which must not compete with live frames for slots.
enum Item {
    Live(Frame),
    CatchUp(Vec<Frame>),
}

/// Bytes waiting in one queue, live and catch-up apart: the live budget decides when a
/// reader is too slow, and a catch-up (bounded by the game's own log) never counts
/// against it.
#[derive(Debug, Default)]
struct Queued {
    live: AtomicUsize,
    catch_up: AtomicUsize,
}

/// The sending side of one connection's outbound queue.
#[derive(Clone, Debug)]
pub struct Outbox {
    conn: u64,
    tx: mpsc::Sender<Item>,
    queued: Arc<Queued>,
    max_bytes: usize,
    overflow: Arc<Notify>,
}

/// The connection's side: frames to write, and a signal that it fell too far behind.
pub struct Inbox {
    pub frames: Frames,
    pub overflow: Arc<Notify>,
}

/// The frames queued for one connection, in order, a catch-up unrolled frame by frame.
pub struct Frames {
    rx: mpsc::Receiver<Item>,
    queued: Arc<Queued>,
    /// The rest of the catch-up being written.
    catch_up: VecDeque<Frame>,
}

impl std::fmt::Debug for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Item::Live(frame) => write!(f, "Live({} bytes)", frame.len()),
            Item::CatchUp(frames) => write!(f, "CatchUp({} frames)", frames.len()),
        }
    }
}

impl Outbox {
    /// A queue for connection `conn` of `capacity` frames and `max_bytes` bytes.
    pub fn new(conn: u64, capacity: usize, max_bytes: usize) -> (Outbox, Inbox) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let overflow = Arc::new(Notify::new());
        let queued = Arc::new(Queued::default());
        (
            Outbox {
                conn,
                tx,
                queued: queued.clone(),
                max_bytes: max_bytes.max(1),
                overflow: overflow.clone(),
            },
            Inbox {
                frames: Frames {
                    rx,
                    queued,
                    catch_up: VecDeque::new(),
                },
                overflow,
            },
        )
    }

    pub fn conn(&self) -> u64 {
        self.conn
    }

    /// Queues a frame without waiting. False when the connection is gone or its queue is
    /// full (in frames or in bytes); in the second case the connection is told to close
    /// as a slow consumer.
    pub fn push(&self, frame: Frame) -> bool {
        let len = frame.len();
        let live = &self.queued.live;
        // Counted before the send, so the reader never releases bytes not yet counted.
        let before = live.fetch_add(len, Ordering::AcqRel);
        let sent = (before.saturating_add(len) <= self.max_bytes)
            .then(|| self.tx.try_send(Item::Live(frame)));
        if let Some(Ok(())) = sent {
            return true;
        }
        live.fetch_sub(len, Ordering::AcqRel);
        match sent {
            Some(Err(mpsc::error::TrySendError::Closed(_))) => false,
            _ => self.too_slow(),
        }
    }

    /// Queues the events a rejoining client missed, in one slot. A catch-up is taken
    /// whatever its size when no other is waiting, and beside others within the byte
    /// budget, so any gap can be caught up while one connection holds at most its
    /// budget and one game's log. False, as for [`Outbox::push`], when it cannot be.
    pub fn push_catch_up(&self, frames: Vec<Frame>) -> bool {
        if frames.is_empty() {
            return true;
        }
        let len: usize = frames.iter().map(|f| f.len()).sum();
        let waiting = &self.queued.catch_up;
        let before = waiting.fetch_add(len, Ordering::AcqRel);
        let fits = before == 0 || before.saturating_add(len) <= self.max_bytes;
        let sent = fits.then(|| self.tx.try_send(Item::CatchUp(frames)));
        if let Some(Ok(())) = sent {
            return true;
        }
        waiting.fetch_sub(len, Ordering::AcqRel);
        match sent {
            Some(Err(mpsc::error::TrySendError::Closed(_))) => false,
            _ => self.too_slow(),
        }
    }

    fn too_slow(&self) -> bool {
        crate::metrics::slow_consumer();
        self.overflow.notify_one();
        false
    }
}

impl Frames {
    /// The next frame, waiting for one; `None` once every sender is gone.
    pub async fn recv(&mut self) -> Option<Frame> {
        if let Some(frame) = self.next_of_catch_up() {
            return Some(frame);
        }
        loop {
            let item = self.rx.recv().await?;
            if let Some(frame) = self.unroll(item) {
                return Some(frame);
            }
        }
    }

    /// The next frame if one is queued.
    pub fn try_recv(&mut self) -> Result<Frame, TryRecvError> {
        if let Some(frame) = self.next_of_catch_up() {
            return Ok(frame);
        }
        loop {
            let item = self.rx.try_recv()?;
            if let Some(frame) = self.unroll(item) {
                return Ok(frame);
            }
        }
    }

    fn next_of_catch_up(&mut self) -> Option<Frame> {
        let frame = self.catch_up.pop_front()?;
        self.queued
            .catch_up
            .fetch_sub(frame.len(), Ordering::AcqRel);
        Some(frame)
    }

    /// A slot's first frame (`None` only for an empty catch-up, which is never queued).
    fn unroll(&mut self, item: Item) -> Option<Frame> {
        match item {
            Item::Live(frame) => {
                self.queued.live.fetch_sub(frame.len(), Ordering::AcqRel);
                Some(frame)
            }
            Item::CatchUp(frames) => {
                self.catch_up = frames.into();
                self.next_of_catch_up()
            }
        }
    }

    /// Frames waiting, a queued catch-up counting as one.
    pub fn len(&self) -> usize {
        self.rx.len() + self.catch_up.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    fn frame(bytes: usize) -> Frame {
        Frame::from("x".repeat(bytes))
    }

    #[test]
    fn a_reader_over_its_byte_budget_is_too_slow_though_its_frame_count_is_low() {
        let (out, mut inbox) = Outbox::new(1, 100, 1000);
        assert!(out.push(frame(600)));
        assert!(!out.push(frame(600)), "1200 bytes is over the budget");
        assert!(inbox.overflow.notified().now_or_never().is_some());
        assert_eq!(inbox.frames.len(), 1, "the refused frame was not queued");
        // Reading releases the bytes: the same frame now fits.
        assert_eq!(inbox.frames.try_recv().map(|f| f.len()), Ok(600));
        assert!(out.push(frame(600)));
    }

    #[test]
    fn a_catch_up_takes_one_slot_and_any_size_but_not_two_big_ones() {
        let (out, mut inbox) = Outbox::new(1, 2, 1000);
        let missed: Vec<Frame> = (0..700).map(|i| Frame::from(format!("{i:04}"))).collect();
        assert!(out.push_catch_up(missed), "2800 bytes, alone: taken");
        assert!(out.push(frame(900)), "live frames keep their own budget");
        assert!(
            !out.push_catch_up(vec![frame(10)]),
            "a second over the budget"
        );
        for i in 0..700 {
            assert_eq!(inbox.frames.try_recv().unwrap().as_str(), format!("{i:04}"));
        }
        assert_eq!(inbox.frames.try_recv().map(|f| f.len()), Ok(900));
        assert_eq!(inbox.frames.try_recv(), Err(TryRecvError::Empty));
        assert!(out.push_catch_up(vec![frame(10)]), "released once written");
    }
}
