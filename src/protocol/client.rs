//! Client → server messages. One JSON text frame each, `{"type": ..., "id": ...}` plus
//! fields; unknown fields are refused so that a typo is an error, not a silent no-op.

use serde::{Deserialize, Serialize};

use super::error::{ErrorCode, Refusal};
use super::offer::BotOffer;
use super::settings::GameSettings;
use crate::rules::{Move, Vertex};

/// The client's request id, echoed in the reply: any string or number it likes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    Number(u64),
    Text(String),
}

/// A request from a client.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMsg {
    /// Log in on an open connection (instead of `?token=` on the URL).
    Auth {
        token: String,
    },
    /// Application-level ping; answered by `pong` with the server's time.
    Ping,
    /// Open seeks and direct challenges addressed to you.
    ListSeeks,
    /// Live and recently finished games.
    ListGames,
    /// Receive `lobby` updates (seeks and games appearing and going) until `unwatch_lobby`.
    WatchLobby,
    UnwatchLobby,
    /// Bots: the games this bot accepts at once when challenged (replaces an earlier offer).
    Offer {
        offer: BotOffer,
    },
    /// Bots: stop accepting challenges automatically.
    WithdrawOffer,
    /// Bots online and what they play.
    ListBots,
    /// Post an open seek anyone may accept.
    Seek {
        settings: GameSettings,
    },
    /// Challenge one user (by id) directly.
    Challenge {
        opponent: String,
        settings: GameSettings,
    },
    /// Accept a seek or a challenge; `nigiri_seed` is your contribution to the colour draw.
    Accept {
        challenge_id: String,
        #[serde(default)]
        nigiri_seed: Option<String>,
    },
    /// Decline a challenge addressed to you.
    Decline {
        challenge_id: String,
    },
    /// Withdraw your own seek or challenge.
    Cancel {
        challenge_id: String,
    },
    /// Watch or play a game. With `since_seq`, receive exactly the events after it;
    /// without, a `snapshot`.
    Join {
        game_id: String,
        #[serde(default)]
        since_seq: Option<u64>,
    },
    Leave {
        game_id: String,
    },
    /// Play a stone (or `"pass"`); `move_number` is the number this move will have.
    Play {
        game_id: String,
        move_number: u32,
        vertex: Move,
    },
    Pass {
        game_id: String,
        move_number: u32,
    },
    Resign {
        game_id: String,
    },
    /// Ask to pause (both clocks stop once the opponent asks too), or agree to the
    /// opponent's request.
    Pause {
        game_id: String,
    },
    /// Ask to resume a paused or adjourned game, or agree to the opponent's request.
    Resume {
        game_id: String,
    },
    /// Adjourn with a sealed move (封棋): the player to move hands in a move that nobody
    /// else sees until both agree to resume; clocks stop.
    Seal {
        game_id: String,
        move_number: u32,
        vertex: Move,
    },
    /// Claim the game when the opponent has been away longer than the game allows.
    ClaimWin {
        game_id: String,
    },
    /// Free handicap: Black places all its stones at once.
    PlaceHandicap {
        game_id: String,
        vertices: Vec<Vertex>,
    },
    /// Mark (or with `dead: false` unmark) the whole chain through `vertex`.
    MarkDead {
        game_id: String,
        vertex: Vertex,
        #[serde(default = "yes")]
        dead: bool,
    },
    /// Accept the current marks; `marks_seq` (optional) is the seq of the marks you saw,
    /// so that you never accept marks you have not seen.
    AcceptScore {
        game_id: String,
        #[serde(default)]
        marks_seq: Option<u64>,
    },
    /// Refuse the marks: play resumes and settles the question (docs/RULES.md §5).
    RejectScore {
        game_id: String,
    },
    /// Chat in a game: players talk to each other, spectators among themselves.
    Chat {
        game_id: String,
        text: String,
    },
}

fn yes() -> bool {
    true
}

/// A decoded frame: the request and its id.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub id: Option<RequestId>,
    pub msg: ClientMsg,
}

/// Why a frame could not be decoded, with whatever id could still be read from it.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    pub id: Option<RequestId>,
    pub refusal: Refusal,
}

const KNOWN: &[&str] = &[
    "auth",
    "ping",
    "list_seeks",
    "list_games",
    "watch_lobby",
    "unwatch_lobby",
    "offer",
    "withdraw_offer",
    "list_bots",
    "seek",
    "challenge",
    "accept",
    "decline",
    "cancel",
    "join",
    "leave",
    "play",
    "pass",
    "resign",
    "pause",
    "resume",
    "seal",
    "claim_win",
    "place_handicap",
    "mark_dead",
    "accept_score",
    "reject_score",
    "chat",
];

