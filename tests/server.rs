//! The game server through real WebSockets: the end-of-game flows, spectators,
//! reconnection, every error code, tokens and floods.

mod common;

use common::{Client, TestServer, play, start_game};
use serde_json::{Value, json};

async fn nine(server: &TestServer) -> (Client, Client, String) {
    let mut black = server.login("black").await;
    let mut white = server.login("white").await;
    let id = start_game(
        &mut black,
        &mut white,
        json!({"board_size": 9, "color": "black"}),
    )
    .await;
    (black, white, id)
}

/// The game's state as a fresh spectator sees it.
async fn snapshot(server: &TestServer, id: &str) -> Value {
    let mut c = server.anonymous().await;
    c.ok(json!({"type": "join", "game_id": id})).await;
    c.recv_type("snapshot").await
}

#[tokio::test]
async fn resignation_ends_the_game_at_once() {
    let server = TestServer::start().await;
    let (mut black, mut white, id) = nine(&server).await;
    play(&mut black, &id, 1, "E5").await;
    // Resigning is allowed out of turn.
    black.ok(json!({"type": "resign", "game_id": id})).await;
    let ended = white.recv_type("game_ended").await;
    assert_eq!(ended["result"], "W+R");
    assert_eq!(ended["reason"], "resignation");
    white
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 2, "vertex": "C3"}),
            "wrong_phase",
        )
        .await;
    let s = snapshot(&server, &id).await;
    assert_eq!(s["phase"], "ended");
    assert_eq!(s["result"], "W+R");
}

#[tokio::test]
async fn a_dispute_resumes_play_and_a_second_counts_every_stone_alive() {
    let server = TestServer::start().await;
    let (mut black, mut white, id) = nine(&server).await;
    for (n, v) in [(1, "E5"), (2, "A1"), (3, "pass"), (4, "pass")] {
        let c = if n % 2 == 1 { &mut black } else { &mut white };
        play(c, &id, n, v).await;
    }
    assert_eq!(white.recv_type("scoring_started").await["disputes"], 0);
    assert_eq!(black.recv_type("scoring_started").await["disputes"], 0);
    black
        .ok(json!({"type": "mark_dead", "game_id": id, "vertex": "A1"}))
        .await;
    white.recv_type("dead_marked").await;
    white
        .ok(json!({"type": "reject_score", "game_id": id}))
        .await;
    let resumed = black.recv_type("play_resumed").await;
    assert_eq!(resumed["by"], "white");
    // The turn after the two passes: Black's. The passes stay in the record.
    assert_eq!(resumed["to_move"], "black");
    // One pass after resuming does not end play again.
    play(&mut black, &id, 5, "pass").await;
    play(&mut white, &id, 6, "B1").await;
    play(&mut black, &id, 7, "pass").await;
    play(&mut white, &id, 8, "pass").await;
    assert_eq!(black.recv_type("scoring_started").await["disputes"], 1);
    black
        .ok(json!({"type": "mark_dead", "game_id": id, "vertex": "A1"}))
        .await;
    black
        .ok(json!({"type": "accept_score", "game_id": id}))
        .await;
    white
        .ok(json!({"type": "reject_score", "game_id": id}))
        .await;
    let ended = white.recv_type("game_ended").await;
    // Every stone lives: Black E5, White A1 and B1. The one empty region touches both
    // colours, so its 78 points are split: Black 1 + 39, White 2 + 39; 40 - 41 - 7.5.
    assert_eq!(ended["score"]["dead"], json!([]), "{ended}");
    assert_eq!(ended["reason"], "score");
    assert_eq!(ended["score"]["black"], 40.0);
    assert_eq!(ended["score"]["white"], 41.0);
    assert_eq!(ended["result"], "W+8.5");
    let s = snapshot(&server, &id).await;
    assert_eq!(
        s["moves"].as_array().unwrap().len(),
        8,
        "the record keeps every pass"
    );
}

