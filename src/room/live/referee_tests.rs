//! Direct tests of the referee's actions, strict mode and claims on the state machine.

use super::tests::{Table, WALL, at, point, snapshot_json, stone, timed, user};
use super::*;
use crate::protocol::{ErrorCode, Role, Ruling};
use crate::rules::Move;

fn referee(id: &str) -> UserInfo {
    UserInfo {
        role: Role::Referee,
        ..user(id)
    }
}

fn admin() -> UserInfo {
    UserInfo {
        role: Role::Admin,
        ..user("root")
    }
}

/// A timed 9×9 game with both players at the board and Black's clock running.
fn running(settings: GameSettings) -> Table {
    let mut t = Table::new(settings);
    t.presence(Color::Black, 0);
    t.presence(Color::White, 0);
    t.game.start_clock_if_stopped(0);
    t
}

impl Table {
    fn referee(&mut self, by: &UserInfo, act: GameAction, now: Millis) -> Vec<&'static str> {
        let step = self.game.referee(by, &act, at(now)).expect("accepted");
        self.take(step, at(now))
    }

    fn refused(&self, by: &UserInfo, act: GameAction, now: Millis) -> ErrorCode {
        self.game
            .referee(by, &act, at(now))
            .err()
            .expect("refused")
            .code
    }
}

fn warn(color: Color) -> GameAction {
    GameAction::Warn {
        color,
        reason: "slow play".into(),
    }
}

fn every_act() -> Vec<GameAction> {
    let reason = || "because".to_string();
    vec![
        warn(Color::Black),
        GameAction::AdjustClock {
            color: Color::Black,
            delta_ms: 1000,
            reason: reason(),
        },
        GameAction::RefereePause { reason: reason() },
        GameAction::RefereeResume { reason: reason() },
        GameAction::Rule {
            ruling: Ruling::Draw,
            reason: reason(),
        },
        GameAction::CorrectCount {
            dead: Vec::new(),
            reason: reason(),
        },
        GameAction::ChangeResult {
            ruling: Ruling::Annul,
            reason: reason(),
        },
    ]
}

#[test]
fn only_admins_and_the_right_referee_may_act_and_a_refusal_changes_nothing() {
    let t = running(GameSettings {
        referee: Some("ref1".into()),
        ..timed()
    });
    for act in every_act() {
        for who in [user("b"), user("w"), user("kibitzer"), referee("ref2")] {
            assert_eq!(
                t.refused(&who, act.clone(), 5),
                ErrorCode::Forbidden,
                "{who:?} {act:?}"
            );
        }
        // A player's own action path refuses it too.
        let err = t
            .game
            .decide(Color::Black, &act.clone(), at(5))
            .err()
            .expect("refused");
        assert_eq!(err.code, ErrorCode::Forbidden);
    }
    // An admin who plays in the game is still a player there.
    let admin_player = UserInfo {
        role: Role::Admin,
        ..user("b")
    };
    assert_eq!(
        t.refused(&admin_player, warn(Color::White), 5),
        ErrorCode::Forbidden
    );
    assert_eq!(t.game.seq(), 3);
    assert!(
        t.game
            .referee(&referee("ref1"), &warn(Color::Black), at(5))
            .is_ok()
    );
    assert!(t.game.referee(&admin(), &warn(Color::Black), at(5)).is_ok());
    // With nobody assigned, any referee may act.
    let open = running(timed());
    assert!(
        open.game
            .referee(&referee("ref2"), &warn(Color::Black), at(5))
            .is_ok()
    );
}

#[test]
fn a_reason_is_required() {
    let t = running(timed());
    let act = GameAction::Warn {
        color: Color::Black,
        reason: "  ".into(),
    };
    assert_eq!(t.refused(&admin(), act, 5), ErrorCode::BadRequest);
}

