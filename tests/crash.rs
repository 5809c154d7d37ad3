//! Durability under SIGKILL: the real binary as a child process is killed at random
//! points, also in the middle of bursts of moves, and restarted on the same data dir.
//! Every acknowledged move must survive; nothing unacknowledged may be half there; and
//! every game must still play on to a result.

mod common;

use std::time::Duration;

use common::Client;
use common::process::{Running, token};
use rand::{Rng, RngExt, SeedableRng};
use serde_json::{Value, json};
use tengen::rules::{Color, Game, KoRule, Move, Vertex};

/// Starts `tengen serve` on port 0 on `dir`.
fn spawn(dir: &std::path::Path) -> Running {
    common::process::spawn(dir, &[])
}

/// A game as the test drives it: the ids of its players and the moves acknowledged.
struct Table {
    id: String,
    black: String,
    white: String,
    acked: Vec<Move>,
}

/// A random legal move (never a pass, so the game does not end by itself).
fn pick(game: &Game, rng: &mut impl Rng) -> Move {
    let size = game.board().size();
    for _ in 0..500 {
        let v = Vertex::new(rng.random_range(0..size), rng.random_range(0..size));
        if game.check(game.to_move(), Move::Play(v)).is_ok() {
            return Move::Play(v);
        }
    }
    Move::Pass
}

fn mirror(moves: &[Move]) -> Game {
    let mut g = Game::new(9, KoRule::Situational).unwrap();
    for &m in moves {
        let c = g.to_move();
        g.play(c, m).unwrap();
    }
    g
}

/// Plays moves as fast as acks come until the connection breaks or `max` moves are in.
/// Returns the moves acknowledged and the one in flight when it broke, if any.
async fn burst(
    url: &str,
    dir: &std::path::Path,
    t: &Table,
    max: usize,
    seed: u64,
) -> (Vec<Move>, Option<Move>) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut black = Client::connect(&format!("{url}?token={}", token(dir, &t.black))).await;
    let mut white = Client::connect(&format!("{url}?token={}", token(dir, &t.white))).await;
    let mut game = mirror(&t.acked);
    let mut acked = Vec::new();
    for _ in 0..max {
        let mv = pick(&game, &mut rng);
        let c = if game.to_move() == Color::Black {
            &mut black
        } else {
            &mut white
        };
        let n = game.moves().len() as u32 + 1;
        let sent = c.try_request(json!({"type": "play", "game_id": t.id, "move_number": n, "vertex": mv.to_string()})).await;
        match sent {
            Some(reply) if reply["type"] == "ack" => {
                let col = game.to_move();
                game.play(col, mv).unwrap();
                acked.push(mv);
            }
            Some(reply) => panic!("a legal move was refused: {reply}"),
            None => return (acked, Some(mv)),
        }
    }
    (acked, None)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_moves_survive_sigkill_and_games_finish() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = spawn(dir.path());
    // Four games between eight players.
    let mut tables = Vec::new();
    for g in 0..4 {
        let (b, w) = (format!("b{g}"), format!("w{g}"));
        let mut bc =
            Client::connect(&format!("{}?token={}", server.url, token(dir.path(), &b))).await;
        let mut wc =
            Client::connect(&format!("{}?token={}", server.url, token(dir.path(), &w))).await;
        let id =
            common::start_game(&mut bc, &mut wc, json!({"board_size": 9, "color": "black"})).await;
        tables.push(Table {
            id,
            black: b,
            white: w,
            acked: Vec::new(),
        });
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut cut = 0;
    for round in 0..4u64 {
        // Bursts in every game at once; the server is killed at a random instant.
        let url = server.url.clone();
        let mut bursts = Vec::new();
        for (i, t) in tables.iter().enumerate() {
            let (url, dir, table) = (
                url.clone(),
                dir.path().to_path_buf(),
                Table {
                    id: t.id.clone(),
                    black: t.black.clone(),
                    white: t.white.clone(),
                    acked: t.acked.clone(),
                },
            );
            bursts.push(tokio::spawn(async move {
                burst(&url, &dir, &table, 60, round * 10 + i as u64).await
            }));
        }
        tokio::time::sleep(Duration::from_millis(rng.random_range(20..250))).await;
        server.kill();
        let mut in_flight = Vec::new();
        for (t, b) in tables.iter_mut().zip(bursts) {
            let (acked, pending) = b.await.unwrap();
            cut += usize::from(acked.len() < 60);
            t.acked.extend(acked);
            in_flight.push(pending);
        }
        server = spawn(dir.path());
        // After the restart: each game holds every acknowledged move, in order, and at
        // most the one move that was in flight, whole.
        let mut watcher = Client::connect(&server.url).await;
        for (t, pending) in tables.iter_mut().zip(in_flight) {
            watcher.ok(json!({"type": "join", "game_id": t.id})).await;
            let snap = watcher.recv_type("snapshot").await;
            let stored: Vec<String> = snap["moves"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["vertex"].as_str().unwrap().to_string())
                .collect();
            let acked: Vec<String> = t.acked.iter().map(|m| m.to_string()).collect();
            assert!(
                stored.len() >= acked.len(),
                "round {round}: acknowledged moves lost in {}: {stored:?} vs {acked:?}",
                t.id
            );
            assert_eq!(
                stored[..acked.len()],
                acked[..],
                "round {round}: the record differs"
            );
            match stored.len() - acked.len() {
                0 => {}
                1 => {
                    assert_eq!(
                        Some(stored[acked.len()].clone()),
                        pending.map(|m| m.to_string()),
                        "only the move in flight may appear"
                    );
                    t.acked.push(pending.unwrap());
                }
                n => panic!("round {round}: {n} unacknowledged moves appeared"),
            }
            // The board the server rebuilt is the board of those moves.
            let mirror = mirror(&t.acked);
            let rows: Vec<String> = mirror
                .board()
                .to_diagram()
                .lines()
                .map(str::to_string)
                .collect();
            assert_eq!(
                snap["board"],
                json!(rows),
                "round {round}: the rebuilt position differs"
            );
            assert_eq!(snap["phase"], "play");
        }
    }
    // Every game plays on to a result after all that.
    for t in &tables {
        let mut black = Client::connect(&format!(
            "{}?token={}",
            server.url,
            token(dir.path(), &t.black)
        ))
        .await;
        let mut white = Client::connect(&format!(
            "{}?token={}",
            server.url,
            token(dir.path(), &t.white)
        ))
        .await;
        for c in [&mut black, &mut white] {
            c.ok(json!({"type": "join", "game_id": t.id})).await;
        }
        let n = t.acked.len() as u32;
        let (first, second) = if n.is_multiple_of(2) {
            (&mut black, &mut white)
        } else {
            (&mut white, &mut black)
        };
        // A nearly full board may have made the last random move a pass: one more ends
        // the play then.
        common::play(first, &t.id, n + 1, "pass").await;
        if t.acked.last() != Some(&Move::Pass) {
            common::play(second, &t.id, n + 2, "pass").await;
        }
        first
            .ok(json!({"type": "accept_score", "game_id": t.id}))
            .await;
        second
            .ok(json!({"type": "accept_score", "game_id": t.id}))
            .await;
        let ended: Value = first.recv_type("game_ended").await;
        assert_eq!(ended["reason"], "score", "{ended}");
    }
    let total: usize = tables.iter().map(|t| t.acked.len()).sum();
    assert!(
        total >= 20,
        "the bursts got moves in before the kills: {total}"
    );
    assert!(cut > 0, "at least one kill landed in the middle of a burst");
    server.child.kill().ok();
}
