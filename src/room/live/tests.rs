//! Direct tests of the state machine: every action in every stage, replay equivalence,
//! replay errors, and the timer. Time is a plain argument, so all of it is exact.

use super::*;
use crate::clock::TimeControl;
use crate::protocol::{ErrorCode, Role};
use crate::rules::Move;

/// The wall time at creation, Unix ms.
pub(super) const WALL: i64 = 1_800_000_000_000;

pub(super) fn user(id: &str) -> UserInfo {
    UserInfo {
        id: id.into(),
        name: id.into(),
        role: Role::Player,
    }
}

pub(super) fn timed() -> GameSettings {
    GameSettings {
        board_size: 9,
        clock: TimeControl::Absolute { main_ms: 600_000 },
        ..GameSettings::default()
    }
}

pub(super) fn at(now: Millis) -> Moment {
    Moment {
        now,
        wall_ms: WALL + now as i64,
        lag_ms: 0,
    }
}

pub(super) fn point(x: u8, y: u8) -> Vertex {
    Vertex::new(x, y)
}

pub(super) fn stone(x: u8, y: u8) -> Move {
    Move::Play(point(x, y))
}

/// A game being played, with its log: every event with the moment it was recorded at.
pub(super) struct Table {
    pub(super) game: LiveGame,
    pub(super) log: Vec<(GameEvent, Moment)>,
}

impl Table {
    pub(super) fn new(settings: GameSettings) -> Table {
        let first = GameEvent::GameCreated {
            settings: Box::new(settings),
            black: user("b"),
            white: user("w"),
            handicap_stones: Vec::new(),
            nigiri: None,
            created_at: WALL,
        };
        let game = LiveGame::create(&first, at(0), LagSettings::default()).expect("created");
        Table {
            game,
            log: vec![(first, at(0))],
        }
    }

    pub(super) fn take(&mut self, step: Step, when: Moment) -> Vec<&'static str> {
        assert_eq!(step.first_seq(), self.game.seq() + 1);
        let kinds = step.events.iter().map(GameEvent::kind).collect();
        self.log.extend(step.events.into_iter().map(|e| (e, when)));
        self.game = *step.game;
        kinds
    }

    pub(super) fn act(
        &mut self,
        who: Color,
        action: GameAction,
        when: Moment,
    ) -> Vec<&'static str> {
        let step = self.game.decide(who, &action, when).expect("accepted");
        self.take(step, when)
    }

    pub(super) fn timer(&mut self, now: Millis) -> Vec<&'static str> {
        let step = self.game.on_timer(at(now));
        self.take(step, at(now))
    }

    pub(super) fn presence(&mut self, color: Color, now: Millis) {
        let step = self.game.presence(color, true, at(now));
        self.take(step, at(now));
    }

    pub(super) fn play(&mut self, who: Color, mv: Move, now: Millis) -> Vec<&'static str> {
        let move_number = self.game.move_count() + 1;
        self.act(
            who,
            GameAction::Play {
                move_number,
                vertex: mv,
            },
            at(now),
        )
    }

    /// The log replayed, each event at the moment it was recorded.
    pub(super) fn replayed(&self) -> LiveGame {
        let (first, when) = &self.log[0];
        let mut game = LiveGame::create(first, *when, LagSettings::default()).expect("created");
        for (i, (event, when)) in self.log.iter().enumerate().skip(1) {
            game.apply(event, i as u64 + 1, *when).expect("replays");
        }
        game
    }

    /// The log replayed as after a restart: every event at the one moment `now`, as
    /// `rebuild` does, then settled.
    pub(super) fn restarted(&self, now: Millis) -> LiveGame {
        let mut game =
            LiveGame::create(&self.log[0].0, at(now), LagSettings::default()).expect("created");
        for (i, (event, _)) in self.log.iter().enumerate().skip(1) {
            game.apply(event, i as u64 + 1, at(now)).expect("replays");
        }
        game.settle_after_restart(now);
        game
    }
}

pub(super) fn snapshot_json(game: &LiveGame, now: Millis) -> serde_json::Value {
    serde_json::to_value(game.snapshot("g", now, 0, None)).expect("serializes")
}

