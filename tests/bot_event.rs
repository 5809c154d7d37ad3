//! A bot event, run by hand and never in CI: eight real `tengen bot` processes, each
//! driving GNU Go at its own level, enter a four-round McMahon on 9x9 at a fast clock by
//! themselves (`--tournament`), and a director pairs and publishes each round through a
//! real server (SQLite in a temp dir) once the last one has every result. At the end it
//! prints the standings (place, name, level, points, MMS, SOS, SOSOS) and writes them,
//! with the EGF results table the server exports and every game's SGF, to
//! `target/bot-event/` (or `TENGEN_BOT_EVENT_OUT`).
//!
//! ```sh
//! cargo test --test bot_event -- --ignored --nocapture
//! ```
//!
//! Every bot declares the same rank, so everyone starts on the same McMahon score and the
//! places come from the games alone. A round takes a few minutes on two cores.

mod common;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use common::bot::{Bot, GNUGO, require_gnugo};
use common::{Client, TestServer, get, get_json};
use serde_json::{Value, json};
use tengen::protocol::Role;
use tokio::time::{Instant, sleep};

/// GNU Go's levels, one bot each.
const LEVELS: [u8; 8] = [1, 2, 3, 5, 7, 8, 9, 10];
const ROUNDS: usize = 4;
/// Fischer: a minute and a half, and five seconds a move (GNU Go at level 10 takes a few
/// seconds a move on a busy machine).
const MAIN_MS: u64 = 90_000;
const INCREMENT_MS: u64 = 5_000;
/// The longest a round may take before the event is called off.
const ROUND_LIMIT: Duration = Duration::from_secs(20 * 60);

fn name(level: u8) -> String {
    format!("gnugo-l{level:02}")
}

fn setup() -> Value {
    json!({
        "name": "GNU Go levels",
        "regulations": {
            "system": {"kind": "mc_mahon", "bar": "10k", "floor": "20k"},
            "rounds": ROUNDS,
            "handicap": null,
            "colours": "draw",
            "seeding": "split_and_fold",
            "tie_breaks": ["sos", "sosos"],
            "bye": 2,
            "missed_round": 0,
            "separate_clubs": false,
            "separate_countries": false
        },
        "settings": {
            "board_size": 9,
            "clock": {"system": "fischer", "main_ms": MAIN_MS, "increment_ms": INCREMENT_MS, "max_ms": MAIN_MS},
            "forfeit_after_ms": 60_000
        },
        "registration_opens": 0,
        "registration_closes": 4_102_444_800_000_i64
    })
}

fn out_dir() -> PathBuf {
    std::env::var_os("TENGEN_BOT_EVENT_OUT").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bot-event"),
        PathBuf::from,
    )
}

