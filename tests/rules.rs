//! The rules of docs/RULES.md §1–§7 and §9.1, one position at a time: an ASCII board (`X` black, `O`
//! white, top row first), the moves, and the verdict the rules give.

use tengen::rules::{
    Board, Color, DeadStones, Game, GameResult, HalfPoints, IllegalMove, KoRule, MAX_SIZE,
    MIN_SIZE, Move, Ruleset, Score, ScoreRules, SizeError, Vertex, VertexError, check_handicap,
    count, fixed_handicap,
};

const B: Color = Color::Black;
const W: Color = Color::White;
const ALL_KO_RULES: [KoRule; 3] = [KoRule::Simple, KoRule::Situational, KoRule::Positional];

fn v(s: &str) -> Vertex {
    Vertex::parse_unchecked(s).unwrap()
}

fn at(s: &str) -> Move {
    Move::Play(v(s))
}

/// The diagram as `Board::to_diagram` writes it: rows without spaces, one per line.
fn normalised(diagram: &str) -> String {
    diagram
        .lines()
        .map(|l| l.chars().filter(|c| !c.is_whitespace()).collect::<String>())
        .filter(|l| !l.is_empty())
        .map(|l| l + "\n")
        .collect()
}

/// A game starting from `diagram` with `to_move` to play. The diagram must be a legal
/// position: every group keeps a liberty, so setting it up removes nothing.
fn game(diagram: &str, to_move: Color, ko_rule: KoRule) -> Game {
    let board = Board::from_diagram(diagram).unwrap();
    let stones: Vec<(Vertex, Color)> = board
        .points()
        .filter_map(|p| board.get(p).map(|c| (p, c)))
        .collect();
    let game = Game::with_setup(board.size(), ko_rule, &stones, to_move).unwrap();
    assert_eq!(
        game.board().to_diagram(),
        normalised(diagram),
        "the diagram is not a legal position"
    );
    game
}

fn play(game: &mut Game, color: Color, mv: &str) {
    let mv = Move::parse(mv, game.board().size()).unwrap();
    if let Err(e) = game.play(color, mv) {
        panic!(
            "{color} {mv} should be legal but is refused: {e}\n{:?}",
            game.board()
        );
    }
}

/// Plays an illegal move, checks the verdict and that the game did not change.
fn refused(game: &mut Game, color: Color, mv: &str) -> IllegalMove {
    let before = game.clone();
    let mv = Move::parse(mv, game.board().size()).unwrap();
    let checked = game
        .check(color, mv)
        .expect_err("check should refuse the move");
    let played = game
        .play(color, mv)
        .expect_err("play should refuse the move");
    assert_eq!(checked, played);
    assert!(game.board().same_stones(before.board()));
    assert_eq!(game.board().hash(), before.board().hash());
    assert_eq!(game.moves(), before.moves());
    assert_eq!(game.to_move(), before.to_move());
    assert_eq!(game.last_captures(), before.last_captures());
    assert_eq!(game.prisoners(B), before.prisoners(B));
    assert_eq!(game.prisoners(W), before.prisoners(W));
    played
}

fn captured(game: &Game) -> Vec<String> {
    let mut out: Vec<String> = game.last_captures().iter().map(|v| v.to_string()).collect();
    out.sort();
    out
}

// §1 Board and stones

#[test]
fn every_size_from_2_to_25_is_a_board_and_1_and_26_are_not() {
    assert_eq!((MIN_SIZE, MAX_SIZE), (2, 25));
    for size in 2..=25 {
        let board = Board::new(size).unwrap();
        assert_eq!(board.size(), size);
        assert_eq!(board.points().count(), size as usize * size as usize);
        assert!(board.points().all(|p| board.get(p).is_none()));
        let game = Game::new(size, KoRule::Situational).unwrap();
        assert_eq!(game.to_move(), B);
    }
    for size in [0, 1, 26, 255] {
        assert_eq!(Board::new(size).unwrap_err(), SizeError(size));
        assert!(Game::new(size, KoRule::Simple).is_err());
    }
    assert_eq!(
        SizeError(26).to_string(),
        "board size 26 is not supported; use a size from 2 to 25"
    );
    assert_eq!(Board::new(19).unwrap().size(), 19);
}

#[test]
fn diagrams_must_be_square() {
    assert!(Board::from_diagram("...\n...\n").is_err());
    assert!(Board::from_diagram("X\n").is_err());
    let board = Board::from_diagram(
        "
        X . .
        . O .
        . . .",
    )
    .unwrap();
    assert_eq!(board.get(v("A3")), Some(B));
    assert_eq!(board.get(v("B2")), Some(W));
    assert_eq!(board.get(v("C1")), None);
    assert_eq!(board.get(v("D4")), None, "off the board");
}

#[test]
fn black_moves_first_and_after_a_move_the_other_side_is_to_move() {
    let mut g = Game::new(9, KoRule::Situational).unwrap();
    assert_eq!(g.to_move(), B);
    play(&mut g, B, "E5");
    assert_eq!(g.to_move(), W);
    play(&mut g, W, "pass");
    assert_eq!(g.to_move(), B);
    assert_eq!(g.moves(), &[(B, at("E5")), (W, Move::Pass)]);
}

