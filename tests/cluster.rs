//! Several real nodes on one PostgreSQL and one NATS, through real sockets: players on
//! two nodes and spectators on every node play whole games; a node killed (SIGKILL) or
//! paused (SIGSTOP) past its lease loses its games to the others without losing a move.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::cluster::{Cluster, LEASE_MS, Processes, play_through};
use common::process::Running;
use common::services::{PrivateNats, nats_url, postgres_db, unique_prefix};
use common::{Client, play, start_game};
use rand::{RngExt, SeedableRng};
use serde_json::json;
use tengen::cluster::Node;
use tengen::store::{Append, Claim, EventLog, GameStore, Leases, PgStore, StoreError};

/// Reads `c`'s frames until `game` ends, checking that its numbered events come one
/// after another from `after + 1`; returns every seq seen.
async fn follow(c: &mut Client, game: &str, after: u64) -> Vec<u64> {
    let mut seqs = Vec::new();
    let mut last = after;
    loop {
        let v = c.recv().await;
        if v["game_id"] != game || v["type"] == "snapshot" || v["type"] == "ack" {
            continue;
        }
        let Some(seq) = v["seq"].as_u64() else {
            continue;
        };
        assert_eq!(seq, last + 1, "a gap or a repeat: {v}");
        last = seq;
        seqs.push(seq);
        if v["type"] == "game_ended" {
            return seqs;
        }
    }
}

/// Joins `game` as a spectator; returns the snapshot's seq.
async fn watch(c: &mut Client, game: &str) -> u64 {
    c.ok(json!({"type": "join", "game_id": game})).await;
    let snapshot = c.recv_type("snapshot").await;
    snapshot["seq"].as_u64().expect("a snapshot has a seq")
}