#[tokio::test]
async fn three_spectators_see_every_event_in_order() {
    let server = TestServer::start().await;
    let (mut black, mut white, id) = nine(&server).await;
    let mut watchers = Vec::new();
    for _ in 0..3 {
        let mut w = server.anonymous().await;
        w.ok(json!({"type": "join", "game_id": id})).await;
        let snap = w.recv_type("snapshot").await;
        watchers.push((w, snap["seq"].as_u64().unwrap()));
    }
    let script = ["E5", "E4", "D4", "D5", "C5", "F4", "E6", "D6", "F5"];
    for (i, v) in script.iter().enumerate() {
        let n = i as u32 + 1;
        let c = if n % 2 == 1 { &mut black } else { &mut white };
        play(c, &id, n, v).await;
    }
    black
        .ok(json!({"type": "chat", "game_id": id, "text": "good game"}))
        .await;
    for (w, mut last) in watchers.iter_mut().map(|(w, s)| (w, *s)) {
        let mut moves = Vec::new();
        while moves.len() < script.len() {
            let e = w.recv().await;
            if e["type"] == "ack" {
                continue;
            }
            assert_eq!(e["seq"].as_u64(), Some(last + 1), "no gap, no repeat: {e}");
            last += 1;
            if e["type"] == "move_played" {
                moves.push(e["vertex"].as_str().unwrap().to_string());
            }
        }
        assert_eq!(moves, script);
        let chat = w.recv_type("chat").await;
        assert_eq!(chat["text"], "good game");
        assert_eq!(chat["seq"].as_u64(), Some(last + 1));
    }
}

#[tokio::test]
async fn a_client_that_reconnects_gets_exactly_what_it_missed() {
    let server = TestServer::start().await;
    let (mut black, white, id) = nine(&server).await;
    play(&mut black, &id, 1, "E5").await;
    let seen = snapshot(&server, &id).await["seq"].as_u64().unwrap();
    white.close().await;
    // While White is away Black cannot move (it is White's turn) but chats.
    black
        .ok(json!({"type": "chat", "game_id": id, "text": "still there?"}))
        .await;
    let mut white = server.login("white").await;
    white
        .ok(json!({"type": "join", "game_id": id, "since_seq": seen}))
        .await;
    let mut got = Vec::new();
    for v in white.pending().iter() {
        if v.get("seq").is_some() && v["type"] != "ack" {
            got.push((
                v["seq"].as_u64().unwrap(),
                v["type"].as_str().unwrap().to_string(),
            ));
        }
    }
    // Missed: White going offline, the chat; then White coming back online.
    let seqs: Vec<u64> = got.iter().map(|g| g.0).collect();
    let expected: Vec<u64> = (seen + 1..seen + 1 + seqs.len() as u64).collect();
    assert_eq!(
        seqs, expected,
        "exactly the missed events, in order: {got:?}"
    );
    let kinds: Vec<&str> = got.iter().map(|g| g.1.as_str()).collect();
    assert_eq!(kinds, ["presence", "chat", "presence"], "{got:?}");
    assert!(white.pending().iter().all(|v| v["type"] != "snapshot"));
    // And the game goes on.
    play(&mut white, &id, 2, "C3").await;
}

#[tokio::test]
async fn a_reconnect_from_the_start_replays_the_game_and_a_future_seq_is_refused() {
    let server = TestServer::start().await;
    let (_black, _white, id) = nine(&server).await;
    let mut c = server.anonymous().await;
    c.ok(json!({"type": "join", "game_id": id, "since_seq": 0}))
        .await;
    assert!(c.pending().iter().any(|v| v["type"] == "game_created"));
    let mut c = server.anonymous().await;
    c.refused(
        json!({"type": "join", "game_id": id, "since_seq": 999}),
        "bad_request",
    )
    .await;
}

