//! The game-lifecycle bus across nodes, over a real NATS: a node's news reaches every
//! other node's `subscribe_all` once, and never its node-local `subscribe`.

mod common;

use std::time::Duration;

use common::services::{nats_url, unique_prefix};
use tengen::cluster::Bus;
use tengen::cluster::news::relay;
use tengen::lifecycle::{GameNews, Lifecycle};
use tengen::protocol::{GameSettings, Role, UserInfo};
use tokio::sync::broadcast::Receiver;

fn started(id: &str) -> GameNews {
    let user = |name: &str| UserInfo {
        id: format!("u-{name}"),
        name: name.into(),
        role: Role::Player,
    };
    GameNews::Started {
        game_id: id.into(),
        black: user("ann"),
        white: user("bob"),
        settings: GameSettings::default(),
    }
}

fn changed(id: &str) -> GameNews {
    GameNews::ResultChanged {
        game_id: id.into(),
        previous: "B+3.5".parse().expect("a result"),
        result: "W+R".parse().expect("a result"),
    }
}

async fn next(rx: &mut Receiver<GameNews>) -> GameNews {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("news within 10 s")
        .expect("the bus is open")
}

#[tokio::test]
async fn each_nodes_news_reaches_every_other_node_once() {
    let (url, prefix) = (nats_url(), unique_prefix());
    let mut nodes = Vec::new();
    for name in ["a#1", "b#1", "c#1"] {
        let bus = Bus::connect(&url, &prefix, name).await.expect("NATS");
        let lifecycle = Lifecycle::default();
        relay(lifecycle.clone(), bus).await.expect("relaying");
        nodes.push(lifecycle);
    }
    let mut heard: Vec<_> = nodes.iter().map(Lifecycle::subscribe_all).collect();
    let mut local: Vec<_> = nodes.iter().map(Lifecycle::subscribe).collect();

    nodes[0].publish(started("g1"));
    nodes[1].publish(changed("g2"));
    for rx in &mut heard {
        let mut got = vec![next(rx).await, next(rx).await];
        got.sort_by_key(|n| format!("{n:?}"));
        let mut want = vec![started("g1"), changed("g2")];
        want.sort_by_key(|n| format!("{n:?}"));
        assert_eq!(got, want);
    }
    assert_eq!(next(&mut local[0]).await, started("g1"));
    assert_eq!(next(&mut local[1]).await, changed("g2"));

    // A marker published after both: whatever came before it came once only.
    nodes[2].publish(changed("marker"));
    for rx in &mut heard {
        assert_eq!(next(rx).await, changed("marker"), "no news heard twice");
    }
    assert!(local[2].try_recv().is_ok_and(|n| n == changed("marker")));
    for rx in &mut local[..2] {
        assert!(
            rx.try_recv().is_err(),
            "other nodes' news is not local news"
        );
    }
}
