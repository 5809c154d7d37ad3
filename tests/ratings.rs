//! Ratings through a real server: rated games change both players' ratings (overall and
//! the board size's), unrated ones change nothing, guests cannot play rated, a rated game
//! the server never rated before it stopped is rated at the next start, and
//! `tengen ratings rebuild` gives back exactly the ratings the live updates gave.

mod common;

use common::{Client, TestServer, get_json, seed_rated_games, start_game};
use serde_json::{Value, json};
use tengen::protocol::Role;
use tengen::server::DB_FILE;

/// `black` (the seeker, who takes Black) and `white` play a game with `settings` that
/// `loser` resigns; returns the game id.
async fn resigned_game(
    black: &mut Client,
    white: &mut Client,
    settings: Value,
    black_loses: bool,
) -> String {
    let mut settings = settings;
    settings["color"] = json!("black");
    let id = start_game(black, white, settings).await;
    let loser = if black_loses {
        &mut *black
    } else {
        &mut *white
    };
    loser.ok(json!({"type": "resign", "game_id": id})).await;
    let ended = black.recv_type("game_ended").await;
    assert_eq!(ended["result"], if black_loses { "W+R" } else { "B+R" });
    white.recv_type("game_ended").await;
    id
}

/// A player's profile once it counts `games` rated games overall (the rating task
/// records a game a moment after it ends).
async fn profile_after(server: &TestServer, player: &str, games: u64) -> Value {
    for _ in 0..1000 {
        let (status, body) = get_json(server, &format!("/api/users/{player}")).await;
        if status == 200 && body["ratings"][0]["games"] == games {
            return body;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("{player} never reached {games} rated games");
}

fn pool<'a>(profile: &'a Value, name: &str) -> &'a Value {
    profile["ratings"]
        .as_array()
        .expect("ratings")
        .iter()
        .find(|p| p["pool"] == name)
        .unwrap_or_else(|| panic!("no pool {name} in {profile}"))
}

#[tokio::test]
async fn a_rated_game_moves_both_ratings_in_its_pools_and_an_unrated_one_does_not() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let unrated = resigned_game(&mut alice, &mut bob, json!({"board_size": 9}), true).await;
    let (_, record) = get_json(&server, &format!("/api/games/{unrated}")).await;
    assert!(record.to_string().contains("\"board_size\":9"), "{record}");
    let rated = json!({"board_size": 9, "rated": true});
    let created = alice.ok(json!({"type": "seek", "settings": rated})).await;
    assert_eq!(created["challenge"]["settings"]["rated"], true);
    alice
        .ok(json!({"type": "cancel", "challenge_id": created["challenge"]["challenge_id"]}))
        .await;
    resigned_game(&mut alice, &mut bob, rated, false).await;

    let alice_profile = profile_after(&server, "alice", 1).await;
    let bob_profile = profile_after(&server, "bob", 1).await;
    assert_eq!(alice_profile["id"], "alice");
    assert_eq!(alice_profile["name"], "alice");
    for (profile, won) in [(&alice_profile, true), (&bob_profile, false)] {
        for name in ["overall", "9x9"] {
            let p = pool(profile, name);
            assert_eq!(p["games"], 1, "{profile}");
            assert_eq!(p["won"], u64::from(won));
            assert_eq!(p["lost"], u64::from(!won));
            assert_eq!(p["drawn"], 0);
            let rating = p["rating"].as_f64().unwrap();
            assert_eq!(rating > 1500.0, won, "{p}");
            assert!(p["deviation"].as_f64().unwrap() < 350.0);
            assert!(p["rank"].as_str().unwrap().ends_with('?'), "{p}");
        }
        let nineteen = pool(profile, "19x19");
        assert_eq!(nineteen["games"], 0);
        assert_eq!(nineteen["rating"], 1500.0);
        assert_eq!(nineteen["rank"], "15k?");
        let history = profile["history"].as_array().unwrap();
        assert_eq!(history.len(), 2, "overall and 9x9: {profile}");
        assert!(history.iter().all(|h| h["rating_before"] == 1500.0));
    }
    let gain = pool(&alice_profile, "overall")["rating"].as_f64().unwrap() - 1500.0;
    let loss = 1500.0 - pool(&bob_profile, "overall")["rating"].as_f64().unwrap();
    assert!(
        (gain - loss).abs() < 1e-9,
        "equal and opposite: {gain} {loss}"
    );

    let (status, board) = get_json(&server, "/api/ratings?size=9").await;
    assert_eq!(status, 200);
    assert_eq!(board["pool"], "9x9");
    let ids: Vec<&str> = board["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["alice", "bob"]);
    let (_, overall) = get_json(&server, "/api/ratings").await;
    assert_eq!(overall["pool"], "overall");
    assert_eq!(
        overall["players"][0]["rating"],
        pool(&alice_profile, "overall")["rating"]
    );
    let (_, nineteen) = get_json(&server, "/api/ratings?size=19&limit=5").await;
    assert_eq!(nineteen["players"], json!([]));
}