/// Only the request id of a frame, for refusals that do not read the rest (a flood, an
/// oversized message): `None` when there is none or the frame is not JSON.
pub fn request_id(text: &str) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct IdOnly {
        id: Option<RequestId>,
    }
    serde_json::from_str::<IdOnly>(text).ok()?.id
}

/// Reads one text frame.
pub fn decode(text: &str) -> Result<Request, DecodeError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| DecodeError {
        id: None,
        refusal: Refusal::new(
            ErrorCode::BadRequest,
            format!("the frame is not valid JSON: {e}"),
        ),
    })?;
    let serde_json::Value::Object(mut map) = value else {
        return Err(DecodeError {
            id: None,
            refusal: Refusal::new(ErrorCode::BadRequest, "a message must be a JSON object"),
        });
    };
    let id = match map.remove("id") {
        None | Some(serde_json::Value::Null) => None,
        Some(raw) => Some(
            serde_json::from_value::<RequestId>(raw).map_err(|_| DecodeError {
                id: None,
                refusal: Refusal::new(
                    ErrorCode::BadRequest,
                    "`id` must be a string or a non-negative integer",
                ),
            })?,
        ),
    };
    let fail = |code, message: String| DecodeError {
        id: id.clone(),
        refusal: Refusal::new(code, message),
    };
    match map.get("type") {
        Some(serde_json::Value::String(t)) if !KNOWN.contains(&t.as_str()) => {
            return Err(fail(
                ErrorCode::UnknownType,
                format!("unknown message type `{t}`"),
            ));
        }
        Some(serde_json::Value::String(_)) => {}
        _ => {
            return Err(fail(
                ErrorCode::BadRequest,
                "a message needs a string `type`".into(),
            ));
        }
    }
    let msg = serde_json::from_value(serde_json::Value::Object(map))
        .map_err(|e| fail(ErrorCode::BadRequest, format!("bad message: {e}")))?;
    Ok(Request { id, msg })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_type_is_a_variant() {
        // A type listed in KNOWN that serde does not know would turn into bad_request.
        for t in KNOWN {
            let err = decode(&format!(r#"{{"type":"{t}"}}"#));
            if let Err(e) = err {
                assert_ne!(e.refusal.code, ErrorCode::UnknownType, "{t}");
                assert!(
                    !e.refusal.message.contains("unknown variant"),
                    "{t}: {}",
                    e.refusal.message
                );
            }
        }
    }

    #[test]
    fn ids_are_echoed_even_when_the_body_is_wrong() {
        let e = decode(r#"{"type":"play","id":7,"game_id":"g"}"#).unwrap_err();
        assert_eq!(e.id, Some(RequestId::Number(7)));
        assert_eq!(e.refusal.code, ErrorCode::BadRequest);
        assert!(
            e.refusal.message.contains("move_number"),
            "{}",
            e.refusal.message
        );
        let e = decode(r#"{"type":"fly","id":"x"}"#).unwrap_err();
        assert_eq!(e.refusal.code, ErrorCode::UnknownType);
        assert_eq!(e.id, Some(RequestId::Text("x".into())));
        assert_eq!(
            decode("[1").unwrap_err().refusal.code,
            ErrorCode::BadRequest
        );
        assert_eq!(
            decode("[1]").unwrap_err().refusal.code,
            ErrorCode::BadRequest
        );
    }

    #[test]
    fn the_id_alone_can_be_read() {
        assert_eq!(
            request_id(r#"{"type":"chat","id":"c1","text":"x"}"#),
            Some(RequestId::Text("c1".into()))
        );
        assert_eq!(request_id(r#"{"type":"ping"}"#), None);
        assert_eq!(request_id("nonsense"), None);
    }

    #[test]
    fn a_move_decodes() {
        let r = decode(r#"{"type":"play","id":"a","game_id":"g1","move_number":3,"vertex":"D4"}"#)
            .unwrap();
        assert_eq!(
            r.msg,
            ClientMsg::Play {
                game_id: "g1".into(),
                move_number: 3,
                vertex: Move::Play(Vertex::new(3, 3))
            }
        );
        assert!(
            decode(r#"{"type":"play","game_id":"g1","move_number":3,"vertex":"D4","x":1}"#)
                .is_err()
        );
    }
}
