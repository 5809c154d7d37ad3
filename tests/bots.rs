//! Bots through a real server: real `tengen bot` processes driving real GNU Go engines.
//!
//! Needs Debian's `gnugo` at /usr/games/gnugo (`apt-get install gnugo`; the README's
//! test command installs it). Games are 9x9 at GNU Go's level 1 so that the whole file
//! runs in well under two minutes in a debug build.

mod common;

use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::bot::{Bot, GNUGO, require_gnugo};
use common::{Client, TestServer};
use serde_json::{Value, json};
use tengen::bot::gtp::{Engine, QUICK};
use tengen::protocol::Role;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;
use tokio::time::{Instant, sleep};

/// The engine as the tests run it. `--never-resign` where a game must reach a count.
fn gnugo(never_resign: bool) -> String {
    let resign = if never_resign { " --never-resign" } else { "" };
    format!("{GNUGO} --mode gtp --chinese-rules --level 1{resign}")
}

/// Waits until `bot` is listed by `list_bots` (its offer is up).
async fn bot_listed(watcher: &mut Client, bot: &str) {
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let reply = watcher.ok(json!({"type": "list_bots"})).await;
        if reply["bots"]
            .as_array()
            .is_some_and(|b| b.iter().any(|l| l["user"]["id"] == bot))
        {
            return;
        }
        assert!(Instant::now() < until, "bot {bot} never posted its offer");
        sleep(Duration::from_millis(100)).await;
    }
}

/// Lobby announcements (`watch_lobby`) until `n` games have ended; returns them. Pings
/// keep the connection talking while the games are played.
async fn games_ended(watcher: &mut Client, n: usize, within: Duration) -> Vec<Value> {
    let until = Instant::now() + within;
    let mut ended = Vec::new();
    loop {
        while watcher.pending().iter().any(|v| v["type"] == "game_listed") {
            let listed = watcher.recv_type("game_listed").await;
            if !listed["game"]["result"].is_null() {
                ended.push(listed["game"].clone());
            }
        }
        if ended.len() >= n {
            return ended;
        }
        assert!(
            Instant::now() < until,
            "only {} of {n} games ended in time",
            ended.len()
        );
        watcher.ok(json!({"type": "ping"})).await;
        sleep(Duration::from_millis(200)).await;
    }
}

/// Every event of a game, from its stored record (a join with `since_seq: 0`).
async fn record(watcher: &mut Client, game_id: &str) -> Vec<Value> {
    watcher.clear();
    watcher
        .ok(json!({"type": "join", "game_id": game_id, "since_seq": 0}))
        .await;
    let mut events: Vec<Value> = Vec::new();
    loop {
        let v = watcher.recv().await;
        if v["game_id"] != game_id || v.get("seq").is_none() {
            continue;
        }
        assert_eq!(v["seq"], events.len() as u64 + 1, "events in order: {v}");
        let end = v["type"] == "game_ended";
        events.push(v);
        if end {
            break;
        }
    }
    watcher
        .ok(json!({"type": "leave", "game_id": game_id}))
        .await;
    events
}

/// GNU Go's own `final_score` for the position the events end in.
async fn gnugo_final_score(events: &[Value]) -> String {
    let mut engine = Engine::start(&gnugo(true)).await.expect("gnugo starts");
    let created = &events[0];
    assert_eq!(created["type"], "game_created");
    let settings = &created["settings"];
    engine
        .command(&format!("boardsize {}", settings["board_size"]), QUICK)
        .await
        .unwrap();
    engine.command("clear_board", QUICK).await.unwrap();
    // Komi in points, as the server counts it (7.5 = 3¾ stones in an even game).
    let komi = settings["komi"].as_f64().expect("resolved komi");
    engine
        .command(&format!("komi {komi}"), QUICK)
        .await
        .unwrap();
    for e in events {
        if e["type"] == "move_played" {
            let color = if e["color"] == "black" { "b" } else { "w" };
            let vertex = e["vertex"].as_str().unwrap();
            engine
                .command(&format!("play {color} {vertex}"), QUICK)
                .await
                .unwrap_or_else(|err| panic!("gnugo replays {e}: {err}"));
        }
    }
    let score = engine
        .command("final_score", Duration::from_secs(60))
        .await
        .unwrap();
    engine.quit().await;
    score
}