#[test]
fn the_second_warning_loses_the_game_and_the_log_replays() {
    let mut t = running(timed());
    assert_eq!(t.referee(&admin(), warn(Color::White), 10), ["warned"]);
    assert_eq!(t.game.warnings, [0, 1]);
    assert_eq!(
        t.referee(&admin(), warn(Color::White), 20),
        ["warned", "game_ended"]
    );
    assert_eq!(
        t.game.result(),
        Some(GameResult::Forfeit {
            winner: Color::Black
        })
    );
    let snapshot = snapshot_json(&t.game, 20);
    assert_eq!(snapshot["reason"], "forfeit");
    assert_eq!(snapshot["white"]["warnings"], 2);
    // The replay ran no clock (clocks start when players come, not by an event).
    let replayed = snapshot_json(&t.replayed(), 20);
    for field in ["white", "result", "reason", "seq"] {
        assert_eq!(replayed[field], snapshot[field], "{field}");
    }
    let three = running(GameSettings {
        warnings_to_lose: 3,
        ..timed()
    });
    let mut three = three;
    three.referee(&admin(), warn(Color::Black), 10);
    assert_eq!(three.referee(&admin(), warn(Color::Black), 20), ["warned"]);
}

#[test]
fn time_bonus_and_penalty_change_the_clock_and_a_penalty_can_flag() {
    let mut t = running(timed());
    let adjust = |delta_ms| GameAction::AdjustClock {
        color: Color::Black,
        delta_ms,
        reason: "ruling".into(),
    };
    // Black's clock runs from 0: at 1 s, 599 s are left; a 60 s bonus makes 659 s.
    assert_eq!(
        t.referee(&admin(), adjust(60_000), 1_000),
        ["clock_adjusted"]
    );
    assert_eq!(t.game.clock_view(1_000).unwrap().black.main_ms, 659_000);
    assert_eq!(t.game.clock_view(2_000).unwrap().black.main_ms, 658_000);
    t.referee(&admin(), adjust(-100_000), 2_000);
    assert_eq!(t.game.clock_view(2_000).unwrap().black.main_ms, 558_000);
    assert_eq!(t.game.next_timer(), Some(560_000));
    assert_eq!(
        t.referee(&admin(), adjust(-558_000), 2_000),
        ["clock_adjusted", "game_ended"]
    );
    assert_eq!(
        t.game.result(),
        Some(GameResult::Time {
            winner: Color::White
        })
    );
    let untimed = running(GameSettings {
        board_size: 9,
        ..GameSettings::default()
    });
    assert_eq!(
        untimed.refused(&admin(), adjust(1000), 5),
        ErrorCode::BadRequest
    );
    assert_eq!(t.replayed().result(), t.game.result());
}

#[test]
fn a_referee_pause_holds_the_clocks_until_a_referee_resumes() {
    let mut t = running(timed());
    let pause = GameAction::RefereePause {
        reason: "power cut".into(),
    };
    let resume = GameAction::RefereeResume {
        reason: "power back".into(),
    };
    assert_eq!(
        t.refused(&admin(), resume.clone(), 5),
        ErrorCode::WrongPhase
    );
    assert_eq!(
        t.referee(&admin(), pause.clone(), 10_000),
        ["referee_paused"]
    );
    assert_eq!(t.game.next_timer(), None);
    assert!(t.game.snapshot("g", 10_000, 0, None).referee_paused);
    for action in [
        GameAction::Resume {},
        GameAction::Pause {},
        GameAction::ClaimWin {},
    ] {
        let err = t.game.decide(Color::White, &action, at(20_000)).err();
        assert_eq!(
            err.map(|e| e.code),
            Some(ErrorCode::WrongPhase),
            "{action:?}"
        );
    }
    let play = GameAction::Play {
        move_number: 1,
        vertex: stone(2, 2),
    };
    let err = t.game.decide(Color::Black, &play, at(20_000)).err();
    assert_eq!(err.map(|e| e.code), Some(ErrorCode::WrongPhase));
    assert_eq!(t.refused(&admin(), pause, 20_000), ErrorCode::WrongPhase);
    // An hour later the clocks show what they showed at the pause.
    assert_eq!(t.referee(&admin(), resume, 3_610_000), ["referee_resumed"]);
    assert_eq!(t.game.clock_view(3_610_000).unwrap().black.main_ms, 590_000);
    assert_eq!(t.game.next_timer(), Some(3_610_000 + 590_000));
    assert_eq!(
        t.play(Color::Black, stone(2, 2), 3_611_000),
        ["move_played"]
    );
    assert_eq!(t.replayed().seq(), t.game.seq());
}

