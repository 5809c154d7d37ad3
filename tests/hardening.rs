//! Hostile input through a real server: token claims, display names, game settings and
//! the local dev login. Each refusal is checked for its code, for naming what is wrong,
//! and for changing nothing.

mod common;

use common::TestServer;
use serde_json::{Value, json};

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
