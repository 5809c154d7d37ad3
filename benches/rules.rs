//! Replaying 19x19 games with situational superko (issue 2's target: at least 5 million
//! moves a second on one core). Two corpora: GNU Go's 19x19 self-play games from
//! tests/data/gnugo, and long random legal games made deterministically here (captures,
//! refills and ko fights that real games have too few of).
//!
//! Beside each corpus, `reference/<corpus>` replays it on the yardstick of issue 17:
//! `reference/mod.rs`, a straightforward optimised engine (flood fill, Zobrist set, a
//! full-board check on a hash match) that `Game::play` should stay at or above. Before it
//! is timed, it must accept every move of the corpus and end on `Game`'s final board.
//!
//! Run: `cargo bench --bench rules -- --warm-up-time 1 --measurement-time 5`

mod corpus;
mod reference;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use corpus::{Replay, gnugo_games};
use tengen::rules::{Color, Game, KoRule, Move, Vertex};

/// Replays `g` from its starting position.
fn play(g: &Replay) -> Game {
    let mut game = Game::with_setup(19, KoRule::Situational, &g.setup, g.first).expect("19x19");
    for &(color, mv) in &g.moves {
        game.play(color, mv)
            .expect("every move of the corpus is legal");
    }
    game
}

/// Replays `g` on the reference engine.
fn play_reference(g: &Replay) -> reference::Engine {
    let mut engine = reference::Engine::new(19, &g.setup, g.first);
    for &(color, mv) in &g.moves {
        engine
            .play(color, mv)
            .expect("every move of the corpus is legal");
    }
    engine
}

/// Panics unless the reference engine accepts every move of `corpus` and ends each game
/// on the board tengen's `Game` ends it on, stone by stone: what makes the yardstick fair.
fn check_reference(name: &str, corpus: &[Replay]) {
    for (i, g) in corpus.iter().enumerate() {
        let mut engine = reference::Engine::new(19, &g.setup, g.first);
        for (k, &(color, mv)) in g.moves.iter().enumerate() {
            if let Err(e) = engine.play(color, mv) {
                panic!(
                    "{name} game {i}: the reference engine refuses move {k} ({color:?} {mv:?}): {e:?}"
                );
            }
        }
        let game = play(g);
        let board = game.board();
        for v in board.points() {
            assert_eq!(
                engine.get(v),
                board.get(v),
                "{name} game {i}: the reference engine's final board differs from Game's at {v:?}"
            );
        }
    }
    eprintln!(
        "{name}: the reference engine agrees with Game on all {} games",
        corpus.len()
    );
}

/// xorshift64*: a fixed sequence, so every run replays the same games.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as usize % n
    }
}

/// A random legal game of up to `length` moves in which neither side fills its own
/// one-point eyes, so groups live, die and get captured and the board refills.
fn random_game(seed: u64, length: usize) -> Replay {
    let mut rng = Rng(seed);
    let mut game = Game::new(19, KoRule::Situational).expect("19x19");
    let mut color = Color::Black;
    let mut passes = 0;
    while game.moves().len() < length && passes < 2 {
        let board = game.board();
        let mut candidates: Vec<Vertex> = board
            .points()
            .filter(|&v| board.get(v).is_none())
            .filter(|&v| !board.neighbors(v).all(|n| board.get(n) == Some(color)))
            .collect();
        let mut mv = Move::Pass;
        while !candidates.is_empty() {
            let v = candidates.swap_remove(rng.below(candidates.len()));
            if game.check(color, Move::Play(v)).is_ok() {
                mv = Move::Play(v);
                break;
            }
        }
        passes = if mv == Move::Pass { passes + 1 } else { 0 };
        game.play(color, mv).expect("checked");
        color = color.opponent();
    }
    Replay {
        setup: Vec::new(),
        first: Color::Black,
        moves: game.moves().to_vec(),
    }
}

fn replay(c: &mut Criterion) {
    let gnugo = gnugo_games();
    let random: Vec<Replay> = (1..=16)
        .map(|seed| random_game(seed * 0x9e37_79b9, 1000))
        .collect();
    let mut group = c.benchmark_group("replay_19x19_situational");
    for (name, corpus) in [("gnugo", &gnugo), ("random", &random)] {
        let moves: usize = corpus.iter().map(|g| g.moves.len()).sum();
        eprintln!("{name}: {} games, {moves} moves", corpus.len());
        group.throughput(Throughput::Elements(moves as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                for g in corpus.iter() {
                    black_box(play(g));
                }
            })
        });
        // Checked on first use, outside the timed loop, so a filtered run checks (and
        // callgrind counts) only what it measures.
        let mut checked = false;
        group.bench_function(format!("reference/{name}"), |b| {
            if !checked {
                check_reference(name, corpus);
                checked = true;
            }
            b.iter(|| {
                for g in corpus.iter() {
                    black_box(play_reference(g));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, replay);
criterion_main!(benches);
