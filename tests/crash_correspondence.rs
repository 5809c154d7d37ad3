//! Correspondence games under SIGKILL: the real binary as a child process is killed and
//! started again on the same SQLite store. A plan of several levels still plays, level
//! after level, across kills; a vacation is still in force with its balance and is
//! charged when it ends, also when it ran out while the server was down; and a deadline
//! that passed while the server was down flags its game as the server starts, while one
//! still to come flags at its time. No timing is asserted: each test waits for what
//! the server does, with generous deadlines.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::process::{Running, spawn, token};
use common::{Client, get_at, play, start_game};
use serde_json::{Value, json};

const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;
/// How long a test waits for the server to do by itself what it must.
const PATIENCE: Duration = Duration::from_secs(60);

/// `tengen serve` on `dir`; its players start with 10 vacation days and gain none
/// while the test runs, so every balance is exact.
fn serve(dir: &Path) -> Running {
    spawn(
        dir,
        &[(
            "TENGEN_CORRESPONDENCE__VACATION_DAYS_PER_30",
            "0".to_owned(),
        )],
    )
}

async fn login(server: &Running, dir: &Path, who: &str) -> Client {
    Client::connect(&format!("{}?token={}", server.url, token(dir, who))).await
}

/// A correspondence game on 9x9 between Alice (Black) and Bob, with `clock`.
async fn game(server: &Running, dir: &Path, clock: Value, vacation: bool) -> String {
    let mut alice = login(server, dir, "alice").await;
    let mut bob = login(server, dir, "bob").await;
    let settings = json!({"board_size": 9, "color": "black", "correspondence": true,
        "clock": clock, "vacation": vacation});
    start_game(&mut alice, &mut bob, settings).await
}

fn days() -> Value {
    json!({"system": "fischer", "main_ms": 3 * DAY, "increment_ms": DAY, "max_ms": 4 * DAY})
}

/// The game's record over HTTP, read from the store (which wakes no game).
async fn record(server: &Running, game: &str) -> Value {
    let (status, _, body) = get_at(server.addr(), &format!("/api/games/{game}")).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("a JSON record")
}

