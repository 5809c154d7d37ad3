//! Games as records for people and other programs: the JSON record and the SGF of a game,
//! made from its stored events. Sealed moves are never revealed here before they are
//! played, the same as on the wire.

use serde::{Deserialize, Serialize};

use crate::clock::{ClockView, PlayerClock, TimeControl};
use crate::protocol::{EventFrame, GameEvent, GameSettings, UserInfo};
use crate::rules::sgf::{GameRecord as Sgf, MoveNode, Property};
use crate::rules::{Color, GameResult, Move, Vertex};
use crate::store::{EventRecord, GameRecord};

/// One game as `GET /api/games/{id}` returns it. `Deserialize` too, for clients and for
/// the test that reads the documented record back.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GameView {
    pub game_id: String,
    pub black: UserInfo,
    pub white: UserInfo,
    pub settings: GameSettings,
    pub status: crate::store::GameStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    pub created_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<i64>,
    pub handicap_stones: Vec<Vertex>,
    pub moves: Vec<MoveView>,
    /// Every event as clients saw it (sealed points removed).
    pub events: Vec<EventFrame>,
    /// The spectators' chat, once the game is over (kept from the players until then).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kibitz: Vec<KibitzLine>,
}

/// A spectators' chat line in a finished game's record.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KibitzLine {
    pub from: String,
    pub name: String,
    pub text: String,
    pub at: i64,
}

impl From<crate::store::KibitzRecord> for KibitzLine {
    fn from(k: crate::store::KibitzRecord) -> KibitzLine {
        KibitzLine {
            from: k.user_id,
            name: k.name,
            text: k.text,
            at: k.at_ms,
        }
    }
}

/// A move of the record with the mover's clock after it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MoveView {
    pub move_number: u32,
    pub color: Color,
    pub vertex: Move,
    pub at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<PlayerClock>,
}

/// A game's summary row as the game list shows it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ListedGame {
    pub game_id: String,
    pub black: String,
    pub white: String,
    pub black_name: String,
    pub white_name: String,
    pub status: crate::store::GameStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    pub created_at: i64,
    pub move_count: u32,
    /// From the stored settings, for clients that filter by size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_size: Option<u8>,
    /// A live game whose spectators see it late: its stored `move_count` is the players'
    /// and must be replaced by the spectators' before anyone is shown it.
    #[serde(skip)]
    pub delayed: bool,
}

impl From<GameRecord> for ListedGame {
    fn from(g: GameRecord) -> ListedGame {
        let board_size = serde_json::from_str::<serde_json::Value>(&g.settings)
            .ok()
            .and_then(|s| s["board_size"].as_u64())
            .and_then(|n| u8::try_from(n).ok());
        let delayed = g.status == crate::store::GameStatus::Live
            && serde_json::from_str::<GameSettings>(&g.settings)
                .is_ok_and(|s| s.delays_spectators());
        ListedGame {
            board_size,
            delayed,
            game_id: g.id,
            black: g.black,
            white: g.white,
            black_name: g.black_name,
            white_name: g.white_name,
            status: g.status,
            result: g.result,
            created_at: g.created_at_ms,
            move_count: g.move_count,
        }
    }
}

/// Builds the record of a game from its row and its stored events.
pub fn game_view(row: &GameRecord, events: &[EventRecord]) -> Option<GameView> {
    let frames: Vec<EventFrame> = events
        .iter()
        .filter_map(|e| serde_json::from_str::<EventFrame>(&e.payload).ok())
        .map(|f| match f.event.public() {
            Some(event) => EventFrame { event, ..f },
            None => f,
        })
        .collect();
    let Some(GameEvent::GameCreated {
        settings,
        black,
        white,
        handicap_stones,
        ..
    }) = frames.first().map(|f| &f.event)
    else {
        return None;
    };
    let mut handicap = handicap_stones.clone();
    let mut moves = Vec::new();
    for f in &frames {
        match &f.event {
            GameEvent::HandicapPlaced { vertices, .. } => handicap = vertices.clone(),
            GameEvent::MovePlayed {
                move_number,
                color,
                vertex,
                clock,
                at,
                ..
            } => moves.push(MoveView {
                move_number: *move_number,
                color: *color,
                vertex: *vertex,
                at: *at,
                clock: clock.map(|c: ClockView| *c.player(*color)),
            }),
            _ => {}
        }
    }
    Some(GameView {
        game_id: row.id.clone(),
        black: black.clone(),
        white: white.clone(),
        settings: (**settings).clone(),
        status: row.status,
        result: row.result.clone(),
        created_at: row.created_at_ms,
        ended_at: row.ended_at_ms,
        handicap_stones: handicap,
        moves,
        events: frames,
        kibitz: Vec::new(),
    })
}

