//! Client → server messages. One JSON text frame each, `{"type": ..., "id": ...}` plus
//! fields; unknown fields are refused so that a typo is an error, not a silent no-op.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::calendar::Calendar;
use super::error::{ErrorCode, Refusal};
use super::names;
use super::notice::{MailMode, NoticeKind};
use super::offer::BotOffer;
use super::referee::Ruling;
use super::request::RequestId;
use super::settings::GameSettings;
use super::speed::Speed;
use super::tournament::{TournamentAction, TournamentSetup};
use crate::rules::{Color, Move, Vertex};

/// A request from a client: one outside any game, an action in one game, or a request
/// about one tournament. On the wire all are flat objects,
/// `{"type": …, "id": …, "game_id": …, …fields}` (`tournament_id` for a tournament).
#[derive(Debug, Clone, PartialEq)]
pub enum ClientMsg {
    Lobby(LobbyMsg),
    Game {
        game_id: String,
        action: GameAction,
    },
    Tournament {
        tournament_id: String,
        action: TournamentAction,
    },
}

/// Requests that are not about one game. Fieldless ones are empty struct variants, so
/// that `deny_unknown_fields` refuses fields they do not have (serde ignores it for unit
/// variants of an internally tagged enum).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum LobbyMsg {
    /// Log in on an open connection (instead of `?token=` on the URL).
    Auth {
        token: String,
    },
    /// Application-level ping; answered by `pong` with the server's time.
    Ping {},
    /// Open seeks and direct challenges addressed to you.
    ListSeeks {},
    /// Live and recently finished games.
    ListGames {},
    /// Your correspondence games not over, with whose move it is and their deadline.
    ListCorrespondence {},
    /// Receive `lobby` updates (seeks and games appearing and going) until `unwatch_lobby`.
    WatchLobby {},
    UnwatchLobby {},
    /// Bots: the games this bot accepts at once when challenged (replaces an earlier offer).
    Offer {
        offer: BotOffer,
    },
    /// Bots: stop accepting challenges automatically.
    WithdrawOffer {},
    /// Bots online and what they play.
    ListBots {},
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
    /// Wait to be paired with the player closest in rating who wants a game of the same
    /// kind (one request per user: a new one replaces the waiting one).
    Automatch {
        /// Board sizes you accept: 9, 13 and/or 19.
        sizes: Vec<u8>,
        /// Speed classes you accept.
        speeds: Vec<Speed>,
        #[serde(default)]
        rated: bool,
        /// Whether a handicap from the rank difference is acceptable.
        #[serde(default)]
        handicap: bool,
    },
    /// Stop waiting for an automatch.
    AutomatchCancel {},
    /// Referees and admins: the games with open `referee_call`s they may act on.
    ListRefereeCalls {},
    /// Block a user (by id): neither of you can challenge the other, accept the other's
    /// seek, or chat to the other in a game.
    Block {
        user: String,
    },
    Unblock {
        user: String,
    },
    /// Stop receiving a user's chat, in every game (client-protocol/referee.md#mute-and-unmute).
    Mute {
        user: String,
    },
    /// Receive a muted user's chat again.
    Unmute {
        user: String,
    },
    /// The users you mute.
    ListMutes {},
    /// Report a user, a game, or both, with the range of the game's events it concerns.
    Report {
        #[serde(default)]
        user: Option<String>,
        #[serde(default)]
        game_id: Option<String>,
        #[serde(default)]
        from_seq: Option<u64>,
        #[serde(default)]
        to_seq: Option<u64>,
        reason: String,
    },
    /// Referees and admins: the open reports, oldest first.
    ListReports {},
    /// Referees and admins: close a report that has been dealt with.
    CloseReport {
        report_id: u64,
    },
    /// Referees and admins: create a tournament, which you direct
    /// (client-protocol/tournament.md).
    CreateTournament {
        setup: Box<TournamentSetup>,
    },
    /// Your notices, newest first: those older than `before` (a `notice_id`), at most
    /// `limit` (client-protocol/notifications.md).
    ListNotices {
        #[serde(default)]
        before: Option<u64>,
        #[serde(default)]
        limit: Option<u32>,
    },
    /// Mark read your notices up to `notice_id` `up_to`.
    MarkNoticesRead {
        up_to: u64,
    },
    /// Your vacation balance for correspondence games, and whether you are away.
    GetVacation {},
    /// Go on vacation: your clock stands still in every correspondence game of yours
    /// that allows it, until `end_vacation` or your balance is spent.
    StartVacation {},
    /// Come back from vacation: your clocks run again.
    EndVacation {},
    /// Your time zone and weekend days, for correspondence games with `weekends`.
    GetCalendar {},
    /// Change them: from your next turn on in each game under way.
    SetCalendar {
        calendar: Calendar,
    },
    /// Your mail address and how each kind of notice is mailed.
    GetNotificationSettings {},
    /// Change them: `address` (empty removes it), the modes of the kinds named, and
    /// whether the kinds named in `push_kinds` are pushed to your browsers.
    SetNotificationSettings {
        #[serde(default)]
        address: Option<String>,
        #[serde(default)]
        #[schemars(schema_with = "super::notice::mail_modes_schema")]
        modes: BTreeMap<NoticeKind, MailMode>,
        #[serde(default)]
        #[schemars(schema_with = "super::notice::push_kinds_schema")]
        push_kinds: BTreeMap<NoticeKind, bool>,
    },
}