#[test]
fn a_player_s_resume_during_a_referee_s_pause_is_told_only_a_referee_resumes() {
    let mut t = running(timed());
    let pause = GameAction::RefereePause {
        reason: "power cut".into(),
    };
    t.referee(&admin(), pause, 1_000);
    for who in [Color::Black, Color::White] {
        let refusal = t.game.decide(who, &GameAction::Resume {}, at(2_000)).err();
        let refusal = refusal.expect("a player cannot end a referee's pause");
        assert_eq!(refusal.code, ErrorCode::WrongPhase);
        assert_eq!(
            refusal.message,
            "the referee paused this game: only a referee resumes it"
        );
    }
}

#[test]
fn a_referee_pause_before_the_player_to_move_came_leaves_their_clock_to_their_arrival() {
    let mut t = Table::new(timed());
    t.presence(Color::White, 0);
    let pause = GameAction::RefereePause {
        reason: "hall not ready".into(),
    };
    let resume = GameAction::RefereeResume {
        reason: "hall ready".into(),
    };
    assert_eq!(t.referee(&admin(), pause, 1_000), ["referee_paused"]);
    assert_eq!(t.referee(&admin(), resume, 60_000), ["referee_resumed"]);
    let clock = t.game.clock_view(120_000).unwrap();
    assert_eq!(clock.running, None, "Black has not come: no clock runs");
    assert_eq!(clock.black.main_ms, 600_000);
    assert_eq!(t.game.next_timer(), t.replayed().next_timer());
    // Black comes: their clock starts then, with all its time.
    t.presence(Color::Black, 130_000);
    t.game.start_clock_if_stopped(130_000);
    let clock = t.game.clock_view(140_000).unwrap();
    assert_eq!(clock.running, Some(Color::Black));
    assert_eq!(clock.black.main_ms, 590_000);
}

#[test]
fn rulings_end_the_game_with_their_result() {
    for (ruling, result) in [
        (Ruling::BlackWins, "B+F"),
        (Ruling::WhiteWins, "W+F"),
        (Ruling::Draw, "0"),
        (Ruling::BothLose, "Void"),
        (Ruling::Replay, "Void"),
    ] {
        let mut t = running(timed());
        let act = GameAction::Rule {
            ruling,
            reason: "dispute".into(),
        };
        assert_eq!(t.referee(&admin(), act, 10), ["ruled", "game_ended"]);
        assert_eq!(t.game.result().unwrap().to_string(), result);
        let GameEvent::Ruled { replay_game_id, .. } = &t.log[t.log.len() - 2].0 else {
            panic!("no ruling");
        };
        assert_eq!(replay_game_id.is_some(), ruling == Ruling::Replay);
    }
    let t = running(timed());
    let annul = GameAction::Rule {
        ruling: Ruling::Annul,
        reason: "no".into(),
    };
    assert_eq!(t.refused(&admin(), annul, 10), ErrorCode::BadRequest);
}

/// A 9×9 game counted with Black's stone on C3 marked dead by both players.
fn counted_with_c3_dead() -> Table {
    let mut t = running(timed());
    t.play(Color::Black, stone(2, 2), 10);
    t.play(Color::White, stone(6, 6), 20);
    t.play(Color::Black, Move::Pass, 30);
    t.play(Color::White, Move::Pass, 40);
    let mark = GameAction::MarkDead {
        vertex: point(2, 2),
        dead: true,
    };
    t.act(Color::White, mark, at(50));
    let accept = GameAction::AcceptScore { marks_seq: None };
    t.act(Color::White, accept.clone(), at(60));
    t.act(Color::Black, accept, at(70));
    t
}

