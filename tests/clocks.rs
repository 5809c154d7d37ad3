//! The server's clocks through a real server, on tokio's paused clock: every instant in
//! these tests is exact, so boundaries can be tested to the millisecond.

mod common;

use std::time::Duration;

use common::{Client, TestServer, play, start_game};
use serde_json::{Value, json};
use tokio::time::sleep;

/// A server whose heartbeat and idle timeout never interfere with long sleeps.
async fn server() -> TestServer {
    TestServer::start_with(|c| {
        c.limits.heartbeat_secs = 1_000_000;
        c.limits.idle_timeout_secs = 10_000_000;
    })
    .await
}

async fn game(server: &TestServer, settings: Value) -> (Client, Client, String) {
    let mut black = server.login("black").await;
    let mut white = server.login("white").await;
    let mut settings = settings;
    settings["color"] = json!("black");
    settings["board_size"] = json!(9);
    let id = start_game(&mut black, &mut white, settings).await;
    (black, white, id)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Whether `c` has received a `game_ended` by now (asks the server with a ping, which it
/// answers after everything queued before it).
async fn ended_yet(c: &mut Client) -> Option<Value> {
    c.ok(json!({"type": "ping"})).await;
    let i = c.pending().iter().position(|v| v["type"] == "game_ended")?;
    Some(c.pending()[i].clone())
}

#[tokio::test(start_paused = true)]
async fn a_silent_player_loses_on_time_exactly_at_the_deadline() {
    let server = server().await;
    let clock = json!({"system": "byoyomi", "main_ms": 10_000, "periods": 2, "period_ms": 5_000});
    let (mut black, mut white, id) = game(&server, json!({"clock": clock})).await;
    play(&mut black, &id, 1, "E5").await;
    // White has 10 s + 2 x 5 s. White sends nothing more.
    sleep(ms(19_999)).await;
    assert!(
        ended_yet(&mut white).await.is_none(),
        "no flag before the deadline"
    );
    sleep(ms(1)).await;
    let ended = white.recv_type("game_ended").await;
    assert_eq!(ended["result"], "B+T");
    assert_eq!(ended["reason"], "time");
    assert_eq!(black.recv_type("game_ended").await, ended);
}

#[tokio::test(start_paused = true)]
async fn byoyomi_periods_are_used_only_by_full_periods() {
    let server = server().await;
    let clock = json!({"system": "byoyomi", "main_ms": 1_000, "periods": 3, "period_ms": 5_000});
    let (mut black, mut white, id) = game(&server, json!({"clock": clock})).await;
    // Move 1: main time and 4.999 s of the first period: no period used.
    sleep(ms(1_000 + 4_999)).await;
    play(&mut black, &id, 1, "E5").await;
    let m = white.recv_type("move_played").await;
    assert_eq!(m["clock"]["black"]["main_ms"], 0, "{m}");
    assert_eq!(m["clock"]["black"]["periods_left"], 3);
    assert_eq!(m["clock"]["black"]["period_ms"], 5_000);
    assert_eq!(m["clock"]["running"], "white");
    play(&mut white, &id, 2, "C3").await;
    // Move 3: exactly one full period: one period used.
    sleep(ms(5_000)).await;
    play(&mut black, &id, 3, "G7").await;
    let m = white.recv_type("move_played").await;
    assert_eq!(m["move_number"], 3);
    assert_eq!(m["clock"]["black"]["periods_left"], 2);
    play(&mut white, &id, 4, "C7").await;
    // Move 5: one full period and a bit: one more used, one left.
    sleep(ms(5_000 + 4_999)).await;
    play(&mut black, &id, 5, "G3").await;
    let m = white.recv_type("move_played").await;
    assert_eq!(m["clock"]["black"]["periods_left"], 1);
    play(&mut white, &id, 6, "D4").await;
    // In the last period, 4.999 s is still in time...
    sleep(ms(4_999)).await;
    play(&mut black, &id, 7, "F6").await;
    play(&mut white, &id, 8, "D6").await;
    // ...and a full period is not: the flag falls before the move arrives.
    sleep(ms(5_000)).await;
    let ended = white.recv_type("game_ended").await;
    assert_eq!(ended["result"], "W+T");
    black
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 9, "vertex": "F4"}),
            "wrong_phase",
        )
        .await;
}

