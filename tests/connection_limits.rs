//! One user cannot take every connection slot: `limits.max_connections_per_user` caps the
//! connections of one login, at the upgrade and at an `auth` message alike. Nor can one
//! address (`limits.max_connections_per_address`, through `auth.trusted_proxies` behind
//! a proxy), nor connections without a login (`limits.anonymous_connections_percent`, and
//! `limits.anonymous_idle_secs` for one that follows nothing). Nor can one connection
//! keep every game in memory: `limits.max_joined_games` caps the games it has joined.

mod common;

use std::net::{IpAddr, SocketAddr};

use common::{Client, TestServer, WAIT};
use serde_json::json;
use tokio::net::TcpSocket;
use tokio_tungstenite::MaybeTlsStream;
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// A WebSocket to `server` from the loopback address `from` (each 127.x.y.z is a client
/// address of its own to the server), with `token` and an `X-Forwarded-For` header if
/// given: the client once welcomed, or the HTTP status that refused the upgrade.
async fn from(
    server: &TestServer,
    from: &str,
    token: Option<&str>,
    forwarded: Option<&str>,
) -> Result<Client, u16> {
    let url = match token {
        Some(t) => format!("{}?token={t}", server.url),
        None => server.url.clone(),
    };
    let mut request = url.into_client_request().expect("a request");
    if let Some(f) = forwarded {
        request
            .headers_mut()
            .insert("x-forwarded-for", f.parse().expect("a header"));
    }
    let socket = TcpSocket::new_v4().expect("a socket");
    let ip: IpAddr = from.parse().expect("an address");
    socket.bind(SocketAddr::new(ip, 0)).expect("bound");
    let addr = server.server.as_ref().expect("running").addr();
    let stream = socket.connect(addr).await.expect("connects");
    match tokio_tungstenite::client_async(request, MaybeTlsStream::Plain(stream)).await {
        Ok((ws, _)) => Ok(Client::over(ws).await),
        Err(WsError::Http(response)) => Err(response.status().as_u16()),
        Err(e) => panic!("the upgrade failed without an answer: {e}"),
    }
}

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

#[tokio::test]
async fn a_flood_of_anonymous_sockets_from_one_address_leaves_a_player_room_to_connect() {
    let server = TestServer::start_with(|c| {
        c.limits.max_connections = 10;
        c.limits.max_connections_per_address = 4;
        c.limits.anonymous_connections_percent = 50;
    })
    .await;
    // One address asks for every slot: it gets its share, then 429.
    let mut flood = Vec::new();
    let mut refused = Vec::new();
    for _ in 0..10 {
        match from(&server, "127.0.0.1", None, None).await {
            Ok(c) => flood.push(c),
            Err(status) => refused.push(status),
        }
    }
    assert_eq!(flood.len(), 4, "one address's sockets");
    assert!(refused.iter().all(|s| *s == 429), "{refused:?}");
    // Other addresses without a login fill the anonymous share (half), then get 503.
    let mut others = Vec::new();
    let status = loop {
        let address = format!("127.0.1.{}", others.len() + 1);
        match from(&server, &address, None, None).await {
            Ok(c) => others.push(c),
            Err(status) => break status,
        }
    };
    assert_eq!(
        (others.len(), status),
        (1, 503),
        "5 without a login at most"
    );
    // A player from elsewhere still connects, and a player from the flooding address too.
    let token = server.token("alice");
    let mut alice = from(&server, "127.0.2.1", Some(&token), None)
        .await
        .expect("a player connects");
    assert_eq!(alice.welcome["user"]["id"], "alice", "{}", alice.welcome);
    alice.ok(json!({"type": "ping"})).await;
    let token = server.token("bob");
    let mut bob = from(&server, "127.0.2.2", Some(&token), None)
        .await
        .expect("another player connects");
    bob.ok(json!({"type": "ping"})).await;
    // A place of the address comes free when one of its sockets goes.
    flood.pop().expect("one").close().await;
    let deadline = tokio::time::Instant::now() + WAIT;
    while from(&server, "127.0.0.1", Some(&server.token("carol")), None)
        .await
        .is_err()
    {
        assert!(tokio::time::Instant::now() < deadline, "never freed");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_places() {
    let tweak = |trusted: bool| {
        move |c: &mut tengen::config::Config| {
            c.limits.max_connections_per_address = 2;
            if trusted {
                c.auth.trusted_proxies = vec!["127.0.0.1".parse().expect("a network")];
            }
        }
    };
    let proxied = TestServer::start_with(tweak(true)).await;
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(
            from(&proxied, "127.0.0.1", None, Some("203.0.113.5"))
                .await
                .expect("within the client's places"),
        );
    }
    let third = from(&proxied, "127.0.0.1", None, Some("203.0.113.5")).await;
    assert_eq!(
        third.err(),
        Some(429),
        "the forwarded client's third socket"
    );
    let other = from(&proxied, "127.0.0.1", None, Some("203.0.113.6")).await;
    assert!(other.is_ok(), "another client behind the same proxy");

    // From a peer that is not trusted the header is the client's own word: ignored.
    let direct = TestServer::start_with(tweak(false)).await;
    let mut held = Vec::new();
    for client in ["203.0.113.5", "203.0.113.6"] {
        held.push(
            from(&direct, "127.0.0.1", None, Some(client))
                .await
                .expect("within the peer's places"),
        );
    }
    let third = from(&direct, "127.0.0.1", None, Some("203.0.113.7")).await;
    assert_eq!(
        third.err(),
        Some(429),
        "counted by the peer, whatever it claims"
    );
}

#[tokio::test]
async fn an_anonymous_socket_that_follows_nothing_is_closed_with_4010() {
    let server = TestServer::start_with(|c| {
        c.limits.heartbeat_secs = 1;
        c.limits.idle_timeout_secs = 30;
        c.limits.anonymous_idle_secs = 1;
    })
    .await;
    let mut idle = server.anonymous().await;
    let mut watcher = server.anonymous().await;
    watcher.ok(json!({"type": "watch_lobby"})).await;
    let mut player = server.login("alice").await;
    assert_eq!(idle.closed().await, Some(4010));
    // Those that follow something, or have logged in, stay.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    watcher.ok(json!({"type": "ping"})).await;
    player.ok(json!({"type": "ping"})).await;
}
