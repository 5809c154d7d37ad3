//! Flag-fall accuracy in real time: how late after the deadline the server's timer
//! declares a loss on time. Each game has a scheduled start, so its clock starts at a
//! `game_began` event; nobody moves; the flag must fall `main_ms` later. Both events
//! travel the same path (apply, commit, broadcast), so the gap between their arrivals
//! minus `main_ms` is the timer's lateness, delivery cancelling out.
//!
//! `cargo bench --bench flag_fall` (release build; prints a summary).

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tengen::auth::{claims_for, load_or_create_secret, sign};
use tengen::config::{Config, SyncSetting};
use tengen::protocol::Role;
use tengen::server::Server;
use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::Message;

const GAMES: usize = 100;

async fn next_of(
    ws: &mut (impl StreamExt<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin),
    kind: &str,
) -> (Value, Instant) {
    loop {
        let msg = ws.next().await.expect("open").expect("message");
        if let Message::Text(t) = msg {
            let v: Value = serde_json::from_str(t.as_str()).expect("json");
            if v["type"] == kind {
                return (v, Instant::now());
            }
        }
    }
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("dir");
    let mut config = Config {
        listen: "127.0.0.1:0".parse().expect("addr"),
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    config.store.sync = SyncSetting::Normal;
    config.limits.max_seeks_per_user = GAMES + 1;
    config.limits.max_games_per_user = GAMES + 1;
    config.limits.burst = 10_000;
    config.limits.messages_per_second = 10_000;
    let secret = load_or_create_secret(&config.auth, &config.data_dir).expect("secret");
    let server = Server::start(config).await.expect("server");
    let url = |who: &str| {
        let token = sign(&secret, &claims_for(who, None, Role::Player, 3600)).expect("token");
        format!("ws://{}/ws?token={token}", server.addr())
    };
    let (mut black, _) = connect_async(url("black")).await.expect("connect");
    let (mut white, _) = connect_async(url("white")).await.expect("connect");
    // A spectator whose reader stamps every frame the moment it arrives.
    let (watcher, _) = connect_async(format!("ws://{}/ws", server.addr()))
        .await
        .expect("connect");
    let (mut watch_out, mut watch_in) = watcher.split();
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel::<(Instant, Value)>();
    tokio::spawn(async move {
        while let Some(Ok(msg)) = watch_in.next().await {
            if let Message::Text(t) = msg
                && let Ok(v) = serde_json::from_str::<Value>(t.as_str())
            {
                let _ = seen_tx.send((Instant::now(), v));
            }
        }
    });
    let first_start = tengen::time::wall_ms() + 10_000;
    let mut main_of = std::collections::HashMap::new();
    for i in 0..GAMES {
        // Starts 30 ms apart and deadlines 37 ms apart, so no two games' events queue
        // behind each other and the measurement is of the timer, not of a pile-up.
        let start_at = first_start + 30 * i as i64;
        let main_ms = 1_000 + 7 * i as u64;
        let seek = json!({"type": "seek", "settings": {"board_size": 9, "color": "black",
            "start_at": start_at, "clock": {"system": "absolute", "main_ms": main_ms}}});
        black
            .send(Message::text(seek.to_string()))
            .await
            .expect("send");
        let (created, _) = next_of(&mut black, "challenge_created").await;
        let accept =
            json!({"type": "accept", "challenge_id": created["challenge"]["challenge_id"]});
        white
            .send(Message::text(accept.to_string()))
            .await
            .expect("send");
        let (ack, _) = next_of(&mut white, "ack").await;
        let game = ack["game_id"].as_str().expect("game id").to_string();
        let join = json!({"type": "join", "game_id": game});
        watch_out
            .send(Message::text(join.to_string()))
            .await
            .expect("send");
        main_of.insert(game, main_ms as i64);
    }
    assert!(
        tengen::time::wall_ms() < first_start,
        "set-up finished before the start"
    );
    let mut began = std::collections::HashMap::new();
    let mut lateness: Vec<i64> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while lateness.len() < GAMES && Instant::now() < deadline {
        let Ok(Some((at, v))) = tokio::time::timeout(Duration::from_secs(15), seen.recv()).await
        else {
            break;
        };
        let game = v["game_id"].as_str().unwrap_or_default().to_string();
        match v["type"].as_str() {
            Some("game_began") => {
                began.insert(game, at);
            }
            Some("game_ended") => {
                if let (Some(b), Some(main)) = (began.get(&game), main_of.get(&game)) {
                    lateness.push(at.duration_since(*b).as_micros() as i64 - main * 1000);
                }
            }
            _ => {}
        }
    }
    lateness.sort_unstable();
    assert_eq!(lateness.len(), GAMES, "every game flagged");
    let pick =
        |q: f64| lateness[((lateness.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0;
    println!(
        "flag fall lateness over {} games (ms after the deadline): min {:.3}  p50 {:.3}  p90 {:.3}  p99 {:.3}  max {:.3}",
        lateness.len(),
        pick(0.0),
        pick(0.5),
        pick(0.9),
        pick(0.99),
        pick(1.0)
    );
    server.shutdown().await;
}
