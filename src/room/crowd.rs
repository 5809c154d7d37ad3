//! Who is in a room and how frames reach them. Each connection has one bounded outbound
//! queue (its [`Outbox`]); a broadcast is serialised once and the same bytes are queued
//! for every member. A member whose queue is full is dropped from the room and its
//! connection told to close, so a slow reader can never grow the server's memory.

use std::sync::Arc;

use serde::Serialize;
use tokio::sync::{Notify, mpsc};

use crate::rules::Color;

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

/// The sending side of one connection's outbound queue.
#[derive(Clone, Debug)]
pub struct Outbox {
    conn: u64,
    tx: mpsc::Sender<Frame>,
    overflow: Arc<Notify>,
}

/// The connection's side: frames to write, and a signal that it fell too far behind.
pub struct Inbox {
    pub frames: mpsc::Receiver<Frame>,
    pub overflow: Arc<Notify>,
}

impl Outbox {
    /// A queue of `capacity` frames for connection `conn`.
    pub fn new(conn: u64, capacity: usize) -> (Outbox, Inbox) {
        let (tx, frames) = mpsc::channel(capacity.max(1));
        let overflow = Arc::new(Notify::new());
        (
            Outbox {
                conn,
                tx,
                overflow: overflow.clone(),
            },
            Inbox { frames, overflow },
        )
    }

    pub fn conn(&self) -> u64 {
        self.conn
    }

    /// Queues a frame without waiting. False when the connection is gone or its queue is
    /// full; in the second case the connection is told to close as a slow consumer.
    pub fn push(&self, frame: Frame) -> bool {
        match self.tx.try_send(frame) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                crate::metrics::slow_consumer();
                self.overflow.notify_one();
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

/// A member of a room: a player (with a colour) or a spectator.
pub struct Member {
    pub outbox: Outbox,
    pub color: Option<Color>,
}

/// The members of one room.
#[derive(Default)]
pub struct Crowd {
    members: Vec<Member>,
}

impl Crowd {
    pub fn add(&mut self, member: Member) {
        self.remove(member.outbox.conn());
        self.members.push(member);
    }

    /// Removes connection `conn`; returns the colour it played, if any.
    pub fn remove(&mut self, conn: u64) -> Option<Option<Color>> {
        let i = self.members.iter().position(|m| m.outbox.conn() == conn)?;
        Some(self.members.swap_remove(i).color)
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub fn spectators(&self) -> usize {
        self.members.iter().filter(|m| m.color.is_none()).count()
    }

    /// Whether any connection of `color`'s player is here.
    pub fn has_player(&self, color: Color) -> bool {
        self.members.iter().any(|m| m.color == Some(color))
    }

    /// Queues `frame` for every member that `include` admits. Members that cannot take
    /// it are removed; the colours of removed players are returned.
    pub fn broadcast(&mut self, frame: &Frame, include: impl Fn(&Member) -> bool) -> Vec<Color> {
        let mut dropped = Vec::new();
        self.members.retain(|m| {
            if !include(m) || m.outbox.push(frame.clone()) {
                return true;
            }
            if let Some(c) = m.color {
                dropped.push(c);
            }
            false
        });
        dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_member_that_falls_behind_is_dropped_and_told_to_go() {
        let (fast, mut fast_in) = Outbox::new(1, 4);
        let (slow, slow_in) = Outbox::new(2, 4);
        let mut crowd = Crowd::default();
        crowd.add(Member {
            outbox: fast,
            color: Some(Color::Black),
        });
        crowd.add(Member {
            outbox: slow,
            color: None,
        });
        for i in 0..4 {
            let dropped = crowd.broadcast(&Frame::from(format!("{i}")), |_| true);
            assert!(dropped.is_empty());
            assert_eq!(fast_in.frames.recv().await.unwrap().as_str(), i.to_string());
        }
        // The slow member's queue is full: the fifth frame drops it (a spectator, so no
        // colour is reported) and signals its connection.
        let dropped = crowd.broadcast(&Frame::from("5"), |_| true);
        assert!(dropped.is_empty());
        assert_eq!(crowd.spectators(), 0);
        assert!(crowd.has_player(Color::Black));
        tokio::time::timeout(
            std::time::Duration::from_secs(1),
            slow_in.overflow.notified(),
        )
        .await
        .expect("the slow connection is told to close");
        assert_eq!(
            slow_in.frames.len(),
            4,
            "its queue never grew past the bound"
        );
    }

    #[test]
    fn a_broadcast_is_serialised_once_and_shared() {
        let (a, mut a_in) = Outbox::new(1, 2);
        let (b, mut b_in) = Outbox::new(2, 2);
        let mut crowd = Crowd::default();
        crowd.add(Member {
            outbox: a,
            color: None,
        });
        crowd.add(Member {
            outbox: b,
            color: None,
        });
        let frame = encode(&serde_json::json!({"type": "x"}));
        crowd.broadcast(&frame, |_| true);
        let (fa, fb) = (
            a_in.frames.try_recv().unwrap(),
            b_in.frames.try_recv().unwrap(),
        );
        assert_eq!(
            fa.as_str().as_ptr(),
            fb.as_str().as_ptr(),
            "same bytes, not copies"
        );
    }
}
