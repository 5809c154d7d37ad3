//! Correspondence games through a real server on tokio's paused clock: clocks that
//! count days whoever is connected, across restarts.

mod common;

use std::time::Duration;

use common::{Client, TestServer, play, start_game};
use serde_json::{Value, json};
use tokio::time::sleep;

const DAY: u64 = 86_400_000;

fn days(n: u64) -> Duration {
    Duration::from_millis(n * DAY)
}

/// A server whose heartbeat and idle timeout never interfere with sleeps of days.
async fn server() -> TestServer {
    TestServer::start_with(quiet).await
}

fn quiet(c: &mut tengen::config::Config) {
    c.limits.heartbeat_secs = 100_000_000;
    c.limits.idle_timeout_secs = 1_000_000_000;
}

/// Fischer in days: 3 days, a day a move, at most 4 days.
fn fischer_days() -> Value {
    json!({"system": "fischer", "main_ms": 3 * DAY, "increment_ms": DAY, "max_ms": 4 * DAY})
}

async fn game(server: &TestServer, clock: Value) -> (Client, Client, String) {
    let mut black = server.login("black").await;
    let mut white = server.login("white").await;
    let settings =
        json!({"board_size": 9, "color": "black", "correspondence": true, "clock": clock});
    let id = start_game(&mut black, &mut white, settings).await;
    (black, white, id)
}

/// `who` joins game `id` again on a new connection and gets its snapshot.
async fn rejoin(server: &TestServer, who: &str, id: &str) -> (Client, Value) {
    let mut c = server.login(who).await;
    c.ok(json!({"type": "join", "game_id": id})).await;
    let snapshot = c.recv_type("snapshot").await;
    (c, snapshot)
}

fn main_ms(snapshot: &Value, color: &str) -> u64 {
    snapshot["clock"][color]["main_ms"]
        .as_u64()
        .expect("main_ms")
}

#[tokio::test(start_paused = true)]
async fn a_correspondence_clock_counts_days_whoever_is_connected() {
    let server = server().await;
    let (black, white, id) = game(&server, fischer_days()).await;
    // Black's clock runs from the start, not from when Black comes to the board.
    black.close().await;
    white.close().await;
    sleep(days(1)).await;
    let (mut black, snapshot) = rejoin(&server, "black", &id).await;
    assert_eq!(snapshot["clock"]["running"], "black", "{snapshot}");
    assert_eq!(main_ms(&snapshot, "black"), 2 * DAY);
    play(&mut black, &id, 1, "E5").await;
    black.close().await;
    // White, away, runs out 3 days later to the millisecond.
    sleep(days(3) - Duration::from_millis(1)).await;
    let (mut watcher, snapshot) = rejoin(&server, "carol", &id).await;
    assert_eq!(snapshot["phase"], "play", "{snapshot}");
    assert_eq!(main_ms(&snapshot, "white"), 1);
    assert_eq!(
        main_ms(&snapshot, "black"),
        3 * DAY,
        "2 days left and a day's increment"
    );
    let ended = watcher.recv_type("game_ended").await;
    assert_eq!(ended["result"], "B+T");
    assert_eq!(ended["reason"], "time");
}

#[tokio::test(start_paused = true)]
async fn absence_is_no_claim_and_agreed_pauses_are_for_live_games() {
    let server = server().await;
    let (black, mut white, id) = game(&server, fischer_days()).await;
    black.close().await;
    sleep(days(2)).await;
    let claim = json!({"type": "claim_win", "game_id": id});
    let refused = white.refused(claim, "forbidden").await;
    assert!(
        refused["message"]
            .as_str()
            .unwrap_or("")
            .contains("clock in days")
    );
    white
        .refused(json!({"type": "pause", "game_id": id}), "forbidden")
        .await;
    let (_, snapshot) = rejoin(&server, "white", &id).await;
    assert_eq!(snapshot["phase"], "play", "nothing changed: {snapshot}");
}

#[tokio::test(start_paused = true)]
async fn correspondence_settings_take_days_and_refuse_what_they_cannot_have() {
    let server = server().await;
    let mut c = server.login("black").await;
    let seek = |settings: Value| json!({"type": "seek", "settings": settings});
    // Thirty days a move is far above a live game's hour, within correspondence's limit.
    let month = json!({"system": "simple", "per_move_ms": 30 * DAY});
    c.ok(seek(json!({"correspondence": true, "clock": month})))
        .await;
    c.refused(seek(json!({"clock": month})), "bad_request")
        .await;
    let too_long = json!({"system": "simple", "per_move_ms": 31 * DAY});
    let refused = c
        .refused(
            seek(json!({"correspondence": true, "clock": too_long})),
            "bad_request",
        )
        .await;
    assert!(
        refused["message"]
            .as_str()
            .unwrap_or("")
            .contains("per_move_ms"),
        "{refused}"
    );
    let untimed = json!({"correspondence": true, "clock": {"system": "none"}});
    c.refused(seek(untimed), "bad_request").await;
    let scheduled = json!({"correspondence": true, "clock": month, "start_at": 1});
    c.refused(seek(scheduled), "bad_request").await;
}