/// What a client asks of one game (the `game_id` travels beside it).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum GameAction {
    /// Watch or play a game. With `since_seq`, receive exactly the events after it;
    /// without, a `snapshot`.
    Join {
        #[serde(default)]
        since_seq: Option<u64>,
    },
    Leave {},
    /// Play a stone (or `"pass"`); `move_number` is the number this move will have.
    Play {
        move_number: u32,
        vertex: Move,
    },
    Pass {
        move_number: u32,
    },
    Resign {},
    /// Ask to pause (both clocks stop once the opponent asks too), or agree to the
    /// opponent's request.
    Pause {},
    /// Ask to resume a paused or adjourned game, or agree to the opponent's request.
    Resume {},
    /// Adjourn with a sealed move (封棋): the player to move hands in a move that nobody
    /// else sees until both agree to resume; clocks stop.
    Seal {
        move_number: u32,
        vertex: Move,
    },
    /// Claim the game when the opponent has been away longer than the game allows.
    ClaimWin {},
    /// End a game in which you have not made a move yet: no result for either side,
    /// unrated. Not in scheduled or tournament games, whose lateness and forfeit rules
    /// stand.
    Abort {},
    /// Correspondence games: store a private plan of conditional moves, the replies to
    /// the opponent's move `move_number` (an empty list drops the plan). On your own
    /// turn, `after` is your move, played now, which the plan follows.
    Plan {
        move_number: u32,
        #[serde(default)]
        after: Option<Vertex>,
        replies: Vec<super::plan::Branch>,
    },
    /// Free handicap: Black places all its stones at once.
    PlaceHandicap {
        vertices: Vec<Vertex>,
    },
    /// Mark (or with `dead: false` unmark) the whole chain through `vertex`.
    MarkDead {
        vertex: Vertex,
        #[serde(default = "yes")]
        dead: bool,
    },
    /// Accept the current marks; `marks_seq` (optional) is the seq of the marks you saw,
    /// so that you never accept marks you have not seen.
    AcceptScore {
        #[serde(default)]
        marks_seq: Option<u64>,
    },
    /// Refuse the marks: play resumes and settles the question (docs/RULES.md §5).
    RejectScore {},
    /// Chat in a game: players talk to each other, spectators among themselves.
    Chat {
        text: String,
    },
    /// Referee: warn a player; `warnings_to_lose` warnings lose the game.
    Warn {
        color: Color,
        reason: String,
    },
    /// Referee: add (`delta_ms` > 0, a bonus) or take away (< 0, a penalty) time on a
    /// player's clock.
    AdjustClock {
        color: Color,
        delta_ms: i64,
        reason: String,
    },
    /// Referee: stop both clocks (an organiser's break); only a referee resumes.
    RefereePause {
        reason: String,
    },
    /// Referee: end an organiser's break (or open a sealed move at a scheduled
    /// adjournment's resumption).
    RefereeResume {
        reason: String,
    },
    /// Referee: adjourn the game at `at` (server Unix ms): from then the player to move
    /// may only seal a move, and the referee opens it with `referee_resume`.
    Adjourn {
        at: i64,
        reason: String,
    },
    /// Referee: end a game in progress with a ruling.
    Rule {
        ruling: Ruling,
        reason: String,
    },
    /// Referee: recount a game ended by counting with these stones dead instead.
    CorrectCount {
        dead: Vec<Vertex>,
        reason: String,
    },
    /// Referee: change or annul the result of a finished game.
    ChangeResult {
        ruling: Ruling,
        reason: String,
    },
    /// A player calls the referee (Art. 16.2); open until a referee acts in the game.
    RefereeCall {
        message: String,
    },
}

fn yes() -> bool {
    true
}

