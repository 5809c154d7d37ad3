//! A tournament in a cluster of two real nodes (child processes on one PostgreSQL and
//! one NATS): created on one node, whose director task then runs there under a lease;
//! players register and the director pairs and publishes through the other node, whose
//! watchers hear the channel's events; the first node is killed (SIGKILL) with the
//! round's games in play, the second takes the director over, the results of the games
//! played there still arrive on the channel, and the next round is paired and published.

mod common;

use std::time::{Duration, Instant};

use common::Client;
use common::cluster::{Cluster, Processes};
use serde_json::{Value, json};
use tengen::protocol::Role;
use tengen::store::{Claim, Leases, PgStore};

const PLAYERS: [&str; 4] = ["ann", "bob", "cho", "dai"];

fn msg(t: &str, kind: &str, fields: Value) -> Value {
    let mut m = json!({"type": kind, "tournament_id": t});
    if let Value::Object(f) = fields {
        for (k, v) in f {
            m[k] = v;
        }
    }
    m
}

fn setup() -> Value {
    json!({
        "name": "Cluster Cup",
        "regulations": {
            "system": {"kind": "swiss"},
            "rounds": 2,
            "handicap": null,
            "colours": "draw",
            "seeding": "split_and_fold",
            "tie_breaks": ["sos"],
            "bye": 2,
            "missed_round": 0,
            "separate_clubs": false,
            "separate_countries": false
        },
        "settings": {
            "board_size": 9,
            "clock": {"system": "absolute", "main_ms": 600_000},
            "forfeit_after_ms": 600_000
        },
        "registration_opens": 0,
        "registration_closes": 4_102_444_800_000_i64
    })
}

/// Sends `request` until it is not refused as `unavailable` (a director between two
/// nodes), for at most a few leases; returns the last reply.
async fn insist(c: &mut Client, request: Value) -> Value {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let reply = c.request(request.clone()).await;
        let waits = matches!(
            reply["code"].as_str(),
            Some("unavailable" | "wrong_phase" | "not_found")
        );
        if reply["type"] != "error" || !waits || Instant::now() > until {
            return reply;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_survives_the_loss_of_the_node_that_directs_it() {
    let cluster = Processes::new(Cluster::new(), 2, Vec::new());
    let (mut n0, n1) = (cluster.spawn(0), cluster.spawn(1));
    let mut td0 = cluster.cluster.login_as(&n0.url, "td", Role::Admin).await;
    let (_, t) = common::create_tournament(&mut td0, setup()).await;

    // Everything else goes through node 1, to the director on node 0.
    let mut td = cluster.cluster.login_as(&n1.url, "td", Role::Admin).await;
    let watched = td.ok(msg(&t, "watch_tournament", json!({}))).await;
    assert_eq!(watched["tournament"]["stage"], "registration", "{watched}");
    let mut players = Vec::new();
    for name in PLAYERS {
        let mut c = cluster.login(&n1, name).await;
        c.ok(msg(&t, "register", json!({"rank": "3k"}))).await;
        let changed = td.recv_type("registration_changed").await;
        assert_eq!(changed["player"]["user"]["id"], name, "{changed}");
        players.push(c);
    }
    td.refused(msg(&t, "publish", json!({})), "wrong_phase")
        .await;
    td.ok(msg(&t, "pair", json!({}))).await;
    let paired = td.recv_type("round_paired").await;
    assert_eq!(paired["round"]["round"], 1, "{paired}");
    td.ok(msg(&t, "publish", json!({}))).await;
    let started = td.recv_type("round_started").await;
    let boards = started["round"]["boards"]
        .as_array()
        .expect("boards")
        .clone();
    assert_eq!(boards.len(), 2, "{started}");

    // The director runs on node 0, under its lease: another node cannot take it.
    let store = PgStore::open(cluster.cluster.db.url()).expect("the store");
    let probe = |store: &PgStore| {
        store
            .claim_tournament(&t, "probe", 60_000)
            .expect("a claim")
    };
    assert_eq!(probe(&store), Claim::Held { node: "n0".into() });

    // The directing node dies with both games in play.
    td0.close().await;
    n0.kill();

    // White resigns each game (taken over by node 1 too); Black wins both.
    for b in &boards {
        let game = b["game_id"].as_str().expect("a game");
        let white = b["white"].as_str().expect("white");
        let i = PLAYERS.iter().position(|p| *p == white).expect("a player");
        let c = &mut players[i];
        let joined = insist(c, json!({"type": "join", "game_id": game})).await;
        assert_ne!(joined["type"], "error", "{joined}");
        let resigned = insist(c, json!({"type": "resign", "game_id": game})).await;
        assert_ne!(resigned["type"], "error", "{resigned}");
    }
    let mut results = Vec::new();
    while results.len() < boards.len() {
        let r = td.recv_type("board_result").await;
        assert_eq!(r["round"], 1, "{r}");
        assert_eq!(r["outcome"], "black", "{r}");
        results.push(r["board"].clone());
    }
    results.sort_by_key(|b| b.as_u64());
    assert_eq!(results, vec![json!(1), json!(2)]);

    // Node 1 directs now: the next round is paired and published there.
    assert_eq!(probe(&store), Claim::Held { node: "n1".into() });
    let paired = insist(&mut td, msg(&t, "pair", json!({}))).await;
    assert_ne!(paired["type"], "error", "{paired}");
    let paired = td.recv_type("round_paired").await;
    assert_eq!(paired["round"]["round"], 2, "{paired}");
    td.ok(msg(&t, "publish", json!({}))).await;
    let started = td.recv_type("round_started").await;
    assert_eq!(started["round"]["round"], 2, "{started}");
    let second = started["round"]["boards"].as_array().expect("boards");
    assert_eq!(second.len(), 2, "{started}");
    // Swiss: the two winners meet.
    let winners: Vec<&str> = boards
        .iter()
        .map(|b| b["black"].as_str().expect("black"))
        .collect();
    assert!(
        second.iter().any(
            |b| winners.contains(&b["black"].as_str().unwrap_or_default())
                && winners.contains(&b["white"].as_str().unwrap_or_default())
        ),
        "{started}"
    );
    let view = td.ok(msg(&t, "watch_tournament", json!({}))).await;
    assert_eq!(
        view["tournament"]["rounds"].as_array().map(Vec::len),
        Some(2)
    );
}
