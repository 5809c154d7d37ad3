//! Exposed to the internet: plain HTTP connections that send nothing, send their headers
//! or body slowly, or idle between requests are closed within `[http]`'s times; they are
//! capped in all and per address; an upgraded connection leaves those caps. Timeouts are
//! set to a second so that each test waits about that long.

mod common;

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use common::{TestServer, WAIT};
use tengen::config::Config;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// A TCP connection to `addr` from the loopback address `from` (127.x.y.z: every one of
/// them is this machine, each a client address of its own to the server).
async fn connect_from(from: &str, addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("a socket");
    let from: IpAddr = from.parse().expect("an address");
    socket.bind(SocketAddr::new(from, 0)).expect("bound");
    socket.connect(addr).await.expect("connects")
}

fn addr(server: &TestServer) -> SocketAddr {
    server.server.as_ref().expect("running").addr()
}

/// Reads until the server closes the connection (end of stream or a reset), within
/// [`WAIT`]: what it sent before.
async fn until_closed(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let closed = tokio::time::timeout(WAIT, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "the server kept the connection open past {WAIT:?}; it sent {:?}",
        String::from_utf8_lossy(&got)
    );
    String::from_utf8_lossy(&got).into_owned()
}

/// Short timeouts, all long but the one under test.
fn timeouts(header: u64, body: u64, keep_alive: u64) -> impl FnOnce(&mut Config) {
    move |c: &mut Config| {
        c.http.header_read_timeout_secs = header;
        c.http.body_read_timeout_secs = body;
        c.http.keep_alive_secs = keep_alive;
    }
}

#[tokio::test]
async fn a_socket_that_sends_nothing_is_closed_after_the_keep_alive_time() {
    let server = TestServer::start_with(timeouts(600, 600, 1)).await;
    let mut silent = TcpStream::connect(addr(&server)).await.expect("connects");
    assert_eq!(until_closed(&mut silent).await, "", "closed without a word");
}