#[test]
fn a_stone_may_not_go_on_an_occupied_point_or_off_the_board() {
    let mut g = Game::new(9, KoRule::Situational).unwrap();
    play(&mut g, B, "E5");
    for color in [B, W] {
        let e = refused(&mut g, color, "E5");
        assert_eq!(e, IllegalMove::Occupied(v("E5")));
        assert_eq!(e.reason(), "occupied");
        assert_eq!(e.to_string(), "E5 is already occupied");
    }
    let off = Vertex::new(9, 0);
    let e = g.play(W, Move::Play(off)).unwrap_err();
    assert_eq!(e, IllegalMove::OffBoard(off));
    assert_eq!(e.reason(), "off_board");
    assert_eq!(
        g.check(W, Move::Play(Vertex::new(0, 9)))
            .unwrap_err()
            .reason(),
        "off_board"
    );
    assert_eq!(g.moves().len(), 1);
}

#[test]
fn passing_is_always_legal_and_two_passes_in_a_row_are_counted() {
    let mut g = Game::new(5, KoRule::Situational).unwrap();
    play(&mut g, B, "pass");
    assert_eq!(g.passes_in_row(), 1);
    play(&mut g, W, "C3");
    assert_eq!(g.passes_in_row(), 0);
    play(&mut g, B, "pass");
    play(&mut g, W, "pass");
    assert_eq!(g.passes_in_row(), 2);
    // Play may resume after two passes (docs/RULES.md §5, a dispute settled by play).
    play(&mut g, B, "B2");
    assert_eq!(g.passes_in_row(), 0);
}

// §2 Liberties and capture

#[test]
fn a_stone_in_the_corner_is_captured_with_two_stones() {
    let mut g = game(
        "
        . . . . .
        . . . . .
        . . . . .
        X . . . .
        O . . . .",
        B,
        KoRule::Situational,
    );
    assert_eq!(g.board().liberties(v("A1")), 1);
    play(&mut g, B, "B1");
    assert_eq!(captured(&g), ["A1"]);
    assert_eq!(g.board().get(v("A1")), None);
    assert_eq!(g.prisoners(B), 1);
    assert_eq!(g.prisoners(W), 0);
    assert_eq!(g.board().stones(W), 0);
}

#[test]
fn a_stone_on_the_edge_is_captured_with_three_stones() {
    let mut g = game(
        "
        . . . . .
        . . . . .
        . . . . .
        . . X . .
        . X O . .",
        B,
        KoRule::Situational,
    );
    play(&mut g, B, "D1");
    assert_eq!(captured(&g), ["C1"]);
    assert_eq!(g.prisoners(B), 1);
}

#[test]
fn a_stone_in_the_centre_is_captured_with_four_stones() {
    let mut g = game(
        "
        . . . . .
        . . X . .
        . X O . .
        . . X . .
        . . . . .",
        B,
        KoRule::Situational,
    );
    assert_eq!(g.board().liberties(v("C3")), 1);
    play(&mut g, B, "D3");
    assert_eq!(captured(&g), ["C3"]);
    assert_eq!(
        g.board().to_diagram(),
        normalised(
            "
        . . . . .
        . . X . .
        . X . X .
        . . X . .
        . . . . ."
        )
    );
}

#[test]
fn a_large_group_is_captured_all_at_once() {
    // Twenty-one white stones with one liberty left, at E5.
    let mut g = game(
        "
        X X X X X X X X X
        X O O O O O O O X
        X O O O O O O O X
        X O O O O O O O X
        X X X X . X X X X
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .",
        B,
        KoRule::Situational,
    );
    assert_eq!(g.board().chain(v("B8")).len(), 21);
    assert_eq!(g.board().liberties(v("B8")), 1);
    play(&mut g, B, "E5");
    assert_eq!(g.last_captures().len(), 21);
    assert_eq!(g.prisoners(B), 21);
    assert_eq!(g.board().stones(W), 0);
    assert_eq!(g.board().stones(B), 24);
    // One black chain now; its liberties are row 4 and the 16 freed points next to it.
    assert_eq!(g.board().chain(v("E5")).len(), 24);
    assert_eq!(g.board().liberties(v("E5")), 9 + 16);
    assert_eq!(g.board().hash(), g.board().recompute_hash());
}

#[test]
fn opposing_groups_are_captured_before_the_movers_liberties_are_judged() {
    // A1 has no liberty of its own, but it takes the last liberty of both white stones:
    // they are removed first, so the move is legal (docs/RULES.md §2).
    let mut g = game(
        "
        . . . . .
        . . . . .
        X . . . .
        O X . . .
        . O X . .",
        B,
        KoRule::Situational,
    );
    assert_eq!(g.check(B, at("A1")), Ok(()));
    play(&mut g, B, "A1");
    assert_eq!(captured(&g), ["A2", "B1"]);
    assert_eq!(g.prisoners(B), 2);
    assert_eq!(g.board().liberties(v("A1")), 2);
}

#[test]
fn filling_the_last_liberty_of_ones_own_group_while_capturing_is_legal() {
    // Black's A1-A2 has one liberty, B2. Playing there fills it, but it also takes the
    // last liberty of both white groups, so White's five stones go and Black lives.
    let mut g = game(
        "
        . . . . .
        X X X . .
        O O X . .
        X . O X .
        X O O X .",
        B,
        KoRule::Situational,
    );
    assert_eq!(g.board().liberties(v("A2")), 1, "black A1-A2 has only B2");
    assert_eq!(g.board().liberties(v("A3")), 1, "white A3-B3 has only B2");
    assert_eq!(
        g.board().liberties(v("B1")),
        1,
        "white B1-C1-C2 has only B2"
    );
    play(&mut g, B, "B2");
    assert_eq!(captured(&g), ["A3", "B1", "B3", "C1", "C2"]);
    assert_eq!(g.prisoners(B), 5);
    assert_eq!(g.board().liberties(v("B2")), 4);
}

