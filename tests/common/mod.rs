//! Test harness shared by the integration tests: a real server on port 0 with a fresh
//! data directory (a real SQLite file), tokens signed with its secret, and WebSocket
//! clients that speak JSON.
#![allow(dead_code)]

pub mod bot;
pub mod cluster;
pub mod process;
pub mod services;

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tengen::auth::{claims_for, load_or_create_secret, sign};
use tengen::config::Config;
use tengen::protocol::Role;
use tengen::server::Server;
use tengen::store::{Origin, StoreError, UserRecord};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};

/// How long a test waits for a message before it fails (real or paused time).
pub const WAIT: Duration = Duration::from_secs(10);

/// The weekday names a calendar's `weekend` takes, Monday first.
pub const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Runs `fut` with tokio's paused clock held still. A paused clock jumps to the next
/// timer whenever the runtime looks idle, and a task waiting for a socket looks idle;
/// a blocking-pool task in flight stops those jumps, so the waits on the network below
/// take no virtual time and clock tests stay exact. Harmless on a real clock.
pub async fn frozen<F: std::future::Future>(fut: F) -> F::Output {
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let guard = tokio::task::spawn_blocking(move || {
        let _ = wait.recv_timeout(WAIT);
    });
    let out = fut.await;
    let _ = done.send(());
    let _ = guard.await;
    out
}

pub struct TestServer {
    pub server: Option<Server>,
    pub dir: tempfile::TempDir,
    pub url: String,
    secret: Vec<u8>,
}

impl TestServer {
    pub async fn start() -> TestServer {
        TestServer::start_with(|_| {}).await
    }

    /// Starts with the test defaults, changed by `tweak`.
    pub async fn start_with(tweak: impl FnOnce(&mut Config)) -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        TestServer::start_in(dir, tweak).await
    }

    /// Starts on an existing data directory (to test restarts).
    pub async fn start_in(dir: tempfile::TempDir, tweak: impl FnOnce(&mut Config)) -> TestServer {
        let mut config = Config {
            listen: "127.0.0.1:0".parse().expect("addr"),
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        };
        tweak(&mut config);
        let secret = load_or_create_secret(&config.auth, &config.data_dir).expect("secret");
        let server = Server::start(config).await.expect("server starts");
        let url = format!("ws://{}/ws", server.addr());
        TestServer {
            server: Some(server),
            dir,
            url,
            secret,
        }
    }

    pub fn http(&self, path: &str) -> String {
        format!(
            "http://{}{}",
            self.server.as_ref().expect("running").addr(),
            path
        )
    }

    pub fn token(&self, sub: &str) -> String {
        self.token_as(sub, Role::Player)
    }

    pub fn token_as(&self, sub: &str, role: Role) -> String {
        sign(&self.secret, &claims_for(sub, None, role, 3600)).expect("sign")
    }

    /// A client logged in as `sub`, who has an account here ([`TestServer::account`]).
    /// A token alone, with no account, is [`TestServer::token`].
    pub async fn login(&self, sub: &str) -> Client {
        self.account(sub).await;
        Client::connect(&format!("{}?token={}", self.url, self.token(sub))).await
    }

    /// A connection of `sub` with `role` (no account needed: an admin directing a
    /// tournament, a referee).
    pub async fn connect_as(&self, sub: &str, role: Role) -> Client {
        Client::connect(&format!("{}?token={}", self.url, self.token_as(sub, role))).await
    }

    /// Gives `sub` an account unless they have one: a player's, with no password (only
    /// accounts play rated games).
    pub async fn account(&self, sub: &str) {
        self.account_named(sub, sub).await;
    }

    /// Gives `sub` an account shown as `display_name`.
    pub async fn account_named(&self, sub: &str, display_name: &str) {
        let store = self.server.as_ref().expect("running").hub().store().clone();
        let user = UserRecord {
            id: sub.to_string(),
            origin: Origin::Local,
            display_name: display_name.to_string(),
            role: Role::Player,
            password_hash: None,
            disabled: false,
            created_at_ms: 0,
        };
        let made = tokio::task::spawn_blocking(move || store.create_user(&user, None, 0))
            .await
            .expect("the store call");
        match made {
            Ok(()) | Err(StoreError::DuplicateUser { .. }) => {}
            Err(e) => panic!("cannot give {sub} an account: {e}"),
        }
    }

    /// A client without a token.
    pub async fn anonymous(&self) -> Client {
        Client::connect(&self.url).await
    }

    /// The running server's store, for a test to read or arrange what no message does.
    pub fn store(&self) -> std::sync::Arc<dyn tengen::store::Store> {
        self.server.as_ref().expect("running").hub().store().clone()
    }

    /// Game `id`'s stored row, read from the store as the archive does (it wakes nothing).
    pub async fn stored_game(&self, id: &str) -> tengen::store::GameRecord {
        let (store, id) = (self.store(), id.to_string());
        tokio::task::spawn_blocking(move || store.game(&id))
            .await
            .expect("the store call")
            .expect("the store")
            .expect("the game")
    }

    /// Stops the server the graceful way and keeps the data directory.
    pub async fn stop(mut self) -> tempfile::TempDir {
        if let Some(server) = self.server.take() {
            server.shutdown().await;
        }
        self.dir
    }
}