/// The stages of the table, each built by real actions, with Black acting in them.
fn stages() -> Vec<(&'static str, Table)> {
    let running = || {
        let mut t = Table::new(timed());
        t.presence(Color::Black, 0);
        t.presence(Color::White, 0);
        t.game.start_clock_if_stopped(0);
        t
    };
    let scheduled = Table::new(GameSettings {
        start_at: Some(WALL + 60_000),
        ..timed()
    });
    let handicap = Table::new(GameSettings {
        handicap: 2,
        handicap_placement: HandicapPlacement::Free,
        ..timed()
    });
    let mut asked = running();
    asked.act(Color::White, GameAction::Pause {}, at(10));
    let mut paused = running();
    paused.act(Color::White, GameAction::Pause {}, at(10));
    paused.act(Color::Black, GameAction::Pause {}, at(20));
    let mut resume_asked = running();
    resume_asked.act(Color::White, GameAction::Pause {}, at(10));
    resume_asked.act(Color::Black, GameAction::Pause {}, at(20));
    resume_asked.act(Color::White, GameAction::Resume {}, at(30));
    let mut adjourned = running();
    let seal = GameAction::Seal {
        move_number: 1,
        vertex: stone(2, 2),
    };
    adjourned.act(Color::Black, seal, at(10));
    adjourned.act(Color::White, GameAction::Resume {}, at(20));
    let mut scoring = running();
    scoring.play(Color::Black, stone(2, 2), 10);
    scoring.play(Color::White, stone(6, 6), 20);
    scoring.play(Color::Black, Move::Pass, 30);
    scoring.play(Color::White, Move::Pass, 40);
    let mut accepted = running();
    accepted.play(Color::Black, stone(2, 2), 10);
    accepted.play(Color::White, Move::Pass, 20);
    accepted.play(Color::Black, Move::Pass, 30);
    accepted.act(
        Color::White,
        GameAction::AcceptScore { marks_seq: None },
        at(40),
    );
    let mut ended = running();
    ended.act(Color::White, GameAction::Resign {}, at(10));
    vec![
        ("scheduled", scheduled),
        ("handicap", handicap),
        ("running", running()),
        ("pause asked", asked),
        ("paused", paused),
        ("resume asked", resume_asked),
        ("adjourned, resume asked", adjourned),
        ("scoring", scoring),
        ("scoring, accepted by White", accepted),
        ("ended", ended),
    ]
}

/// Every action Black can take, for the next move of `game`.
fn actions(game: &LiveGame) -> Vec<(&'static str, GameAction)> {
    let move_number = game.move_count() + 1;
    vec![
        (
            "play",
            GameAction::Play {
                move_number,
                vertex: stone(4, 4),
            },
        ),
        ("resign", GameAction::Resign {}),
        (
            "place_handicap",
            GameAction::PlaceHandicap {
                vertices: vec![point(2, 2), point(6, 6)],
            },
        ),
        (
            "mark_dead",
            GameAction::MarkDead {
                vertex: point(2, 2),
                dead: true,
            },
        ),
        ("accept_score", GameAction::AcceptScore { marks_seq: None }),
        ("reject_score", GameAction::RejectScore {}),
        (
            "chat",
            GameAction::Chat {
                text: "hello".into(),
            },
        ),
        ("pause", GameAction::Pause {}),
        ("resume", GameAction::Resume {}),
        (
            "seal",
            GameAction::Seal {
                move_number,
                vertex: stone(4, 4),
            },
        ),
        ("claim_win", GameAction::ClaimWin {}),
    ]
}

type Outcome = Result<&'static [&'static str], ErrorCode>;

const PHASE: Outcome = Err(ErrorCode::WrongPhase);
const ENDS: Outcome = Ok(&["game_ended"]);
const CHAT: Outcome = Ok(&["chat"]);
const MOVE: Outcome = Ok(&["move_played"]);
const SEAL: Outcome = Ok(&["move_sealed"]);
/// The opponent has been away only a moment.
const TOO_SOON: Outcome = Err(ErrorCode::Forbidden);

