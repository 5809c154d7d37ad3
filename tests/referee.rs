//! The referee through a real server: who may act, each action's events and effects on
//! clocks, results, the JSON record and the SGF; strict mode; claims.

mod common;

use std::time::Duration;

use common::{Client, TestServer, get, moves_seen, play, start_game, tengen};
use serde_json::{Value, json};
use tengen::protocol::Role;

/// A client logged in as `sub` with `role`.
async fn login_as(server: &TestServer, sub: &str, role: Role) -> Client {
    Client::connect(&format!(
        "{}?token={}",
        server.url,
        server.token_as(sub, role)
    ))
    .await
}

/// Black, White, and a 9×9 game between them with `settings` (Black the challenger).
async fn game(server: &TestServer, settings: Value) -> (Client, Client, String) {
    game_between(server, "black", "white", settings).await
}

/// A 9×9 game between `black` and `white` with `settings`.
async fn game_between(
    server: &TestServer,
    black: &str,
    white: &str,
    mut settings: Value,
) -> (Client, Client, String) {
    let (mut b, mut w) = (server.login(black).await, server.login(white).await);
    settings["color"] = json!("black");
    settings["board_size"] = json!(9);
    let id = start_game(&mut b, &mut w, settings).await;
    (b, w, id)
}

/// Every referee action, for `game_id`.
fn every_action(game_id: &str) -> Vec<Value> {
    vec![
        json!({"type": "warn", "game_id": game_id, "color": "black", "reason": "r"}),
        json!({"type": "adjust_clock", "game_id": game_id, "color": "black", "delta_ms": 5000, "reason": "r"}),
        json!({"type": "referee_pause", "game_id": game_id, "reason": "r"}),
        json!({"type": "referee_resume", "game_id": game_id, "reason": "r"}),
        json!({"type": "rule", "game_id": game_id, "ruling": "draw", "reason": "r"}),
        json!({"type": "correct_count", "game_id": game_id, "dead": [], "reason": "r"}),
        json!({"type": "change_result", "game_id": game_id, "ruling": "annul", "reason": "r"}),
    ]
}

/// The `kind` event of move `n`, skipping earlier ones.
async fn of_move(c: &mut Client, kind: &str, n: u64) -> Value {
    loop {
        let m = c.recv_type(kind).await;
        if m["move_number"] == n {
            return m;
        }
    }
}

/// The game's last seq, from a fresh snapshot.
async fn last_seq(c: &mut Client, game_id: &str) -> u64 {
    c.ok(json!({"type": "leave", "game_id": game_id})).await;
    c.clear();
    c.ok(json!({"type": "join", "game_id": game_id})).await;
    c.recv_type("snapshot").await["seq"].as_u64().expect("seq")
}

#[tokio::test]
async fn players_spectators_and_other_referees_are_forbidden_and_nothing_changes() {
    let server = TestServer::start().await;
    let clock = json!({"system": "absolute", "main_ms": 600_000});
    let (mut black, mut white, id) = game(&server, json!({"clock": clock, "referee": "li"})).await;
    play(&mut black, &id, 1, "E5").await;
    let mut kibitzer = server.login("kibitzer").await;
    kibitzer.ok(json!({"type": "join", "game_id": id})).await;
    let mut other = login_as(&server, "wang", Role::Referee).await;
    let mut admin_player = login_as(&server, "black", Role::Admin).await;
    let before = last_seq(&mut kibitzer, &id).await;
    for action in every_action(&id) {
        for c in [
            &mut black,
            &mut white,
            &mut kibitzer,
            &mut other,
            &mut admin_player,
        ] {
            c.refused(action.clone(), "forbidden").await;
        }
    }
    assert_eq!(last_seq(&mut kibitzer, &id).await, before);
    // The assigned referee may act.
    let mut li = login_as(&server, "li", Role::Referee).await;
    li.ok(json!({"type": "warn", "game_id": id, "color": "black", "reason": "noise"}))
        .await;
    assert_eq!(last_seq(&mut kibitzer, &id).await, before + 1);
    // The snapshot shows the warning on the seat, and none on the other.
    kibitzer.clear();
    kibitzer.ok(json!({"type": "leave", "game_id": id})).await;
    kibitzer.ok(json!({"type": "join", "game_id": id})).await;
    let snapshot = kibitzer.recv_type("snapshot").await;
    assert_eq!(snapshot["black"]["warnings"], 1, "{snapshot}");
    assert!(snapshot["white"].get("warnings").is_none(), "{snapshot}");
}

#[tokio::test]
async fn two_warnings_lose_the_game_in_the_record_and_the_sgf() {
    let server = TestServer::start().await;
    let (mut black, mut white, id) = game(&server, json!({"referee": "li"})).await;
    let mut li = login_as(&server, "li", Role::Referee).await;
    let warn = json!({"type": "warn", "game_id": id, "color": "white", "reason": "abusive chat"});
    let ack = li.ok(warn.clone()).await;
    let warned = white.recv_type("warned").await;
    assert_eq!(warned["seq"], ack["seq"]);
    assert_eq!(warned["warnings"], 1);
    assert_eq!(warned["by"]["id"], "li");
    assert_eq!(warned["reason"], "abusive chat");
    li.ok(warn).await;
    assert_eq!(black.recv_type("warned").await["warnings"], 1);
    assert_eq!(black.recv_type("warned").await["warnings"], 2);
    let ended = black.recv_type("game_ended").await;
    assert_eq!(ended["result"], "B+F");
    assert_eq!(ended["reason"], "forfeit");
    let (status, body) = get(&server, &format!("/api/games/{id}")).await;
    assert_eq!(status, 200);
    let record: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(record["result"], "B+F");
    let kinds: Vec<&str> = record["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == "warned").count(), 2);
    let (_, sgf) = get(&server, &format!("/api/games/{id}/sgf")).await;
    assert!(sgf.contains("RE[B+F]"), "{sgf}");
    assert!(
        sgf.contains("Referee li: warned white (warning 2): abusive chat"),
        "{sgf}"
    );
}

#[tokio::test]
async fn a_penalty_and_a_bonus_reach_the_clock_and_a_referee_pause_holds_it() {
    let server = TestServer::start().await;
    let clock = json!({"system": "absolute", "main_ms": 600_000});
    let (mut black, mut white, id) = game(&server, json!({"clock": clock})).await;
    let mut admin = login_as(&server, "root", Role::Admin).await;
    admin
        .ok(json!({"type": "adjust_clock", "game_id": id, "color": "white", "delta_ms": 60_000, "reason": "bonus"}))
        .await;
    let adjusted = white.recv_type("clock_adjusted").await;
    assert_eq!(adjusted["clock"]["white"]["main_ms"], 660_000);
    admin
        .ok(json!({"type": "adjust_clock", "game_id": id, "color": "white", "delta_ms": -100_000, "reason": "penalty"}))
        .await;
    let adjusted = white.recv_type("clock_adjusted").await;
    assert_eq!(adjusted["clock"]["white"]["main_ms"], 560_000);
    assert_eq!(adjusted["delta_ms"], -100_000);
    admin
        .ok(json!({"type": "referee_pause", "game_id": id, "reason": "break"}))
        .await;
    let paused = black.recv_type("referee_paused").await;
    assert_eq!(paused["clock"]["running"], Value::Null);
    for msg in [
        json!({"type": "resume", "game_id": id}),
        json!({"type": "play", "game_id": id, "move_number": 1, "vertex": "E5"}),
    ] {
        black.refused(msg, "wrong_phase").await;
    }
    let mut kibitzer = server.login("kibitzer").await;
    kibitzer.ok(json!({"type": "join", "game_id": id})).await;
    let snapshot = kibitzer.recv_type("snapshot").await;
    assert_eq!(snapshot["referee_paused"], true);
    assert_eq!(snapshot["clock"]["white"]["main_ms"], 560_000);
    admin
        .ok(json!({"type": "referee_resume", "game_id": id, "reason": "go on"}))
        .await;
    let resumed = black.recv_type("referee_resumed").await;
    assert_eq!(resumed["clock"]["running"], "black");
    play(&mut black, &id, 1, "E5").await;
}

/// A 9×9 game that ended by counting with Black's lone E5 agreed dead: W+7.5.
async fn counted_game(server: &TestServer) -> (Client, Client, String) {
    let (mut black, mut white, id) = game(server, json!({})).await;
    play(&mut black, &id, 1, "E5").await;
    play(&mut white, &id, 2, "pass").await;
    play(&mut black, &id, 3, "pass").await;
    white
        .ok(json!({"type": "mark_dead", "game_id": id, "vertex": "E5"}))
        .await;
    white
        .ok(json!({"type": "accept_score", "game_id": id}))
        .await;
    black
        .ok(json!({"type": "accept_score", "game_id": id}))
        .await;
    assert_eq!(white.recv_type("game_ended").await["result"], "W+7.5");
    (black, white, id)
}

#[tokio::test]
async fn a_corrected_count_and_a_changed_result_are_in_effect_with_the_original_kept() {
    let server = TestServer::start().await;
    let (mut black, _white, id) = counted_game(&server).await;
    let mut li = login_as(&server, "li", Role::Referee).await;
    li.ok(json!({"type": "correct_count", "game_id": id, "dead": [], "reason": "E5 lives"}))
        .await;
    let changed = black.recv_type("result_changed").await;
    assert_eq!(changed["previous"], "W+7.5");
    // E5 alive: all 81 points are Black's.
    assert_eq!(changed["result"], "B+73.5");
    assert_eq!(changed["score"]["dead"], json!([]));
    let (_, body) = get(&server, &format!("/api/games/{id}")).await;
    let record: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(record["result"], "B+73.5");
    let events = record["events"].as_array().unwrap();
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "game_ended" && e["result"] == "W+7.5")
    );
    let (_, sgf) = get(&server, &format!("/api/games/{id}/sgf")).await;
    assert!(sgf.contains("RE[B+73.5]"), "{sgf}");
    assert!(sgf.contains("corrected the count"), "{sgf}");
    assert!(sgf.contains("W+7.5 -> B+73.5"), "{sgf}");
    // Annulled afterwards, by an admin.
    let mut root = login_as(&server, "root", Role::Admin).await;
    root.ok(
        json!({"type": "change_result", "game_id": id, "ruling": "annul", "reason": "fixed game"}),
    )
    .await;
    let changed = black.recv_type("result_changed").await;
    assert_eq!(changed["previous"], "B+73.5");
    assert_eq!(changed["result"], "Void");
    let (_, body) = get(&server, &format!("/api/games/{id}")).await;
    let record: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(record["result"], "Void");
    let (_, sgf) = get(&server, &format!("/api/games/{id}/sgf")).await;
    assert!(
        sgf.contains("changed the result (annul): B+73.5 -> Void"),
        "{sgf}"
    );
    let mut fresh = server.login("later").await;
    fresh.ok(json!({"type": "join", "game_id": id})).await;
    let snapshot = fresh.recv_type("snapshot").await;
    assert_eq!(snapshot["result"], "Void");
    assert_eq!(snapshot["reason"], "void");
}