#[test]
fn a_single_stone_may_not_commit_suicide() {
    let mut g = game(
        "
        . . . . .
        . . . . .
        . . . . .
        O . . . .
        . O . . .",
        B,
        KoRule::Situational,
    );
    let e = refused(&mut g, B, "A1");
    assert_eq!(e, IllegalMove::Suicide(v("A1")));
    assert_eq!(e.reason(), "suicide");
    // The same point is fine for White, of course.
    play(&mut g, W, "A1");
}

#[test]
fn several_stones_may_not_commit_suicide() {
    // Black's three stones have one liberty, A1; filling it captures nothing.
    let mut g = game(
        "
        . . . . .
        . . . . .
        O O O . .
        X X O . .
        . X O . .",
        B,
        KoRule::Situational,
    );
    assert_eq!(g.board().liberties(v("A2")), 1);
    let e = refused(&mut g, B, "A1");
    assert_eq!(e, IllegalMove::Suicide(v("A1")));
    assert_eq!(e.reason(), "suicide");
    // White takes all three there.
    play(&mut g, W, "pass");
    play(&mut g, W, "A1");
    assert_eq!(captured(&g), ["A2", "B1", "B2"]);
    assert_eq!(g.prisoners(W), 3);
}

#[test]
fn snapback_captures_the_capturing_group() {
    // Black throws in at A1; White takes it with B1; Black plays A1 again and takes
    // the three white stones, which now have A1 as their only liberty.
    let mut g = game(
        "
        . . . . .
        . . . . .
        X X . . .
        O O X . .
        . . X . .",
        B,
        KoRule::Situational,
    );
    play(&mut g, B, "A1");
    assert!(g.last_captures().is_empty());
    play(&mut g, W, "B1");
    assert_eq!(captured(&g), ["A1"]);
    // Not a ko: the capturing stone joined a group, so the immediate recapture is fine.
    play(&mut g, B, "A1");
    assert_eq!(captured(&g), ["A2", "B1", "B2"]);
    assert_eq!((g.prisoners(B), g.prisoners(W)), (3, 1));
}

// §3 No repetition of the whole board

const KO: &str = "
    . X O . .
    X O . O .
    . X O . .
    . . . . .
    . . . . .";

#[test]
fn the_immediate_recapture_of_a_ko_is_illegal_under_every_ko_rule() {
    for rule in ALL_KO_RULES {
        let mut g = game(KO, B, rule);
        play(&mut g, B, "C4");
        assert_eq!(captured(&g), ["B4"]);
        let e = refused(&mut g, W, "B4");
        assert_eq!(e, IllegalMove::Ko(v("B4")), "{rule:?}");
        assert_eq!(e.reason(), "ko");
        // After a ko threat and its answer, the ko may be taken back.
        play(&mut g, W, "E1");
        play(&mut g, B, "E2");
        play(&mut g, W, "B4");
        assert_eq!(captured(&g), ["C4"]);
        // ... and now Black may not retake at once.
        assert_eq!(refused(&mut g, B, "C4"), IllegalMove::Ko(v("C4")));
    }
}

#[test]
fn filling_a_ko_is_not_a_recapture() {
    let mut g = game(KO, B, KoRule::Simple);
    play(&mut g, B, "C4");
    // Black (the side that took) may connect at once, if it were Black's turn again.
    assert_eq!(g.check(B, at("B4")), Ok(()));
}

#[test]
fn a_pass_lifts_the_simple_ko_ban() {
    // Under simple ko only the *immediate* recapture is banned.
    let mut g = game(KO, B, KoRule::Simple);
    play(&mut g, B, "C4");
    play(&mut g, W, "pass");
    play(&mut g, B, "pass");
    play(&mut g, W, "B4");
    // Under superko the same retake recreates the start with Black to move.
    for rule in [KoRule::Situational, KoRule::Positional] {
        let mut g = game(KO, B, rule);
        play(&mut g, B, "C4");
        play(&mut g, W, "pass");
        play(&mut g, B, "pass");
        assert_eq!(
            refused(&mut g, W, "B4"),
            IllegalMove::Superko(v("B4")),
            "{rule:?}"
        );
    }
}

/// Two kos: Black can take at C6, White can take at F2.
const DOUBLE_KO: &str = "
    . X O . . . .
    X O . O . . .
    . X O . . . .
    . . . . . . .
    . . . . O X .
    . . . O X . X
    . . . . O X .";

#[test]
fn situational_and_positional_superko_disagree_when_a_position_recurs_through_a_pass() {
    // Black takes ko 1, White takes ko 2, Black passes, White retakes ko 1. Black's
    // retake of ko 2 then rebuilds the starting board, but with White to move where the
    // start had Black to move. The pass made the cycle odd. GNU Go 3.8 agrees:
    // legal with --situational-superko and by default, illegal with --positional-superko.
    for (rule, legal) in [
        (KoRule::Simple, true),
        (KoRule::Situational, true),
        (KoRule::Positional, false),
    ] {
        let mut g = game(DOUBLE_KO, B, rule);
        let start = g.board().clone();
        play(&mut g, B, "C6");
        play(&mut g, W, "F2");
        play(&mut g, B, "pass");
        play(&mut g, W, "B6");
        if legal {
            play(&mut g, B, "E2");
            assert_eq!(captured(&g), ["F2"]);
            assert!(g.board().same_stones(&start));
            assert_eq!(g.to_move(), W);
        } else {
            let e = refused(&mut g, B, "E2");
            assert_eq!(e, IllegalMove::Superko(v("E2")), "{rule:?}");
            assert_eq!(e.reason(), "superko");
        }
    }
}

