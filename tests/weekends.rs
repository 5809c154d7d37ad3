//! Weekends in correspondence games through a real server on tokio's paused clock: a
//! player's calendar read and set, a deadline that spans their weekend falls after it
//! (and the same game without weekends flags on the plain deadline), a sleeping game
//! flags at the shifted deadline, and a time zone that is not IANA's refused.
//!
//! The server's calendar is the real date moved by the paused clock, so each test
//! names as the weekend the two local days after today, whatever day it runs on.

mod common;

use std::time::Duration;

use common::{Client, TestServer, WEEKDAYS, play, start_game};
use serde_json::{Value, json};
use tengen::correspondence::calendar;
use tokio::time::sleep;

const HOUR: u64 = 3_600_000;
const DAY: u64 = 24 * HOUR;
/// Asia/Kolkata: UTC+5:30 all year, so its midnights are not UTC's and no DST moves them.
const ZONE: &str = "Asia/Kolkata";
const OFFSET: u64 = 5 * HOUR + HOUR / 2;

fn quiet(c: &mut tengen::config::Config) {
    c.limits.heartbeat_secs = 100_000_000;
    c.limits.idle_timeout_secs = 1_000_000_000;
    c.correspondence.vacation_start_days = 0;
    c.correspondence.vacation_days_per_30 = 0;
}

/// The local days in ZONE `n` and `n + 1` days after the one `ms` falls on (1 January
/// 1970 was a Thursday).
fn days_after(ms: u64, n: u64) -> Value {
    let day = (ms + OFFSET) / DAY;
    json!([
        WEEKDAYS[((day + n + 3) % 7) as usize],
        WEEKDAYS[((day + n + 4) % 7) as usize]
    ])
}

async fn set_calendar(c: &mut Client, calendar: Value) -> Value {
    let reply = c
        .ok(json!({"type": "set_calendar", "calendar": calendar}))
        .await;
    assert_eq!(reply["type"], "calendar", "{reply}");
    reply["calendar"].clone()
}

/// A correspondence game of 3 days a move (absolute per move), White's weekend the two
/// local days after tomorrow when `weekends`: Black's first move played, White to
/// move. With the instant White's clock started.
async fn game(server: &TestServer, weekends: bool) -> (Client, Client, String, u64) {
    let mut black = server.login("black").await;
    let mut white = server.login("white").await;
    let weekend = days_after(calendar::now_ms(), 1);
    set_calendar(&mut white, json!({"time_zone": ZONE, "weekend": weekend})).await;
    let settings = json!({
        "board_size": 9, "color": "black", "correspondence": true, "weekends": weekends,
        "clock": {"system": "simple", "per_move_ms": 3 * DAY},
    });
    let id = start_game(&mut black, &mut white, settings).await;
    play(&mut black, &id, 1, "E5").await;
    (black, white, id, calendar::now_ms())
}

async fn until(ms: u64) {
    sleep(Duration::from_millis(ms.saturating_sub(calendar::now_ms()))).await;
}

#[tokio::test(start_paused = true)]
async fn a_calendar_is_kept_and_a_zone_not_iana_is_refused() {
    let server = TestServer::start_with(quiet).await;
    let mut c = server.login("alice").await;
    let first = c.ok(json!({"type": "get_calendar"})).await;
    assert_eq!(
        first["calendar"],
        json!({"time_zone": "UTC", "weekend": ["saturday", "sunday"]})
    );
    let set = set_calendar(
        &mut c,
        json!({"time_zone": "Asia/Dubai", "weekend": ["saturday", "friday"]}),
    )
    .await;
    assert_eq!(set["weekend"], json!(["friday", "saturday"]));
    for zone in ["Mars/Olympus_Mons", "", "Europe/berlin/x"] {
        let bad = json!({"time_zone": zone, "weekend": ["sunday"]});
        c.refused(
            json!({"type": "set_calendar", "calendar": bad}),
            "invalid_time_zone",
        )
        .await;
    }
    let three = json!({"time_zone": "UTC", "weekend": ["friday", "saturday", "sunday"]});
    c.refused(
        json!({"type": "set_calendar", "calendar": three}),
        "bad_request",
    )
    .await;
    // Nothing changed, and it is kept.
    let mut again = server.login("alice").await;
    let kept = again.ok(json!({"type": "get_calendar"})).await;
    assert_eq!(kept["calendar"], set);
}