#[test]
fn a_corrected_count_is_recounted_and_the_original_stays_in_the_log() {
    let mut t = counted_with_c3_dead();
    let original = t.game.result().unwrap();
    assert_eq!(original.winner(), Some(Color::White));
    let correct = GameAction::CorrectCount {
        dead: Vec::new(),
        reason: "C3 lives".into(),
    };
    assert_eq!(t.referee(&admin(), correct, 100), ["result_changed"]);
    // Each side has one stone and its area: 40.5 each, komi 7.5: White by 7.5.
    let GameEvent::ResultChanged {
        previous,
        result,
        score,
        ..
    } = &t.log.last().unwrap().0
    else {
        panic!("no result_changed");
    };
    assert_eq!(*previous, original);
    assert_eq!(t.game.result(), Some(*result));
    assert_eq!(score.as_ref().unwrap().dead, Vec::<Vertex>::new());
    assert!(
        t.log
            .iter()
            .any(|(e, _)| matches!(e, GameEvent::GameEnded { result, .. } if *result == original))
    );
    let snapshot = snapshot_json(&t.game, 100);
    assert_eq!(snapshot["dead"], serde_json::json!([]));
    assert_eq!(snapshot_json(&t.replayed(), 100), snapshot);
    let on_nothing = GameAction::CorrectCount {
        dead: vec![point(4, 4)],
        reason: "x".into(),
    };
    assert_eq!(t.refused(&admin(), on_nothing, 110), ErrorCode::BadRequest);
}

#[test]
fn results_change_only_after_the_game_and_counts_only_after_counting() {
    let mut t = running(timed());
    let change = |ruling| GameAction::ChangeResult {
        ruling,
        reason: "appeal".into(),
    };
    let correct = GameAction::CorrectCount {
        dead: Vec::new(),
        reason: "x".into(),
    };
    assert_eq!(
        t.refused(&admin(), change(Ruling::Draw), 5),
        ErrorCode::WrongPhase
    );
    assert_eq!(
        t.refused(&admin(), correct.clone(), 5),
        ErrorCode::WrongPhase
    );
    t.act(Color::Black, GameAction::Resign {}, at(10));
    assert_eq!(t.refused(&admin(), correct, 20), ErrorCode::WrongPhase);
    assert_eq!(
        t.refused(&admin(), change(Ruling::Replay), 20),
        ErrorCode::BadRequest
    );
    assert_eq!(
        t.refused(&admin(), warn(Color::Black), 20),
        ErrorCode::WrongPhase
    );
    assert_eq!(
        t.referee(&admin(), change(Ruling::Annul), 20),
        ["result_changed"]
    );
    assert_eq!(t.game.result(), Some(GameResult::Void));
    assert_eq!(
        t.referee(&admin(), change(Ruling::BlackWins), 30),
        ["result_changed"]
    );
    assert_eq!(
        t.replayed().result(),
        Some(GameResult::Forfeit {
            winner: Color::Black
        })
    );
}