/// The game's record once `done` holds of it; fails after [`PATIENCE`].
async fn record_once(server: &Running, game: &str, done: impl Fn(&Value) -> bool) -> Value {
    let until = Instant::now() + PATIENCE;
    loop {
        let record = record(server, game).await;
        if done(&record) {
            return record;
        }
        assert!(Instant::now() < until, "still, after a minute: {record}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Which clock runs in the game, as a new spectator's snapshot shows it.
async fn running(server: &Running, dir: &Path, game: &str) -> Value {
    let mut carol = login(server, dir, "carol").await;
    carol.ok(json!({"type": "join", "game_id": game})).await;
    carol.recv_type("snapshot").await["clock"]["running"].clone()
}

async fn vacation(c: &mut Client, kind: &str) -> Value {
    let reply = c.ok(json!({"type": kind})).await;
    assert_eq!(reply["type"], "vacation_status", "{reply}");
    reply["vacation"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_of_several_levels_plays_on_across_sigkills() {
    let dir = tempfile::tempdir().expect("a data dir");
    let mut server = serve(dir.path());
    let id = game(&server, dir.path(), days(), true).await;
    let mut alice = login(&server, dir.path(), "alice").await;
    alice.ok(json!({"type": "join", "game_id": id})).await;
    play(&mut alice, &id, 1, "E5").await;
    let replies = json!([{"if": "C3", "play": "G7", "then": [
        {"if": "G3", "play": "C7", "then": [{"if": "C5", "play": "G5"}]}]}]);
    alice
        .ok(json!({"type": "plan", "game_id": id, "move_number": 2, "replies": replies}))
        .await;
    // Killed after each level is stored: each of Bob's moves after a restart is answered
    // by the level the last one left.
    for (n, (theirs, ours)) in [("C3", "G7"), ("G3", "C7"), ("C5", "G5")]
        .into_iter()
        .enumerate()
    {
        server.kill();
        server = serve(dir.path());
        let mut bob = login(&server, dir.path(), "bob").await;
        bob.ok(json!({"type": "join", "game_id": id})).await;
        let move_number = 2 * n as u32 + 2;
        play(&mut bob, &id, move_number, theirs).await;
        let planned = bob.recv_type("move_played").await;
        assert_eq!(
            (
                &planned["move_number"],
                &planned["vertex"],
                &planned["planned"]
            ),
            (&json!(move_number + 1), &json!(ours), &json!(true)),
            "level {n}: {planned}"
        );
    }
    // The tree is spent: Bob's next move is answered by nobody.
    server.kill();
    server = serve(dir.path());
    let mut bob = login(&server, dir.path(), "bob").await;
    bob.ok(json!({"type": "join", "game_id": id})).await;
    play(&mut bob, &id, 8, "J9").await;
    let clock = running(&server, dir.path(), &id).await;
    assert_eq!(clock, "black", "Alice is to move, by hand");
}

/// A correspondence game that allows vacation, Alice's first move played, and Bob (to
/// move) gone on vacation from it: the server, the game and `start_vacation`'s answer.
async fn bob_away_from_a_game(dir: &Path) -> (Running, String, Value) {
    let server = serve(dir);
    let id = game(&server, dir, days(), true).await;
    let mut alice = login(&server, dir, "alice").await;
    alice.ok(json!({"type": "join", "game_id": id})).await;
    play(&mut alice, &id, 1, "E5").await;
    let mut bob = login(&server, dir, "bob").await;
    let away = vacation(&mut bob, "start_vacation").await;
    assert_eq!(away["paused"], json!([id]), "{away}");
    (server, id, away)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vacation_stays_in_force_across_sigkill_and_is_charged_when_it_ends() {
    let dir = tempfile::tempdir().expect("a data dir");
    let (mut server, id, away) = bob_away_from_a_game(dir.path()).await;
    assert_eq!(away["balance_ms"], 10 * DAY, "{away}");

    server.kill();
    server = serve(dir.path());
    let mut bob = login(&server, dir.path(), "bob").await;
    let still = vacation(&mut bob, "get_vacation").await;
    assert_eq!(
        (
            &still["away_since"],
            &still["ends_at"],
            &still["balance_ms"]
        ),
        (&away["away_since"], &away["ends_at"], &json!(10 * DAY)),
        "{still}"
    );
    assert_eq!(running(&server, dir.path(), &id).await, Value::Null);

    // Back, after seconds away: an hour begun is charged, and Bob's clock runs.
    let back = vacation(&mut bob, "end_vacation").await;
    assert_eq!(back["balance_ms"], 10 * DAY - HOUR, "{back}");
    assert_eq!(back.get("away_since"), None, "{back}");
    assert_eq!(running(&server, dir.path(), &id).await, "white");
    server.kill();
    server = serve(dir.path());
    let mut bob = login(&server, dir.path(), "bob").await;
    let home = vacation(&mut bob, "get_vacation").await;
    assert_eq!(home["balance_ms"], 10 * DAY - HOUR, "{home}");
    assert_eq!(home.get("away_since"), None, "{home}");
    assert_eq!(running(&server, dir.path(), &id).await, "white");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vacation_that_ran_out_while_the_server_was_down_ends_as_it_starts() {
    let dir = tempfile::tempdir().expect("a data dir");
    let (mut server, id, _) = bob_away_from_a_game(dir.path()).await;
    server.kill();
    // The server stays down past the vacation's end: its 10 days are made to have
    // begun 10 days and a second before now, in the store.
    let since = tengen::time::wall_ms() - 10 * DAY - 1_000;
    let db = rusqlite::Connection::open(dir.path().join(tengen::server::DB_FILE)).expect("db");
    let moved = db
        .execute(
            "UPDATE vacations SET away_since_ms = ?1 WHERE user_id = 'bob'",
            [since],
        )
        .expect("moved");
    assert_eq!(moved, 1);
    drop(db);

    // Nobody asks: the server ends the vacation as it starts, and tells the game.
    server = serve(dir.path());
    let back_in_game = |r: &Value| {
        r["events"].as_array().is_some_and(|events| {
            events
                .iter()
                .any(|e| e["type"] == "vacation" && e["away"] == false)
        })
    };
    record_once(&server, &id, back_in_game).await;
    let mut bob = login(&server, dir.path(), "bob").await;
    let home = vacation(&mut bob, "get_vacation").await;
    assert_eq!(home["balance_ms"], 0, "all 10 days were spent: {home}");
    assert_eq!(home.get("away_since"), None, "{home}");
    assert_eq!(running(&server, dir.path(), &id).await, "white");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadlines_passed_while_down_flag_at_start_and_those_to_come_flag_on_time() {
    let dir = tempfile::tempdir().expect("a data dir");
    let mut server = serve(dir.path());
    // Black plays at once in each game, and White's clock runs (a game whose first
    // move never came would end void). No vacation day can hold either flag.
    let mut alice = login(&server, dir.path(), "alice").await;
    let mut games = Vec::new();
    for main_ms in [3_000, 45_000] {
        let clock = json!({"system": "absolute", "main_ms": main_ms});
        let id = game(&server, dir.path(), clock, false).await;
        alice.ok(json!({"type": "join", "game_id": id})).await;
        play(&mut alice, &id, 1, "E5").await;
        // White's clock starts after the game's creation: its flag falls later than this.
        let created = record(&server, &id).await["created_at"].as_i64();
        games.push((id, created.expect("created_at") + main_ms));
    }
    let [(soon, soon_at), (later, later_at)] = <[_; 2]>::try_from(games).expect("two games");
    server.kill();
    // Down until the first deadline has passed.
    while tengen::time::wall_ms() <= soon_at + 2_000 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    server = serve(dir.path());
    let over = |r: &Value| r["result"].is_string();
    let first = record_once(&server, &soon, over).await;
    assert_eq!(first["result"], "B+T", "{first}");
    assert!(
        first["ended_at"].as_i64() >= Some(soon_at),
        "not before its deadline: {first}"
    );
    // The other one still runs until its own deadline (read before it comes).
    let read_at = tengen::time::wall_ms();
    let second = record(&server, &later).await;
    if read_at < later_at {
        assert_eq!(second.get("result"), None, "flagged early: {second}");
    }
    let second = record_once(&server, &later, over).await;
    assert_eq!(second["result"], "B+T", "{second}");
    assert!(
        second["ended_at"].as_i64() >= Some(later_at),
        "not before its deadline: {second}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sleeping_games_whose_first_move_never_came_end_at_their_deadlines() {
    let dir = tempfile::tempdir().expect("a data dir");
    let mut server = serve(dir.path());
    let mut games = Vec::new();
    for _ in 0..8 {
        let clock = json!({"system": "absolute", "main_ms": 12_000});
        games.push(game(&server, dir.path(), clock, false).await);
    }
    server.kill();
    server = serve(dir.path());
    for id in &games {
        let over = record_once(&server, id, |r| r["result"].is_string()).await;
        assert_eq!(over["result"], "Void", "{over}");
    }
}