/// `OT`: the overtime in words, as SGF writers usually say it.
fn overtime(tc: &TimeControl) -> Option<String> {
    match *tc {
        TimeControl::Byoyomi {
            periods, period_ms, ..
        } => Some(format!("{periods}x{} byo-yomi", period_ms / 1000)),
        TimeControl::Canadian {
            moves, block_ms, ..
        } => Some(format!("{moves}/{} Canadian", block_ms / 1000)),
        TimeControl::Fischer { increment_ms, .. } => {
            Some(format!("{} fischer", increment_ms as f64 / 1000.0))
        }
        TimeControl::Simple { per_move_ms } => Some(format!("{} simple", per_move_ms / 1000)),
        TimeControl::None | TimeControl::Absolute { .. } => None,
    }
}

/// The game as an SGF FF[4] record: players, rules, komi, handicap, time settings,
/// result, and each move with the time its player had left (`BL`/`WL`, plus `OB`/`OW`
/// for byo-yomi periods or Canadian stones).
pub fn sgf(view: &GameView) -> String {
    let s = &view.settings;
    let mut record = Sgf::new(s.board_size);
    record.komi = Some(s.komi());
    let ruleset = s.ruleset.sgf_name();
    // A ko rule other than the ruleset's own is part of the rules the game was legal
    // under, so the record says it (`tengen rules` reads it back).
    record.ruleset = Some(match s.ko_rule() {
        ko if ko == s.ruleset.default_ko_rule() => ruleset.to_string(),
        ko => format!("{ruleset}, {} ko", ko.name()),
    });
    record.black_player = Some(view.black.name.clone());
    record.white_player = Some(view.white.name.clone());
    record.result = view
        .result
        .clone()
        .filter(|r| r.parse::<GameResult>().is_ok());
    record.date = Some(date(view.created_at));
    record.time_limit = s.clock.main_ms().map(|ms| ms as f64 / 1000.0);
    record.overtime = overtime(&s.clock);
    // Free placement's stones are on the board only once placed. The set stones of the
    // ancient rules are there from the start, and White moves first (docs/RULES.md §9.1).
    let placed = s.handicap >= 2 && !view.handicap_stones.is_empty();
    if placed {
        record.handicap = Some(s.handicap);
    }
    record.setup = s.starting_stones(&view.handicap_stones);
    if !record.setup.is_empty() {
        record.to_move = Some(if placed {
            Color::White
        } else {
            s.first_to_move()
        });
    }
    record.moves = view
        .moves
        .iter()
        .map(|m| {
            let mut node = MoveNode::new(m.color, m.vertex);
            if let Some(c) = m.clock {
                let (left, periods) = match s.clock {
                    TimeControl::Byoyomi { .. } if c.main_ms == 0 => {
                        (c.period_ms, Some(c.periods_left))
                    }
                    TimeControl::Canadian { .. } if c.main_ms == 0 => {
                        (c.period_ms, Some(c.moves_left))
                    }
                    TimeControl::Simple { .. } => (c.period_ms, None),
                    _ => (c.main_ms, None),
                };
                node.time_left = Some(left as f64 / 1000.0);
                node.periods_left = periods;
            }
            node
        })
        .collect();
    // Referee actions as comments: on the last move before them, or the root's `GC`.
    let mut played = 0usize;
    let mut root_notes = Vec::new();
    for f in &view.events {
        if let GameEvent::MovePlayed { planned, .. } = f.event {
            played += 1;
            if let Some(node) = planned.then(|| record.moves.get_mut(played - 1)).flatten() {
                append_comment(
                    &mut node.properties,
                    "played from a plan of conditional moves",
                );
            }
        }
        let Some(note) = referee_note(&f.event) else {
            continue;
        };
        match played.checked_sub(1).and_then(|i| record.moves.get_mut(i)) {
            Some(node) => append_comment(&mut node.properties, &note),
            None => root_notes.push(note),
        }
    }
    if !root_notes.is_empty() {
        record
            .root_properties
            .push(Property::from_text("GC", [root_notes.join("\n")]));
    }
    record.to_sgf()
}