/// The tournament as anyone sees it over HTTP.
async fn view(server: &TestServer, t: &str) -> Value {
    let (status, body) = get_json(server, &format!("/api/tournaments/{t}")).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// Polls the tournament until `done` holds, pinging the director's connection meanwhile.
async fn wait_for(
    server: &TestServer,
    td: &mut Client,
    t: &str,
    within: Duration,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let until = Instant::now() + within;
    loop {
        let v = view(server, t).await;
        if done(&v) {
            return v;
        }
        assert!(Instant::now() < until, "{what}: not within {within:?}: {v}");
        td.ok(json!({"type": "ping"})).await;
        sleep(Duration::from_secs(2)).await;
    }
}

/// A game's record, written to `file` in the output directory.
async fn keep_sgf(server: &TestServer, game_id: &str, file: &str) -> String {
    let (status, sgf) = get(server, &format!("/api/games/{game_id}/sgf")).await;
    assert_eq!(status, 200, "{sgf}");
    let dir = out_dir();
    std::fs::create_dir_all(&dir).expect("the output directory");
    std::fs::write(dir.join(file), &sgf).expect("write the game");
    sgf
}

/// A game's result as its SGF says it (`B+R`, `W+3.5`, `B+T`, ...).
fn result_in(sgf: &str) -> String {
    sgf.split_once("RE[")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map_or_else(|| "?".to_string(), |(re, _)| re.to_string())
}

fn level_of(player: &str) -> u8 {
    LEVELS
        .into_iter()
        .find(|&l| name(l) == player)
        .unwrap_or_else(|| panic!("{player} is not one of the bots"))
}

/// Half points as points: `20.5`, `3`.
fn points(half: i64) -> String {
    if half % 2 == 0 {
        format!("{}", half / 2)
    } else {
        format!("{}.5", half / 2)
    }
}

fn standings_table(standings: &[Value]) -> String {
    let mut table = String::from(
        "| Place | Name | Level | Points | MMS | SOS | SOSOS |\n| --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for row in standings {
        let player = row["player"].as_str().expect("player");
        let half = |k: &str| row[k].as_i64().unwrap_or_else(|| panic!("{k} in {row}"));
        let _ = writeln!(
            table,
            "| {} | {player} | {} | {} | {} | {} | {} |",
            row["place"],
            level_of(player),
            points(half("wins")),
            points(half("score")),
            points(half("sos")),
            points(half("sosos")),
        );
    }
    table
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a whole bot event of several minutes, run by hand"]
async fn gnugo_levels_play_a_mcmahon() {
    require_gnugo();
    let server = TestServer::start().await;
    let mut td = server.connect_as("td", Role::Admin).await;
    let (_, t) = common::create_tournament(&mut td, setup()).await;

    let _bots: Vec<Bot> = LEVELS
        .iter()
        .map(|&level| {
            // Pinned: under a clock GNU Go sets its own level from the time it has,
            // whatever `--level` says, and every level plays alike.
            let engine = format!(
                "{GNUGO} --mode gtp --chinese-rules --level {level} --min-level {level} --max-level {level}"
            );
            let args = [
                "--engine",
                &engine,
                "--no-offer",
                "--tournament",
                &t,
                "--rank",
                "10k",
            ];
            Bot::start(&server, &server.url, &name(level), &args)
        })
        .collect();
    wait_for(
        &server,
        &mut td,
        &t,
        Duration::from_secs(60),
        "every bot registers",
        |v| {
            v["players"]
                .as_array()
                .is_some_and(|p| p.len() == LEVELS.len())
        },
    )
    .await;
    println!("tournament {t}: {} bots registered", LEVELS.len());

    for round in 1..=ROUNDS {
        td.ok(json!({"type": "pair", "tournament_id": t})).await;
        td.ok(json!({"type": "publish", "tournament_id": t})).await;
        let started = Instant::now();
        let v = wait_for(
            &server,
            &mut td,
            &t,
            ROUND_LIMIT,
            &format!("round {round} ends"),
            |v| matches!(v["stage"].as_str(), Some("ready" | "finished")),
        )
        .await;
        let boards = v["rounds"][round - 1]["boards"]
            .as_array()
            .expect("the round's boards");
        assert_eq!(boards.len(), LEVELS.len() / 2, "no bye among eight");
        println!("round {round} ({:?}):", started.elapsed());
        for b in boards {
            let game = b["game_id"].as_str().expect("a published board's game");
            let file = format!("round{round}-board{}.sgf", b["board"]);
            let sgf = keep_sgf(&server, game, &file).await;
            println!(
                "  board {}: {} (B) - {} (W): {}",
                b["board"],
                b["black"].as_str().unwrap_or("?"),
                b["white"].as_str().unwrap_or("?"),
                result_in(&sgf)
            );
        }
    }

    let (status, body) = get_json(&server, &format!("/api/tournaments/{t}/standings")).await;
    assert_eq!(status, 200, "{body}");
    let standings = body["standings"].as_array().expect("standings");
    assert_eq!(standings.len(), LEVELS.len());
    let won: i64 = standings.iter().filter_map(|r| r["wins"].as_i64()).sum();
    assert_eq!(
        won,
        2 * (ROUNDS * LEVELS.len() / 2) as i64,
        "every game gave its point (no jigo with 7.5 komi)"
    );
    let table = standings_table(standings);
    let (status, egf) = get(&server, &format!("/api/tournaments/{t}/export/egf")).await;
    assert_eq!(status, 200, "{egf}");

    let dir = out_dir();
    std::fs::create_dir_all(&dir).expect("the output directory");
    std::fs::write(dir.join("standings.md"), &table).expect("write the standings");
    std::fs::write(dir.join("bot-event.h9"), &egf).expect("write the EGF table");
    println!("\n{table}\n{egf}\nwritten to {}", dir.display());
}