#[tokio::test]
async fn the_api_refuses_bad_queries_with_a_json_error() {
    let server = TestServer::start().await;
    for (path, status, says) in [
        ("/api/ratings?size=7", 400, "`size` must be 9, 13 or 19"),
        ("/api/ratings?size=nineteen", 400, "`size`"),
        (
            "/api/ratings?limit=0",
            400,
            "`limit` must be a whole number from 1 to 200",
        ),
        ("/api/ratings?limit=201", 400, "`limit`"),
        ("/api/ratings?size=9&size=13", 400, "more than once"),
        ("/api/ratings?sort=name", 400, "unknown parameter `sort`"),
        ("/api/users/nobody", 404, "no such player"),
        ("/api/users/%FF", 400, "cannot be read"),
        ("/api/users/nobody?x=1", 400, "unknown parameter `x`"),
    ] {
        let (got, body) = get_json(&server, path).await;
        assert_eq!(got, status, "{path}: {body}");
        let error = body["error"].as_str().unwrap_or_default();
        assert!(error.contains(says), "{path}: {body}");
        assert_eq!(body.as_object().map(|o| o.len()), Some(1), "{path}: {body}");
    }
}

#[tokio::test]
async fn guests_play_unrated_games_only() {
    let server = TestServer::start().await;
    let guest_url = format!(
        "{}?token={}",
        server.url,
        server.token_as("guest-1", Role::Guest)
    );
    let mut guest = Client::connect(&guest_url).await;
    let mut alice = server.login("alice").await;
    guest
        .refused(
            json!({"type": "seek", "settings": {"rated": true}}),
            "rated_not_allowed",
        )
        .await;
    guest
        .refused(
            json!({"type": "automatch", "sizes": [19], "speeds": ["live"], "rated": true}),
            "rated_not_allowed",
        )
        .await;
    let seek = alice
        .ok(json!({"type": "seek", "settings": {"rated": true}}))
        .await;
    let challenge_id = seek["challenge"]["challenge_id"].clone();
    guest
        .refused(
            json!({"type": "accept", "challenge_id": challenge_id}),
            "rated_not_allowed",
        )
        .await;
    // Nothing changed: the seek is still open, and anyone else may accept it.
    let seeks = guest.ok(json!({"type": "list_seeks"})).await;
    assert_eq!(seeks["challenges"][0]["challenge_id"], challenge_id);
    // A rated challenge to a guest is posted, and refused when the guest accepts it.
    let to_guest = alice
        .ok(json!({"type": "challenge", "opponent": "guest-1", "settings": {"rated": true}}))
        .await;
    guest
        .refused(
            json!({"type": "accept", "challenge_id": to_guest["challenge"]["challenge_id"]}),
            "rated_not_allowed",
        )
        .await;
    // An unrated game with a guest is fine.
    start_game(&mut alice, &mut guest, json!({"board_size": 9})).await;
}

#[tokio::test]
async fn a_rated_game_left_unrated_by_a_stop_is_rated_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    seed_rated_games(dir.path(), &[("g1", "carol", "dave", "W+R", 13)]);
    let server = TestServer::start_in(dir, |_| {}).await;
    let dave = profile_after(&server, "dave", 1).await;
    assert_eq!(dave["name"], "dave");
    assert_eq!(pool(&dave, "13x13")["won"], 1);
    assert_eq!(dave["history"][0]["game_id"], "g1");
    assert_eq!(dave["history"][0]["opponent"], "carol");
    assert_eq!(dave["history"][0]["color"], "white");
    assert_eq!(dave["history"][0]["at"], 1_500);
    // Restarting again rates nothing twice.
    let dir = server.stop().await;
    let server = TestServer::start_in(dir, |_| {}).await;
    let mut carol = server.login("carol").await;
    let mut erin = server.login("erin").await;
    resigned_game(&mut carol, &mut erin, json!({"rated": true}), true).await;
    let carol = profile_after(&server, "carol", 2).await;
    assert_eq!(pool(&carol, "overall")["lost"], 2);
    assert_eq!(pool(&carol, "13x13")["games"], 1);
    assert_eq!(pool(&carol, "19x19")["games"], 1);
}