#[tokio::test]
async fn every_error_code_is_answered_and_changes_nothing() {
    let server = TestServer::start_with(|c| {
        c.limits.max_seeks_per_user = 2;
        c.limits.max_message_bytes = 1024;
    })
    .await;
    let (mut black, mut white, id) = nine(&server).await;
    play(&mut black, &id, 1, "E5").await;
    let before = snapshot(&server, &id).await;

    // bad_request: not JSON, not an object, missing field, bad vertex, bad settings.
    black.send_text("{not json".into()).await;
    assert_eq!(black.recv_type("error").await["code"], "bad_request");
    black.send_text("[1,2]".into()).await;
    assert_eq!(black.recv_type("error").await["code"], "bad_request");
    black
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 2}),
            "bad_request",
        )
        .await;
    black
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 2, "vertex": "I5"}),
            "bad_request",
        )
        .await;
    let e = black
        .refused(
            json!({"type": "seek", "settings": {"board_size": 30}}),
            "bad_request",
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("board_size"));
    // unknown_type
    black
        .refused(json!({"type": "teleport"}), "unknown_type")
        .await;
    // unauthorized: acting without a token.
    let mut anon = server.anonymous().await;
    anon.refused(
        json!({"type": "play", "game_id": id, "move_number": 2, "vertex": "C3"}),
        "unauthorized",
    )
    .await;
    anon.refused(json!({"type": "seek", "settings": {}}), "unauthorized")
        .await;
    // forbidden: a spectator with a token acting in someone else's game.
    let mut carol = server.login("carol").await;
    carol
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 2, "vertex": "C3"}),
            "forbidden",
        )
        .await;
    carol
        .refused(json!({"type": "resign", "game_id": id}), "forbidden")
        .await;
    // not_found
    carol
        .refused(
            json!({"type": "join", "game_id": "nosuchgame"}),
            "not_found",
        )
        .await;
    carol
        .refused(
            json!({"type": "accept", "challenge_id": "nope"}),
            "not_found",
        )
        .await;
    // not_your_turn: Black again.
    black
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 2, "vertex": "C3"}),
            "not_your_turn",
        )
        .await;
    // illegal_move, with the rule's reason.
    let e = white
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 2, "vertex": "E5"}),
            "illegal_move",
        )
        .await;
    assert_eq!(e["reason"], "occupied");
    assert_eq!(e["game_id"], id);
    // stale_move: a duplicate or old move number.
    white
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 1, "vertex": "C3"}),
            "stale_move",
        )
        .await;
    white
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 3, "vertex": "C3"}),
            "stale_move",
        )
        .await;
    // wrong_phase: marking dead stones during play.
    white
        .refused(
            json!({"type": "mark_dead", "game_id": id, "vertex": "E5"}),
            "wrong_phase",
        )
        .await;
    // too_large: the connection survives.
    let big = "x".repeat(2000);
    white
        .send(json!({"type": "chat", "game_id": id, "text": big}))
        .await;
    assert_eq!(white.recv_type("error").await["code"], "too_large");
    // limit_reached: the third open seek.
    carol.ok(json!({"type": "seek", "settings": {}})).await;
    carol.ok(json!({"type": "seek", "settings": {}})).await;
    carol
        .refused(json!({"type": "seek", "settings": {}}), "limit_reached")
        .await;

    // Nothing changed: same position, same seq, and the game goes on.
    let after = snapshot(&server, &id).await;
    assert_eq!(after["board"], before["board"]);
    assert_eq!(after["moves"], before["moves"]);
    assert_eq!(after["seq"], before["seq"]);
    play(&mut white, &id, 2, "C3").await;
}

#[tokio::test]
async fn ko_and_suicide_are_refused_with_their_reason() {
    let server = TestServer::start().await;
    let (mut black, mut white, id) = nine(&server).await;
    // A ko at D5/E5: Black D6 C5 D4, White E6 F5 E4; Black takes E5 after White D5... build it.
    let script = ["D6", "E6", "C5", "F5", "D4", "E4", "A9", "D5", "E5"];
    for (i, v) in script.iter().enumerate() {
        let n = i as u32 + 1;
        let c = if n % 2 == 1 { &mut black } else { &mut white };
        play(c, &id, n, v).await;
    }
    // Black E5 captured White D5; White may not retake at once.
    let e = white
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 10, "vertex": "D5"}),
            "illegal_move",
        )
        .await;
    assert_eq!(e["reason"], "ko");
    // Suicide in the corner: Black J1 between White H1 and J2 has no liberty and
    // captures nothing.
    play(&mut white, &id, 10, "H1").await;
    play(&mut black, &id, 11, "G1").await;
    play(&mut white, &id, 12, "J2").await;
    let e = black
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 13, "vertex": "J1"}),
            "illegal_move",
        )
        .await;
    assert_eq!(e["reason"], "suicide");
    // After a move elsewhere the ko may be retaken.
    play(&mut black, &id, 13, "A1").await;
    play(&mut white, &id, 14, "D5").await;
}

/// A JWT with any header and claims and a given signature (for hostile tokens).
fn raw_jwt(header: &Value, claims: &Value, signature: &str) -> String {
    fn b64(bytes: &[u8]) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
            for i in 0..=chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            }
        }
        out
    }
    format!(
        "{}.{}.{}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes()),
        signature
    )
}