#[tokio::test(start_paused = true)]
async fn weekends_only_in_correspondence_games() {
    let server = TestServer::start_with(quiet).await;
    let mut c = server.login("alice").await;
    let seek = json!({"type": "seek", "settings": {
        "board_size": 9, "weekends": true, "clock": {"system": "absolute", "main_ms": 600_000},
    }});
    c.refused(seek, "bad_request").await;
}

#[tokio::test(start_paused = true)]
async fn a_deadline_across_the_weekend_falls_after_it() {
    let server = TestServer::start_with(quiet).await;
    let (_black, _white, id, started) = game(&server, true).await;
    // Three days of White's own, of which the rest of today; then the two weekend
    // days; then the rest: five days in all, at the end of a working stretch.
    until(started + 3 * DAY + HOUR).await;
    assert_eq!(
        server.stored_game(&id).await.result,
        None,
        "the weekend stood the clock"
    );
    until(started + 5 * DAY - 1).await;
    assert_eq!(server.stored_game(&id).await.result, None);
    until(started + 5 * DAY).await;
    sleep(Duration::from_millis(1)).await;
    assert_eq!(server.stored_game(&id).await.result.as_deref(), Some("B+T"));
}

#[tokio::test(start_paused = true)]
async fn the_same_game_without_weekends_flags_on_the_plain_deadline() {
    let plain = TestServer::start_with(quiet).await;
    let (_black, _white, id, started) = game(&plain, false).await;
    until(started + 3 * DAY - 1).await;
    assert_eq!(plain.stored_game(&id).await.result, None);
    until(started + 3 * DAY).await;
    sleep(Duration::from_millis(1)).await;
    assert_eq!(plain.stored_game(&id).await.result.as_deref(), Some("B+T"));
}

#[tokio::test(start_paused = true)]
async fn a_sleeping_game_flags_at_the_weekend_shifted_deadline() {
    let server = TestServer::start_with(quiet).await;
    let (black, white, id, started) = game(&server, true).await;
    black.close().await;
    white.close().await;
    sleep(Duration::from_secs(31)).await;
    assert!(!server.server.as_ref().expect("running").hub().is_awake(&id));
    // The deadline index holds the shifted deadline: the waker wakes the game then.
    until(started + 5 * DAY - 1).await;
    assert_eq!(server.stored_game(&id).await.result, None);
    until(started + 5 * DAY).await;
    sleep(Duration::from_millis(1)).await;
    assert_eq!(server.stored_game(&id).await.result.as_deref(), Some("B+T"));
    // The game's settings show the setting.
    let mut carol = server.login("carol").await;
    carol.ok(json!({"type": "join", "game_id": id})).await;
    let snapshot = carol.recv_type("snapshot").await;
    assert_eq!(snapshot["settings"]["weekends"], true, "{snapshot}");
}

#[tokio::test(start_paused = true)]
async fn a_change_counts_from_the_next_turn_and_a_restart_keeps_the_weekend() {
    let server = TestServer::start_with(quiet).await;
    let (black, mut white, id, started) = game(&server, true).await;
    // White drops the weekend during their turn: this turn keeps it.
    let none = set_calendar(&mut white, json!({"time_zone": "UTC", "weekend": []})).await;
    assert_eq!(none["weekend"], json!([]));
    black.close().await;
    white.close().await;
    sleep(Duration::from_millis(DAY)).await;
    let dir = server.stop().await;
    // Rebuilt from its log after a restart, the game still stands White's clock on the
    // weekend their turn began with.
    let server = TestServer::start_in(dir, quiet).await;
    until(started + 3 * DAY + HOUR).await;
    assert_eq!(server.stored_game(&id).await.result, None);
    until(started + 5 * DAY - 1).await;
    assert_eq!(server.stored_game(&id).await.result, None);
    until(started + 5 * DAY).await;
    sleep(Duration::from_millis(1)).await;
    assert_eq!(server.stored_game(&id).await.result.as_deref(), Some("B+T"));
}