#[test]
fn strict_mode_turns_each_kind_of_illegal_move_into_a_lost_turn() {
    let strict = || GameSettings {
        strict_illegal: true,
        ko_rule: Some(crate::rules::KoRule::Situational),
        ..timed()
    };
    let attempt = |t: &mut Table, who: Color, mv: Move, now: Millis| {
        let kinds = t.play(who, mv, now);
        assert_eq!(kinds, ["illegal_attempt", "move_played"]);
        let (GameEvent::IllegalAttempt { reason, .. }, GameEvent::MovePlayed { vertex, .. }) =
            (&t.log[t.log.len() - 2].0, &t.log[t.log.len() - 1].0)
        else {
            panic!("not an attempt and a pass");
        };
        assert_eq!(*vertex, Move::Pass);
        reason.clone()
    };
    // Occupied.
    let mut t = running(strict());
    t.play(Color::Black, stone(2, 2), 10);
    assert_eq!(attempt(&mut t, Color::White, stone(2, 2), 20), "occupied");
    assert_eq!(t.game.to_move(), Color::Black);
    // Suicide: White's A1 inside Black's B1 and A2.
    let mut t = running(strict());
    t.play(Color::Black, stone(1, 0), 10);
    t.play(Color::White, stone(8, 8), 20);
    t.play(Color::Black, stone(0, 1), 30);
    assert_eq!(attempt(&mut t, Color::White, stone(0, 0), 40), "suicide");
    // Ko in the corner: White's A1 takes Black's B1.
    let mut t = running(strict());
    for (who, v) in [
        (Color::Black, stone(1, 0)),
        (Color::White, stone(2, 0)),
        (Color::Black, stone(0, 1)),
        (Color::White, stone(1, 1)),
        (Color::Black, stone(8, 8)),
        (Color::White, stone(0, 0)),
    ] {
        assert_eq!(t.play(who, v, 50), ["move_played"]);
    }
    // White's A1 took Black's B1; Black retaking at B1 at once repeats the position.
    let reason = attempt(&mut t, Color::Black, stone(1, 0), 60);
    assert!(reason == "ko" || reason == "superko", "{reason}");
    assert_eq!(t.replayed().seq(), t.game.seq());
    // Without strict mode the same attempt is refused and changes nothing.
    let mut lax = running(timed());
    lax.play(Color::Black, stone(2, 2), 10);
    let again = GameAction::Play {
        move_number: 2,
        vertex: stone(2, 2),
    };
    let err = lax.game.decide(Color::White, &again, at(20)).err().unwrap();
    assert_eq!(err.code, ErrorCode::IllegalMove);
    // Off the board is refused even in strict mode.
    let mut t = running(GameSettings {
        board_size: 9,
        ..strict()
    });
    t.play(Color::Black, stone(2, 2), 10);
    let off = GameAction::Play {
        move_number: 2,
        vertex: stone(9, 9),
    };
    let err = t.game.decide(Color::White, &off, at(20)).err().unwrap();
    assert_eq!(err.code, ErrorCode::IllegalMove);
}

#[test]
fn a_claim_waits_for_the_absent_players_turn_and_says_how_long_is_left() {
    // 600 s of main time: a tenth is 60 s, under the 120 s of claim_after_ms.
    let mut t = running(GameSettings {
        claim_after_ms: 120_000,
        ..timed()
    });
    t.play(Color::Black, stone(2, 2), 1_000);
    let away = t.game.presence(Color::Black, false, at(1_000));
    t.take(away, at(1_000));
    // White to move: Black's absence does not count on White's own turn.
    let claim = |t: &Table, now| {
        t.game
            .decide(Color::White, &GameAction::ClaimWin {}, at(now))
    };
    let err = claim(&t, 200_000).err().unwrap();
    assert_eq!(err.code, ErrorCode::Forbidden);
    assert_eq!(err.retry_after_ms, None);
    t.play(Color::White, stone(6, 6), 2_000);
    let err = claim(&t, 50_000).err().unwrap();
    assert_eq!(err.code, ErrorCode::Forbidden);
    assert_eq!(err.retry_after_ms, Some(11_000));
    let step = claim(&t, 61_000).expect("claimed");
    assert_eq!(step.events.len(), 1);
    assert_eq!(t.game.settings.claim_wait_ms(), 60_000);
}

#[test]
fn a_scheduled_adjournment_is_sealed_by_the_player_to_move_and_opened_by_the_referee() {
    let mut t = running(timed());
    t.play(Color::Black, stone(2, 2), 1_000);
    let adjourn = GameAction::Adjourn {
        at: WALL + 5_000,
        reason: "end of the session".into(),
    };
    assert_eq!(
        t.referee(&admin(), adjourn, 2_000),
        ["adjournment_scheduled"]
    );
    // Before the time, play goes on.
    t.play(Color::White, stone(6, 6), 3_000);
    let play = GameAction::Play {
        move_number: 3,
        vertex: stone(2, 6),
    };
    let err = t.game.decide(Color::Black, &play, at(5_000)).err().unwrap();
    assert_eq!(err.code, ErrorCode::WrongPhase);
    let seal = GameAction::Seal {
        move_number: 3,
        vertex: stone(2, 6),
    };
    assert_eq!(t.act(Color::Black, seal, at(6_000)), ["move_sealed"]);
    // The players cannot open it by agreement.
    for who in [Color::White, Color::Black] {
        let err = t.game.decide(who, &GameAction::Resume {}, at(7_000)).err();
        assert_eq!(err.map(|e| e.code), Some(ErrorCode::WrongPhase));
    }
    let resume = GameAction::RefereeResume {
        reason: "next session".into(),
    };
    assert_eq!(
        t.referee(&admin(), resume, 90_000_000),
        ["referee_resumed", "move_played"]
    );
    let GameEvent::MovePlayed { vertex, sealed, .. } = &t.log.last().unwrap().0 else {
        panic!("no move");
    };
    assert_eq!((*vertex, *sealed), (stone(2, 6), Some(stone(2, 6))));
    assert_eq!(t.game.to_move(), Color::White);
    // Black's time stopped at the seal.
    assert_eq!(
        t.game.clock_view(90_000_000).unwrap().black.main_ms,
        596_000
    );
    assert_eq!(
        t.play(Color::White, stone(4, 4), 90_001_000),
        ["move_played"]
    );
    assert_eq!(t.replayed().seq(), t.game.seq());
}

