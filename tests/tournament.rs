//! A whole McMahon tournament through the real server: 24 players with accounts register
//! over WebSockets, a director pairs and publishes five rounds, scripted clients play
//! their games out by resignation following a seeded result table (two players of round
//! 3 never come and lose by forfeit), one player withdraws, the server restarts between
//! rounds 3 and 4, and the final standings and every tie-break are checked against a
//! computation written here from the pairings the server published (not by calling
//! `tengen::tournament::standings`). The refusals the protocol promises along the way
//! (twice, outside the limits, before the last round ended, publishing twice, a swap that
//! repeats a game, not the director, unknown tournament) change nothing. After the event,
//! the exchange files fetched over HTTP read back to the server's standings: the EGF
//! table through `egf::read`, OpenGotha's XML through `opengotha::import`, and the SGF
//! archive (read by Python's `zipfile`) holds every game's record.

mod common;

use std::collections::{BTreeMap, HashMap};

use common::{Client, TestServer, get_json, http_typed};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tengen::config::Config;
use tengen::protocol::Role;
use tengen::tournament::exchange::{Imported, egf, opengotha};
use tengen::tournament::regulations::Regulations;
use tengen::tournament::standings::standings;

const PLAYERS: usize = 24;
const ROUNDS: usize = 5;
/// The McMahon bar and floor, as rank steps above 30k (3d and 10k).
const BAR: i64 = 32;
const FLOOR: i64 = 20;
/// Lateness allowed: long enough for every scripted player to reach the board on a busy
/// machine, short enough to wait for the two forfeits.
const FORFEIT_AFTER_MS: u64 = 6_000;
/// Round 3's boards (1-based) whose loser never comes.
const FORFEITS: [u16; 2] = [2, 5];
/// The player who withdraws after round 2.
const WITHDRAWS: &str = "p07";

/// Player `i`'s rank, spread over 12k to 5d so the bar and the floor both matter.
fn rank_of(i: usize) -> String {
    let steps = 18 + (i * 17 / PLAYERS) as i64; // 18 (12k) to 34 (5d)
    rank_name(steps)
}

fn rank_name(steps: i64) -> String {
    if steps >= 30 {
        format!("{}d", steps - 29)
    } else {
        format!("{}k", 30 - steps)
    }
}

fn rank_steps(rank: &str) -> i64 {
    let (n, kind) = rank.split_at(rank.len() - 1);
    let n: i64 = n.parse().expect("a rank number");
    if kind == "d" { 29 + n } else { 30 - n }
}

/// The seeded result table: whether Black wins board `board` of round `round`.
fn black_wins(round: usize, board: u16) -> bool {
    let mut x = 0x5EED_u64 ^ (round as u64) << 32 ^ u64::from(board);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (x ^ (x >> 31)).is_multiple_of(2)
}

fn name(i: usize) -> String {
    format!("p{i:02}")
}

fn tweak(_: &mut Config) {}

fn setup() -> Value {
    json!({
        "name": "Tengen Open",
        "regulations": {
            "system": {"kind": "mc_mahon", "bar": "3d", "floor": "10k"},
            "rounds": ROUNDS,
            "handicap": null,
            "colours": "draw",
            "seeding": "split_and_fold",
            "tie_breaks": ["sos", "sosos", "sodos"],
            "bye": 2,
            "missed_round": 1,
            "separate_clubs": true,
            "separate_countries": false
        },
        "settings": {
            "board_size": 9,
            "clock": {"system": "absolute", "main_ms": 600_000},
            "forfeit_after_ms": FORFEIT_AFTER_MS
        },
        "registration_opens": 0,
        "registration_closes": 4_102_444_800_000_i64,
        "min_rank": "15k",
        "chief_referee": "chief",
        "referees": ["ref1", "ref2"]
    })
}

async fn players(server: &TestServer) -> Vec<Client> {
    let mut clients = Vec::new();
    for i in 0..PLAYERS {
        clients.push(server.login(&name(i)).await);
    }
    clients
}

fn msg(t: &str, kind: &str, fields: Value) -> Value {
    let mut m = json!({"type": kind, "tournament_id": t});
    if let Value::Object(f) = fields {
        for (k, v) in f {
            m[k] = v;
        }
    }
    m
}