/// `Void` is both-lose or annulled and `0` a referee's draw or a jigo: the
/// `result_changed` event's `ruling` keeps which, so a snapshot after a restart (the room
/// rebuilt from the log) gives the same `reason` as before it.
#[tokio::test]
async fn a_changed_result_keeps_its_reason_when_the_room_is_rebuilt() {
    let mut server = TestServer::start().await;
    let (black, white, id) = counted_game(&server).await;
    black.close().await;
    white.close().await;
    for (ruling, result, reason) in [
        ("both_lose", "Void", "double_forfeit"),
        ("draw", "0", "draw"),
    ] {
        let mut root = login_as(&server, "root", Role::Admin).await;
        root.ok(json!({"type": "join", "game_id": id})).await;
        root.ok(
            json!({"type": "change_result", "game_id": id, "ruling": ruling, "reason": "ruled"}),
        )
        .await;
        let changed = root.recv_type("result_changed").await;
        assert_eq!(changed["result"], result);
        assert_eq!(changed["ruling"], ruling);
        assert!(changed.get("score").is_none(), "{changed}");
        let mut watcher = server.login("watcher").await;
        watcher.ok(json!({"type": "join", "game_id": id})).await;
        let before = watcher.recv_type("snapshot").await;
        assert_eq!(
            (&before["result"], &before["reason"]),
            (&json!(result), &json!(reason))
        );
        root.close().await;
        watcher.close().await;
        let dir = server.stop().await;
        server = TestServer::start_in(dir, |_| {}).await;
        let mut fresh = server.login("later").await;
        fresh.ok(json!({"type": "join", "game_id": id})).await;
        let after = fresh.recv_type("snapshot").await;
        assert_eq!(
            (&after["result"], &after["reason"]),
            (&json!(result), &json!(reason))
        );
        fresh.close().await;
    }
    let (_, sgf) = get(&server, &format!("/api/games/{id}/sgf")).await;
    assert!(
        sgf.contains("changed the result (both_lose): W+7.5 -> Void"),
        "{sgf}"
    );
}

#[tokio::test]
async fn a_replay_ruling_starts_a_linked_game_with_the_same_players() {
    let server = TestServer::start().await;
    let (mut black, mut white, id) = game(&server, json!({"komi": 5.5})).await;
    let mut li = login_as(&server, "li", Role::Referee).await;
    li.ok(json!({"type": "rule", "game_id": id, "ruling": "replay", "reason": "wrong board"}))
        .await;
    let ruled = black.recv_type("ruled").await;
    let replay = ruled["replay_game_id"]
        .as_str()
        .expect("a replay id")
        .to_string();
    assert_ne!(replay, id);
    let ended = black.recv_type("game_ended").await;
    assert_eq!(ended["result"], "Void");
    assert_eq!(ended["reason"], "void");
    for c in [&mut black, &mut white] {
        let started = c.recv_type("game_started").await;
        assert_eq!(started["game_id"], replay.as_str());
        assert_eq!(started["black"]["id"], "black");
        assert_eq!(started["white"]["id"], "white");
        assert_eq!(started["settings"]["komi"], 5.5);
    }
    black.ok(json!({"type": "join", "game_id": replay})).await;
    play(&mut black, &replay, 1, "E5").await;
    black
        .refused(
            json!({"type": "rule", "game_id": replay, "ruling": "draw", "reason": "x"}),
            "forbidden",
        )
        .await;
}

