//! The lobby across several nodes (docs/ARCHITECTURE.md §8, client-protocol/lobby.md
//! "Several nodes"): real servers joined through the NATS server on 127.0.0.1:4222, each
//! with its own data dir, and clients that connect to whichever node they like.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::cluster::{Cluster, start_cluster};
use common::{Client, TestServer, WAIT};
use serde_json::{Value, json};

/// Sends `msg` until its reply satisfies `done` (news between nodes takes a moment).
async fn eventually(c: &mut Client, msg: Value, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let reply = c.request(msg.clone()).await;
        if done(&reply) {
            return reply;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{msg} never answered as expected; last: {reply}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn listed(seeks: &Value, id: &str) -> bool {
    seeks["challenges"]
        .as_array()
        .is_some_and(|l| l.iter().any(|c| c["challenge_id"] == id))
}

async fn watcher(node: &TestServer) -> Client {
    let mut w = node.anonymous().await;
    w.ok(json!({"type": "watch_lobby"})).await;
    w
}

async fn seek(c: &mut Client) -> String {
    let created = c
        .ok(json!({"type": "seek", "settings": {"board_size": 9}}))
        .await;
    created["challenge"]["challenge_id"]
        .as_str()
        .expect("an id")
        .to_string()
}

#[tokio::test]
async fn a_seek_is_seen_on_every_node_and_gone_everywhere_when_withdrawn() {
    let (_cluster, nodes) = start_cluster(3).await;
    let (mut w2, mut w3) = (watcher(&nodes[1]).await, watcher(&nodes[2]).await);
    let mut alice = nodes[0].login("alice").await;
    let id = seek(&mut alice).await;
    for w in [&mut w2, &mut w3] {
        let added = w.recv_type("challenge_added").await;
        assert_eq!(added["challenge"]["challenge_id"], id);
        assert_eq!(added["challenge"]["from"]["id"], "alice");
        let seeks = w.ok(json!({"type": "list_seeks"})).await;
        assert!(listed(&seeks, &id), "{seeks}");
    }
    alice
        .ok(json!({"type": "cancel", "challenge_id": id}))
        .await;
    for w in [&mut w2, &mut w3] {
        let removed = w.recv_type("challenge_removed").await;
        assert_eq!(removed["challenge_id"], id);
        assert_eq!(removed["reason"], "cancelled");
        let seeks = w.ok(json!({"type": "list_seeks"})).await;
        assert!(!listed(&seeks, &id), "{seeks}");
    }
}

#[tokio::test]
async fn a_node_that_starts_later_sees_the_seeks_already_there() {
    let cluster = Cluster::new();
    let n1 = cluster.node("n1").await;
    let mut alice = n1.login("alice").await;
    let id = seek(&mut alice).await;
    let n2 = cluster.node("n2").await;
    let mut bob = n2.login("bob").await;
    let seeks = bob.ok(json!({"type": "list_seeks"})).await;
    assert!(listed(&seeks, &id), "{seeks}");
}

#[tokio::test]
async fn a_seek_goes_everywhere_when_its_node_stops() {
    let (_cluster, mut nodes) = start_cluster(2).await;
    let mut w2 = watcher(&nodes[1]).await;
    let mut alice = nodes[0].login("alice").await;
    let id = seek(&mut alice).await;
    w2.recv_type("challenge_added").await;
    nodes.remove(0).stop().await;
    let removed = w2.recv_type("challenge_removed").await;
    assert_eq!(removed["challenge_id"], id);
    assert_eq!(removed["reason"], "disconnected");
}

#[tokio::test]
async fn a_seek_goes_everywhere_when_its_node_is_killed() {
    let cluster = Cluster::new();
    let dir = tempfile::tempdir().expect("a data dir");
    let mut n1 = cluster.spawn(dir.path(), "n1", &[]);
    let n2 = cluster.node("n2").await;
    let mut w2 = watcher(&n2).await;
    let mut alice = cluster.login(&n1.url, "alice").await;
    let id = seek(&mut alice).await;
    let added = w2.recv_type("challenge_added").await;
    assert_eq!(added["challenge"]["challenge_id"], id);
    n1.kill();
    let removed = w2.recv_type("challenge_removed").await;
    assert_eq!(removed["challenge_id"], id);
    assert_eq!(removed["reason"], "disconnected");
}

#[tokio::test]
async fn a_user_on_another_node_accepts_a_seek_and_both_players_are_told() {
    let (_cluster, nodes) = start_cluster(2).await;
    let mut w2 = watcher(&nodes[1]).await;
    let mut alice = nodes[0].login("alice").await;
    let mut bob = nodes[1].login("bob").await;
    let id = seek(&mut alice).await;
    eventually(&mut bob, json!({"type": "list_seeks"}), |s| listed(s, &id)).await;
    let ack = bob.ok(json!({"type": "accept", "challenge_id": id})).await;
    let game_id = ack["game_id"].as_str().expect("a game id").to_string();
    for c in [&mut alice, &mut bob] {
        let started = c.recv_type("game_started").await;
        assert_eq!(started["game_id"], game_id);
        assert_eq!(started["settings"]["board_size"], 9);
    }
    let removed = w2.recv_type("challenge_removed").await;
    assert_eq!(removed["reason"], "accepted");
    let listed = w2.recv_type("game_listed").await;
    assert_eq!(listed["game"]["game_id"], game_id);
}

#[tokio::test]
async fn two_accepts_on_two_nodes_at_once_one_wins() {
    let (_cluster, nodes) = start_cluster(3).await;
    let mut alice = nodes[0].login("alice").await;
    let mut bob = nodes[1].login("bob").await;
    let mut carol = nodes[2].login("carol").await;
    let id = seek(&mut alice).await;
    for c in [&mut bob, &mut carol] {
        eventually(c, json!({"type": "list_seeks"}), |s| listed(s, &id)).await;
    }
    let accept = json!({"type": "accept", "challenge_id": id});
    let (b, c) = tokio::join!(bob.request(accept.clone()), carol.request(accept));
    let (won, lost) = if b["type"] == "ack" { (b, c) } else { (c, b) };
    assert_eq!(won["type"], "ack", "one accept wins: {won} {lost}");
    assert_eq!(lost["type"], "error", "{lost}");
    assert_eq!(lost["code"], "not_found", "{lost}");
    let started = alice.recv_type("game_started").await;
    assert_eq!(started["game_id"], won["game_id"]);
}

#[tokio::test]
async fn a_direct_challenge_reaches_a_user_on_another_node_who_may_decline_it() {
    let (_cluster, nodes) = start_cluster(3).await;
    let mut alice = nodes[0].login("alice").await;
    let mut dave = nodes[2].login("dave").await;
    let challenge = json!({"type": "challenge", "opponent": "dave", "settings": {}});
    let created = eventually(&mut alice, challenge, |r| r["type"] != "error").await;
    let id = created["challenge"]["challenge_id"].clone();
    let added = dave.recv_type("challenge_added").await;
    assert_eq!(added["challenge"]["challenge_id"], id);
    assert_eq!(added["challenge"]["to"], "dave");
    dave.ok(json!({"type": "decline", "challenge_id": id}))
        .await;
    let removed = alice.recv_type("challenge_removed").await;
    assert_eq!(removed["challenge_id"], id);
    assert_eq!(removed["reason"], "declined");
    // Declining twice finds nothing, on the challenge's node as on a single server.
    dave.refused(json!({"type": "decline", "challenge_id": id}), "not_found")
        .await;
}

#[tokio::test]
async fn who_is_online_is_the_same_on_every_node() {
    let (_cluster, nodes) = start_cluster(2).await;
    let mut alice = nodes[0].login("alice").await;
    let challenge = json!({"type": "challenge", "opponent": "dave", "settings": {}});
    alice.refused(challenge.clone(), "not_found").await;
    let dave = nodes[1].login("dave").await;
    let created = eventually(&mut alice, challenge.clone(), |r| r["type"] != "error").await;
    assert_eq!(created["type"], "challenge_created");
    // Online while any node has a connection of his.
    let dave_too = nodes[0].login("dave").await;
    dave.close().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let created = alice.ok(challenge.clone()).await;
    assert_eq!(created["type"], "challenge_created");
    dave_too.close().await;
    let refused = eventually(&mut alice, challenge, |r| r["type"] == "error").await;
    assert_eq!(refused["code"], "not_found", "{refused}");
}

#[tokio::test]
async fn the_game_list_on_any_node_lists_each_game_once() {
    let (_cluster, nodes) = start_cluster(3).await;
    let mut games = Vec::new();
    for (i, node) in nodes[..2].iter().enumerate() {
        let mut a = node.login(&format!("a{i}")).await;
        let mut b = node.login(&format!("b{i}")).await;
        games.push(common::start_game(&mut a, &mut b, json!({"board_size": 9})).await);
    }
    for node in &nodes {
        let mut c = node.anonymous().await;
        let list = c.ok(json!({"type": "list_games"})).await;
        let ids: Vec<&str> = list["games"]
            .as_array()
            .expect("games")
            .iter()
            .filter_map(|g| g["game_id"].as_str())
            .collect();
        let mut want: Vec<&str> = games.iter().map(String::as_str).collect();
        want.sort();
        assert_eq!(ids, want, "{list}");
    }
}

#[tokio::test]
async fn a_referee_on_any_node_sees_the_calls_of_a_game_on_another() {
    let (_cluster, nodes) = start_cluster(2).await;
    let mut black = nodes[0].login("black").await;
    let mut white = nodes[0].login("white").await;
    let id = common::start_game(&mut black, &mut white, json!({"board_size": 9})).await;
    black
        .ok(json!({"type": "referee_call", "game_id": id, "message": "help"}))
        .await;
    let token = nodes[1].token_as("li", tengen::protocol::Role::Referee);
    let mut li = Client::connect(&format!("{}?token={token}", nodes[1].url)).await;
    let list = li.ok(json!({"type": "list_referee_calls"})).await;
    let games = list["games"].as_array().expect("games");
    assert_eq!(games.len(), 1, "{list}");
    assert_eq!(games[0]["game"]["game_id"], id.as_str());
    assert_eq!(games[0]["calls"][0]["from"]["id"], "black");
}

fn automatch() -> Value {
    json!({"type": "automatch", "sizes": [9], "speeds": ["live"]})
}

#[tokio::test]
async fn automatch_pairs_two_users_on_two_nodes_that_do_not_lead() {
    let (_cluster, nodes) = start_cluster(3).await;
    let mut bob = nodes[1].login("bob").await;
    let mut carol = nodes[2].login("carol").await;
    bob.ok(automatch()).await;
    carol.ok(automatch()).await;
    let b = bob.recv_type("game_started").await;
    let c = carol.recv_type("game_started").await;
    assert_eq!(b["game_id"], c["game_id"]);
    assert_eq!(b["settings"]["board_size"], 9);
    // Paired, the requests are over everywhere.
    bob.refused(json!({"type": "automatch_cancel"}), "not_found")
        .await;
}

#[tokio::test]
async fn an_automatch_request_is_cancelled_on_the_leader_and_with_its_last_connection() {
    let (_cluster, nodes) = start_cluster(2).await;
    let mut bob = nodes[1].login("bob").await;
    bob.ok(automatch()).await;
    bob.ok(json!({"type": "automatch_cancel"})).await;
    bob.refused(json!({"type": "automatch_cancel"}), "not_found")
        .await;
    bob.ok(automatch()).await;
    bob.close().await;
    // Bob's request went with him: Carol waits alone.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut carol = nodes[0].login("carol").await;
    carol.ok(automatch()).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    carol.ok(json!({"type": "ping"})).await;
    assert!(
        !carol.pending().iter().any(|v| v["type"] == "game_started"),
        "{:?}",
        carol.pending()
    );
}

#[tokio::test]
async fn waiting_players_are_queued_again_when_the_leader_is_killed() {
    let cluster = Cluster::new();
    let dir = tempfile::tempdir().expect("a data dir");
    let mut n1 = cluster.spawn(dir.path(), "n1", &[]);
    let n2 = cluster.node("n2").await;
    let n3 = cluster.node("n3").await;
    let mut bob = n2.login("bob").await;
    // Nobody else waits: Bob's request stays in the leader's (n1's) queue.
    bob.ok(automatch()).await;
    n1.kill();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let mut carol = n3.login("carol").await;
    carol.ok(automatch()).await;
    let b = bob.recv_type("game_started").await;
    let c = carol.recv_type("game_started").await;
    assert_eq!(b["game_id"], c["game_id"]);
}

#[tokio::test]
async fn a_block_made_on_one_node_holds_on_the_others() {
    let (_cluster, nodes) = start_cluster(2).await;
    let mut alice = nodes[0].login("alice").await;
    let mut bob = nodes[1].login("bob").await;
    alice.ok(json!({"type": "block", "user": "bob"})).await;
    let challenge = json!({"type": "challenge", "opponent": "alice", "settings": {}});
    // Until alice's connection and then her block reach n2, the challenge is refused
    // as to someone offline, or posted: only the block's refusal ends the wait.
    let refused = eventually(&mut bob, challenge, |r| r["code"] == "forbidden").await;
    assert_eq!(refused["type"], "error", "{refused}");
}

/// News as a node sends it on `<cluster>.lobby`.
fn news(node: &str, seq: u64, change: tengen::lobby::Change) -> bytes::Bytes {
    let news = json!({"node": node, "boot": 1, "seq": seq, "change": change});
    news.to_string().into()
}

fn posted(id: &str) -> tengen::lobby::Change {
    tengen::lobby::Change::Posted {
        challenge: tengen::protocol::Challenge {
            challenge_id: id.into(),
            from: tengen::protocol::UserInfo {
                id: "ghost-user".into(),
                name: "Ghost".into(),
                role: tengen::protocol::Role::Player,
            },
            to: None,
            settings: tengen::protocol::GameSettings::default(),
            created_at: 0,
            from_rank: None,
            nigiri_commitment: None,
        },
    }
}

/// A node played by hand on `cluster`: it answers every snapshot request with what
/// `snapshot` gives then.
async fn ghost(
    cluster: &str,
    snapshot: impl Fn() -> serde_json::Value + Send + 'static,
) -> async_nats::Client {
    let ghost = async_nats::connect(common::services::nats_url())
        .await
        .expect("NATS");
    let mut asks = ghost
        .subscribe(format!("{cluster}.node.ghost.lobby"))
        .await
        .expect("subscribed");
    let answering = ghost.clone();
    tokio::spawn(async move {
        while let Some(ask) = futures_util::StreamExt::next(&mut asks).await {
            let Some(reply) = ask.reply else { continue };
            let _ = answering
                .publish(reply, snapshot().to_string().into())
                .await;
        }
    });
    ghost
}

#[tokio::test]
async fn the_last_news_lost_on_the_bus_is_made_up_when_a_heartbeat_shows_it() {
    let cluster = Cluster::new();
    let name = cluster.name.clone();
    let n1 = cluster.node("n1").await;
    let mut w = watcher(&n1).await;
    let seq = Arc::new(AtomicU64::new(0));
    // It holds no items, as made after its news number `seq` holds then.
    let held = seq.clone();
    let ghost = ghost(&name, move || {
        let seq = held.load(Ordering::SeqCst);
        json!({"kind": "snapshot", "changes": [], "boot": 1, "seq": seq})
    })
    .await;
    let beat = |news: u64| json!({"node": "ghost", "boot": 1, "news": news}).to_string();
    let nodes = format!("{name}.nodes");
    ghost
        .publish(nodes.clone(), beat(0).into())
        .await
        .expect("sent");
    tokio::time::sleep(Duration::from_millis(300)).await;
    ghost
        .publish(format!("{name}.lobby"), news("ghost", 1, posted("one")))
        .await
        .expect("sent");
    let added = w.recv_type("challenge_added").await;
    assert_eq!(added["challenge"]["challenge_id"], "one");
    // News 2 withdrew "one" and was lost; the heartbeats say it was sent.
    seq.store(2, Ordering::SeqCst);
    for _ in 0..2 {
        ghost
            .publish(nodes.clone(), beat(2).into())
            .await
            .expect("sent");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let removed = w.recv_type("challenge_removed").await;
    assert_eq!(removed["challenge_id"], "one");
}

#[tokio::test]
async fn news_lost_on_the_bus_is_made_up_from_a_fresh_copy() {
    let cluster = Cluster::new();
    let name = cluster.name.clone();
    let n1 = cluster.node("n1").await;
    let mut w = watcher(&n1).await;
    // A node played by hand: it answers snapshots with what it holds after its news 3.
    let ghost = ghost(
        &name,
        || json!({"kind": "snapshot", "changes": [posted("three")], "boot": 1, "seq": 3}),
    )
    .await;
    let lobby = format!("{name}.lobby");
    ghost
        .publish(lobby.clone(), news("ghost", 1, posted("one")))
        .await
        .expect("sent");
    let added = w.recv_type("challenge_added").await;
    assert_eq!(added["challenge"]["challenge_id"], "one");
    // News 2 (withdrawing "one") never arrives; news 3 shows the gap.
    ghost
        .publish(lobby, news("ghost", 3, posted("three")))
        .await
        .expect("sent");
    let added = w.recv_type("challenge_added").await;
    assert_eq!(added["challenge"]["challenge_id"], "three");
    let removed = w.recv_type("challenge_removed").await;
    assert_eq!(removed["challenge_id"], "one");
    let seeks = w.ok(json!({"type": "list_seeks"})).await;
    assert!(listed(&seeks, "three") && !listed(&seeks, "one"), "{seeks}");
}

#[tokio::test]
async fn a_bots_offer_on_one_node_is_listed_and_taken_up_on_another() {
    let (_cluster, nodes) = start_cluster(2).await;
    let token = nodes[1].token_as("robo", tengen::protocol::Role::Bot);
    let mut robo = Client::connect(&format!("{}?token={token}", nodes[1].url)).await;
    robo.ok(json!({"type": "offer", "offer": {"board_sizes": [9], "time_systems": ["none"]}}))
        .await;
    let mut alice = nodes[0].login("alice").await;
    let bots = eventually(&mut alice, json!({"type": "list_bots"}), |r| {
        r["bots"].as_array().is_some_and(|b| !b.is_empty())
    })
    .await;
    assert_eq!(bots["bots"][0]["user"]["id"], "robo", "{bots}");
    let challenge = json!({"type": "challenge", "opponent": "robo", "settings": {"board_size": 9}});
    alice.ok(challenge).await;
    let a = alice.recv_type("game_started").await;
    let r = robo.recv_type("game_started").await;
    assert_eq!(a["game_id"], r["game_id"]);
    // The offer goes with the bot's connection, everywhere.
    robo.close().await;
    eventually(&mut alice, json!({"type": "list_bots"}), |r| {
        r["bots"].as_array().is_some_and(|b| b.is_empty())
    })
    .await;
}
