//! Catching up and joining at the edges: a client that missed more events than any
//! queue holds gets exactly those events, and joins reach a game however it just ended.

mod common;

use common::{Client, TestServer, start_game};
use serde_json::{Value, json};

async fn nine(server: &TestServer) -> (Client, Client, String) {
    let mut black = server.login("black").await;
    let mut white = server.login("white").await;
    let id = start_game(
        &mut black,
        &mut white,
        json!({"board_size": 9, "color": "black"}),
    )
    .await;
    (black, white, id)
}

/// A server whose rate limit lets a test send hundreds of chats at once.
async fn roomy() -> TestServer {
    TestServer::start_with(|c| {
        c.limits.messages_per_second = 10_000;
        c.limits.burst = 10_000;
        c.limits.flood_close_after = 100_000;
        c.limits.chat_lines_per_minute = 100_000;
        c.limits.max_chat_bytes_per_game = 16 << 20;
    })
    .await
}

/// Sends `n` chat messages in one go (their commits grouped), then waits for the last
/// one's ack. Returns its seq.
async fn chat(c: &mut Client, id: &str, n: usize) -> u64 {
    for i in 0..n {
        c.send(json!({"type": "chat", "game_id": id, "text": format!("line {i}"), "id": format!("chat{i}")}))
            .await;
    }
    let last = format!("chat{}", n - 1);
    loop {
        let v = c.recv().await;
        assert_ne!(v["type"], "error", "{v}");
        if v["id"] == last.as_str() {
            c.clear();
            return v["seq"].as_u64().expect("a numbered chat");
        }
    }
}

/// The seqs of the numbered events among `events`, in order.
fn numbered(events: &[Value]) -> Vec<u64> {
    events
        .iter()
        .filter(|v| v.get("seq").is_some() && v["type"] != "ack")
        .map(|v| v["seq"].as_u64().expect("a seq"))
        .collect()
}

#[tokio::test]
async fn a_client_that_missed_700_events_gets_exactly_them_with_the_default_queue() {
    let server = roomy().await;
    let (mut black, _white, id) = nine(&server).await;
    let mut watcher = server.anonymous().await;
    watcher.ok(json!({"type": "join", "game_id": id})).await;
    let seen = watcher.recv_type("snapshot").await["seq"].as_u64().unwrap();
    watcher.close().await;
    let last = chat(&mut black, &id, 700).await;
    assert!(last >= seen + 700);

    let mut watcher = server.anonymous().await;
    let ack = watcher
        .ok(json!({"type": "join", "game_id": id, "since_seq": seen}))
        .await;
    assert_eq!(ack["type"], "ack");
    let got: Vec<Value> = watcher.pending().iter().cloned().collect();
    assert_eq!(
        numbered(&got),
        (seen + 1..=last).collect::<Vec<_>>(),
        "exactly the missed events, in order, before the ack"
    );
    assert!(got.iter().all(|v| v["type"] != "snapshot"));
    assert_eq!(got.last().unwrap()["text"], "line 699");

    // A catch-up partly from the store, partly from memory, from the very start.
    let mut archive = server.anonymous().await;
    archive
        .ok(json!({"type": "join", "game_id": id, "since_seq": 0}))
        .await;
    let got: Vec<Value> = archive.pending().iter().cloned().collect();
    assert_eq!(numbered(&got), (1..=last).collect::<Vec<_>>());
    assert_eq!(got[0]["type"], "game_created");
}

#[tokio::test]
async fn a_sealed_move_stays_sealed_in_a_catch_up_read_from_the_store() {
    let server = roomy().await;
    let (mut black, mut white, id) = nine(&server).await;
    // Black seals move 1: the game is adjourned, the move hidden until it resumes.
    black
        .ok(json!({"type": "seal", "game_id": id, "move_number": 1, "vertex": "C3"}))
        .await;
    // Pushed out of memory by 600 later events.
    chat(&mut white, &id, 600).await;
    let mut late = server.anonymous().await;
    late.ok(json!({"type": "join", "game_id": id, "since_seq": 0}))
        .await;
    let sealed = late
        .pending()
        .iter()
        .find(|v| v["type"] == "move_sealed")
        .cloned()
        .expect("the sealed move is in the catch-up");
    assert!(sealed.get("vertex").is_none(), "{sealed}");
    assert!(!late.pending().iter().any(|v| v.to_string().contains("C3")));
}