async fn refused_at_connect(server: &TestServer, token: &str) {
    let mut c = Client::connect(&format!("{}?token={token}", server.url)).await;
    assert_eq!(c.welcome["type"], "error", "{}", c.welcome);
    assert_eq!(c.welcome["code"], "unauthorized");
    let closed = c.recv().await;
    assert_eq!(closed["type"], "__closed");
    assert_eq!(closed["frame"][0], 4001);
}

#[tokio::test]
async fn forged_expired_and_unsigned_tokens_are_refused() {
    let server = TestServer::start().await;
    let now = tengen::time::wall_ms() / 1000;
    // Signed with another secret.
    let claims = tengen::auth::claims_for("mallory", None, tengen::protocol::Role::Admin, 3600);
    let forged = tengen::auth::sign(b"not the server's secret", &claims).unwrap();
    refused_at_connect(&server, &forged).await;
    // Expired an hour ago (well past any leeway), correctly signed.
    let mut expired_claims =
        tengen::auth::claims_for("alice", None, tengen::protocol::Role::Player, 1);
    expired_claims.exp = (now - 3600) as u64;
    let secret = std::fs::read_to_string(server.dir.path().join("jwt-secret")).unwrap();
    let expired = tengen::auth::sign(secret.trim().as_bytes(), &expired_claims).unwrap();
    refused_at_connect(&server, &expired).await;
    // alg: none, no signature.
    let none = raw_jwt(
        &json!({"alg": "none", "typ": "JWT"}),
        &json!({"sub": "mallory", "role": "admin", "exp": now + 3600}),
        "",
    );
    refused_at_connect(&server, &none).await;
    // HS256 header with a garbage signature.
    let garbage = raw_jwt(
        &json!({"alg": "HS256", "typ": "JWT"}),
        &json!({"sub": "mallory", "exp": now + 3600}),
        "c2lnbmF0dXJl",
    );
    refused_at_connect(&server, &garbage).await;
    // Through `auth` on an open connection: refused, and the connection stays usable.
    let mut c = server.anonymous().await;
    c.refused(json!({"type": "auth", "token": forged}), "unauthorized")
        .await;
    c.ok(json!({"type": "ping"})).await;
    let me = c
        .ok(json!({"type": "auth", "token": server.token("alice")}))
        .await;
    assert_eq!(me["user"]["id"], "alice");
}

#[tokio::test]
async fn a_flooding_client_is_rate_limited_while_another_game_goes_on() {
    let server = TestServer::start_with(|c| {
        c.limits.messages_per_second = 5;
        c.limits.burst = 10;
        c.limits.flood_close_after = 10_000;
    })
    .await;
    let (mut black, mut white, id) = nine(&server).await;
    let mut flooder = server.login("flooder").await;
    for _ in 0..100 {
        flooder.send(json!({"type": "ping"})).await;
    }
    let mut limited = 0;
    let mut pongs = 0;
    while limited + pongs < 100 {
        let v = flooder.recv().await;
        match v["type"].as_str() {
            Some("pong") => pongs += 1,
            Some("error") => {
                assert_eq!(v["code"], "rate_limited");
                limited += 1;
            }
            _ => {}
        }
    }
    assert!(
        limited >= 80,
        "most of the flood is refused: {limited} refused, {pongs} answered"
    );
    assert!(pongs >= 10, "the burst is served: {pongs}");
    // The game next door was never slowed down or refused.
    for (n, v) in [(1, "E5"), (2, "C3"), (3, "G7"), (4, "C7")] {
        let c = if n % 2 == 1 { &mut black } else { &mut white };
        play(c, &id, n, v).await;
    }
}

/// `flood_close_after` refusals in a row, each answered, then the close.
#[tokio::test]
async fn a_client_that_floods_on_is_closed_after_its_refusals_in_a_row() {
    let server = TestServer::start_with(|c| {
        c.limits.messages_per_second = 1;
        c.limits.burst = 5;
        c.limits.flood_close_after = 20;
    })
    .await;
    let mut flooder = server.login("flooder").await;
    for _ in 0..40 {
        flooder.send(json!({"type": "ping"})).await;
    }
    let mut refused_in_row = 0;
    let closed = loop {
        let v = flooder.recv().await;
        match v["type"].as_str() {
            Some("pong") => refused_in_row = 0,
            Some("__closed") => break v,
            _ => {
                assert_eq!(v["code"], "rate_limited", "{v}");
                refused_in_row += 1;
            }
        }
    };
    assert_eq!(closed["frame"][0], 4029, "{closed}");
    assert_eq!(
        refused_in_row, 20,
        "every refusal answered, the 20th the last"
    );
}