#[tokio::test(start_paused = true)]
async fn fischer_adds_the_increment_up_to_the_cap() {
    let server = server().await;
    let clock =
        json!({"system": "fischer", "main_ms": 10_000, "increment_ms": 5_000, "max_ms": 12_000});
    let (mut black, mut white, id) = game(&server, json!({"clock": clock})).await;
    sleep(ms(1_000)).await;
    play(&mut black, &id, 1, "E5").await;
    let m = white.recv_type("move_played").await;
    // 10 - 1 + 5 = 14, capped at 12.
    assert_eq!(m["clock"]["black"]["main_ms"], 12_000);
    assert_eq!(m["clock"]["white"]["main_ms"], 10_000);
}

#[tokio::test(start_paused = true)]
async fn paused_time_is_charged_to_nobody() {
    let server = server().await;
    let clock = json!({"system": "absolute", "main_ms": 60_000});
    let (mut black, mut white, id) = game(&server, json!({"clock": clock})).await;
    sleep(ms(10_000)).await;
    black.ok(json!({"type": "pause", "game_id": id})).await;
    assert_eq!(white.recv_type("pause_requested").await["by"], "black");
    white.ok(json!({"type": "pause", "game_id": id})).await;
    let paused = black.recv_type("paused").await;
    assert_eq!(paused["clock"]["paused"], true);
    assert_eq!(paused["clock"]["black"]["main_ms"], 50_000);
    // An hour passes: nobody's flag falls, and moves wait for the resumption.
    sleep(Duration::from_secs(3_600)).await;
    assert!(ended_yet(&mut black).await.is_none());
    black
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 1, "vertex": "E5"}),
            "wrong_phase",
        )
        .await;
    white.ok(json!({"type": "resume", "game_id": id})).await;
    black.ok(json!({"type": "resume", "game_id": id})).await;
    let resumed = white.recv_type("resumed").await;
    assert_eq!(resumed["clock"]["running"], "black");
    sleep(ms(5_000)).await;
    play(&mut black, &id, 1, "E5").await;
    let m = white.recv_type("move_played").await;
    assert_eq!(
        m["clock"]["black"]["main_ms"], 45_000,
        "10 s before, 5 s after the pause"
    );
}

#[tokio::test(start_paused = true)]
async fn a_sealed_move_is_hidden_then_played_at_resumption() {
    let server = server().await;
    let mut spectator = server.anonymous().await;
    let clock = json!({"system": "absolute", "main_ms": 600_000});
    let (mut black, mut white, id) = game(&server, json!({"clock": clock})).await;
    spectator.ok(json!({"type": "join", "game_id": id})).await;
    play(&mut black, &id, 1, "E5").await;
    assert_eq!(spectator.recv_type("move_played").await["vertex"], "E5");
    // White seals move 2 after thinking 30 s.
    sleep(ms(30_000)).await;
    white
        .ok(json!({"type": "seal", "game_id": id, "move_number": 2, "vertex": "C3"}))
        .await;
    for c in [&mut black, &mut spectator] {
        let sealed = c.recv_type("move_sealed").await;
        assert_eq!(sealed["by"], "white");
        assert!(
            sealed.get("vertex").is_none(),
            "the sealed point stays secret: {sealed}"
        );
    }
    // Nobody's time runs during the adjournment; a late joiner learns nothing either.
    sleep(Duration::from_secs(24 * 3_600)).await;
    let mut late = server.anonymous().await;
    late.ok(json!({"type": "join", "game_id": id, "since_seq": 1}))
        .await;
    let replayed = late
        .pending()
        .iter()
        .find(|v| v["type"] == "move_sealed")
        .cloned()
        .expect("the sealing is replayed to a client catching up");
    assert!(replayed.get("vertex").is_none(), "{replayed}");
    let mut fresh = server.anonymous().await;
    fresh.ok(json!({"type": "join", "game_id": id})).await;
    let snapshot = fresh.recv_type("snapshot").await;
    assert_eq!(snapshot["sealed_by"], "white");
    assert!(!snapshot.to_string().contains("C3"), "{snapshot}");
    black.ok(json!({"type": "resume", "game_id": id})).await;
    white.ok(json!({"type": "resume", "game_id": id})).await;
    let m = spectator.recv_type("move_played").await;
    assert_eq!(m["vertex"], "C3");
    assert_eq!(m["sealed"], "C3");
    assert_eq!(m["color"], "white");
    assert_eq!(
        m["clock"]["white"]["main_ms"], 570_000,
        "only the 30 s before sealing count"
    );
    assert_eq!(m["clock"]["running"], "black");
}