impl ClientMsg {
    /// An action in `game_id`.
    pub fn game(game_id: &str, action: GameAction) -> ClientMsg {
        ClientMsg::Game {
            game_id: game_id.to_string(),
            action,
        }
    }

    /// The game this request is about, if any.
    pub fn game_id(&self) -> Option<&str> {
        match self {
            ClientMsg::Lobby(_) | ClientMsg::Tournament { .. } => None,
            ClientMsg::Game { game_id, .. } => Some(game_id),
        }
    }

    /// Every `type` a client may send, lobby requests first (read from the serde types).
    pub fn types() -> impl Iterator<Item = &'static str> {
        lobby_types()
            .iter()
            .chain(game_types())
            .chain(tournament_types())
            .copied()
    }
}

fn lobby_types() -> &'static [&'static str] {
    names::tags::<LobbyMsg>("type")
}

fn game_types() -> &'static [&'static str] {
    names::tags::<GameAction>("type")
}

fn tournament_types() -> &'static [&'static str] {
    names::tags::<TournamentAction>("type")
}

impl From<LobbyMsg> for ClientMsg {
    fn from(msg: LobbyMsg) -> ClientMsg {
        ClientMsg::Lobby(msg)
    }
}

/// The flat wire form: a game action's fields with `game_id` beside them.
impl Serialize for ClientMsg {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Flat<'a> {
            game_id: &'a str,
            #[serde(flatten)]
            action: &'a GameAction,
        }
        #[derive(Serialize)]
        struct Aimed<'a> {
            tournament_id: &'a str,
            #[serde(flatten)]
            action: &'a TournamentAction,
        }
        match self {
            ClientMsg::Lobby(msg) => msg.serialize(serializer),
            ClientMsg::Game { game_id, action } => Flat { game_id, action }.serialize(serializer),
            ClientMsg::Tournament {
                tournament_id,
                action,
            } => Aimed {
                tournament_id,
                action,
            }
            .serialize(serializer),
        }
    }
}

/// A decoded frame: the request and its id.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    #[serde(flatten)]
    pub msg: ClientMsg,
}

/// Why a frame could not be decoded, with whatever id could still be read from it.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    pub id: Option<RequestId>,
    pub refusal: Refusal,
}

/// Only the request id of a frame, for refusals that do not read the rest (a flood, an
/// oversized message): `None` when there is none or the frame is not JSON.
pub fn request_id(text: &str) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct IdOnly {
        id: Option<RequestId>,
    }
    serde_json::from_str::<IdOnly>(text).ok()?.id
}

/// A JSON value read with the keys of every object in it checked. serde_json's own map
/// keeps the last of two equal keys, so `{"type":"ping","type":"list_games"}` would be read
/// as `list_games`, and a `settings` with `board_size` twice as the second size; here the
/// first key that comes again, at any depth, is noted in `repeated` (the value first seen
/// is kept), and the message is refused.
#[derive(Clone, Copy)]
struct Checked<'a> {
    repeated: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for Checked<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Checked<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        // JSON text has no NaN or infinity: a finite number always comes here.
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = access.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let value = access.next_value_seed(self)?;
            if fields.contains_key(&key) {
                self.repeated.borrow_mut().get_or_insert(key);
            } else {
                fields.insert(key, value);
            }
        }
        Ok(Value::Object(fields))
    }
}

/// A frame's top-level object, every key in it checked ([`Checked`]), and the first key
/// given twice in it, if any.
fn top_level(text: &str) -> Result<(Map<String, Value>, Option<String>), String> {
    let repeated = RefCell::new(None);
    let mut reader = serde_json::Deserializer::from_str(text);
    let value = Checked {
        repeated: &repeated,
    }
    .deserialize(&mut reader)
    .and_then(|value| reader.end().map(|()| value))
    .map_err(|e| format!("the frame is not valid JSON: {e}"))?;
    match value {
        Value::Object(fields) => Ok((fields, repeated.into_inner())),
        _ => Err("a message must be a JSON object".to_string()),
    }
}