pub struct Client {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// Messages received while waiting for something else, in arrival order.
    pending: VecDeque<Value>,
    next_id: u64,
    pub welcome: Value,
}

impl Client {
    pub async fn connect(url: &str) -> Client {
        let (ws, _) = frozen(connect_async(url))
            .await
            .expect("websocket connects");
        Client::over(ws).await
    }

    /// A client on a WebSocket connected some other way (from another source address,
    /// with headers of its own), once its first message has come.
    pub async fn over(ws: WebSocketStream<MaybeTlsStream<TcpStream>>) -> Client {
        let mut client = Client {
            ws,
            pending: VecDeque::new(),
            next_id: 1,
            welcome: Value::Null,
        };
        client.welcome = client.recv().await;
        client
    }

    pub async fn send(&mut self, msg: Value) {
        self.send_text(msg.to_string()).await;
    }

    pub async fn send_text(&mut self, text: String) {
        frozen(self.ws.send(Message::text(text)))
            .await
            .expect("send");
    }

    /// The next JSON message (pending ones first). Panics after [`WAIT`].
    pub async fn recv(&mut self) -> Value {
        if let Some(v) = self.pending.pop_front() {
            return v;
        }
        self.recv_wire().await
    }

    async fn recv_wire(&mut self) -> Value {
        loop {
            let msg = frozen(tokio::time::timeout(WAIT, self.ws.next()))
                .await
                .expect("a message within the wait")
                .expect("the connection is open")
                .expect("a websocket message");
            match msg {
                Message::Text(t) => return serde_json::from_str(t.as_str()).expect("JSON"),
                Message::Close(frame) => {
                    return json!({"type": "__closed", "frame": frame.map(|f| (u16::from(f.code), f.reason.to_string()))});
                }
                _ => continue,
            }
        }
    }

