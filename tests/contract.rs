//! Contract tests against a live server, from the generated documents: schemathesis over
//! every HTTP route of the OpenAPI document (no 5xx, every answer as documented, bad input
//! refused), and a fuzz of the WebSocket with messages drawn from `client.json` (every
//! well-formed one answered once with its `id` and the connection kept, every malformed one
//! answered with an `error`, every frame the server sends valid by `server.json`). Both
//! run in the Python venv `tests/run` makes under `target/contract-venv` (schemathesis,
//! hypothesis-jsonschema, websockets from PyPI).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Client, TestServer, frozen, play, start_game};
use serde_json::json;
use tengen::protocol::Role;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A program of the venv, or a failure saying how to make it.
fn venv(program: &str) -> PathBuf {
    let path = root().join("target/contract-venv/bin").join(program);
    assert!(
        path.exists(),
        "{} is missing; tests/run makes the venv (python3 -m venv target/contract-venv && target/contract-venv/bin/pip install -r tests/contract/requirements.txt)",
        path.display()
    );
    path
}

/// Runs `command` off the async threads and fails with its output unless it succeeds.
async fn succeeds(mut command: Command, what: &str) -> String {
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("the command's task")
        .unwrap_or_else(|e| panic!("{what} does not run: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Saves a review as `token`'s user and returns its id.
async fn save_review(server: &TestServer, token: &str) -> String {
    let addr = server.server.as_ref().expect("running").addr();
    let body = json!({"sgf": "(;GM[1]SZ[9];B[ee];W[cc])"}).to_string();
    let req = format!(
        "POST /api/reviews HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut s = frozen(TcpStream::connect(addr)).await.expect("connects");
    frozen(s.write_all(req.as_bytes())).await.expect("sends");
    let mut raw = Vec::new();
    frozen(s.read_to_end(&mut raw)).await.expect("reads");
    let text = String::from_utf8_lossy(&raw).to_string();
    assert!(text.starts_with("HTTP/1.1 201"), "{text}");
    let body = text.split_once("\r\n\r\n").expect("a body").1;
    let start = body.find('{').expect("a JSON body");
    let end = body.rfind('}').expect("a JSON body");
    let saved: serde_json::Value = serde_json::from_str(&body[start..=end]).expect("JSON");
    saved["review_id"].as_str().expect("an id").to_string()
}

/// A tournament that `td` (an admin) directs, with `players` registered and round one
/// paired: its id.
async fn paired_tournament(server: &TestServer, players: &mut [&mut Client]) -> String {
    let mut td = server.connect_as("td", Role::Admin).await;
    let setup = json!({
        "name": "Contract Cup",
        "regulations": {
            "system": {"kind": "swiss"}, "rounds": 2, "handicap": null, "colours": "draw",
            "seeding": "split_and_fold", "tie_breaks": ["sos"], "bye": 2, "missed_round": 1,
            "separate_clubs": false, "separate_countries": false
        },
        "settings": {"board_size": 9, "clock": {"system": "absolute", "main_ms": 600_000}},
        "registration_opens": 0,
        "registration_closes": 4_102_444_800_000_i64
    });
    let (_, id) = common::create_tournament(&mut td, setup).await;
    for player in players {
        player
            .ok(json!({"type": "register", "tournament_id": id, "rank": "5k"}))
            .await;
    }
    td.ok(json!({"type": "pair", "tournament_id": id})).await;
    id
}

#[tokio::test(flavor = "multi_thread")]
async fn schemathesis_finds_every_route_as_documented() {
    let schemathesis = venv("schemathesis");
    let server = TestServer::start().await;
    let (mut alice, mut bob) = (server.login("alice").await, server.login("bob").await);
    let game_id = start_game(
        &mut alice,
        &mut bob,
        json!({"board_size": 9, "color": "black"}),
    )
    .await;
    play(&mut alice, &game_id, 1, "E5").await;
    let tournament_id = paired_tournament(&server, &mut [&mut alice, &mut bob]).await;
    let token = server.token("alice");
    let review_id = save_review(&server, &token).await;

    let mut command = Command::new(schemathesis);
    command
        .current_dir(root().join("target"))
        .args(["--config-file"])
        .arg(root().join("tests/contract/schemathesis.toml"))
        .arg("run")
        .arg(server.http("/api/openapi.json"))
        .env("TENGEN_TOKEN", &token)
        .env("TENGEN_GAME_ID", &game_id)
        .env("TENGEN_REVIEW_ID", &review_id)
        .env("TENGEN_TOURNAMENT_ID", &tournament_id)
        .env("NO_COLOR", "1");
    let out = succeeds(command, "schemathesis").await;
    println!("{out}");
    // It tested every operation of the document but the document's own route, which
    // schemathesis leaves out as the schema's source (tests/openapi.rs checks it).
    let operations = tengen::net::openapi::document()["paths"]
        .as_object()
        .expect("paths")
        .values()
        .map(|item| item.as_object().expect("an item").len())
        .sum::<usize>()
        - 1;
    assert!(
        out.contains(&format!("Tested: {operations}")),
        "schemathesis did not test all {operations} operations:\n{out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_websocket_answers_every_generated_message_and_refuses_every_broken_one() {
    let python = venv("python");
    // Well above what the fuzz sends, so that no answer is `rate_limited`.
    let server = TestServer::start_with(|c| {
        c.limits.messages_per_second = 1000;
        c.limits.burst = 1000;
    })
    .await;
    server.account("fuzzer").await;
    let mut command = Command::new(python);
    command
        .arg(root().join("tests/contract/ws_fuzz.py"))
        .arg(format!("{}?token={}", server.url, server.token("fuzzer")))
        .arg(root().join("client-protocol/schema"));
    let out = succeeds(command, "ws_fuzz.py").await;
    println!("{}", out.lines().last().unwrap_or_default());
    let summary: serde_json::Value =
        serde_json::from_str(out.lines().last().unwrap_or_default()).expect("a JSON summary");
    let types = tengen::protocol::schema::client_schema()["oneOf"]
        .as_array()
        .expect("the client messages")
        .len();
    assert_eq!(summary["types"], types, "{summary}");
    assert!(
        summary["well_formed"].as_u64() >= Some(types as u64),
        "{summary}"
    );
    assert!(
        summary["malformed"].as_u64() >= Some(types as u64),
        "{summary}"
    );
}