/// Black (alice) and White (bob) build walls; White's C5 ends up dead in Black's area.
const SCRIPT: [&str; 20] = [
    "E1", "F1", "E2", "F2", "E3", "F3", "E4", "F4", "E5", "F5", "E6", "F6", "E7", "F7", "E8", "F8",
    "E9", "F9", "B5", "C5",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_on_two_nodes_and_spectators_on_three_play_a_game_to_its_count() {
    let cluster = Cluster::new();
    let nodes = [
        cluster.node("n1").await,
        cluster.node("n2").await,
        cluster.node("n3").await,
    ];
    let mut alice = nodes[0].login("alice").await;
    let mut bob = nodes[0].login("bob").await;
    let game = start_game(
        &mut alice,
        &mut bob,
        json!({"board_size": 9, "color": "black"}),
    )
    .await;
    // Bob moves to the second node and comes back into the game there.
    bob.close().await;
    let mut bob = nodes[1].login("bob").await;
    bob.ok(json!({"type": "join", "game_id": game})).await;
    let snapshot = bob.recv_type("snapshot").await;
    assert_eq!(snapshot["you"], "white");
    // A spectator on every node, each following on its own task.
    let mut watchers = Vec::new();
    for node in &nodes {
        let mut spectator = node.anonymous().await;
        let after = watch(&mut spectator, &game).await;
        let game = game.clone();
        watchers.push(tokio::spawn(async move {
            (after, follow(&mut spectator, &game, after).await)
        }));
    }
    for (i, v) in SCRIPT.iter().enumerate() {
        let n = i as u32 + 1;
        let (mover, other) = if n % 2 == 1 {
            (&mut alice, &mut bob)
        } else {
            (&mut bob, &mut alice)
        };
        let ack = play(mover, &game, n, v).await;
        let played = other.recv_type("move_played").await;
        assert_eq!(played["vertex"], *v);
        assert_eq!(ack["seq"], played["seq"]);
    }
    play(&mut alice, &game, 21, "pass").await;
    play(&mut bob, &game, 22, "pass").await;
    alice.recv_type("scoring_started").await;
    // Dead stones marked on the owner's node, accepted from both.
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
    assert_eq!(ended["result"], "B+1.5", "{ended}");
    let last = ended["seq"].as_u64().expect("seq");
    for watcher in watchers {
        let (after, seqs) = tokio::time::timeout(Duration::from_secs(20), watcher)
            .await
            .expect("every spectator sees the end")
            .expect("the spectator's task");
        assert_eq!(seqs, (after + 1..=last).collect::<Vec<_>>());
    }
    // The archive on any node reads the game back from the shared store.
    let (status, record) = common::get_json(&nodes[2], &format!("/api/games/{game}")).await;
    assert_eq!(status, 200, "{record}");
    assert_eq!(record["result"], "B+1.5");
    for node in nodes {
        node.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_owned_elsewhere_refuses_and_relays_as_its_owner_does() {
    let cluster = Cluster::new();
    let (n1, n2) = (cluster.node("n1").await, cluster.node("n2").await);
    let mut alice = n1.login("alice").await;
    let mut bob = n1.login("bob").await;
    let game = start_game(
        &mut alice,
        &mut bob,
        json!({"board_size": 9, "color": "black"}),
    )
    .await;
    let mut carol = n2.login("carol").await;
    let mut bob2 = n2.login("bob").await;
    bob2.ok(json!({"type": "join", "game_id": game})).await;
    bob2.recv_type("snapshot").await;
    // Refusals come back from the owner with their codes and rules.
    bob2.refused(
        json!({"type": "play", "game_id": game, "move_number": 1, "vertex": "D4"}),
        "not_your_turn",
    )
    .await;
    carol
        .refused(
            json!({"type": "play", "game_id": game, "move_number": 1, "vertex": "D4"}),
            "forbidden",
        )
        .await;
    play(&mut alice, &game, 1, "D4").await;
    let refused = bob2
        .refused(
            json!({"type": "play", "game_id": game, "move_number": 2, "vertex": "D4"}),
            "illegal_move",
        )
        .await;
    assert_eq!(refused["reason"], "occupied");
    // A join with since_seq on the other node gets exactly what was missed.
    carol
        .ok(json!({"type": "join", "game_id": game, "since_seq": 1}))
        .await;
    let mut seen = Vec::new();
    while seen.last() != Some(&"move_played".to_string()) {
        let v = carol.recv().await;
        if v["game_id"] == game && v.get("seq").is_some() && v["type"] != "ack" {
            assert_eq!(v["seq"].as_u64(), Some(seen.len() as u64 + 2), "{v}");
            seen.push(v["type"].as_str().unwrap_or_default().to_string());
        }
    }
    // Spectators' chat from the other node reaches spectators on both.
    let mut dave = n1.login("dave").await;
    watch(&mut dave, &game).await;
    carol
        .ok(json!({"type": "chat", "game_id": game, "text": "nice"}))
        .await;
    let kibitz = dave.recv_type("kibitz").await;
    assert_eq!(kibitz["text"], "nice");
    // The owner counts the spectators wherever they are: the summary on the other
    // node comes from it.
    let games = carol.ok(json!({"type": "list_games"})).await;
    let listed = games["games"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["game_id"] == game))
        .cloned()
        .expect("the game is listed where it is mirrored");
    assert_eq!(listed["spectators"], 2, "{listed}");
    n1.stop().await;
    n2.stop().await;
}

/// A live game `id` with no moves, for a lease on it.
fn live_game(id: &str) -> tengen::store::GameRecord {
    tengen::store::GameRecord {
        id: id.into(),
        created_at_ms: 1,
        settings: "{}".into(),
        black: "a".into(),
        white: "b".into(),
        black_name: "a".into(),
        white_name: "b".into(),
        status: tengen::store::GameStatus::Live,
        result: None,
        ended_at_ms: None,
        move_count: 0,
    }
}

#[test]
fn leases_give_a_game_to_one_node_and_fence_out_the_one_before() {
    let db = postgres_db();
    let store = PgStore::open(db.url()).expect("store");
    store.create_game(&live_game("g1")).expect("a game");
    assert_eq!(store.orphans(10).expect("orphans"), ["g1"]);
    let Claim::Ours(first) = store.claim("g1", "n1", 60_000).expect("claim") else {
        panic!("a game nobody holds is claimed");
    };
    assert_eq!(
        store.claim("g1", "n2", 60_000).expect("claim"),
        Claim::Held { node: "n1".into() }
    );
    assert!(store.orphans(10).expect("orphans").is_empty());
    assert!(matches!(
        store.claim("nope", "n1", 60_000),
        Err(StoreError::UnknownGame { .. })
    ));
    // n1 writes under its fence; its renewal keeps the game.
    let event = |seq| {
        Append::Event(tengen::store::EventRecord {
            game_id: "g1".into(),
            seq,
            kind: "x".into(),
            payload: "{}".into(),
            at_ms: 1,
        })
    };
    let fence = |fence| Append::Fence {
        game_id: "g1".into(),
        fence,
    };
    store
        .append(&[fence(first), event(1)])
        .expect("the owner writes");
    let held = [("g1".to_string(), first)];
    assert!(store.renew("n1", &held, 1).expect("renew").is_empty());
    // The lease (1 ms) lapses: the game is an orphan, and n2 takes it with a higher fence.
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(store.orphans(10).expect("orphans"), ["g1"]);
    let Claim::Ours(second) = store.claim("g1", "n2", 60_000).expect("claim") else {
        panic!("a lapsed lease is taken");
    };
    assert!(second > first);
    // n1, back from a pause, is fenced out: its write changes nothing, its renewal
    // tells it the game is gone.
    let refused = store.append(&[fence(first), event(2)]);
    assert!(
        matches!(refused, Err(StoreError::Fenced { current, .. }) if current == second),
        "{refused:?}"
    );
    assert_eq!(store.events("g1").expect("events").len(), 1);
    assert_eq!(store.renew("n1", &held, 60_000).expect("renew"), ["g1"]);
    store
        .append(&[fence(second), event(2)])
        .expect("the new owner writes");
    // n1 releasing a game it lost changes nothing.
    store
        .release("n1", &[("g1".into(), first)])
        .expect("release");
    assert!(store.orphans(10).expect("orphans").is_empty());
    // n2 claims the game again (a newer room of it there): the older room's release,
    // under the number before, leaves the newer one's lease alone.
    let Claim::Ours(third) = store.claim("g1", "n2", 60_000).expect("claim") else {
        panic!("a node takes its own game again");
    };
    assert!(third > second);
    store
        .release("n2", &[("g1".into(), second)])
        .expect("release");
    assert!(store.orphans(10).expect("orphans").is_empty());
    // Released under the number it is held by, the game is free at once.
    store
        .release("n2", &[("g1".into(), third)])
        .expect("release");
    assert_eq!(store.orphans(10).expect("orphans"), ["g1"]);
}

/// Issue 13: a node whose tokio workers are all busy (here the one worker of a
/// current-thread runtime, blocked for over two leases) still renews its leases on its
/// renewal thread, so it still answers for its game and nobody else can claim it; and
/// giving its leases up stops that thread.
#[test]
fn a_node_whose_runtime_is_blocked_keeps_its_leases() {
    let db = postgres_db();
    let store = Arc::new(PgStore::open(db.url()).expect("store"));
    store.create_game(&live_game("g1")).expect("a game");
    let config = tengen::config::ClusterConfig {
        lease_ms: 1_000,
        name: unique_prefix(),
        ..Default::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let node = Node::join(&config, &nats_url(), "n1", store.clone())
            .await
            .expect("joined");
        let mut lost = node.keep_leases().expect("a renewal thread");
        let Ok(Claim::Ours(fence)) = node.claim("g1").await else {
            panic!("the game is free");
        };
        // Nothing else runs on this runtime meanwhile: a renewal task would not either.
        std::thread::sleep(Duration::from_millis(2_500));
        assert!(node.relay().holds("g1", fence), "the tenure went stale");
        assert_eq!(
            store.claim("g1", "n2", 1_000).expect("claim"),
            Claim::Held { node: "n1".into() },
            "the lease lapsed in the store"
        );
        // Claimed here again, for a newer room: the older room, still running until it
        // is told to stop, answers for nothing, and its closing lets nothing go.
        let Ok(Claim::Ours(newer)) = node.claim("g1").await else {
            panic!("a node takes its own game again");
        };
        assert!(
            !node.relay().holds("g1", fence),
            "the older room still answers"
        );
        node.disown("g1", fence).await;
        assert!(
            node.relay().holds("g1", newer),
            "the newer room's claim was let go"
        );
        assert_eq!(
            store.claim("g1", "n2", 1_000).expect("claim"),
            Claim::Held { node: "n1".into() },
            "the older room's closing released the newer one's lease"
        );
        std::thread::sleep(Duration::from_millis(500));
        assert!(
            node.relay().holds("g1", newer),
            "a renewal let the newer claim go"
        );
        assert!(lost.try_recv().is_err(), "no game was lost");
        node.release_all().await;
        // The thread stops, closing its queue (a renewal already under way may first
        // report the game just released as lost).
        let closed = async { while lost.recv().await.is_some() {} };
        tokio::time::timeout(Duration::from_secs(30), closed)
            .await
            .expect("the renewal thread stopped");
    });
}

/// The moves stored for `game`, checking that its events are numbered 1, 2, 3 … with no
/// gap and no repeat.
fn stored_moves(store: &PgStore, game: &str) -> Vec<String> {
    let events = store.events(game).expect("events");
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(
        seqs,
        (1..=events.len() as u64).collect::<Vec<_>>(),
        "{game}"
    );
    events
        .iter()
        .filter(|e| e.kind == "move_played")
        .map(|e| {
            let v: serde_json::Value = serde_json::from_str(&e.payload).expect("JSON");
            v["vertex"].as_str().expect("a vertex").to_owned()
        })
        .collect()
}

/// Rounds of the crash storm, and moves a game tries to play in each.
const ROUNDS: usize = 5;
const BURST: u32 = 30;

/// A simple legal game of up to 152 moves: Black fills columns A, E, J and N, White
/// C, G, L and P, one point after another, with an empty column between any two, so
/// nothing is ever captured.
fn vertex(n: u32) -> String {
    let k = (n - 1) / 2;
    let columns = if n % 2 == 1 { "AEJN" } else { "CGLP" };
    let col = columns.as_bytes()[(k / 19) as usize] as char;
    format!("{col}{}", k % 19 + 1)
}

/// One 19x19 game started on each node, between `b<i>` and `w<i>` there: each game's
/// id, its players (Black, White) and the moves played (none yet).
async fn start_games(cluster: &Processes, nodes: &[Running]) -> Vec<(String, [String; 2], u32)> {
    let mut games = Vec::new();
    for (g, node) in nodes.iter().enumerate() {
        let players = [format!("b{g}"), format!("w{g}")];
        let mut bc = cluster.login(node, &players[0]).await;
        let mut wc = cluster.login(node, &players[1]).await;
        let settings = json!({"board_size": 19, "color": "black"});
        let id = start_game(&mut bc, &mut wc, settings).await;
        games.push((id, players, 0));
    }
    games
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_storm_loses_no_acknowledged_move_and_every_game_finishes() {
    let cluster = Processes::new(Cluster::new(), 3, Vec::new());
    let mut nodes: Vec<Running> = (0..3).map(|i| cluster.spawn(i)).collect();
    let mut games = start_games(&cluster, &nodes).await;
    let store = PgStore::open(cluster.cluster.db.url()).expect("the store");
    let mut rng = rand::rngs::StdRng::seed_from_u64(13);
    let mut cut_bursts = 0;
    for round in 0..ROUNDS {
        // Each game's players sit on two different nodes; moves go on while one node is
        // killed and started again.
        let mut players = Vec::new();
        for (g, (_, [b, w], _)) in games.iter().enumerate() {
            let bc = cluster.login(&nodes[(g + round) % 3], b).await;
            let wc = cluster.login(&nodes[(g + round + 1) % 3], w).await;
            players.push((bc, wc));
        }
        let mut bursts = Vec::new();
        for ((id, _, played), (mut bc, mut wc)) in games.iter().cloned().zip(players) {
            bursts.push(tokio::spawn(async move {
                let mut acked = played;
                for _ in 0..BURST {
                    let n = acked + 1;
                    let c = if n % 2 == 1 { &mut bc } else { &mut wc };
                    if play_through(c, &id, n, &vertex(n)).await.is_none() {
                        return (acked, true);
                    }
                    acked = n;
                }
                (acked, false)
            }));
        }
        tokio::time::sleep(Duration::from_millis(rng.random_range(20..200))).await;
        let victim = rng.random_range(0..3usize);
        nodes[victim].kill();
        nodes[victim] = cluster.spawn(victim);
        for (game, burst) in games.iter_mut().zip(bursts) {
            let (acked, cut) = tokio::time::timeout(Duration::from_secs(60), burst)
                .await
                .expect("a burst ends")
                .expect("the burst's task");
            cut_bursts += usize::from(cut);
            let stored = stored_moves(&store, &game.0);
            let expected: Vec<String> = (1..=acked).map(vertex).collect();
            assert!(
                stored.len() == acked as usize || (cut && stored.len() == acked as usize + 1),
                "round {round}: {} holds {stored:?}, acknowledged {expected:?}",
                game.0
            );
            assert_eq!(stored[..acked as usize], expected[..], "round {round}");
            game.2 = stored.len() as u32;
        }
    }
    assert!(cut_bursts > 0, "some kills landed in the middle of a burst");
    // Every game plays on to a result, its players on two nodes.
    for (g, (id, [b, w], played)) in games.iter().enumerate() {
        let mut bc = cluster.login(&nodes[g], b).await;
        let mut wc = cluster.login(&nodes[(g + 1) % 3], w).await;
        let resigner = if played % 2 == 0 { &mut bc } else { &mut wc };
        loop {
            let reply = resigner
                .request(json!({"type": "resign", "game_id": id}))
                .await;
            if reply["code"] != "unavailable" {
                assert_eq!(reply["type"], "ack", "{reply}");
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let record = store.game(id).expect("read").expect("the game");
        assert!(record.result.is_some(), "{record:?}");
        stored_moves(&store, id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_paused_past_its_lease_is_fenced_out_and_drops_the_game() {
    let cluster = Processes::new(Cluster::new(), 2, Vec::new());
    let (n0, n1) = (cluster.spawn(0), cluster.spawn(1));
    let mut alice = cluster.login(&n0, "alice").await;
    let mut bob = cluster.login(&n0, "bob").await;
    let game = start_game(
        &mut alice,
        &mut bob,
        json!({"board_size": 19, "color": "black"}),
    )
    .await;
    // Bob plays from the other node.
    let mut bob = cluster.login(&n1, "bob").await;
    bob.ok(json!({"type": "join", "game_id": game})).await;
    play_through(&mut alice, &game, 1, &vertex(1))
        .await
        .expect("in");
    // The owner stops past its lease; the other node takes the game and Bob plays on.
    n0.signal(libc::SIGSTOP);
    tokio::time::sleep(Duration::from_millis(LEASE_MS * 2)).await;
    play_through(&mut bob, &game, 2, &vertex(2))
        .await
        .expect("the other node takes the game over");
    // Alice's next move reaches the paused owner first; it wakes up fenced out.
    let id = alice
        .send_request(
            json!({"type": "play", "game_id": game, "move_number": 3, "vertex": vertex(3)}),
        )
        .await
        .expect("sent");
    n0.signal(libc::SIGCONT);
    let reply = alice.reply(id).await.expect("an answer");
    if reply["code"] == "unavailable" {
        play_through(&mut alice, &game, 3, &vertex(3))
            .await
            .expect("in");
    } else {
        assert_eq!(reply["type"], "ack", "{reply}");
    }
    let store = PgStore::open(cluster.cluster.db.url()).expect("the store");
    let expected: Vec<String> = (1..=3).map(vertex).collect();
    assert_eq!(stored_moves(&store, &game), expected);
    // The former owner let the game go: it owns nothing and says it lost a lease.
    let metrics = loop {
        let (_, _, metrics) = common::get_at(n0.addr(), "/metrics").await;
        if metrics.contains("tengen_cluster_owned_games 0") {
            break metrics;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        !metrics.contains("tengen_cluster_leases_lost_total 0\n"),
        "{metrics}"
    );
}

/// Waits until `client` hears White (Bob) recorded gone and then back, after event
/// `after` (earlier comings and goings, from before the test's turn of events, do not
/// count).
async fn white_gone_and_back(client: &mut Client, after: Option<u64>) {
    let after = after.expect("the seq of a move");
    let mut gone = false;
    loop {
        let presence = client.recv_type("presence").await;
        if presence["seq"].as_u64().is_none_or(|seq| seq <= after) {
            continue;
        }
        match (presence["color"].as_str(), presence["online"].as_bool()) {
            (Some("white"), Some(false)) => gone = true,
            (Some("white"), Some(true)) if gone => return,
            _ => {}
        }
    }
}

/// A node that dies says nothing to the mirrors of its rooms. When another node takes a
/// game over, a player whose connection is on a third node and who sends nothing is
/// still followed there: given the game's events, counted present (so not
/// forfeitable), and able to move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_player_on_a_third_node_follows_a_game_taken_over_after_a_crash() {
    let cluster = Processes::new(Cluster::new(), 3, Vec::new());
    let (mut n0, n1, n2) = (cluster.spawn(0), cluster.spawn(1), cluster.spawn(2));
    let game = {
        let mut alice = cluster.login(&n0, "alice").await;
        let mut bob = cluster.login(&n0, "bob").await;
        start_game(
            &mut alice,
            &mut bob,
            json!({"board_size": 19, "color": "black"}),
        )
        .await
    };
    let mut bob = cluster.login(&n2, "bob").await;
    bob.ok(json!({"type": "join", "game_id": game})).await;
    let mut alice = cluster.login(&n1, "alice").await;
    alice.ok(json!({"type": "join", "game_id": game})).await;
    // The owner dies; Bob's node is paused meanwhile, so Alice's node takes the game.
    n2.signal(libc::SIGSTOP);
    n0.kill();
    play_through(&mut alice, &game, 1, &vertex(1))
        .await
        .expect("Alice's node takes the game over");
    n2.signal(libc::SIGCONT);
    // Bob, who sends nothing, is in the game on Alice's node all the same.
    let played = bob.recv_type("move_played").await;
    assert_eq!(played["move_number"], 1, "{played}");
    play_through(&mut bob, &game, 2, &vertex(2))
        .await
        .expect("Bob's connection follows the game");
    let mut carol = cluster.login(&n1, "carol").await;
    carol.ok(json!({"type": "join", "game_id": game})).await;
    let snapshot = carol.recv_type("snapshot").await;
    assert_eq!(snapshot["white"]["online"], true, "{snapshot}");
}

/// NATS goes down under a game whose players are on two nodes. The node cut off from
/// the game's owner refuses a move at once and never plays it later; the owner, which
/// cannot hear the other node, refuses a claim of absence; once NATS is back the player
/// on the other node is counted present again, and plays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nats_outage_plays_no_refused_move_and_forfeits_nobody() {
    let mut nats = PrivateNats::start();
    let cluster = Processes::new(Cluster::on_nats(&nats.url()), 2, Vec::new());
    let (n0, n1) = (cluster.spawn(0), cluster.spawn(1));
    let mut alice = cluster.login(&n0, "alice").await;
    let game = {
        let mut bob = cluster.login(&n0, "bob").await;
        let settings = json!({"board_size": 19, "color": "black", "claim_after_ms": 1000});
        start_game(&mut alice, &mut bob, settings).await
    };
    let mut bob = cluster.login(&n1, "bob").await;
    bob.ok(json!({"type": "join", "game_id": game})).await;
    play_through(&mut alice, &game, 1, &vertex(1))
        .await
        .expect("in");
    let after = alice.recv_type("move_played").await["seq"].as_u64();
    nats.stop();
    let second = json!({"type": "play", "game_id": game, "move_number": 2, "vertex": vertex(2)});
    let refused = bob.request(second.clone()).await;
    assert_eq!(refused["code"], "unavailable", "{refused}");
    // Long enough for the owner to count Bob's node gone and the claim wait to pass.
    for _ in 0..10 {
        let claim = alice
            .request(json!({"type": "claim_win", "game_id": game}))
            .await;
        assert_eq!(claim["code"], "unavailable", "{claim}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    nats.resume();
    white_gone_and_back(&mut alice, after).await;
    // The refused move was not played meanwhile: it is still Bob's move 2 to make.
    let reply = loop {
        let reply = bob.request(second.clone()).await;
        if reply["code"] != "unavailable" {
            break reply;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(reply["type"], "ack", "{reply}");
    let store = PgStore::open(cluster.cluster.db.url()).expect("the store");
    assert_eq!(stored_moves(&store, &game), [vertex(1), vertex(2)]);
}

/// A node stopped (SIGTERM) while NATS is down still stops: its goodbye to the others
/// cannot be sent, and it does not wait for NATS to come back to send it.
#[test]
fn a_node_stops_on_sigterm_while_nats_is_down() {
    let mut nats = PrivateNats::start();
    let cluster = Processes::new(Cluster::on_nats(&nats.url()), 1, Vec::new());
    let mut node = cluster.spawn(0);
    nats.stop();
    node.signal(libc::SIGTERM);
    // Bounded only so that a hang fails the test instead of the suite.
    let status = (0..600).find_map(|_| match node.child.try_wait() {
        Ok(Some(status)) => Some(status),
        _ => {
            std::thread::sleep(Duration::from_millis(100));
            None
        }
    });
    let status = status.expect("the node exits");
    assert!(status.success(), "{status}");
}

/// A node that stops (SIGTERM) hands its games over with the time of the move in
/// progress charged: the player to move does not get back what they spent thinking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_over_keeps_the_time_of_the_move_in_progress() {
    let cluster = Processes::new(Cluster::new(), 2, Vec::new());
    let (n0, n1) = (cluster.spawn(0), cluster.spawn(1));
    let game = {
        let mut alice = cluster.login(&n0, "alice").await;
        let mut bob = cluster.login(&n0, "bob").await;
        let clock = json!({"system": "absolute", "main_ms": 600_000});
        let settings = json!({"board_size": 19, "color": "black", "clock": clock});
        start_game(&mut alice, &mut bob, settings).await
    };
    // Both play through the other node, which stays up.
    let mut alice = cluster.login(&n1, "alice").await;
    alice.ok(json!({"type": "join", "game_id": game})).await;
    let mut bob = cluster.login(&n1, "bob").await;
    bob.ok(json!({"type": "join", "game_id": game})).await;
    // Black thinks; the game's node stops meanwhile and hands it over.
    let thought = 1_500;
    tokio::time::sleep(Duration::from_millis(thought)).await;
    n0.signal(libc::SIGTERM);
    play_through(&mut alice, &game, 1, &vertex(1))
        .await
        .expect("the game plays on on the other node");
    let played = loop {
        let event = alice.recv_type("move_played").await;
        if event["move_number"] == 1 {
            break event;
        }
    };
    let left = played["clock"]["black"]["main_ms"]
        .as_u64()
        .expect("a clock");
    assert!(left <= 600_000 - thought, "Black got time back: {played}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_hands_every_game_over_and_finishes_them_all() {
    let cluster = Processes::new(Cluster::new(), 3, Vec::new());
    let mut nodes: Vec<Running> = (0..3).map(|i| cluster.spawn(i)).collect();
    let mut games = start_games(&cluster, &nodes).await;
    let store = PgStore::open(cluster.cluster.db.url()).expect("the store");
    // Each node in turn is stopped the graceful way (SIGTERM) and started again; the
    // games play on through the others meanwhile.
    for stopped in 0..3 {
        nodes[stopped].signal(libc::SIGTERM);
        let _ = nodes[stopped].child.wait();
        let up = (stopped + 1) % 3;
        for (id, players, played) in games.iter_mut() {
            for _ in 0..4 {
                let n = *played + 1;
                let mut c = cluster
                    .login(&nodes[up], &players[(n as usize + 1) % 2])
                    .await;
                play_through(&mut c, id, n, &vertex(n)).await.expect("in");
                *played = n;
            }
        }
        nodes[stopped] = cluster.spawn(stopped);
    }
    for (id, players, played) in &games {
        let mut c = cluster
            .login(&nodes[0], &players[(*played as usize) % 2])
            .await;
        let reply = c.ok(json!({"type": "resign", "game_id": id})).await;
        assert_eq!(reply["type"], "ack");
        let expected: Vec<String> = (1..=*played).map(vertex).collect();
        assert_eq!(stored_moves(&store, id), expected);
        let record = store.game(id).expect("read").expect("the game");
        assert!(record.result.is_some(), "{record:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rated_games_ending_on_two_nodes_fold_into_the_ratings_in_one_order() {
    let cluster = Cluster::new();
    let (n1, n2) = (cluster.node("n1").await, cluster.node("n2").await);
    let rated = json!({"board_size": 9, "color": "black", "rated": true});
    let mut games = Vec::new();
    for (node, opponent) in [(&n1, "quinn"), (&n2, "rosa")] {
        let mut pat = node.login("pat").await;
        let mut other = node.login(opponent).await;
        let id = start_game(&mut pat, &mut other, rated.clone()).await;
        games.push((pat, id));
    }
    // Both games end at once, each on its own node's rating task.
    let resign = games
        .iter_mut()
        .map(|(pat, id)| pat.ok(json!({"type": "resign", "game_id": id})));
    futures_util::future::join_all(resign).await;
    // Pat's second rating change starts from the first one's result, whichever node
    // rated which.
    let history = loop {
        let (status, profile) = common::get_json(&n2, "/api/users/pat").await;
        assert_eq!(status, 200, "{profile}");
        let overall: Vec<serde_json::Value> = profile["history"]
            .as_array()
            .expect("a history")
            .iter()
            .filter(|h| h["pool"] == "overall")
            .cloned()
            .collect();
        if overall.len() == 2 {
            break overall;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(history[0]["rating_before"], 1500.0, "{history:?}");
    assert_eq!(
        history[1]["rating_before"], history[0]["rating"],
        "{history:?}"
    );
    n1.stop().await;
    n2.stop().await;
}

/// Reads `c`'s frames of `game` until its numbered events reach `last`, checking that
/// they come one after another from `after + 1` and that no error names the game (a
/// connection that stopped following it is told so with one); what went wrong, if
/// anything did.
async fn follows_through(c: &mut Client, game: &str, after: u64, last: u64) -> Result<(), String> {
    let mut seen = after;
    let reading = async {
        while seen < last {
            let v = c.recv().await;
            if v["game_id"] != game || v["type"] == "snapshot" || v["type"] == "ack" {
                continue;
            }
            if v["type"] == "error" {
                return Err(format!("told after event {seen}: {v}"));
            }
            let Some(seq) = v["seq"].as_u64() else {
                continue;
            };
            if seq != seen + 1 {
                return Err(format!("a gap or a repeat after event {seen}: {v}"));
            }
            seen = seq;
        }
        Ok(())
    };
    // Shorter than a client's own wait for a frame, so a silent connection is reported.
    match tokio::time::timeout(Duration::from_secs(8), reading).await {
        Ok(read) => read,
        Err(_) => Err(format!("stood at event {seen} of {last}")),
    }
}

/// Plays move `n` at `vertex` through `c`, sending it again every 80 ms while the game
/// is moving between nodes (`unavailable`); a `stale_move` means an earlier try went in.
/// Any other answer fails the test: a live game is never `not_found`.
async fn play_insistently(c: &mut Client, game: &str, n: u32, vertex: &str) {
    loop {
        let msg = json!({"type": "play", "game_id": game, "move_number": n, "vertex": vertex});
        let reply = c.request(msg).await;
        match reply["code"].as_str() {
            None if reply["type"] == "ack" => return,
            Some("unavailable") => tokio::time::sleep(Duration::from_millis(80)).await,
            Some("stale_move") => return,
            _ => panic!("move {n} of the live game {game} refused: {reply}"),
        }
    }
}

/// Issue 40, items 14 and 15: the owner of a game is killed while its players and
/// spectators sit on another node and Black sends its next move again and again. Every
/// one of those connections follows the game to its new owner, with no event missed,
/// and no request about the live game is answered `not_found`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_connection_on_the_nodes_left_follows_a_game_whose_owner_is_killed() {
    let cluster = Processes::new(Cluster::new(), 3, Vec::new());
    let (n0, _n1, mut n2) = (cluster.spawn(0), cluster.spawn(1), cluster.spawn(2));
    let game = {
        let mut alice = cluster.login(&n2, "alice").await;
        let mut bob = cluster.login(&n2, "bob").await;
        let settings = json!({"board_size": 19, "color": "black"});
        start_game(&mut alice, &mut bob, settings).await
    };
    // Everyone is on the first node; the game runs on the third.
    let mut connections = Vec::new();
    for user in ["alice", "bob", "s1", "s2", "s3"] {
        let mut c = cluster.login(&n0, user).await;
        let after = watch(&mut c, &game).await;
        connections.push((user, c, after));
    }
    for n in 1..=40 {
        let mover = &mut connections[(n as usize + 1) % 2].1;
        play_through(mover, &game, n, &vertex(n)).await.expect("in");
    }
    n2.kill();
    for n in 41..=44 {
        let mover = &mut connections[(n as usize + 1) % 2].1;
        play_insistently(mover, &game, n, &vertex(n)).await;
    }
    let store = PgStore::open(cluster.cluster.db.url()).expect("the store");
    let last = store.events(&game).expect("events").len() as u64;
    let mut lost = Vec::new();
    for (user, c, after) in &mut connections {
        if let Err(e) = follows_through(c, &game, *after, last).await {
            lost.push(format!("{user}: {e}"));
        }
    }
    assert!(lost.is_empty(), "connections lost the game: {lost:#?}");
}

/// Issue 40, item 14: a connection that cannot follow its game (the game finds no node
/// to run on: here its log cannot be read back after its owner died) is told so, with an
/// error naming the game, instead of waiting in silence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_cannot_follow_its_game_is_told() {
    let cluster = Processes::new(Cluster::new(), 2, Vec::new());
    let (n0, mut n1) = (cluster.spawn(0), cluster.spawn(1));
    let game = {
        let mut alice = cluster.login(&n1, "alice").await;
        let mut bob = cluster.login(&n1, "bob").await;
        let settings = json!({"board_size": 19, "color": "black"});
        start_game(&mut alice, &mut bob, settings).await
    };
    let mut alice = cluster.login(&n0, "alice").await;
    watch(&mut alice, &game).await;
    let mut carol = cluster.login(&n0, "carol").await;
    watch(&mut carol, &game).await;
    // An event no node can replay, after the last one (the joins may still add
    // presence), then the owner dies.
    let store = PgStore::open(cluster.cluster.db.url()).expect("the store");
    let unreadable = |seq| {
        Append::Event(tengen::store::EventRecord {
            game_id: game.clone(),
            seq,
            kind: "move_played".into(),
            payload: "{}".into(),
            at_ms: 1,
        })
    };
    let appended = (0..10).any(|_| {
        let last = store.events(&game).expect("events").len() as u64;
        store.append(&[unreadable(last + 1)]).is_ok()
    });
    assert!(appended, "an unreadable event is stored");
    n1.kill();
    // Alice's move finds the owner gone: the connections on her node try to follow
    // the game, which cannot be rebuilt anywhere.
    let first = json!({"type": "play", "game_id": game, "move_number": 1, "vertex": vertex(1)});
    let refused = alice.request(first).await;
    assert_eq!(refused["code"], "unavailable", "{refused}");
    let told = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let v = carol.recv_type("error").await;
            if v["game_id"] == game {
                return v;
            }
        }
    })
    .await
    .expect("the spectator is told that it no longer follows the game");
    assert_eq!(told["code"], "unavailable", "{told}");
    assert!(told.get("id").is_none(), "{told}");
}

/// Issue 40, item 17: after a take-over the new owner does not record players absent
/// whose connections stayed open on the nodes still up, and a move from either is taken
/// from a player the game shows online.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_take_over_records_no_absence_of_players_whose_connections_stayed_open() {
    let cluster = Processes::new(Cluster::new(), 3, Vec::new());
    let (n0, n1, mut n2) = (cluster.spawn(0), cluster.spawn(1), cluster.spawn(2));
    let game = {
        let mut alice = cluster.login(&n2, "alice").await;
        let mut bob = cluster.login(&n2, "bob").await;
        let settings = json!({"board_size": 19, "color": "black"});
        start_game(&mut alice, &mut bob, settings).await
    };
    let mut alice = cluster.login(&n0, "alice").await;
    watch(&mut alice, &game).await;
    let mut bob = cluster.login(&n1, "bob").await;
    watch(&mut bob, &game).await;
    play_through(&mut alice, &game, 1, &vertex(1))
        .await
        .expect("in");
    play_through(&mut bob, &game, 2, &vertex(2))
        .await
        .expect("in");
    let store = PgStore::open(cluster.cluster.db.url()).expect("the store");
    let before = store.events(&game).expect("events").len();
    n2.kill();
    play_insistently(&mut alice, &game, 3, &vertex(3)).await;
    play_insistently(&mut bob, &game, 4, &vertex(4)).await;
    let absent: Vec<String> = store.events(&game).expect("events")[before..]
        .iter()
        .filter(|e| e.kind == "presence")
        .map(|e| e.payload.clone())
        .collect();
    assert!(absent.is_empty(), "presence changed: {absent:?}");
}

/// Issue 40, item 16: a second process started under a node id already live in the
/// cluster refuses to start, saying why; the first one plays on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_refuses_to_start_under_an_id_live_elsewhere() {
    let cluster = Processes::new(Cluster::new(), 1, Vec::new());
    let n0 = cluster.spawn(0);
    let mut alice = cluster.login(&n0, "alice").await;
    let mut bob = cluster.login(&n0, "bob").await;
    let game = start_game(
        &mut alice,
        &mut bob,
        json!({"board_size": 19, "color": "black"}),
    )
    .await;
    let dir = tempfile::tempdir().expect("a data dir");
    let ended =
        tokio::task::block_in_place(|| cluster.run_twin(0, dir.path(), Duration::from_secs(30)));
    let (status, log) = ended.expect("the second n0 stops by itself");
    assert!(!status.success(), "{status}\n{log}");
    assert!(log.contains("cluster.node_id"), "{log}");
    play_through(&mut alice, &game, 1, &vertex(1))
        .await
        .expect("the first n0 plays on");
    play_through(&mut bob, &game, 2, &vertex(2))
        .await
        .expect("the first n0 plays on");
}
