//! How frames leave the server: serialised once ([`encode`]) and queued on each
//! connection's own bounded outbound queue ([`Outbox`]). Rooms, the lobby and the
//! connections all use it, so it belongs to none of them.
//!
//! The queue is a mutex around a `VecDeque` and the reader's waker, not a tokio channel:
//! a push is one uncontended lock, a frame written one more, and an idle connection's
//! queue holds no buffer at all; a bounded tokio channel costs a semaphore (a lock per
//! receive), a 32-slot block allocated up front and cache-padded halves, per connection.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Poll, Waker};

use serde::Serialize;

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

/// One connection's queue, shared by its senders and its reader.
#[derive(Debug)]
struct Queue {
    state: Mutex<State>,
    /// Most slots waiting (a catch-up is one).
    capacity: usize,
    /// Most bytes of live frames waiting.
    max_bytes: usize,
}

/// Bytes waiting are counted live and catch-up apart: the live budget decides when a
/// reader is too slow, and a catch-up (bounded by the game's own log) never counts
/// against it.
#[derive(Debug, Default)]
struct State {
    items: VecDeque<Item>,
    live_bytes: usize,
    /// Catch-up bytes not yet handed to the writer, the unrolled rest included.
    catch_up_bytes: usize,
    /// The reader, when it waits for a frame.
    waker: Option<Waker>,
    senders: usize,
    /// A push found the queue full: the connection is to close as a slow consumer.
    too_slow: bool,
    /// The reader is gone: pushes fail.
    closed: bool,
    /// The server ends the connection, with this close code and reason, once what is
    /// queued has gone (an operator disabled its account, [`Outbox::end`]).
    ending: Option<(u16, &'static str)>,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; if something ever did, the counts are
        // still whole (every change is one statement), so go on with them.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The sending side of one connection's outbound queue.
#[derive(Debug)]
pub struct Outbox {
    conn: u64,
    queue: Arc<Queue>,
}

/// The connection's side: the frames queued for it, in order, a catch-up unrolled frame
/// by frame.
#[derive(Debug)]
pub struct Inbox {
    queue: Arc<Queue>,
    /// The rest of the catch-up being written.
    catch_up: VecDeque<Frame>,
}

/// What the reader of a queue gets next.
#[derive(Debug, PartialEq)]
pub enum Next {
    Frame(Frame),
    /// A frame could not be queued: the connection fell too far behind and must close.
    TooSlow,
    /// Every sender is gone.
    Ended,
    /// The server ends the connection with this close code and reason ([`Outbox::end`]).
    Close(u16, &'static str),
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
        let queue = Arc::new(Queue {
            state: Mutex::new(State {
                senders: 1,
                ..State::default()
            }),
            capacity: capacity.max(1),
            max_bytes: max_bytes.max(1),
        });
        (
            Outbox {
                conn,
                queue: queue.clone(),
            },
            Inbox {
                queue,
                catch_up: VecDeque::new(),
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
        self.queue_if(Item::Live(frame), |state, max| {
            let fits = state.live_bytes.saturating_add(len) <= max;
            if fits {
                state.live_bytes += len;
            }
            fits
        })
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
        self.queue_if(Item::CatchUp(frames), |state, max| {
            let fits = state.catch_up_bytes == 0 || state.catch_up_bytes.saturating_add(len) <= max;
            if fits {
                state.catch_up_bytes += len;
            }
            fits
        })
    }

    /// Queues `item` if a slot is free and `budget` (given the byte limit) counts it in,
    /// and wakes the reader for it; or, the first time it does not fit, for the news that
    /// its connection is too slow.
    fn queue_if(&self, item: Item, budget: impl FnOnce(&mut State, usize) -> bool) -> bool {
        let mut state = self.queue.lock();
        if state.closed || state.too_slow || state.ending.is_some() {
            return false;
        }
        let queued =
            state.items.len() < self.queue.capacity && budget(&mut state, self.queue.max_bytes);
        if queued {
            state.items.push_back(item);
        } else {
            state.too_slow = true;
            crate::metrics::slow_consumer();
        }
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        queued
    }
}

impl Outbox {
    /// Ends the connection: the frames queued before go out, then it closes with `code`
    /// and `reason`. Nothing queued after is sent.
    pub fn end(&self, code: u16, reason: &'static str) {
        let mut state = self.queue.lock();
        if state.ending.is_none() {
            state.ending = Some((code, reason));
        }
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl Clone for Outbox {
    fn clone(&self) -> Self {
        self.queue.lock().senders += 1;
        Outbox {
            conn: self.conn,
            queue: self.queue.clone(),
        }
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        let mut state = self.queue.lock();
        state.senders -= 1;
        let waker = (state.senders == 0).then(|| state.waker.take()).flatten();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl Inbox {
    /// The next frame, waiting for one; or that the connection is too slow, which comes
    /// before any frame still queued.
    pub async fn recv(&mut self) -> Next {
        poll_fn(|cx| {
            let mut state = self.queue.lock();
            match take_next(&mut state, &mut self.catch_up) {
                Some(next) => Poll::Ready(next),
                None => {
                    // Under the lock a sender takes to wake us: no push is missed.
                    state.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }

    /// The next frame if one is queued (and the connection is not too slow).
    pub fn try_recv(&mut self) -> Option<Frame> {
        match take_next(&mut self.queue.lock(), &mut self.catch_up)? {
            Next::Frame(frame) => Some(frame),
            Next::TooSlow | Next::Ended | Next::Close(..) => None,
        }
    }

    /// Frames waiting, a queued catch-up counting as one.
    pub fn len(&self) -> usize {
        self.queue.lock().items.len() + self.catch_up.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        let mut state = self.queue.lock();
        state.closed = true;
        // The frames go now, not when the last sender lets go of the queue.
        state.items = VecDeque::new();
    }
}

/// What is next for the reader without waiting; None when nothing is.
fn take_next(state: &mut State, catch_up: &mut VecDeque<Frame>) -> Option<Next> {
    if state.too_slow {
        return Some(Next::TooSlow);
    }
    let frame = match catch_up.pop_front() {
        Some(frame) => frame,
        None => match state.items.pop_front() {
            Some(Item::Live(frame)) => {
                state.live_bytes -= frame.len();
                return Some(Next::Frame(frame));
            }
            Some(Item::CatchUp(frames)) => {
                *catch_up = frames.into();
                // Never empty: an empty catch-up is not queued.
                catch_up.pop_front()?
            }
            None => {
                return match state.ending {
                    Some((code, reason)) => Some(Next::Close(code, reason)),
                    None if state.senders == 0 => Some(Next::Ended),
                    None => None,
                };
            }
        },
    };
    state.catch_up_bytes -= frame.len();
    Some(Next::Frame(frame))
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
        assert_eq!(inbox.len(), 1, "the refused frame was not queued");
        assert_eq!(inbox.recv().now_or_never(), Some(Next::TooSlow));
        assert!(
            !out.push(frame(1)),
            "a connection too slow takes nothing more"
        );
        assert_eq!(
            inbox.try_recv(),
            None,
            "too slow comes before what is queued"
        );
    }

    #[test]
    fn reading_releases_the_bytes_of_what_was_read() {
        let (out, mut inbox) = Outbox::new(1, 100, 1000);
        assert!(out.push(frame(600)));
        assert_eq!(inbox.try_recv().map(|f| f.len()), Some(600));
        assert!(out.push(frame(600)), "the same frame fits again");
        assert!(out.push(frame(400)));
        assert_eq!(inbox.len(), 2);
    }

    #[test]
    fn a_full_queue_in_frames_is_too_slow() {
        let (out, mut inbox) = Outbox::new(1, 2, 1 << 20);
        assert!(out.push(frame(1)) && out.push(frame(1)));
        assert!(!out.push(frame(1)));
        assert_eq!(inbox.recv().now_or_never(), Some(Next::TooSlow));
    }

    fn missed() -> Vec<Frame> {
        (0..700).map(|i| Frame::from(format!("{i:04}"))).collect()
    }

    #[test]
    fn a_catch_up_takes_one_slot_and_any_size_but_not_two_big_ones() {
        let (out, inbox) = Outbox::new(1, 3, 1000);
        assert!(out.push_catch_up(missed()), "2800 bytes, alone: taken");
        assert!(out.push(frame(900)), "live frames keep their own budget");
        assert!(
            !out.push_catch_up(vec![frame(10)]),
            "a second over the budget"
        );
        assert_eq!(inbox.len(), 2);
    }

    #[test]
    fn a_catch_up_is_read_in_order_and_released_as_written() {
        let (out, mut inbox) = Outbox::new(1, 3, 1000);
        assert!(out.push_catch_up(missed()));
        assert!(out.push(frame(900)));
        for i in 0..700 {
            assert_eq!(
                inbox.try_recv().map(|f| f.to_string()),
                Some(format!("{i:04}"))
            );
        }
        assert_eq!(inbox.try_recv().map(|f| f.len()), Some(900));
        assert_eq!(inbox.try_recv(), None);
        assert!(out.push_catch_up(missed()), "released once written");
    }

    #[tokio::test]
    async fn a_waiting_reader_is_woken_by_a_push() {
        let (out, mut inbox) = Outbox::new(1, 4, 1 << 20);
        let reader = tokio::spawn(async move { inbox.recv().await });
        tokio::task::yield_now().await;
        assert!(out.push(frame(3)));
        assert_eq!(reader.await.expect("reader"), Next::Frame(frame(3)));
    }

    #[tokio::test]
    async fn the_reader_gets_every_frame_then_the_end_when_the_last_sender_goes() {
        let (out, mut inbox) = Outbox::new(1, 4, 1 << 20);
        let other = out.clone();
        assert!(out.push(frame(1)));
        drop(out);
        assert!(other.push(frame(2)));
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            loop {
                match inbox.recv().await {
                    Next::Frame(f) => got.push(f.len()),
                    end => return (got, end),
                }
            }
        });
        tokio::task::yield_now().await;
        drop(other);
        assert_eq!(reader.await.expect("reader"), (vec![1, 2], Next::Ended));
    }

    #[test]
    fn a_push_to_a_connection_gone_fails_without_calling_it_slow() {
        let (out, inbox) = Outbox::new(1, 4, 1 << 20);
        drop(inbox);
        assert!(!out.push(frame(1)));
        assert!(!out.push_catch_up(vec![frame(1)]));
    }
}