#[tokio::test]
async fn strict_mode_makes_an_illegal_move_a_lost_turn() {
    let server = TestServer::start().await;
    let (mut black, mut white, id) = game(&server, json!({"strict_illegal": true})).await;
    // B B1, W C1, B A2, W B2, B J9, W A1 takes B1: a ko.
    let script = [
        (1, "B1"),
        (2, "C1"),
        (3, "A2"),
        (4, "B2"),
        (5, "J9"),
        (6, "A1"),
    ];
    for (n, v) in script {
        let c = if n % 2 == 1 { &mut black } else { &mut white };
        play(c, &id, n, v).await;
    }
    // Black retakes at once: the ko costs Black the turn.
    let ack = black
        .ok(json!({"type": "play", "game_id": id, "move_number": 7, "vertex": "B1"}))
        .await;
    let attempt = white.recv_type("illegal_attempt").await;
    assert!(
        attempt["reason"] == "ko" || attempt["reason"] == "superko",
        "{attempt}"
    );
    assert_eq!(attempt["vertex"], "B1");
    let pass = of_move(&mut white, "move_played", 7).await;
    assert_eq!(pass["vertex"], "pass");
    assert_eq!(pass["seq"], ack["seq"]);
    // White plays on an occupied point: White's turn is lost too, and two passes score.
    white
        .ok(json!({"type": "play", "game_id": id, "move_number": 8, "vertex": "A2"}))
        .await;
    let attempt = of_move(&mut black, "illegal_attempt", 8).await;
    assert_eq!(attempt["reason"], "occupied");
    black.recv_type("scoring_started").await;
    // Off the board is still only refused.
    let (mut b2, _w2, id2) = game(&server, json!({"strict_illegal": true})).await;
    b2.refused(
        json!({"type": "play", "game_id": id2, "move_number": 1, "vertex": "K9"}),
        "illegal_move",
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_claim_is_refused_on_the_claimants_turn_and_accepted_on_the_absent_players() {
    let server = TestServer::start_with(|c| {
        c.limits.heartbeat_secs = 1_000_000;
        c.limits.idle_timeout_secs = 10_000_000;
    })
    .await;
    let (mut black, mut white, id) = game(&server, json!({"claim_after_ms": 30_000})).await;
    play(&mut black, &id, 1, "E5").await;
    black.close().await;
    loop {
        let p = white.recv_type("presence").await;
        if p["color"] == "black" && p["online"] == false {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(60_000)).await;
    // White to move: Black's absence does not let White claim.
    let refused = white
        .refused(json!({"type": "claim_win", "game_id": id}), "forbidden")
        .await;
    assert!(refused.get("retry_after_ms").is_none(), "{refused}");
    // Black to move, away 60 s of the 30 s allowed.
    play(&mut white, &id, 2, "C3").await;
    white.ok(json!({"type": "claim_win", "game_id": id})).await;
    let ended = white.recv_type("game_ended").await;
    assert_eq!(ended["result"], "W+F");
    assert_eq!(ended["reason"], "forfeit");
    // Too early on the absent player's turn: the wait left is in the refusal.
    let (mut black, mut white, id) = game(&server, json!({"claim_after_ms": 30_000})).await;
    play(&mut black, &id, 1, "E5").await;
    play(&mut white, &id, 2, "C3").await;
    black.close().await;
    loop {
        let p = white.recv_type("presence").await;
        if p["color"] == "black" && p["online"] == false {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(10_000)).await;
    let refused = white
        .refused(json!({"type": "claim_win", "game_id": id}), "forbidden")
        .await;
    assert_eq!(refused["retry_after_ms"], 20_000);
    tokio::time::sleep(Duration::from_millis(20_000)).await;
    white.ok(json!({"type": "claim_win", "game_id": id})).await;
    assert_eq!(white.recv_type("game_ended").await["result"], "W+F");
}

#[tokio::test]
async fn a_players_call_is_listed_for_referees_until_one_acts() {
    let server = TestServer::start().await;
    let (mut black, mut white, id) = game(&server, json!({})).await;
    let (mut b2, _w2, assigned) = game(&server, json!({"referee": "zhao"})).await;
    let call = json!({"type": "referee_call", "game_id": id, "message": "dead stones dispute"});
    black.ok(call.clone()).await;
    let called = white.recv_type("referee_called").await;
    assert_eq!(called["color"], "black");
    assert_eq!(called["message"], "dead stones dispute");
    black.refused(call, "limit_reached").await;
    b2.ok(json!({"type": "referee_call", "game_id": assigned, "message": "help"}))
        .await;
    white
        .refused(json!({"type": "list_referee_calls"}), "forbidden")
        .await;
    let mut li = login_as(&server, "li", Role::Referee).await;
    let list = li.ok(json!({"type": "list_referee_calls"})).await;
    assert_eq!(list["type"], "referee_calls");
    // The game assigned to another referee is not li's to see.
    let games = list["games"].as_array().unwrap();
    assert_eq!(games.len(), 1, "{list}");
    assert_eq!(games[0]["game"]["game_id"], id.as_str());
    assert_eq!(games[0]["game"]["phase"], "play");
    assert_eq!(games[0]["calls"][0]["from"]["id"], "black");
    assert_eq!(games[0]["calls"][0]["seq"], called["seq"]);
    let mut root = login_as(&server, "root", Role::Admin).await;
    let all = root.ok(json!({"type": "list_referee_calls"})).await;
    assert_eq!(all["games"].as_array().unwrap().len(), 2, "{all}");
    li.ok(json!({"type": "warn", "game_id": id, "color": "white", "reason": "answered"}))
        .await;
    let list = li.ok(json!({"type": "list_referee_calls"})).await;
    assert_eq!(list["games"], json!([]));
    assert_eq!(list["assigned"], json!([]));
    // Zhao sees the game assigned to him, called or not, until it is over.
    let mut zhao = login_as(&server, "zhao", Role::Referee).await;
    let mine = zhao.ok(json!({"type": "list_referee_calls"})).await;
    assert_eq!(mine["assigned"][0]["game_id"], assigned.as_str(), "{mine}");
    assert_eq!(mine["games"][0]["game"]["game_id"], assigned.as_str());
    zhao.ok(json!({"type": "rule", "game_id": assigned, "ruling": "draw", "reason": "agreed"}))
        .await;
    let mine = zhao.ok(json!({"type": "list_referee_calls"})).await;
    assert_eq!(
        (&mine["games"], &mine["assigned"]),
        (&json!([]), &json!([]))
    );
}

#[tokio::test]
async fn a_sealed_adjournment_is_opened_by_the_referee() {
    let server = TestServer::start().await;
    let clock = json!({"system": "absolute", "main_ms": 600_000});
    let (mut black, mut white, id) = game(&server, json!({"clock": clock, "referee": "li"})).await;
    play(&mut black, &id, 1, "E5").await;
    play(&mut white, &id, 2, "C3").await;
    let mut li = login_as(&server, "li", Role::Referee).await;
    // Adjourned from now on: Black, to move, may only seal.
    li.ok(json!({"type": "adjourn", "game_id": id, "at": 0, "reason": "end of round"}))
        .await;
    let scheduled = white.recv_type("adjournment_scheduled").await;
    // "Now" is recorded as the moment it took effect.
    assert!(
        scheduled["at"].as_i64().unwrap() > 1_700_000_000_000,
        "{scheduled}"
    );
    black
        .refused(
            json!({"type": "play", "game_id": id, "move_number": 3, "vertex": "G7"}),
            "wrong_phase",
        )
        .await;
    black
        .ok(json!({"type": "seal", "game_id": id, "move_number": 3, "vertex": "G7"}))
        .await;
    let sealed = white.recv_type("move_sealed").await;
    assert!(sealed.get("vertex").is_none(), "{sealed}");
    for c in [&mut black, &mut white] {
        c.refused(json!({"type": "resume", "game_id": id}), "wrong_phase")
            .await;
    }
    li.ok(json!({"type": "referee_resume", "game_id": id, "reason": "round 2"}))
        .await;
    white.recv_type("referee_resumed").await;
    let opened = of_move(&mut white, "move_played", 3).await;
    assert_eq!(opened["vertex"], "G7");
    assert_eq!(opened["sealed"], "G7");
    play(&mut white, &id, 4, "D4").await;
}

#[tokio::test]
async fn a_blocked_user_cannot_challenge_accept_or_chat_and_the_block_survives_a_restart() {
    let server = TestServer::start().await;
    let (mut black, mut white, id) = game(&server, json!({})).await;
    white.ok(json!({"type": "block", "user": "black"})).await;
    black
        .refused(
            json!({"type": "chat", "game_id": id, "text": "hi"}),
            "forbidden",
        )
        .await;
    white
        .refused(
            json!({"type": "chat", "game_id": id, "text": "hi"}),
            "forbidden",
        )
        .await;
    black
        .refused(
            json!({"type": "challenge", "opponent": "white", "settings": {"board_size": 9}}),
            "forbidden",
        )
        .await;
    let seek = white
        .ok(json!({"type": "seek", "settings": {"board_size": 9}}))
        .await;
    let challenge_id = seek["challenge"]["challenge_id"]
        .as_str()
        .unwrap()
        .to_string();
    black
        .refused(
            json!({"type": "accept", "challenge_id": challenge_id}),
            "forbidden",
        )
        .await;
    white
        .refused(json!({"type": "block", "user": "white"}), "bad_request")
        .await;
    // Someone else still plays and chats with both.
    let mut carol = server.login("carol").await;
    carol
        .ok(json!({"type": "accept", "challenge_id": challenge_id}))
        .await;
    // Stored: after a restart the block still holds.
    drop((black, white, carol));
    let dir = server.stop().await;
    let server = TestServer::start_in(dir, |_| {}).await;
    let mut black = server.login("black").await;
    let _white = server.login("white").await;
    black
        .refused(
            json!({"type": "challenge", "opponent": "white", "settings": {"board_size": 9}}),
            "forbidden",
        )
        .await;
    let mut white = server.login("white").await;
    white.ok(json!({"type": "unblock", "user": "black"})).await;
    black
        .ok(json!({"type": "challenge", "opponent": "white", "settings": {"board_size": 9}}))
        .await;
}

#[tokio::test]
async fn a_one_sided_block_is_told_as_it_is_to_each_side() {
    let server = TestServer::start().await;
    let mut ann = server.login("ann").await;
    let mut bob = server.login("bob").await;
    bob.ok(json!({"type": "block", "user": "ann"})).await;
    let challenge =
        |to: &str| json!({"type": "challenge", "opponent": to, "settings": {"board_size": 9}});
    let to_ann = ann.refused(challenge("bob"), "forbidden").await;
    assert_eq!(to_ann["message"], "`bob` does not accept games with you");
    let to_bob = bob.refused(challenge("ann"), "forbidden").await;
    assert_eq!(
        to_bob["message"],
        "you have blocked `ann`; `unblock` them first"
    );
    // Accepting the other's seek is refused the same way, from the accepter's side.
    let seek = bob
        .ok(json!({"type": "seek", "settings": {"board_size": 9}}))
        .await;
    let id = seek["challenge"]["challenge_id"].clone();
    let accept = json!({"type": "accept", "challenge_id": id});
    let refused = ann.refused(accept, "forbidden").await;
    assert_eq!(refused["message"], "`bob` does not accept games with you");
}

#[tokio::test]
async fn reports_cite_a_game_and_its_events_and_referees_list_and_close_them() {
    let server = TestServer::start().await;
    let (mut black, _white, id) = game(&server, json!({})).await;
    play(&mut black, &id, 1, "E5").await;
    let filed = black
        .ok(json!({"type": "report", "user": "white", "game_id": id, "from_seq": 2, "to_seq": 4, "reason": "insults in chat"}))
        .await;
    assert_eq!(filed["type"], "report_filed");
    let report_id = filed["report_id"].as_u64().unwrap();
    for (bad, code) in [
        (json!({"type": "report", "reason": "x"}), "bad_request"),
        (
            json!({"type": "report", "user": "white", "reason": " "}),
            "bad_request",
        ),
        (
            json!({"type": "report", "game_id": id, "from_seq": 3, "to_seq": 99, "reason": "x"}),
            "bad_request",
        ),
        (
            json!({"type": "report", "game_id": id, "from_seq": 3, "reason": "x"}),
            "bad_request",
        ),
        (
            json!({"type": "report", "game_id": "nosuchgame", "reason": "x"}),
            "not_found",
        ),
    ] {
        black.refused(bad, code).await;
    }
    black
        .refused(json!({"type": "list_reports"}), "forbidden")
        .await;
    let mut li = login_as(&server, "li", Role::Referee).await;
    let list = li.ok(json!({"type": "list_reports"})).await;
    let reports = list["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 1, "{list}");
    assert_eq!(reports[0]["report_id"], report_id);
    assert_eq!(reports[0]["reporter"], "black");
    assert_eq!(reports[0]["user"], "white");
    assert_eq!(reports[0]["game_id"], id.as_str());
    assert_eq!(
        (
            reports[0]["from_seq"].as_u64(),
            reports[0]["to_seq"].as_u64()
        ),
        (Some(2), Some(4))
    );
    li.ok(json!({"type": "close_report", "report_id": report_id}))
        .await;
    li.refused(
        json!({"type": "close_report", "report_id": report_id}),
        "not_found",
    )
    .await;
    let list = li.ok(json!({"type": "list_reports"})).await;
    assert_eq!(list["reports"], json!([]));
}

#[tokio::test]
async fn a_report_naming_nobody_is_refused_and_nothing_is_filed() {
    let server = TestServer::start().await;
    let (mut black, _white, id) = game(&server, json!({})).await;
    for nobody in ["nobody", "WHITE", "white "] {
        black
            .refused(
                json!({"type": "report", "user": nobody, "reason": "x"}),
                "not_found",
            )
            .await;
        black
            .refused(
                json!({"type": "report", "user": nobody, "game_id": id, "reason": "x"}),
                "not_found",
            )
            .await;
    }
    let mut li = login_as(&server, "li", Role::Referee).await;
    assert_eq!(
        li.ok(json!({"type": "list_reports"})).await["reports"],
        json!([])
    );
    // A player of a game is somebody, with or without an account.
    black
        .ok(json!({"type": "report", "user": "white", "reason": "x"}))
        .await;
    let list = li.ok(json!({"type": "list_reports"})).await;
    assert_eq!(list["reports"].as_array().map(Vec::len), Some(1), "{list}");
}

#[tokio::test]
async fn tournament_spectators_see_moves_late_while_players_and_the_referee_see_them_at_once() {
    let server = TestServer::start().await;
    let settings = json!({"fair_play": "tournament", "spectator_delay_moves": 2});
    let (mut black, mut white, id) = game(&server, settings).await;
    let mut kibitzer = server.login("kibitzer").await;
    kibitzer.ok(json!({"type": "join", "game_id": id})).await;
    let mut li = login_as(&server, "li", Role::Referee).await;
    li.ok(json!({"type": "join", "game_id": id})).await;
    assert!(li.recv_type("snapshot").await.is_object());
    let script = ["E5", "C3", "G7", "C7", "G3"];
    for (i, v) in script.iter().enumerate() {
        let n = i as u64 + 1;
        let mover = if n % 2 == 1 { &mut black } else { &mut white };
        play(mover, &id, n as u32, v).await;
        let other = if n % 2 == 1 { &mut white } else { &mut black };
        assert_eq!(of_move(other, "move_played", n).await["vertex"], *v);
        assert_eq!(of_move(&mut li, "move_played", n).await["vertex"], *v);
        // The spectator has seen exactly the moves two behind.
        let seen = moves_seen(&mut kibitzer).await;
        assert_eq!(
            seen,
            (1..=n.saturating_sub(2)).collect::<Vec<_>>(),
            "after move {n}"
        );
    }
    assert!(kibitzer.pending().iter().all(|v| v["type"] != "snapshot"));
    // A spectator who joins now gets the events up to the horizon, not a snapshot.
    let mut late = server.login("late").await;
    late.ok(json!({"type": "join", "game_id": id})).await;
    assert_eq!(moves_seen(&mut late).await, [1, 2, 3]);
    assert!(late.pending().iter().all(|v| v["type"] != "snapshot"));
    // The record waits for the end; the players' chat is off.
    let (status, _) = get(&server, &format!("/api/games/{id}")).await;
    assert_eq!(status, 403);
    // So does the estimate, which would show the position now.
    let (status, _) = get(&server, &format!("/api/games/{id}/estimate")).await;
    assert_eq!(status, 403);
    black
        .refused(
            json!({"type": "chat", "game_id": id, "text": "hi"}),
            "forbidden",
        )
        .await;
    // At the end everything is released.
    white.ok(json!({"type": "resign", "game_id": id})).await;
    kibitzer.recv_type("game_ended").await;
    assert_eq!(moves_seen(&mut kibitzer).await, [1, 2, 3, 4, 5]);
    let (status, _) = get(&server, &format!("/api/games/{id}")).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn lists_of_games_show_a_tournament_game_at_the_spectators_horizon() {
    let server = TestServer::start().await;
    let settings = json!({"fair_play": "tournament", "spectator_delay_moves": 2});
    let (mut black, mut white, id) = game(&server, settings).await;
    let script = ["E5", "C3", "G7", "C7", "G3"];
    for (i, v) in script.iter().enumerate() {
        let mover = if i % 2 == 0 { &mut black } else { &mut white };
        play(mover, &id, i as u32 + 1, v).await;
    }
    // Two passes end play, which the spectators have not been shown either.
    white
        .ok(json!({"type": "pass", "game_id": id, "move_number": 6}))
        .await;
    black
        .ok(json!({"type": "pass", "game_id": id, "move_number": 7}))
        .await;
    let mut anyone = server.login("anyone").await;
    let listed = anyone.ok(json!({"type": "list_games"})).await;
    let game = &listed["games"][0];
    assert_eq!(game["game_id"], id.as_str(), "{listed}");
    assert_eq!(
        (game["move_number"].as_u64(), game["phase"].as_str()),
        (Some(5), Some("play")),
        "{game}"
    );
    let (status, body) = common::get_json(&server, "/api/games?status=live").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["games"][0]["move_count"], 5, "{body}");
    // An open game's lists show it as it is.
    let (mut b, mut w, open) = game_between(&server, "b2", "w2", json!({})).await;
    play(&mut b, &open, 1, "E5").await;
    play(&mut w, &open, 2, "C3").await;
    let listed = anyone.ok(json!({"type": "list_games"})).await;
    let entry = listed["games"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["game_id"] == open.as_str())
        .cloned();
    assert_eq!(
        entry.map(|g| g["move_number"].clone()),
        Some(json!(2)),
        "{listed}"
    );
}

#[tokio::test]
async fn a_muted_users_chat_no_longer_reaches_the_muter_but_a_referee_hears_it() {
    let server = TestServer::start().await;
    let (mut black, mut white, id) = game(&server, json!({})).await;
    let mut kib = server.login("kib").await;
    let mut chatty = server.login("chatty").await;
    for spectator in [&mut kib, &mut chatty] {
        spectator.ok(json!({"type": "join", "game_id": id})).await;
    }
    let mut li = login_as(&server, "li", Role::Referee).await;
    li.ok(json!({"type": "join", "game_id": id})).await;
    black
        .refused(json!({"type": "mute", "user": "black"}), "bad_request")
        .await;
    black
        .refused(json!({"type": "mute", "user": "nobody"}), "not_found")
        .await;
    black.ok(json!({"type": "mute", "user": "white"})).await;
    li.ok(json!({"type": "mute", "user": "white"})).await;
    kib.ok(json!({"type": "mute", "user": "chatty"})).await;
    assert_eq!(
        black.ok(json!({"type": "list_mutes"})).await["users"],
        json!(["white"])
    );
    // White's line reaches Black numbered but without its text; everyone else hears it.
    let said = white
        .ok(json!({"type": "chat", "game_id": id, "text": "you will lose"}))
        .await;
    let seq = said["seq"].as_u64().expect("a numbered line");
    let heard = black.recv_type("chat").await;
    assert_eq!(
        (
            heard["seq"].as_u64(),
            heard["text"].as_str(),
            heard["muted"].as_bool()
        ),
        (Some(seq), Some(""), Some(true)),
        "{heard}"
    );
    for other in [&mut kib, &mut li] {
        let line = other.recv_type("chat").await;
        assert_eq!(line["seq"].as_u64(), Some(seq), "{line}");
        assert_eq!(line["text"], "you will lose", "{line}");
        assert!(line.get("muted").is_none(), "{line}");
    }
    // A muted spectator's kibitz does not reach the muter at all.
    chatty
        .ok(json!({"type": "chat", "game_id": id, "text": "nice"}))
        .await;
    assert_eq!(li.recv_type("kibitz").await["text"], "nice");
    kib.ok(json!({"type": "ping"})).await;
    assert!(
        kib.pending().iter().all(|v| v["type"] != "kibitz"),
        "{:?}",
        kib.pending()
    );
    // A snapshot leaves the muted player's lines out.
    let mut again = server.login("black").await;
    again.ok(json!({"type": "join", "game_id": id})).await;
    let snapshot = again.recv_type("snapshot").await;
    assert!(snapshot.get("chat").is_none(), "{snapshot}");
    // Kept across a restart, then undone.
    drop((black, white, kib, chatty, li, again));
    let server = TestServer::start_in(server.stop().await, |_| {}).await;
    let mut black = server.login("black").await;
    assert_eq!(
        black.ok(json!({"type": "list_mutes"})).await["users"],
        json!(["white"])
    );
    black.ok(json!({"type": "unmute", "user": "white"})).await;
    assert_eq!(
        black.ok(json!({"type": "list_mutes"})).await["users"],
        json!([])
    );
    black.ok(json!({"type": "join", "game_id": id})).await;
    let snapshot = black.recv_type("snapshot").await;
    assert_eq!(snapshot["chat"][0]["text"], "you will lose", "{snapshot}");
}

/// More events than a room keeps in memory (512) come inside a long spectators' delay,
/// then are released at once (the game ends): a delayed spectator still receives every
/// event, in order, the older ones read back from the store.
#[tokio::test]
async fn a_delayed_spectator_receives_every_event_even_when_more_than_the_ring_holds_are_released()
{
    let server = TestServer::start_with(|c| {
        c.limits.outbound_queue = 4096;
        c.limits.outbound_queue_bytes = 16 << 20;
        c.limits.messages_per_second = 100_000;
        c.limits.burst = 100_000;
    })
    .await;
    let settings = json!({"fair_play": "tournament", "spectator_delay_moves": 0,
        "spectator_delay_ms": 600_000, "board_size": 19, "color": "black"});
    let mut black = server.login("black").await;
    let mut white = server.login("white").await;
    let id = start_game(&mut black, &mut white, settings).await;
    let mut kibitzer = server.login("kibitzer").await;
    kibitzer.ok(json!({"type": "join", "game_id": id})).await;
    // Black passes and White fills the board row by row: 520 moves, no two passes in a
    // row, no capture.
    let columns = "ABCDEFGHJKLMNOPQRST".chars();
    let points: Vec<String> = (1..=14)
        .flat_map(|row| columns.clone().map(move |c| format!("{c}{row}")))
        .take(260)
        .collect();
    for (i, point) in points.iter().enumerate() {
        let n = 2 * i as u32 + 1;
        play(&mut black, &id, n, "pass").await;
        play(&mut white, &id, n + 1, point).await;
        black.clear();
        white.clear();
    }
    assert!(moves_seen(&mut kibitzer).await.is_empty());
    white.ok(json!({"type": "resign", "game_id": id})).await;
    let mut seqs = Vec::new();
    loop {
        let v = kibitzer.recv().await;
        if v["game_id"] != id.as_str() || v.get("seq").is_none() || v["type"] == "ack" {
            continue;
        }
        seqs.push(v["seq"].as_u64().expect("a seq"));
        if v["type"] == "game_ended" {
            break;
        }
    }
    // Every event from game_created on (presences, 520 moves, game_ended), far more
    // than the ring holds, each once and in order.
    let last = *seqs.last().expect("events");
    assert!(last > 522, "{last} events");
    assert_eq!(seqs, (1..=last).collect::<Vec<u64>>());
}

/// The `kibitz` lines of `id`'s JSON record (none when the record has no `kibitz`).
async fn archived_kibitz(server: &TestServer, id: &str) -> Value {
    let (status, body) = get(server, &format!("/api/games/{id}")).await;
    assert_eq!(status, 200, "{body}");
    let record: Value = serde_json::from_str(&body).expect("JSON");
    record.get("kibitz").cloned().unwrap_or(json!([]))
}

#[tokio::test]
async fn spectators_chat_is_kept_from_the_players_and_archived_once_the_game_ends() {
    let server = TestServer::start().await;
    let (mut black, mut white, id) = game(&server, json!({})).await;
    let mut kibitzer = server.login("kibitzer").await;
    kibitzer.ok(json!({"type": "join", "game_id": id})).await;
    let mut other = server.login("other").await;
    other.ok(json!({"type": "join", "game_id": id})).await;
    let said = kibitzer
        .ok(json!({"type": "chat", "game_id": id, "text": "white should resign"}))
        .await;
    assert!(said.get("seq").is_none(), "{said}");
    assert_eq!(
        other.recv_type("kibitz").await["text"],
        "white should resign"
    );
    play(&mut black, &id, 1, "E5").await;
    // The players never hear it, and the record does not show it while they play.
    for p in [&mut black, &mut white] {
        p.ok(json!({"type": "ping"})).await;
        assert!(p.pending().iter().all(|v| v["type"] != "kibitz"));
    }
    assert_eq!(archived_kibitz(&server, &id).await, json!([]));
    white.ok(json!({"type": "resign", "game_id": id})).await;
    let kept = archived_kibitz(&server, &id).await;
    assert_eq!(kept.as_array().map(Vec::len), Some(1), "{kept}");
    assert_eq!(kept[0]["from"], "kibitzer");
    assert_eq!(kept[0]["text"], "white should resign");
    assert!(kept[0]["at"].as_i64().is_some_and(|at| at > 0));
    for p in [&mut black, &mut white] {
        p.ok(json!({"type": "ping"})).await;
        assert!(p.pending().iter().all(|v| v["type"] != "kibitz"));
    }
    // It survives a restart: it is in the store, not in the room.
    drop((black, white, kibitzer, other));
    let server = TestServer::start_in(server.stop().await, |_| {}).await;
    assert_eq!(archived_kibitz(&server, &id).await, kept);
}

#[tokio::test]
async fn a_tournament_games_spectators_chat_is_published_with_its_record_at_the_end() {
    let server = TestServer::start().await;
    let (mut black, mut white, id) = game(&server, json!({"fair_play": "tournament"})).await;
    let mut kibitzer = server.login("kibitzer").await;
    kibitzer.ok(json!({"type": "join", "game_id": id})).await;
    kibitzer
        .ok(json!({"type": "chat", "game_id": id, "text": "B should play tengen"}))
        .await;
    play(&mut black, &id, 1, "E5").await;
    let (status, body) = get(&server, &format!("/api/games/{id}")).await;
    assert_eq!(status, 403, "{body}");
    assert!(!body.contains("tengen"), "{body}");
    black.ok(json!({"type": "ping"})).await;
    assert!(black.pending().iter().all(|v| v["type"] != "kibitz"));
    white.ok(json!({"type": "resign", "game_id": id})).await;
    let kept = archived_kibitz(&server, &id).await;
    assert_eq!(kept[0]["text"], "B should play tengen", "{kept}");
}

/// Waits until `c` hears that `color` left the game.
async fn left(c: &mut Client, color: &str) {
    loop {
        let p = c.recv_type("presence").await;
        if p["color"] == color && p["online"] == false {
            return;
        }
    }
}

/// `player`'s escaper record from their profile.
async fn escapes(server: &TestServer, player: &str) -> Value {
    let (status, profile) = common::get_json(server, &format!("/api/users/{player}")).await;
    assert_eq!(status, 200, "{profile}");
    profile["escapes"].clone()
}

#[tokio::test(start_paused = true)]
async fn the_escaper_record_counts_games_lost_by_a_claim_after_leaving_and_no_others() {
    let server = TestServer::start_with(|c| {
        c.limits.heartbeat_secs = 1_000_000;
        c.limits.idle_timeout_secs = 10_000_000;
    })
    .await;
    let claimable = json!({"claim_after_ms": 30_000});
    // Black leaves on their own turn and White claims the game: an escape.
    let (mut black, mut white, escaped) = game(&server, claimable.clone()).await;
    play(&mut black, &escaped, 1, "E5").await;
    play(&mut white, &escaped, 2, "C3").await;
    black.close().await;
    left(&mut white, "black").await;
    tokio::time::sleep(Duration::from_millis(60_000)).await;
    white
        .ok(json!({"type": "claim_win", "game_id": escaped}))
        .await;
    // Black leaves again, but a referee awards the game: a ruling, not an escape.
    let (black, mut white, ruled) = game(&server, claimable.clone()).await;
    black.close().await;
    left(&mut white, "black").await;
    let mut admin = login_as(&server, "admin", Role::Admin).await;
    admin
        .ok(json!({"type": "rule", "game_id": ruled, "ruling": "white_wins", "reason": "left"}))
        .await;
    // White, present, loses on warnings: no escape either.
    let (_black, _white, warned) = game(&server, claimable).await;
    for reason in ["one", "two"] {
        admin
            .ok(json!({"type": "warn", "game_id": warned, "color": "white", "reason": reason}))
            .await;
    }
    let record = escapes(&server, "black").await;
    assert_eq!(record["count"], 1, "{record}");
    assert_eq!(record["recent"][0]["game_id"], escaped.as_str());
    assert_eq!(record["recent"][0]["opponent"], "white");
    assert!(record["recent"][0]["at"].as_i64().is_some_and(|at| at > 0));
    assert_eq!(
        escapes(&server, "white").await,
        json!({"count": 0, "recent": []})
    );
    // Operators read the same record from the data directory.
    let data = server.stop().await;
    let (ok, out, err) = tengen(data.path(), &["user", "escapes", "black"], "");
    assert!(ok, "{err}");
    let at = record["recent"][0]["at"].as_i64().unwrap_or_default();
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["escapes\t1".to_string(), format!("{escaped}\twhite\t{at}")]
    );
    let (ok, out, _) = tengen(data.path(), &["user", "escapes", "white"], "");
    assert!(ok);
    assert_eq!(out, "escapes\t0\n");
    // The record follows the result in effect: an annulled game is no escape.
    let server = TestServer::start_in(data, |c| {
        c.limits.heartbeat_secs = 1_000_000;
        c.limits.idle_timeout_secs = 10_000_000;
    })
    .await;
    let mut admin = login_as(&server, "admin", Role::Admin).await;
    admin
        .ok(json!({"type": "change_result", "game_id": escaped, "ruling": "annul", "reason": "network trouble"}))
        .await;
    assert_eq!(escapes(&server, "black").await["count"], 0);
}

#[tokio::test(start_paused = true)]
async fn a_player_who_leaves_and_loses_on_time_after_a_claim_wait_is_an_escaper() {
    let server = TestServer::start_with(|c| {
        c.limits.heartbeat_secs = 1_000_000;
        c.limits.idle_timeout_secs = 10_000_000;
    })
    .await;
    // One minute each: the claim wait is a tenth of it, 10 s (the least).
    let timed = json!({"clock": {"system": "absolute", "main_ms": 60_000}});
    // Black leaves on their own turn with 60 s left and runs out of time away: an escape.
    let (mut black, mut white, escaped) = game(&server, timed.clone()).await;
    play(&mut black, &escaped, 1, "E5").await;
    play(&mut white, &escaped, 2, "C3").await;
    black.close().await;
    left(&mut white, "black").await;
    tokio::time::sleep(Duration::from_millis(61_000)).await;
    let ended = white.recv_type("game_ended").await;
    assert_eq!(ended["result"], "W+T", "{ended}");
    // Black thinks until 5 s are left, moves, and leaves: gone for less than a claim wait
    // of their own clock when it runs out, which is no escape.
    let (mut black, mut white, lost) = game(&server, timed).await;
    tokio::time::sleep(Duration::from_millis(55_000)).await;
    play(&mut black, &lost, 1, "E5").await;
    play(&mut white, &lost, 2, "C3").await;
    black.close().await;
    left(&mut white, "black").await;
    tokio::time::sleep(Duration::from_millis(6_000)).await;
    let ended = white.recv_type("game_ended").await;
    assert_eq!(ended["result"], "W+T", "{ended}");
    let record = escapes(&server, "black").await;
    assert_eq!(record["count"], 1, "{record}");
    assert_eq!(record["recent"][0]["game_id"], escaped.as_str(), "{record}");
}

/// `player`'s profile once `done` holds for its overall pool (the rating task works a
/// moment after the news reaches it).
async fn overall_when(server: &TestServer, player: &str, done: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..1000 {
        let (status, profile) = common::get_json(server, &format!("/api/users/{player}")).await;
        if status == 200 && done(&profile["ratings"][0]) {
            return profile;
        }
        last = profile;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{player}'s overall rating never got there: {last}");
}

fn won_lost(pool: &Value) -> (u64, u64) {
    (
        pool["won"].as_u64().unwrap_or(99),
        pool["lost"].as_u64().unwrap_or(99),
    )
}

#[tokio::test]
async fn a_changed_result_on_a_rated_game_rebuilds_the_ratings() {
    let server = TestServer::start().await;
    let (_black, mut white, id) = game(&server, json!({"rated": true})).await;
    white.ok(json!({"type": "resign", "game_id": id})).await;
    let before = overall_when(&server, "black", |p| won_lost(p) == (1, 0)).await;
    assert!(before["ratings"][0]["rating"].as_f64() > Some(1500.0));
    let mut admin = login_as(&server, "admin", Role::Admin).await;
    admin
        .ok(json!({"type": "change_result", "game_id": id, "ruling": "white_wins", "reason": "Black's phone was in use"}))
        .await;
    let black = overall_when(&server, "black", |p| won_lost(p) == (0, 1)).await;
    let white = overall_when(&server, "white", |p| won_lost(p) == (1, 0)).await;
    // Exactly what Black had, the other way round: one game, rated once.
    let gained = before["ratings"][0]["rating"].as_f64().unwrap() - 1500.0;
    let now = |p: &Value| p["ratings"][0]["rating"].as_f64().unwrap();
    assert!((1500.0 - now(&black) - gained).abs() < 1e-9, "{black}");
    assert!((now(&white) - 1500.0 - gained).abs() < 1e-9, "{white}");
    assert_eq!(
        black["history"].as_array().map(Vec::len),
        Some(2),
        "{black}"
    );
    // Annulled, the game rates nothing.
    admin
        .ok(json!({"type": "change_result", "game_id": id, "ruling": "annul", "reason": "both agreed the result"}))
        .await;
    let black = overall_when(&server, "black", |p| p["games"] == 0).await;
    assert_eq!(black["ratings"][0]["rating"], 1500.0);
    assert_eq!(black["history"], json!([]));
    // And the lobby no longer shows a rank for either player.
    let mut player = server.login("black").await;
    let seek = player
        .ok(json!({"type": "seek", "settings": {"board_size": 9}}))
        .await;
    assert!(seek["challenge"].get("from_rank").is_none(), "{seek}");
}

#[tokio::test]
async fn a_rebuild_owed_when_the_server_stopped_is_made_at_the_next_start() {
    use tengen::store::{Append, EventLog, RatingStore, SqliteStore, SyncMode};
    let dir = tempfile::tempdir().expect("temp dir");
    common::seed_rated_games(dir.path(), &[("g1", "alice", "bob", "B+R", 9)]);
    let server = TestServer::start_in(dir, |_| {}).await;
    overall_when(&server, "alice", |p| won_lost(p) == (1, 0)).await;
    let dir = server.stop().await;
    // A referee's change committed just before a crash, the rebuild not yet made.
    let path = dir.path().join(tengen::server::DB_FILE);
    let store = SqliteStore::open(&path, SyncMode::Full).expect("opens");
    store
        .append(&[Append::Rejudge {
            game_id: "g1".into(),
            result: "W+F".into(),
        }])
        .expect("written");
    assert!(store.ratings_owed().expect("read") > 0);
    store.close().expect("closed");
    let server = TestServer::start_in(dir, |_| {}).await;
    overall_when(&server, "alice", |p| won_lost(p) == (0, 1)).await;
    overall_when(&server, "bob", |p| won_lost(p) == (1, 0)).await;
    let dir = server.stop().await;
    let store = SqliteStore::open(&dir.path().join(tengen::server::DB_FILE), SyncMode::Full)
        .expect("opens");
    assert_eq!(store.ratings_owed().expect("read"), 0, "settled");
}

#[tokio::test]
async fn automatch_never_pairs_users_one_of_whom_blocked_the_other() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    alice.ok(json!({"type": "block", "user": "bob"})).await;
    let wish = json!({"type": "automatch", "sizes": [9], "speeds": ["blitz"]});
    alice.ok(wish.clone()).await;
    bob.ok(wish.clone()).await;
    // A round trip after each request: every round they caused is over.
    for c in [&mut alice, &mut bob] {
        c.ok(json!({"type": "ping"})).await;
        assert!(c.pending().iter().all(|v| v["type"] != "game_started"));
    }
    // Once unblocked, the next round pairs them.
    alice.ok(json!({"type": "unblock", "user": "bob"})).await;
    bob.ok(wish).await;
    let started = bob.recv_type("game_started").await;
    assert_eq!(alice.recv_type("game_started").await, started);
}

#[tokio::test(start_paused = true)]
async fn tournament_spectators_can_see_each_move_a_set_time_late() {
    let server = TestServer::start_with(|c| {
        c.limits.heartbeat_secs = 1_000_000;
        c.limits.idle_timeout_secs = 10_000_000;
    })
    .await;
    let settings = json!({"fair_play": "tournament", "spectator_delay_moves": 0, "spectator_delay_ms": 30_000});
    let (mut black, mut white, id) = game(&server, settings).await;
    let mut kibitzer = server.login("kibitzer").await;
    kibitzer.ok(json!({"type": "join", "game_id": id})).await;
    play(&mut black, &id, 1, "E5").await;
    assert_eq!(of_move(&mut white, "move_played", 1).await["vertex"], "E5");
    assert_eq!(moves_seen(&mut kibitzer).await, Vec::<u64>::new());
    tokio::time::sleep(Duration::from_millis(20_000)).await;
    play(&mut white, &id, 2, "C3").await;
    assert_eq!(of_move(&mut black, "move_played", 2).await["vertex"], "C3");
    // Move 1 is 20 s old: still hidden.
    assert_eq!(moves_seen(&mut kibitzer).await, Vec::<u64>::new());
    tokio::time::sleep(Duration::from_millis(11_000)).await;
    // 31 s: move 1 comes by itself, move 2 (11 s old) does not.
    assert_eq!(kibitzer.recv_type("move_played").await["move_number"], 1);
    assert_eq!(moves_seen(&mut kibitzer).await, Vec::<u64>::new());
    tokio::time::sleep(Duration::from_millis(20_000)).await;
    assert_eq!(kibitzer.recv_type("move_played").await["move_number"], 2);
    // A delay over ten minutes is refused.
    let too_long =
        json!({"board_size": 9, "fair_play": "tournament", "spectator_delay_ms": 600_001});
    black
        .refused(json!({"type": "seek", "settings": too_long}), "bad_request")
        .await;
}

#[tokio::test]
async fn referee_actions_that_do_not_fit_the_games_state_are_refused_and_change_nothing() {
    let server = TestServer::start().await;
    let (mut black, _white, id) = game(&server, json!({})).await;
    play(&mut black, &id, 1, "E5").await;
    let mut li = login_as(&server, "li", Role::Referee).await;
    let mut kibitzer = server.login("kibitzer").await;
    kibitzer.ok(json!({"type": "join", "game_id": id})).await;
    let before = last_seq(&mut kibitzer, &id).await;
    let act = |kind: &str, extra: Value| {
        let mut m = json!({"type": kind, "game_id": id, "reason": "r"});
        for (k, v) in extra.as_object().expect("object") {
            m[k] = v.clone();
        }
        m
    };
    // In play, in an untimed game.
    for (msg, code) in [
        (
            act("adjust_clock", json!({"color": "black", "delta_ms": 5000})),
            "bad_request",
        ),
        (
            act("warn", json!({"color": "black", "reason": "   "})),
            "bad_request",
        ),
        (act("adjourn", json!({"at": -1})), "bad_request"),
        (act("rule", json!({"ruling": "annul"})), "bad_request"),
        (act("referee_resume", json!({})), "wrong_phase"),
        (
            act("change_result", json!({"ruling": "draw"})),
            "wrong_phase",
        ),
        (act("correct_count", json!({"dead": []})), "wrong_phase"),
    ] {
        li.refused(msg, code).await;
    }
    // Only the game's players call the referee.
    kibitzer
        .refused(
            json!({"type": "referee_call", "game_id": id, "message": "help"}),
            "forbidden",
        )
        .await;
    assert_eq!(last_seq(&mut kibitzer, &id).await, before);
    // Over (by resignation, not by counting).
    black.ok(json!({"type": "resign", "game_id": id})).await;
    let over = last_seq(&mut kibitzer, &id).await;
    for (msg, code) in [
        (act("warn", json!({"color": "white"})), "wrong_phase"),
        (act("rule", json!({"ruling": "draw"})), "wrong_phase"),
        (act("referee_pause", json!({})), "wrong_phase"),
        (act("correct_count", json!({"dead": []})), "wrong_phase"),
        (
            act("change_result", json!({"ruling": "replay"})),
            "bad_request",
        ),
    ] {
        li.refused(msg, code).await;
    }
    black
        .refused(
            json!({"type": "referee_call", "game_id": id, "message": "help"}),
            "wrong_phase",
        )
        .await;
    assert_eq!(last_seq(&mut kibitzer, &id).await, over);
    // A finished game's result can still be changed.
    li.ok(act("change_result", json!({"ruling": "annul"})))
        .await;
    let (status, body) = get(&server, &format!("/api/games/{id}")).await;
    assert_eq!(status, 200);
    let record: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(record["result"], "Void", "{body}");
}

#[tokio::test]
async fn the_referees_list_shows_games_as_the_game_list_does_ranks_included() {
    let dir = tempfile::tempdir().expect("temp dir");
    common::seed_rated_games(dir.path(), &[("g1", "black", "white", "W+R", 9)]);
    let server = TestServer::start_in(dir, |_| {}).await;
    let (mut black, _white, id) = game(&server, json!({"referee": "li"})).await;
    let mut li = login_as(&server, "li", Role::Referee).await;
    // The ranks come once the seeded game is rated at start.
    let listed = loop {
        let games = li.request(json!({"type": "list_games"})).await;
        let listed = games["games"]
            .as_array()
            .expect("games")
            .iter()
            .find(|g| g["game_id"] == id.as_str())
            .cloned()
            .expect("the game is listed");
        if listed.get("black_rank").is_some() && listed.get("white_rank").is_some() {
            break listed;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    black
        .ok(json!({"type": "referee_call", "game_id": id, "message": "help"}))
        .await;
    let calls = li.request(json!({"type": "list_referee_calls"})).await;
    assert_eq!(calls["games"][0]["game"], listed, "{calls}");
    assert_eq!(calls["assigned"][0], listed, "{calls}");
}

#[tokio::test]
async fn a_finished_games_result_changes_after_a_restart_from_the_stored_game() {
    let server = TestServer::start().await;
    let (mut black, _white, id) = game(&server, json!({})).await;
    play(&mut black, &id, 1, "E5").await;
    black.ok(json!({"type": "resign", "game_id": id})).await;
    drop(black);
    let server = TestServer::start_in(server.stop().await, |_| {}).await;
    let mut li = login_as(&server, "li", Role::Referee).await;
    li.ok(json!({"type": "change_result", "game_id": id, "ruling": "black_wins", "reason": "misclick"}))
        .await;
    let (status, body) = get(&server, &format!("/api/games/{id}")).await;
    assert_eq!(status, 200);
    let record: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(record["result"], "B+F", "{body}");
    let changed = record["events"]
        .as_array()
        .expect("events")
        .iter()
        .find(|e| e["type"] == "result_changed")
        .cloned()
        .expect("the change is in the log");
    assert_eq!(changed["previous"], "W+R", "{changed}");
    let (_, sgf) = get(&server, &format!("/api/games/{id}/sgf")).await;
    assert!(sgf.contains("RE[B+F]"), "{sgf}");
    // The archive's list shows the result in effect too.
    let (_, list) = get(&server, "/api/games?player=black").await;
    let list: Value = serde_json::from_str(&list).expect("json");
    assert_eq!(list["games"][0]["game_id"], id.as_str(), "{list}");
    assert_eq!(list["games"][0]["result"], "B+F", "{list}");
}

#[tokio::test]
async fn a_penalty_of_all_the_time_left_loses_on_time_with_the_clock_at_zero_and_stopped() {
    let server = TestServer::start().await;
    let clock = json!({"system": "absolute", "main_ms": 600_000});
    let (mut black, _white, id) = game(&server, json!({"clock": clock})).await;
    let mut li = login_as(&server, "li", Role::Referee).await;
    // More than a day either way, or nothing, is refused.
    for delta in [-86_400_001_i64, 86_400_001, 0] {
        li.refused(
            json!({"type": "adjust_clock", "game_id": id, "color": "black", "delta_ms": delta, "reason": "r"}),
            "bad_request",
        )
        .await;
    }
    let ack = li
        .ok(json!({"type": "adjust_clock", "game_id": id, "color": "black", "delta_ms": -86_400_000, "reason": "absent"}))
        .await;
    let adjusted = black.recv_type("clock_adjusted").await;
    assert_eq!(adjusted["clock"]["black"]["main_ms"], 0, "{adjusted}");
    assert_eq!(adjusted["clock"]["running"], Value::Null, "{adjusted}");
    let ended = black.recv_type("game_ended").await;
    assert_eq!(
        (&ended["result"], &ended["reason"]),
        (&json!("W+T"), &json!("time"))
    );
    assert_eq!(
        ack["seq"], ended["seq"],
        "the ack carries the last event's seq"
    );
    // After the end, the clock is no longer the referee's to change.
    li.refused(
        json!({"type": "adjust_clock", "game_id": id, "color": "black", "delta_ms": 1000, "reason": "r"}),
        "wrong_phase",
    )
    .await;
}

#[tokio::test]
async fn a_count_is_corrected_even_after_the_result_was_changed() {
    let server = TestServer::start().await;
    let (mut black, _white, id) = counted_game(&server).await;
    let mut li = login_as(&server, "li", Role::Referee).await;
    li.ok(json!({"type": "change_result", "game_id": id, "ruling": "annul", "reason": "in doubt"}))
        .await;
    assert_eq!(black.recv_type("result_changed").await["result"], "Void");
    li.ok(json!({"type": "correct_count", "game_id": id, "dead": [], "reason": "E5 lives"}))
        .await;
    let changed = black.recv_type("result_changed").await;
    assert_eq!(
        (&changed["previous"], &changed["result"]),
        (&json!("Void"), &json!("B+73.5"))
    );
    let mut fresh = server.login("later").await;
    fresh.ok(json!({"type": "join", "game_id": id})).await;
    let snapshot = fresh.recv_type("snapshot").await;
    assert_eq!(
        (&snapshot["result"], &snapshot["reason"]),
        (&json!("B+73.5"), &json!("score"))
    );
}