/// Three kos: Black can take at C8 and H8, White at C2.
const TRIPLE_KO: &str = "
    . X O . . . X O .
    X O . O . X O . O
    . X O . . . X O .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . O X . . . . . .
    O X . X . . . . .
    . O X . . . . . .";

#[test]
fn a_triple_ko_cycle_is_stopped_by_superko_but_not_by_simple_ko() {
    // Six captures, each legal as a ko, bring back the starting position (a set-up
    // position) with Black to move. GNU Go agrees on all three rules.
    for (rule, legal) in [
        (KoRule::Simple, true),
        (KoRule::Situational, false),
        (KoRule::Positional, false),
    ] {
        let mut g = game(TRIPLE_KO, B, rule);
        let start = g.board().clone();
        for (c, mv) in [(B, "C8"), (W, "C2"), (B, "H8"), (W, "B8"), (B, "B2")] {
            play(&mut g, c, mv);
            assert_eq!(g.last_captures().len(), 1);
        }
        if legal {
            play(&mut g, W, "G8");
            assert!(g.board().same_stones(&start));
            assert_eq!(g.board().hash(), start.hash());
            // The cycle may go round again under simple ko.
            play(&mut g, B, "C8");
        } else {
            assert_eq!(
                refused(&mut g, W, "G8"),
                IllegalMove::Superko(v("G8")),
                "{rule:?}"
            );
        }
    }
}

#[test]
fn the_starting_position_counts_with_the_player_it_had_to_move() {
    // The double ko again, but White to move first (as after handicap stones). White
    // takes ko 2, Black ko 1, White passes, Black retakes ko 2; White's retake of ko 1
    // rebuilds the starting board with Black to move. At the start White was to move,
    // so only positional superko sees a repetition.
    for (rule, legal) in [
        (KoRule::Simple, true),
        (KoRule::Situational, true),
        (KoRule::Positional, false),
    ] {
        let mut g = game(DOUBLE_KO, W, rule);
        let start = g.board().clone();
        play(&mut g, W, "F2");
        play(&mut g, B, "C6");
        play(&mut g, W, "pass");
        play(&mut g, B, "E2");
        assert_eq!(g.check(W, at("B6")).is_ok(), legal, "{rule:?}");
        if legal {
            play(&mut g, W, "B6");
            assert!(g.board().same_stones(&start));
        } else {
            assert_eq!(refused(&mut g, W, "B6"), IllegalMove::Superko(v("B6")));
        }
    }
}

#[test]
fn a_record_made_under_other_rules_can_be_replayed_as_it_is() {
    // Game records (GTP `loadsgf`) may break our repetition rule; such moves can still
    // be replayed, and the repeated positions stay in the history.
    let mut g = game(KO, B, KoRule::Positional);
    play(&mut g, B, "C4");
    assert_eq!(g.check(W, at("B4")), Err(IllegalMove::Ko(v("B4"))));
    g.play_ignoring_repetition(W, at("B4")).unwrap();
    assert_eq!(captured(&g), ["C4"]);
    // Black's immediate retake is a ko again, and after a pass a superko.
    assert_eq!(g.check(B, at("C4")), Err(IllegalMove::Ko(v("C4"))));
    play(&mut g, B, "pass");
    play(&mut g, W, "pass");
    assert_eq!(g.check(B, at("C4")), Err(IllegalMove::Superko(v("C4"))));
    // Occupied points and suicide are still refused.
    assert_eq!(
        g.play_ignoring_repetition(B, at("B4")),
        Err(IllegalMove::Occupied(v("B4")))
    );
    assert_eq!(g.moves().len(), 4);
}

#[test]
fn the_ko_rule_of_each_ruleset() {
    assert_eq!(Ruleset::Chinese.default_ko_rule(), KoRule::Situational);
    assert_eq!(Ruleset::Japanese.default_ko_rule(), KoRule::Simple);
    assert_eq!(Ruleset::Korean.default_ko_rule(), KoRule::Simple);
    assert_eq!(Ruleset::TrompTaylor.default_ko_rule(), KoRule::Positional);
    assert_eq!(Ruleset::default(), Ruleset::Chinese);
    for rule in ALL_KO_RULES {
        assert_eq!(rule.name().parse::<KoRule>().unwrap(), rule);
    }
    assert!("super".parse::<KoRule>().is_err());
}

// §7 Handicap