/// Adds a line to a node's comment (`C`), creating it if needed.
fn append_comment(properties: &mut Vec<Property>, note: &str) {
    match properties.iter_mut().find(|p| p.ident == "C") {
        Some(c) => {
            let text = format!("{}\n{note}", c.text());
            *c = Property::from_text("C", [text]);
        }
        None => properties.push(Property::from_text("C", [note])),
    }
}

/// A referee's action in words, for the SGF (client-protocol/referee.md).
fn referee_note(event: &GameEvent) -> Option<String> {
    let (by, what, reason) = match event {
        GameEvent::Warned {
            color,
            warnings,
            by,
            reason,
        } => (by, format!("warned {color} (warning {warnings})"), reason),
        GameEvent::ClockAdjusted {
            color,
            delta_ms,
            by,
            reason,
            ..
        } => {
            let secs = delta_ms.unsigned_abs() as f64 / 1000.0;
            let what = match *delta_ms > 0 {
                true => format!("gave {color} {secs} s"),
                false => format!("took {secs} s from {color}"),
            };
            (by, what, reason)
        }
        GameEvent::RefereePaused { by, reason, .. } => (by, "paused the game".into(), reason),
        GameEvent::RefereeResumed { by, reason, .. } => (by, "resumed the game".into(), reason),
        GameEvent::AdjournmentScheduled { by, reason, .. } => {
            (by, "adjourned the game".into(), reason)
        }
        GameEvent::Ruled {
            ruling,
            by,
            reason,
            replay_game_id,
        } => {
            let ruling = ruling.name();
            let replay = replay_game_id
                .as_ref()
                .map(|id| format!(", replayed as game {id}"))
                .unwrap_or_default();
            (by, format!("ruled {ruling}{replay}"), reason)
        }
        GameEvent::ResultChanged {
            previous,
            result,
            by,
            reason,
            ruling,
            score,
        } => {
            let how = match (score, ruling) {
                (Some(s), _) => format!("corrected the count ({})", s.chinese),
                (None, Some(ruling)) => {
                    format!("changed the result ({})", ruling.name())
                }
                (None, None) => "changed the result".to_string(),
            };
            (by, format!("{how}: {previous} -> {result}"), reason)
        }
        _ => return None,
    };
    Some(format!("Referee {}: {what}: {reason}", by.name))
}