/// Checks a game that should have reached an agreed count: both players accepted the
/// marks, and the result is what GNU Go counts for the final position.
async fn check_counted(watcher: &mut Client, game_id: &str) -> Vec<Value> {
    let events = record(watcher, game_id).await;
    let ended = events.last().unwrap();
    assert_eq!(ended["reason"], "score", "{ended}");
    let accepted: HashSet<&str> = events
        .iter()
        .filter(|e| e["type"] == "score_accepted")
        .filter_map(|e| e["by"].as_str())
        .collect();
    assert_eq!(
        accepted.len(),
        2,
        "both players accepted the count: {ended}"
    );
    let moves = events.iter().filter(|e| e["type"] == "move_played").count();
    let gnugo = gnugo_final_score(&events).await;
    assert_eq!(
        ended["result"].as_str().unwrap(),
        gnugo,
        "the server's count ({}) against GNU Go's final_score after {moves} moves",
        ended["score"]
    );
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gnugo_bots_play_two_games_to_gnugos_own_count() {
    require_gnugo();
    let started = Instant::now();
    let server = TestServer::start().await;
    let mut watcher = server.login("watcher").await;
    watcher.ok(json!({"type": "watch_lobby"})).await;
    let engine = gnugo(true);
    let mut shiro = Bot::start(
        &server,
        &server.url,
        "shiro",
        &["--engine", &engine, "--offer-sizes", "9", "--games", "2"],
    );
    bot_listed(&mut watcher, "shiro").await;
    let mut kuro = Bot::start(
        &server,
        &server.url,
        "kuro",
        &[
            "--engine",
            &engine,
            "--no-offer",
            "--challenge",
            "shiro",
            "--size",
            "9",
            "--games",
            "2",
        ],
    );
    let games = games_ended(&mut watcher, 2, Duration::from_secs(90)).await;
    for game in &games {
        let id = game["game_id"].as_str().unwrap();
        let players: BTreeSet<&str> = [&game["black"]["id"], &game["white"]["id"]]
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        assert_eq!(players, BTreeSet::from(["kuro", "shiro"]));
        check_counted(&mut watcher, id).await;
    }
    kuro.finishes().await;
    shiro.finishes().await;
    eprintln!("two bot games in {:?}", started.elapsed());
}

/// Vertices of a 9x9 board in an order a scripted player tries them.
const TRIES: &[&str] = &[
    "E5", "C7", "G3", "C3", "G7", "E3", "E7", "C5", "G5", "D4", "F6", "D6", "F4",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_challenges_a_bot_and_it_answers_every_move() {
    require_gnugo();
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let _kuro = Bot::start(
        &server,
        &server.url,
        "kuro",
        &[
            "--engine",
            &gnugo(false),
            "--offer-sizes",
            "9",
            "--offer-max-handicap",
            "2",
        ],
    );
    bot_listed(&mut alice, "kuro").await;
    // Two handicap stones and byo-yomi: the bot sets up the stones, the clock, and White
    // (the bot) moves first.
    let settings = json!({
        "board_size": 9, "color": "black", "handicap": 2,
        "clock": {"system": "byoyomi", "main_ms": 60000, "periods": 3, "period_ms": 10000}
    });
    alice
        .ok(json!({"type": "challenge", "opponent": "kuro", "settings": settings}))
        .await;
    let started = alice.recv_type("game_started").await;
    assert_eq!(started["white"]["id"], "kuro");
    let game = started["game_id"].as_str().unwrap().to_string();
    alice.ok(json!({"type": "join", "game_id": game})).await;
    let snapshot = alice.recv_type("snapshot").await;
    let mut occupied: HashSet<String> = snapshot["handicap_stones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(occupied.len(), 2);
    let mut number = 1;
    for _ in 0..4 {
        let reply = alice.recv_type("move_played").await;
        assert_eq!(reply["color"], "white", "{reply}");
        assert_eq!(reply["move_number"], number, "{reply}");
        assert!(reply["clock"].is_object(), "timed game: {reply}");
        occupied.insert(reply["vertex"].as_str().unwrap().to_string());
        for c in reply["captures"].as_array().unwrap() {
            occupied.remove(c.as_str().unwrap());
        }
        let mine = TRIES
            .iter()
            .find(|v| !occupied.contains(**v))
            .expect("a free point");
        // `play` checks and consumes the mover's own `move_played`.
        common::play(&mut alice, &game, number + 1, mine).await;
        occupied.insert(mine.to_string());
        number += 2;
    }
    let reply = alice.recv_type("move_played").await;
    assert_eq!(reply["color"], "white");
    assert_eq!(reply["move_number"], number);
    alice.ok(json!({"type": "resign", "game_id": game})).await;
    let ended = alice.recv_type("game_ended").await;
    assert_eq!(ended["result"], "W+R");
}

/// `c` challenges `bot` to a 9x9 game as `color`, and joins it once it starts: the game.
async fn challenge_and_join(c: &mut Client, bot: &str, color: &str) -> String {
    let settings = json!({"board_size": 9, "color": color});
    c.ok(json!({"type": "challenge", "opponent": bot, "settings": settings}))
        .await;
    let game = c.recv_type("game_started").await["game_id"]
        .as_str()
        .unwrap()
        .to_string();
    c.ok(json!({"type": "join", "game_id": game})).await;
    c.recv_type("snapshot").await;
    game
}

/// Black (a scripted person) passes until the bot passes too; returns the next move
/// number once scoring has started.
async fn pass_until_scoring(alice: &mut Client, game: &str, mut n: u32) -> (u32, Value) {
    loop {
        common::play(alice, game, n, "pass").await;
        let reply = alice.recv_type("move_played").await;
        assert_eq!(reply["color"], "white", "{reply}");
        assert_eq!(reply["move_number"], n + 1, "{reply}");
        n += 2;
        if reply["vertex"] == "pass" {
            return (n, alice.recv_type("scoring_started").await);
        }
    }
}

/// The dead-stone phase against a person who disputes: the bot accepts the marks that
/// match its engine (none), rejects the person's different marks so play resumes, and
/// after the second dispute the game is counted with every stone alive (docs/RULES.md §5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_rejects_marks_its_engine_disputes_and_the_game_still_ends() {
    require_gnugo();
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let _kuro = Bot::start(
        &server,
        &server.url,
        "kuro",
        &["--engine", &gnugo(true), "--offer-sizes", "9"],
    );
    bot_listed(&mut alice, "kuro").await;
    let game = challenge_and_join(&mut alice, "kuro", "black").await;
    let mut n = 1;
    for disputes in 0..2 {
        let (next, scoring) = pass_until_scoring(&mut alice, &game, n).await;
        n = next;
        assert_eq!(scoring["disputes"], disputes);
        // Only white stones on the board: the engine calls none dead and accepts at once.
        let accepted = alice.recv_type("score_accepted").await;
        assert_eq!(accepted["by"], "white");
        let snapshot = {
            let mut watcher = server.login("watcher").await;
            watcher.ok(json!({"type": "join", "game_id": game})).await;
            watcher.recv_type("snapshot").await
        };
        let white_stone = snapshot["moves"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["vertex"] != "pass")
            .expect("the bot played stones")["vertex"]
            .clone();
        alice
            .ok(json!({"type": "mark_dead", "game_id": game, "vertex": white_stone}))
            .await;
        if disputes == 0 {
            let resumed = alice.recv_type("play_resumed").await;
            assert_eq!(resumed["by"], "white", "the bot disputes: {resumed}");
            assert_eq!(resumed["to_move"], "black");
        }
    }
    let ended = alice.recv_type("game_ended").await;
    assert_eq!(ended["reason"], "score", "{ended}");
    assert_eq!(
        ended["score"]["dead"],
        json!([]),
        "all stones alive: {ended}"
    );
    assert!(
        ended["result"].as_str().unwrap().starts_with("W+"),
        "{ended}"
    );
}

/// An engine that answers everything but never chooses a move: the bridge gives up after
/// the move deadline (`--untimed-move-secs` in an untimed game; the clock in a timed one)
/// and resigns with a chat message, instead of holding the game forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_engine_is_given_up_and_its_game_resigned() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let stalls = r#"sh -c 'while read c; do case "$c" in genmove*) read never;; list_commands*) printf "= genmove\nplay\n\n";; *) printf "= \n\n";; esac; done'"#;
    let _kuro = Bot::start(
        &server,
        &server.url,
        "kuro",
        &["--engine", stalls, "--untimed-move-secs", "1"],
    );
    bot_listed(&mut alice, "kuro").await;
    let game = challenge_and_join(&mut alice, "kuro", "black").await;
    let asked = Instant::now();
    common::play(&mut alice, &game, 1, "E5").await;
    let chat = alice.recv_type("chat").await;
    assert!(
        chat["text"].as_str().unwrap().contains("did not answer"),
        "{chat}"
    );
    let ended = alice.recv_type("game_ended").await;
    assert_eq!(ended["result"], "B+R");
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
}

/// A TCP proxy the test can cut: every open connection through it is dropped at once,
/// and while it is closed new connections are refused.
struct Proxy {
    url: String,
    open: Arc<Mutex<bool>>,
    links: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Proxy {
    async fn start(server_url: &str) -> Proxy {
        let target = server_url
            .trim_start_matches("ws://")
            .trim_end_matches("/ws")
            .to_string();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}/ws", listener.local_addr().unwrap());
        let open = Arc::new(Mutex::new(true));
        let links: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let (open2, links2) = (open.clone(), links.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    return;
                };
                if !*open2.lock().unwrap() {
                    continue; // dropped: the bot's handshake fails
                }
                let target = target.clone();
                let link = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                links2.lock().unwrap().push(link.abort_handle());
            }
        });
        Proxy { url, open, links }
    }

    /// Drops every connection and refuses new ones until [`Proxy::reopen`].
    fn cut(&self) {
        *self.open.lock().unwrap() = false;
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    /// Lets connections through again after `delay`.
    fn reopen_after(&self, delay: Duration) {
        let open = self.open.clone();
        tokio::spawn(async move {
            sleep(delay).await;
            *open.lock().unwrap() = true;
        });
    }
}

