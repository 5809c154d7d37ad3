//! A whole game through a real server: challenge, moves, passes, dead stones, count.

mod common;

use common::{TestServer, play, start_game};
use serde_json::json;

#[tokio::test]
async fn a_9x9_game_from_seek_to_agreed_count() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let game = start_game(
        &mut alice,
        &mut bob,
        json!({"board_size": 9, "color": "black"}),
    )
    .await;
    // Black (alice) and White (bob) build walls; a white stone ends up dead in Black's area.
    let script = [
        "E1", "F1", "E2", "F2", "E3", "F3", "E4", "F4", "E5", "F5", "E6", "F6", "E7", "F7", "E8",
        "F8", "E9", "F9", "B5",
    ];
    for (i, v) in script.iter().enumerate() {
        let n = i as u32 + 1;
        let (mover, other) = if n % 2 == 1 {
            (&mut alice, &mut bob)
        } else {
            (&mut bob, &mut alice)
        };
        let ack = play(mover, &game, n, v).await;
        let played = other.recv_type("move_played").await;
        assert_eq!(played["vertex"], *v);
        assert_eq!(played["move_number"], n);
        assert_eq!(ack["seq"], played["seq"]);
    }
    // Move 20: White plays inside Black's area; then both pass.
    play(&mut bob, &game, 20, "C5").await;
    play(&mut alice, &game, 21, "pass").await;
    play(&mut bob, &game, 22, "pass").await;
    let scoring = alice.recv_type("scoring_started").await;
    assert_eq!(scoring["disputes"], 0);
    let marked = alice
        .ok(json!({"type": "mark_dead", "game_id": game, "vertex": "C5"}))
        .await;
    let marks = bob.recv_type("dead_marked").await;
    assert_eq!(marks["marks"], json!(["C5"]));
    bob.ok(json!({"type": "accept_score", "game_id": game, "marks_seq": marked["seq"]}))
        .await;
    alice
        .ok(json!({"type": "accept_score", "game_id": game}))
        .await;
    let ended = bob.recv_type("game_ended").await;
    // Black: columns A-E (45 points) minus nothing; White: F-J (36). 45 - 36 - 7.5 = 1.5.
    assert_eq!(ended["result"], "B+1.5", "{ended}");
    assert_eq!(ended["score"]["black"], 45.0);
    assert_eq!(ended["score"]["white"], 36.0);
    assert_eq!(ended["score"]["margin_stones"], 0.75);
}

#[tokio::test]
async fn a_player_may_abort_a_game_until_their_own_first_move() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let settings = json!({"board_size": 9, "color": "black", "rated": true});
    let game = start_game(&mut alice, &mut bob, settings).await;
    play(&mut alice, &game, 1, "E5").await;
    alice
        .refused(json!({"type": "abort", "game_id": game}), "forbidden")
        .await;
    // White has not moved yet.
    bob.ok(json!({"type": "abort", "game_id": game})).await;
    let ended = alice.recv_type("game_ended").await;
    assert_eq!(ended["result"], "Void");
    assert_eq!(ended["reason"], "aborted");
    assert_eq!(bob.recv_type("game_ended").await, ended);
    // A tournament game's lateness and forfeit rules stand: nobody aborts it.
    let tournament = json!({"board_size": 9, "color": "black", "fair_play": "tournament"});
    let game = start_game(&mut alice, &mut bob, tournament).await;
    alice
        .refused(json!({"type": "abort", "game_id": game}), "forbidden")
        .await;
}