#[test]
fn handicap_stones_go_on_the_star_points_and_white_moves_first() {
    let points = fixed_handicap(19, 4).unwrap();
    let names: Vec<String> = points.iter().map(|p| p.to_string()).collect();
    assert_eq!(names, ["D4", "Q16", "D16", "Q4"]);
    let stones: Vec<(Vertex, Color)> = points.iter().map(|&p| (p, B)).collect();
    let mut g = Game::with_setup(19, KoRule::Situational, &stones, W).unwrap();
    assert_eq!(g.to_move(), W);
    assert_eq!(g.board().stones(B), 4);
    assert!(g.moves().is_empty(), "handicap stones are not moves");
    assert_eq!(g.start().stones(B), 4);
    play(&mut g, W, "Q10");
    assert_eq!(g.to_move(), B);

    let nine = |n| {
        fixed_handicap(9, n)
            .unwrap()
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(nine(2), "C3 G7");
    assert_eq!(nine(5), "C3 G7 C7 G3 E5");
    assert_eq!(
        fixed_handicap(13, 9).unwrap().len(),
        9,
        "13x13 takes up to nine stones"
    );
    assert_eq!(
        fixed_handicap(19, 9)
            .unwrap()
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>(),
        ["D4", "Q16", "D16", "Q4", "D10", "Q10", "K4", "K16", "K10"]
    );
    for n in 2..=9 {
        assert!(check_handicap(n).is_ok());
    }
    assert!(check_handicap(0).is_ok());
    assert!(check_handicap(1).is_err());
    assert!(check_handicap(10).is_err());
    assert!(fixed_handicap(19, 1).is_err());
    assert!(
        fixed_handicap(8, 5).is_err(),
        "even boards have no centre point"
    );
    assert!(fixed_handicap(6, 2).is_err());
}

// Vertices

#[test]
fn vertices_are_read_as_gtp_writes_them() {
    assert_eq!(v("A1"), Vertex::new(0, 0));
    assert_eq!(v("a1"), Vertex::new(0, 0));
    assert_eq!(v("H8"), Vertex::new(7, 7));
    assert_eq!(v("J8"), Vertex::new(8, 7), "I is skipped");
    assert_eq!(v("T19"), Vertex::new(18, 18));
    assert_eq!(v("Z25"), Vertex::new(24, 24));
    assert_eq!(Vertex::new(8, 0).to_string(), "J1");
    assert_eq!(Vertex::parse("T19", 19), Ok(Vertex::new(18, 18)));
    assert!(matches!(
        Vertex::parse("T19", 18),
        Err(VertexError::OffBoard { size: 18, .. })
    ));
    assert!(matches!(
        Vertex::parse("A20", 19),
        Err(VertexError::OffBoard { .. })
    ));
    for bad in [
        "", "I1", "i9", "A0", "A26", "Z99", "1A", "AA1", "A", "A-1", " A1", "A1 ", "ä1", "A1.5",
    ] {
        assert!(
            matches!(Vertex::parse_unchecked(bad), Err(VertexError::Malformed(_))),
            "{bad:?} should be malformed"
        );
    }
    assert_eq!(Move::parse("pass", 9), Ok(Move::Pass));
    assert_eq!(Move::parse("PASS", 9), Ok(Move::Pass));
    assert_eq!(Move::parse("e5", 9), Ok(at("E5")));
    assert!(Move::parse("K10", 9).is_err());
    assert_eq!(Move::Pass.to_string(), "pass");
    for size in MIN_SIZE..=MAX_SIZE {
        let board = Board::new(size).unwrap();
        for p in board.points() {
            assert_eq!(Vertex::parse(&p.to_string(), size), Ok(p));
            assert_eq!(Vertex::from_sgf(&p.to_sgf(size), size), Some(p));
        }
    }
    assert_eq!("W".parse::<Color>(), Ok(W));
    assert_eq!("black".parse::<Color>(), Ok(B));
    assert!("red".parse::<Color>().is_err());
}

// §6 Counting

fn rules(ruleset: Ruleset, komi_points: f64, handicap: u8) -> ScoreRules {
    ScoreRules {
        ruleset,
        komi: HalfPoints::from_points(komi_points).unwrap(),
        handicap,
    }
}

fn chinese() -> ScoreRules {
    rules(Ruleset::Chinese, 7.5, 0)
}

fn score(board: &Board, rules: &ScoreRules) -> Score {
    count(board, &DeadStones::new(), rules, [0, 0])
}

/// A 19x19 board split by two walls: Black owns the columns left of its wall, White the
/// ones right of its wall. In the first `shifted` rows both walls stand one column
/// further left (White gains a point per row); with `dame`, one more row has its walls
/// two apart, leaving one neutral point between them.
fn split_board(shifted: usize, dame: bool) -> Board {
    let mut rows = Vec::new();
    for r in 0..19 {
        let (black, white) = if r < shifted {
            (8, 9)
        } else if r == shifted && dame {
            (8, 10)
        } else {
            (9, 10)
        };
        let row: String = (0..19)
            .map(|x| match x {
                x if x == black => 'X',
                x if x == white => 'O',
                _ => '.',
            })
            .collect();
        rows.push(row);
    }
    rows.reverse();
    Board::from_diagram(&rows.join("\n")).unwrap()
}

#[test]
fn worked_example_black_185_wins_by_three_quarters_of_a_stone() {
    let s = score(&split_board(5, false), &chinese());
    assert_eq!(s.black, HalfPoints(370));
    assert_eq!(s.white, HalfPoints(352));
    assert_eq!(s.margin_stones(), 0.75);
    assert_eq!(s.result.to_string(), "B+1.5");
    assert_eq!(s.chinese(), "黑胜3/4子");
}

#[test]
fn worked_example_black_184_loses_by_a_quarter() {
    let s = score(&split_board(6, false), &chinese());
    assert_eq!(s.black.points(), 184.0);
    assert_eq!(s.white.points(), 177.0);
    assert_eq!(s.margin_stones(), -0.25);
    assert_eq!(s.result.to_string(), "W+0.5");
    assert_eq!(s.result.winner(), Some(W));
    assert_eq!(s.chinese(), "白胜1/4子");
}

#[test]
fn worked_example_black_184_and_a_half_wins_by_a_quarter() {
    let board = split_board(5, true);
    let s = score(&board, &chinese());
    assert_eq!(s.black.to_string(), "184.5");
    assert_eq!(s.white.to_string(), "176.5");
    assert_eq!(s.margin_stones(), 0.25);
    assert_eq!(s.result.to_string(), "B+0.5");
    assert_eq!(s.chinese(), "黑胜1/4子");
    // Tromp-Taylor does not split the neutral point.
    let tt = score(&board, &rules(Ruleset::TrompTaylor, 7.5, 0));
    assert_eq!(
        (tt.black.to_string(), tt.white.to_string()),
        ("184".into(), "176".into())
    );
    assert_eq!(tt.result.to_string(), "B+0.5");
}

#[test]
fn equal_to_par_after_an_integer_komi_is_a_draw() {
    // 184.5 - 176.5 = 8 points: with a komi of 8 nobody wins.
    let s = score(&split_board(5, true), &rules(Ruleset::Chinese, 8.0, 0));
    assert_eq!(s.black_margin, HalfPoints(0));
    assert_eq!(s.result.winner(), None);
    assert_eq!(s.result.to_string(), "0");
    assert_eq!(s.chinese(), "和棋");
}

#[test]
fn the_result_in_stones_is_written_the_chinese_way() {
    let margin = |halves| {
        let s = score(&split_board(5, true), &rules(Ruleset::Chinese, 0.0, 0));
        Score {
            black_margin: HalfPoints(halves),
            ..s
        }
        .chinese()
    };
    assert_eq!(margin(3), "黑胜3/4子");
    assert_eq!(margin(-1), "白胜1/4子");
    assert_eq!(margin(2), "黑胜1/2子");
    assert_eq!(margin(8), "黑胜2子");
    assert_eq!(margin(-5), "白胜1又1/4子");
    assert_eq!(margin(-11), "白胜2又3/4子");
    assert_eq!(margin(0), "和棋");
}

#[test]
fn handicap_stones_are_given_back_at_counting_under_the_chinese_rules() {
    // Black 185, White 176: 9 points ahead on the board; 4 handicap stones cost Black
    // 2 stones, i.e. 4 points, under the Chinese rules (and nothing under Japanese ones).
    let board = split_board(5, false);
    let s = score(&board, &rules(Ruleset::Chinese, 0.0, 4));
    assert_eq!(s.black_margin.points(), 5.0);
    assert_eq!(s.result.to_string(), "B+5");
    let s = score(&board, &rules(Ruleset::Chinese, 0.5, 9));
    assert_eq!(s.result.to_string(), "W+0.5");
    let s = score(&board, &rules(Ruleset::Japanese, 0.0, 4));
    assert_eq!(s.result.to_string(), "B+9");
}

/// A seki at C3/C4: Black's B3-B4 and White's D3-D4 share the two liberties and neither
/// may fill one. Both outer groups live with eyes.
const SEKI: &str = "
    . O . O X . X
    O O O O X X X
    O O O X X . X
    O X . O X X .
    O X . O X . X
    O O X X X X X
    . O X . X . X";

#[test]
fn a_seki_is_counted_with_its_shared_liberties_split_half_and_half() {
    let mut g = game(SEKI, B, KoRule::Situational);
    // Neither side may approach: filling a shared liberty is self-atari.
    play(&mut g, B, "C4");
    play(&mut g, W, "C3");
    assert_eq!(captured(&g), ["B3", "B4", "C4"]);

    let board = Board::from_diagram(SEKI).unwrap();
    // Black: 22 stones + 6 eyes + half of 2; White: 16 stones + 3 eyes + half of 2.
    let s = score(&board, &rules(Ruleset::Chinese, 0.0, 0));
    assert_eq!((s.black.points(), s.white.points()), (29.0, 20.0));
    assert_eq!(s.result.to_string(), "B+9");
    // Tromp-Taylor: nobody gets the shared liberties.
    let s = score(&board, &rules(Ruleset::TrompTaylor, 0.0, 0));
    assert_eq!((s.black.points(), s.white.points()), (28.0, 19.0));
    // Territory counting: the eyes only.
    let s = score(&board, &rules(Ruleset::Japanese, 0.0, 0));
    assert_eq!((s.black.points(), s.white.points()), (6.0, 3.0));
}

/// Black's D3-E3 sits inside White's area, which both players agree is dead.
const DEAD: &str = "
    . X O . .
    . X O . .
    . X O X X
    . X O . .
    . X O . .";

#[test]
fn marking_one_stone_dead_marks_its_whole_group_and_can_be_toggled() {
    let board = Board::from_diagram(DEAD).unwrap();
    let mut dead = DeadStones::new();
    assert!(dead.set_chain(&board, v("E3"), true));
    assert_eq!(dead.iter().collect::<Vec<_>>(), [v("D3"), v("E3")]);
    assert!(dead.contains(v("D3")));
    assert!(
        !dead.set_chain(&board, v("A1"), true),
        "an empty point marks nothing"
    );
    assert_eq!(dead.len(), 2);
    assert!(dead.toggle_chain(&board, v("D3")));
    assert!(dead.is_empty());
    assert!(dead.toggle_chain(&board, v("D3")));
    assert_eq!(dead.len(), 2);
    // Marking the wall dead and alive again leaves the D3 group marked.
    dead.toggle_chain(&board, v("B5"));
    assert_eq!(dead.len(), 7);
    dead.toggle_chain(&board, v("B1"));
    assert_eq!(dead.len(), 2);
    assert!(dead.set_chain(&board, v("D3"), false));
    assert!(dead.is_empty());
}

#[test]
fn dead_stones_are_removed_before_counting() {
    let board = Board::from_diagram(DEAD).unwrap();
    let c = rules(Ruleset::Chinese, 0.0, 0);
    // Counted as they stand, the black pair is alive and the points beside it are shared.
    let alive = score(&board, &c);
    assert_eq!((alive.black.points(), alive.white.points()), (16.0, 9.0));
    let mut dead = DeadStones::new();
    dead.set_chain(&board, v("D3"), true);
    let s = count(&board, &dead, &c, [0, 0]);
    assert_eq!((s.black.points(), s.white.points()), (10.0, 15.0));
    assert_eq!(s.result.to_string(), "W+5");
    // Territory: the dead stones' points are White's territory and the stones are
    // White's prisoners, on top of the prisoners taken during play.
    let s = count(&board, &dead, &rules(Ruleset::Japanese, 6.5, 0), [1, 3]);
    assert_eq!(s.black.points(), 5.0 + 1.0);
    assert_eq!(s.white.points(), 10.0 + 2.0 + 3.0);
    assert_eq!(s.result.to_string(), "W+15.5");
}

#[test]
fn territory_counting_adds_prisoners_and_uses_komi_six_and_a_half() {
    for ruleset in [Ruleset::Japanese, Ruleset::Korean] {
        assert_eq!(ruleset.default_komi(), HalfPoints(13));
        let board = split_board(5, false);
        let r = ScoreRules {
            ruleset,
            komi: ruleset.default_komi(),
            handicap: 0,
        };
        let s = count(&board, &DeadStones::new(), &r, [4, 2]);
        // Black territory: 5 rows of 8 and 14 rows of 9; White: 5 rows of 9, 14 of 8.
        assert_eq!(s.black.points(), (5 * 8 + 14 * 9 + 4) as f64);
        assert_eq!(s.white.points(), (5 * 9 + 14 * 8 + 2) as f64);
        assert_eq!(s.black_margin.points(), 170.0 - 159.0 - 6.5);
        assert_eq!(s.result.to_string(), "B+4.5");
    }
    assert_eq!(Ruleset::Chinese.default_komi(), HalfPoints(15));
    assert_eq!(Ruleset::TrompTaylor.default_komi(), HalfPoints(15));
}

#[test]
fn prisoners_do_not_count_under_area_rules() {
    let board = split_board(5, false);
    let with = count(&board, &DeadStones::new(), &chinese(), [30, 0]);
    assert_eq!(with, score(&board, &chinese()));
}

#[test]
fn an_empty_board_belongs_to_nobody() {
    let s = score(&Board::new(9).unwrap(), &chinese());
    assert_eq!((s.black, s.white), (HalfPoints(0), HalfPoints(0)));
    assert_eq!(s.result.to_string(), "W+7.5");
}

// Results

#[test]
fn results_are_written_as_sgf_writes_them() {
    let r = |s: &str| s.parse::<GameResult>().unwrap();
    assert_eq!(
        r("B+1.5"),
        GameResult::Score {
            winner: Some(B),
            margin: HalfPoints(3)
        }
    );
    assert_eq!(r("W+R"), GameResult::Resignation { winner: W });
    assert_eq!(r("B+Resign").to_string(), "B+R");
    assert_eq!(r("W+T"), GameResult::Time { winner: W });
    assert_eq!(r("B+Time").to_string(), "B+T");
    assert_eq!(r("W+F"), GameResult::Forfeit { winner: W });
    assert_eq!(r("0").winner(), None);
    assert_eq!(r("Draw").to_string(), "0");
    assert_eq!(GameResult::Draw.to_string(), "0");
    assert_eq!(r("Void"), GameResult::Void);
    for s in ["B+0.5", "W+12", "W+R", "B+T", "B+F", "0"] {
        assert_eq!(r(s).to_string(), s);
    }
    for bad in [
        "", "B", "B+", "X+R", "B+1.25", "B+-3", "B+0", "W+x", "B+1.5 ",
    ] {
        let trimmed_ok = bad == "B+1.5 ";
        assert_eq!(bad.parse::<GameResult>().is_ok(), trimmed_ok, "{bad:?}");
    }
    assert_eq!(r("W+R").reason(), "resignation");
    assert_eq!(serde_json::to_string(&r("B+3.5")).unwrap(), "\"B+3.5\"");
    assert_eq!(
        serde_json::from_str::<GameResult>("\"W+T\"").unwrap(),
        r("W+T")
    );
}

#[test]
fn komi_is_read_in_half_points() {
    assert_eq!(HalfPoints::parse_points("7.5"), Some(HalfPoints(15)));
    assert_eq!(HalfPoints::parse_points("-3"), Some(HalfPoints(-6)));
    assert_eq!(HalfPoints::parse_points("0.25"), None);
    assert_eq!(HalfPoints::parse_points("nan"), None);
    assert_eq!(HalfPoints(15).stones(), 3.75);
    assert_eq!(HalfPoints(-1).to_string(), "-0.5");
}

// §9.1 The ancient rules

fn ancient() -> ScoreRules {
    rules(Ruleset::AncientChinese, 0.0, 0)
}

/// Black is one group (the B column with its two arms); White is three, each in its own
/// pocket. The middle one is in atari at G4, which is dame.
const ONE_AGAINST_THREE: &str = "
    . X O . O . O
    . X O O O O O
    . X X X X X X
    . X O O O O .
    . X X X X X X
    . X O O O O O
    . X O . O . O";

#[test]
fn one_group_against_three_pays_one_point_against_three() {
    let board = Board::from_diagram(ONE_AGAINST_THREE).unwrap();
    // Black: 17 stones + 7 points of the A column + half of G4; White: 20 stones + 4
    // eyes + half of G4. Under the Chinese rules without komi that is a draw.
    let s = score(&board, &rules(Ruleset::Chinese, 0.0, 0));
    assert_eq!((s.black.points(), s.white.points()), (24.5, 24.5));
    assert_eq!(s.result.to_string(), "0");
    assert_eq!(s.tax, None, "the modern rules have no group tax");
    // 还棋头: Black gives back 1, White 3.
    let s = score(&board, &ancient());
    assert_eq!(s.tax, Some([1, 3]));
    assert_eq!((s.black.points(), s.white.points()), (23.5, 21.5));
    assert_eq!(s.result.to_string(), "B+2");
    assert_eq!(s.chinese(), "黑胜1子");
    // Agreed dead, the middle group pays nothing, and its pocket is Black's.
    let mut dead = DeadStones::new();
    dead.set_chain(&board, v("C4"), true);
    let s = count(&board, &dead, &ancient(), [0, 0]);
    assert_eq!(s.tax, Some([1, 2]));
    assert_eq!(
        (s.black.points(), s.white.points()),
        (29.0 - 1.0, 20.0 - 2.0)
    );
    assert_eq!(s.result.to_string(), "B+10");
}

#[test]
fn both_groups_of_a_seki_live_and_pay() {
    // The seki of §6: Black's outer group and B3-B4, White's outer group and D3-D4.
    // Each side pays for two groups; the shared liberties are split as under the
    // Chinese rules.
    let board = Board::from_diagram(SEKI).unwrap();
    let s = score(&board, &ancient());
    assert_eq!(s.tax, Some([2, 2]));
    assert_eq!(
        (s.black.points(), s.white.points()),
        (29.0 - 2.0, 20.0 - 2.0)
    );
    assert_eq!(s.result.to_string(), "B+9");
}

/// White's C5-C4, D3 and C2-C1 all touch C3: whoever plays there last decides whether
/// White ends as one group or three.
const CUTTING_POINT: &str = "
    . X O . .
    . X O . .
    . X . O .
    . X O . .
    . X O . .";

#[test]
fn a_group_cut_late_in_the_game_pays_for_every_piece() {
    // White connects at C3: one group each. Black 5 stones + 5 points, White 6 + 9.
    let mut connected = game(CUTTING_POINT, W, KoRule::Situational);
    play(&mut connected, W, "C3");
    let s = score(connected.board(), &ancient());
    assert_eq!(s.tax, Some([1, 1]));
    assert_eq!((s.black.points(), s.white.points()), (9.0, 14.0));
    assert_eq!(s.result.to_string(), "W+5");
    // Black cuts at C3 instead, as the last move of the game: White's group is now
    // three, which costs it two more points than the stone alone would.
    let mut cut = game(CUTTING_POINT, B, KoRule::Situational);
    play(&mut cut, B, "C3");
    play(&mut cut, W, "pass");
    play(&mut cut, B, "pass");
    let chinese = score(cut.board(), &rules(Ruleset::Chinese, 0.0, 0));
    assert_eq!(
        (chinese.black.points(), chinese.white.points()),
        (11.0, 14.0)
    );
    assert_eq!(chinese.result.to_string(), "W+3");
    let s = score(cut.board(), &ancient());
    assert_eq!(s.tax, Some([1, 3]));
    assert_eq!((s.black.points(), s.white.points()), (10.0, 11.0));
    assert_eq!(s.result.to_string(), "W+1");
}

#[test]
fn the_ancient_game_starts_from_the_set_stones_with_white_to_move() {
    let set = Ruleset::AncientChinese.set_stones(19).unwrap();
    let first = Ruleset::AncientChinese.first_in_even_game();
    let mut g =
        Game::with_setup(19, Ruleset::AncientChinese.default_ko_rule(), &set, first).unwrap();
    assert_eq!(g.to_move(), W);
    assert_eq!((g.start().stones(B), g.start().stones(W)), (2, 2));
    for (p, c) in [("D4", B), ("Q16", B), ("D16", W), ("Q4", W)] {
        assert_eq!(g.board().get(v(p)), Some(c), "{p}");
    }
    assert!(g.moves().is_empty(), "the set stones are not moves");
    play(&mut g, W, "R3");
    assert_eq!(g.to_move(), B);
    // Counted at once, each set stone is a group of its own: the board is all dame but
    // for the stones, and both sides pay for two groups.
    let s = score(g.start(), &ancient());
    assert_eq!(s.tax, Some([2, 2]));
    assert_eq!(s.result.to_string(), "0");
}
