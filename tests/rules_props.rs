//! Properties of random legal games (proptest): on every board size the engine plays
//! and under every repetition rule, whatever the moves,
//! - the incremental hash equals a full recompute,
//! - no chain on the board is left without a liberty,
//! - stones on the board + stones captured = stones played, per colour,
//! - `check` and `play` give the same verdict, and a refused move changes nothing,
//! - a superko refusal names a real repetition, and no accepted move makes one,
//! - replaying the move list on a fresh game gives the same position.
//!
//! Under the ancient rules, whatever the position and the dead stones, the group tax is
//! the number of groups a separate flood fill finds, and the count is the Chinese count
//! less the tax.

mod rng;

use std::collections::HashSet;

use proptest::prelude::*;
use rng::Rng;
use tengen::rules::{
    Board, Color, DeadStones, Game, HalfPoints, IllegalMove, KoRule, Move, Ruleset, ScoreRules,
    Vertex, count,
};

/// Every chain has at least one liberty; checked once per chain.
fn every_chain_breathes(board: &Board) -> Result<(), TestCaseError> {
    let mut done = HashSet::new();
    for p in board.points() {
        if board.get(p).is_none() || done.contains(&p) {
            continue;
        }
        let chain = board.chain(p);
        prop_assert!(
            board.liberties(p) > 0,
            "the chain at {p} has no liberty\n{board:?}"
        );
        done.extend(chain);
    }
    Ok(())
}

/// The key under which `ko_rule` files a position: the board, and under situational
/// superko also who is to move.
fn key(ko_rule: KoRule, board: &Board, to_move: Color) -> (u64, Option<Color>) {
    match ko_rule {
        KoRule::Situational => (board.hash(), Some(to_move)),
        _ => (board.hash(), None),
    }
}

fn random_game(
    size: u8,
    ko_rule: KoRule,
    seed: u64,
    plies: usize,
    pass_per_mille: usize,
) -> Result<(), TestCaseError> {
    let mut rng = Rng(seed);
    let mut game = Game::new(size, ko_rule).unwrap();
    // The same moves under simple ko, to see what a move refused for superko would make.
    let mut shadow = Game::new(size, KoRule::Simple).unwrap();
    let mut seen: HashSet<(u64, Option<Color>)> = HashSet::new();
    seen.insert(key(ko_rule, game.board(), game.to_move()));
    let mut played = [0u32; 2];
    let points: Vec<Vertex> = game.board().points().collect();
    for _ in 0..plies {
        let color = game.to_move();
        let mut mv = Move::Pass;
        if rng.below(1000) >= pass_per_mille {
            // Try the empty points in a random order; the first legal one is played.
            let mut empty: Vec<Vertex> = points
                .iter()
                .copied()
                .filter(|&p| game.board().get(p).is_none())
                .collect();
            while !empty.is_empty() {
                let p = empty.swap_remove(rng.below(empty.len()));
                match game.check(color, Move::Play(p)) {
                    Ok(()) => {
                        mv = Move::Play(p);
                        break;
                    }
                    Err(e) => {
                        let hash = game.board().hash();
                        let moves = game.moves().len();
                        prop_assert_eq!(game.play(color, Move::Play(p)), Err(e));
                        prop_assert_eq!(game.board().hash(), hash);
                        prop_assert_eq!(game.moves().len(), moves);
                        prop_assert_eq!(game.to_move(), color);
                        if let IllegalMove::Superko(_) = e {
                            // Under simple ko the move is allowed, and it does repeat.
                            let mut s = shadow.clone();
                            prop_assert!(s.play(color, Move::Play(p)).is_ok());
                            let k = key(ko_rule, s.board(), color.opponent());
                            prop_assert!(
                                seen.contains(&k),
                                "{p} refused for superko but repeats nothing"
                            );
                        }
                    }
                }
            }
        }
        prop_assert!(
            game.play(color, mv).is_ok(),
            "check allowed {mv} but play refused it"
        );
        prop_assert!(shadow.play(color, mv).is_ok());
        if let Move::Play(_) = mv {
            played[color.index()] += 1;
            let k = key(ko_rule, game.board(), game.to_move());
            if ko_rule != KoRule::Simple {
                prop_assert!(
                    !seen.contains(&k),
                    "{mv} repeated a position\n{:?}",
                    game.board()
                );
            }
        }
        seen.insert(key(ko_rule, game.board(), game.to_move()));

        let board = game.board();
        prop_assert_eq!(board.hash(), board.recompute_hash());
        prop_assert!(board.same_stones(shadow.board()));
        every_chain_breathes(board)?;
        for c in [Color::Black, Color::White] {
            let on_board = board.points().filter(|&p| board.get(p) == Some(c)).count() as u32;
            prop_assert_eq!(u32::from(board.stones(c)), on_board);
            prop_assert_eq!(on_board + game.prisoners(c.opponent()), played[c.index()]);
        }
    }

    let mut replay = Game::new(size, ko_rule).unwrap();
    for &(c, m) in game.moves() {
        prop_assert!(replay.play(c, m).is_ok(), "{c} {m} is refused on replay");
    }
    prop_assert_eq!(replay.board().hash(), game.board().hash());
    prop_assert!(replay.board().same_stones(game.board()));
    prop_assert_eq!(replay.to_move(), game.to_move());
    for c in [Color::Black, Color::White] {
        prop_assert_eq!(replay.prisoners(c), game.prisoners(c));
    }
    Ok(())
}

