//! Correspondence games in a cluster of real node processes on one PostgreSQL and one
//! NATS: a vacation taken on one node stands the clock of a game that runs on another,
//! and a plan sent through one node plays where the game runs, and after its owner is
//! killed and another node takes it over.

mod common;

use common::cluster::{Cluster, Processes, play_through};
use common::process::Running;
use common::{Client, play, start_game};
use serde_json::{Value, json};

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