#[tokio::test]
async fn headers_that_never_end_are_cut_off_at_the_header_timeout_though_bytes_keep_coming() {
    let server = TestServer::start_with(timeouts(1, 600, 600)).await;
    let mut slow = TcpStream::connect(addr(&server)).await.expect("connects");
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .expect("sent");
    // A header line a byte at a time, for far longer than the timeout.
    let endless = b"X-Slow: "
        .iter()
        .chain([b'a'; 200].iter())
        .copied()
        .collect::<Vec<_>>();
    let (mut read, mut write) = slow.into_split();
    let sender = tokio::spawn(async move {
        for b in endless {
            if write.write_all(&[b]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let closed = tokio::time::timeout(WAIT, async {
        let mut buf = [0u8; 1024];
        loop {
            match read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await;
    sender.abort();
    assert!(closed.is_ok(), "a never-ending header kept its connection");
}

#[tokio::test]
async fn a_body_that_never_comes_is_refused_and_its_connection_closed() {
    let server = TestServer::start_with(timeouts(600, 1, 600)).await;
    let mut slow = TcpStream::connect(addr(&server)).await.expect("connects");
    slow.write_all(
        b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"user",
    )
    .await
    .expect("sent");
    // The rest, too slowly: 94 bytes at 10 a second.
    let (mut read, mut write) = slow.into_split();
    let sender = tokio::spawn(async move {
        for _ in 0..94 {
            if write.write_all(b" ").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let mut got = Vec::new();
    let closed = tokio::time::timeout(WAIT, read.read_to_end(&mut got)).await;
    sender.abort();
    assert!(closed.is_ok(), "a body that never came kept its connection");
    // The refusal, unless the close reset the connection before it was read.
    let answer = String::from_utf8_lossy(&got);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 400"),
        "{answer}"
    );
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_after_the_keep_alive_time() {
    let server = TestServer::start_with(timeouts(600, 600, 1)).await;
    let mut kept = TcpStream::connect(addr(&server)).await.expect("connects");
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .expect("sent");
    let answer = until_closed(&mut kept).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("ok\n"), "answered in full first: {answer}");
}

#[tokio::test]
async fn a_quick_client_on_a_kept_alive_connection_is_served_request_after_request() {
    // Each request is well within the times; together they last longer than any of them.
    let server = TestServer::start_with(timeouts(1, 1, 1)).await;
    let mut kept = TcpStream::connect(addr(&server)).await.expect("connects");
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(400)).await;
        kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .expect("sent");
        let mut buf = [0u8; 1024];
        let n = tokio::time::timeout(WAIT, kept.read(&mut buf))
            .await
            .expect("answered")
            .expect("read");
        assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "{:?}", &buf[..n]);
    }
}

#[tokio::test]
async fn plain_connections_are_capped_per_address_and_in_all() {
    let server = TestServer::start_with(|c| {
        c.http.max_connections = 5;
        c.http.max_connections_per_address = 3;
    })
    .await;
    let at = addr(&server);
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(connect_from("127.0.0.1", at).await);
    }
    // The fourth from the same address is answered 503 and closed at once.
    let mut fourth = connect_from("127.0.0.1", at).await;
    let refused = until_closed(&mut fourth).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    // Another address is served beside them...
    let mut other = connect_from("127.0.0.2", at).await;
    other
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .expect("sent");
    assert!(until_closed(&mut other).await.starts_with("HTTP/1.1 200"));
    // ... until the server's own cap: 3 + 2 held.
    held.push(connect_from("127.0.0.3", at).await);
    held.push(connect_from("127.0.0.4", at).await);
    let mut sixth = connect_from("127.0.0.5", at).await;
    assert!(until_closed(&mut sixth).await.starts_with("HTTP/1.1 503"));
    // A place comes free when a connection goes.
    drop(held.pop());
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let mut again = connect_from("127.0.0.5", at).await;
        again
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .ok();
        if until_closed(&mut again).await.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the place never came free"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn an_upgraded_connection_leaves_the_plain_caps_and_deadlines() {
    let server = TestServer::start_with(|c| {
        c.http.max_connections_per_address = 2;
        c.http.keep_alive_secs = 1;
        c.http.header_read_timeout_secs = 1;
    })
    .await;
    let mut sockets = Vec::new();
    for _ in 0..4 {
        sockets.push(server.login("alice").await);
    }
    // Past every deadline of a plain connection, and the sockets still answer.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    for s in &mut sockets {
        s.ok(serde_json::json!({"type": "ping"})).await;
    }
    // And plain connections still find their places.
    let (status, _) = common::get(&server, "/healthz").await;
    assert_eq!(status, 200);
}

/// The unit's `Environment=` settings: `KEY=VALUE`, unquoted as systemd does for a
/// whole assignment in single or double quotes.
fn unit_environment(unit: &str) -> Vec<(String, String)> {
    unit.lines()
        .filter_map(|line| line.strip_prefix("Environment="))
        .map(|assignment| {
            let unquoted = assignment
                .strip_prefix('\'')
                .and_then(|a| a.strip_suffix('\''))
                .or_else(|| {
                    assignment
                        .strip_prefix('"')
                        .and_then(|a| a.strip_suffix('"'))
                })
                .unwrap_or(assignment);
            let (key, value) = unquoted.split_once('=').expect("KEY=VALUE");
            (key.to_owned(), value.to_owned())
        })
        .collect()
}

fn repo_file(path: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The value of nginx directive `name` in `conf`, in bytes or seconds (`k`, `m`, `s`).
fn nginx(conf: &str, name: &str) -> u64 {
    let value = conf
        .lines()
        .map(str::trim)
        .find_map(|line| line.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("nginx.conf sets {name}"))
        .trim_end_matches(';')
        .trim();
    let (digits, unit) = value.split_at(value.trim_end_matches(char::is_alphabetic).len());
    let n: u64 = digits.parse().expect("a number");
    match unit {
        "" | "s" => n,
        "k" => n * 1024,
        "m" => n * 1024 * 1024,
        other => panic!("unit {other}"),
    }
}

#[test]
fn the_shipped_deployment_trusts_its_proxy_names_its_https_address_and_fits_its_limits() {
    let unit = repo_file("deploy/tengen.service");
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/tengen.toml");
    let config = Config::load(Some(&file), unit_environment(&unit))
        .expect("the unit's settings over the shipped file load");
    // nginx.conf proxies from this host: its addresses are trusted, so the limits count
    // each client by the address it forwards.
    let conf = repo_file("deploy/nginx.conf");
    assert!(
        conf.contains("server 127.0.0.1:7480;"),
        "the proxy is on this host"
    );
    for local in ["127.0.0.1", "::1"] {
        let ip: IpAddr = local.parse().expect("an address");
        assert!(
            config.auth.trusted_proxies.iter().any(|n| n.contains(ip)),
            "{local} is not in the unit's auth.trusted_proxies"
        );
    }
    let url = config
        .auth
        .public_url
        .as_deref()
        .expect("auth.public_url set");
    assert!(
        url.starts_with("https://"),
        "{url}: the cookie must be Secure"
    );
    assert_eq!(config.auth.dev_login, Some(false));
    // The docs' reverse-proxy section says why.
    let readme = repo_file("deploy/README.md");
    let section = readme
        .split("## Reverse proxy")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("a reverse proxy section");
    for key in [
        "auth.trusted_proxies",
        "auth.public_url",
        "client_max_body_size",
    ] {
        assert!(
            section.contains(key),
            "deploy/README.md's reverse proxy section on {key}"
        );
    }
    // nginx takes the largest body tengen does, and closes idle upstream connections
    // before tengen would.
    assert!(nginx(&conf, "client_max_body_size") >= tengen::net::MAX_REVIEW_BODY_BYTES as u64);
    assert!(nginx(&conf, "keepalive_timeout") < config.http.keep_alive_secs);
}

/// A `tengen serve` child whose whole log goes to a file, with the settings in `env`.
struct Logged {
    child: std::process::Child,
    log: std::path::PathBuf,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Logged {
    fn start(env: &[(&str, &str)]) -> Logged {
        let dir = tempfile::tempdir().expect("dir");
        let log = dir.path().join("stderr.log");
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tengen"));
        for (key, _) in std::env::vars().filter(|(k, _)| k.starts_with("TENGEN_")) {
            command.env_remove(key);
        }
        let child = command
            .args(["serve", "--listen", "127.0.0.1:0", "--data"])
            .arg(dir.path().join("data"))
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("tengen starts");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let addr = loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(i) = text.find("ws://") {
                let url: String = text[i + 5..]
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != '/')
                    .collect();
                break url.parse().expect("the announced address");
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no address announced: {text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        Logged {
            child,
            log,
            addr,
            _dir: dir,
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).expect("the log")
    }
}

impl Drop for Logged {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain HTTP/1.1 POST of a JSON body with extra header lines: the status.
async fn post(addr: SocketAddr, path: &str, extra: &str, body: &str) -> u16 {
    let mut s = TcpStream::connect(addr).await.expect("connects");
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).await.expect("sent");
    let answer = until_closed(&mut s).await;
    answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status")
}

/// Waits (bounded) until the child's log holds `needle`.
async fn logged(server: &Logged, needle: &str) -> String {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let log = server.log();
        if log.contains(needle) || tokio::time::Instant::now() >= deadline {
            return log;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

const SECRET: &str = "a test secret of more than thirty-two bytes";

#[tokio::test]
async fn a_local_proxy_that_is_not_trusted_is_warned_of_once_and_a_trusted_one_not_at_all() {
    let warning = "is not in auth.trusted_proxies";
    let untrusted = Logged::start(&[("TENGEN_AUTH__SECRET", SECRET)]);
    for _ in 0..3 {
        post(
            untrusted.addr,
            "/api/auth/login",
            "X-Forwarded-For: 203.0.113.9\r\n",
            r#"{"username": "nobody", "password": "wrong password"}"#,
        )
        .await;
    }
    let log = logged(&untrusted, warning).await;
    assert_eq!(log.matches(warning).count(), 1, "{log}");

    let trusted = Logged::start(&[
        ("TENGEN_AUTH__SECRET", SECRET),
        ("TENGEN_AUTH__TRUSTED_PROXIES", r#"["127.0.0.1"]"#),
    ]);
    post(
        trusted.addr,
        "/api/auth/login",
        "X-Forwarded-For: 203.0.113.9\r\n",
        r#"{"username": "nobody", "password": "wrong password"}"#,
    )
    .await;
    let log = logged(&trusted, "failed login").await;
    assert!(log.contains("failed login"), "{log}");
    assert!(!log.contains(warning), "{log}");
    assert!(
        log.contains("203.0.113.9"),
        "the forwarded client is logged: {log}"
    );
}

#[tokio::test]
async fn failed_logins_and_lock_outs_are_logged_without_the_password() {
    let server = Logged::start(&[("TENGEN_AUTH__SECRET", SECRET)]);
    let password = "hunter2-is-not-it";
    let mut statuses = Vec::new();
    for _ in 0..7 {
        let body = format!(r#"{{"username": "alice", "password": "{password}"}}"#);
        statuses.push(post(server.addr, "/api/auth/login", "", &body).await);
    }
    assert!(
        statuses.contains(&401) && statuses.contains(&429),
        "{statuses:?}"
    );
    let log = logged(&server, "too many failed logins").await;
    assert!(log.contains("failed login"), "{log}");
    assert!(log.contains("too many failed logins"), "{log}");
    assert!(log.contains("alice"), "the name tried: {log}");
    assert!(!log.contains(password), "{log}");
}

#[tokio::test]
async fn trace_logging_never_shows_a_token() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let server = Logged::start(&[("TENGEN_AUTH__SECRET", SECRET), ("TENGEN_LOG", "trace")]);
    let claims = tengen::auth::claims_for("alice", None, tengen::protocol::Role::Player, 3600);
    let token = tengen::auth::sign(SECRET.as_bytes(), &claims).expect("signed");
    let url = format!("ws://{}/ws", server.addr);
    let (mut ws, _) = tokio_tungstenite::connect_async(&url)
        .await
        .expect("connects");
    let auth = serde_json::json!({"type": "auth", "id": 1, "token": token});
    ws.send(Message::text(auth.to_string()))
        .await
        .expect("sent");
    let answered = tokio::time::timeout(WAIT, async {
        while let Some(Ok(msg)) = ws.next().await {
            if msg.to_text().is_ok_and(|t| t.contains("authenticated")) {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(answered, Ok(true), "logged in");
    // The server's debug line of the close comes after everything about the frame.
    ws.close(None).await.expect("closed");
    let log = logged(&server, "connection closed").await;
    assert!(
        log.contains("connection closed"),
        "debug lines are on: {log}"
    );
    assert!(!log.contains(&token), "the token is in the log");
}