#[tokio::test(start_paused = true)]
async fn a_sealed_move_on_an_occupied_point_is_a_pass() {
    let server = server().await;
    let (mut black, mut white, id) = game(&server, json!({})).await;
    play(&mut black, &id, 1, "E5").await;
    white
        .ok(json!({"type": "seal", "game_id": id, "move_number": 2, "vertex": "E5"}))
        .await;
    black.ok(json!({"type": "resume", "game_id": id})).await;
    white.ok(json!({"type": "resume", "game_id": id})).await;
    let m = black.recv_type("move_played").await;
    assert_eq!(m["move_number"], 2);
    assert_eq!(m["vertex"], "pass");
    assert_eq!(m["sealed"], "E5");
    // Black to move next, and the game goes on.
    play(&mut black, &id, 3, "C3").await;
}

async fn scheduled(server: &TestServer, start_in_ms: i64) -> (Client, Client, String) {
    let start_at = tengen::time::wall_ms() + start_in_ms;
    game(
        server,
        json!({"start_at": start_at, "forfeit_after_ms": 600_000,
               "clock": {"system": "absolute", "main_ms": 3_600_000}}),
    )
    .await
}

#[tokio::test(start_paused = true)]
async fn a_scheduled_game_forfeits_the_absent_player() {
    let server = server().await;
    let (black, mut white, id) = scheduled(&server, 60_000).await;
    // Black leaves and never comes back; White stays.
    black.close().await;
    white
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 1, "vertex": "E5"}),
            "wrong_phase",
        )
        .await;
    sleep(ms(60_000)).await;
    let began = white.recv_type("game_began").await;
    assert_eq!(began["clock"]["running"], "black");
    sleep(ms(3_600_000)).await;
    let ended = white.recv_type("game_ended").await;
    // Black was here before the start, so lateness does not apply: the clock does.
    assert_eq!(ended["result"], "W+T", "{ended}");
}

/// A game starting in a minute with five minutes' lateness allowed, Black (alice) and
/// White (bob) logged in but not joined.
async fn scheduled_unjoined(server: &TestServer) -> (Client, Client, String) {
    let mut alice = server.login("alice").await;
    let start_at = tengen::time::wall_ms() + 60_000;
    let seek = alice
        .ok(
            json!({"type": "seek", "settings": {"board_size": 9, "color": "black",
            "start_at": start_at, "forfeit_after_ms": 300_000}}),
        )
        .await;
    let mut bob = server.login("bob").await;
    let ack = bob
        .ok(json!({"type": "accept", "challenge_id": seek["challenge"]["challenge_id"]}))
        .await;
    let id = ack["game_id"].as_str().unwrap().to_string();
    (alice, bob, id)
}

#[tokio::test(start_paused = true)]
async fn a_scheduled_game_with_both_players_absent_is_lost_by_both() {
    let server = server().await;
    let mut watcher = server.anonymous().await;
    let (alice, bob, id) = scheduled_unjoined(&server).await;
    // Neither player joins the game.
    alice.close().await;
    bob.close().await;
    watcher.ok(json!({"type": "join", "game_id": id})).await;
    // The start time is wall-clock time, read by the test and the server a few real
    // milliseconds apart: allow a second either way.
    sleep(ms(60_000 + 299_000)).await;
    assert!(ended_yet(&mut watcher).await.is_none());
    sleep(ms(2_000)).await;
    let ended = watcher.recv_type("game_ended").await;
    assert_eq!(ended["reason"], "double_forfeit");
    assert_eq!(ended["result"], "Void");
}

