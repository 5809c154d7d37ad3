//! Correspondence games through a real server on tokio's paused clock: clocks that
//! count days whoever is connected, across restarts.

mod common;

use std::time::Duration;

use common::{Client, TestServer, play, start_game};
use serde_json::{Value, json};
use tengen::lifecycle::GameNews;
use tokio::time::sleep;

const DAY: u64 = 86_400_000;

fn days(n: u64) -> Duration {
    Duration::from_millis(n * DAY)
}

/// A server whose heartbeat and idle timeout never interfere with sleeps of days, and
/// whose players have no vacation days to spend at a deadline (tests/vacation.rs's).
async fn server() -> TestServer {
    TestServer::start_with(quiet).await
}

fn quiet(c: &mut tengen::config::Config) {
    c.limits.heartbeat_secs = 100_000_000;
    c.limits.idle_timeout_secs = 1_000_000_000;
    c.correspondence.vacation_start_days = 0;
    c.correspondence.vacation_days_per_30 = 0;
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
    let created = server.stored_game(&id).await.created_at_ms;
    black.close().await;
    white.close().await;
    sleep(Duration::from_secs(31)).await;
    assert!(!awake(&server, &id), "no room for a game nobody watches");
    // Asleep, one millisecond before White's two days are up: nothing has happened.
    sleep(days(2) - Duration::from_secs(31) - Duration::from_millis(1)).await;
    assert!(!awake(&server, &id));
    assert_eq!(server.stored_game(&id).await.result, None);
    // At the instant, the waker rebuilds the game and the flag falls.
    sleep(Duration::from_millis(1)).await;
    let mut watcher = server.login("carol").await;
    watcher.ok(json!({"type": "join", "game_id": id})).await;
    let snapshot = watcher.recv_type("snapshot").await;
    assert_eq!(snapshot["phase"], "ended", "{snapshot}");
    let ended = server.stored_game(&id).await;
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

/// A plan message for `id`: the replies to the opponent's move `move_number`.
fn plan(id: &str, move_number: u32, replies: Value) -> Value {
    json!({"type": "plan", "game_id": id, "move_number": move_number, "replies": replies})
}

/// Black's plan after E5: C3 → G7, then G3 → C7, then D4 → F6; or D6 → F4.
fn three_levels() -> Value {
    json!([
        {"if": "C3", "play": "G7", "then": [
            {"if": "G3", "play": "C7", "then": [{"if": "D4", "play": "F6"}]}
        ]},
        {"if": "D6", "play": "F4"}
    ])
}

/// Checks that no move followed move `n` (by the time `c`'s ping is answered).
async fn no_reply_after(c: &mut Client, n: u32) {
    c.ok(json!({"type": "ping"})).await;
    let later =
        |m: &&Value| m["type"] == "move_played" && m["move_number"].as_u64() > Some(n.into());
    assert!(
        c.pending().iter().find(later).is_none(),
        "{:?}",
        c.pending()
    );
}

/// The next `move_played` `c` receives.
async fn next_move(c: &mut Client) -> Value {
    c.recv_type("move_played").await
}

#[tokio::test(start_paused = true)]
async fn a_plan_of_three_levels_plays_out_exactly_and_nobody_else_sees_it() {
    let server = server().await;
    let clock = json!({"system": "simple", "per_move_ms": 3 * DAY});
    let (mut black, mut white, id) = game(&server, clock).await;
    let mut carol = server.login("carol").await;
    carol.ok(json!({"type": "join", "game_id": id})).await;
    carol.recv_type("snapshot").await;
    play(&mut black, &id, 1, "E5").await;
    let ack = black.ok(plan(&id, 2, three_levels())).await;
    assert!(
        ack.get("seq").is_none_or(Value::is_null),
        "a plan is no event: {ack}"
    );
    // Neither White nor a spectator hears of it, nor does the record show it.
    for c in [&mut white, &mut carol] {
        c.ok(json!({"type": "ping"})).await;
        assert!(
            c.pending().iter().all(|m| !m.to_string().contains("G7")),
            "{:?}",
            c.pending()
        );
        c.clear();
    }
    let (_, record) = common::get(&server, &format!("/api/games/{id}")).await;
    assert!(
        !record.contains("G7") && !record.contains("plan"),
        "{record}"
    );
    let (_, rejoined) = rejoin(&server, "white", &id).await;
    assert!(!rejoined.to_string().contains("G7"), "{rejoined}");
    // White plays into the plan three times: each reply comes at once, marked.
    for (n, theirs, ours) in [(2, "C3", "G7"), (4, "G3", "C7"), (6, "D4", "F6")] {
        play(&mut white, &id, n, theirs).await;
        let reply = next_move(&mut white).await;
        assert_eq!(reply["move_number"], n + 1, "{reply}");
        assert_eq!(reply["vertex"], ours);
        assert_eq!(reply["color"], "black");
        assert_eq!(reply["planned"], true);
        let seen = loop {
            let m = next_move(&mut carol).await;
            if m["move_number"] == n + 1 {
                break m;
            }
        };
        assert_eq!(seen["vertex"], ours);
    }
    // The plan is spent: White's next move waits for Black.
    play(&mut white, &id, 8, "A1").await;
    no_reply_after(&mut white, 8).await;
    let (_, sgf) = common::get(&server, &format!("/api/games/{id}/sgf")).await;
    assert_eq!(
        sgf.matches("played from a plan of conditional moves")
            .count(),
        3,
        "{sgf}"
    );
    // A move outside a plan drops it.
    play(&mut black, &id, 9, "J9").await;
    black
        .ok(plan(&id, 10, json!([{"if": "B2", "play": "H8"}])))
        .await;
    play(&mut white, &id, 10, "B8").await;
    play(&mut black, &id, 11, "H2").await;
    play(&mut white, &id, 12, "B2").await;
    no_reply_after(&mut white, 12).await;
}

#[tokio::test(start_paused = true)]
async fn a_plan_on_your_own_turn_follows_your_move() {
    let server = server().await;
    let clock = json!({"system": "simple", "per_move_ms": 3 * DAY});
    let (mut black, mut white, id) = game(&server, clock).await;
    let mut news = server
        .server
        .as_ref()
        .expect("running")
        .hub()
        .lifecycle
        .subscribe();
    let mut own = plan(&id, 2, json!([{"if": "C3", "play": "G7"}]));
    own["after"] = json!("E5");
    let ack = black.ok(own).await;
    assert_eq!(ack["seq"], 4, "the move is played with the plan: {ack}");
    assert_eq!(next_move(&mut white).await["vertex"], "E5");
    play(&mut white, &id, 2, "C3").await;
    let reply = next_move(&mut white).await;
    assert_eq!(
        (reply["vertex"].clone(), reply["planned"].clone()),
        (json!("G7"), json!(true))
    );
    // The lifecycle bus says whose move it is after each move, with the deadline.
    let mut waits = Vec::new();
    while let Ok(n) = news.try_recv() {
        if let GameNews::YourMove {
            game_id,
            player,
            deadline_ms,
        } = n
        {
            assert_eq!(game_id, id);
            waits.push((player.id, deadline_ms));
        }
    }
    let at = reply["at"].as_i64().expect("at");
    assert_eq!(waits.len(), 3, "{waits:?}");
    assert_eq!(waits[0].0, "white");
    assert_eq!(waits[1].0, "black");
    assert_eq!(waits[2], ("white".to_string(), Some(at + 3 * DAY as i64)));
}

#[tokio::test(start_paused = true)]
async fn bad_plans_are_refused_and_change_nothing() {
    let server = server().await;
    let clock = json!({"system": "simple", "per_move_ms": 3 * DAY});
    let (mut black, mut white, id) = game(&server, clock).await;
    play(&mut black, &id, 1, "E5").await;
    // An occupied point two levels down.
    let illegal = json!([{"if": "C3", "play": "G7", "then": [{"if": "G7", "play": "C7"}]}]);
    let refused = black.refused(plan(&id, 2, illegal), "illegal_move").await;
    assert_eq!(refused["reason"], "occupied", "{refused}");
    assert!(
        refused["message"].as_str().unwrap_or("").contains("move 4"),
        "{refused}"
    );
    // Deeper than the limit (30 levels), and larger than 16 KiB.
    let mut deep = json!([]);
    for _ in 0..31 {
        deep = json!([{"if": "A1", "play": "J9", "then": deep}]);
    }
    black.refused(plan(&id, 2, deep), "too_large").await;
    let wide: Vec<Value> = (0..700)
        .map(|_| json!({"if": "A1", "play": "J9"}))
        .collect();
    black.refused(plan(&id, 2, json!(wide)), "too_large").await;
    // Not a player of this game; not the move the plan must answer; not your turn's form.
    let mut carol = server.login("carol").await;
    carol
        .refused(
            plan(&id, 2, json!([{"if": "C3", "play": "G7"}])),
            "forbidden",
        )
        .await;
    black
        .refused(
            plan(&id, 4, json!([{"if": "C3", "play": "G7"}])),
            "stale_move",
        )
        .await;
    white
        .refused(
            plan(&id, 3, json!([{"if": "G7", "play": "C3"}])),
            "bad_request",
        )
        .await;
    // A live game has no plans.
    let live = json!({"board_size": 9, "color": "black"});
    let mut ann = server.login("ann").await;
    let mut bob = server.login("bob").await;
    let live_id = start_game(&mut ann, &mut bob, live).await;
    play(&mut ann, &live_id, 1, "E5").await;
    ann.refused(
        plan(&live_id, 2, json!([{"if": "C3", "play": "G7"}])),
        "bad_request",
    )
    .await;
    // Nothing was stored: White's C3 gets no reply.
    play(&mut white, &id, 2, "C3").await;
    no_reply_after(&mut white, 2).await;
}

#[tokio::test(start_paused = true)]
async fn a_plan_survives_a_restart() {
    let server = server().await;
    let clock = json!({"system": "simple", "per_move_ms": 3 * DAY});
    let (mut black, white, id) = game(&server, clock).await;
    play(&mut black, &id, 1, "E5").await;
    black.ok(plan(&id, 2, three_levels())).await;
    black.close().await;
    white.close().await;
    let dir = server.stop().await;
    let server = TestServer::start_in(dir, quiet).await;
    let (mut white, _) = rejoin(&server, "white", &id).await;
    play(&mut white, &id, 2, "D6").await;
    let reply = next_move(&mut white).await;
    assert_eq!(
        (reply["vertex"].clone(), reply["planned"].clone()),
        (json!("F4"), json!(true))
    );
}

/// The `deadline` notices `who` has been given so far.
async fn deadline_notices(c: &mut Client) -> Vec<Value> {
    let listed = c.ok(json!({"type": "list_notices"})).await;
    let notices = listed["notices"].as_array().cloned().unwrap_or_default();
    notices
        .into_iter()
        .filter(|n| n["kind"] == "deadline")
        .collect()
}

#[tokio::test(start_paused = true)]
async fn the_player_to_move_is_warned_a_day_before_the_deadline_once() {
    let server = server().await;
    let (mut black, white, id) = game(&server, fischer_days()).await;
    play(&mut black, &id, 1, "E5").await;
    black.close().await;
    white.close().await;
    // White has 3 days; asleep, the game is woken a day before their end to warn them.
    sleep(days(2) - Duration::from_millis(1)).await;
    let mut white = server.login("white").await;
    assert_eq!(deadline_notices(&mut white).await, Vec::<Value>::new());
    sleep(Duration::from_millis(1)).await;
    let pushed = white.recv_type("notice").await;
    assert_eq!(pushed["notice"]["kind"], "deadline", "{pushed}");
    assert_eq!(pushed["notice"]["payload"]["game_id"], id.as_str());
    assert_eq!(pushed["notice"]["payload"]["opponent"]["id"], "black");
    let deadline = pushed["notice"]["payload"]["deadline"]
        .as_i64()
        .expect("a deadline");
    // The game slept and woke again for its flag: the warning was given once.
    sleep(days(1) - Duration::from_millis(1)).await;
    assert_eq!(deadline_notices(&mut white).await.len(), 1);
    sleep(Duration::from_millis(1)).await;
    let (_, snapshot) = rejoin(&server, "carol", &id).await;
    assert_eq!(snapshot["phase"], "ended", "{snapshot}");
    let ended_at = server.stored_game(&id).await.ended_at_ms.expect("ended");
    assert_eq!(ended_at, deadline, "the notice named the flag's instant");
    assert_eq!(deadline_notices(&mut white).await.len(), 1);
}

/// `who`'s `list_correspondence`: their games.
async fn desk(c: &mut Client) -> Vec<Value> {
    let reply = c.ok(json!({"type": "list_correspondence"})).await;
    assert_eq!(reply["type"], "correspondence_games", "{reply}");
    reply["games"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn each_player_lists_their_games_with_the_move_the_deadline_and_their_own_plan() {
    let server = server().await;
    let clock = json!({"system": "simple", "per_move_ms": 3 * DAY});
    let (mut black, white, id) = game(&server, clock).await;
    let mut dave = server.login("dave").await;
    assert_eq!(desk(&mut dave).await, Vec::<Value>::new());
    // A live game of theirs is no correspondence game.
    let mut live = server.login("black").await;
    let mut other = server.login("carol").await;
    let live_settings =
        json!({"board_size": 9, "clock": {"system": "absolute", "main_ms": 600_000}});
    start_game(&mut live, &mut other, live_settings).await;
    play(&mut black, &id, 1, "E5").await;
    let turn_began = server.stored_game(&id).await.created_at_ms;
    black.ok(plan(&id, 2, three_levels())).await;
    black.close().await;
    white.close().await;
    sleep(Duration::from_secs(31)).await;
    assert!(!awake(&server, &id));
    // Asleep a day later, the game is listed with White's deadline three days after E5.
    sleep(days(1)).await;
    let mut black = server.login("black").await;
    let mut white = server.login("white").await;
    let deadline = turn_began + 3 * DAY as i64;
    for (c, you, planned) in [(&mut black, "black", true), (&mut white, "white", false)] {
        let games = desk(c).await;
        assert_eq!(games.len(), 1, "{games:?}");
        let g = &games[0];
        assert_eq!(g["game_id"], id.as_str());
        assert_eq!(
            (&g["you"], &g["to_move"], &g["deadline"], &g["planned"]),
            (
                &json!(you),
                &json!("white"),
                &json!(deadline),
                &json!(planned)
            ),
            "{g}"
        );
        assert_eq!(
            (&g["phase"], &g["move_number"]),
            (&json!("play"), &json!(1))
        );
    }
    // The plan comes back in its player's snapshot alone, as far as it has been followed.
    let (_, mine) = rejoin(&server, "black", &id).await;
    assert_eq!(
        mine["plan"],
        json!({"move_number": 2, "replies": three_levels()})
    );
    let (mut white, theirs) = rejoin(&server, "white", &id).await;
    assert!(theirs.get("plan").is_none(), "{theirs}");
    play(&mut white, &id, 2, "C3").await;
    assert_eq!(next_move(&mut white).await["vertex"], "G7");
    let (_, mine) = rejoin(&server, "black", &id).await;
    assert_eq!(mine["plan"]["move_number"], 4, "{mine}");
    assert_eq!(mine["plan"]["replies"][0]["play"], "C7", "{mine}");
    let games = desk(&mut white).await;
    assert_eq!(games[0]["to_move"], "white");
    let replied = turn_began + 31_000 + DAY as i64;
    assert_eq!(games[0]["deadline"], json!(replied + 3 * DAY as i64));
}

#[tokio::test(start_paused = true)]
async fn listing_wakes_no_game_and_says_what_each_room_says_awake() {
    let server = server().await;
    let mut black = server.login("black").await;
    let mut white = server.login("white").await;
    let settings = |clock: Value| json!({"board_size": 9, "color": "black", "correspondence": true, "clock": clock});
    // White to move, with Black's plan; Black to move, untouched; White to move with
    // weekends; both passed, marking dead stones.
    let moved = start_game(&mut black, &mut white, settings(fischer_days())).await;
    play(&mut black, &moved, 1, "E5").await;
    black.ok(plan(&moved, 2, three_levels())).await;
    let simple = json!({"system": "simple", "per_move_ms": 3 * DAY});
    let fresh = start_game(&mut black, &mut white, settings(simple)).await;
    let mut with_weekends = settings(fischer_days());
    with_weekends["weekends"] = json!(true);
    let weekends = start_game(&mut black, &mut white, with_weekends).await;
    play(&mut black, &weekends, 1, "E5").await;
    let scoring = start_game(&mut black, &mut white, settings(fischer_days())).await;
    play(&mut black, &scoring, 1, "pass").await;
    play(&mut white, &scoring, 2, "pass").await;
    black.close().await;
    white.close().await;
    // Carol keeps one game awake by watching it; the others fall asleep.
    let mut carol = server.login("carol").await;
    carol.ok(json!({"type": "join", "game_id": moved})).await;
    carol.recv_type("snapshot").await;
    sleep(Duration::from_secs(31)).await;
    let asleep = [&fresh, &weekends, &scoring];
    assert!(awake(&server, &moved));
    assert!(asleep.iter().all(|id| !awake(&server, id)));

    let mut black = server.login("black").await;
    let mut white = server.login("white").await;
    let listed = [desk(&mut black).await, desk(&mut white).await];
    assert!(
        asleep.iter().all(|id| !awake(&server, id)),
        "listing woke a game"
    );
    let mut ids: Vec<&str> = listed[0]
        .iter()
        .filter_map(|g| g["game_id"].as_str())
        .collect();
    ids.sort_unstable();
    let mut all = [&*moved, &*fresh, &*weekends, &*scoring];
    all.sort_unstable();
    assert_eq!(ids, all);
    let of = |id: &str| {
        listed[0]
            .iter()
            .find(|g| g["game_id"] == id)
            .cloned()
            .expect("listed")
    };
    assert_eq!(
        (of(&moved)["to_move"].clone(), of(&moved)["planned"].clone()),
        (json!("white"), json!(true))
    );
    assert_eq!(of(&moved)["spectators"], 1, "carol, in the room awake");
    assert_eq!(of(&fresh)["to_move"], "black");
    assert!(of(&fresh)["deadline"].is_i64() && of(&weekends)["deadline"].is_i64());
    assert_eq!(of(&scoring)["phase"], "scoring");
    assert_eq!(of(&scoring).get("to_move"), None);

    // Woken by their players joining, the rooms sum the games up exactly as listed.
    for id in asleep {
        for c in [&mut black, &mut white] {
            c.ok(json!({"type": "join", "game_id": id})).await;
            c.recv_type("snapshot").await;
        }
        assert!(awake(&server, id));
    }
    assert_eq!([desk(&mut black).await, desk(&mut white).await], listed);
}

#[tokio::test]
async fn a_guest_has_no_correspondence_games_to_list() {
    let server = TestServer::start().await;
    let mut guest = Client::connect(&server.url).await;
    guest
        .refused(json!({"type": "list_correspondence"}), "unauthorized")
        .await;
}
