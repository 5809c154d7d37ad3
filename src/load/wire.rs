//! The few frames the load tool sends, for tengen's protocol and for the baseline's,
//! written by hand (the tool must stay cheaper than the server it measures) and checked
//! against the protocol's own types. What it receives is read with
//! [`crate::protocol::decode_server`].

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
    use crate::protocol::{ClientMsg, EventFrame, GameAction, GameEvent, LobbyMsg, decode};

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
                planned: false,
            },
        })
        .unwrap();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn the_requests_are_what_the_server_decodes() {
        let game = |action| ClientMsg::game("g", action);
        let cases = [
            (join(1, "g"), game(GameAction::Join { since_seq: None })),
            (resign(4, "g"), game(GameAction::Resign {})),
            (
                play("g", 3, Move::Play(Vertex::new(3, 3))),
                game(GameAction::Play {
                    move_number: 3,
                    vertex: Move::Play(Vertex::new(3, 3)),
                }),
            ),
            (
                accept(2, "c"),
                LobbyMsg::Accept {
                    challenge_id: "c".into(),
                    nigiri_seed: None,
                }
                .into(),
            ),
        ];
        for (text, msg) in cases {
            assert_eq!(decode(&text).map(|r| r.msg), Ok(msg), "{text}");
        }
        let seek = decode(&seek(5, 9)).unwrap();
        assert!(
            matches!(seek.msg, ClientMsg::Lobby(LobbyMsg::Seek { settings }) if settings.board_size == 9)
        );
    }
}