#[tokio::test]
async fn a_frame_over_the_hard_limit_closes_only_that_connection() {
    let server = TestServer::start_with(|c| c.limits.max_frame_bytes = 4096).await;
    let (mut black, mut white, id) = nine(&server).await;
    let mut big = server.login("big").await;
    big.send_text("x".repeat(10_000)).await;
    // Closed with 1009, or reset when the server closes before reading the rest.
    let code = big.closed().await;
    assert!(matches!(code, Some(1009) | None), "{code:?}");
    play(&mut black, &id, 1, "E5").await;
    play(&mut white, &id, 2, "C3").await;
}

#[tokio::test]
async fn nigiri_is_a_draw_both_players_can_check() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let created = alice
        .ok(json!({"type": "seek", "settings": {"board_size": 9, "color": "nigiri"}}))
        .await;
    let commitment = created["challenge"]["nigiri_commitment"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        commitment.len(),
        64,
        "a sha256 published before anyone accepts"
    );
    let ack = bob
        .ok(
            json!({"type": "accept", "challenge_id": created["challenge"]["challenge_id"],
            "nigiri_seed": "bob's own randomness"}),
        )
        .await;
    let game_id = ack["game_id"].as_str().unwrap();
    let snap = snapshot(&server, game_id).await;
    let proof = &snap["nigiri"];
    assert_eq!(proof["commitment"], commitment.as_str());
    assert_eq!(proof["seed"], "bob's own randomness");
    let challenger: tengen::rules::Color =
        serde_json::from_value(proof["challenger"].clone()).unwrap();
    assert!(tengen::lobby::nigiri::verify(
        &commitment,
        proof["secret"].as_str().unwrap(),
        "bob's own randomness",
        challenger
    ));
    // The draw decided the seats.
    let alice_seat = if challenger == tengen::rules::Color::Black {
        "black"
    } else {
        "white"
    };
    assert_eq!(snap[alice_seat]["user"]["id"], "alice");
}

#[tokio::test]
async fn a_graceful_shutdown_tells_every_client() {
    let server = TestServer::start().await;
    let (mut black, mut white, id) = nine(&server).await;
    play(&mut black, &id, 1, "E5").await;
    let mut watcher = server.anonymous().await;
    let hub = server.server.as_ref().expect("running").hub().clone();
    // Black is busy with requests as the shutdown begins.
    for i in 0..30 {
        black
            .send(json!({"type": "chat", "game_id": id, "text": format!("line {i}")}))
            .await;
    }
    let dir = server.stop().await;
    assert_eq!(
        hub.open_connections(),
        0,
        "shutdown returns once every session has ended"
    );
    for c in [&mut watcher, &mut black, &mut white] {
        let closing = c.recv_type("closing").await;
        assert!(
            closing["reason"]
                .as_str()
                .unwrap()
                .contains("shutting down")
        );
        assert_eq!(c.closed().await, Some(1001));
    }
    // Everything acknowledged is in the store, which was closed cleanly.
    let store = tengen::store::SqliteStore::open(
        &dir.path().join("tengen.db"),
        tengen::store::SyncMode::Full,
    )
    .unwrap();
    let events = tengen::store::GameStore::events(&store, &id).unwrap();
    assert!(events.iter().any(|e| e.kind == "move_played"));
}