#[tokio::test]
async fn a_join_right_after_the_end_reaches_the_game_every_time() {
    let server = TestServer::start().await;
    for round in 0..30 {
        let mut black = server.login(&format!("b{round}")).await;
        let mut white = server.login(&format!("w{round}")).await;
        let seek = black
            .ok(json!({"type": "seek", "settings": {"board_size": 9, "color": "black"}}))
            .await;
        let ack = white
            .ok(json!({"type": "accept", "challenge_id": seek["challenge"]["challenge_id"]}))
            .await;
        let id = ack["game_id"].as_str().unwrap().to_string();
        // Nobody is in the room: the resignation ends the game and empties it at once.
        black.send(json!({"type": "resign", "game_id": id})).await;
        let joined = white
            .request(json!({"type": "join", "game_id": id, "since_seq": 0}))
            .await;
        assert_eq!(joined["type"], "ack", "round {round}: {joined}");
        let ended = white.recv_type("game_ended").await;
        assert_eq!(ended["result"], "W+R", "round {round}");
    }
}

#[tokio::test]
async fn a_game_that_ends_by_double_forfeit_as_it_is_created_can_be_joined() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let start_at = tengen::time::wall_ms() - 60_000;
    let seek = alice
        .ok(
            json!({"type": "seek", "settings": {"board_size": 9, "color": "black",
            "start_at": start_at, "forfeit_after_ms": 1_000}}),
        )
        .await;
    let mut bob = server.login("bob").await;
    let ack = bob
        .ok(json!({"type": "accept", "challenge_id": seek["challenge"]["challenge_id"]}))
        .await;
    let id = ack["game_id"].as_str().unwrap().to_string();
    let mut watcher = server.anonymous().await;
    watcher
        .ok(json!({"type": "join", "game_id": id, "since_seq": 0}))
        .await;
    let ended = watcher.recv_type("game_ended").await;
    assert_eq!(ended["reason"], "double_forfeit");
    // Once more, surely after the room has gone: the archive answers.
    let mut late = server.anonymous().await;
    late.ok(json!({"type": "join", "game_id": id})).await;
    assert_eq!(late.recv_type("snapshot").await["phase"], "ended");
}

#[tokio::test]
async fn two_games_accepted_at_once_cannot_both_take_a_players_last_slot() {
    let server = TestServer::start_with(|c| c.limits.max_games_per_user = 1).await;
    let mut alice = server.login("alice").await;
    let mut seeks = Vec::new();
    for _ in 0..2 {
        let seek = alice
            .ok(json!({"type": "seek", "settings": {"board_size": 9}}))
            .await;
        seeks.push(seek["challenge"]["challenge_id"].clone());
    }
    let mut bob = server.login("bob").await;
    let mut carol = server.login("carol").await;
    // Both accept before either hears back: the creations run side by side.
    bob.send(json!({"type": "accept", "challenge_id": seeks[0], "id": "a"}))
        .await;
    carol
        .send(json!({"type": "accept", "challenge_id": seeks[1], "id": "a"}))
        .await;
    let mut answers = Vec::new();
    for c in [&mut bob, &mut carol] {
        loop {
            let v = c.recv().await;
            if v["id"] == "a" {
                let answer = if v["type"] == "error" {
                    &v["code"]
                } else {
                    &v["type"]
                };
                answers.push(answer.as_str().unwrap_or_default().to_string());
                break;
            }
        }
    }
    answers.sort();
    assert_eq!(
        answers,
        ["ack", "limit_reached"],
        "alice plays one game, not two"
    );
}
