//! The example client of `client-protocol/examples/client.py` plays a whole game against a
//! real server: seek, accept, a move, a dropped connection and a catch-up with
//! `since_seq`, two passes and an agreed count. The result it prints must be the one the
//! archive keeps, and the protocol's own description must be served beside it.

mod common;

use std::path::Path;

use common::{TestServer, get_json};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn the_python_example_client_plays_a_game_to_its_end() {
    let server = TestServer::start().await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("client-protocol/examples/client.py");
    let (url, alice, bob) = (
        server.url.clone(),
        server.token("alice"),
        server.token("bob"),
    );
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("python3")
            .arg(script)
            .args([url, alice, bob])
            .output()
    })
    .await
    .expect("the client's task")
    .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client.py failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let ended: Value =
        serde_json::from_str(stdout.trim()).expect("client.py prints the game_ended event");
    assert_eq!(ended["type"], "game_ended", "{ended}");
    assert_eq!(ended["result"], "B+73.5", "{ended}");
    assert_eq!(ended["reason"], "score", "{ended}");

    let game_id = ended["game_id"].as_str().expect("a game id");
    let (status, record) = get_json(&server, &format!("/api/games/{game_id}")).await;
    assert_eq!(status, 200, "{record}");
    assert_eq!(record["status"], "finished", "{record}");
    assert_eq!(record["result"], "B+73.5", "{record}");
    assert_eq!(record["black"]["id"], "alice", "{record}");
    let chats = record["events"]
        .as_array()
        .expect("the record's events")
        .iter()
        .filter(|e| e["type"] == "chat")
        .count();
    assert_eq!(chats, 1, "the chat sent while Bob was away: {record}");
}

#[tokio::test]
async fn the_server_serves_the_asyncapi_document_the_code_generates() {
    let server = TestServer::start().await;
    let (status, served) = get_json(&server, "/api/asyncapi.json").await;
    assert_eq!(status, 200);
    assert_eq!(served, tengen::protocol::schema::asyncapi());
    assert_eq!(served["asyncapi"], "3.0.0");
}