/// Outcomes in the order of [`actions`]: play, resign, place_handicap, mark_dead,
/// accept_score, reject_score, chat, pause, resume, seal, claim_win.
fn expected(stage: &str) -> [Outcome; 11] {
    match stage {
        "scheduled" => [
            PHASE, ENDS, PHASE, PHASE, PHASE, PHASE, CHAT, PHASE, PHASE, PHASE, PHASE,
        ],
        "handicap" => [
            PHASE,
            ENDS,
            Ok(&["handicap_placed"]),
            PHASE,
            PHASE,
            PHASE,
            CHAT,
            PHASE,
            PHASE,
            PHASE,
            TOO_SOON,
        ],
        "running" => [
            MOVE,
            ENDS,
            PHASE,
            PHASE,
            PHASE,
            PHASE,
            CHAT,
            Ok(&["pause_requested"]),
            PHASE,
            SEAL,
            TOO_SOON,
        ],
        "pause asked" => [
            MOVE,
            ENDS,
            PHASE,
            PHASE,
            PHASE,
            PHASE,
            CHAT,
            Ok(&["paused"]),
            PHASE,
            SEAL,
            TOO_SOON,
        ],
        "paused" => [
            PHASE,
            ENDS,
            PHASE,
            PHASE,
            PHASE,
            PHASE,
            CHAT,
            PHASE,
            Ok(&["resume_requested"]),
            PHASE,
            PHASE,
        ],
        "resume asked" => [
            PHASE,
            ENDS,
            PHASE,
            PHASE,
            PHASE,
            PHASE,
            CHAT,
            PHASE,
            Ok(&["resumed"]),
            PHASE,
            PHASE,
        ],
        "adjourned, resume asked" => [
            PHASE,
            ENDS,
            PHASE,
            PHASE,
            PHASE,
            PHASE,
            CHAT,
            PHASE,
            Ok(&["resumed", "move_played"]),
            PHASE,
            PHASE,
        ],
        "scoring" => [
            PHASE,
            ENDS,
            PHASE,
            Ok(&["dead_marked"]),
            Ok(&["score_accepted"]),
            Ok(&["play_resumed"]),
            CHAT,
            PHASE,
            PHASE,
            PHASE,
            PHASE,
        ],
        "scoring, accepted by White" => [
            PHASE,
            ENDS,
            PHASE,
            Ok(&["dead_marked"]),
            Ok(&["score_accepted", "game_ended"]),
            Ok(&["play_resumed"]),
            CHAT,
            PHASE,
            PHASE,
            PHASE,
            PHASE,
        ],
        "ended" => [PHASE; 11],
        other => panic!("no expectations for {other}"),
    }
}

#[test]
fn every_action_in_every_stage() {
    for (stage, table) in stages() {
        let outcomes = expected(stage);
        for ((name, action), want) in actions(&table.game).into_iter().zip(outcomes) {
            let before = snapshot_json(&table.game, 50);
            let got = table
                .game
                .decide(Color::Black, &action, at(50))
                .map(|step| {
                    let kinds: Vec<&str> = step.events.iter().map(GameEvent::kind).collect();
                    // The events are the game's next ones, and applying them again to
                    // the game before gives the game after.
                    let mut replayed = table.game.clone();
                    for (seq, e) in (step.first_seq()..).zip(&step.events) {
                        replayed
                            .apply(e, seq, at(50))
                            .expect("a decided event replays");
                    }
                    assert_eq!(
                        snapshot_json(&replayed, 60),
                        snapshot_json(&step.game, 60),
                        "{stage}: {name}"
                    );
                    kinds
                })
                .map_err(|r| r.code);
            let want = want.map(|kinds| kinds.to_vec());
            assert_eq!(got, want, "{stage}: {name}");
            assert_eq!(snapshot_json(&table.game, 50), before, "{stage}: {name}");
        }
    }
}

