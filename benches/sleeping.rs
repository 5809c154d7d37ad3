//! Correspondence games that sleep (issue 39's targets): a store of 100,000 unfinished
//! correspondence games, and a server process started on it.
//!
//! 1. Seeds: a `tengen serve` process records one correspondence game (30 days, nobody
//!    moves yet) and `FLAGS` games of 90 s whose flags fall later; it stops, and the
//!    first game's rows (game, events, deadline index) are copied in SQL to `GAMES` games.
//! 2. Starts `tengen serve` again on that store: the time until `/readyz` answers, the
//!    rooms it holds (`tengen_live_games`), and its RSS with `PLAYERS` players logged in.
//! 3. Wakes `WAKES` distinct sleeping games by joining each: join to snapshot, p50/p99.
//! 4. The `FLAGS` games fell asleep; each flag must fall (the game end reach a watcher
//!    of the lobby) within a second of its deadline; and the end each game's record
//!    holds (the instant its room took the flag), against its creation plus main time.
//!
//! `cargo bench --bench sleeping` (release build; prints a summary) on SQLite at its
//! defaults; with `TENGEN_BENCH_POSTGRES=<url of a PostgreSQL server's admin database>`,
//! on a fresh database of that server instead (created, and dropped at the end). The
//! server is a process of its own, so its RSS is its own.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tengen::auth::{claims_for, load_or_create_secret, sign};
use tengen::config::Config;
use tengen::protocol::Role;
use tengen::time::wall_ms;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};

const GAMES: usize = 100_000;
const PLAYERS: usize = 1_000;
const WAKES: usize = 1_000;
const FLAGS: usize = 20;
const DAY_MS: u64 = 86_400_000;
/// A flag game's main time: longer than the seeding, the restart and the wakes take.
const FLAG_MAIN_MS: i64 = 150_000;

type Ws = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// Where the server keeps its games.
enum Backend {
    /// `tengen.db` in the data dir.
    Sqlite,
    /// A database made for the run on the server whose admin database is `admin`.
    Postgres {
        admin: String,
        name: String,
        url: String,
    },
}

impl Backend {
    /// PostgreSQL when `TENGEN_BENCH_POSTGRES` names a server, else SQLite.
    async fn pick() -> Backend {
        let Ok(admin) = std::env::var("TENGEN_BENCH_POSTGRES") else {
            return Backend::Sqlite;
        };
        let name = format!("tengen_sleeping_{}", std::process::id());
        let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
        let url = format!("{base}/{name}");
        let db = Backend::Postgres { admin, name, url };
        db.admin_sql(|name| format!("CREATE DATABASE {name}")).await;
        db
    }

    /// Runs a statement about the run's database (named in it) on the admin database.
    async fn admin_sql(&self, sql: impl Fn(&str) -> String) {
        if let Backend::Postgres { admin, name, .. } = self {
            let client = pg_connect(admin).await;
            client.batch_execute(&sql(name)).await.expect("admin SQL");
        }
    }

    /// The server's settings for this store.
    fn env(&self) -> Vec<(&'static str, String)> {
        match self {
            Backend::Sqlite => Vec::new(),
            Backend::Postgres { url, .. } => vec![
                ("TENGEN_STORE__BACKEND", "postgres".to_owned()),
                ("TENGEN_STORE__POSTGRES_URL", url.clone()),
            ],
        }
    }

    fn label(&self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres { .. } => "PostgreSQL",
        }
    }
}

async fn pg_connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("PostgreSQL at TENGEN_BENCH_POSTGRES");
    tokio::spawn(connection);
    client
}

struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(dir: &Path, port: u16, backend: &Backend) -> (Server, Duration) {
        let began = Instant::now();
        let child = Command::new(env!("CARGO_BIN_EXE_tengen"))
            .env_remove("TENGEN_BENCH_POSTGRES")
            .envs(backend.env())
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .arg("--data")
            .arg(dir)
            .args(["--set", "limits.max_games_per_user=100000"])
            .args(["--set", "limits.max_seeks_per_user=100"])
            .args(["--set", "limits.max_connections_per_address=100000"])
            .args(["--set", "limits.messages_per_second=100000"])
            .args(["--set", "limits.burst=100000"])
            .env("TENGEN_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .expect("tengen serve starts");
        let server = Server { child, port };
        while server.get("/readyz").0 != 200 {
            std::thread::sleep(Duration::from_millis(5));
        }
        (server, began.elapsed())
    }

    /// A plain HTTP/1.0 GET: the status and the body (0 when nothing answers).
    fn get(&self, path: &str) -> (u16, String) {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return (0, String::new());
        };
        let _ = write!(s, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n");
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string());
        (status, body.unwrap_or_default())
    }

    fn metric(&self, name: &str) -> f64 {
        let (_, text) = self.get("/metrics");
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or(f64::NAN)
    }

    fn rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the server's status");
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS");
        kib / 1024.0
    }

    /// SIGTERM, and the wait for the graceful stop.
    fn stop(mut self) {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    l.local_addr().expect("addr").port()
}