/// The tournament as anyone sees it over HTTP.
async fn view(server: &TestServer, t: &str) -> Value {
    let (status, body) = get_json(server, &format!("/api/tournaments/{t}")).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// Plays round `round` (1-based) out: every board's players come to it (but the absent
/// loser of a forfeit board) and the loser resigns. Returns each board's expected winner
/// colour.
async fn play_round(players: &mut [Client], round: &Value, number: usize) -> Vec<&'static str> {
    let index =
        |id: &Value| -> usize { id.as_str().expect("a player id")[1..].parse().expect("pNN") };
    let mut expected = Vec::new();
    let mut to_resign = Vec::new();
    for b in round["boards"].as_array().expect("boards") {
        let board = b["board"].as_u64().expect("board") as u16;
        let game = b["game_id"]
            .as_str()
            .expect("a published board has its game");
        let black = black_wins(number, board);
        let (winner, loser) = if black {
            (index(&b["black"]), index(&b["white"]))
        } else {
            (index(&b["white"]), index(&b["black"]))
        };
        expected.push(if black { "black" } else { "white" });
        let forfeit = number == 3 && FORFEITS.contains(&board);
        for seat in [winner, loser] {
            if forfeit && seat == loser {
                continue;
            }
            let c = &mut players[seat];
            c.ok(json!({"type": "join", "game_id": game})).await;
        }
        if !forfeit {
            to_resign.push((loser, game.to_string()));
        }
    }
    for (loser, game) in to_resign {
        let c = &mut players[loser];
        loop {
            let reply = c.request(json!({"type": "resign", "game_id": game})).await;
            match reply["type"].as_str() {
                Some("ack") => break,
                // A scheduled start not yet begun on the room's clock.
                _ if reply["code"] == "wrong_phase" => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                _ => panic!("resigning {game}: {reply}"),
            }
        }
        c.clear();
    }
    expected
}

/// Waits on the director's channel until every board of `round` has a result.
async fn results(td: &mut Client, round: usize, boards: usize) -> BTreeMap<u64, String> {
    let mut seen = BTreeMap::new();
    while seen.len() < boards {
        let r = td.recv_type("board_result").await;
        if r["round"] == round {
            seen.insert(
                r["board"].as_u64().expect("board"),
                r["outcome"].as_str().expect("an outcome").to_string(),
            );
        }
    }
    seen
}

/// One player's line as computed here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Line {
    score: i64,
    sos: i64,
    sosos: i64,
    sodos: i64,
}

/// The standings from the published rounds, by the EGF rules, written from scratch:
/// McMahon start score from the rank between floor and bar; a bye scores a win and an
/// absence nothing; a round without an opponent counts the player's own start score in
/// SOS (and that times the rounds in SOSOS). Returns each player's line and place.
fn independent(ranks: &HashMap<String, i64>, rounds: &[Value]) -> HashMap<String, (Line, usize)> {
    let start = |p: &str| 2 * ranks[p].clamp(FLOOR, BAR);
    // Each player's rounds: Some((opponent, points)) or None without an opponent.
    let mut games: HashMap<String, Vec<Option<(String, i64)>>> = HashMap::new();
    let mut score: HashMap<String, i64> = ranks.keys().map(|p| (p.clone(), start(p))).collect();
    for round in rounds {
        let mut seen = Vec::new();
        for b in round["boards"].as_array().expect("boards") {
            let (black, white) = (b["black"].as_str().unwrap(), b["white"].as_str().unwrap());
            let black_points = if b["outcome"] == "black" { 2 } else { 0 };
            for (me, them, points) in [
                (black, white, black_points),
                (white, black, 2 - black_points),
            ] {
                games
                    .entry(me.to_string())
                    .or_default()
                    .push(Some((them.to_string(), points)));
                *score.get_mut(me).unwrap() += points;
                seen.push(me.to_string());
            }
        }
        for bye in round["byes"].as_array().expect("byes") {
            let p = bye.as_str().unwrap().to_string();
            games.entry(p.clone()).or_default().push(None);
            *score.get_mut(&p).unwrap() += 2;
            seen.push(p);
        }
        for p in ranks.keys() {
            if !seen.contains(p) {
                games.entry(p.clone()).or_default().push(None);
            }
        }
    }
    let n = rounds.len() as i64;
    let sos: HashMap<&String, i64> = ranks
        .keys()
        .map(|p| {
            let s = games[p]
                .iter()
                .map(|g| g.as_ref().map_or(start(p), |(o, _)| score[o]))
                .sum();
            (p, s)
        })
        .collect();
    let mut lines: Vec<(String, Line)> = ranks
        .keys()
        .map(|p| {
            let (mut sosos, mut sodos) = (0, 0);
            for g in &games[p] {
                match g {
                    Some((o, points)) => {
                        sosos += sos[o];
                        sodos += score[o] * points / 2;
                    }
                    None => sosos += start(p) * n,
                }
            }
            let line = Line {
                score: score[p],
                sos: sos[p],
                sosos,
                sodos,
            };
            (p.clone(), line)
        })
        .collect();
    let key = |l: &Line| std::cmp::Reverse((l.score, l.sos, l.sosos, l.sodos));
    lines.sort_by_key(|(_, l)| key(l));
    let mut out = HashMap::new();
    let mut place = 0;
    for (i, (p, l)) in lines.iter().enumerate() {
        if i == 0 || key(&lines[i - 1].1) != key(l) {
            place = i + 1;
        }
        out.insert(p.clone(), (*l, place));
    }
    out
}

