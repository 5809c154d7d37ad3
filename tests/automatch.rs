//! Automatch through a real server: two players who want the same kind of game are
//! paired and told with `game_started`; the closer-rated pair goes first; the window
//! widens while a player waits; a request can be cancelled, is cancelled when its
//! author's last connection closes, and never pairs a player with themselves; a bot whose
//! offer admits the game is matched when no person fits.

mod common;

use std::time::Duration;

use common::{Client, TestServer, get_json, seed_rated_games};
use serde_json::{Value, json};
use tengen::protocol::Role;

fn automatch(sizes: &[u8], speeds: &[&str]) -> Value {
    json!({"type": "automatch", "sizes": sizes, "speeds": speeds})
}

/// Asserts `c` has not been told of a game: a round trip after its last request, so every
/// round that request caused is over.
async fn no_game_yet(c: &mut Client) {
    c.ok(json!({"type": "ping"})).await;
    let started: Vec<&Value> = c
        .pending()
        .iter()
        .filter(|v| v["type"] == "game_started")
        .collect();
    assert!(started.is_empty(), "paired too soon: {started:?}");
}

/// The two players of a `game_started`, by id.
fn players(started: &Value) -> [String; 2] {
    [&started["black"]["id"], &started["white"]["id"]].map(|v| v.as_str().unwrap().to_string())
}

fn has_players(started: &Value, a: &str, b: &str) -> bool {
    let mut ids = players(started);
    ids.sort();
    let mut want = [a.to_string(), b.to_string()];
    want.sort();
    ids == want
}

#[tokio::test]
async fn two_players_who_want_the_same_game_are_paired() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    alice.ok(automatch(&[19, 9], &["live", "blitz"])).await;
    no_game_yet(&mut alice).await;
    bob.ok(automatch(&[9], &["long", "blitz"])).await;
    let to_bob = bob.recv_type("game_started").await;
    let to_alice = alice.recv_type("game_started").await;
    assert_eq!(to_bob, to_alice);
    assert!(has_players(&to_bob, "alice", "bob"), "{to_bob}");
    let settings = &to_bob["settings"];
    assert_eq!(settings["board_size"], 9);
    assert_eq!(
        settings["clock"],
        json!({"system": "byoyomi", "main_ms": 180_000, "periods": 3, "period_ms": 10_000})
    );
    assert_eq!(settings["color"], "nigiri");
    assert_eq!(settings["handicap"], 0);
    assert_eq!(settings["komi"], 7.5, "the complete terms: {settings}");
    assert_eq!(settings["ko_rule"], "situational", "{settings}");
    assert!(settings.get("rated").is_none(), "unrated: {settings}");
    // The game is real: both can join it, and the request is gone.
    let game_id = to_bob["game_id"].as_str().unwrap();
    for c in [&mut alice, &mut bob] {
        c.ok(json!({"type": "join", "game_id": game_id})).await;
        c.refused(json!({"type": "automatch_cancel"}), "not_found")
            .await;
    }
}

#[tokio::test]
async fn requests_that_do_not_meet_wait() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let mut carol = server.login("carol").await;
    alice.ok(automatch(&[19], &["live"])).await;
    bob.ok(automatch(&[13], &["live"])).await;
    carol
        .ok(json!({"type": "automatch", "sizes": [19], "speeds": ["live"], "rated": true}))
        .await;
    for c in [&mut alice, &mut bob, &mut carol] {
        no_game_yet(c).await;
    }
}