/// `YYYY-MM-DD` (UTC) of a Unix time in milliseconds.
pub fn date(ms: i64) -> String {
    // Civil-from-days (Howard Hinnant's algorithm), to avoid a date crate for one field.
    let days = ms.div_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The player who left a finished game and lost it while away (an escaper), if any: the
/// result in effect is a forfeit or a time loss against them and the game ended that way
/// (a claim, the forfeit limit or their clock, not a referee: the event just before
/// `game_ended` is no `warned` or `ruled`), they had been in the game, and their last
/// `presence` before the end is offline. A time loss counts only when their clock ran for
/// at least the game's claim wait ([`GameSettings::claim_wait_ms`]) after they left: the
/// opponent could have claimed the game by then, so running out the clock away is
/// leaving as surely. (Their clock at leaving is on the `presence` event; a log too old
/// to have it is read by the events' times.) A player who never came (lateness) or was
/// claimed against while present (stalling) did not escape. `events` are the game's, in
/// `seq` order; only its `presence`, `warned`, `ruled` and `game_ended` events are read.
pub fn escaper(row: &GameRecord, events: &[EventRecord]) -> Option<Color> {
    let result: GameResult = row.result.as_deref()?.parse().ok()?;
    let (loser, settings) = match result {
        GameResult::Forfeit { winner } => (winner.opponent(), None),
        GameResult::Time { winner } => (
            winner.opponent(),
            Some(serde_json::from_str::<GameSettings>(&row.settings).ok()?),
        ),
        _ => return None,
    };
    let (mut came, mut left, mut referee_seq) = (false, None, None);
    for record in events {
        let Ok(frame) = serde_json::from_str::<EventFrame>(&record.payload) else {
            continue;
        };
        match frame.event {
            GameEvent::Presence {
                color,
                online,
                clock,
            } if color == loser => {
                came |= online;
                left = (!online).then_some((record.at_ms, clock));
            }
            GameEvent::Warned { .. } | GameEvent::Ruled { .. } => referee_seq = Some(frame.seq),
            GameEvent::GameEnded {
                result: ended,
                reason,
                ..
            } => {
                let by_referee = referee_seq.is_some_and(|s| s + 1 == frame.seq);
                let escaped = ended == result && reason == result.reason() && !by_referee;
                let away = left.is_some_and(|(at, clock)| match &settings {
                    None => true,
                    Some(settings) => {
                        let ran = clock
                            .and_then(|c| c.player(loser).remaining_ms(&settings.clock))
                            .unwrap_or_else(|| record.at_ms.saturating_sub(at).max(0) as u64);
                        ran >= settings.claim_wait_ms()
                    }
                });
                return (escaped && came && away).then_some(loser);
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seq: u64, event: GameEvent) -> EventRecord {
        let frame = EventFrame {
            game_id: "g".into(),
            seq,
            event,
        };
        EventRecord {
            game_id: "g".into(),
            seq,
            kind: frame.event.kind().into(),
            payload: serde_json::to_string(&frame).expect("JSON"),
            at_ms: 0,
        }
    }

    fn presence(seq: u64, color: Color, online: bool) -> EventRecord {
        record(
            seq,
            GameEvent::Presence {
                color,
                online,
                clock: None,
            },
        )
    }

    fn ended(seq: u64) -> EventRecord {
        record(
            seq,
            GameEvent::GameEnded {
                result: GameResult::Forfeit {
                    winner: Color::White,
                },
                reason: "forfeit".into(),
                score: None,
                clock: None,
            },
        )
    }

    #[test]
    fn an_escaper_came_left_and_lost_by_forfeit_while_away() {
        let row = GameRecord {
            id: "g".into(),
            created_at_ms: 0,
            settings: "{}".into(),
            black: "b".into(),
            white: "w".into(),
            black_name: "B".into(),
            white_name: "W".into(),
            status: crate::store::GameStatus::Finished,
            result: Some("W+F".into()),
            ended_at_ms: Some(1),
            move_count: 0,
        };
        let came_and_left = [
            presence(2, Color::Black, true),
            presence(3, Color::White, true),
            presence(9, Color::Black, false),
            ended(10),
        ];
        assert_eq!(escaper(&row, &came_and_left), Some(Color::Black));
        // Never came: late, not an escaper.
        assert_eq!(
            escaper(&row, &[presence(3, Color::White, true), ended(4)]),
            None
        );
        // There at the end (a stalling claim).
        let there = [presence(2, Color::Black, true), ended(10)];
        assert_eq!(escaper(&row, &there), None);
        // The result in effect is another one now.
        let changed = GameRecord {
            result: Some("Void".into()),
            ..row.clone()
        };
        assert_eq!(escaper(&changed, &came_and_left), None);
    }

    #[test]
    fn a_time_loss_counts_when_the_player_was_away_a_whole_claim_wait() {
        let settings = GameSettings::default();
        let wait = settings.claim_wait_ms() as i64;
        let row = GameRecord {
            id: "g".into(),
            created_at_ms: 0,
            settings: serde_json::to_string(&settings).expect("JSON"),
            black: "b".into(),
            white: "w".into(),
            black_name: "B".into(),
            white_name: "W".into(),
            status: crate::store::GameStatus::Finished,
            result: Some("W+T".into()),
            ended_at_ms: Some(1),
            move_count: 0,
        };
        let at = |mut r: EventRecord, ms: i64| {
            r.at_ms = ms;
            r
        };
        let time_loss = |seq, ms| {
            let loss = GameEvent::GameEnded {
                result: GameResult::Time {
                    winner: Color::White,
                },
                reason: "time".into(),
                score: None,
                clock: None,
            };
            at(record(seq, loss), ms)
        };
        let left_at = 1_000;
        let away = |end_ms| {
            [
                at(presence(2, Color::Black, true), 0),
                at(presence(9, Color::Black, false), left_at),
                time_loss(10, end_ms),
            ]
        };
        assert_eq!(escaper(&row, &away(left_at + wait)), Some(Color::Black));
        assert_eq!(
            escaper(&row, &away(left_at + wait - 1)),
            None,
            "not away long enough"
        );
        let there = [
            at(presence(2, Color::Black, true), 0),
            time_loss(10, left_at + wait),
        ];
        assert_eq!(escaper(&row, &there), None, "lost on time at the board");
    }

    #[test]
    fn dates_are_civil_utc_days() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(951_782_400_000), "2000-02-29");
        assert_eq!(date(1_796_083_200_000), "2026-12-01");
    }
}