#[tokio::test]
async fn tokens_from_an_external_issuer_are_checked_with_its_public_key() {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    let keys = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/keys");
    let server = TestServer::start_with(|c| {
        c.auth.algorithm = tengen::config::JwtAlgorithm::EdDSA;
        c.auth.public_key_file = Some(keys.join("ed25519-test-public.pem"));
        c.auth.issuer = Some("https://id.example".into());
        c.auth.audience = Some("tengen".into());
        c.auth.dev_login = Some(false);
    })
    .await;
    let private = std::fs::read(keys.join("ed25519-test-private.pem")).unwrap();
    let key = EncodingKey::from_ed_pem(&private).unwrap();
    let mut claims =
        tengen::auth::claims_for("eve", Some("Eve"), tengen::protocol::Role::Player, 600);
    claims.iss = Some("https://id.example".into());
    claims.aud = Some("tengen".into());
    let good = jsonwebtoken::encode(&Header::new(Algorithm::EdDSA), &claims, &key).unwrap();
    let c = Client::connect(&format!("{}?token={good}", server.url)).await;
    assert_eq!(c.welcome["type"], "welcome", "{}", c.welcome);
    assert_eq!(c.welcome["user"]["name"], "Eve");
    // Another issuer or audience is refused, and so is an HS256 token not signed with the
    // server's own secret: each key has its pinned algorithm.
    let mut wrong_iss = claims.clone();
    wrong_iss.iss = Some("https://evil.example".into());
    let t = jsonwebtoken::encode(&Header::new(Algorithm::EdDSA), &wrong_iss, &key).unwrap();
    refused_at_connect(&server, &t).await;
    let mut wrong_aud = claims.clone();
    wrong_aud.aud = Some("someone-else".into());
    let t = jsonwebtoken::encode(&Header::new(Algorithm::EdDSA), &wrong_aud, &key).unwrap();
    refused_at_connect(&server, &t).await;
    let hs = tengen::auth::sign(b"any secret", &claims).unwrap();
    refused_at_connect(&server, &hs).await;
}

/// The author of a seek hears of its end once on each connection, whether that
/// connection watches the lobby (where everyone hears it) or not.
#[tokio::test]
async fn a_withdrawn_seek_is_announced_once_to_each_of_its_authors_connections() {
    let server = TestServer::start().await;
    let mut watching = server.login("alice").await;
    let mut other = server.login("alice").await;
    watching.ok(json!({"type": "watch_lobby"})).await;
    let created = watching
        .ok(json!({"type": "seek", "settings": {"board_size": 9}}))
        .await;
    let id = created["challenge"]["challenge_id"].clone();
    watching
        .ok(json!({"type": "cancel", "challenge_id": id}))
        .await;
    for c in [&mut watching, &mut other] {
        // A ping's answer comes after anything the cancel sent this connection.
        c.ok(json!({"type": "ping"})).await;
        let removed: Vec<&Value> = c
            .pending()
            .iter()
            .filter(|m| m["type"] == "challenge_removed")
            .collect();
        assert_eq!(removed.len(), 1, "{:?}", c.pending());
        assert_eq!(
            (&removed[0]["challenge_id"], &removed[0]["reason"]),
            (&id, &json!("cancelled"))
        );
    }
}

/// Shutdown closes the store only after every session has ended: the players' last
/// requests answered, `closing` and 1001 sent, and their leaving recorded.
#[tokio::test]
async fn a_graceful_shutdown_waits_for_busy_sessions_and_records_their_leaving() {
    let server = TestServer::start().await;
    let mut games = Vec::new();
    for _ in 0..8 {
        games.push(nine(&server).await);
    }
    let hub = server.server.as_ref().expect("running").hub().clone();
    // Each player sends a burst, then reads until the server closes the connection.
    let mut readers = Vec::new();
    let mut ids = Vec::new();
    for (black, white, id) in games {
        for mut c in [black, white] {
            for i in 0..10 {
                c.send(json!({"type": "chat", "game_id": id, "text": format!("line {i}")}))
                    .await;
            }
            readers.push(tokio::spawn(async move {
                c.recv_type("closing").await;
                c.closed().await
            }));
        }
        ids.push(id);
    }
    let dir = server.stop().await;
    assert_eq!(hub.open_connections(), 0, "every session ended first");
    for reader in readers {
        assert_eq!(reader.await.unwrap(), Some(1001));
    }
    let store = tengen::store::SqliteStore::open(
        &dir.path().join("tengen.db"),
        tengen::store::SyncMode::Full,
    )
    .unwrap();
    for id in &ids {
        let events = tengen::store::GameStore::events(&store, id).unwrap();
        let gone = events
            .iter()
            .filter(|e| e.kind == "presence" && e.payload.contains("\"online\":false"))
            .count();
        assert_eq!(gone, 2, "both players' leaving is stored: {id}");
    }
}