/// Pairs, checks the refusals around it, publishes, and returns the published round.
async fn pair_and_publish(td: &mut Client, t: &str, number: usize) -> Value {
    td.ok(msg(t, "pair", json!({}))).await;
    let paired = td.recv_type("round_paired").await;
    assert_eq!(paired["round"]["round"], number);
    assert_eq!(paired["round"]["published"], false);
    if number == 2 {
        // Round 1's first board, now apart: bringing them together is refused.
        let first = &view_round(td, t, 1).await["boards"][0];
        // A director's view shows why each board was paired.
        assert!(first["costs"]["score_gap"].is_i64(), "{first}");
        let (a, b) = (first["black"].clone(), first["white"].clone());
        let now = &paired["round"]["boards"];
        let partner_of_a = now
            .as_array()
            .unwrap()
            .iter()
            .find_map(|x| {
                (x["black"] == a)
                    .then(|| x["white"].clone())
                    .or((x["white"] == a).then(|| x["black"].clone()))
            })
            .expect("a is paired");
        td.refused(
            msg(t, "swap", json!({"a": partner_of_a, "b": b})),
            "repeat_game",
        )
        .await;
    }
    td.ok(msg(t, "publish", json!({}))).await;
    let started = td.recv_type("round_started").await;
    assert_eq!(started["round"]["round"], number);
    td.refused(msg(t, "publish", json!({})), "already_published")
        .await;
    td.refused(msg(t, "pair", json!({})), "round_not_finished")
        .await;
    started["round"].clone()
}

