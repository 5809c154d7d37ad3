//! Hostile input through a real server: token claims, display names, game settings and
//! the local dev login. Each refusal is checked for its code, for naming what is wrong,
//! and for changing nothing.

mod common;

use common::{Client, TestServer, moves_seen};
use serde_json::{Value, json};
use tengen::auth::{claims_for, load_or_create_secret, sign};
use tengen::config::AuthConfig;
use tengen::protocol::Role;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A token signed with `server`'s secret (read from its data directory).
fn token(server: &TestServer, sub: &str, name: Option<&str>) -> String {
    let secret = load_or_create_secret(&AuthConfig::default(), server.dir.path()).expect("secret");
    sign(&secret, &claims_for(sub, name, Role::Player, 3600)).expect("sign")
}

/// Connects with `token`: the user of the `welcome`, or the refusal's message.
async fn connect(server: &TestServer, token: &str) -> Result<Value, String> {
    let mut client = Client::connect(&format!("{}?token={token}", server.url)).await;
    if client.welcome["type"] == "welcome" {
        return Ok(client.welcome["user"].clone());
    }
    assert_eq!(client.welcome["code"], "unauthorized", "{}", client.welcome);
    assert_eq!(client.closed().await, Some(4001));
    Err(client.welcome["message"]
        .as_str()
        .expect("a message")
        .to_string())
}

/// A plain HTTP/1.1 request: status, headers and body.
async fn http(server: &TestServer, method: &str, path: &str, body: &str) -> (u16, String, String) {
    http_with(server, method, path, "", body).await
}

#[tokio::test]
async fn a_sub_is_limited_in_characters_not_bytes() {
    let server = TestServer::start().await;
    // 33 characters, 66 bytes: within the 64 characters the docs promise.
    let sub = "é".repeat(33);
    let user = connect(&server, &token(&server, &sub, None)).await.unwrap();
    assert_eq!(user["id"], sub);
    let sub = "é".repeat(64);
    assert_eq!(
        connect(&server, &token(&server, &sub, None)).await.unwrap()["id"],
        sub
    );
    let refused = connect(&server, &token(&server, &"é".repeat(65), None))
        .await
        .unwrap_err();
    assert!(
        refused.contains("`sub`") && refused.contains("64"),
        "{refused}"
    );
    let refused = connect(&server, &token(&server, "a\u{7}b", None))
        .await
        .unwrap_err();
    assert!(
        refused.contains("`sub`") && refused.contains("control"),
        "{refused}"
    );
    server.stop().await;
}

#[tokio::test]
async fn display_names_are_bounded_and_trimmed() {
    let server = TestServer::start().await;
    let user = connect(&server, &token(&server, "ann", Some("  Ann Lee  ")))
        .await
        .unwrap();
    assert_eq!(user["name"], "Ann Lee");
    let forty = "名".repeat(40);
    let user = connect(&server, &token(&server, "ann", Some(&forty)))
        .await
        .unwrap();
    assert_eq!(user["name"], forty);
    // An empty name falls back to the user id, as a missing one does.
    let user = connect(&server, &token(&server, "ann", Some(" ")))
        .await
        .unwrap();
    assert_eq!(user["name"], "ann");
    for bad in ["x".repeat(41), "x".repeat(5000), "Ann\nLee".into()] {
        let refused = connect(&server, &token(&server, "ann", Some(&bad)))
            .await
            .unwrap_err();
        assert!(refused.contains("`name`"), "{refused}");
    }
    // The same check on `auth`, which keeps the connection open and anonymous.
    let mut anon = server.anonymous().await;
    let long = token(&server, "ann", Some(&"x".repeat(41)));
    let reply = anon
        .refused(json!({"type": "auth", "token": long}), "unauthorized")
        .await;
    assert!(reply["message"].as_str().unwrap().contains("40"), "{reply}");
    anon.ok(json!({"type": "ping"})).await;
    server.stop().await;
}

