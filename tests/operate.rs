//! What an operator relies on: `/metrics` moves with the traffic, `/healthz` and `/readyz`
//! tell the truth, and the binary runs as an unprivileged user with the documented paths.
//!
//! Metrics are process-wide atomics and the tests of this file run in parallel threads,
//! so counters are compared as deltas with `>=`. Only one test here opens WebSocket
//! connections, so the connection gauges move only because of it.

mod common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{TestServer, play, start_game};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A plain HTTP/1.1 GET: the status code and the body.
async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let (status, _, body) = common::get_at(addr, path).await;
    (status, body)
}

fn addr(server: &TestServer) -> SocketAddr {
    server.server.as_ref().expect("running").addr()
}

/// `/metrics` as sample name (with labels) → value.
async fn scrape(addr: SocketAddr) -> HashMap<String, f64> {
    let (status, body) = get(addr, "/metrics").await;
    assert_eq!(status, 200);
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (name, value) = l.rsplit_once(' ').expect("name value");
            (name.to_string(), value.parse().expect("a number"))
        })
        .collect()
}

fn value(m: &HashMap<String, f64>, name: &str) -> f64 {
    *m.get(name)
        .unwrap_or_else(|| panic!("/metrics has no {name}"))
}

/// Checks `name` grew by at least `by` between two scrapes.
fn grew(before: &HashMap<String, f64>, after: &HashMap<String, f64>, name: &str, by: f64) {
    let (b, a) = (value(before, name), value(after, name));
    assert!(a - b >= by, "{name}: {b} -> {a}, expected +{by} at least");
}

#[tokio::test]
async fn metrics_move_during_a_game() {
    let server = TestServer::start().await;
    let addr = addr(&server);
    let before = scrape(addr).await;
    for family in [
        "tengen_live_games",
        "tengen_messages_out_total",
        "tengen_rate_limited_total",
        "tengen_slow_consumers_total",
        "tengen_flag_falls_total",
        "tengen_lag_credit_seconds_total",
        "tengen_moves_rejected_total{reason=\"superko\"}",
        "tengen_store_commit_seconds_bucket{le=\"+Inf\"}",
        "tengen_store_commit_seconds_sum",
        "tengen_store_fsync_seconds_bucket{le=\"+Inf\"}",
        "tengen_connections{role=\"bot\"}",
    ] {
        value(&before, family);
    }

    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let mut watcher = server.anonymous().await;
    let game = start_game(
        &mut alice,
        &mut bob,
        json!({"board_size": 9, "color": "black"}),
    )
    .await;
    watcher.ok(json!({"type": "join", "game_id": game})).await;
    let during = scrape(addr).await;
    grew(&before, &during, "tengen_connections{role=\"player\"}", 2.0);
    grew(
        &before,
        &during,
        "tengen_connections{role=\"anonymous\"}",
        1.0,
    );
    grew(&before, &during, "tengen_live_games", 1.0);

    play(&mut alice, &game, 1, "E5").await;
    play(&mut bob, &game, 2, "C3").await;
    play(&mut alice, &game, 3, "G7").await;
    // Bob plays on Alice's stone: refused by the rules, counted by reason.
    let refusal = bob
        .refused(
            json!({"type": "play", "game_id": game, "move_number": 4, "vertex": "E5"}),
            "illegal_move",
        )
        .await;
    assert_eq!(refusal["reason"], "occupied", "{refusal}");
    play(&mut bob, &game, 4, "D4").await;

    let after = scrape(addr).await;
    grew(&during, &after, "tengen_moves_total", 4.0);
    // join + 4 plays + the refused play, at least; the rest of the test adds more.
    grew(&during, &after, "tengen_messages_in_total", 5.0);
    // Four moves, each sent to two players and a spectator.
    grew(&during, &after, "tengen_messages_out_total", 12.0);
    grew(&during, &after, "tengen_store_commit_seconds_count", 4.0);
    // Each move is sent after the last one's ack, so each waits for a flush of its own.
    grew(&during, &after, "tengen_store_fsync_seconds_count", 4.0);
    grew(
        &during,
        &after,
        "tengen_store_commit_seconds_bucket{le=\"+Inf\"}",
        4.0,
    );
    grew(
        &during,
        &after,
        "tengen_moves_rejected_total{reason=\"occupied\"}",
        1.0,
    );
    assert!(value(&after, "tengen_store_commit_seconds_sum") > 0.0);

    // The game ends and everyone leaves: the gauges come back down.
    alice.ok(json!({"type": "resign", "game_id": game})).await;
    bob.recv_type("game_ended").await;
    alice.close().await;
    bob.close().await;
    watcher.close().await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = scrape(addr).await;
        let players = value(&now, "tengen_connections{role=\"player\"}");
        let anonymous = value(&now, "tengen_connections{role=\"anonymous\"}");
        let games = value(&now, "tengen_live_games");
        if players <= value(&during, "tengen_connections{role=\"player\"}") - 2.0
            && anonymous <= value(&during, "tengen_connections{role=\"anonymous\"}") - 1.0
            && games <= value(&during, "tengen_live_games") - 1.0
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "gauges did not come down: players {players}, anonymous {anonymous}, games {games}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.stop().await;
}

