//! One user cannot take every connection slot: `limits.max_connections_per_user` caps the
//! connections of one login, at the upgrade and at an `auth` message alike. Nor can one
//! connection keep every game in memory: `limits.max_joined_games` caps the games it has
//! joined.

mod common;

use common::{Client, TestServer, WAIT};
use serde_json::json;

#[tokio::test]
async fn a_user_over_the_cap_is_refused_with_limit_reached_and_4009() {
    let server = TestServer::start_with(|c| c.limits.max_connections_per_user = 2).await;
    let first = server.login("alice").await;
    let _second = server.login("alice").await;
    assert_eq!(first.welcome["type"], "welcome");

    let url = format!("{}?token={}", server.url, server.token("alice"));
    let mut third = Client::connect(&url).await;
    assert_eq!(third.welcome["type"], "error", "{}", third.welcome);
    assert_eq!(third.welcome["code"], "limit_reached");
    assert!(third.welcome.get("id").is_none());
    assert_eq!(third.closed().await, Some(4009));

    // Other users are not affected, and the refused connection took no place.
    let mut bob = server.login("bob").await;
    assert_eq!(bob.welcome["user"]["id"], "bob");
    bob.ok(json!({"type": "ping"})).await;

    // An `auth` on an anonymous connection counts too, and changes nothing when refused.
    let mut anon = server.anonymous().await;
    let token = server.token("alice");
    anon.refused(json!({"type": "auth", "token": token}), "limit_reached")
        .await;
    anon.refused(
        json!({"type": "seek", "settings": {"board_size": 9}}),
        "unauthorized",
    )
    .await;

    // A place comes free when a connection goes.
    first.close().await;
    // (The server may not have seen the close yet: ask again until the wait is over.)
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let c = Client::connect(&url).await;
        if c.welcome["type"] == "welcome" {
            break;
        }
        assert_eq!(c.welcome["code"], "limit_reached");
        assert!(
            tokio::time::Instant::now() < deadline,
            "the freed place was never given again"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    anon.ok(json!({"type": "ping"})).await;
}

#[tokio::test]
async fn the_refusal_counts_the_connections_in_good_english() {
    for (cap, said) in [
        (1, "you already have a connection open; close it first"),
        (2, "you already have 2 connections open; close one first"),
    ] {
        let server = TestServer::start_with(move |c| c.limits.max_connections_per_user = cap).await;
        let mut held = Vec::new();
        for _ in 0..cap {
            held.push(server.login("alice").await);
        }
        let url = format!("{}?token={}", server.url, server.token("alice"));
        let refused = Client::connect(&url).await;
        assert_eq!(refused.welcome["code"], "limit_reached");
        assert_eq!(refused.welcome["message"], said, "{}", refused.welcome);
    }
}

/// The `move_played` events of `game_id` that `c` has received so far, by move number.
async fn moves_in(c: &mut Client, game_id: &str) -> Vec<u64> {
    c.ok(json!({"type": "ping"})).await;
    c.pending()
        .iter()
        .filter(|v| v["type"] == "move_played" && v["game_id"] == game_id)
        .filter_map(|v| v["move_number"].as_u64())
        .collect()
}

#[tokio::test]
async fn one_connection_joins_at_most_max_joined_games_and_a_refused_join_joins_nothing() {
    let server = TestServer::start_with(|c| c.limits.max_joined_games = 2).await;
    let settings = json!({"board_size": 9, "color": "black"});
    // Black and White of each game, who have joined only their own.
    let mut players = Vec::new();
    let mut games = Vec::new();
    for (b, w) in [("alice", "bob"), ("carol", "dave"), ("erin", "frank")] {
        let (mut black, mut white) = (server.login(b).await, server.login(w).await);
        games.push(common::start_game(&mut black, &mut white, settings.clone()).await);
        players.push((black, white));
    }
    let (first, second, third) = (&games[0], &games[1], &games[2]);
    let [(alice, bob), _, (erin, frank)] = &mut players[..] else {
        unreachable!("three games")
    };

    let mut watcher = server.anonymous().await;
    watcher.ok(json!({"type": "join", "game_id": first})).await;
    watcher.ok(json!({"type": "join", "game_id": second})).await;
    let refused = watcher
        .refused(json!({"type": "join", "game_id": third}), "limit_reached")
        .await;
    assert_eq!(refused["game_id"], third.as_str(), "{refused}");
    assert!(
        watcher
            .pending()
            .iter()
            .all(|v| v["game_id"] != third.as_str()),
        "a refused join sends nothing of the game: {:?}",
        watcher.pending()
    );
    common::play(erin, third, 1, "E5").await;
    assert_eq!(moves_in(&mut watcher, third).await, [] as [u64; 0]);

    // A game already joined can be joined again at the limit: it answers again, and its
    // events still come once each.
    watcher.clear();
    watcher.ok(json!({"type": "join", "game_id": first})).await;
    assert!(
        watcher.pending().iter().any(|v| v["type"] == "snapshot"),
        "{:?}",
        watcher.pending()
    );
    common::play(alice, first, 1, "E5").await;
    assert_eq!(moves_in(&mut watcher, first).await, [1]);

    // One `leave` stops the events and frees a place.
    watcher.ok(json!({"type": "leave", "game_id": first})).await;
    watcher.clear();
    common::play(bob, first, 2, "C3").await;
    assert_eq!(moves_in(&mut watcher, first).await, [] as [u64; 0]);
    watcher.ok(json!({"type": "join", "game_id": third})).await;
    common::play(frank, third, 2, "C3").await;
    assert_eq!(moves_in(&mut watcher, third).await, [2]);
}
