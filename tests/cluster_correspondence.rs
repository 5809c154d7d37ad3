//! Correspondence games in a cluster of real node processes on one PostgreSQL and one
//! NATS: a vacation taken on one node stands the clock of a game that runs on another;
//! a plan sent through one node plays where the game runs, and after its owner is
//! killed and another node takes it over; a game asleep is woken when due by the one
//! node that holds the waker's lease, and by another once that node is killed.

mod common;

use std::time::{Duration, Instant};

use common::cluster::{Cluster, Processes, play_through};
use common::process::Running;
use common::{Client, get_at, play, start_game};
use serde_json::{Value, json};
use tengen::store::{Claim, Leases, PgStore};

const HOUR: u64 = 3_600_000;
const DAY: u64 = 24 * HOUR;

/// A correspondence game on 9x9, Black to choose: 3 days, a day a move, at most 4.
fn correspondence() -> Value {
    json!({"board_size": 9, "color": "black", "correspondence": true,
        "clock": {"system": "fischer", "main_ms": 3 * DAY, "increment_ms": DAY, "max_ms": 4 * DAY}})
}

/// Two nodes whose players start with 10 vacation days and gain none while the test
/// runs, so every balance is exact.
fn two_nodes() -> Processes {
    let no_accrual = (
        "TENGEN_CORRESPONDENCE__VACATION_DAYS_PER_30",
        "0".to_owned(),
    );
    Processes::new(Cluster::new(), 2, vec![no_accrual])
}

/// The next `vacation` event of the game `c` follows: its colour and whether away.
async fn vacation_event(c: &mut Client) -> (Value, Value) {
    let v = c.recv_type("vacation").await;
    (v["color"].clone(), v["away"].clone())
}

/// Which clock runs in the game, as a new spectator's snapshot on `node` shows it.
async fn running(cluster: &Processes, node: &Running, game: &str) -> Value {
    let mut c = cluster.login(node, "dave").await;
    c.ok(json!({"type": "join", "game_id": game})).await;
    c.recv_type("snapshot").await["clock"]["running"].clone()
}