#[tokio::test]
async fn dev_login_names_are_bounded_in_characters() {
    let server = TestServer::start().await;
    let name = "é".repeat(40);
    let (status, _, body) = http(
        &server,
        "POST",
        "/api/dev-login",
        &json!({ "name": name }).to_string(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    for bad in ["x".repeat(41), "a\u{1b}b".into()] {
        let (status, head, body) = http(
            &server,
            "POST",
            "/api/dev-login",
            &json!({ "name": bad }).to_string(),
        )
        .await;
        assert_eq!(status, 400, "{body}");
        assert!(head.contains("application/json"), "{head}");
        let error: Value = serde_json::from_str(&body).unwrap();
        assert!(error["error"].as_str().unwrap().contains("name"), "{body}");
    }
    server.stop().await;
}

#[tokio::test]
async fn the_dev_login_is_off_by_default_beyond_loopback() {
    let server = TestServer::start_with(|c| c.listen = "0.0.0.0:0".parse().unwrap()).await;
    let (_, _, body) = http(&server, "GET", "/api/dev-login", "").await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["enabled"],
        false
    );
    let (status, _, body) = http(&server, "POST", "/api/dev-login", r#"{"name":"eve"}"#).await;
    assert_eq!(status, 403, "{body}");
    server.stop().await;
}

/// Bad settings, each with the field its refusal must name.
const BAD_SETTINGS: &[(&str, &str)] = &[
    (r#"{"board_size": -1}"#, "settings.board_size"),
    (r#"{"board_size": "9"}"#, "settings.board_size"),
    (r#"{"board_size": 26}"#, "settings.board_size"),
    (r#"{"komi": 7.25}"#, "settings.komi"),
    (r#"{"komi": 600}"#, "settings.komi"),
    (r#"{"komi": 1500}"#, "settings.komi"),
    (r#"{"komi": "7.5"}"#, "settings.komi"),
    (r#"{"ruleset": "go"}"#, "settings.ruleset"),
    (r#"{"color": "red"}"#, "settings.color"),
    (r#"{"handicap": 300}"#, "settings.handicap"),
    (r#"{"scoring_ms": -1}"#, "settings.scoring_ms"),
    (r#"{"boardsize": 9}"#, "settings.boardsize"),
    (r#"{"clock": 5}"#, "settings.clock"),
    (r#"{"clock": {}}"#, "settings.clock.system"),
    (
        r#"{"clock": {"system": "hourglass"}}"#,
        "settings.clock.system",
    ),
    (
        r#"{"clock": {"system": "absolute", "main_ms": -5}}"#,
        "settings.clock.main_ms",
    ),
    (
        r#"{"clock": {"system": "byoyomi", "main_ms": 0, "periods": 1.5, "period_ms": 1000}}"#,
        "settings.clock.periods",
    ),
    (
        r#"{"clock": {"system": "canadian", "main_ms": 0, "moves": 10}}"#,
        "settings.clock.block_ms",
    ),
    (
        r#"{"clock": {"system": "none", "main_ms": 60000}}"#,
        "settings.clock.main_ms",
    ),
    (
        r#"{"clock": {"system": "none", "periods": 5, "period_ms": 30000}}"#,
        "settings.clock.",
    ),
    (
        r#"{"clock": {"system": "absolute", "main_ms": 1000, "periods": 3}}"#,
        "settings.clock.periods",
    ),
];

#[tokio::test]
async fn bad_settings_are_refused_naming_the_field_and_change_nothing() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    for (settings, field) in BAD_SETTINGS {
        let settings: Value = serde_json::from_str(settings).unwrap();
        let reply = alice
            .refused(json!({"type": "seek", "settings": settings}), "bad_request")
            .await;
        let message = reply["message"].as_str().unwrap();
        assert!(message.contains(field), "{settings}: {message}");
        assert!(!message.contains("1000"), "{settings}: {message}");
    }
    let seeks = alice.ok(json!({"type": "list_seeks"})).await;
    assert_eq!(seeks["challenges"], json!([]), "a refusal created a seek");
    // The bound the docs give for komi is the one the messages give.
    let reply = alice
        .refused(
            json!({"type": "seek", "settings": {"komi": 500.5}}),
            "bad_request",
        )
        .await;
    assert!(
        reply["message"].as_str().unwrap().contains("500"),
        "{reply}"
    );
    alice
        .ok(json!({"type": "seek", "settings": {"komi": -500, "clock": {"system": "none"}}}))
        .await;
    server.stop().await;
}

/// The frames of the ```json client refused and ```json server blocks of a doc page, in
/// order, each marked `true` when refused.
fn documented_frames(page: &str) -> Vec<(bool, Value)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("client-protocol")
        .join(page);
    let text = std::fs::read_to_string(&path).expect("the page");
    let mut frames = Vec::new();
    let mut block: Option<(bool, String)> = None;
    for line in text.lines() {
        match (&mut block, line.trim()) {
            (None, "```json client refused") => block = Some((true, String::new())),
            (None, "```json server") => block = Some((false, String::new())),
            (Some((refused, body)), "```") => {
                let stream = serde_json::Deserializer::from_str(body).into_iter::<Value>();
                frames.extend(stream.map(|v| (*refused, v.expect("JSON"))));
                block = None;
            }
            (Some((_, body)), line) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, _) => {}
        }
    }
    frames
}

#[tokio::test]
async fn the_documented_settings_refusals_are_the_server_s_own() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let frames = documented_frames("lobby.md");
    let mut checked = 0;
    for (i, (refused, frame)) in frames.iter().enumerate() {
        if !refused {
            continue;
        }
        let documented = frames[i..]
            .iter()
            .find(|(r, v)| !r && v["type"] == "error" && v["id"] == frame["id"])
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no documented answer to {frame}"));
        alice.send(frame.clone()).await;
        let reply = alice.recv().await;
        assert_eq!(&reply, documented, "the server's answer to {frame}");
        checked += 1;
    }
    assert!(checked >= 3, "lobby.md lost its refused settings");
    // errors.md shows the answers to two of them without the requests.
    let errors = documented_frames("errors.md");
    for (id, settings) in [(13, json!({"boardsize": 9})), (4, json!({"komi": 7.25}))] {
        let documented = errors
            .iter()
            .find(|(_, v)| v["id"] == id && v["code"] == "bad_request")
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("errors.md lost its bad_request with id {id}"));
        alice
            .send(json!({"type": "seek", "id": id, "settings": settings}))
            .await;
        assert_eq!(&alice.recv().await, documented);
    }
    server.stop().await;
}

/// The first frame of a WebSocket upgraded with `Authorization: <authorization>`.
async fn welcome_with_header(server: &TestServer, authorization: &str) -> Value {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = server.url.as_str().into_client_request().expect("request");
    request
        .headers_mut()
        .insert("authorization", authorization.parse().expect("header"));
    let (mut ws, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("upgrade");
    loop {
        let msg = tokio::time::timeout(common::WAIT, ws.next())
            .await
            .expect("a frame within the wait")
            .expect("open")
            .expect("a frame");
        if let tokio_tungstenite::tungstenite::Message::Text(t) = msg {
            return serde_json::from_str(t.as_str()).expect("JSON");
        }
    }
}

#[tokio::test]
async fn the_bearer_scheme_is_read_in_any_case() {
    let server = TestServer::start().await;
    let alice = token(&server, "alice", None);
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let welcome = welcome_with_header(&server, &format!("{scheme} {alice}")).await;
        assert_eq!(welcome["type"], "welcome", "{scheme}: {welcome}");
        assert_eq!(welcome["user"]["id"], "alice", "{scheme}: {welcome}");
    }
    // Another scheme is not a token: the connection is anonymous, as without the header.
    let welcome = welcome_with_header(&server, &format!("Basic {alice}")).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    assert!(welcome.get("user").is_none_or(Value::is_null), "{welcome}");
    // A lower-case scheme with a bad token is refused, not ignored.
    let refused = welcome_with_header(&server, "bearer not-a-token").await;
    assert_eq!(refused["code"], "unauthorized", "{refused}");
}

#[tokio::test]
async fn a_message_with_a_key_twice_is_refused_not_read_as_its_last() {
    let server = TestServer::start().await;
    let mut client = server.anonymous().await;
    client
        .send_text(r#"{"type":"ping","id":8,"type":"list_games"}"#.to_string())
        .await;
    let reply = client.recv().await;
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["code"], "bad_request");
    assert_eq!(reply["id"], 8);
    assert_eq!(reply["message"], "bad message: duplicate field `type`");
    // Nothing was done, and the connection goes on.
    client.ok(json!({"type": "ping"})).await;
    assert!(client.pending().is_empty(), "{:?}", client.pending());
}

/// A token for `sub` with a display name and a role.
fn token_as(server: &TestServer, sub: &str, name: &str, role: Role) -> String {
    let secret = load_or_create_secret(&AuthConfig::default(), server.dir.path()).expect("secret");
    sign(&secret, &claims_for(sub, Some(name), role, 3600)).expect("sign")
}

#[tokio::test]
async fn a_fresh_token_of_the_same_user_brings_its_new_name_and_role_to_the_connection() {
    let server = TestServer::start().await;
    let mut black = server.login("black").await;
    let mut white = server.login("white").await;
    let settings = json!({"board_size": 9, "color": "black", "fair_play": "tournament", "spectator_delay_moves": 2});
    let id = common::start_game(&mut black, &mut white, settings).await;

    // An admin watches the tournament game live.
    let admin = token_as(&server, "li", "Li", Role::Admin);
    let mut li = Client::connect(&format!("{}?token={admin}", server.url)).await;
    li.ok(json!({"type": "list_referee_calls"})).await;
    li.ok(json!({"type": "join", "game_id": id})).await;
    li.recv_type("snapshot").await;

    // Demoted: the reply names the new role, and the connection acts as it from now on.
    let player = token_as(&server, "li", "Li Wei", Role::Player);
    let reply = li.ok(json!({"type": "auth", "token": player})).await;
    assert_eq!(
        reply["user"],
        json!({"id": "li", "name": "Li Wei", "role": "player"})
    );
    li.refused(json!({"type": "list_referee_calls"}), "forbidden")
        .await;
    let seek = li
        .ok(json!({"type": "seek", "settings": {"board_size": 9}}))
        .await;
    assert_eq!(seek["challenge"]["from"]["name"], "Li Wei", "{seek}");
    // In the game it is a spectator now, and sees the moves two behind.
    li.clear();
    for (n, v) in [(1, "E5"), (2, "C3"), (3, "G7")] {
        let mover = if n % 2 == 1 { &mut black } else { &mut white };
        common::play(mover, &id, n, v).await;
    }
    assert_eq!(moves_seen(&mut li).await, [1]);

    // Promoted again: admin rights, and the game live, from a snapshot of now.
    li.clear();
    li.ok(json!({"type": "auth", "token": admin})).await;
    let snapshot = li
        .pending()
        .iter()
        .find(|v| v["type"] == "snapshot")
        .cloned();
    let snapshot = snapshot.expect("the game is seen anew as an admin sees it");
    assert_eq!(snapshot["game_id"], id.as_str());
    li.ok(json!({"type": "list_referee_calls"})).await;
    li.clear();
    common::play(&mut white, &id, 4, "C7").await;
    assert_eq!(moves_seen(&mut li).await, [4]);
}

/// A plain HTTP/1.1 request with extra header lines: status, head (lower case), body.
async fn http_with(
    server: &TestServer,
    method: &str,
    path: &str,
    extra: &str,
    body: &str,
) -> (u16, String, String) {
    let addr = server.server.as_ref().expect("running").addr();
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.expect("read");
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").expect("a response");
    let status = head
        .split(' ')
        .nth(1)
        .expect("status")
        .parse()
        .expect("code");
    (status, head.to_ascii_lowercase(), body.to_string())
}

#[tokio::test]
async fn api_and_sgf_answers_say_nosniff() {
    let server = TestServer::start().await;
    for path in [
        "/api/games",
        "/api/games/none/sgf",
        "/api/ratings",
        "/api/reviews/none",
    ] {
        let (_, head, _) = http(&server, "GET", path, "").await;
        assert!(
            head.contains("x-content-type-options: nosniff"),
            "{path}: {head}"
        );
    }
    let (status, head, _) = http(&server, "POST", "/api/reviews", "{}").await;
    assert_eq!(status, 401);
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");
}

#[tokio::test]
async fn the_page_may_connect_only_to_its_own_server() {
    let policy = |head: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix("content-security-policy: "))
            .expect("a policy")
            .to_owned()
    };
    let server = TestServer::start().await;
    let addr = server.server.as_ref().expect("running").addr();
    let (_, head, _) = http(&server, "GET", "/", "").await;
    let csp = policy(&head);
    assert!(
        csp.contains(&format!("connect-src 'self' ws://{addr} wss://{addr};")),
        "{csp}"
    );
    assert!(
        !csp.contains(" ws: ") && !csp.contains(" wss:;"),
        "any host: {csp}"
    );
    // A Host header cannot write into the policy.
    let (_, head, _) = http_with(
        &server,
        "GET",
        "/",
        "Host: evil.example; script-src *\r\n",
        "",
    )
    .await;
    let csp = policy(&head);
    assert!(
        !csp.contains("evil") && !csp.contains("script-src *"),
        "{csp}"
    );
    // Behind a proxy, the public address names it.
    let proxied = TestServer::start_with(|c| {
        c.auth.public_url = Some("https://go.example.org".into());
    })
    .await;
    let (_, head, _) = http(&proxied, "GET", "/", "").await;
    assert!(
        policy(&head).contains("connect-src 'self' wss://go.example.org;"),
        "{head}"
    );
}

#[tokio::test]
async fn a_short_hs256_secret_is_refused_in_the_settings_and_in_the_file() {
    let refused =
        tengen::config::Config::load(None, [("TENGEN_AUTH__SECRET".to_string(), "a".to_string())])
            .expect_err("a one-byte secret");
    let said = refused.to_string();
    assert!(
        said.contains("auth.secret") && said.contains("32"),
        "{said}"
    );
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("jwt-secret"), "short\n").expect("written");
    let config = tengen::config::Config {
        listen: "127.0.0.1:0".parse().expect("addr"),
        data_dir: dir.path().to_path_buf(),
        ..Default::default()
    };
    let refused = tengen::server::Server::start(config)
        .await
        .err()
        .expect("a five-byte secret file");
    let said = refused.to_string();
    assert!(said.contains("jwt-secret") && said.contains("32"), "{said}");
}

#[cfg(unix)]
#[tokio::test]
async fn the_store_files_are_their_owners_alone_in_an_open_data_directory() {
    use std::os::unix::fs::PermissionsExt;
    // As a shell's usual umask would leave them: readable by all unless made private.
    // SAFETY: umask(2) only sets the process's mask; it cannot fail.
    unsafe { libc::umask(0o022) };
    let dir = tempfile::tempdir().expect("dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let server = TestServer::start_in(dir, |_| {}).await;
    let mut alice = server.login("alice").await;
    alice.ok(json!({"type": "ping"})).await;
    let dir = server.stop().await;
    for file in ["tengen.db", "tengen.db-wal", "tengen.db-shm", "jwt-secret"] {
        let path = dir.path().join(file);
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{file}");
    }
    assert!(dir.path().join("tengen.db").exists());
}

#[tokio::test]
async fn a_guest_keeps_few_reviews() {
    let server = TestServer::start_with(|c| c.limits.max_reviews_per_guest = 2).await;
    let (status, _, body) = http(&server, "POST", "/api/auth/guest", "").await;
    assert_eq!(status, 201, "{body}");
    let guest: Value = serde_json::from_str(&body).expect("JSON");
    let token = guest["access_token"].as_str().expect("a token");
    let auth = format!("Authorization: Bearer {token}\r\n");
    let review = json!({"sgf": "(;FF[4]GM[1]SZ[9];B[ee])"}).to_string();
    for _ in 0..2 {
        let (status, _, body) = http_with(&server, "POST", "/api/reviews", &auth, &review).await;
        assert_eq!(status, 201, "{body}");
    }
    let (status, _, body) = http_with(&server, "POST", "/api/reviews", &auth, &review).await;
    assert_eq!(status, 409, "{body}");
    // An account keeps more.
    let alice = format!("Authorization: Bearer {}\r\n", server.token("alice"));
    for _ in 0..3 {
        let (status, _, body) = http_with(&server, "POST", "/api/reviews", &alice, &review).await;
        assert_eq!(status, 201, "{body}");
    }
}

#[tokio::test]
async fn chat_is_rated_per_user_and_capped_per_game() {
    let server = TestServer::start_with(|c| {
        c.limits.chat_lines_per_minute = 3;
        c.limits.max_chat_bytes_per_game = 1000;
    })
    .await;
    let settings = json!({"board_size": 9, "color": "black"});
    let (mut alice, mut bob) = (server.login("alice").await, server.login("bob").await);
    let first = common::start_game(&mut alice, &mut bob, settings.clone()).await;
    let (mut carol, mut dave) = (server.login("carol").await, server.login("dave").await);
    let second = common::start_game(&mut carol, &mut dave, settings).await;

    // One user: 3 lines a minute over all connections and games.
    let mut erin = server.login("erin").await;
    let mut erin_too = server.login("erin").await;
    for c in [&mut erin, &mut erin_too] {
        c.ok(json!({"type": "join", "game_id": first})).await;
        c.ok(json!({"type": "join", "game_id": second})).await;
    }
    erin.ok(json!({"type": "chat", "game_id": first, "text": "hi"}))
        .await;
    erin.ok(json!({"type": "chat", "game_id": second, "text": "hi"}))
        .await;
    erin_too
        .ok(json!({"type": "chat", "game_id": first, "text": "hi"}))
        .await;
    let refused = erin_too
        .refused(
            json!({"type": "chat", "game_id": second, "text": "hi"}),
            "rate_limited",
        )
        .await;
    assert!(refused["retry_after_ms"].as_u64().is_some(), "{refused}");

    // One game: 1000 bytes of chat, whoever writes them.
    let line = "x".repeat(400);
    alice
        .ok(json!({"type": "chat", "game_id": first, "text": line}))
        .await;
    bob.ok(json!({"type": "chat", "game_id": first, "text": line}))
        .await;
    alice
        .refused(
            json!({"type": "chat", "game_id": first, "text": line}),
            "limit_reached",
        )
        .await;
    // Another game's chat is its own.
    carol
        .ok(json!({"type": "chat", "game_id": second, "text": line}))
        .await;

    // A restart does not give the game a fresh budget: its lines are in the store.
    drop((alice, bob, carol, dave, erin, erin_too));
    let dir = server.stop().await;
    let server = TestServer::start_in(dir, |c| {
        c.limits.chat_lines_per_minute = 30;
        c.limits.max_chat_bytes_per_game = 1000;
    })
    .await;
    let mut alice = server.login("alice").await;
    alice.ok(json!({"type": "join", "game_id": first})).await;
    alice
        .refused(
            json!({"type": "chat", "game_id": first, "text": line}),
            "limit_reached",
        )
        .await;
    alice
        .ok(json!({"type": "chat", "game_id": first, "text": "x".repeat(150)}))
        .await;
}