#[tokio::test(start_paused = true)]
async fn a_scheduled_game_forfeits_one_absent_player() {
    let server = server().await;
    let (_alice, mut bob, id) = scheduled_unjoined(&server).await;
    // Only White (bob) comes to the board.
    bob.ok(json!({"type": "join", "game_id": id})).await;
    sleep(ms(360_000)).await;
    let ended = bob.recv_type("game_ended").await;
    assert_eq!(ended["result"], "W+F");
    assert_eq!(ended["reason"], "forfeit");
}

#[tokio::test(start_paused = true)]
async fn the_opponent_may_claim_a_game_after_a_long_absence() {
    let server = server().await;
    let (mut black, mut white, id) = game(&server, json!({"claim_after_ms": 120_000})).await;
    // Moves first: a game whose first move never came would be aborted, not won.
    play(&mut black, &id, 1, "E5").await;
    play(&mut white, &id, 2, "C3").await;
    black.close().await;
    loop {
        let p = white.recv_type("presence").await;
        if p["color"] == "black" && p["online"] == false {
            break;
        }
    }
    sleep(ms(119_999)).await;
    white
        .refused(json!({"type": "claim_win", "game_id": id}), "forbidden")
        .await;
    sleep(ms(1)).await;
    white.ok(json!({"type": "claim_win", "game_id": id})).await;
    assert_eq!(white.recv_type("game_ended").await["result"], "W+F");
}

#[tokio::test(start_paused = true)]
async fn the_dead_stone_phase_is_bounded_and_running_out_is_a_dispute() {
    let server = server().await;
    let (mut black, mut white, id) = game(&server, json!({"scoring_ms": 60_000})).await;
    play(&mut black, &id, 1, "E5").await;
    play(&mut white, &id, 2, "A1").await;
    play(&mut black, &id, 3, "pass").await;
    play(&mut white, &id, 4, "pass").await;
    black.recv_type("scoring_started").await;
    // Black marks White's live stone dead, accepts, and waits for White to go silent:
    // that must not win Black the point.
    black
        .ok(json!({"type": "mark_dead", "game_id": id, "vertex": "A1"}))
        .await;
    black
        .ok(json!({"type": "accept_score", "game_id": id}))
        .await;
    sleep(ms(59_999)).await;
    assert!(ended_yet(&mut black).await.is_none());
    sleep(ms(1)).await;
    let resumed = white.recv_type("play_resumed").await;
    assert!(
        resumed.get("by").is_none(),
        "nobody rejected: time ran out: {resumed}"
    );
    assert_eq!(resumed["to_move"], "black");
    // Play settled nothing; after the second run-out every stone lives.
    play(&mut black, &id, 5, "pass").await;
    play(&mut white, &id, 6, "pass").await;
    sleep(ms(60_000)).await;
    let ended = black.recv_type("game_ended").await;
    assert_eq!(ended["score"]["dead"], json!([]));
    // Black E5 and White A1 live; the 79 empty points touch both: B 1 + 39.5, W 1 + 39.5.
    assert_eq!(ended["result"], "W+7.5");
}

#[tokio::test(start_paused = true)]
async fn lag_is_credited_back_but_only_within_the_quota() {
    // Defaults: at most 1 s a move, a 3 s quota that regains 0.25 s a move.
    let server = server().await;
    let mut black = server.login("black").await;
    // The server pings on connect; Black answers 4 s late: a 4 s round trip, so an
    // estimated 2 s one-way lag.
    sleep(ms(4_000)).await;
    black.ok(json!({"type": "ping"})).await;
    let mut white = server.login("white").await;
    let settings = json!({"board_size": 9, "color": "black",
        "clock": {"system": "absolute", "main_ms": 60_000}});
    let id = start_game(&mut black, &mut white, settings).await;
    let mut left = Vec::new();
    let moves = [
        "C3", "G7", "C7", "G3", "E5", "E3", "E7", "C5", "G5", "D4", "F6", "D6",
    ];
    for (i, v) in moves.iter().enumerate() {
        let n = i as u32 + 1;
        if n % 2 == 1 {
            // Black thinks 2 s (as the server sees it) each move.
            sleep(ms(2_000)).await;
            play(&mut black, &id, n, v).await;
            let m = white.recv_type("move_played").await;
            left.push(m["clock"]["black"]["main_ms"].as_u64().unwrap());
        } else {
            play(&mut white, &id, n, v).await;
            let m = black.recv_type("move_played").await;
            assert_eq!(
                m["clock"]["white"]["main_ms"], 60_000,
                "White has no lag and no thinking"
            );
        }
    }
    // Credits 1, 1, 1 s, then 0.75 s (the quota is down to it), then 0.25 s a move.
    assert_eq!(left, [59_000, 58_000, 57_000, 55_750, 54_000, 52_250]);
}

