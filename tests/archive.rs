//! The archive over HTTP: game lists, JSON records, and SGF downloads that replay through
//! `tengen rules` to the same result.

mod common;

use common::{TestServer, agree_count, get, get_with_head, play, start_game, tengen_rules};
use serde_json::{Value, json};

/// A finished 9x9 game with a capture, a dead stone and a byo-yomi clock.
async fn finished_game(server: &TestServer) -> String {
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let clock = json!({"system": "byoyomi", "main_ms": 600_000, "periods": 3, "period_ms": 30_000});
    let id = start_game(
        &mut alice,
        &mut bob,
        json!({"board_size": 9, "color": "black", "komi": 6.5, "clock": clock}),
    )
    .await;
    let script = [
        "E1", "F1", "E2", "F2", "E3", "F3", "E4", "F4", "E5", "F5", "E6", "F6", "E7", "F7", "E8",
        "F8", "E9", "F9", "B5", "C5", "pass", "pass",
    ];
    for (i, v) in script.iter().enumerate() {
        let n = i as u32 + 1;
        let c = if n % 2 == 1 { &mut alice } else { &mut bob };
        play(c, &id, n, v).await;
    }
    let ended = agree_count(&mut alice, &mut bob, &id, &["C5"]).await;
    assert_eq!(ended["result"], "B+2.5");
    id
}

#[tokio::test]
async fn finished_games_are_listed_recorded_and_downloadable_as_sgf() {
    let server = TestServer::start().await;
    let id = finished_game(&server).await;

    let (status, body) = get(&server, "/api/games?player=alice").await;
    assert_eq!(status, 200, "{body}");
    let list: Value = serde_json::from_str(&body).unwrap();
    let games = list["games"].as_array().unwrap();
    assert_eq!(games.len(), 1);
    assert_eq!(games[0]["game_id"], id);
    assert_eq!(games[0]["status"], "finished");
    assert_eq!(games[0]["result"], "B+2.5");
    assert_eq!(games[0]["move_count"], 22);
    let (_, body) = get(&server, "/api/games?player=nobody").await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["games"],
        json!([])
    );
    assert_eq!(get(&server, "/api/games?status=sideways").await.0, 400);

    let (status, body) = get(&server, &format!("/api/games/{id}")).await;
    assert_eq!(status, 200);
    let record: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(record["moves"].as_array().unwrap().len(), 22);
    assert_eq!(record["moves"][0]["vertex"], "E1");
    assert_eq!(record["moves"][0]["clock"]["periods_left"], 3);
    assert_eq!(get(&server, "/api/games/nosuchgame").await.0, 404);

    let (status, sgf) = get(&server, &format!("/api/games/{id}/sgf")).await;
    assert_eq!(status, 200);
    for needle in [
        "SZ[9]",
        "KM[6.5]",
        "RU[Chinese]",
        "PB[alice]",
        "PW[bob]",
        "RE[B+2.5]",
        "TM[600]",
        "OT[3x30 byo-yomi]",
        ";B[ei]BL[",
    ] {
        assert!(sgf.contains(needle), "{needle} missing from {sgf}");
    }
    // The download replays through `tengen rules` to the same result.
    let verdict = tengen_rules(&sgf, &["--dead", "C5"]);
    assert_eq!(verdict["legal"], true);
    assert_eq!(verdict["moves"], 22);
    assert_eq!(verdict["result"], "B+2.5");
}

