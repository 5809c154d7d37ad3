//! A game's stages across restarts and scheduled starts, through a real server: the lag
//! quota survives a restart, and every scheduled start is recorded as `game_began`.

mod common;

use std::time::Duration;

use common::{Client, TestServer, play, start_game};
use serde_json::{Value, json};
use tokio::time::sleep;

fn quiet(c: &mut tengen::config::Config) {
    c.limits.heartbeat_secs = 1_000_000;
    c.limits.idle_timeout_secs = 10_000_000;
}

/// Logs `who` in and answers the server's first ping 4 s late: an estimated one-way lag
/// of 2 s, more than any move's credit.
async fn lagging(server: &TestServer, who: &str) -> Client {
    let mut c = server.login(who).await;
    sleep(Duration::from_secs(4)).await;
    c.ok(json!({"type": "ping"})).await;
    c
}

/// Black thinks 2 s and plays `vertex`; returns the credit the move recorded.
async fn slow_move(
    black: &mut Client,
    white: &mut Client,
    id: &str,
    n: u32,
    vertex: &str,
) -> Value {
    sleep(Duration::from_secs(2)).await;
    play(black, id, n, vertex).await;
    white.recv_type("move_played").await["lag_credit_ms"].clone()
}

#[tokio::test(start_paused = true)]
async fn a_restart_gives_no_lag_quota_back() {
    let server = TestServer::start_with(quiet).await;
    let mut black = lagging(&server, "black").await;
    let mut white = server.login("white").await;
    let settings = json!({"board_size": 9, "color": "black",
        "clock": {"system": "absolute", "main_ms": 600_000}});
    let id = start_game(&mut black, &mut white, settings).await;
    let mut credits = Vec::new();
    for (n, (b, w)) in [("C3", "G7"), ("C7", "G3"), ("E5", "E3")]
        .iter()
        .enumerate()
    {
        let n = 2 * n as u32 + 1;
        credits.push(slow_move(&mut black, &mut white, &id, n, b).await);
        play(&mut white, &id, n + 1, w).await;
        black.recv_type("move_played").await;
    }
    // Three full credits: 3000 − 3 × 1000 + 3 × 250 = 750 ms of quota left.
    assert_eq!(credits, [1000, 1000, 1000]);
    black.close().await;
    white.close().await;
    let dir = server.stop().await;
    let server = TestServer::start_in(dir, quiet).await;
    let mut black = lagging(&server, "black").await;
    let mut white = server.login("white").await;
    for c in [&mut black, &mut white] {
        c.ok(json!({"type": "join", "game_id": id})).await;
        c.recv_type("snapshot").await;
    }
    // The quota left before the restart, not a fresh 3000 ms.
    assert_eq!(slow_move(&mut black, &mut white, &id, 7, "E7").await, 750);
    play(&mut white, &id, 8, "C5").await;
    black.recv_type("move_played").await;
    assert_eq!(slow_move(&mut black, &mut white, &id, 9, "G5").await, 250);
}

/// Alice (Black) challenges Bob to a game starting at `start_at`; Bob accepts. Nobody
/// joins. Returns Bob and the game id.
async fn scheduled(server: &TestServer, start_at: i64) -> (Client, String) {
    let mut alice = server.login("alice").await;
    let settings = json!({"board_size": 9, "color": "black", "start_at": start_at,
        "forfeit_after_ms": 600_000, "clock": {"system": "absolute", "main_ms": 600_000}});
    let seek = alice
        .ok(json!({"type": "seek", "settings": settings}))
        .await;
    let mut bob = server.login("bob").await;
    let challenge_id = seek["challenge"]["challenge_id"].clone();
    let ack = bob
        .ok(json!({"type": "accept", "challenge_id": challenge_id}))
        .await;
    let id = ack["game_id"].as_str().expect("game id").to_string();
    (bob, id)
}

#[tokio::test(start_paused = true)]
async fn a_start_already_past_at_creation_begins_at_once_and_charges_black() {
    let server = TestServer::start_with(quiet).await;
    let (mut bob, id) = scheduled(&server, tengen::time::wall_ms() - 1_000).await;
    bob.ok(json!({"type": "join", "game_id": id, "since_seq": 0}))
        .await;
    let began = bob.recv_type("game_began").await;
    assert_eq!(began["seq"], 2, "the start is the event after the creation");
    assert_eq!(began["clock"]["running"], "black", "{began}");
    // Black never came, and Black's clock runs all the same.
    sleep(Duration::from_secs(10)).await;
    let mut watcher = server.anonymous().await;
    watcher.ok(json!({"type": "join", "game_id": id})).await;
    let snap = watcher.recv_type("snapshot").await;
    assert_eq!(snap["phase"], "play");
    assert_eq!(snap["clock"]["running"], "black");
    assert!(
        snap["clock"]["black"]["main_ms"].as_u64() <= Some(590_000),
        "{snap}"
    );
}

// Real time: the start must pass by the wall clock while the server is down.
#[tokio::test]
async fn a_start_missed_in_downtime_is_recorded_with_clocks_stopped() {
    let server = TestServer::start_with(quiet).await;
    let (bob, id) = scheduled(&server, tengen::time::wall_ms() + 1_500).await;
    bob.close().await;
    let dir = server.stop().await;
    sleep(Duration::from_millis(2_000)).await;
    let server = TestServer::start_in(dir, quiet).await;
    let mut watcher = server.anonymous().await;
    watcher
        .ok(json!({"type": "join", "game_id": id, "since_seq": 0}))
        .await;
    let began = watcher.recv_type("game_began").await;
    assert_eq!(began["seq"], 2);
    assert!(
        began["clock"]["running"].is_null(),
        "no clock runs until the player to move is back: {began}"
    );
    let mut again = server.anonymous().await;
    again.ok(json!({"type": "join", "game_id": id})).await;
    let snap = again.recv_type("snapshot").await;
    assert_eq!(snap["phase"], "play");
    assert_eq!(snap["clock"]["black"]["main_ms"], 600_000);
}