#[tokio::test(start_paused = true)]
async fn after_a_restart_no_clock_runs_until_the_player_to_move_is_back() {
    let server = server().await;
    let clock = json!({"system": "absolute", "main_ms": 60_000});
    let (mut black, white, id) = game(&server, json!({"clock": clock})).await;
    sleep(ms(10_000)).await;
    play(&mut black, &id, 1, "E5").await;
    black.close().await;
    white.close().await;
    let dir = server.stop().await;
    // The server is down for an hour.
    sleep(Duration::from_secs(3_600)).await;
    let server = TestServer::start_in(dir, |c| {
        c.limits.heartbeat_secs = 1_000_000;
        c.limits.idle_timeout_secs = 10_000_000;
    })
    .await;
    let mut watcher = server.anonymous().await;
    watcher.ok(json!({"type": "join", "game_id": id})).await;
    let snap = watcher.recv_type("snapshot").await;
    assert_eq!(snap["phase"], "play");
    assert_eq!(snap["moves"][0]["vertex"], "E5");
    assert!(
        snap["clock"]["running"].is_null(),
        "no clock runs while White is away: {snap}"
    );
    assert_eq!(snap["clock"]["black"]["main_ms"], 50_000);
    assert_eq!(snap["clock"]["white"]["main_ms"], 60_000);
    assert_eq!(snap["white"]["online"], false);
    // White comes back: their clock starts then, not at the restart.
    sleep(ms(30_000)).await;
    let mut white = server.login("white").await;
    white.ok(json!({"type": "join", "game_id": id})).await;
    sleep(ms(2_000)).await;
    play(&mut white, &id, 2, "C3").await;
    let m = watcher.recv_type("move_played").await;
    assert_eq!(m["clock"]["white"]["main_ms"], 58_000);
    assert_eq!(m["clock"]["black"]["main_ms"], 50_000);
}

#[tokio::test(start_paused = true)]
async fn a_silent_connection_is_closed_after_the_idle_timeout() {
    let server = TestServer::start_with(|c| {
        c.limits.heartbeat_secs = 1;
        c.limits.idle_timeout_secs = 3;
    })
    .await;
    let mut silent = server.anonymous().await;
    let mut talker = server.anonymous().await;
    for _ in 0..5 {
        sleep(ms(2_000)).await;
        talker.ok(json!({"type": "ping"})).await;
    }
    // Ten seconds without a word (nor a pong: it read nothing) from the silent one: the
    // server has closed it (with 1000 "idle timeout"; the client, answering the queued
    // pings as it finally reads, may see the reset before the close frame).
    let code = silent.closed().await;
    assert!(matches!(code, Some(1000) | None), "{code:?}");
    talker.ok(json!({"type": "ping"})).await;
}

#[tokio::test(start_paused = true)]
async fn a_game_whose_first_move_never_comes_is_aborted_when_the_first_players_time_runs_out() {
    let server = server().await;
    let clock = json!({"system": "byoyomi", "main_ms": 10_000, "periods": 2, "period_ms": 5_000});
    let settings = json!({"clock": clock, "rated": true});
    let (mut black, mut white, _id) = game(&server, settings).await;
    // Black never moves: at Black's deadline the game ends with no result, not B's loss.
    sleep(ms(20_000)).await;
    let ended = white.recv_type("game_ended").await;
    assert_eq!(ended["result"], "Void");
    assert_eq!(ended["reason"], "aborted");
    assert_eq!(black.recv_type("game_ended").await, ended);
}