async fn connect(port: u16, token: Option<&str>) -> Ws {
    let url = match token {
        Some(t) => format!("ws://127.0.0.1:{port}/ws?token={t}"),
        None => format!("ws://127.0.0.1:{port}/ws"),
    };
    connect_async(url).await.expect("connect").0
}

async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::text(v.to_string())).await.expect("send");
}

async fn next_of(ws: &mut Ws, kind: &str) -> Value {
    loop {
        let msg = ws.next().await.expect("open").expect("message");
        if let Message::Text(t) = msg {
            let v: Value = serde_json::from_str(t.as_str()).expect("json");
            if v["type"] == kind {
                return v;
            }
            assert_ne!(v["type"], "error", "{v}");
        }
    }
}

/// Black seeks, White accepts: the game's id.
/// A correspondence game that forbids vacation: a flag game's deadline must flag it, not
/// spend a day of its player's balance (which the runs of 2026-12-05 did: black's ten
/// starting days kept the first ten of the twenty flag games going a day each).
async fn game(black: &mut Ws, white: &mut Ws, clock: Value) -> String {
    let settings = json!({"board_size": 19, "color": "black", "correspondence": true,
        "vacation": false, "clock": clock});
    send(black, json!({"type": "seek", "settings": settings})).await;
    let created = next_of(black, "challenge_created").await;
    let id = &created["challenge"]["challenge_id"];
    send(white, json!({"type": "accept", "challenge_id": id})).await;
    let ack = next_of(white, "ack").await;
    ack["game_id"].as_str().expect("game id").to_string()
}

/// The tables that hold a sleeping game's rows, each with the column naming the game.
const GAME_TABLES: [(&str, &str); 3] = [
    ("games", "id"),
    ("events", "game_id"),
    ("correspondence_deadlines", "game_id"),
];

/// `SELECT`'s list of `columns`, with `key` made `<key>-<n>`.
fn cloned(columns: &[String], key: &str) -> String {
    let picked: Vec<String> = columns
        .iter()
        .map(|c| match c == key {
            true => format!("{c} || '-' || n"),
            false => c.clone(),
        })
        .collect();
    picked.join(", ")
}

/// Copies game `template`'s rows to `count` games `<template>-<n>`, in the store.
async fn clone_games(backend: &Backend, dir: &Path, template: &str, count: usize) {
    match backend {
        Backend::Sqlite => clone_sqlite(&dir.join(tengen::server::DB_FILE), template, count),
        Backend::Postgres { url, .. } => clone_postgres(url, template, count).await,
    }
}

/// [`clone_games`] on PostgreSQL, then `ANALYZE`: a store grown game by game has had its
/// statistics kept by autovacuum, which a bulk insert just now has not waited for.
async fn clone_postgres(url: &str, template: &str, count: usize) {
    let mut client = pg_connect(url).await;
    let tx = client.transaction().await.expect("begin");
    for (table, key) in GAME_TABLES {
        let rows = tx
            .query(
                "SELECT column_name::text FROM information_schema.columns
                 WHERE table_name::text = $1 ORDER BY ordinal_position",
                &[&table],
            )
            .await
            .expect("columns");
        let cols: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        let sql = format!(
            "INSERT INTO {table} ({}) SELECT {} FROM {table}, generate_series(1, $2) AS seq(n)
             WHERE {key} = $1",
            cols.join(", "),
            cloned(&cols, key)
        );
        tx.execute(&sql, &[&template, &(count as i32)])
            .await
            .expect("copied");
    }
    tx.commit().await.expect("commit");
    client.batch_execute("ANALYZE").await.expect("analyze");
}