#[tokio::test]
async fn the_closer_rated_pair_is_preferred() {
    let dir = tempfile::tempdir().unwrap();
    // Strong won a rated game: about 1662, while new players are 1500.
    seed_rated_games(dir.path(), &[("g1", "strong", "someone", "B+R", 19)]);
    let server = TestServer::start_in(dir, |_| {}).await;
    loop {
        let (_, strong) = get_json(&server, "/api/users/strong").await;
        if strong["ratings"][0]["games"] == 1 {
            assert!(strong["ratings"][0]["rating"].as_f64().unwrap() > 1600.0);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut ann = server.login("ann").await;
    let mut strong = server.login("strong").await;
    let mut carol = server.login("carol").await;
    ann.ok(automatch(&[19], &["live"])).await;
    strong.ok(automatch(&[9], &["live"])).await;
    // Carol meets both, each within her window: the closer one, Ann, is her opponent.
    carol.ok(automatch(&[9, 19], &["live"])).await;
    let started = carol.recv_type("game_started").await;
    assert!(has_players(&started, "ann", "carol"), "{started}");
    assert_eq!(ann.recv_type("game_started").await, started);
    no_game_yet(&mut strong).await;
}

#[tokio::test(start_paused = true)]
async fn the_rating_window_widens_while_a_player_waits() {
    let dir = tempfile::tempdir().unwrap();
    seed_rated_games(
        dir.path(),
        &[
            ("g1", "wes", "p1", "B+R", 19),
            ("g2", "wes", "p2", "B+R", 19),
            ("g3", "wes", "p3", "B+R", 19),
        ],
    );
    let server = TestServer::start_in(dir, |_| {}).await;
    let wes = loop {
        let (_, wes) = get_json(&server, "/api/users/wes").await;
        if wes["ratings"][0]["games"] == 3 {
            break wes["ratings"][0]["rating"].as_f64().unwrap();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let gap = wes - 1500.0;
    assert!(gap > 200.0 && gap < 1000.0, "{gap}");
    // The window is 200 and grows by 100 every 10 s of the longer wait.
    let steps = ((gap - 200.0) / 100.0).ceil() as u64;
    let mut w = server.login("wes").await;
    let mut ann = server.login("ann").await;
    w.ok(automatch(&[19], &["blitz"])).await;
    ann.ok(automatch(&[19], &["blitz"])).await;
    no_game_yet(&mut ann).await;
    tokio::time::sleep(Duration::from_secs(steps * 10) - Duration::from_millis(500)).await;
    no_game_yet(&mut ann).await;
    no_game_yet(&mut w).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let started = ann.recv_type("game_started").await;
    assert!(has_players(&started, "ann", "wes"), "{started}");
}

#[tokio::test]
async fn a_cancelled_request_is_not_paired() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    alice.ok(automatch(&[19], &["live"])).await;
    alice.ok(json!({"type": "automatch_cancel"})).await;
    alice
        .refused(json!({"type": "automatch_cancel"}), "not_found")
        .await;
    bob.ok(automatch(&[19], &["live"])).await;
    no_game_yet(&mut bob).await;
    no_game_yet(&mut alice).await;
}

#[tokio::test]
async fn bad_requests_are_refused_and_leave_the_waiting_one() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let mut anonymous = server.anonymous().await;
    anonymous
        .refused(automatch(&[19], &["live"]), "unauthorized")
        .await;
    alice.ok(automatch(&[19], &["live"])).await;
    for bad in [
        automatch(&[], &["live"]),
        automatch(&[19], &[]),
        automatch(&[15], &["live"]),
    ] {
        alice.refused(bad, "bad_request").await;
    }
    alice
        .refused(automatch(&[19], &["bullet"]), "bad_request")
        .await;
    // The first request still waits, and is paired.
    bob.ok(automatch(&[19], &["live"])).await;
    let started = alice.recv_type("game_started").await;
    assert!(has_players(&started, "alice", "bob"), "{started}");
}

#[tokio::test]
async fn a_player_is_never_paired_with_themselves() {
    let server = TestServer::start().await;
    let mut first = server.login("alice").await;
    let mut second = server.login("alice").await;
    first.ok(automatch(&[19], &["live"])).await;
    // A second request replaces the first: one request per user.
    second.ok(automatch(&[19], &["live"])).await;
    no_game_yet(&mut first).await;
    no_game_yet(&mut second).await;
    let mut bob = server.login("bob").await;
    bob.ok(automatch(&[19], &["live"])).await;
    let started = bob.recv_type("game_started").await;
    assert!(has_players(&started, "alice", "bob"), "{started}");
    // Every connection of both players hears of it.
    assert_eq!(first.recv_type("game_started").await, started);
    assert_eq!(second.recv_type("game_started").await, started);
}

#[tokio::test]
async fn closing_the_last_connection_cancels_the_request() {
    let server = TestServer::start().await;
    let mut watcher = server.login("watcher").await;
    watcher.ok(json!({"type": "watch_lobby"})).await;
    let mut alice = server.login("alice").await;
    alice.ok(automatch(&[19], &["live"])).await;
    // A seek beside it shows when the server has taken the disconnection in.
    alice.ok(json!({"type": "seek", "settings": {}})).await;
    alice.close().await;
    let removed = watcher.recv_type("challenge_removed").await;
    assert_eq!(removed["reason"], "disconnected");
    let mut bob = server.login("bob").await;
    bob.ok(automatch(&[19], &["live"])).await;
    no_game_yet(&mut bob).await;
}

#[tokio::test]
async fn a_bot_whose_offer_admits_the_game_is_matched_when_no_person_fits() {
    let server = TestServer::start().await;
    let bot_url = format!(
        "{}?token={}",
        server.url,
        server.token_as("gnugo", Role::Bot)
    );
    let mut bot = Client::connect(&bot_url).await;
    bot.ok(json!({"type": "offer", "offer": {"board_sizes": [9], "time_systems": ["byoyomi"]}}))
        .await;
    // Bob wants 13x13, which the bot does not play: he waits.
    let mut bob = server.login("bob").await;
    bob.ok(automatch(&[13], &["live"])).await;
    no_game_yet(&mut bob).await;
    // Alice would take the bot's 9x9, but a person who fits comes first.
    let mut alice = server.login("alice").await;
    alice.ok(automatch(&[9, 13], &["live"])).await;
    let started = alice.recv_type("game_started").await;
    assert!(has_players(&started, "alice", "bob"), "{started}");
    assert_eq!(started["settings"]["board_size"], 13);
    // Carol fits nobody waiting: the bot takes her.
    let mut carol = server.login("carol").await;
    carol.ok(automatch(&[9], &["blitz", "live"])).await;
    let started = carol.recv_type("game_started").await;
    assert!(has_players(&started, "carol", "gnugo"), "{started}");
    assert_eq!(started["settings"]["board_size"], 9);
    assert_eq!(bot.recv_type("game_started").await, started);
}

/// A challenge the bot's offer admits but that cannot start (the bot plays the most
/// games allowed) is refused with that error alone: neither side hears of a challenge.
#[tokio::test]
async fn a_challenge_to_a_bot_at_its_game_limit_is_refused_before_anyone_hears_of_it() {
    let server = TestServer::start_with(|c| c.limits.max_games_per_user = 1).await;
    let bot_url = format!(
        "{}?token={}",
        server.url,
        server.token_as("robo", Role::Bot)
    );
    let mut bot = Client::connect(&bot_url).await;
    bot.refused(
        json!({"type": "offer", "offer": {"board_sizes": [9], "time_systems": ["blitz"]}}),
        "bad_request",
    )
    .await;
    bot.ok(json!({"type": "offer", "offer": {"board_sizes": [9]}}))
        .await;
    let challenge = json!({"type": "challenge", "opponent": "robo", "settings": {"board_size": 9}});
    let mut alice = server.login("alice").await;
    alice.ok(challenge.clone()).await;
    bot.recv_type("game_started").await;
    bot.clear();
    let mut carol = server.login("carol").await;
    carol.refused(challenge, "limit_reached").await;
    assert!(
        carol
            .pending()
            .iter()
            .all(|m| m["type"] != "challenge_removed"),
        "{:?}",
        carol.pending()
    );
    bot.ok(json!({"type": "ping"})).await;
    assert!(
        bot.pending().iter().all(|m| m["type"] != "challenge_added"),
        "{:?}",
        bot.pending()
    );
    let seeks = carol.ok(json!({"type": "list_seeks"})).await;
    assert_eq!(seeks["challenges"], json!([]));
}

#[tokio::test]
async fn a_handicap_comes_from_the_rank_difference_when_both_accept_one() {
    let dir = tempfile::tempdir().unwrap();
    seed_rated_games(dir.path(), &[("g1", "strong", "someone", "B+R", 19)]);
    let server = TestServer::start_in(dir, |_| {}).await;
    loop {
        let (_, strong) = get_json(&server, "/api/users/strong").await;
        if strong["ratings"][0]["games"] == 1 {
            // 1662: 14k against a new player's 15k, one rank: 让先.
            assert_eq!(strong["ratings"][0]["rank"], "14k?");
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut strong = server.login("strong").await;
    let mut ann = server.login("ann").await;
    let wish = json!({"type": "automatch", "sizes": [19], "speeds": ["live"], "rated": true, "handicap": true});
    strong.ok(wish.clone()).await;
    ann.ok(wish).await;
    let started = ann.recv_type("game_started").await;
    assert_eq!(
        started["black"]["id"], "ann",
        "the weaker takes Black: {started}"
    );
    assert_eq!(started["settings"]["color"], "black");
    assert_eq!(started["settings"]["komi"], 0.0);
    assert_eq!(started["settings"]["handicap"], 0);
    assert_eq!(started["settings"]["rated"], true);
}
