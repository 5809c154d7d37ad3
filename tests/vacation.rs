//! Vacation in correspondence games through a real server on tokio's paused clock: days
//! accrued, a day spent at a deadline instead of the flag, a vacation on request that
//! stands a player's clocks and ends by itself, games that forbid it, and restarts.

mod common;

use std::time::Duration;

use common::{Client, TestServer, play, start_game};
use serde_json::{Value, json};
use tokio::time::sleep;

const HOUR: u64 = 3_600_000;
const DAY: u64 = 24 * HOUR;

fn days(n: u64) -> Duration {
    Duration::from_millis(n * DAY)
}

/// A server whose heartbeat and idle timeout never interfere with sleeps of days, with
/// `start` vacation days, none gained unless `per_30` says so, a cap of 3.
fn quiet(start: u32, per_30: u32) -> impl FnOnce(&mut tengen::config::Config) {
    move |c| {
        c.limits.heartbeat_secs = 100_000_000;
        c.limits.idle_timeout_secs = 1_000_000_000;
        c.correspondence.vacation_start_days = start;
        c.correspondence.vacation_days_per_30 = per_30;
        c.correspondence.vacation_cap_days = 3;
        c.correspondence.vacation_warn_hours = 24;
    }
}

/// Fischer in days: 3 days, a day a move, at most 4 days.
fn fischer_days() -> Value {
    json!({"system": "fischer", "main_ms": 3 * DAY, "increment_ms": DAY, "max_ms": 4 * DAY})
}

/// A correspondence game, Black's first move E5 played, White to move.
async fn game(server: &TestServer, extra: Value) -> (Client, Client, String) {
    game_of(server, "black", "white", extra).await
}

/// A correspondence game of `black` and `white` with `extra` settings, Black's first
/// move E5 played, White to move: both players' clients and the game's id.
async fn game_of(
    server: &TestServer,
    black: &str,
    white: &str,
    extra: Value,
) -> (Client, Client, String) {
    let mut black = server.login(black).await;
    let mut white = server.login(white).await;
    let mut settings =
        json!({"board_size": 9, "color": "black", "correspondence": true, "clock": fischer_days()});
    if let (Some(s), Some(extra)) = (settings.as_object_mut(), extra.as_object()) {
        s.extend(extra.clone());
    }
    let id = start_game(&mut black, &mut white, settings).await;
    play(&mut black, &id, 1, "E5").await;
    (black, white, id)
}

/// `who` joins game `id` on a new connection: its snapshot.
async fn snapshot(server: &TestServer, who: &str, id: &str) -> Value {
    let mut c = server.login(who).await;
    c.ok(json!({"type": "join", "game_id": id})).await;
    c.recv_type("snapshot").await
}

fn white_ms(snapshot: &Value) -> u64 {
    snapshot["clock"]["white"]["main_ms"]
        .as_u64()
        .expect("main_ms")
}

async fn vacation(c: &mut Client, kind: &str) -> Value {
    let reply = c.ok(json!({"type": kind})).await;
    assert_eq!(reply["type"], "vacation_status", "{reply}");
    reply["vacation"].clone()
}

#[tokio::test(start_paused = true)]
async fn days_accrue_up_to_the_cap() {
    // A day every day (30 in 30), from none, at most 3.
    let server = TestServer::start_with(quiet(0, 30)).await;
    let mut c = server.login("alice").await;
    assert_eq!(vacation(&mut c, "get_vacation").await["balance_ms"], 0);
    c.refused(json!({"type": "start_vacation"}), "no_vacation_left")
        .await;
    sleep(days(2)).await;
    assert_eq!(
        vacation(&mut c, "get_vacation").await["balance_ms"],
        2 * DAY
    );
    sleep(days(5)).await;
    assert_eq!(
        vacation(&mut c, "get_vacation").await["balance_ms"],
        3 * DAY
    );
}

#[tokio::test(start_paused = true)]
async fn a_deadline_spends_vacation_days_while_the_game_sleeps() {
    let server = TestServer::start_with(quiet(2, 0)).await;
    let (black, white, id) = game(&server, json!({})).await;
    black.close().await;
    white.close().await;
    // White's 3 days are up, asleep: a vacation day holds the clock instead of the flag,
    // then another; the flag falls when the days are spent, 5 days in.
    sleep(days(5) - Duration::from_millis(1)).await;
    let seen = snapshot(&server, "carol", &id).await;
    assert_eq!(seen["phase"], "play", "{seen}");
    assert_eq!(white_ms(&seen), 1);
    let mut white = server.login("white").await;
    assert_eq!(vacation(&mut white, "get_vacation").await["balance_ms"], 0);
    sleep(Duration::from_millis(1)).await;
    let seen = snapshot(&server, "carol", &id).await;
    assert_eq!(seen["phase"], "ended", "{seen}");
    assert_eq!(seen["result"], "B+T");
}