    /// Waits for the connection to end: the close frame's code, or `None` when it ended
    /// without one (a reset: the server may close before reading everything sent).
    pub async fn closed(&mut self) -> Option<u16> {
        // One deadline for the whole wait: pings keep coming and must not extend it.
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            match frozen(tokio::time::timeout_at(deadline, self.ws.next()))
                .await
                .expect("the connection ends within the wait")
            {
                Some(Ok(Message::Close(frame))) => return frame.map(|f| u16::from(f.code)),
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return None,
            }
        }
    }

    /// The next message of type `kind`, keeping the others for later `recv`s.
    pub async fn recv_type(&mut self, kind: &str) -> Value {
        if let Some(i) = self.pending.iter().position(|v| v["type"] == kind) {
            return self.pending.remove(i).expect("present");
        }
        loop {
            let v = self.recv_wire().await;
            if v["type"] == kind {
                return v;
            }
            self.pending.push_back(v);
        }
    }

    /// Sends `msg` with a fresh id and returns the reply carrying that id (ack, error
    /// or a typed reply); other messages stay pending, in order.
    pub async fn request(&mut self, mut msg: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        msg["id"] = json!(id);
        self.send(msg).await;
        if let Some(i) = self.pending.iter().position(|v| v["id"] == id) {
            return self.pending.remove(i).expect("present");
        }
        loop {
            let v = self.recv_wire().await;
            if v["id"] == id {
                return v;
            }
            self.pending.push_back(v);
        }
    }

    /// Like [`Client::request`], but `None` when the connection breaks first (for tests
    /// that kill the server).
    pub async fn try_request(&mut self, msg: Value) -> Option<Value> {
        let id = self.send_request(msg).await?;
        self.reply(id).await
    }

    /// Sends `msg` with a fresh id without waiting for its reply ([`Client::reply`]);
    /// `None` when the connection is gone.
    pub async fn send_request(&mut self, mut msg: Value) -> Option<u64> {
        let id = self.next_id;
        self.next_id += 1;
        msg["id"] = json!(id);
        frozen(self.ws.send(Message::text(msg.to_string())))
            .await
            .ok()?;
        Some(id)
    }

    /// The reply to request `id` (others stay pending); `None` when the connection
    /// breaks first.
    pub async fn reply(&mut self, id: u64) -> Option<Value> {
        if let Some(i) = self.pending.iter().position(|v| v["id"] == id) {
            return self.pending.remove(i);
        }
        loop {
            let next = frozen(tokio::time::timeout(WAIT, self.ws.next()))
                .await
                .ok()??;
            match next.ok()? {
                Message::Text(t) => {
                    let v: Value = serde_json::from_str(t.as_str()).ok()?;
                    if v["id"] == id {
                        return Some(v);
                    }
                    self.pending.push_back(v);
                }
                Message::Close(_) => return None,
                _ => {}
            }
        }
    }

    /// Like [`Client::request`], but the reply must not be an error.
    pub async fn ok(&mut self, msg: Value) -> Value {
        let reply = self.request(msg.clone()).await;
        assert_ne!(reply["type"], "error", "request {msg} was refused: {reply}");
        reply
    }

    /// Like [`Client::request`], but the reply must be an error with `code`.
    pub async fn refused(&mut self, msg: Value, code: &str) -> Value {
        let reply = self.request(msg.clone()).await;
        assert_eq!(
            reply["type"], "error",
            "request {msg} should fail with {code}: {reply}"
        );
        assert_eq!(reply["code"], code, "request {msg}: {reply}");
        reply
    }

    /// Drops messages received so far (pending and already on the wire is not waited for).
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    pub fn pending(&self) -> &VecDeque<Value> {
        &self.pending
    }

    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

/// `a` posts a seek with `settings` (the challenger's colour set there), `b` accepts;
/// both join. Returns the game id; every client has its snapshot consumed.
pub async fn start_game(a: &mut Client, b: &mut Client, settings: Value) -> String {
    let created = a.ok(json!({"type": "seek", "settings": settings})).await;
    let challenge_id = created["challenge"]["challenge_id"]
        .as_str()
        .expect("challenge id")
        .to_string();
    let ack = b
        .ok(json!({"type": "accept", "challenge_id": challenge_id}))
        .await;
    let game_id = ack["game_id"].as_str().expect("game id").to_string();
    for c in [a, b] {
        c.recv_type("game_started").await;
        c.ok(json!({"type": "join", "game_id": game_id})).await;
        c.recv_type("snapshot").await;
    }
    game_id
}

/// `td` creates a tournament of `setup`: the answer, and the tournament's id.
pub async fn create_tournament(td: &mut Client, setup: Value) -> (Value, String) {
    let created = td
        .ok(json!({"type": "create_tournament", "setup": setup}))
        .await;
    let id = created["tournament"]["tournament_id"]
        .as_str()
        .expect("a tournament id")
        .to_string();
    (created, id)
}