#[test]
fn a_present_player_who_stalls_an_untimed_game_can_be_claimed_against() {
    let mut t = running(GameSettings {
        board_size: 9,
        stall_after_ms: Some(600_000),
        ..GameSettings::default()
    });
    t.play(Color::Black, stone(2, 2), 1_000);
    t.play(Color::White, stone(6, 6), 2_000);
    // Black is at the board but does not move.
    let claim = |t: &Table, now| {
        t.game
            .decide(Color::White, &GameAction::ClaimWin {}, at(now))
    };
    let err = claim(&t, 302_000).err().unwrap();
    assert_eq!(err.code, ErrorCode::Forbidden);
    assert_eq!(err.retry_after_ms, Some(300_000));
    let step = claim(&t, 602_000).expect("claimed");
    assert_eq!(
        step.game.result(),
        Some(GameResult::Forfeit {
            winner: Color::White
        })
    );
    // Never on the claimant's own turn.
    t.play(Color::Black, stone(4, 4), 700_000);
    let err = claim(&t, 2_000_000).err().unwrap();
    assert_eq!(err.code, ErrorCode::Forbidden);
}

/// Black's connection closes at `now`.
fn black_leaves(t: &mut Table, now: Millis) {
    let away = t.game.presence(Color::Black, false, at(now));
    t.take(away, at(now));
}

#[test]
fn absence_counts_for_a_claim_from_when_play_goes_on_after_a_pause() {
    let mut t = running(timed());
    t.play(Color::Black, stone(2, 2), 1_000);
    t.play(Color::White, stone(6, 6), 2_000);
    let pause = GameAction::RefereePause {
        reason: "a dispute at the next board".into(),
    };
    t.referee(&admin(), pause, 3_000);
    // Black, to move, steps away during the pause, which is allowed.
    black_leaves(&mut t, 4_000);
    let resume = GameAction::RefereeResume {
        reason: "settled".into(),
    };
    assert_eq!(t.referee(&admin(), resume, 500_000), ["referee_resumed"]);
    // The wait (60 s) counts from the resumption, not from the leaving.
    let claim = |t: &Table, now| {
        t.game
            .decide(Color::White, &GameAction::ClaimWin {}, at(now))
    };
    let err = claim(&t, 501_000).err().expect("too early");
    assert_eq!(err.code, ErrorCode::Forbidden);
    assert_eq!(err.retry_after_ms, Some(59_000));
    // Absent Black's clock waits for Black, as after a restart.
    assert_eq!(t.game.clock_view(520_000).unwrap().running, None);
    assert!(claim(&t, 560_000).is_ok());
    // The log gives the same wait.
    let replayed = t.replayed();
    let err = replayed.decide(Color::White, &GameAction::ClaimWin {}, at(501_000));
    assert_eq!(err.err().and_then(|e| e.retry_after_ms), Some(59_000));
}