#[tokio::test(start_paused = true)]
async fn a_vacation_stands_the_clocks_warns_and_ends_by_itself() {
    let server = TestServer::start_with(quiet(2, 0)).await;
    let (black, mut white, id) = game(&server, json!({})).await;
    black.close().await;
    sleep(days(1)).await;
    let away = vacation(&mut white, "start_vacation").await;
    assert_eq!(away["paused"], json!([id]), "{away}");
    assert_eq!(
        away["ends_at"].as_i64(),
        away["away_since"].as_i64().map(|t| t + 2 * DAY as i64)
    );
    // Going again changes nothing.
    let again = vacation(&mut white, "start_vacation").await;
    assert_eq!(again["away_since"], away["away_since"]);
    // A day later: the clock stood still, and White is warned a day before the end.
    sleep(days(1)).await;
    let seen = snapshot(&server, "carol", &id).await;
    assert_eq!(white_ms(&seen), 2 * DAY, "{seen}");
    assert_eq!(seen["clock"]["running"], Value::Null, "{seen}");
    let notice = white.recv_type("notice").await;
    assert_eq!(notice["notice"]["kind"], "vacation_ending");
    assert_eq!(notice["notice"]["payload"]["deadline"], away["ends_at"]);
    // The days are spent: White is back, and their clock runs its 2 days from then.
    sleep(days(1)).await;
    let back = vacation(&mut white, "get_vacation").await;
    assert_eq!(back["balance_ms"], 0, "{back}");
    assert_eq!(back.get("away_since"), None, "{back}");
    white
        .refused(json!({"type": "start_vacation"}), "no_vacation_left")
        .await;
    sleep(days(2)).await;
    let seen = snapshot(&server, "carol", &id).await;
    assert_eq!(seen["phase"], "ended", "{seen}");
}

#[tokio::test(start_paused = true)]
async fn coming_back_costs_the_hours_begun_and_runs_the_clock_again() {
    let server = TestServer::start_with(quiet(2, 0)).await;
    let (black, mut white, id) = game(&server, json!({})).await;
    black.close().await;
    vacation(&mut white, "start_vacation").await;
    sleep(Duration::from_millis(5 * HOUR + 1)).await;
    let back = vacation(&mut white, "end_vacation").await;
    assert_eq!(back["balance_ms"], 2 * DAY - 6 * HOUR, "{back}");
    sleep(Duration::from_millis(HOUR)).await;
    let seen = snapshot(&server, "carol", &id).await;
    assert_eq!(seen["clock"]["running"], "white", "{seen}");
    assert_eq!(white_ms(&seen), 3 * DAY - HOUR, "{seen}");
}

#[tokio::test(start_paused = true)]
async fn a_game_that_forbids_vacation_runs_on_and_flags() {
    let server = TestServer::start_with(quiet(2, 0)).await;
    let (black, mut white, id) = game(&server, json!({"vacation": false})).await;
    black.close().await;
    let away = vacation(&mut white, "start_vacation").await;
    assert_eq!(away["running"], json!([id]), "{away}");
    assert_eq!(away.get("paused"), None, "{away}");
    vacation(&mut white, "end_vacation").await;
    white.close().await;
    // No day spent at its deadline either.
    sleep(days(3)).await;
    let seen = snapshot(&server, "carol", &id).await;
    assert_eq!(seen["phase"], "ended", "{seen}");
    let mut white = server.login("white").await;
    assert_eq!(
        vacation(&mut white, "get_vacation").await["balance_ms"],
        2 * DAY
    );
}

#[tokio::test(start_paused = true)]
async fn a_vacation_survives_a_restart() {
    let server = TestServer::start_with(quiet(2, 0)).await;
    let (black, mut white, id) = game(&server, json!({})).await;
    let away = vacation(&mut white, "start_vacation").await;
    black.close().await;
    white.close().await;
    let dir = server.stop().await;
    sleep(days(1)).await;
    let server = TestServer::start_in(dir, quiet(2, 0)).await;
    let mut white = server.login("white").await;
    let still = vacation(&mut white, "get_vacation").await;
    assert_eq!(still["away_since"], away["away_since"], "{still}");
    let seen = snapshot(&server, "carol", &id).await;
    assert_eq!(seen["clock"]["running"], Value::Null, "{seen}");
    assert_eq!(white_ms(&seen), 3 * DAY, "{seen}");
    // The service kept its schedule: the vacation ends by itself at 2 days.
    sleep(days(1)).await;
    let back = vacation(&mut white, "get_vacation").await;
    assert_eq!(back.get("away_since"), None, "{back}");
    let seen = snapshot(&server, "carol", &id).await;
    assert_eq!(seen["clock"]["running"], "white", "{seen}");
}