#[tokio::test]
async fn metrics_are_prometheus_text() {
    let server = TestServer::start().await;
    let mut stream = TcpStream::connect(addr(&server)).await.expect("connect");
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .expect("send");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).await.expect("read");
    let head = raw
        .split("\r\n\r\n")
        .next()
        .expect("head")
        .to_ascii_lowercase();
    assert!(
        head.contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    assert!(raw.contains("# TYPE tengen_store_commit_seconds histogram"));
    assert!(raw.contains("# TYPE tengen_store_fsync_seconds histogram"));
    assert!(raw.contains("tengen_build_info{version=\""));
    server.stop().await;
}

#[tokio::test]
async fn healthz_is_alive_and_readyz_follows_the_store() {
    let server = TestServer::start().await;
    let addr = addr(&server);
    assert_eq!(get(addr, "/healthz").await, (200, "ok\n".to_string()));
    assert_eq!(get(addr, "/readyz").await, (200, "ready\n".to_string()));

    // Make the store unwritable the way it happens in production: another process holds
    // SQLite's write lock (an operator's `sqlite3` shell in `BEGIN IMMEDIATE`, a stuck
    // migration tool). File permissions cannot do it here: the tests may run as root,
    // whom permission bits do not stop. This is a second connection to the server's own
    // file, taking the write lock and keeping it; the server is not told anything.
    let db = server.dir.path().join(tengen::server::DB_FILE);
    let (locked_tx, locked_rx) = std::sync::mpsc::channel::<()>();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let conn = rusqlite::Connection::open(&db).expect("open the server's database");
        conn.execute_batch("BEGIN EXCLUSIVE")
            .expect("take the write lock");
        locked_tx.send(()).expect("tell the test");
        let _ = release_rx.recv();
        conn.execute_batch("ROLLBACK").expect("release");
    });
    locked_rx.recv().expect("the lock is held");

    let (status, body) = get(addr, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("store not writable"), "{body}");
    // Alive is not ready: the process itself is fine.
    assert_eq!(get(addr, "/healthz").await.0, 200);

    release_tx.send(()).expect("release the lock");
    holder.join().expect("lock holder");
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (status, body) = get(addr, "/readyz").await;
        if status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still unready after the lock was released: {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    server.stop().await;
}

fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The checks deploy/README.md promises: as an unprivileged user (uid 65534, like the
/// image's `tengen` user or systemd's DynamicUser), with the data in a directory that
/// user owns, the server starts, is healthy and ready (it can write its database),
/// creates its files owned by that user with a private secret, logs JSON with a span per
/// connection, and stops cleanly on SIGTERM.
#[tokio::test]
async fn the_binary_serves_as_an_unprivileged_user() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if !running_as_root() || !Path::new("/usr/bin/setpriv").exists() {
        eprintln!("skipped: needs root and setpriv to drop to an unprivileged user");
        return;
    }
    const NOBODY: u32 = 65534;
    let root = tempfile::tempdir().expect("dir");
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let bin = root.path().join("tengen");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_tengen"), &bin).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_tengen"), &bin).expect("copy the binary");
    }
    let data = root.path().join("var-lib-tengen");
    std::fs::create_dir(&data).expect("data dir");
    std::os::unix::fs::chown(&data, Some(NOBODY), Some(NOBODY)).expect("chown");
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o750)).expect("chmod");

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let listen: SocketAddr = format!("127.0.0.1:{port}").parse().expect("addr");
    let mut child = Command::new("/usr/bin/setpriv")
        .args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            "--",
        ])
        .arg(&bin)
        .args(["serve", "--data"])
        .arg(&data)
        .env_clear()
        .env("TENGEN_LISTEN", listen.to_string())
        .env("TENGEN_AUTH__DEV_LOGIN", "false")
        .env("TENGEN_LOG__FORMAT", "json")
        .env("TENGEN_LOG", "tengen=debug,info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tengen under setpriv");

    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(Ok(mut s)) =
            tokio::time::timeout(Duration::from_secs(1), TcpStream::connect(listen)).await
        {
            let _ = s.shutdown().await;
            break;
        }
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            let _ = std::io::Read::read_to_string(child.stderr.as_mut().expect("stderr"), &mut err);
            panic!("tengen exited with {status}: {err}");
        }
        assert!(
            Instant::now() < deadline,
            "tengen did not listen within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(get(listen, "/healthz").await.0, 200);
    let (status, body) = get(listen, "/readyz").await;
    assert_eq!(status, 200, "ready means it can write its database: {body}");

    // One connection, so the log has a `conn` span to show.
    let ws = common::Client::connect(&format!("ws://{listen}/ws")).await;
    ws.close().await;
    tokio::time::sleep(Duration::from_millis(200)).await;

    for (file, mode) in [("tengen.db", None), ("jwt-secret", Some(0o600))] {
        let meta = std::fs::metadata(data.join(file)).expect(file);
        assert_eq!((meta.uid(), meta.gid()), (NOBODY, NOBODY), "{file} owner");
        if let Some(mode) = mode {
            assert_eq!(meta.mode() & 0o777, mode, "{file} mode");
        }
    }

    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(term.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "tengen did not stop within 20 s of SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut log = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().expect("stderr"), &mut log).expect("log");
    assert!(status.success(), "exit after SIGTERM: {status}\n{log}");

    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not a JSON log line: {l}")))
        .collect();
    assert!(
        lines.iter().any(|l| l["fields"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("tengen is serving"))),
        "{log}"
    );
    assert!(
        lines.iter().any(|l| l["span"]["name"] == "conn"),
        "a log line inside the connection's span: {log}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["fields"]["message"] == "store closed; bye"),
        "the shutdown finished: {log}"
    );
}

fn deploy_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The Dockerfile's instructions, continuation lines joined, comments dropped.
fn dockerfile() -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in deploy_file("Dockerfile").lines() {
        let line = line.trim();
        if line.starts_with('#') || (line.is_empty() && current.is_empty()) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(start) => current.push_str(start),
            None => {
                current.push_str(line);
                out.push(std::mem::take(&mut current));
            }
        }
    }
    out
}

fn instruction<'a>(lines: &'a [String], name: &str) -> Vec<&'a str> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .map(str::trim)
        .collect()
}

/// The image's settings are a valid configuration that listens on the exposed port on
/// every interface, keeps its data on the volume, and runs as a numeric non-root user.
#[test]
fn the_dockerfile_agrees_with_the_configuration() {
    let lines = dockerfile();
    let env: Vec<(String, String)> = instruction(&lines, "ENV")
        .iter()
        .flat_map(|l| l.split_whitespace())
        .map(|pair| {
            let (k, v) = pair.split_once('=').expect("ENV KEY=VALUE");
            (k.to_string(), v.to_string())
        })
        .collect();
    let config = tengen::config::Config::load(None, env).expect("the image's configuration");
    let runtime = instruction(&lines, "FROM");
    assert!(
        runtime.iter().any(|f| f.starts_with("rust:1-bookworm AS")),
        "{runtime:?}"
    );
    assert_eq!(runtime.last(), Some(&"debian:bookworm-slim"));
    let exposed: u16 = instruction(&lines, "EXPOSE")[0].parse().expect("port");
    assert_eq!(config.listen.to_string(), format!("0.0.0.0:{exposed}"));
    let volume = instruction(&lines, "VOLUME")[0];
    assert!(
        volume.contains(&format!("\"{}\"", config.data_dir.display())),
        "{volume}"
    );
    assert!(!config.dev_login(), "no password-less login in the image");
    let user = instruction(&lines, "USER")[0];
    let uid: u32 = user
        .split(':')
        .next()
        .and_then(|u| u.parse().ok())
        .expect("numeric user");
    assert_ne!(uid, 0);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("cargo build --release --locked")),
        "a locked release build"
    );
}