/// The connection is cut with a TCP proxy between one bot and the server: the bot
/// process and its engine live on, as on a flaky network, so this checks the bot's own
/// reconnect (backoff, rejoin with `since_seq`, the engine kept in step with the missed
/// events, a move in flight resent or not). The other bot talks to the server directly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_whose_connection_is_cut_reconnects_and_finishes_the_game() {
    require_gnugo();
    let server = TestServer::start().await;
    let proxy = Proxy::start(&server.url).await;
    let mut watcher = server.login("watcher").await;
    watcher.ok(json!({"type": "watch_lobby"})).await;
    let engine = gnugo(true);
    let _shiro = Bot::start(
        &server,
        &server.url,
        "shiro",
        &["--engine", &engine, "--offer-sizes", "9"],
    );
    bot_listed(&mut watcher, "shiro").await;
    let mut kuro = Bot::start(
        &server,
        &proxy.url,
        "kuro",
        &[
            "--engine",
            &engine,
            "--no-offer",
            "--challenge",
            "shiro",
            "--size",
            "9",
            "--games",
            "1",
        ],
    );
    let listed = watcher.recv_type("game_listed").await;
    let game = listed["game"]["game_id"].as_str().unwrap().to_string();
    let kuro_color = if listed["game"]["black"]["id"] == "kuro" {
        "black"
    } else {
        "white"
    };
    watcher.ok(json!({"type": "join", "game_id": game})).await;
    watcher.recv_type("snapshot").await;
    let mut moves_after_cut = 0;
    let mut cut_at = None;
    let mut presence = Vec::new();
    let ended = loop {
        let v = watcher.recv().await;
        if v["game_id"] != game.as_str() {
            continue;
        }
        match v["type"].as_str().unwrap_or_default() {
            "move_played" => {
                if cut_at.is_some() {
                    moves_after_cut += 1;
                }
                if v["move_number"] == 10 {
                    // Reconnection attempts fail for a while, then get through.
                    proxy.cut();
                    proxy.reopen_after(Duration::from_millis(1500));
                    cut_at = Some(Instant::now());
                }
            }
            "presence" if v["color"] == kuro_color && cut_at.is_some() => {
                presence.push(v["online"].clone())
            }
            "game_ended" => break v,
            _ => {}
        }
    };
    assert!(cut_at.is_some(), "the game lasted past move 10");
    assert_eq!(
        presence,
        [json!(false), json!(true)],
        "the server saw the bot leave and come back"
    );
    assert!(
        moves_after_cut > 5,
        "the game went on after the cut: {ended}"
    );
    check_counted(&mut watcher, &game).await;
    kuro.finishes().await;
}