/// The shown overall rank in a profile.
fn overall_rank(profile: &Value) -> Value {
    pool(profile, "overall")["rank"].clone()
}

#[tokio::test]
async fn lobby_messages_carry_the_ranks_of_rated_players_and_omit_the_unrated() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let mut carol = server.login("carol").await;
    let mut watcher = server.anonymous().await;
    watcher.ok(json!({"type": "watch_lobby"})).await;

    // Nobody has played a rated game: no ranks anywhere.
    let created = alice.ok(json!({"type": "seek", "settings": {}})).await;
    assert!(created["challenge"].get("from_rank").is_none(), "{created}");
    alice
        .ok(json!({"type": "cancel", "challenge_id": created["challenge"]["challenge_id"]}))
        .await;
    let rated = json!({"board_size": 9, "rated": true});
    resigned_game(&mut alice, &mut bob, rated, false).await;
    let alice_rank = overall_rank(&profile_after(&server, "alice", 1).await);
    let bob_rank = overall_rank(&profile_after(&server, "bob", 1).await);
    assert!(alice_rank.as_str().unwrap().ends_with('?'), "{alice_rank}");
    assert_ne!(alice_rank, bob_rank);

    // A seek: its reply, the lobby's announcement and the list all carry the rank.
    let created = alice.ok(json!({"type": "seek", "settings": {}})).await;
    assert_eq!(created["challenge"]["from_rank"], alice_rank, "{created}");
    let added = loop {
        let added = watcher.recv_type("challenge_added").await;
        if added["challenge"]["challenge_id"] == created["challenge"]["challenge_id"] {
            break added;
        }
    };
    assert_eq!(added["challenge"]["from_rank"], alice_rank, "{added}");
    let seeks = carol.request(json!({"type": "list_seeks"})).await;
    assert_eq!(seeks["challenges"][0]["from_rank"], alice_rank, "{seeks}");
    // A direct challenge from an unrated player has none.
    let challenge = carol
        .ok(json!({"type": "challenge", "opponent": "bob", "settings": {}}))
        .await;
    assert!(challenge["challenge"].get("from_rank").is_none());
    let to_bob = bob.recv_type("challenge_added").await;
    assert!(to_bob["challenge"].get("from_rank").is_none(), "{to_bob}");

    // The games list: both ranks for the rated pair, one for a rated player against an
    // unrated one, on `game_listed` as on `games`.
    let game = start_game(
        &mut bob,
        &mut carol,
        json!({"board_size": 9, "color": "black"}),
    )
    .await;
    let listed = loop {
        let listed = watcher.recv_type("game_listed").await;
        if listed["game"]["game_id"] == game.as_str() {
            break listed;
        }
    };
    assert_eq!(listed["game"]["black_rank"], bob_rank, "{listed}");
    assert!(listed["game"].get("white_rank").is_none(), "{listed}");
    let games = watcher.request(json!({"type": "list_games"})).await;
    for g in games["games"].as_array().unwrap() {
        let rank = |id: &Value| match id.as_str() {
            Some("alice") => alice_rank.clone(),
            Some("bob") => bob_rank.clone(),
            _ => Value::Null,
        };
        assert_eq!(
            g.get("black_rank").cloned().unwrap_or(Value::Null),
            rank(&g["black"]["id"]),
            "{g}"
        );
        assert_eq!(
            g.get("white_rank").cloned().unwrap_or(Value::Null),
            rank(&g["white"]["id"]),
            "{g}"
        );
    }
    assert_eq!(games["games"].as_array().unwrap().len(), 2, "{games}");
}

