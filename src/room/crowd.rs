//! Who is in a room and how frames reach them. Each connection has one bounded outbound
//! queue (its [`Outbox`]); a broadcast is serialised once and the same bytes are queued
//! for every member. A member whose queue is full is dropped from the room and its
//! connection told to close, so a slow reader can never grow the server's memory.
//!
//! In a cluster some members sit on other nodes: the room counts them (presence,
//! spectators) but does not queue for them; their node relays the frames the room
//! publishes once for all (see [`super::context::Relay`]).

use std::sync::Arc;

use crate::fanout::{Frame, Outbox};
use crate::protocol::UserInfo;
use crate::rules::Color;

/// Where a member's connection is.
pub enum Seat {
    /// On this node: frames go straight into its queue.
    Local(Outbox),
    /// On another node, by that node's connection number.
    Remote { node: Arc<str>, conn: u64 },
}

impl Seat {
    /// The member's identity in the crowd: its node (None: this one) and connection.
    fn key(&self) -> (Option<&str>, u64) {
        match self {
            Seat::Local(outbox) => (None, outbox.conn()),
            Seat::Remote { node, conn } => (Some(node), *conn),
        }
    }
}

/// A member of a room: a player (with a colour) or a spectator.
pub struct Member {
    pub seat: Seat,
    /// Who it is (None: an anonymous spectator), to join it elsewhere if the room goes.
    pub user: Option<UserInfo>,
    pub color: Option<Color>,
    /// A tournament game's spectator: sees events only up to the spectators' horizon.
    pub delayed: bool,
}

/// The members of one room.
#[derive(Default)]
pub struct Crowd {
    members: Vec<Member>,
}

impl Crowd {
    pub fn add(&mut self, member: Member) {
        let (node, conn) = member.seat.key();
        let node = node.map(str::to_owned);
        self.remove(node.as_deref(), conn);
        self.members.push(member);
    }

    /// Removes connection `conn` of `node` (None: this node); returns the colour it
    /// played, if any.
    pub fn remove(&mut self, node: Option<&str>, conn: u64) -> Option<Option<Color>> {
        let i = self
            .members
            .iter()
            .position(|m| m.seat.key() == (node, conn))?;
        Some(self.members.swap_remove(i).color)
    }

    /// Removes every member on `node`; returns the colours they played.
    pub fn remove_node(&mut self, node: &str) -> Vec<Color> {
        let mut colors = Vec::new();
        self.members.retain(|m| match &m.seat {
            Seat::Remote { node: n, .. } if &**n == node => {
                colors.extend(m.color);
                false
            }
            _ => true,
        });
        colors
    }

    /// Takes every member on this node out of the room (which no longer runs here).
    pub fn take_local(&mut self) -> Vec<Member> {
        let (local, remote) = std::mem::take(&mut self.members)
            .into_iter()
            .partition(|m| matches!(m.seat, Seat::Local(_)));
        self.members = remote;
        local
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

    /// Queues `frame` for every member on this node that `include` admits. Members that
    /// cannot take it are removed; the colours of removed players are returned.
    pub fn broadcast(&mut self, frame: &Frame, include: impl Fn(&Member) -> bool) -> Vec<Color> {
        let mut dropped = Vec::new();
        self.members.retain(|m| {
            let Seat::Local(outbox) = &m.seat else {
                return true;
            };
            if !include(m) || outbox.push(frame.clone()) {
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
    use crate::fanout::encode;

    #[tokio::test]
    async fn a_member_that_falls_behind_is_dropped_and_told_to_go() {
        let (fast, mut fast_in) = Outbox::new(1, 4, 1 << 20);
        let (slow, mut slow_in) = Outbox::new(2, 4, 1 << 20);
        let mut crowd = Crowd::default();
        crowd.add(Member {
            seat: Seat::Local(fast),
            user: None,
            color: Some(Color::Black),
            delayed: false,
        });
        crowd.add(Member {
            seat: Seat::Local(slow),
            user: None,
            color: None,
            delayed: false,
        });
        for i in 0..4 {
            let dropped = crowd.broadcast(&Frame::from(format!("{i}")), |_| true);
            assert!(dropped.is_empty());
            assert_eq!(
                fast_in.recv().await,
                crate::fanout::Next::Frame(Frame::from(i.to_string()))
            );
        }
        // The slow member's queue is full: the fifth frame drops it (a spectator, so no
        // colour is reported) and signals its connection.
        let dropped = crowd.broadcast(&Frame::from("5"), |_| true);
        assert!(dropped.is_empty());
        assert_eq!(crowd.spectators(), 0);
        assert!(crowd.has_player(Color::Black));
        assert_eq!(slow_in.len(), 4, "its queue never grew past the bound");
        assert_eq!(
            slow_in.recv().await,
            crate::fanout::Next::TooSlow,
            "the slow connection is told to close"
        );
    }

    #[test]
    fn a_broadcast_is_serialised_once_and_shared() {
        let (a, mut a_in) = Outbox::new(1, 2, 1 << 20);
        let (b, mut b_in) = Outbox::new(2, 2, 1 << 20);
        let mut crowd = Crowd::default();
        crowd.add(Member {
            seat: Seat::Local(a),
            user: None,
            color: None,
            delayed: false,
        });
        crowd.add(Member {
            seat: Seat::Local(b),
            user: None,
            color: None,
            delayed: false,
        });
        let frame = encode(&serde_json::json!({"type": "x"}));
        crowd.broadcast(&frame, |_| true);
        let (fa, fb) = (a_in.try_recv().unwrap(), b_in.try_recv().unwrap());
        assert_eq!(
            fa.as_str().as_ptr(),
            fb.as_str().as_ptr(),
            "same bytes, not copies"
        );
    }
}