#[tokio::test]
async fn the_list_pages_with_a_cursor() {
    let server = TestServer::start().await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let mut a = server.login(&format!("a{i}")).await;
        let mut b = server.login(&format!("b{i}")).await;
        ids.push(start_game(&mut a, &mut b, json!({"board_size": 9})).await);
    }
    let (_, body) = get(&server, "/api/games?limit=2").await;
    let page: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(page["games"].as_array().unwrap().len(), 2);
    let next = page["next"].as_str().unwrap().to_string();
    let (_, body) = get(&server, &format!("/api/games?limit=2&before={next}")).await;
    let rest: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(rest["games"].as_array().unwrap().len(), 1);
    let mut seen: Vec<String> = page["games"]
        .as_array()
        .unwrap()
        .iter()
        .chain(rest["games"].as_array().unwrap())
        .map(|g| g["game_id"].as_str().unwrap().to_string())
        .collect();
    seen.sort();
    ids.sort();
    assert_eq!(seen, ids, "every game once, none twice");
    assert_eq!(rest["games"][0]["status"], "live");
    assert_eq!(rest["next"], Value::Null);
    // A full last page says it is the last.
    let (_, body) = get(&server, "/api/games?limit=3").await;
    let all: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(all["games"].as_array().unwrap().len(), 3);
    assert_eq!(all["next"], Value::Null, "{all}");
}

#[tokio::test]
async fn bad_archive_requests_are_json_errors_naming_what_is_wrong() {
    let server = TestServer::start().await;
    let twenty_digits = "9".repeat(20);
    for (query, parameter) in [
        ("limit=-1", "`limit`"),
        ("limit=abc", "`limit`"),
        ("limit=1.5", "`limit`"),
        ("limit=201", "`limit`"),
        (&format!("limit={twenty_digits}")[..], "`limit`"),
        ("limit=", "`limit`"),
        ("status=sideways", "`status`"),
        ("status=live&status=finished", "`status`"),
        ("player=a&player=b", "`player`"),
        ("before=12", "`before`"),
        ("before=x:abc", "`before`"),
        ("before=-5:abc", "`before`"),
        ("before=123:", "`before`"),
        ("before=123:a%20b", "`before`"),
        ("player=", "`player`"),
        ("colour=black", "`colour`"),
        ("%FF=1", "parameter"),
    ] {
        let (status, head, body) = get_with_head(&server, &format!("/api/games?{query}")).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert!(
            head.contains("content-type: application/json"),
            "{query}: {head}"
        );
        let error: Value = serde_json::from_str(&body).expect("a JSON body");
        let sentence = error["error"].as_str().expect("an error sentence");
        assert!(sentence.contains(parameter), "{query}: {sentence}");
    }
    for path in ["/api/games/%FF", "/api/games/%FF/sgf"] {
        let (status, head, body) = get_with_head(&server, path).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert!(
            head.contains("content-type: application/json"),
            "{path}: {head}"
        );
        let error: Value = serde_json::from_str(&body).expect("a JSON body");
        assert!(
            error["error"].as_str().unwrap().contains("game id"),
            "{body}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn a_limit_of_zero_is_an_empty_last_page() {
    let server = TestServer::start().await;
    finished_game(&server).await;
    let (status, body) = get(&server, "/api/games?limit=0&status=finished").await;
    assert_eq!(status, 200, "{body}");
    let page: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(page, json!({"games": [], "next": null}));
    let (_, body) = get(&server, "/api/games?limit=200").await;
    let page: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(page["games"].as_array().map(Vec::len), Some(1));
    server.stop().await;
}

#[tokio::test]
async fn the_sgf_names_a_ko_rule_of_its_own_and_only_placed_handicap_stones() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let settings = json!({"board_size": 9, "color": "black", "ko_rule": "simple",
        "handicap": 2, "handicap_placement": "free", "komi": 0.5});
    let id = common::start_game(&mut alice, &mut bob, settings).await;
    // Black resigns before placing the free handicap.
    alice.ok(json!({"type": "resign", "game_id": id})).await;
    bob.recv_type("game_ended").await;
    let (status, sgf) = get(&server, &format!("/api/games/{id}/sgf")).await;
    assert_eq!(status, 200);
    assert!(sgf.contains("RU[Chinese, simple ko]"), "{sgf}");
    assert!(sgf.contains("RE[W+R]"), "{sgf}");
    for absent in ["HA[", "PL[", "AB["] {
        assert!(!sgf.contains(absent), "{absent} in {sgf}");
    }
}
