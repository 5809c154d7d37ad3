//! Personal API tokens and self-service bot accounts on a real server: tokens created,
//! listed (the secret shown once) and revoked over HTTP; a revoked token and a disabled
//! account's token refused on HTTP and their open WebSockets closed with 4001; scopes
//! enforced on the WebSocket and HTTP; the count bounded; an account turned into a bot
//! (refused after a rated game), listed on the bots page, and `tengen bot` with GNU Go
//! playing a game on a personal token.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::{Client, TestServer, http_json};
use serde_json::{Value, json};
use tengen::store::UserChange;
use tokio::process::Command;

/// Close code of a connection whose token was revoked or whose account was disabled.
const REVOKED: u16 = 4001;

/// `user`'s session token (as a login gives), after giving them an account.
async fn session(server: &TestServer, user: &str) -> String {
    server.account(user).await;
    server.token(user)
}

/// Creates a personal token: the whole reply.
async fn create(server: &TestServer, session: &str, name: &str, scopes: Value) -> (u16, Value) {
    http_json(
        server,
        "POST",
        "/api/tokens",
        Some(session),
        Some(json!({"name": name, "scopes": scopes})),
    )
    .await
}

/// A new personal token with `scopes`: the secret.
async fn token(server: &TestServer, session: &str, scopes: Value) -> String {
    let (status, body) = create(server, session, "test", scopes).await;
    assert_eq!(status, 201, "{body}");
    body["token"].as_str().expect("the secret").to_string()
}

async fn connect(server: &TestServer, token: &str) -> Client {
    Client::connect(&format!("{}?token={token}", server.url)).await
}

/// Saves a review with `token`: the status (201 when saved).
async fn save_review(server: &TestServer, token: &str) -> u16 {
    let sgf = "(;GM[1]FF[4]SZ[9];B[ee])";
    let (status, _) = http_json(
        server,
        "POST",
        "/api/reviews",
        Some(token),
        Some(json!({"sgf": sgf})),
    )
    .await;
    status
}