#[tokio::test]
async fn ranks_are_known_again_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    seed_rated_games(dir.path(), &[("g1", "carol", "dave", "W+R", 13)]);
    // Rated at start (the game was never rated before the stop).
    let server = TestServer::start_in(dir, |_| {}).await;
    let rank = overall_rank(&profile_after(&server, "dave", 1).await);
    let mut dave = server.login("dave").await;
    let created = dave.ok(json!({"type": "seek", "settings": {}})).await;
    assert_eq!(created["challenge"]["from_rank"], rank, "{created}");
    dave.close().await;
    // Replayed at start (the game was rated before): the list shows the rank as soon as
    // the replay is done, even for a seek posted before it was.
    let dir = server.stop().await;
    let server = TestServer::start_in(dir, |_| {}).await;
    let mut dave = server.login("dave").await;
    dave.ok(json!({"type": "seek", "settings": {}})).await;
    for _ in 0..1000 {
        let seeks = dave.request(json!({"type": "list_seeks"})).await;
        if let Some(shown) = seeks["challenges"][0].get("from_rank") {
            assert_eq!(*shown, rank);
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("dave's rank never came back after the restart");
}

/// Every profile and leaderboard the API serves about `players`.
async fn ratings_seen(server: &TestServer, players: &[&str]) -> Vec<Value> {
    let mut seen = Vec::new();
    for player in players {
        seen.push(get_json(server, &format!("/api/users/{player}")).await.1);
    }
    for query in ["", "?size=9", "?size=13", "?size=19"] {
        seen.push(get_json(server, &format!("/api/ratings{query}")).await.1);
    }
    seen
}

fn rebuild(dir: &std::path::Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(["ratings", "rebuild", "--data"])
        .arg(dir)
        .output()
        .expect("tengen runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn a_rebuild_gives_exactly_the_ratings_the_games_gave() {
    let server = TestServer::start().await;
    let players = ["ann", "ben", "cid"];
    let mut clients = Vec::new();
    for p in players {
        clients.push(server.login(p).await);
    }
    // Six rated games over every pool, each player winning some, and one unrated.
    let games = [
        (0, 1, 9, false),
        (1, 2, 19, true),
        (2, 0, 13, false),
        (0, 2, 19, false),
        (1, 0, 9, true),
        (2, 1, 19, false),
    ];
    let mut played = [0u64; 3];
    for (b, w, size, black_loses) in games {
        let [x, y] = clients.get_disjoint_mut([b, w]).unwrap();
        resigned_game(
            x,
            y,
            json!({"board_size": size, "rated": true}),
            black_loses,
        )
        .await;
        played[b] += 1;
        played[w] += 1;
    }
    let [x, y] = clients.get_disjoint_mut([0, 1]).unwrap();
    resigned_game(x, y, json!({"board_size": 19}), false).await;
    for (player, n) in players.iter().zip(played) {
        profile_after(&server, player, n).await;
    }
    let live = ratings_seen(&server, &players).await;
    assert_eq!(
        live[0]["history"].as_array().unwrap().len(),
        8,
        "{}",
        live[0]
    );

    // Spoil the recorded ratings, then rebuild them from the results alone.
    let dir = server.stop().await;
    let db = rusqlite::Connection::open(dir.path().join(DB_FILE)).unwrap();
    db.execute_batch("UPDATE ratings SET rating = 0, won = 9; DELETE FROM rating_changes;")
        .unwrap();
    drop(db);
    let said = rebuild(dir.path());
    assert_eq!(said.trim(), "rebuilt the ratings from 6 rated games");
    let server = TestServer::start_in(dir, |_| {}).await;
    assert_eq!(ratings_seen(&server, &players).await, live);
}

/// One server at a time runs a SQLite data directory's games, and a rebuild of the
/// ratings (which a running server would not see) waits for it to stop.
#[tokio::test]
async fn a_data_directory_serves_one_server_and_a_rebuild_waits_for_it_to_stop() {
    let server = TestServer::start().await;
    let second = tengen::server::Server::start(tengen::config::Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: server.dir.path().to_path_buf(),
        ..tengen::config::Config::default()
    })
    .await;
    match second {
        Ok(_) => panic!("a second server started on the same data directory"),
        Err(e) => assert!(e.to_string().contains("another tengen process"), "{e}"),
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(["ratings", "rebuild", "--data"])
        .arg(server.dir.path())
        .output()
        .expect("tengen runs");
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("another tengen process"), "{said}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args([
            "store",
            "migrate",
            "--to",
            "postgres://nobody@127.0.0.1:1/none",
            "--data",
        ])
        .arg(server.dir.path())
        .output()
        .expect("tengen runs");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("another tengen process"), "migrate: {said}");
    let dir = server.stop().await;
    assert_eq!(
        rebuild(dir.path()).trim(),
        "rebuilt the ratings from 0 rated games"
    );
    // The lock went with the server: the directory serves again.
    TestServer::start_in(dir, |_| {}).await.stop().await;
}