fn clone_sqlite(db: &Path, template: &str, count: usize) {
    let conn = rusqlite::Connection::open(db).expect("the store");
    let columns = |table: &str| -> Vec<String> {
        let mut stmt = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .expect("columns");
        let names = stmt.query_map([], |r| r.get(0)).expect("columns");
        names.collect::<Result<_, _>>().expect("columns")
    };
    conn.execute_batch("BEGIN").expect("begin");
    for (table, key) in GAME_TABLES {
        let cols = columns(table);
        let sql = format!(
            "WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?2)
             INSERT INTO {table} ({}) SELECT {} FROM {table}, seq WHERE {key} = ?1",
            cols.join(", "),
            cloned(&cols, key)
        );
        conn.execute(&sql, rusqlite::params![template, count as i64])
            .expect("copied");
    }
    conn.execute_batch("COMMIT").expect("commit");
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("dir");
    let config = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    let secret = load_or_create_secret(&config.auth, &config.data_dir).expect("secret");
    let token = |who: &str| sign(&secret, &claims_for(who, None, Role::Player, 7200)).expect("t");
    let port = free_port();
    let backend = Backend::pick().await;
    println!("store: {}", backend.label());

    // 1. Seed.
    let (seeding, _) = Server::start(dir.path(), port, &backend);
    let mut black = connect(port, Some(&token("black"))).await;
    let mut white = connect(port, Some(&token("white"))).await;
    let template = game(
        &mut black,
        &mut white,
        json!({"system": "absolute", "main_ms": 30 * DAY_MS}),
    )
    .await;
    let mut flags = Vec::new();
    for _ in 0..FLAGS {
        let clock = json!({"system": "absolute", "main_ms": FLAG_MAIN_MS});
        let id = game(&mut black, &mut white, clock).await;
        flags.push((id, wall_ms() + FLAG_MAIN_MS));
    }
    drop((black, white));
    seeding.stop();
    let copy = Instant::now();
    clone_games(&backend, dir.path(), &template, GAMES - 1).await;
    println!(
        "seeded {GAMES} correspondence games (+{FLAGS} of {} s) in {:.1} s",
        FLAG_MAIN_MS / 1000,
        copy.elapsed().as_secs_f64()
    );

    // 2. Start on them.
    let (server, start) = Server::start(dir.path(), port, &backend);
    let rooms = server.metric("tengen_rooms");
    let rss_idle = server.rss_mib();
    let mut players = Vec::with_capacity(PLAYERS);
    for i in 0..PLAYERS {
        let mut ws = connect(port, Some(&token(&format!("p{i}")))).await;
        next_of(&mut ws, "welcome").await;
        players.push(ws);
    }
    let rss_players = server.rss_mib();
    println!(
        "start to ready: {:.0} ms; rooms held: {rooms}; RSS {rss_idle:.1} MiB idle, \
         {rss_players:.1} MiB with {PLAYERS} players logged in",
        start.as_secs_f64() * 1e3
    );

    // 4's watcher first: it hears every game's end in the lobby.
    let mut watcher = connect(port, None).await;
    send(&mut watcher, json!({"type": "watch_lobby"})).await;

    // 3. Wake sleeping games by joining them, one at a time.
    let mut waker = players.pop().expect("a player");
    let mut wakes = Vec::with_capacity(WAKES);
    for n in 1..=WAKES {
        let id = format!("{template}-{}", n * (GAMES / WAKES - 1));
        let t = Instant::now();
        send(&mut waker, json!({"type": "join", "game_id": id})).await;
        next_of(&mut waker, "snapshot").await;
        wakes.push(t.elapsed().as_secs_f64() * 1e3);
        send(&mut waker, json!({"type": "leave", "game_id": id})).await;
    }
    wakes.sort_by(f64::total_cmp);
    println!(
        "wake by join ({WAKES} sleeping games): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; \
         rooms held after: {}",
        percentile(&wakes, 0.5),
        percentile(&wakes, 0.99),
        wakes[wakes.len() - 1],
        server.metric("tengen_rooms")
    );

    // 4. The flags of the sleeping 90-second games.
    let mut late = Vec::new();
    let until = Instant::now() + Duration::from_millis(FLAG_MAIN_MS as u64 + 30_000);
    while late.len() < FLAGS && Instant::now() < until {
        let Ok(Some(Ok(Message::Text(t)))) =
            tokio::time::timeout(Duration::from_secs(5), watcher.next()).await
        else {
            continue;
        };
        let at = wall_ms();
        let v: Value = serde_json::from_str(t.as_str()).expect("json");
        let ended = v["type"] == "game_listed" && !v["game"]["result"].is_null();
        let id = v["game"]["game_id"].as_str();
        if let (true, Some(id)) = (ended, id)
            && let Some((_, deadline)) = flags.iter().find(|(g, _)| g == id)
        {
            late.push((at - deadline) as f64);
        }
    }
    late.sort_by(f64::total_cmp);
    match late.is_empty() {
        true => println!("flag fall: no end of a flag game was heard (see the lobby's frames)"),
        false => println!(
            "flag fall after sleep ({} of {FLAGS} games heard): lateness min {:.0} ms, \
             p50 {:.0} ms, max {:.0} ms (the creation's own wall time is the deadline's \
             origin, so a few ms of the start count against it)",
            late.len(),
            late[0],
            percentile(&late, 0.5),
            late[late.len() - 1]
        ),
    }
    // The same flags as the server recorded them: each game's end (the instant its room
    // took the flag) after its creation plus its main time, whether or not the lobby's
    // frame reached the watcher.
    let mut recorded: Vec<f64> = flags
        .iter()
        .filter_map(|(id, _)| {
            let (_, body) = server.get(&format!("/api/games/{id}"));
            let game: Value = serde_json::from_str(&body).ok()?;
            let deadline = game["created_at"].as_i64()? + FLAG_MAIN_MS;
            Some((game["ended_at"].as_i64()? - deadline) as f64)
        })
        .collect();
    recorded.sort_by(f64::total_cmp);
    if let (Some(first), Some(last)) = (recorded.first(), recorded.last()) {
        println!(
            "flag fall as recorded ({} of {FLAGS} games ended): end minus deadline min \
             {first:.0} ms, p50 {:.0} ms, max {last:.0} ms",
            recorded.len(),
            percentile(&recorded, 0.5),
        );
    }
    drop(players);
    server.stop();
    backend
        .admin_sql(|name| format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await;
}