/// Round `number` as the director's `watch_tournament` shows it (with costs).
async fn view_round(td: &mut Client, t: &str, number: usize) -> Value {
    let v = td.ok(msg(t, "watch_tournament", json!({}))).await;
    v["tournament"]["rounds"][number - 1].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_mcmahon_tournament_runs_through_the_server() {
    let mut server = TestServer::start_with(tweak).await;
    let mut td = server.connect_as("td", Role::Admin).await;
    let (created, t) = common::create_tournament(&mut td, setup()).await;
    let commitments: Vec<String> = created["tournament"]["draws"]
        .as_array()
        .expect("draws")
        .iter()
        .map(|d| d["commitment"].as_str().expect("commitment").to_string())
        .collect();
    assert_eq!(commitments.len(), ROUNDS);
    assert!(created["tournament"]["draws"][0]["secret"].is_null());
    td.ok(msg(&t, "watch_tournament", json!({}))).await;

    let mut ps = players(&server).await;
    let mut ranks = HashMap::new();
    for (i, c) in ps.iter_mut().enumerate() {
        let rank = rank_of(i);
        ranks.insert(name(i), rank_steps(&rank));
        let club = format!("club{}", i % 4);
        c.ok(msg(
            &t,
            "register",
            json!({"rank": rank, "club": club, "country": "cn"}),
        ))
        .await;
        if i == 0 {
            c.refused(
                msg(&t, "register", json!({"rank": rank})),
                "already_registered",
            )
            .await;
            c.refused(msg(&t, "pair", json!({})), "forbidden").await;
            c.refused(
                msg("no-such-cup", "register", json!({"rank": rank})),
                "not_found",
            )
            .await;
        }
    }
    let mut weak = server.login("weakling").await;
    weak.refused(
        msg(&t, "register", json!({"rank": "20k"})),
        "outside_limits",
    )
    .await;
    td.refused(msg(&t, "publish", json!({})), "wrong_phase")
        .await;
    assert_eq!(
        view(&server, &t).await["players"].as_array().unwrap().len(),
        PLAYERS
    );

    let mut published = Vec::new();
    for number in 1..=ROUNDS {
        if number == 4 {
            // The server stops between rounds and comes back: the tournament goes on.
            for c in ps.drain(..) {
                c.close().await;
            }
            td.close().await;
            let dir = server.stop().await;
            server = TestServer::start_in(dir, tweak).await;
            ps = players(&server).await;
            td = server.connect_as("td", Role::Admin).await;
            let again = td.ok(msg(&t, "watch_tournament", json!({}))).await;
            assert_eq!(again["tournament"]["stage"], "ready");
            assert_eq!(again["tournament"]["rounds"].as_array().unwrap().len(), 3);
        }
        let round = pair_and_publish(&mut td, &t, number).await;
        let boards = round["boards"].as_array().unwrap().len();
        let expected_byes = if number <= 2 { 0 } else { 1 };
        assert_eq!(
            round["byes"].as_array().unwrap().len(),
            expected_byes,
            "{round}"
        );
        let active = if number <= 2 { PLAYERS } else { PLAYERS - 1 };
        assert_eq!(boards * 2 + expected_byes, active);
        if number > 2 {
            let text = round.to_string();
            assert!(
                !text.contains(WITHDRAWS),
                "a withdrawn player is paired: {text}"
            );
        }
        if number == 1 {
            round_paired_notices(&mut ps, &t, &round).await;
        }
        let expected = play_round(&mut ps, &round, number).await;
        let seen = results(&mut td, number, boards).await;
        let wanted: BTreeMap<u64, String> = expected
            .iter()
            .enumerate()
            .map(|(i, w)| (i as u64 + 1, w.to_string()))
            .collect();
        assert_eq!(seen, wanted, "round {number}'s results");
        // The round's draw is revealed with it and matches its commitment.
        let v = view(&server, &t).await;
        let secret = v["draws"][number - 1]["secret"].as_str().expect("revealed");
        let hash = hex::encode(Sha256::digest(hex::decode(secret).expect("hex")));
        assert_eq!(hash, commitments[number - 1]);
        assert!(v["draws"][number]["secret"].is_null() || number == ROUNDS);
        // Every game is a tournament game with a board referee.
        let (_, game) = get_json(
            &server,
            &format!(
                "/api/games/{}",
                round["boards"][0]["game_id"].as_str().unwrap()
            ),
        )
        .await;
        assert_eq!(game["settings"]["fair_play"], "tournament", "{game}");
        assert!(game["settings"]["referee"].is_string(), "{game}");
        if number == 2 {
            let w = name(7);
            assert_eq!(w, WITHDRAWS);
            td.clear();
            ps[7].ok(msg(&t, "withdraw", json!({}))).await;
            ps[7]
                .refused(msg(&t, "withdraw", json!({})), "wrong_phase")
                .await;
            let changed = td.recv_type("registration_changed").await;
            assert_eq!(changed["player"]["status"], "withdrawn");
        }
        published.push(view(&server, &t).await["rounds"][number - 1].clone());
    }

    let v = view(&server, &t).await;
    assert_eq!(v["stage"], "finished");
    let (status, standings) = get_json(&server, &format!("/api/tournaments/{t}/standings")).await;
    assert_eq!(status, 200);
    let computed = independent(&ranks, &published);
    let lines = standings["standings"].as_array().expect("standings");
    assert_eq!(lines.len(), PLAYERS);
    for line in lines {
        let p = line["player"].as_str().unwrap();
        let (want, place) = computed[p];
        let got = Line {
            score: line["score"].as_i64().unwrap(),
            sos: line["sos"].as_i64().unwrap(),
            sosos: line["sosos"].as_i64().unwrap(),
            sodos: line["sodos"].as_i64().unwrap(),
        };
        assert_eq!(got, want, "{p}'s standing");
        assert_eq!(line["place"], place, "{p}'s place");
        assert_eq!(line["rounds"].as_array().unwrap().len(), ROUNDS);
    }
    // The forfeits are in the standings as the games' results.
    let round3 = &published[2];
    for board in FORFEITS {
        let b = &round3["boards"][usize::from(board) - 1];
        let (_, game) = get_json(
            &server,
            &format!("/api/games/{}", b["game_id"].as_str().unwrap()),
        )
        .await;
        assert!(
            game["result"].as_str().unwrap_or_default().ends_with("+F"),
            "{game}"
        );
    }
    // A director sees the costs of each board; anyone else does not.
    let (_, round1) = get_json(&server, &format!("/api/tournaments/{t}/rounds/1")).await;
    assert!(round1["boards"][0]["costs"].is_null(), "{round1}");
    td.refused(msg(&t, "pair", json!({})), "wrong_phase").await;
    exports_read_back(&server, &t, lines, &published).await;
}

/// Each player of the first board of a published round has a `round_paired` notice
/// naming the tournament, the round, the game and the opponent.
async fn round_paired_notices(players: &mut [Client], t: &str, round: &Value) {
    let board = &round["boards"][0];
    for (me, them) in [("black", "white"), ("white", "black")] {
        let i: usize = board[me].as_str().unwrap()[1..].parse().expect("pNN");
        // A notice is kept on a task of its own, just after the round is published.
        let notice = loop {
            let list = players[i].ok(json!({"type": "list_notices"})).await;
            let found = list["notices"]
                .as_array()
                .expect("notices")
                .iter()
                .find(|n| n["kind"] == "round_paired")
                .cloned();
            match found {
                Some(notice) => break notice,
                None => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
            }
        };
        let payload = &notice["payload"];
        assert_eq!(payload["tournament_id"], t, "{notice}");
        assert_eq!(payload["round"], round["round"], "{notice}");
        assert_eq!(payload["game_id"], board["game_id"], "{notice}");
        assert_eq!(payload["opponent"]["id"], board[them], "{notice}");
        players[i].clear();
    }
}

/// A plain GET of a file: the status, the head (lower case) and the body's bytes.
async fn download(server: &TestServer, path: &str) -> (u16, String, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = server.server.as_ref().expect("running").addr();
    let mut s = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("sends");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.expect("reads");
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
    assert!(!head.contains("transfer-encoding"), "{head}");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    (status, head, raw[end + 4..].to_vec())
}

/// Each line of `imported`'s standings, by the player's id on the server (a file names a
/// player by OpenGotha's key, the name in capitals): place, score and tie-breaks.
fn lines_of(imported: &Imported) -> BTreeMap<String, (usize, i64, i64, i64, i64)> {
    standings(&imported.record)
        .iter()
        .map(|st| {
            let id = imported.record.field[st.seat].id.to_lowercase();
            (
                id,
                (st.place, i64::from(st.score), st.sos, st.sosos, st.sodos),
            )
        })
        .collect()
}

/// The exchange files, fetched as anyone would, say what the server's standings say.
async fn exports_read_back(server: &TestServer, t: &str, lines: &[Value], rounds: &[Value]) {
    let wanted: BTreeMap<String, (usize, i64, i64, i64, i64)> = lines
        .iter()
        .map(|l| {
            let n = |k: &str| l[k].as_i64().expect("a number");
            let place = l["place"].as_u64().expect("a place") as usize;
            let p = l["player"].as_str().expect("a player").to_string();
            (p, (place, n("score"), n("sos"), n("sosos"), n("sodos")))
        })
        .collect();
    let regulations: Regulations =
        serde_json::from_value(view(server, t).await["setup"]["regulations"].clone())
            .expect("the regulations");

    let (status, head, table) = download(server, &format!("/api/tournaments/{t}/export/egf")).await;
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/plain"), "{head}");
    assert!(
        head.contains(&format!("filename=\"tengen-{t}.h9\"")),
        "{head}"
    );
    let table = String::from_utf8(table).expect("UTF-8");
    assert!(table.contains("; EV[Tengen Open]"), "{table}");
    let read = egf::read(&table, regulations).expect("the EGF table reads");
    assert_eq!(lines_of(&read), wanted, "the EGF table's standings");

    let (status, head, xml) =
        download(server, &format!("/api/tournaments/{t}/export/opengotha")).await;
    assert_eq!(status, 200);
    assert!(head.contains("content-type: application/xml"), "{head}");
    let xml = String::from_utf8(xml).expect("UTF-8");
    let imported = opengotha::import(&xml).expect("the OpenGotha file imports");
    assert_eq!(imported.record.rounds.len(), ROUNDS);
    assert_eq!(
        lines_of(&imported),
        wanted,
        "the OpenGotha file's standings"
    );

    let (status, head, zip) = download(server, &format!("/api/tournaments/{t}/export/sgf")).await;
    assert_eq!(status, 200);
    assert!(head.contains("content-type: application/zip"), "{head}");
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("games.zip");
    std::fs::write(&path, &zip).expect("written");
    let out = std::process::Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/zip/read.py"))
        .arg(&path)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: BTreeMap<String, String> =
        serde_json::from_slice::<Vec<(String, String)>>(&out.stdout)
            .expect("the archive's files")
            .into_iter()
            .collect();
    let boards: usize = rounds
        .iter()
        .map(|r| r["boards"].as_array().unwrap().len())
        .sum();
    assert_eq!(files.len(), boards, "one SGF per game: {:?}", files.keys());
    for (r, round) in rounds.iter().enumerate() {
        for b in round["boards"].as_array().unwrap() {
            let name = format!("round-{}/board-{}.sgf", r + 1, b["board"]);
            let text = files
                .get(&name)
                .unwrap_or_else(|| panic!("{name} is missing"));
            let games = tengen::rules::sgf::parse(text).expect("a readable SGF");
            assert_eq!(games.len(), 1, "{name}");
            let root = &games[0][0];
            let prop = |k: &str| root.get(k).map(|p| p.simple_text()).unwrap_or_default();
            assert_eq!(prop("PB"), b["black"].as_str().unwrap(), "{name}");
            assert_eq!(prop("PW"), b["white"].as_str().unwrap(), "{name}");
            let winner = if b["outcome"] == "black" { "B+" } else { "W+" };
            assert!(prop("RE").starts_with(winner), "{name}: {}", prop("RE"));
        }
    }
    let (status, _, _) = download(server, "/api/tournaments/no-such-cup/export/egf").await;
    assert_eq!(status, 404);
}

/// A POST of an XML `body` with an optional bearer token: the status and the body as JSON.
async fn post(server: &TestServer, path: &str, token: Option<&str>, body: &str) -> (u16, Value) {
    let (status, body) = http_typed(server, "POST", path, token, "application/xml", body).await;
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

fn gotha(players: &[(&str, &str, &str)]) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Tournament dataVersion=\"201\">\n<Players>\n",
    );
    for (name, first, rank) in players {
        xml.push_str(&format!(
            "<Player name=\"{name}\" firstName=\"{first}\" rank=\"{rank}\" club=\"Lyon\" country=\"FR\"/>\n"
        ));
    }
    xml.push_str("</Players>\n</Tournament>\n");
    xml
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_director_imports_players_from_an_opengotha_file_and_adjusts_a_score() {
    let mut server = TestServer::start_with(tweak).await;
    let mut td = server.connect_as("td", Role::Admin).await;
    let (_, t) = common::create_tournament(&mut td, setup()).await;
    td.ok(msg(&t, "watch_tournament", json!({}))).await;
    // Matched by name, in either order.
    server.account_named("leeann", "Ann Lee").await;
    server.account_named("kimbo", "Kim Bo").await;
    let path = format!("/api/tournaments/{t}/players");
    let file = gotha(&[("Lee", "Ann", "2D"), ("Kim", "Bo", "5K")]);
    let td_token = server.token_as("td", Role::Admin);
    let players = |v: Value| v["players"].as_array().unwrap().len();

    // Every refusal has its code and changes nothing.
    let refusals = [
        (None, file.clone(), 401, "unauthorized"),
        (Some(server.token("leeann")), file.clone(), 403, "forbidden"),
        (
            Some(td_token.clone()),
            "a player list, but not XML".to_string(),
            400,
            "invalid_file",
        ),
        (
            Some(td_token.clone()),
            gotha(&[("Lee", "Ann", "3P")]),
            400,
            "invalid_file",
        ),
        (
            Some(td_token.clone()),
            gotha(&[("Lee", "Ann", "2D"), ("No", "Body", "1K")]),
            404,
            "not_found",
        ),
    ];
    for (token, body, status, code) in refusals {
        let (got, answer) = post(&server, &path, token.as_deref(), &body).await;
        assert_eq!(
            (got, answer["code"].as_str()),
            (status, Some(code)),
            "{answer}"
        );
        assert!(answer["error"].is_string(), "{answer}");
        assert_eq!(players(view(&server, &t).await), 0);
    }
    let (got, _) = post(
        &server,
        "/api/tournaments/no-such-cup/players",
        Some(&td_token),
        &file,
    )
    .await;
    assert_eq!(got, 404);

    // A name two accounts have matches neither: the file must name the account.
    server.account_named("leeann2", "Lee Ann").await;
    let (got, answer) = post(&server, &path, Some(&td_token), &file).await;
    assert_eq!((got, answer["code"].as_str()), (404, Some("not_found")));
    let said = answer["error"].as_str().unwrap_or_default();
    assert!(said.contains("Ann Lee: several accounts"), "{answer}");
    assert!(!said.contains("Bo Kim"), "{answer}");
    assert_eq!(players(view(&server, &t).await), 0);
    let file = file.replace("name=\"Lee\"", "tengenAccount=\"leeann\" name=\"Lee\"");
    let (got, answer) = post(&server, &path, Some(&td_token), &file).await;
    assert_eq!((got, &answer), (200, &json!({"registered": 2})));
    let changed = td.recv_type("registration_changed").await;
    assert_eq!(changed["player"]["user"]["id"], "leeann");
    let v = view(&server, &t).await;
    let lee = &v["players"][0];
    assert_eq!(
        (lee["rank"].as_str(), lee["club"].as_str()),
        (Some("2d"), Some("Lyon"))
    );
    assert_eq!(v["players"][1]["user"]["id"], "kimbo");
    // Again: everyone is already in.
    let (got, answer) = post(&server, &path, Some(&td_token), &file).await;
    assert_eq!((got, &answer), (200, &json!({"registered": 0})));
    assert_eq!(players(view(&server, &t).await), 2);
    // A score adjusted by hand, with its reason: logged, so it survives a restart, shown
    // in the standings, and in OpenGotha's file as the start score's correction.
    let adjust = |points: i64| {
        let reason = "won the qualifier";
        msg(
            &t,
            "adjust",
            json!({"player": "leeann", "points": points, "reason": reason}),
        )
    };
    td.refused(adjust(0), "bad_request").await;
    td.clear();
    td.ok(adjust(2)).await;
    let changed = td.recv_type("standings_changed").await;
    let lee = |standings: &Value| {
        let lines = standings.as_array().expect("standings");
        lines
            .iter()
            .find(|l| l["player"] == "leeann")
            .expect("leeann")
            .clone()
    };
    let wanted = json!([{"points": 2, "after_round": 0, "reason": "won the qualifier"}]);
    assert_eq!(lee(&changed["standings"])["adjustments"], wanted);
    let score = lee(&changed["standings"])["score"].clone();
    td.close().await;
    let dir = server.stop().await;
    server = TestServer::start_in(dir, tweak).await;
    let mut td = server.connect_as("td", Role::Admin).await;
    let (_, standings) = get_json(&server, &format!("/api/tournaments/{t}/standings")).await;
    assert_eq!(lee(&standings["standings"])["adjustments"], wanted);
    assert_eq!(lee(&standings["standings"])["score"], score);
    let (_, _, xml) = download(&server, &format!("/api/tournaments/{t}/export/opengotha")).await;
    let xml = String::from_utf8(xml).expect("UTF-8");
    let imported = opengotha::import(&xml).expect("the OpenGotha file imports");
    assert_eq!(imported.record.adjustments.len(), 1, "{xml}");
    // Each player is named by display name, and carries the account.
    let seat = (imported.people.iter())
        .position(|p| p.account == "leeann")
        .expect("the account is in the file");
    assert_eq!(imported.people[seat].surname, "Ann Lee");
    let id = imported.record.field[seat].id.to_lowercase();
    assert_eq!(lines_of(&imported)[&id].1, score.as_i64().unwrap());
    // Once round one is paired, too late.
    td.ok(msg(&t, "pair", json!({}))).await;
    let (got, answer) = post(&server, &path, Some(&td_token), &file).await;
    assert_eq!((got, answer["code"].as_str()), (409, Some("wrong_phase")));
}

/// A watcher hears a director's new setup (with the draw's new commitments) and a bye
/// given ahead of a pairing; with `direct` among the tie-breaks, each standings row
/// carries its column.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_hears_a_new_setup_and_a_bye_given_ahead() {
    let server = TestServer::start_with(tweak).await;
    let mut td = server.connect_as("td", Role::Admin).await;
    let (created, t) = common::create_tournament(&mut td, setup()).await;
    assert!(created["tournament"]["standings"].as_array().is_some());
    let mut watcher = server.login("kibitzer").await;
    watcher.ok(msg(&t, "watch_tournament", json!({}))).await;

    let mut swiss = setup();
    swiss["regulations"] = json!({
        "system": {"kind": "swiss"}, "rounds": 2, "handicap": null, "colours": "draw",
        "seeding": "split_and_fold", "tie_breaks": ["direct", "sos"], "bye": 2,
        "missed_round": 0, "separate_clubs": false, "separate_countries": false
    });
    swiss["min_rank"] = Value::Null;
    td.ok(msg(&t, "configure", json!({"setup": swiss}))).await;
    let changed = watcher.recv_type("setup_changed").await;
    assert_eq!(changed["tournament_id"], t);
    assert_eq!(changed["setup"]["regulations"]["rounds"], 2, "{changed}");
    let draws = changed["draws"].as_array().expect("draws");
    assert_eq!(draws.len(), 2, "{changed}");
    assert_ne!(
        draws[0]["commitment"], created["tournament"]["draws"][0]["commitment"],
        "a new setup draws anew"
    );
    assert!(draws[0]["secret"].is_null(), "{changed}");

    let mut ps = Vec::new();
    for name in ["p00", "p01", "p02"] {
        let mut c = server.login(name).await;
        c.ok(msg(&t, "register", json!({"rank": "1k"}))).await;
        ps.push(c);
    }
    let standings = loop {
        let s = watcher.recv_type("standings_changed").await;
        if s["standings"].as_array().map(Vec::len) == Some(3) {
            break s;
        }
    };
    for row in standings["standings"].as_array().expect("rows") {
        assert_eq!(row["direct"], 0, "{row}");
    }
    td.ok(msg(&t, "bye", json!({"player": "p02"}))).await;
    let bye = watcher.recv_type("bye_given").await;
    assert_eq!(
        (&bye["player"], &bye["round"]),
        (&json!("p02"), &json!(1)),
        "{bye}"
    );
    td.ok(msg(&t, "pair", json!({}))).await;
    let paired = watcher.recv_type("round_paired").await;
    assert_eq!(paired["round"]["byes"], json!(["p02"]), "{paired}");

    // A tournament forbids vacation: its games say so.
    td.ok(msg(&t, "publish", json!({}))).await;
    let started = watcher.recv_type("round_started").await;
    let game = started["round"]["boards"][0]["game_id"]
        .as_str()
        .expect("a game");
    ps[0].ok(json!({"type": "join", "game_id": game})).await;
    let snapshot = ps[0].recv_type("snapshot").await;
    assert_eq!(snapshot["settings"]["vacation"], false, "{snapshot}");

    // Its games are live: correspondence settings are refused, and nothing is created.
    let listed = |body: Value| body["tournaments"].as_array().map_or(0, Vec::len);
    let before = listed(get_json(&server, "/api/tournaments").await.1);
    let mut by_post = setup();
    by_post["settings"] = json!({"board_size": 19, "correspondence": true,
        "clock": {"system": "fischer", "main_ms": 259_200_000, "increment_ms": 86_400_000,
            "max_ms": 604_800_000}});
    let refused = td
        .refused(
            json!({"type": "create_tournament", "setup": by_post}),
            "bad_request",
        )
        .await;
    assert!(
        refused["message"]
            .as_str()
            .unwrap_or_default()
            .contains("live"),
        "{refused}"
    );
    assert_eq!(before, 1);
    assert_eq!(
        listed(get_json(&server, "/api/tournaments").await.1),
        before
    );
}
