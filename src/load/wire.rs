//! The few frames the load tool sends and the little it reads of what it receives, for
//! tengen's protocol and for the baseline's. Reading is a borrowed, allocation-free look
//! at a handful of fields: the tool must stay cheaper than the server it measures.

use std::borrow::Cow;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::rules::{Color, Move, Vertex};

/// Which server the tool talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// tengen: tokens, seek and accept, rooms with numbered events.
    Tengen,
    /// The baseline fan-out server: join a room by name; every frame sent to it is
    /// written to each member of the room, sender included.
    Baseline,
}

/// The fields of a received frame the tool looks at.
#[derive(Debug, Deserialize)]
pub struct Head<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    #[serde(default)]
    pub seq: Option<u64>,
    #[serde(default)]
    pub move_number: Option<u32>,
    #[serde(default)]
    pub id: Option<u64>,
    #[serde(default, borrow)]
    pub code: Option<Cow<'a, str>>,
}

impl Head<'_> {
    pub fn read(text: &str) -> Option<Head<'_>> {
        serde_json::from_str(text).ok()
    }

    /// Whether this is a numbered game event (every frame with a `seq` except the
    /// replies and snapshots that quote one).
    pub fn is_event(&self) -> bool {
        self.seq.is_some() && self.kind != "ack" && self.kind != "snapshot"
    }
}

/// `join` a game (tengen) or a room (baseline).
pub fn join(id: u64, game_id: &str) -> String {
    format!(r#"{{"type":"join","id":{id},"game_id":"{game_id}"}}"#)
}

/// tengen: post a seek for a game in which the poster plays Black.
pub fn seek(id: u64, board_size: u8) -> String {
    format!(
        r#"{{"type":"seek","id":{id},"settings":{{"board_size":{board_size},"color":"black"}}}}"#
    )
}

pub fn accept(id: u64, challenge_id: &str) -> String {
    format!(r#"{{"type":"accept","id":{id},"challenge_id":"{challenge_id}"}}"#)
}

/// tengen: play move `n` (its number is also the request id).
pub fn play(game_id: &str, n: u32, mv: Move) -> String {
    format!(r#"{{"type":"play","id":{n},"game_id":"{game_id}","move_number":{n},"vertex":"{mv}"}}"#)
}

pub fn resign(id: u64, game_id: &str) -> String {
    format!(r#"{{"type":"resign","id":{id},"game_id":"{game_id}"}}"#)
}

/// Baseline: the frame a player sends for move `n`, shaped and sized like tengen's
/// `move_played` event for the same move (the baseline server forwards it unread).
pub fn move_played(
    game_id: &str,
    n: u32,
    color: Color,
    mv: Move,
    captures: &[Vertex],
    at_ms: i64,
) -> String {
    let color = match color {
        Color::Black => "black",
        Color::White => "white",
    };
    let mut caps = String::new();
    for (i, v) in captures.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(caps, r#"{sep}"{v}""#);
    }
    format!(
        r#"{{"game_id":"{game_id}","seq":{n},"type":"move_played","move_number":{n},"color":"{color}","vertex":"{mv}","captures":[{caps}],"at":{at_ms}}}"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{EventFrame, GameEvent};

    #[test]
    fn the_baseline_frame_is_tengens_move_played_byte_for_byte() {
        let captures = [Vertex::new(3, 3), Vertex::new(3, 4)];
        let ours = move_played(
            "abcdefghij",
            12,
            Color::White,
            Move::Play(Vertex::new(2, 3)),
            &captures,
            1_700_000_000_123,
        );
        let theirs = serde_json::to_string(&EventFrame {
            game_id: "abcdefghij".into(),
            seq: 12,
            event: GameEvent::MovePlayed {
                move_number: 12,
                color: Color::White,
                vertex: Move::Play(Vertex::new(2, 3)),
                captures: captures.to_vec(),
                clock: None,
                at: 1_700_000_000_123,
                sealed: None,
                lag_credit_ms: 0,
            },
        })
        .unwrap();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn heads_are_read_without_the_rest() {
        let h = Head::read(
            r#"{"game_id":"g","seq":7,"type":"move_played","move_number":6,"captures":[]}"#,
        )
        .unwrap();
        assert_eq!(
            (h.kind.as_ref(), h.seq, h.move_number),
            ("move_played", Some(7), Some(6))
        );
        assert!(h.is_event());
        let h = Head::read(r#"{"type":"ack","id":3,"game_id":"g","seq":7}"#).unwrap();
        assert!(!h.is_event());
        assert_eq!(h.id, Some(3));
        let h =
            Head::read(r#"{"type":"error","id":4,"code":"illegal_move","message":"no"}"#).unwrap();
        assert_eq!(h.code.as_deref(), Some("illegal_move"));
    }
}