/// A correspondence game `opponent` (Black) begins against `player` with E5, so
/// `player`'s 3 days run from now: its id and that instant (calendar Unix ms).
async fn game_against(
    server: &TestServer,
    opponent: &str,
    player: &str,
    extra: Value,
) -> (String, i64) {
    let (black, white, id) = game_of(server, opponent, player, extra).await;
    black.close().await;
    white.close().await;
    let began = server.stored_game(&id).await.created_at_ms;
    (id, began)
}

/// The `vacation_spent` events game `id` has stored, in order, without the fields every
/// event has.
async fn days_held(server: &TestServer, id: &str) -> Vec<Value> {
    let (store, id) = (server.store(), id.to_string());
    let events = tokio::task::spawn_blocking(move || store.events(&id))
        .await
        .expect("the store call")
        .expect("the store");
    events
        .iter()
        .filter(|e| e.kind == "vacation_spent")
        .map(|e| {
            let mut held: Value = serde_json::from_str(&e.payload).expect("a JSON payload");
            for common in ["game_id", "seq", "type"] {
                held.as_object_mut().map(|o| o.remove(common));
            }
            held
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn one_day_covers_every_game_due_within_it() {
    let server = TestServer::start_with(quiet(2, 0)).await;
    // White's deadlines: game a at 3 days, d (no vacation) an hour later, b two hours
    // later, c five.
    let (a, t0) = game_against(&server, "ann", "white", json!({})).await;
    sleep(Duration::from_millis(HOUR)).await;
    let (d, _) = game_against(&server, "dan", "white", json!({"vacation": false})).await;
    sleep(Duration::from_millis(HOUR)).await;
    let (b, _) = game_against(&server, "bea", "white", json!({})).await;
    sleep(Duration::from_millis(3 * HOUR)).await;
    let (c, _) = game_against(&server, "cid", "white", json!({})).await;
    let day = DAY as i64;
    let paid_until = |days: i64| Some(json!(t0 + 3 * day + days * day));

    // Past a's deadline: one day is spent, and it runs until a day after that deadline.
    sleep(days(3) - Duration::from_millis(5 * HOUR) + Duration::from_millis(HOUR / 2)).await;
    let mut white = server.login("white").await;
    let status = vacation(&mut white, "get_vacation").await;
    assert_eq!(status["balance_ms"], DAY, "{status}");
    assert_eq!(status.get("paid_until").cloned(), paid_until(1), "{status}");
    white.close().await;
    // The day survives a restart: b and c, due after it, are covered by it.
    let dir = server.stop().await;
    let server = TestServer::start_in(dir, quiet(2, 0)).await;
    sleep(Duration::from_millis(5 * HOUR)).await;
    let mut white = server.login("white").await;
    let status = vacation(&mut white, "get_vacation").await;
    assert_eq!(status["balance_ms"], DAY, "{status}");
    assert_eq!(status.get("paid_until").cloned(), paid_until(1), "{status}");
    for id in [&a, &b, &c] {
        assert_eq!(snapshot(&server, "eve", id).await["phase"], "play", "{id}");
    }
    // The game that forbids vacation flagged at its deadline, day or no day.
    let seen = snapshot(&server, "eve", &d).await;
    assert_eq!(
        (&seen["phase"], &seen["result"]),
        (&json!("ended"), &json!("B+T"))
    );
    assert_eq!(days_held(&server, &d).await, Vec::<Value>::new());
    // a spent the day; b and c were held to its end, for nothing.
    assert_eq!(
        days_held(&server, &a).await,
        [json!({"color": "white", "ms": DAY})]
    );
    assert_eq!(
        days_held(&server, &b).await,
        [json!({"color": "white", "ms": DAY - 2 * HOUR, "covered": true})]
    );
    assert_eq!(
        days_held(&server, &c).await,
        [json!({"color": "white", "ms": DAY - 5 * HOUR, "covered": true})]
    );

    // The day ends with nothing played: all three are due at once, and one more day
    // is spent for them all.
    sleep(days(1) - Duration::from_millis(5 * HOUR)).await;
    let status = vacation(&mut white, "get_vacation").await;
    assert_eq!(status["balance_ms"], 0, "{status}");
    assert_eq!(status.get("paid_until").cloned(), paid_until(2), "{status}");
    let mut second = Vec::new();
    for id in [&a, &b, &c] {
        assert_eq!(snapshot(&server, "eve", id).await["phase"], "play", "{id}");
        let held = days_held(&server, id).await;
        assert_eq!(held.len(), 2, "{id}: {held:?}");
        assert_eq!(held[1]["ms"], DAY, "{id}: {held:?}");
        second.push(held[1].get("covered").is_none());
    }
    assert_eq!(
        second.iter().filter(|spent| **spent).count(),
        1,
        "{second:?}"
    );

    // That day ends too, and none is left: every flag falls.
    sleep(days(1)).await;
    for id in [&a, &b, &c] {
        let seen = snapshot(&server, "eve", id).await;
        assert_eq!(
            (&seen["phase"], &seen["result"]),
            (&json!("ended"), &json!("B+T"))
        );
    }
}