/// Plays `vertex` (or "pass") as move `n` and returns the ack. The mover's own copy of
/// the `move_played` event (which arrives before the ack) is checked and consumed.
pub async fn play(c: &mut Client, game_id: &str, n: u32, vertex: &str) -> Value {
    let ack = c
        .ok(json!({"type": "play", "game_id": game_id, "move_number": n, "vertex": vertex}))
        .await;
    let i = c
        .pending
        .iter()
        .position(|v| v["type"] == "move_played" && v["move_number"] == n)
        .expect("the mover receives its own move before the ack");
    let own = c.pending.remove(i).expect("present");
    // The ack names the last event the move caused (a pass may also start scoring).
    assert!(own["seq"].as_u64() <= ack["seq"].as_u64(), "{own} {ack}");
    assert_eq!(own["vertex"], vertex.to_uppercase().replace("PASS", "pass"));
    ack
}

/// Waits for the next numbered event of `game_id` and checks its seq.
pub async fn event(c: &mut Client, seq: u64) -> Value {
    loop {
        let v = c.recv().await;
        if v.get("seq").is_some() && v["type"] != "snapshot" && v["type"] != "ack" {
            assert_eq!(v["seq"], seq, "event out of order: {v}");
            return v;
        }
    }
}

/// The move numbers of the `move_played` events `c` has received so far (a ping's answer
/// first, so every event sent before it is in).
pub async fn moves_seen(c: &mut Client) -> Vec<u64> {
    c.ok(json!({"type": "ping"})).await;
    c.pending()
        .iter()
        .filter(|v| v["type"] == "move_played")
        .filter_map(|v| v["move_number"].as_u64())
        .collect()
}

/// A plain HTTP/1.1 GET: status and body.
pub async fn get(server: &TestServer, path: &str) -> (u16, String) {
    let (status, _, body) = get_with_head(server, path).await;
    (status, body)
}

/// A plain HTTP/1.1 GET: status, the head (lower case) and body.
pub async fn get_with_head(server: &TestServer, path: &str) -> (u16, String, String) {
    get_at(server.server.as_ref().unwrap().addr(), path).await
}

/// A plain HTTP/1.1 GET to any server: status, the head (lower case) and body.
pub async fn get_at(addr: std::net::SocketAddr, path: &str) -> (u16, String, String) {
    let reply = exchange(addr, "GET", path, &[], b"").await;
    (reply.status, reply.head.to_ascii_lowercase(), reply.body)
}

/// What a plain HTTP/1.1 exchange got back.
pub struct Reply {
    pub status: u16,
    /// The status line and headers as sent.
    pub head: String,
    /// The body, de-chunked.
    pub body: String,
}

impl Reply {
    /// The headers, names in lower case.
    pub fn headers(&self) -> Vec<(String, String)> {
        self.head
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect()
    }
}

/// One plain HTTP/1.1 request to `addr` (`Connection: close`, with `Content-Length`),
/// whatever its method, headers and body, on a held paused clock ([`frozen`]).
pub async fn exchange(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut raw_req = req.into_bytes();
    raw_req.extend_from_slice(body);
    let raw = frozen(async {
        let mut s = TcpStream::connect(addr).await.expect("connects");
        s.write_all(&raw_req).await.expect("sends");
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).await.expect("reads");
        raw
    })
    .await;
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").expect("a head");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    Reply {
        status,
        head: head.to_string(),
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = &rest[n + 2..];
    }
    out
}

/// A plain HTTP/1.1 GET of a JSON body: the status and the body read as JSON.
pub async fn get_json(server: &TestServer, path: &str) -> (u16, Value) {
    let addr = server.server.as_ref().expect("running").addr();
    let reply = exchange(addr, "GET", path, &[], b"").await;
    (
        reply.status,
        serde_json::from_str(&reply.body).expect("a JSON body"),
    )
}