/// The other way to lose a connection: the bot process is killed mid-game (its engine
/// goes with it) and a new process is started for the same account. It finds its running
/// game with `list_games`, joins it for a snapshot, replays the record into a fresh
/// engine and finishes the game, without challenging again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_bot_resumes_its_running_game() {
    require_gnugo();
    let server = TestServer::start().await;
    let mut watcher = server.login("watcher").await;
    watcher.ok(json!({"type": "watch_lobby"})).await;
    let engine = gnugo(true);
    let _shiro = Bot::start(
        &server,
        &server.url,
        "shiro",
        &["--engine", &engine, "--offer-sizes", "9"],
    );
    bot_listed(&mut watcher, "shiro").await;
    let args = [
        "--engine",
        &engine,
        "--no-offer",
        "--challenge",
        "shiro",
        "--size",
        "9",
        "--games",
        "1",
    ];
    let mut first = Bot::start(&server, &server.url, "kuro", &args);
    let listed = watcher.recv_type("game_listed").await;
    let game = listed["game"]["game_id"].as_str().unwrap().to_string();
    watcher.ok(json!({"type": "join", "game_id": game})).await;
    watcher.recv_type("snapshot").await;
    let mut second = None;
    let mut moves_after_restart = 0;
    loop {
        let v = watcher.recv().await;
        if v["game_id"] != game.as_str() {
            continue;
        }
        if v["type"] == "game_ended" {
            break;
        }
        if v["type"] != "move_played" {
            continue;
        }
        if second.is_some() {
            moves_after_restart += 1;
        }
        if v["move_number"] == 10 {
            first
                .child
                .kill()
                .await
                .expect("kill the first bot process");
            second = Some(Bot::start(&server, &server.url, "kuro", &args));
        }
    }
    assert!(
        moves_after_restart > 5,
        "the game went on after the restart"
    );
    check_counted(&mut watcher, &game).await;
    // One game only: the new process resumed it instead of challenging again.
    let games = watcher.ok(json!({"type": "list_games"})).await;
    assert!(
        games["games"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["game_id"] == game.as_str()),
        "{games}"
    );
    second.unwrap().finishes().await;
}

