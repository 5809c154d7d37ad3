//! What nodes say to each other about a game: a command forwarded to its owner and the
//! answer, and the frames the owner relays to every node. JSON, like the client
//! protocol, but the server's own: both ends are the same build of tengen.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::fanout::Frame;
use crate::protocol::{CalledGame, ErrorCode, GameAction, GameSummary, Refusal, UserInfo};
use crate::room::{Audience, Opening};
use crate::rules::Color;

/// A command for the room of a game that runs on another node.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Forward {
    Join {
        node: String,
        conn: u64,
        user: Option<UserInfo>,
        since_seq: Option<u64>,
    },
    Leave {
        node: String,
        conn: u64,
    },
    Act {
        user: UserInfo,
        action: GameAction,
        lag_ms: u64,
    },
    Summary,
    Calls {
        user: UserInfo,
    },
    /// A player of the game went on vacation (`away`) or came back (on any node).
    Vacation {
        user_id: String,
        away: bool,
    },
}

/// The owner's answer to a [`Forward`].
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Joined(WireOpening),
    Seq(Option<u64>),
    Summary(GameSummary),
    Calls(Box<(Option<CalledGame>, Option<GameSummary>)>),
    /// Whether the player's clock is as a [`Forward::Vacation`] asked, now.
    Vacation(bool),
    Done,
    Refused(WireRefusal),
    /// The room stopped on the owner before it answered: find the game anew.
    Gone,
}

/// [`Opening`] on the wire.
#[derive(Debug, Serialize, Deserialize)]
pub struct WireOpening {
    pub frames: Vec<String>,
    pub catch_up: bool,
    pub through: u64,
    pub color: Option<Color>,
    pub delayed: bool,
}

impl From<Opening> for WireOpening {
    fn from(o: Opening) -> Self {
        WireOpening {
            frames: o.frames.iter().map(|f| f.as_str().to_owned()).collect(),
            catch_up: o.catch_up,
            through: o.through,
            color: o.color,
            delayed: o.delayed,
        }
    }
}

impl From<WireOpening> for Opening {
    fn from(o: WireOpening) -> Self {
        Opening {
            frames: o.frames.into_iter().map(Frame::from).collect(),
            catch_up: o.catch_up,
            through: o.through,
            color: o.color,
            delayed: o.delayed,
        }
    }
}

/// [`Refusal`] on the wire (its rule name is a static string there).
#[derive(Debug, Serialize, Deserialize)]
pub struct WireRefusal {
    code: ErrorCode,
    message: String,
    reason: Option<String>,
    retry_after_ms: Option<u64>,
}

/// The rule names an `illegal_move` may carry (see [`crate::rules::IllegalMove::reason`]).
const REASONS: [&str; 5] = ["off_board", "occupied", "suicide", "ko", "superko"];

impl From<Refusal> for WireRefusal {
    fn from(r: Refusal) -> Self {
        WireRefusal {
            code: r.code,
            message: r.message,
            reason: r.reason.map(str::to_owned),
            retry_after_ms: r.retry_after_ms,
        }
    }
}

impl From<WireRefusal> for Refusal {
    fn from(r: WireRefusal) -> Self {
        Refusal {
            code: r.code,
            message: r.message,
            reason: r
                .reason
                .and_then(|name| REASONS.into_iter().find(|known| *known == name)),
            retry_after_ms: r.retry_after_ms,
        }
    }
}

/// One relayed message on a game's event subject: a frame for an audience, or the news
/// that the room stopped on its node or that the game runs on another one now (see
/// [`super::Node::took_over`]); either way, the mirrors find the game anew.
#[derive(Debug, PartialEq)]
pub enum Relayed {
    Frame {
        seq: u64,
        audience: Audience,
        frame: Frame,
    },
    Closed,
}

impl Relayed {
    /// `<seq> <L|D|S>\n<frame>`, or `0 X\n` for a closed room: the frame's bytes are
    /// carried as they are, so no node parses or re-encodes them.
    pub fn encode(&self) -> Bytes {
        match self {
            Relayed::Frame {
                seq,
                audience,
                frame,
            } => {
                let tag = match audience {
                    Audience::Live => 'L',
                    Audience::Delayed => 'D',
                    Audience::Spectators => 'S',
                };
                let mut out = format!("{seq} {tag}\n").into_bytes();
                out.extend_from_slice(frame.as_str().as_bytes());
                Bytes::from(out)
            }
            Relayed::Closed => Bytes::from_static(b"0 X\n"),
        }
    }

    pub fn decode(bytes: &[u8]) -> Option<Relayed> {
        let text = std::str::from_utf8(bytes).ok()?;
        let (head, frame) = text.split_once('\n')?;
        let (seq, tag) = head.split_once(' ')?;
        let seq = seq.parse().ok()?;
        let audience = match tag {
            "L" => Audience::Live,
            "D" => Audience::Delayed,
            "S" => Audience::Spectators,
            "X" => return Some(Relayed::Closed),
            _ => return None,
        };
        Some(Relayed::Frame {
            seq,
            audience,
            frame: Frame::from(frame.to_owned()),
        })
    }
}

/// JSON of a message between nodes.
pub fn to_bytes<T: Serialize>(value: &T) -> Bytes {
    // Our own types always serialise.
    Bytes::from(serde_json::to_vec(value).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relayed_frames_round_trip_byte_for_byte() {
        for (seq, audience) in [
            (7, Audience::Live),
            (3, Audience::Delayed),
            (0, Audience::Spectators),
        ] {
            let frame = Frame::from(r#"{"type":"x","n":"a\nb"}"#);
            let relayed = Relayed::Frame {
                seq,
                audience,
                frame,
            };
            assert_eq!(Relayed::decode(&relayed.encode()), Some(relayed));
        }
        assert_eq!(
            Relayed::decode(&Relayed::Closed.encode()),
            Some(Relayed::Closed)
        );
        assert_eq!(Relayed::decode(b"x L\n{}"), None);
        assert_eq!(Relayed::decode(b"1 Q\n{}"), None);
    }

    #[test]
    fn a_refusal_keeps_its_rule_across_nodes() {
        let refusal = Refusal {
            code: ErrorCode::IllegalMove,
            message: "ko".into(),
            reason: Some("ko"),
            retry_after_ms: Some(5),
        };
        let back: Refusal = WireRefusal::from(refusal.clone()).into();
        assert_eq!(back, refusal);
    }
}
