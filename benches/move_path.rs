//! The per-move path of a room, in the pieces a regression would hide in: the state
//! machine's decision (`decide`, which applies the move to a copy), the commit's staging
//! (encoding the stored and public frames), and the fan-out of a frame to the queues of
//! N connections (with their readers draining). `whole_move` is the three in a row for a
//! game with 12 connections, as `tengen load` plays it. Durable commit batching is
//! measured by `benches/store.rs` (`group_commit_200_games`).
//!
//! Every input is GNU Go's 19x19 self-play games from tests/data/gnugo, played under a
//! byo-yomi clock one second a move; criterion's `thrpt` is in moves per second.
//!
//! Run: `cargo bench --bench move_path -- --warm-up-time 1 --measurement-time 5`

mod corpus;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use corpus::{Replay, gnugo_games};
use tengen::clock::{LagSettings, TimeControl};
use tengen::fanout::{Frame, Inbox, Outbox};
use tengen::protocol::{GameAction, GameEvent, GameSettings, Role, UserInfo};
use tengen::room::{LiveGame, Moment, stage};
use tengen::rules::Color;

/// The wall time at creation, Unix ms.
const WALL: i64 = 1_800_000_000_000;
/// Time between moves.
const MOVE_MS: u64 = 1000;

fn at(now: u64) -> Moment {
    Moment {
        now,
        wall_ms: WALL + now as i64,
        lag_ms: 0,
    }
}

fn user(id: &str) -> UserInfo {
    UserInfo {
        id: id.into(),
        name: id.into(),
        role: Role::Player,
    }
}

/// A fresh 19x19 byo-yomi game between two players, its clock running.
fn new_game() -> LiveGame {
    let settings = GameSettings {
        board_size: 19,
        clock: TimeControl::Byoyomi {
            main_ms: 3_600_000,
            periods: 5,
            period_ms: 30_000,
        },
        ..GameSettings::default()
    };
    let first = GameEvent::GameCreated {
        settings: Box::new(settings),
        black: user("b"),
        white: user("w"),
        handicap_stones: Vec::new(),
        nigiri: None,
        created_at: WALL,
    };
    let mut game = LiveGame::create(&first, at(0), LagSettings::default()).expect("a game");
    game.start_clock_if_stopped(0);
    game
}

/// The games of the corpus that start from an empty board with Black to move.
fn corpus() -> Vec<Replay> {
    gnugo_games()
        .into_iter()
        .filter(|g| g.setup.is_empty() && g.first == Color::Black)
        .collect()
}

/// What the room stages of a step: its events, the first one's seq, the move count after.
struct Decided {
    events: Vec<GameEvent>,
    first_seq: u64,
    move_count: u32,
}

impl Decided {
    fn stage(self) -> tengen::room::Staged {
        stage("g", self.first_seq, self.events, self.move_count, WALL)
    }
}

/// Plays `replay` through `decide`, handing each step's events to `then`, and returns
/// the game.
fn play(replay: &Replay, mut then: impl FnMut(Decided)) -> LiveGame {
    let mut game = new_game();
    for (n, &(color, mv)) in replay.moves.iter().enumerate() {
        let action = GameAction::Play {
            move_number: n as u32 + 1,
            vertex: mv,
        };
        let step = game
            .decide(color, &action, at((n as u64 + 1) * MOVE_MS))
            .expect("every move of the corpus is legal");
        then(Decided {
            first_seq: step.first_seq(),
            move_count: step.game.move_count(),
            events: step.events,
        });
        game = *step.game;
    }
    game
}

/// `n` connection queues of the server's default size, with their readers.
fn queues(n: usize) -> Vec<(Outbox, Inbox)> {
    (0..n as u64)
        .map(|conn| Outbox::new(conn, 256, 1 << 20))
        .collect()
}

/// Pushes `frame` to every queue and drains it, as each connection's writer would.
fn fan_out(queues: &mut [(Outbox, Inbox)], frame: &Frame) {
    for (outbox, _) in queues.iter() {
        assert!(outbox.push(frame.clone()), "the queue has room");
    }
    for (_, inbox) in queues.iter_mut() {
        black_box(inbox.try_recv().expect("the frame just pushed"));
    }
}

fn move_path(c: &mut Criterion) {
    let games = corpus();
    let moves: usize = games.iter().map(|g| g.moves.len()).sum();
    eprintln!("{} games, {moves} moves", games.len());
    // The frames of every move, encoded once, for the fan-out alone.
    let mut frames = Vec::with_capacity(moves);
    for g in &games {
        play(g, |decided| frames.extend(decided.stage().frames));
    }

    let mut group = c.benchmark_group("move_path_19x19");
    group.throughput(Throughput::Elements(moves as u64));
    group.bench_function("decide", |b| {
        b.iter(|| {
            for g in &games {
                black_box(play(g, |decided| {
                    black_box(decided);
                }));
            }
        })
    });
    group.bench_function("decide_and_stage", |b| {
        b.iter(|| {
            for g in &games {
                play(g, |decided| {
                    black_box(decided.stage());
                });
            }
        })
    });
    group.throughput(Throughput::Elements(frames.len() as u64));
    for n in [12, 100] {
        let mut queues = queues(n);
        group.bench_function(format!("fan_out_to_{n}"), |b| {
            b.iter(|| {
                for frame in &frames {
                    fan_out(&mut queues, frame);
                }
            })
        });
    }
    group.throughput(Throughput::Elements(moves as u64));
    let mut twelve = queues(12);
    group.bench_function("whole_move_12_connections", |b| {
        b.iter(|| {
            for g in &games {
                play(g, |decided| {
                    for frame in &decided.stage().frames {
                        fan_out(&mut twelve, frame);
                    }
                });
            }
        })
    });
    group.finish();
}

criterion_group!(benches, move_path);
criterion_main!(benches);