/// Living groups per colour, found on a plain grid by a flood fill of its own: the stones
/// of `board` less the `dead`, joined along the lines.
fn groups_by_flood_fill(board: &Board, dead: &DeadStones) -> [u32; 2] {
    let n = usize::from(board.size());
    let mut grid: Vec<Option<Color>> = vec![None; n * n];
    for p in board.points() {
        if !dead.contains(p) {
            grid[usize::from(p.y) * n + usize::from(p.x)] = board.get(p);
        }
    }
    let mut groups = [0u32; 2];
    let mut seen = vec![false; n * n];
    for start in 0..n * n {
        let Some(c) = grid[start] else { continue };
        if seen[start] {
            continue;
        }
        groups[c.index()] += 1;
        seen[start] = true;
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(i) = queue.pop_front() {
            let (x, y) = (i % n, i / n);
            let next = [
                (x > 0).then(|| i - 1),
                (x + 1 < n).then(|| i + 1),
                (y > 0).then(|| i - n),
                (y + 1 < n).then(|| i + n),
            ];
            for j in next.into_iter().flatten() {
                if grid[j] == Some(c) && !seen[j] {
                    seen[j] = true;
                    queue.push_back(j);
                }
            }
        }
    }
    groups
}

/// An ancient-rules game of random legal moves from the set stones, some chains then
/// marked dead at random, counted with and without the tax.
fn ancient_count(
    size: u8,
    seed: u64,
    plies: usize,
    dead_per_mille: usize,
) -> Result<(), TestCaseError> {
    let mut rng = Rng(seed);
    let ruleset = Ruleset::AncientChinese;
    let set = ruleset.set_stones(size).unwrap();
    let mut game = Game::with_setup(size, KoRule::Situational, &set, Color::White).unwrap();
    let points: Vec<Vertex> = game.board().points().collect();
    for _ in 0..plies {
        let color = game.to_move();
        let p = points[rng.below(points.len())];
        if game.play(color, Move::Play(p)).is_err() {
            game.play(color, Move::Pass).unwrap();
        }
    }
    let board = game.board();
    let mut dead = DeadStones::new();
    for &p in &points {
        if board.get(p).is_some() && rng.below(1000) < dead_per_mille {
            dead.set_chain(board, p, true);
        }
    }
    let rules = |ruleset| ScoreRules {
        ruleset,
        komi: HalfPoints(0),
        handicap: 0,
    };
    let taxed = count(board, &dead, &rules(ruleset), [0, 0]);
    let groups = groups_by_flood_fill(board, &dead);
    prop_assert_eq!(taxed.tax, Some(groups), "\n{:?}", board);
    let plain = count(board, &dead, &rules(Ruleset::Chinese), [0, 0]);
    prop_assert_eq!(plain.tax, None);
    prop_assert_eq!(taxed.black.0, plain.black.0 - 2 * groups[0] as i32);
    prop_assert_eq!(taxed.white.0, plain.white.0 - 2 * groups[1] as i32);
    Ok(())
}

fn ko_rules() -> impl Strategy<Value = KoRule> {
    prop_oneof![
        Just(KoRule::Situational),
        Just(KoRule::Positional),
        Just(KoRule::Simple)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Small boards fill up and see many captures and repetitions.
    #[test]
    fn random_games_on_small_boards(
        size in prop_oneof![Just(5u8), Just(9u8)],
        ko_rule in ko_rules(),
        seed in any::<u64>(),
        plies in 1usize..250,
        pass_per_mille in 0usize..60,
    ) {
        random_game(size, ko_rule, seed, plies, pass_per_mille)?;
    }

    #[test]
    fn random_games_on_large_boards(
        size in prop_oneof![Just(13u8), Just(19u8)],
        ko_rule in ko_rules(),
        seed in any::<u64>(),
        plies in 1usize..300,
        pass_per_mille in 0usize..30,
    ) {
        random_game(size, ko_rule, seed, plies, pass_per_mille)?;
    }

    /// 还棋头 is the number of living groups, however the stones lie and whichever died.
    #[test]
    fn the_group_tax_is_the_number_of_groups_a_flood_fill_finds(
        size in prop_oneof![Just(7u8), Just(9u8), Just(13u8), Just(19u8)],
        seed in any::<u64>(),
        plies in 0usize..400,
        dead_per_mille in 0usize..150,
    ) {
        ancient_count(size, seed, plies, dead_per_mille)?;
    }
}

#[test]
fn long_games_on_tiny_boards_meet_superko() {
    // Many plies on 2x2 to 4x4 go round and round; every invariant must still hold.
    for (n, size) in [2u8, 3, 4, 4, 5].into_iter().enumerate() {
        for ko_rule in [KoRule::Situational, KoRule::Positional, KoRule::Simple] {
            random_game(size, ko_rule, 0xabc + n as u64, 400, 20).unwrap();
        }
    }
}