/// The direct children of `pid` running `name`, from /proc.
fn children_named(pid: u32, name: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces, so split after the ')'.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = &stat[open + 1..close];
        let ppid = stat[close + 1..].split_whitespace().nth(1);
        if comm == name && ppid == Some(&pid.to_string()) {
            found.push(child);
        }
    }
    found.sort_unstable();
    found
}

/// A person (two connections, one per game) plays move `n` with the first free point.
async fn answer(c: &mut Client, game: &str, n: u32, occupied: &mut HashSet<String>) {
    let v = TRIES.iter().find(|v| !occupied.contains(**v)).unwrap();
    common::play(c, game, n, v).await;
    occupied.insert(v.to_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_engine_resigns_its_game_and_the_bot_plays_on_in_the_other() {
    require_gnugo();
    let server = TestServer::start().await;
    let kuro = Bot::start(
        &server,
        &server.url,
        "kuro",
        &[
            "--engine",
            &gnugo(false),
            "--offer-sizes",
            "9",
            "--max-games",
            "2",
        ],
    );
    let mut first = server.login("alice").await;
    bot_listed(&mut first, "kuro").await;
    let mut second = server.login("alice").await;
    let settings = json!({"board_size": 9, "color": "black"});
    let mut games = Vec::new();
    for _ in 0..2 {
        first
            .ok(json!({"type": "challenge", "opponent": "kuro", "settings": settings}))
            .await;
        let started = first.recv_type("game_started").await;
        second.recv_type("game_started").await;
        games.push(started["game_id"].as_str().unwrap().to_string());
    }
    let mut occupied = [HashSet::new(), HashSet::new()];
    for (i, c) in [&mut first, &mut second].into_iter().enumerate() {
        c.ok(json!({"type": "join", "game_id": games[i]})).await;
        c.recv_type("snapshot").await;
        answer(c, &games[i], 1, &mut occupied[i]).await;
        let reply = c.recv_type("move_played").await;
        assert_eq!(reply["color"], "white", "the bot answers in game {i}");
        occupied[i].insert(reply["vertex"].as_str().unwrap().to_string());
    }
    // Both games have their engine; kill one of them (whichever game it serves).
    let engines = children_named(kuro.pid(), "gnugo");
    assert_eq!(engines.len(), 2, "one engine process per game: {engines:?}");
    let status = std::process::Command::new("kill")
        .args(["-KILL", &engines[0].to_string()])
        .status()
        .unwrap();
    assert!(status.success());

    // One game ends at once by the bot's resignation, with a chat saying why.
    let (lost, other) = tokio::select! {
        v = first.recv_type("game_ended") => (v, 1),
        v = second.recv_type("game_ended") => (v, 0),
    };
    assert_eq!(lost["result"], "B+R", "{lost}");
    assert_eq!(lost["reason"], "resignation");
    let clients = [&mut first, &mut second];
    let [first, second] = clients;
    let (dead_side, live_side) = if other == 1 {
        (first, second)
    } else {
        (second, first)
    };
    let chat = dead_side.recv_type("chat").await;
    assert_eq!(chat["from"]["id"], "kuro");
    assert!(chat["text"].as_str().unwrap().contains("engine"), "{chat}");

    // The other game goes on: the bot still answers there.
    let game = games[other].clone();
    answer(live_side, &game, 3, &mut occupied[other]).await;
    loop {
        let v = live_side.recv_type("move_played").await;
        if v["color"] == "white" {
            assert_eq!(v["move_number"], 4);
            break;
        }
    }
    assert_eq!(children_named(kuro.pid(), "gnugo").len(), 1);
    live_side
        .ok(json!({"type": "resign", "game_id": game}))
        .await;
    let ended = live_side.recv_type("game_ended").await;
    assert_eq!(ended["result"], "W+R");
}

/// Whether `c` has received a `kind` message by now: a ping's reply comes after
/// everything the server sent before it.
async fn has_received(c: &mut Client, kind: &str) -> bool {
    c.ok(json!({"type": "ping"})).await;
    c.pending().iter().any(|v| v["type"] == kind)
}

/// `c`'s game: joined, then resigned (the person gives up at once).
async fn join_and_resign(c: &mut Client, game: &str) {
    c.ok(json!({"type": "join", "game_id": game})).await;
    c.ok(json!({"type": "resign", "game_id": game})).await;
    c.recv_type("game_ended").await;
}

/// `--max-games 1`: three people challenge the bot at the same moment. The server matches
/// one against the offer (its `max_games`), the other two challenges wait, and each time
/// a game ends the bot accepts exactly one waiting challenge: nobody is told a game
/// started that the bot then resigns at move 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_is_never_matched_into_more_games_than_max_games() {
    require_gnugo();
    let server = TestServer::start().await;
    let kuro = Bot::start(
        &server,
        &server.url,
        "kuro",
        &[
            "--engine",
            &gnugo(false),
            "--offer-sizes",
            "9",
            "--max-games",
            "1",
        ],
    );
    let mut people = Vec::new();
    for name in ["alice", "bob", "carol"] {
        people.push(server.login(name).await);
    }
    bot_listed(&mut people[0], "kuro").await;
    let challenge = json!({"type": "challenge", "opponent": "kuro",
        "settings": {"board_size": 9, "color": "black"}});
    // All three are on the wire before any reply is read.
    let mut ids = Vec::new();
    for p in people.iter_mut() {
        ids.push(p.send_request(challenge.clone()).await.unwrap());
    }
    for (p, id) in people.iter_mut().zip(ids) {
        let reply = p.reply(id).await.unwrap();
        assert_eq!(reply["type"], "challenge_created", "{reply}");
    }
    let mut waiting: Vec<usize> = (0..3).collect();
    for round in 0..3 {
        // A moment for anything wrongly started to show.
        sleep(Duration::from_millis(1500)).await;
        let mut started = Vec::new();
        for &i in &waiting {
            if has_received(&mut people[i], "game_started").await {
                started.push(i);
            }
        }
        assert_eq!(
            started.len(),
            1,
            "round {round}: exactly one game at a time, not {started:?} of {waiting:?}"
        );
        let i = started[0];
        waiting.retain(|&w| w != i);
        let game = people[i].recv_type("game_started").await["game_id"]
            .as_str()
            .unwrap()
            .to_string();
        join_and_resign(&mut people[i], &game).await;
    }
    let log = std::fs::read_to_string(&kuro.log).unwrap();
    assert!(!log.contains("beyond --max-games"), "{log}");
}

/// A pause asked for while the engine thinks (GTP `genmove` in flight) is agreed to before
/// the bot's move, which would withdraw it: the game pauses, the move waits, and after
/// the resume the bot plays the move its engine chose.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_asked_for_while_the_engine_thinks_is_agreed_before_the_move() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let slow = r#"sh -c 'while read c; do case "$c" in genmove*) sleep 2; printf "= C3\n\n";; list_commands*) printf "= genmove\nplay\n\n";; *) printf "= \n\n";; esac; done'"#;
    let _kuro = Bot::start(&server, &server.url, "kuro", &["--engine", slow]);
    bot_listed(&mut alice, "kuro").await;
    let game = challenge_and_join(&mut alice, "kuro", "black").await;
    common::play(&mut alice, &game, 1, "E5").await;
    // The engine now thinks for two seconds.
    sleep(Duration::from_millis(300)).await;
    alice.ok(json!({"type": "pause", "game_id": game})).await;
    loop {
        let v = alice.recv().await;
        assert_ne!(
            v["type"], "move_played",
            "the bot moved before agreeing: {v}"
        );
        if v["type"] == "paused" {
            break;
        }
    }
    // The engine has answered by now; the move waits for the resume.
    sleep(Duration::from_millis(2500)).await;
    assert!(!has_received(&mut alice, "move_played").await);
    alice.ok(json!({"type": "resume", "game_id": game})).await;
    alice.recv_type("resumed").await;
    let reply = alice.recv_type("move_played").await;
    assert_eq!(reply["color"], "white", "{reply}");
    assert_eq!(reply["move_number"], 2, "{reply}");
    assert_eq!(reply["vertex"], "C3", "the engine's move, kept: {reply}");
}