/// A connection that must have been refused at login: the error's code, then 4001.
async fn refused_at_connect(server: &TestServer, token: &str) -> String {
    let mut c = connect(server, token).await;
    assert_eq!(c.welcome["type"], "error", "{}", c.welcome);
    assert_eq!(c.closed().await, Some(REVOKED));
    c.welcome["code"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn a_token_is_shown_once_listed_by_its_prefix_and_revoked_at_once() {
    let server = TestServer::start().await;
    let alice = session(&server, "alice").await;
    let (status, created) = create(&server, &alice, "my bot", json!(["play", "read"])).await;
    assert_eq!(status, 201, "{created}");
    let secret = created["token"].as_str().expect("the secret").to_string();
    let id = created["id"].as_str().expect("the id").to_string();
    assert!(id.starts_with("tgn_") && secret.starts_with(&format!("{id}_")));
    assert!(
        secret.len() > id.len() + 60,
        "a high-entropy secret: {secret}"
    );
    assert_eq!(created["scopes"], json!(["read", "play"]));
    assert!(created.get("expires_at").is_none(), "never expires");

    let (status, list) = http_json(&server, "GET", "/api/tokens", Some(&alice), None).await;
    assert_eq!(status, 200);
    assert_eq!(list["tokens"].as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(list["tokens"][0]["id"], id.as_str());
    assert_eq!(list["tokens"][0]["name"], "my bot");
    assert!(
        !list.to_string().contains(&secret[id.len()..]),
        "the list never shows the secret: {list}"
    );

    // The token opens a WebSocket, saves a review, and its use is noted.
    let mut by_token = connect(&server, &secret).await;
    assert_eq!(by_token.welcome["user"]["id"], "alice");
    assert_eq!(save_review(&server, &secret).await, 201);
    let (_, list) = http_json(&server, "GET", "/api/tokens", Some(&alice), None).await;
    assert!(list["tokens"][0]["last_used_at"].is_i64(), "{list}");
    let mut by_session = connect(&server, &alice).await;

    let (status, _) = http_json(
        &server,
        "DELETE",
        &format!("/api/tokens/{id}"),
        Some(&alice),
        None,
    )
    .await;
    assert_eq!(status, 204);
    let error = by_token.recv_type("error").await;
    assert_eq!(error["code"], "unauthorized", "{error}");
    assert_eq!(by_token.closed().await, Some(REVOKED));
    // Only the token's connection ends.
    by_session.ok(json!({"type": "ping"})).await;
    assert_eq!(save_review(&server, &secret).await, 401);
    assert_eq!(refused_at_connect(&server, &secret).await, "unauthorized");
    // A token is revoked once; another user's cannot be named.
    let (status, body) = http_json(
        &server,
        "DELETE",
        &format!("/api/tokens/{id}"),
        Some(&alice),
        None,
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (404, Some("unknown_token"))
    );
    let (_, list) = http_json(&server, "GET", "/api/tokens", Some(&alice), None).await;
    assert_eq!(list["tokens"], json!([]));
}

#[tokio::test]
async fn a_disabled_accounts_token_is_refused_and_its_socket_closed() {
    let server = TestServer::start().await;
    let bob = session(&server, "bob").await;
    let secret = token(&server, &bob, json!(["play"])).await;
    let mut open = connect(&server, &secret).await;
    assert_eq!(open.welcome["type"], "welcome");
    let store = server
        .server
        .as_ref()
        .expect("running")
        .hub()
        .store()
        .clone();
    tokio::task::spawn_blocking(move || store.update_user("bob", &UserChange::Disabled(true)))
        .await
        .expect("the store call")
        .expect("disabled");
    let error = open.recv_type("error").await;
    assert_eq!(error["code"], "unauthorized");
    assert_eq!(open.closed().await, Some(REVOKED));
    assert_eq!(save_review(&server, &secret).await, 401);
    assert_eq!(refused_at_connect(&server, &secret).await, "unauthorized");
}

#[tokio::test]
async fn every_request_is_checked_against_the_tokens_scopes() {
    let server = TestServer::start().await;
    let carol = session(&server, "carol").await;
    let settings = json!({"board_size": 9});

    let read = token(&server, &carol, json!(["read"])).await;
    let mut reader = connect(&server, &read).await;
    reader.ok(json!({"type": "list_games"})).await;
    reader.ok(json!({"type": "watch_lobby"})).await;
    let refused = reader
        .refused(
            json!({"type": "seek", "settings": settings}),
            "insufficient_scope",
        )
        .await;
    assert!(refused["message"].as_str().unwrap_or("").contains("`play`"));
    reader
        .refused(
            json!({"type": "automatch", "sizes": [9], "speeds": ["live"]}),
            "insufficient_scope",
        )
        .await;
    assert_eq!(save_review(&server, &read).await, 403);
    // The `auth` message takes a personal token too, with its scopes.
    let mut later = server.anonymous().await;
    let authenticated = later.ok(json!({"type": "auth", "token": read})).await;
    assert_eq!(authenticated["user"]["id"], "carol");
    later
        .refused(
            json!({"type": "seek", "settings": settings}),
            "insufficient_scope",
        )
        .await;

    let play = token(&server, &carol, json!(["play"])).await;
    let mut player = connect(&server, &play).await;
    player
        .ok(json!({"type": "seek", "settings": settings}))
        .await;
    player
        .refused(
            json!({"type": "offer", "offer": {"board_sizes": [9]}}),
            "insufficient_scope",
        )
        .await;

    // A personal token cannot manage tokens, nor the account.
    let (status, body) = create(&server, &play, "more", json!(["play"])).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("session_required"))
    );
    let (status, body) = http_json(
        &server,
        "POST",
        "/api/auth/password",
        Some(&play),
        Some(json!({"old": "correct horse battery", "new": "another fine password"})),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("session_required"))
    );
    let (status, body) = http_json(&server, "GET", "/api/tokens", Some(&play), None).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("session_required"))
    );

    // Scopes the account may not hold, none, unknown ones, a bad expiry.
    for (scopes, code) in [
        (json!(["bot"]), "scope_not_allowed"),
        (json!(["tournament:direct"]), "scope_not_allowed"),
        (json!([]), "invalid_scope"),
        (json!(["admin"]), "bad_request"),
    ] {
        let (status, body) = create(&server, &carol, "x", scopes.clone()).await;
        assert_eq!(body["code"], code, "{scopes}: {body}");
        assert!(status == 400 || status == 403, "{status}");
    }
    let (status, body) = http_json(
        &server,
        "POST",
        "/api/tokens",
        Some(&carol),
        Some(json!({"name": "x", "scopes": ["read"], "expires_in_days": 0})),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid_expiry"))
    );
    let (status, body) = create(&server, &carol, "  ", json!(["read"])).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid_token_name"))
    );
    // A referee may hold the director's scope.
    let referee = server.token_as("rita", tengen::protocol::Role::Referee);
    server.account("rita").await;
    let store = server
        .server
        .as_ref()
        .expect("running")
        .hub()
        .store()
        .clone();
    tokio::task::spawn_blocking(move || {
        store.update_user("rita", &UserChange::Role(tengen::protocol::Role::Referee))
    })
    .await
    .expect("the store call")
    .expect("role");
    let (status, body) = create(&server, &referee, "td", json!(["tournament:direct"])).await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test]