/// The image's HEALTHCHECK command, with its port replaced, passes against a healthy
/// server and fails once the server is gone.
#[tokio::test]
async fn the_image_health_check_command_works() {
    let lines = dockerfile();
    let check = instruction(&lines, "HEALTHCHECK")[0];
    let argv = check
        .split_once("CMD ")
        .expect("HEALTHCHECK ... CMD [..]")
        .1;
    let argv: Vec<String> = serde_json::from_str(argv).expect("exec form");
    assert_eq!(argv[0], "bash", "debian:bookworm-slim has bash, not curl");
    let server = TestServer::start().await;
    let port = addr(&server).port();
    let run = |argv: Vec<String>| async move {
        let argv: Vec<String> = argv
            .into_iter()
            .map(|a| a.replace("/7480", &format!("/{port}")))
            .collect();
        tokio::process::Command::new(&argv[0])
            .args(&argv[1..])
            .output()
            .await
            .expect("run the health check")
    };
    let healthy = run(argv.clone()).await;
    assert!(
        healthy.status.success(),
        "{}",
        String::from_utf8_lossy(&healthy.stderr)
    );
    server.stop().await;
    let gone = run(argv).await;
    assert!(!gone.status.success(), "no server, no health");
}

/// The unit loads the example configuration with its own settings, gives the graceful
/// shutdown time, and passes `systemd-analyze verify` where systemd's tools exist.
#[test]
fn the_systemd_unit_is_consistent() {
    let unit = deploy_file("tengen.service");
    let values = |key: &str| -> Vec<String> {
        unit.lines()
            .filter_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(str::to_string)
            .collect()
    };
    let env: Vec<(String, String)> = values("Environment")
        .iter()
        .map(|v| {
            let (k, v) = v.split_once('=').expect("Environment=KEY=VALUE");
            (k.to_string(), v.to_string())
        })
        .collect();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/tengen.toml");
    let config = tengen::config::Config::load(Some(&example), env).expect("the unit's settings");
    assert_eq!(config.data_dir, Path::new("/var/lib/tengen"));
    assert_eq!(
        values("StateDirectory"),
        ["tengen"],
        "systemd owns /var/lib/tengen"
    );
    assert!(!config.dev_login());
    for hardening in [
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "PrivateTmp=yes",
        "CapabilityBoundingSet=",
        "MemoryDenyWriteExecute=yes",
        "SystemCallFilter=@system-service",
        "Restart=on-failure",
    ] {
        assert!(unit.lines().any(|l| l == hardening), "{hardening}");
    }
    assert!(values("RestrictAddressFamilies")[0].contains("AF_INET6"));
    let stop: u64 = values("TimeoutStopSec")[0]
        .trim_end_matches('s')
        .parse()
        .expect("seconds");
    assert!(
        stop >= 15,
        "the 5 s drain plus closing the store fit in {stop} s"
    );
    let exec = &values("ExecStart")[0];
    assert!(exec.starts_with("/usr/local/bin/tengen serve --config /etc/tengen/tengen.toml"));

    if !Path::new("/usr/bin/systemd-analyze").exists() {
        eprintln!("skipped systemd-analyze verify: not installed");
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let copy = dir.path().join("tengen.service");
    let testable = unit.replace("/usr/local/bin/tengen", env!("CARGO_BIN_EXE_tengen"));
    std::fs::write(&copy, testable).expect("write");
    let out = Command::new("/usr/bin/systemd-analyze")
        .arg("verify")
        .arg(&copy)
        .output()
        .expect("systemd-analyze");
    let said =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && !said.contains("tengen.service:"),
        "{said}"
    );
}