#[test]
fn bad_input_is_refused_with_its_code() {
    let (_, mut t) = stages().swap_remove(2);
    t.play(Color::Black, stone(2, 2), 10);
    let refused = |t: &Table, who, action: GameAction| {
        t.game
            .decide(who, &action, at(20))
            .map(|_| ())
            .unwrap_err()
            .code
    };
    let play = |move_number, mv| GameAction::Play {
        move_number,
        vertex: mv,
    };
    let cases = [
        (Color::White, play(2, stone(2, 2)), ErrorCode::IllegalMove),
        (Color::White, play(1, stone(3, 3)), ErrorCode::StaleMove),
        (Color::Black, play(2, stone(3, 3)), ErrorCode::NotYourTurn),
        (Color::White, play(2, stone(9, 9)), ErrorCode::IllegalMove),
        (
            Color::White,
            GameAction::Chat { text: "  ".into() },
            ErrorCode::BadRequest,
        ),
        (
            Color::White,
            GameAction::Chat {
                text: "x".repeat(MAX_CHAT_CHARS + 1),
            },
            ErrorCode::BadRequest,
        ),
    ];
    for (who, action, code) in cases {
        assert_eq!(refused(&t, who, action.clone()), code, "{who} {action:?}");
    }
    let mut h = Table::new(GameSettings {
        handicap: 2,
        handicap_placement: HandicapPlacement::Free,
        ..timed()
    });
    h.presence(Color::Black, 0);
    let place = |v: Vec<Vertex>| GameAction::PlaceHandicap { vertices: v };
    let cases = [
        (
            Color::Black,
            place(vec![point(2, 2)]),
            ErrorCode::BadRequest,
        ),
        (
            Color::Black,
            place(vec![point(2, 2), point(2, 2)]),
            ErrorCode::BadRequest,
        ),
        (
            Color::White,
            place(vec![point(2, 2), point(6, 6)]),
            ErrorCode::NotYourTurn,
        ),
    ];
    for (who, action, code) in cases {
        assert_eq!(refused(&h, who, action.clone()), code, "{who} {action:?}");
    }
}

/// A whole game with every kind of event: handicap, captures, a pause, an adjournment,
/// a rejected scoring, marks and acceptance.
fn eventful() -> Table {
    let mut t = Table::new(GameSettings {
        handicap: 2,
        handicap_placement: HandicapPlacement::Free,
        ..timed()
    });
    t.presence(Color::Black, 0);
    t.presence(Color::White, 0);
    t.game.start_clock_if_stopped(0);
    t.act(
        Color::Black,
        GameAction::PlaceHandicap {
            vertices: vec![point(2, 2), point(6, 6)],
        },
        at(1_000),
    );
    let mut now = 1_000;
    let mut lagged = |t: &mut Table, who, mv| {
        now += 2_500;
        let move_number = t.game.move_count() + 1;
        let when = Moment {
            lag_ms: 900,
            ..at(now)
        };
        t.act(
            who,
            GameAction::Play {
                move_number,
                vertex: mv,
            },
            when,
        )
    };
    // White's stone at A1 is captured by Black at B1 and A2.
    lagged(&mut t, Color::White, stone(0, 0));
    lagged(&mut t, Color::Black, stone(1, 0));
    lagged(&mut t, Color::White, stone(4, 4));
    assert_eq!(
        lagged(&mut t, Color::Black, stone(0, 1)),
        vec!["move_played"]
    );
    assert_eq!(t.game.rules().prisoners(Color::Black), 1);
    t.act(Color::White, GameAction::Pause {}, at(20_000));
    t.act(Color::Black, GameAction::Pause {}, at(21_000));
    t.act(
        Color::White,
        GameAction::Chat { text: "tea".into() },
        at(22_000),
    );
    t.act(Color::Black, GameAction::Resume {}, at(30_000));
    t.act(Color::White, GameAction::Resume {}, at(31_000));
    let seal = GameAction::Seal {
        move_number: t.game.move_count() + 1,
        vertex: stone(4, 5),
    };
    t.act(Color::White, seal, at(35_000));
    t.act(Color::White, GameAction::Resume {}, at(90_000));
    t.act(Color::Black, GameAction::Resume {}, at(91_000));
    t.play(Color::Black, Move::Pass, 92_000);
    t.play(Color::White, Move::Pass, 93_000);
    t.act(Color::White, GameAction::RejectScore {}, at(94_000));
    t.play(Color::Black, Move::Pass, 95_000);
    t.play(Color::White, Move::Pass, 96_000);
    let mark = GameAction::MarkDead {
        vertex: point(4, 4),
        dead: true,
    };
    t.act(Color::Black, mark, at(97_000));
    t.act(
        Color::Black,
        GameAction::AcceptScore { marks_seq: None },
        at(98_000),
    );
    t.act(
        Color::White,
        GameAction::AcceptScore {
            marks_seq: Some(t.game.seq() - 1),
        },
        at(99_000),
    );
    t
}

#[test]
fn replaying_the_log_gives_the_game_that_was_played() {
    let t = eventful();
    assert_eq!(t.game.phase(), Phase::Ended);
    // The agreed marks stay on show after the count.
    let ended = snapshot_json(&t.game, 100_000);
    assert_eq!(ended["dead"], serde_json::json!(["E5", "E6"]));
    assert_eq!(ended["accepted"], serde_json::json!(["black", "white"]));
    assert_eq!(
        snapshot_json(&t.replayed(), 100_000),
        snapshot_json(&t.game, 100_000)
    );
}