async fn an_account_holds_a_bounded_number_of_tokens() {
    let server = TestServer::start_with(|c| c.auth.max_personal_tokens = 2).await;
    let dan = session(&server, "dan").await;
    let first = create(&server, &dan, "one", json!(["read"])).await.1;
    create(&server, &dan, "two", json!(["read"])).await;
    let (status, body) = create(&server, &dan, "three", json!(["read"])).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (409, Some("too_many_tokens"))
    );
    let (_, list) = http_json(&server, "GET", "/api/tokens", Some(&dan), None).await;
    assert_eq!(list["max"], 2);
    let id = first["id"].as_str().expect("id");
    http_json(
        &server,
        "DELETE",
        &format!("/api/tokens/{id}"),
        Some(&dan),
        None,
    )
    .await;
    let (status, _) = create(&server, &dan, "three", json!(["read"])).await;
    assert_eq!(status, 201, "a revoked token frees its place");
    // A guest holds none.
    let guest = http_json(&server, "POST", "/api/auth/guest", None, None)
        .await
        .1;
    let guest = guest["access_token"].as_str().expect("a guest's token");
    let (status, body) = create(&server, guest, "g", json!(["read"])).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("forbidden")));
}

#[tokio::test]
async fn an_account_without_rated_games_becomes_a_bot_and_is_listed() {
    let dir = tempfile::tempdir().expect("temp dir");
    common::seed_rated_games(dir.path(), &[("r1", "erin", "zed", "B+R", 9)]);
    let server = TestServer::start_in(dir, |_| {}).await;
    let erin = session(&server, "erin").await;
    let (status, body) = http_json(
        &server,
        "POST",
        "/api/account/bot",
        Some(&erin),
        Some(json!({"confirm": "erin"})),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (409, Some("rated_games_played"))
    );

    let fay = session(&server, "fay").await;
    let play = token(&server, &fay, json!(["play"])).await;
    let mut open = connect(&server, &fay).await;
    let (status, body) = http_json(
        &server,
        "POST",
        "/api/account/bot",
        Some(&fay),
        Some(json!({"confirm": "Fay!"})),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("confirmation_required"))
    );
    let (status, body) = http_json(
        &server,
        "POST",
        "/api/account/bot",
        Some(&fay),
        Some(json!({"confirm": "fay"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["user"]["role"], "bot");
    // Its open connections end, and come back as the bot.
    assert_eq!(open.closed().await, Some(REVOKED));
    let again = connect(&server, &fay).await;
    assert_eq!(again.welcome["user"]["role"], "bot");
    let (status, body) = http_json(
        &server,
        "POST",
        "/api/account/bot",
        Some(&fay),
        Some(json!({"confirm": "fay"})),
    )
    .await;
    assert_eq!((status, body["code"].as_str()), (409, Some("not_a_player")));

    // A `play` token no longer acts for the bot; a `bot` token does.
    let mut with_play = connect(&server, &play).await;
    with_play
        .refused(
            json!({"type": "seek", "settings": {"board_size": 9}}),
            "insufficient_scope",
        )
        .await;
    let bot = token(&server, &fay, json!(["bot"])).await;
    let mut with_bot = connect(&server, &bot).await;
    with_bot
        .ok(json!({"type": "offer", "offer": {"board_sizes": [9]}}))
        .await;

    let profile = json!({
        "engine": "GNU Go 3.8",
        "offer": {"board_sizes": [9, 13], "time_systems": ["fischer"]},
        "rated": "either"
    });
    let (status, body) = http_json(
        &server,
        "PUT",
        "/api/account/bot-profile",
        Some(&bot),
        Some(profile.clone()),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = http_json(
        &server,
        "PUT",
        "/api/account/bot-profile",
        Some(&erin),
        Some(profile),
    )
    .await;
    assert_eq!((status, body["code"].as_str()), (403, Some("not_a_bot")));
    let (status, page) = http_json(&server, "GET", "/api/bots", None, None).await;
    assert_eq!(status, 200);
    let bots = page["bots"].as_array().expect("bots");
    assert_eq!(bots.len(), 1, "{page}");
    assert_eq!(bots[0]["user"]["id"], "fay");
    assert_eq!(bots[0]["online"], true);
    assert_eq!(bots[0]["profile"]["engine"], "GNU Go 3.8");
    assert_eq!(bots[0]["profile"]["offer"]["board_sizes"], json!([9, 13]));
}

const GNUGO: &str = "/usr/games/gnugo";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tengen_bot_plays_a_game_on_a_personal_token() {
    assert!(
        Path::new(GNUGO).exists(),
        "GNU Go is missing at {GNUGO}: `apt-get install gnugo`"
    );
    let server = TestServer::start().await;
    let kuro = session(&server, "kuro").await;
    let (status, _) = http_json(
        &server,
        "POST",
        "/api/account/bot",
        Some(&kuro),
        Some(json!({"confirm": "kuro"})),
    )
    .await;
    assert_eq!(status, 200);
    let secret = token(&server, &kuro, json!(["bot"])).await;
    let log = server.dir.path().join("bot.log");
    let mut bot = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args([
            "bot",
            "--server",
            &server.url,
            "--offer-sizes",
            "9",
            "--games",
            "1",
        ])
        .args([
            "--engine",
            &format!("{GNUGO} --mode gtp --chinese-rules --level 1"),
        ])
        .env("TENGEN_BOT_TOKEN", &secret)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .kill_on_drop(true)
        .spawn()
        .expect("tengen bot starts");
    let mut alice = server.login("alice").await;
    let until = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let bots = alice.ok(json!({"type": "list_bots"})).await;
        if bots["bots"]
            .as_array()
            .is_some_and(|b| b.iter().any(|l| l["user"]["id"] == "kuro"))
        {
            break;
        }
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            tokio::time::Instant::now() < until,
            "the bot never posted its offer: {text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let settings = json!({"board_size": 9, "color": "black"});
    alice
        .ok(json!({"type": "challenge", "opponent": "kuro", "settings": settings}))
        .await;
    let started = alice.recv_type("game_started").await;
    assert_eq!(started["white"]["id"], "kuro");
    let game = started["game_id"].as_str().expect("game id").to_string();
    alice.ok(json!({"type": "join", "game_id": game})).await;
    alice.recv_type("snapshot").await;
    common::play(&mut alice, &game, 1, "E5").await;
    let reply: Value = alice.recv_type("move_played").await;
    assert_eq!(
        (reply["color"].as_str(), reply["move_number"].as_u64()),
        (Some("white"), Some(2))
    );
    alice.ok(json!({"type": "resign", "game_id": game})).await;
    assert_eq!(alice.recv_type("game_ended").await["result"], "W+R");
    let status = tokio::time::timeout(Duration::from_secs(20), bot.wait())
        .await
        .expect("the bot stops after its game")
        .expect("wait");
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
}