/// Writes finished rated games straight into the data directory's store, as if the
/// server had stopped after each ended and before it was rated:
/// `(game_id, black, white, result, board_size)`, ending 1 s apart.
pub fn seed_rated_games(dir: &std::path::Path, games: &[(&str, &str, &str, &str, u8)]) {
    use tengen::protocol::GameSettings;
    use tengen::store::{Append, EventLog, GameRecord, GameStatus, SqliteStore, SyncMode};
    let store = SqliteStore::open(&dir.join(tengen::server::DB_FILE), SyncMode::Full)
        .expect("the store opens");
    for (i, &(id, black, white, result, board_size)) in games.iter().enumerate() {
        let settings = GameSettings {
            board_size,
            rated: true,
            ..GameSettings::default()
        };
        let at = 1_000 * (i as i64 + 1);
        let game = GameRecord {
            id: id.into(),
            created_at_ms: at,
            settings: serde_json::to_string(&settings).expect("settings"),
            black: black.into(),
            white: white.into(),
            black_name: black.into(),
            white_name: white.into(),
            status: GameStatus::Live,
            result: None,
            ended_at_ms: None,
            move_count: 0,
        };
        store
            .append(&[
                Append::Create(game),
                Append::Rated { game_id: id.into() },
                Append::Finish {
                    game_id: id.into(),
                    result: result.into(),
                    ended_at_ms: at + 500,
                },
            ])
            .expect("written");
    }
    store.close().expect("closed");
}

/// Runs the built `tengen` binary with `args` (and `--data dir`), feeding `stdin`.
pub fn tengen(dir: &std::path::Path, args: &[&str], stdin: &str) -> (bool, String, String) {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(args)
        .arg("--data")
        .arg(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("it ends");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// `black` marks the chains through `dead` dead, White accepts, then Black: returns the
/// `game_ended` White receives.
pub async fn agree_count(
    black: &mut Client,
    white: &mut Client,
    game_id: &str,
    dead: &[&str],
) -> Value {
    for vertex in dead {
        black
            .ok(json!({"type": "mark_dead", "game_id": game_id, "vertex": vertex}))
            .await;
    }
    white
        .ok(json!({"type": "accept_score", "game_id": game_id}))
        .await;
    black
        .ok(json!({"type": "accept_score", "game_id": game_id}))
        .await;
    white.recv_type("game_ended").await
}

/// `tengen rules` with `args` on the SGF text `sgf`, which must replay: its verdict.
pub fn tengen_rules(sgf: &str, args: &[&str]) -> Value {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("game.sgf");
    std::fs::write(&file, sgf).expect("the record is written");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tengen"))
        .arg("rules")
        .args(args)
        .arg(&file)
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON verdict")
}

/// A plain HTTP/1.1 request with an optional bearer token and JSON body: the status and
/// the body read as JSON (`null` when empty).
pub async fn http_json(
    server: &TestServer,
    method: &str,
    path: &str,
    bearer: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let (status, body) = http_text(server, method, path, bearer, &body).await;
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// A plain HTTP/1.1 request with an optional bearer token and a body (sent as JSON when
/// there is one): the status and the body, de-chunked.
pub async fn http_text(
    server: &TestServer,
    method: &str,
    path: &str,
    bearer: Option<&str>,
    body: &str,
) -> (u16, String) {
    http_typed(server, method, path, bearer, "application/json", body).await
}

/// [`http_text`] with a body of another media type (`application/xml`).
pub async fn http_typed(
    server: &TestServer,
    method: &str,
    path: &str,
    bearer: Option<&str>,
    media: &str,
    body: &str,
) -> (u16, String) {
    let addr = server.server.as_ref().expect("running").addr();
    let auth = bearer.map(|token| format!("Bearer {token}"));
    let mut headers = Vec::new();
    if let Some(auth) = &auth {
        headers.push(("Authorization", auth.as_str()));
    }
    if !body.is_empty() {
        headers.push(("Content-Type", media));
    }
    let reply = exchange(addr, method, path, &headers, body.as_bytes()).await;
    (reply.status, reply.body)
}