/// Reads one text frame: the envelope (`id`, `type`, and `game_id` for game actions)
/// first, so that the id is echoed even when the rest is wrong, then the body into the
/// enum its `type` belongs to.
pub fn decode(text: &str) -> Result<Request, DecodeError> {
    let (mut map, repeated) = top_level(text).map_err(|message| DecodeError {
        id: None,
        refusal: Refusal::new(ErrorCode::BadRequest, message),
    })?;
    let id = match map.remove("id") {
        // An `id` given twice is not echoed: neither is more the request's than the other.
        _ if repeated.as_deref() == Some("id") => None,
        None | Some(Value::Null) => None,
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
    if let Some(key) = repeated {
        return Err(fail(
            ErrorCode::BadRequest,
            format!("bad message: duplicate field `{key}`"),
        ));
    }
    let bad = |e: serde_json::Error| fail(ErrorCode::BadRequest, format!("bad message: {e}"));
    let kind = match map.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        _ => {
            return Err(fail(
                ErrorCode::BadRequest,
                "a message needs a string `type`".into(),
            ));
        }
    };
    let msg = if game_types().contains(&kind) {
        let game_id = target(&mut map, "game_id").map_err(bad)?;
        let action = serde_json::from_value(Value::Object(map))
            .map_err(|e| bad(serde_json::Error::custom(with_target(&e, "game_id"))))?;
        ClientMsg::Game { game_id, action }
    } else if tournament_types().contains(&kind) {
        let tournament_id = target(&mut map, "tournament_id").map_err(bad)?;
        let action = serde_json::from_value(Value::Object(map))
            .map_err(|e| bad(serde_json::Error::custom(with_target(&e, "tournament_id"))))?;
        ClientMsg::Tournament {
            tournament_id,
            action,
        }
    } else if lobby_types().contains(&kind) {
        ClientMsg::Lobby(serde_json::from_value(Value::Object(map)).map_err(bad)?)
    } else {
        return Err(fail(
            ErrorCode::UnknownType,
            format!("unknown message type `{kind}`"),
        ));
    };
    Ok(Request { id, msg })
}

/// The string field `key` (`game_id`, `tournament_id`) that names what a request is
/// about, taken out of the message before the rest is read.
fn target(map: &mut Map<String, Value>, key: &'static str) -> Result<String, serde_json::Error> {
    match map.remove(key) {
        Some(Value::String(id)) => Ok(id),
        Some(_) => Err(serde_json::Error::custom(format!(
            "`{key}` must be a string"
        ))),
        None => Err(serde_json::Error::missing_field(key)),
    }
}