#[test]
fn a_rebuilt_game_keeps_the_lag_quota_that_was_left() {
    let t = eventful();
    let spent = LagSettings::default().quota_initial_ms;
    for color in [Color::Black, Color::White] {
        assert!(
            t.game.lag_quota_ms(color) < spent,
            "{color} used some quota"
        );
    }
    let mut rebuilt = {
        let (first, _) = &t.log[0];
        let mut g = LiveGame::create(first, at(0), LagSettings::default()).expect("created");
        for (i, (event, _)) in t.log.iter().enumerate().skip(1) {
            // A restart replays at a time of its own.
            g.apply(event, i as u64 + 1, at(0)).expect("replays");
        }
        g
    };
    rebuilt.settle_after_restart(0);
    for color in [Color::Black, Color::White] {
        assert_eq!(rebuilt.lag_quota_ms(color), t.game.lag_quota_ms(color));
    }
    let credited: u64 = t
        .log
        .iter()
        .map(|(e, _)| match e {
            GameEvent::MovePlayed { lag_credit_ms, .. } => *lag_credit_ms,
            _ => 0,
        })
        .sum();
    assert!(credited > 0, "the moves recorded their credit");
}

#[test]
fn stored_events_that_do_not_fit_are_errors_naming_their_seq() {
    let mut t = Table::new(timed());
    t.play(Color::Black, Move::Pass, 10);
    t.play(Color::White, Move::Pass, 20);
    assert_eq!(t.game.phase(), Phase::Scoring);
    let seq = t.game.seq() + 1;
    let view = t.game.clock_view(0);
    let stored = |n, color, vertex, captures, clock| GameEvent::MovePlayed {
        move_number: n,
        color,
        vertex,
        captures,
        clock,
        at: WALL,
        sealed: None,
        lag_credit_ms: 0,
        planned: false,
    };
    let mv = |n, color, vertex| stored(n, color, vertex, Vec::new(), view);
    let cases: Vec<(&str, LiveGame, GameEvent, u64)> = vec![
        (
            "a move during scoring",
            t.game.clone(),
            mv(3, Color::Black, stone(1, 1)),
            seq,
        ),
        (
            "a handicap placement in play",
            Table::new(timed()).game,
            GameEvent::HandicapPlaced {
                vertices: vec![point(2, 2), point(6, 6)],
                clock: None,
            },
            2,
        ),
        (
            "an event out of order",
            t.game.clone(),
            GameEvent::Resumed { clock: None },
            seq + 1,
        ),
        (
            "a timed game's move without its clock",
            Table::new(timed()).game,
            stored(1, Color::Black, stone(1, 1), Vec::new(), None),
            2,
        ),
        (
            "captures the position does not make",
            Table::new(timed()).game,
            stored(1, Color::Black, stone(1, 1), vec![point(0, 0)], view),
            2,
        ),
        (
            "a move by the wrong player",
            Table::new(timed()).game,
            mv(1, Color::White, stone(1, 1)),
            2,
        ),
        (
            "a game that begins twice",
            Table::new(timed()).game,
            GameEvent::GameBegan { clock: None },
            2,
        ),
    ];
    for (what, mut game, event, seq) in cases {
        let before = snapshot_json(&game, 0);
        let err = game.apply(&event, seq, at(0)).expect_err(what);
        assert_eq!(err.seq, seq, "{what}");
        assert_eq!(snapshot_json(&game, 0), before, "{what} changed nothing");
    }
    // An illegal move: the point is taken.
    let mut t = Table::new(timed());
    t.play(Color::Black, stone(1, 1), 10);
    let clock = t.game.clock_view(10);
    let taken = GameEvent::MovePlayed {
        move_number: 2,
        color: Color::White,
        vertex: stone(1, 1),
        captures: Vec::new(),
        clock,
        at: WALL,
        sealed: None,
        lag_credit_ms: 0,
        planned: false,
    };
    let err = t.game.apply(&taken, 3, at(20)).expect_err("illegal");
    assert_eq!(err.seq, 3);
}