/// An engine that plays on an occupied point: the server refuses the move, the bridge
/// passes instead and tells the engine of the pass, so the engine's history is the game's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_illegal_engine_move_becomes_a_pass_on_the_engines_board_too() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let gtp_log = server.dir.path().join("gtp.log");
    let stubborn = format!(
        r#"sh -c 'while read c; do echo "$c" >> {}; case "$c" in genmove*) printf "= E5\n\n";; list_commands*) printf "= genmove\nplay\n\n";; *) printf "= \n\n";; esac; done'"#,
        gtp_log.display()
    );
    let _kuro = Bot::start(&server, &server.url, "kuro", &["--engine", &stubborn]);
    bot_listed(&mut alice, "kuro").await;
    let game = challenge_and_join(&mut alice, "kuro", "white").await;
    let first = alice.recv_type("move_played").await;
    assert_eq!(first["vertex"], "E5", "{first}");
    common::play(&mut alice, &game, 2, "C3").await;
    // E5 again: occupied, refused, and passed instead.
    let third = alice.recv_type("move_played").await;
    assert_eq!(third["move_number"], 3, "{third}");
    assert_eq!(third["vertex"], "pass", "{third}");
    let commands = std::fs::read_to_string(&gtp_log).unwrap();
    let after_refusal = commands
        .rsplit_once("genmove b")
        .map(|(_, after)| after)
        .unwrap_or_default();
    assert!(
        after_refusal.lines().any(|l| l.trim() == "play b pass"),
        "the engine was told of the pass: {commands}"
    );
    alice.ok(json!({"type": "resign", "game_id": game})).await;
    alice.recv_type("game_ended").await;
}