/// serde's refusal of a game (or tournament) action, whose field list lacks `key`: it is
/// read apart, before the action, and a client told "there are no fields" would drop it.
fn with_target(e: &serde_json::Error, key: &str) -> String {
    let text = e.to_string();
    let Some((head, rest)) = text
        .split_once(", ")
        .filter(|_| text.starts_with("unknown field"))
    else {
        return text;
    };
    let others = match rest {
        "there are no fields" => return format!("{head}, expected `{key}`"),
        rest => rest
            .strip_prefix("expected one of ")
            .or(rest.strip_prefix("expected ")),
    };
    match others {
        Some(list) => format!(
            "{head}, expected one of `{key}`, {}",
            list.replace(" or ", ", ")
        ),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_types_come_from_the_three_enums() {
        let types: Vec<&str> = ClientMsg::types().collect();
        for t in [
            "auth",
            "ping",
            "list_games",
            "cancel",
            "join",
            "play",
            "chat",
            "watch_tournament",
            "pair",
        ] {
            assert!(types.contains(&t), "{t} missing from {types:?}");
        }
        assert_eq!(
            types.len(),
            lobby_types().len() + game_types().len() + tournament_types().len()
        );
        // No name in two: decode would never reach the second.
        let unique: std::collections::BTreeSet<&str> = types.iter().copied().collect();
        assert_eq!(unique.len(), types.len(), "{types:?}");
    }

    #[test]
    fn every_type_decodes_to_its_own_variant() {
        // A type that decode routes to the wrong enum would come back as "unknown variant".
        for t in ClientMsg::types() {
            let err = decode(&format!(r#"{{"type":"{t}","game_id":"g"}}"#));
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
    fn a_game_actions_unknown_field_is_refused_naming_game_id_among_its_fields() {
        let message = |json: &str| match decode(json) {
            Err(e) => e.refusal.message,
            Ok(_) => panic!("accepted: {json}"),
        };
        assert_eq!(
            message(r#"{"type":"resign","game_id":"g","bogus":1}"#),
            "bad message: unknown field `bogus`, expected `game_id`"
        );
        assert_eq!(
            message(r#"{"type":"join","game_id":"g","bogus":1}"#),
            "bad message: unknown field `bogus`, expected one of `game_id`, `since_seq`"
        );
        let play = message(r#"{"type":"play","game_id":"g","bogus":1}"#);
        assert!(
            play.starts_with(
                "bad message: unknown field `bogus`, expected one of `game_id`, `move_number`"
            ),
            "{play}"
        );
    }

    #[test]
    fn fieldless_messages_refuse_fields() {
        for t in [
            "ping",
            "list_seeks",
            "list_games",
            "list_bots",
            "watch_lobby",
        ] {
            let e = decode(&format!(r#"{{"type":"{t}","id":1,"player":"alice"}}"#)).unwrap_err();
            assert_eq!(e.refusal.code, ErrorCode::BadRequest, "{t}");
            assert!(
                e.refusal.message.contains("player"),
                "{t}: {}",
                e.refusal.message
            );
            assert_eq!(e.id, Some(RequestId::Number(1)));
        }
        for t in ["unwatch_lobby", "withdraw_offer"] {
            assert!(
                decode(&format!(r#"{{"type":"{t}","x":null}}"#)).is_err(),
                "{t}"
            );
            assert!(decode(&format!(r#"{{"type":"{t}"}}"#)).is_ok(), "{t}");
        }
        for t in [
            "leave",
            "resign",
            "pause",
            "resume",
            "claim_win",
            "reject_score",
        ] {
            assert!(
                decode(&format!(r#"{{"type":"{t}","game_id":"g","x":1}}"#)).is_err(),
                "{t}"
            );
        }
        // A lobby message does not take a game.
        assert!(decode(r#"{"type":"ping","game_id":"g"}"#).is_err());
    }

    #[test]
    fn a_game_action_needs_a_string_game_id() {
        let e = decode(r#"{"type":"resign","id":2}"#).unwrap_err();
        assert_eq!(e.refusal.code, ErrorCode::BadRequest);
        assert!(
            e.refusal.message.contains("game_id"),
            "{}",
            e.refusal.message
        );
        assert_eq!(e.id, Some(RequestId::Number(2)));
        let e = decode(r#"{"type":"resign","game_id":7}"#).unwrap_err();
        assert!(
            e.refusal.message.contains("game_id"),
            "{}",
            e.refusal.message
        );
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
    fn a_key_given_twice_is_refused_not_read_as_the_last() {
        let e = decode(r#"{"type":"ping","id":8,"type":"list_games"}"#).unwrap_err();
        assert_eq!(e.refusal.code, ErrorCode::BadRequest);
        assert_eq!(e.refusal.message, "bad message: duplicate field `type`");
        assert_eq!(e.id, Some(RequestId::Number(8)), "the id is still echoed");
        let e =
            decode(r#"{"type":"play","game_id":"g","move_number":1,"vertex":"D4","vertex":"Q16"}"#)
                .unwrap_err();
        assert_eq!(e.refusal.message, "bad message: duplicate field `vertex`");
        // Two ids: neither is echoed.
        let e = decode(r#"{"type":"ping","id":1,"id":2}"#).unwrap_err();
        assert_eq!(e.refusal.message, "bad message: duplicate field `id`");
        assert_eq!(e.id, None);
        // Deeper down too: a size given twice is neither size.
        let e = decode(
            r#"{"type":"seek","id":3,"settings":{"board_size":9,"clock":{"system":"absolute","main_ms":1,"main_ms":2},"board_size":19}}"#,
        )
        .unwrap_err();
        assert_eq!(e.refusal.code, ErrorCode::BadRequest);
        assert_eq!(e.refusal.message, "bad message: duplicate field `main_ms`");
        assert_eq!(e.id, Some(RequestId::Number(3)));
        let e =
            decode(r#"{"type":"mark_dead","game_id":"g","id":4,"x":[{"a":1,"a":1}]}"#).unwrap_err();
        assert_eq!(e.refusal.message, "bad message: duplicate field `a`");
        // Equal keys in two different objects are not a repeat.
        let ok = decode(
            r#"{"type":"seek","settings":{"board_size":9,"clock":{"system":"absolute","main_ms":60000}}}"#,
        );
        assert!(ok.is_ok(), "{ok:?}");
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
    fn a_move_decodes_and_encodes_flat() {
        let text = r#"{"type":"play","id":"a","game_id":"g1","move_number":3,"vertex":"D4"}"#;
        let r = decode(text).unwrap();
        assert_eq!(
            r.msg,
            ClientMsg::game(
                "g1",
                GameAction::Play {
                    move_number: 3,
                    vertex: Move::Play(Vertex::new(3, 3))
                }
            )
        );
        let again: serde_json::Value = serde_json::to_value(&r).unwrap();
        let original: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(again, original);
        assert!(
            decode(r#"{"type":"play","game_id":"g1","move_number":3,"vertex":"D4","x":1}"#)
                .is_err()
        );
    }
}
