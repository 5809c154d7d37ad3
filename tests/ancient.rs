//! The ancient Chinese rules (docs/RULES.md §9.1) through a real server: a whole 9x9 game
//! from the set stones with White first, counted with the group tax, its SGF record read
//! back by `tengen rules` to the same result; the refusals (a rated game where the
//! operator does not rate them, a fixed handicap, a handicap stone on a set stone).

mod common;

use common::{Client, TestServer, agree_count, get, play, tengen_rules};
use serde_json::{Value, json};

/// Alice (Black) seeks with `settings`, Bob accepts; both join. Returns the game id and
/// Alice's snapshot.
async fn begin(alice: &mut Client, bob: &mut Client, settings: Value) -> (String, Value) {
    let created = alice
        .ok(json!({"type": "seek", "settings": settings}))
        .await;
    let challenge = created["challenge"]["challenge_id"].clone();
    let ack = bob
        .ok(json!({"type": "accept", "challenge_id": challenge}))
        .await;
    let id = ack["game_id"].as_str().expect("a game id").to_string();
    let mut snapshot = Value::Null;
    for (i, c) in [alice, bob].into_iter().enumerate() {
        c.recv_type("game_started").await;
        c.ok(json!({"type": "join", "game_id": id})).await;
        let s = c.recv_type("snapshot").await;
        if i == 0 {
            snapshot = s;
        }
    }
    (id, snapshot)
}

#[tokio::test]
async fn a_whole_game_starts_from_the_set_stones_and_is_counted_and_recorded_with_the_tax() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let (id, snapshot) = begin(
        &mut alice,
        &mut bob,
        json!({"board_size": 9, "ruleset": "ancient-chinese", "color": "black"}),
    )
    .await;
    assert_eq!(snapshot["settings"]["komi"], 0.0, "no komi by default");
    assert_eq!(snapshot["to_move"], "white", "White moves first");
    assert_eq!(snapshot["handicap_stones"], json!([]));
    let board = json!([
        ".........",
        ".........",
        "..O...X..",
        ".........",
        ".........",
        ".........",
        "..X...O..",
        ".........",
        "........."
    ]);
    assert_eq!(snapshot["board"], board, "the set stones: 座子");
    alice
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 1, "vertex": "E5"}),
            "not_your_turn",
        )
        .await;

    // Walls: White on the F line (joining its G3), Black on the E line; Black's C3
    // stays a group of its own. White's C7 and Black's G7 end inside the other's area.
    let mut script = Vec::new();
    for row in 1..=9 {
        script.push(format!("F{row}"));
        script.push(format!("E{row}"));
    }
    script.extend(["pass".to_string(), "pass".to_string()]);
    for (i, v) in script.iter().enumerate() {
        let n = i as u32 + 1;
        let c = if n % 2 == 1 { &mut bob } else { &mut alice };
        play(c, &id, n, v).await;
    }
    let ended = agree_count(&mut alice, &mut bob, &id, &["C7", "G7"]).await;
    // Black: columns A to E, 45 points, less 2 groups (the wall and C3); White: F to J,
    // 36, less 1 group. The area alone would say B+9.
    assert_eq!(ended["result"], "B+8", "{ended}");
    let score = &ended["score"];
    assert_eq!(
        (score["black"].as_f64(), score["white"].as_f64()),
        (Some(43.0), Some(35.0))
    );
    assert_eq!(score["tax"], json!({"black": 2, "white": 1}));
    assert_eq!(score["chinese"], "黑胜4子");

    let (status, sgf) = get(&server, &format!("/api/games/{id}/sgf")).await;
    assert_eq!(status, 200);
    for needle in [
        "RU[Ancient Chinese]",
        "KM[0]",
        "AB[cg][gc]",
        "AW[cc][gg]",
        "PL[W]",
        "RE[B+8]",
        ";W[fi]",
    ] {
        assert!(sgf.contains(needle), "{needle} missing from {sgf}");
    }
    assert!(!sgf.contains("HA["), "set stones are no handicap: {sgf}");

    // `tengen rules` replays the record under the rules it names, to the same result.
    let rules = |extra: &[&str]| {
        let args: Vec<&str> = ["--dead", "C7,G7"].iter().chain(extra).copied().collect();
        tengen_rules(&sgf, &args)
    };
    let verdict = rules(&[]);
    assert_eq!(verdict["legal"], true);
    assert_eq!(verdict["moves"], 20);
    assert_eq!(verdict["result"], "B+8");
    assert_eq!(
        (verdict["black"].as_f64(), verdict["white"].as_f64()),
        (Some(43.0), Some(35.0))
    );
    assert_eq!(verdict["tax"], json!({"black": 2, "white": 1}));
    // The same record under the modern rules (and the record's komi) has no tax.
    let modern = rules(&["--ruleset", "chinese"]);
    assert_eq!(modern["result"], "B+9");
    assert!(modern.get("tax").is_none(), "{modern}");
}

#[tokio::test]
async fn rated_ancient_games_need_the_operator_s_consent() {
    let seek = json!({"type": "seek", "settings": {"board_size": 9, "ruleset": "ancient-chinese", "rated": true}});
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let refusal = alice.refused(seek.clone(), "rated_not_allowed").await;
    assert!(
        refusal["message"]
            .as_str()
            .unwrap()
            .contains("ancient-chinese"),
        "{refusal}"
    );
    // Unrated, or rated under the modern rules, is fine.
    let mut unrated = seek.clone();
    unrated["settings"]["rated"] = json!(false);
    alice.ok(unrated).await;
    alice
        .ok(json!({"type": "seek", "settings": {"board_size": 9, "rated": true}}))
        .await;

    let allowing = TestServer::start_with(|c| c.rules.rated_ancient = true).await;
    let mut alice = allowing.login("alice").await;
    let created = alice.ok(seek).await;
    assert_eq!(created["challenge"]["settings"]["rated"], true);
}

#[tokio::test]
async fn handicap_stones_are_placed_freely_and_never_on_a_set_stone() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let fixed = alice
        .refused(
            json!({"type": "seek", "settings": {"board_size": 9, "ruleset": "ancient-chinese", "handicap": 2}}),
            "bad_request",
        )
        .await;
    assert!(
        fixed["message"]
            .as_str()
            .unwrap()
            .starts_with("settings.handicap_placement"),
        "{fixed}"
    );
    alice
        .refused(
            json!({"type": "seek", "settings": {"board_size": 6, "ruleset": "ancient-chinese"}}),
            "bad_request",
        )
        .await;

    let (id, snapshot) = begin(
        &mut alice,
        &mut bob,
        json!({"board_size": 9, "ruleset": "ancient-chinese", "color": "black", "handicap": 2, "handicap_placement": "free"}),
    )
    .await;
    assert_eq!(snapshot["phase"], "handicap");
    assert_eq!(
        snapshot["to_move"], "black",
        "the weaker, with Black, acts first"
    );
    let taken = alice
        .refused(
            json!({"type": "place_handicap", "game_id": id, "vertices": ["C3", "E5"]}),
            "illegal_move",
        )
        .await;
    assert_eq!(taken["reason"], "occupied", "{taken}");
    alice
        .ok(json!({"type": "place_handicap", "game_id": id, "vertices": ["E5", "E3"]}))
        .await;
    play(&mut bob, &id, 1, "D5").await;
    let (_, sgf) = get(&server, &format!("/api/games/{id}/sgf")).await;
    for needle in ["HA[2]", "AB[cg][gc][ee][eg]", "AW[cc][gg]", "PL[W]"] {
        assert!(sgf.contains(needle), "{needle} missing from {sgf}");
    }
}