#[test]
fn the_side_to_move_flags_at_its_deadline() {
    let mut t = Table::new(GameSettings {
        clock: TimeControl::Absolute { main_ms: 10_000 },
        ..timed()
    });
    assert_eq!(
        t.game.next_timer(),
        None,
        "no clock runs before Black comes"
    );
    t.game.start_clock_if_stopped(1_000);
    assert_eq!(t.game.next_timer(), Some(11_000));
    assert!(t.game.on_timer(at(10_999)).events.is_empty());
    assert_eq!(t.timer(11_000), vec!["game_ended"]);
    // Black's first move never came: the game is aborted, not lost (client-protocol/
    // game.md#abort).
    assert_eq!(t.game.result(), Some(GameResult::Void));
    assert_eq!(t.game.next_timer(), None);
}

#[test]
fn a_late_move_loses_on_time() {
    let mut t = Table::new(GameSettings {
        clock: TimeControl::Absolute { main_ms: 10_000 },
        ..timed()
    });
    t.game.start_clock_if_stopped(0);
    assert_eq!(
        t.play(Color::Black, stone(1, 1), 10_000),
        vec!["game_ended"]
    );
    assert_eq!(t.game.phase(), Phase::Ended);
}

fn scheduled(start_in: i64) -> Table {
    Table::new(GameSettings {
        start_at: Some(WALL + start_in),
        forfeit_after_ms: 30_000,
        ..timed()
    })
}

#[test]
fn a_scheduled_game_begins_at_its_start_with_black_s_clock_running() {
    let mut t = scheduled(60_000);
    assert_eq!(t.game.phase(), Phase::Scheduled);
    assert_eq!(t.game.next_timer(), Some(60_000));
    assert!(t.game.on_timer(at(59_999)).events.is_empty());
    assert_eq!(t.timer(60_000), vec!["game_began"]);
    let GameEvent::GameBegan { clock: Some(clock) } = &t.log[1].0 else {
        panic!("game_began with a clock");
    };
    assert_eq!(clock.running, Some(Color::Black));
    assert_eq!(t.game.phase(), Phase::Play);
    assert_eq!(t.game.clock().running(), Some(Color::Black));
}

#[test]
fn a_start_already_past_at_creation_begins_at_once_and_charges_black() {
    let mut t = scheduled(-5_000);
    assert_eq!(t.game.phase(), Phase::Scheduled);
    assert_eq!(t.game.next_timer(), Some(0));
    assert_eq!(t.timer(0), vec!["game_began"]);
    assert_eq!(t.game.clock().running(), Some(Color::Black));
    // Black never comes: forfeit at start + 30 s, which is 25 s after creation.
    t.presence(Color::White, 100);
    assert_eq!(t.game.next_timer(), Some(25_000));
    assert_eq!(t.timer(25_000), vec!["game_ended"]);
    assert_eq!(
        t.game.result(),
        Some(GameResult::Forfeit {
            winner: Color::White
        })
    );
}

#[test]
fn a_start_and_forfeit_both_past_record_the_start_then_the_forfeit() {
    let mut t = scheduled(-60_000);
    assert_eq!(t.timer(0), vec!["game_began", "game_ended"]);
    assert_eq!(t.game.result(), Some(GameResult::DoubleForfeit));
}

#[test]
fn a_start_missed_in_downtime_is_recorded_with_clocks_stopped() {
    let t = scheduled(60_000);
    // The server was down from before the start until after it: the rebuild happens at
    // a wall time past the start.
    let later = Moment {
        now: 0,
        wall_ms: WALL + 70_000,
        lag_ms: 0,
    };
    let mut game = LiveGame::create(&t.log[0].0, later, LagSettings::default()).expect("created");
    game.settle_after_restart(0);
    assert_eq!(game.phase(), Phase::Scheduled);
    assert_eq!(game.next_timer(), Some(0));
    let step = game.on_timer(later);
    assert_eq!(
        step.events,
        vec![GameEvent::GameBegan {
            clock: game.clock_view(0)
        }]
    );
    let mut game = *step.game;
    assert_eq!(game.phase(), Phase::Play);
    assert_eq!(game.clock().running(), None, "downtime is never charged");
    game.start_clock_if_stopped(5);
    assert_eq!(game.clock().running(), Some(Color::Black));
}