/// The `move_played` of move `n` that `c` is given.
async fn move_played(c: &mut Client, n: u32) -> Value {
    loop {
        let played = c.recv_type("move_played").await;
        if played["move_number"] == n {
            return played;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vacation_taken_on_one_node_stands_the_clock_of_a_game_run_on_another() {
    let cluster = two_nodes();
    let (n0, n1) = (cluster.spawn(0), cluster.spawn(1));
    // The game runs on n0, where Alice stays at the board; White (Bob) is to move.
    let mut alice = cluster.login(&n0, "alice").await;
    let mut bob0 = cluster.login(&n0, "bob").await;
    let game = start_game(&mut alice, &mut bob0, correspondence()).await;
    play(&mut alice, &game, 1, "E5").await;
    drop(bob0);
    // Carol watches from n1, through a mirror of n0's room.
    let mut carol = cluster.login(&n1, "carol").await;
    carol.ok(json!({"type": "join", "game_id": game})).await;
    assert_eq!(running(&cluster, &n1, &game).await, "white");

    // Bob goes on vacation through n1.
    let mut bob = cluster.login(&n1, "bob").await;
    let away = bob.ok(json!({"type": "start_vacation"})).await;
    assert_eq!(away["vacation"]["paused"], json!([game]), "{away}");
    assert_eq!(away["vacation"].get("running"), None, "{away}");
    assert_eq!(
        vacation_event(&mut alice).await,
        (json!("white"), json!(true))
    );
    assert_eq!(
        vacation_event(&mut carol).await,
        (json!("white"), json!(true))
    );
    assert_eq!(running(&cluster, &n1, &game).await, Value::Null);

    // And comes back through n1: charged an hour begun, his clock runs again.
    let back = bob.ok(json!({"type": "end_vacation"})).await;
    assert_eq!(back["vacation"]["balance_ms"], 10 * DAY - HOUR, "{back}");
    assert_eq!(back["vacation"].get("away_since"), None, "{back}");
    assert_eq!(
        vacation_event(&mut alice).await,
        (json!("white"), json!(false))
    );
    assert_eq!(
        vacation_event(&mut carol).await,
        (json!("white"), json!(false))
    );
    assert_eq!(running(&cluster, &n1, &game).await, "white");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_sent_through_one_node_plays_where_the_game_runs_and_after_a_take_over() {
    let cluster = two_nodes();
    let (mut n0, n1) = (cluster.spawn(0), cluster.spawn(1));
    let mut alice0 = cluster.login(&n0, "alice").await;
    let mut bob0 = cluster.login(&n0, "bob").await;
    let game = start_game(&mut alice0, &mut bob0, correspondence()).await;
    play(&mut alice0, &game, 1, "E5").await;
    // Alice plans her next two replies through n1; the game runs on n0.
    let mut alice1 = cluster.login(&n1, "alice").await;
    let replies = json!([{"if": "C3", "play": "G7", "then": [{"if": "G3", "play": "C7"}]}]);
    alice1
        .ok(json!({"type": "plan", "game_id": game, "move_number": 2, "replies": replies}))
        .await;
    play(&mut bob0, &game, 2, "C3").await;
    let planned = move_played(&mut bob0, 3).await;
    assert_eq!(
        (
            &planned["move_number"],
            &planned["vertex"],
            &planned["planned"]
        ),
        (&json!(3), &json!("G7"), &json!(true)),
        "{planned}"
    );

    // n0 dies; Bob's next move, through n1, finds the game taken over there, and the
    // plan's next level answers it.
    n0.kill();
    let mut bob1 = cluster.login(&n1, "bob").await;
    play_through(&mut bob1, &game, 4, "G3")
        .await
        .expect("n1 takes the game over");
    bob1.ok(json!({"type": "join", "game_id": game})).await;
    let snapshot = bob1.recv_type("snapshot").await;
    let moves: Vec<&str> = snapshot["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .filter_map(|m| m["vertex"].as_str())
        .collect();
    assert_eq!(moves, ["E5", "C3", "G7", "G3", "C7"], "{snapshot}");
}

/// How long a test waits for the nodes to do by themselves what they must.
const PATIENCE: Duration = Duration::from_secs(60);

/// A correspondence game on 9x9, Black to choose, of `main_ms` in all for each player,
/// with no vacation to stand a clock.
fn sudden_death(main_ms: u64) -> Value {
    json!({"board_size": 9, "color": "black", "correspondence": true, "vacation": false,
        "clock": {"system": "absolute", "main_ms": main_ms}})
}

/// The node that holds the waker's lease, once one does, as a claim by another finds
/// it (a claim that finds it free holds it a millisecond, and is tried again).
async fn waker_node(store: &PgStore, not: Option<&str>) -> String {
    let until = Instant::now() + PATIENCE;
    loop {
        match store.claim_singleton("waker", "probe", 1).expect("a claim") {
            Claim::Held { node } if Some(node.as_str()) != not => return node,
            _ => assert!(Instant::now() < until, "no node took the waker's lease"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The game's record over HTTP, read from the store (which wakes no game).
async fn record(node: &Running, game: &str) -> Value {
    let (status, _, body) = get_at(node.addr(), &format!("/api/games/{game}")).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("a JSON record")
}

/// The game's record once it has a result; fails at `until`.
async fn over_by(node: &Running, game: &str, until: Instant) -> Value {
    loop {
        let record = record(node, game).await;
        if record["result"].is_string() {
            return record;
        }
        assert!(Instant::now() < until, "not over in time: {record}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A counter or gauge of the node's `/metrics`.
async fn metric(node: &Running, name: &str) -> u64 {
    let (_, _, metrics) = get_at(node.addr(), "/metrics").await;
    let line = metrics
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")));
    line.and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {metrics}"))
}

/// A game of `main_ms` started on `node`, Black's first move played, both players gone;
/// and the instant White's flag falls at the earliest.
async fn white_to_move_alone(cluster: &Processes, node: &Running, main_ms: u64) -> (String, i64) {
    let mut alice = cluster.login(node, "alice").await;
    let mut bob = cluster.login(node, "bob").await;
    let game = start_game(&mut alice, &mut bob, sudden_death(main_ms)).await;
    play(&mut alice, &game, 1, "E5").await;
    let created = record(node, &game).await["created_at"].as_i64();
    (game, created.expect("created_at") + main_ms as i64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_asleep_on_one_node_is_flagged_by_the_wakers_node_without_a_sweep() {
    // The longest lease: each node sweeps for games without an owner as it starts and
    // then every 100 s, after this test has had its answer.
    let started = Instant::now();
    let no_sweep_yet = started + Duration::from_secs(100);
    let cluster = Processes::new(Cluster::with_lease(300_000), 2, Vec::new());
    let nodes = [cluster.spawn(0), cluster.spawn(1)];
    let store = PgStore::open(cluster.cluster.db.url()).expect("the store");
    let waker = waker_node(&store, None).await;
    let (w, other) = if waker == "n0" { (0, 1) } else { (1, 0) };

    // The game runs on the other node, and falls asleep there (its room stops 30 s
    // after its players left) before White's flag.
    let (game, deadline) = white_to_move_alone(&cluster, &nodes[other], 50_000).await;
    while metric(&nodes[other], "tengen_cluster_owned_games").await > 0 {
        assert!(Instant::now() < no_sweep_yet, "the game never fell asleep");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let asleep = record(&nodes[other], &game).await;
    assert_eq!(asleep.get("result"), None, "over before it slept: {asleep}");

    // The waker's node wakes it at its deadline, and its flag falls, before any sweep.
    let over = over_by(&nodes[w], &game, no_sweep_yet).await;
    assert_eq!(over["result"], "B+T", "{over}");
    assert!(over["ended_at"].as_i64() >= Some(deadline), "early: {over}");
    let takeovers = "tengen_cluster_takeovers_total";
    assert!(
        metric(&nodes[w], takeovers).await >= 1,
        "the waker's node woke it"
    );
    assert_eq!(metric(&nodes[other], takeovers).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_wakers_node_is_killed_another_node_wakes_a_game_then_due() {
    let cluster = Processes::new(Cluster::new(), 2, Vec::new());
    let mut nodes = [cluster.spawn(0), cluster.spawn(1)];
    let store = PgStore::open(cluster.cluster.db.url()).expect("the store");
    let waker = waker_node(&store, None).await;
    let (w, other) = if waker == "n0" { (0, 1) } else { (1, 0) };

    // The game runs on the waker's node, which is killed: the game is in no room, its
    // lease lapses, and its deadline is in the index, which no sweep takes from.
    let (game, deadline) = white_to_move_alone(&cluster, &nodes[w], 20_000).await;
    nodes[w].kill();
    assert_eq!(waker_node(&store, Some(&waker)).await, format!("n{other}"));
    let read_at = tengen::time::wall_ms();
    let waiting = record(&nodes[other], &game).await;
    if read_at < deadline {
        assert_eq!(waiting.get("result"), None, "flagged early: {waiting}");
    }

    // The new waker claims the game when it falls due, and its flag falls there.
    let over = over_by(&nodes[other], &game, Instant::now() + PATIENCE).await;
    assert_eq!(over["result"], "B+T", "{over}");
    assert!(over["ended_at"].as_i64() >= Some(deadline), "early: {over}");
    assert!(metric(&nodes[other], "tengen_cluster_takeovers_total").await >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_stops_gives_the_wakers_lease_up_for_another_at_once() {
    // The longest lease: given up, it is free long before it would have lapsed.
    let cluster = Processes::new(Cluster::with_lease(300_000), 2, Vec::new());
    let mut nodes = [cluster.spawn(0), cluster.spawn(1)];
    let store = PgStore::open(cluster.cluster.db.url()).expect("the store");
    let waker = waker_node(&store, None).await;
    let w = usize::from(waker == "n1");
    nodes[w].signal(libc::SIGTERM);
    let until = Instant::now() + PATIENCE;
    while nodes[w]
        .child
        .try_wait()
        .expect("the node's state")
        .is_none()
    {
        assert!(Instant::now() < until, "the node does not stop");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = store.claim_singleton("waker", "probe", 1).expect("a claim");
    assert_ne!(
        after,
        Claim::Held { node: waker },
        "kept by a node that stopped"
    );
}