#[test]
fn an_agreed_resumption_starts_no_clock_for_an_absent_player_to_move() {
    let mut t = running(timed());
    t.play(Color::Black, stone(2, 2), 1_000);
    t.act(Color::Black, GameAction::Pause {}, at(2_000));
    t.act(Color::White, GameAction::Pause {}, at(3_000));
    // White, to move, asks to go on and leaves; Black agrees.
    t.act(Color::White, GameAction::Resume {}, at(4_000));
    let away = t.game.presence(Color::White, false, at(5_000));
    t.take(away, at(5_000));
    assert_eq!(
        t.act(Color::Black, GameAction::Resume {}, at(6_000)),
        ["resumed"]
    );
    let view = t.game.clock_view(60_000).unwrap();
    assert_eq!((view.running, view.paused), (None, false));
    assert_eq!(view.white.main_ms, 600_000 - 2_000);
    // White's clock runs from White's return.
    t.presence(Color::White, 70_000);
    t.game.start_clock_if_stopped(70_000);
    let view = t.game.clock_view(80_000).unwrap();
    assert_eq!(view.running, Some(Color::White));
    assert_eq!(view.white.main_ms, 600_000 - 2_000 - 10_000);
}

#[test]
fn a_player_who_never_came_to_a_scheduled_game_is_late_not_claimable() {
    let mut t = Table::new(GameSettings {
        start_at: Some(WALL + 10_000),
        forfeit_after_ms: 900_000,
        ..timed()
    });
    t.presence(Color::White, 0);
    assert_eq!(t.timer(10_000), ["game_began"]);
    let err = t
        .game
        .decide(Color::White, &GameAction::ClaimWin {}, at(500_000))
        .err()
        .expect("refused");
    assert_eq!(err.code, ErrorCode::Forbidden);
    // The lateness rule decides, at the forfeit time.
    assert_eq!(t.timer(910_000), ["game_ended"]);
    assert_eq!(
        t.game.result(),
        Some(GameResult::Forfeit {
            winner: Color::White
        })
    );
}

#[test]
fn an_adjournment_for_now_records_its_moment_and_once_due_cannot_be_paused_or_moved() {
    let mut t = running(timed());
    t.play(Color::Black, stone(2, 2), 1_000);
    let now = GameAction::Adjourn {
        at: 0,
        reason: "end of the session".into(),
    };
    t.referee(&admin(), now, 2_000);
    let GameEvent::AdjournmentScheduled { at: when, .. } = &t.log.last().unwrap().0 else {
        panic!("no adjournment");
    };
    assert_eq!(*when, WALL + 2_000);
    let pause = GameAction::RefereePause {
        reason: "a question".into(),
    };
    assert_eq!(t.refused(&admin(), pause, 3_000), ErrorCode::WrongPhase);
    let later = GameAction::Adjourn {
        at: WALL + 100_000,
        reason: "later after all".into(),
    };
    assert_eq!(t.refused(&admin(), later, 3_000), ErrorCode::WrongPhase);
}

#[test]
fn a_finished_game_rebuilt_from_its_log_shows_the_time_used_on_its_last_move() {
    let mut t = running(timed());
    t.play(Color::Black, stone(2, 2), 1_000);
    // White thinks 30 s, then resigns.
    assert_eq!(
        t.act(Color::White, GameAction::Resign {}, at(31_000)),
        ["game_ended"]
    );
    let white = |g: &LiveGame| g.clock_view(99_000).unwrap().white.main_ms;
    assert_eq!(white(&t.game), 570_000);
    assert_eq!(white(&t.restarted(99_000)), 570_000);
}

#[test]
fn a_restart_charges_the_time_used_until_the_players_connections_closed() {
    let mut t = running(timed());
    t.play(Color::Black, stone(2, 2), 1_000);
    // White thinks 30 s; then the server stops, closing both connections.
    for color in [Color::White, Color::Black] {
        let step = t.game.presence(color, false, at(31_000));
        t.take(step, at(31_000));
    }
    let view = t.restarted(99_000).clock_view(99_000).unwrap();
    assert_eq!(view.running, None, "no clock runs until White is back");
    assert_eq!(view.white.main_ms, 570_000);
    assert_eq!(view.black.main_ms, 599_000);
}