#[test]
fn an_older_log_whose_scheduled_game_began_unrecorded_still_replays() {
    // The first server recorded no `game_began` for a start that had passed: its log
    // goes from the creation straight to the first move.
    let mut t = scheduled(-10_000);
    t.presence(Color::Black, 0);
    t.presence(Color::White, 0);
    assert_eq!(t.timer(0), vec!["game_began"]);
    t.play(Color::Black, stone(2, 2), 1_000);
    t.play(Color::White, stone(6, 6), 2_000);
    t.log
        .retain(|(e, _)| !matches!(e, GameEvent::GameBegan { .. }));
    let replayed = t.replayed();
    assert_eq!(replayed.phase(), Phase::Play);
    assert_eq!(replayed.move_count(), 2);
    assert_eq!(replayed.clock_view(2_000), t.game.clock_view(2_000));
}

#[test]
fn the_dead_stone_phase_runs_out_into_a_dispute() {
    let mut t = Table::new(timed());
    t.play(Color::Black, Move::Pass, 10);
    t.play(Color::White, Move::Pass, 20);
    let until = 20 + t.game.settings.scoring_ms;
    assert_eq!(t.game.next_timer(), Some(until));
    assert_eq!(t.timer(until), vec!["play_resumed"]);
    assert_eq!(t.game.phase(), Phase::Play);
    t.play(Color::Black, Move::Pass, until + 10);
    t.play(Color::White, Move::Pass, until + 20);
    let until = until + 20 + t.game.settings.scoring_ms;
    assert_eq!(t.timer(until), vec!["game_ended"]);
    assert!(matches!(t.game.result(), Some(GameResult::Score { .. })));
}

#[test]
fn a_game_paused_by_agreement_is_still_paused_after_a_restart_and_resumes_as_before() {
    let mut t = Table::new(timed());
    t.presence(Color::Black, 0);
    t.presence(Color::White, 0);
    t.game.start_clock_if_stopped(0);
    t.act(Color::White, GameAction::Pause {}, at(20_000));
    t.act(Color::Black, GameAction::Pause {}, at(21_000));
    let mut rebuilt = t.replayed();
    rebuilt.settle_after_restart(100_000);
    let view = rebuilt.clock_view(100_000).expect("timed");
    assert!(view.paused, "the clock view still says paused");
    assert_eq!(view.running, None);
    assert_eq!(view.black.main_ms, 600_000 - 21_000);
    // Both ask to go on: Black's clock runs from then, with the time it had.
    let mut t = Table {
        game: rebuilt,
        log: t.log,
    };
    t.act(Color::White, GameAction::Resume {}, at(200_000));
    assert_eq!(
        t.act(Color::Black, GameAction::Resume {}, at(201_000)),
        ["resumed"]
    );
    let view = t.game.clock_view(211_000).expect("timed");
    assert!(!view.paused);
    assert_eq!(view.running, Some(Color::Black));
    assert_eq!(view.black.main_ms, 600_000 - 21_000 - 10_000);
}

#[test]
fn the_player_to_move_arriving_to_a_stopped_clock_starts_it_with_their_presence() {
    let mut t = Table::new(timed());
    // White is not to move: Black's clock stays still while Black is away.
    t.presence(Color::White, 0);
    assert_eq!(t.game.clock_view(1_000).expect("timed").running, None);
    t.presence(Color::Black, 5_000);
    let (event, _) = t.log.last().expect("logged");
    let GameEvent::Presence {
        clock: Some(view), ..
    } = event
    else {
        panic!("a presence with the clocks: {event:?}");
    };
    assert_eq!(view.running, Some(Color::Black), "the event says it runs");
    let view = t.game.clock_view(8_000).expect("timed");
    assert_eq!(view.running, Some(Color::Black));
    assert_eq!(view.black.main_ms, 600_000 - 3_000);
    // The log replayed charges Black from the arrival, as the room does.
    let replayed = t.replayed().clock_view(8_000).expect("timed");
    assert_eq!(replayed, view);
    // After a restart too: the arrival starts the clock again (the time between the
    // last event and the stop was recorded by no event, so it is not charged).
    let mut t = Table {
        game: t.restarted(20_000),
        log: t.log,
    };
    assert_eq!(t.game.clock_view(20_000).expect("timed").running, None);
    t.presence(Color::Black, 30_000);
    let view = t.game.clock_view(31_000).expect("timed");
    assert_eq!(view.running, Some(Color::Black));
    assert_eq!(view.black.main_ms, 600_000 - 1_000);
}