/// Two bots enter a tournament by themselves (`--tournament`, with a declared rank), and
/// play the game its director publishes: with no offer up, the game is one the
/// tournament's starter created, which each bridge joins from `game_started`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_enter_a_tournament_and_play_its_round() {
    require_gnugo();
    let server = TestServer::start().await;
    let mut td = server.connect_as("td", Role::Admin).await;
    let setup = json!({
        "name": "Bot Cup",
        "regulations": {"system": {"kind": "swiss"}, "rounds": 1, "handicap": null,
            "colours": "draw", "seeding": "split_and_fold", "tie_breaks": ["sos"],
            "bye": 2, "missed_round": 0, "separate_clubs": false, "separate_countries": false},
        "settings": {"board_size": 9, "clock": {"system": "absolute", "main_ms": 120_000}},
        "registration_opens": 0,
        "registration_closes": 4_102_444_800_000_i64
    });
    let (_, t) = common::create_tournament(&mut td, setup).await;
    td.ok(json!({"type": "watch_tournament", "tournament_id": t}))
        .await;
    let engine = gnugo(false);
    let _bots: Vec<Bot> = [("kuro", "5k"), ("shiro", "2d")]
        .into_iter()
        .map(|(name, rank)| {
            let args = [
                "--engine",
                &engine,
                "--no-offer",
                "--tournament",
                &t,
                "--rank",
                rank,
            ];
            Bot::start(&server, &server.url, name, &args)
        })
        .collect();
    let mut ranks = BTreeSet::new();
    while ranks.len() < 2 {
        let changed = td.recv_type("registration_changed").await;
        let player = &changed["player"];
        ranks.insert(format!("{} {}", player["user"]["id"], player["rank"]));
    }
    assert_eq!(
        ranks,
        BTreeSet::from([r#""kuro" "5k""#.to_string(), r#""shiro" "2d""#.to_string()]),
        "each bot declared its rank"
    );
    td.ok(json!({"type": "pair", "tournament_id": t})).await;
    td.ok(json!({"type": "publish", "tournament_id": t})).await;
    let started = td.recv_type("round_started").await;
    let game = started["round"]["boards"][0]["game_id"].clone();
    let until = Instant::now() + Duration::from_secs(120);
    let result = loop {
        if let Some(r) = td.pending().iter().find(|v| v["type"] == "board_result") {
            break r.clone();
        }
        assert!(Instant::now() < until, "the bots never finished their game");
        td.ok(json!({"type": "ping"})).await;
        sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(result["game_id"], game, "{result}");
    assert!(
        matches!(result["outcome"].as_str(), Some("black" | "white")),
        "{result}"
    );
    let (status, view) = common::get_json(&server, &format!("/api/tournaments/{t}")).await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["stage"], "finished", "{view}");
}