#[tokio::test(start_paused = true)]
async fn a_restart_gives_no_time_back() {
    let server = server().await;
    let (mut black, white, id) = game(&server, fischer_days()).await;
    sleep(days(1)).await;
    play(&mut black, &id, 1, "E5").await;
    black.close().await;
    white.close().await;
    let dir = server.stop().await;
    // Two days pass while the server is down: White's clock ran through them.
    sleep(days(2)).await;
    let server = TestServer::start_in(dir, quiet).await;
    let (mut white, snapshot) = rejoin(&server, "white", &id).await;
    assert_eq!(snapshot["clock"]["running"], "white", "{snapshot}");
    assert_eq!(main_ms(&snapshot, "white"), DAY);
    sleep(days(1)).await;
    let ended = white.recv_type("game_ended").await;
    assert_eq!(ended["result"], "B+T");
}

/// The game's stored row, read from the store as the archive does (it wakes nothing).
async fn record(server: &TestServer, id: &str) -> tengen::store::GameRecord {
    let store = server
        .server
        .as_ref()
        .expect("running")
        .hub()
        .store()
        .clone();
    let id = id.to_string();
    tokio::task::spawn_blocking(move || store.game(&id))
        .await
        .expect("the store call")
        .expect("the store")
        .expect("the game")
}

fn awake(server: &TestServer, id: &str) -> bool {
    server.server.as_ref().expect("running").hub().is_awake(id)
}

#[tokio::test(start_paused = true)]
async fn a_game_nobody_watches_sleeps_and_its_flag_falls_on_time() {
    let server = server().await;
    let clock = json!({"system": "simple", "per_move_ms": 2 * DAY});
    let (mut black, white, id) = game(&server, clock).await;
    assert!(awake(&server, &id));
    // Black moves at once (the waits on the network take no time on the paused clock).
    play(&mut black, &id, 1, "E5").await;
    let created = record(&server, &id).await.created_at_ms;
    black.close().await;
    white.close().await;
    sleep(Duration::from_secs(31)).await;
    assert!(!awake(&server, &id), "no room for a game nobody watches");
    // Asleep, one millisecond before White's two days are up: nothing has happened.
    sleep(days(2) - Duration::from_secs(31) - Duration::from_millis(1)).await;
    assert!(!awake(&server, &id));
    assert_eq!(record(&server, &id).await.result, None);
    // At the instant, the waker rebuilds the game and the flag falls.
    sleep(Duration::from_millis(1)).await;
    let mut watcher = server.login("carol").await;
    watcher.ok(json!({"type": "join", "game_id": id})).await;
    let snapshot = watcher.recv_type("snapshot").await;
    assert_eq!(snapshot["phase"], "ended", "{snapshot}");
    let ended = record(&server, &id).await;
    assert_eq!(ended.result.as_deref(), Some("B+T"));
    assert_eq!(ended.ended_at_ms, Some(created + 2 * DAY as i64));
}

#[tokio::test(start_paused = true)]
async fn a_sleeping_game_wakes_for_a_move_and_after_a_restart_only_when_asked() {
    let server = server().await;
    let (black, white, id) = game(&server, fischer_days()).await;
    black.close().await;
    white.close().await;
    sleep(Duration::from_secs(31)).await;
    assert!(!awake(&server, &id));
    // Black comes back after a day: the game is rebuilt with the day charged.
    sleep(days(1)).await;
    let (mut black, snapshot) = rejoin(&server, "black", &id).await;
    assert!(awake(&server, &id));
    let left = main_ms(&snapshot, "black");
    assert_eq!(left, 2 * DAY - 31_000, "{snapshot}");
    play(&mut black, &id, 1, "E5").await;
    black.close().await;
    let dir = server.stop().await;
    let server = TestServer::start_in(dir, quiet).await;
    assert!(
        !awake(&server, &id),
        "a restart leaves a correspondence game asleep"
    );
    let (mut white, snapshot) = rejoin(&server, "white", &id).await;
    assert_eq!(
        snapshot["moves"].as_array().map(Vec::len),
        Some(1),
        "{snapshot}"
    );
    assert_eq!(main_ms(&snapshot, "white"), 3 * DAY);
    play(&mut white, &id, 2, "C3").await;
}
