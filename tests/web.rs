//! The web client: how the server serves it and its local dev login (plain HTTP), and the
//! client itself in a real browser (Playwright's `playwright-core` driving Debian's
//! headless Chromium): `tests/browser/game.mjs`, in which two players log in with the dev
//! login and play a 9x9 game to an agreed count while a logged-out spectator watches, and
//! `tests/browser/client.mjs`, the client on a phone and a wide screen (lobby, review,
//! archive, offline clocks, move confirmation, the spoken count), and
//! `tests/browser/details.mjs`, around one game (passes confirmed, notices off the
//! controls, one set of speed names, the served CJK font, each move's clock in review,
//! links that keep their place, a rematch), and `tests/browser/ancient.mjs`, a game under
//! the ancient rules, and `tests/browser/notices.mjs`, the bell of notices and the
//! notification settings; see tests/browser/README.md. Screenshots go to
//! `target/browser-artifacts/`.

#[path = "common/browser.rs"]
mod browser;
mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{Client, TestServer, play, start_game};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The line a scenario prints to have the server restarted; it is answered on the
/// scenario's stdin with `restarted` once the server is back on the same address.
const RESTART: &str = "@restart";
/// How long a restarted server stays down: long enough that a page still counting
/// through the downtime would show less time than the server holds.
const DOWNTIME: Duration = Duration::from_secs(3);

/// Runs `tests/browser/<script>` against a fresh server (restarted when it asks); it
/// must pass and leave `shots` among the artifacts.
async fn browser_scenario(script: &str, shots: &[&str]) {
    let setup = browser::setup().await;
    let mut server = Some(TestServer::start().await);
    let url = server.as_ref().expect("started").http("/");
    let mut child = setup
        .command(script, &url)
        .env("TENGEN_RESTART", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run `node` (is Node.js installed?): {e}"));
    let mut answers = child.stdin.take().expect("piped stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let run = async {
        while let Some(line) = lines.next_line().await.expect("the scenario's output") {
            if line != RESTART {
                println!("{line}");
                continue;
            }
            let old = server.take().expect("running");
            let addr = old.server.as_ref().expect("running").addr();
            let data = old.stop().await;
            tokio::time::sleep(DOWNTIME).await;
            server = Some(TestServer::start_in(data, |c| c.listen = addr).await);
            println!("(the server restarted on {addr})");
            answers.write_all(b"restarted\n").await.expect("answer");
            answers.flush().await.expect("answer");
        }
        child.wait().await
    };
    let status = match tokio::time::timeout(browser::LIMIT, run).await {
        Ok(status) => status.expect("node runs"),
        Err(_) => {
            let _ = child.kill().await;
            panic!(
                "the browser test did not finish within {:?}",
                browser::LIMIT
            );
        }
    };
    setup.check(script, status, shots);
    server.expect("running").stop().await;
}

/// `tests/browser/notices.mjs`: the bell of notices and the notification settings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_rings_the_bell_and_the_profile_keeps_notification_settings() {
    browser_scenario("notices.mjs", &["notices-bell.png", "notify-settings.png"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_is_played_watched_and_counted_in_the_browser() {
    browser_scenario("game.mjs", &["final-board.png"]).await;
}

/// `tests/browser/ancient.mjs`: a 9x9 game under the ancient rules, from the set stones
/// with White first to a count that shows the group tax (docs/RULES.md §9.1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ancient_rules_game_starts_from_the_set_stones_and_counts_the_group_tax() {
    browser_scenario("ancient.mjs", &["ancient-count.png"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn around_a_game_passes_are_confirmed_notices_keep_off_the_controls_links_keep_their_place_and_a_rematch_is_offered()
 {
    browser_scenario(
        "details.mjs",
        &["review-clocks-wide.png", "rematch-phone.png"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_works_on_phones_and_wide_screens_with_review_archive_analysis_and_sound() {
    browser_scenario(
        "client.mjs",
        &[
            "lobby-wide.png",
            "lobby-phone.png",
            "game-wide.png",
            "game-phone.png",
            "game-phone-landscape.png",
            "review-wide.png",
            "review-phone.png",
            "archive-wide.png",
            "archive-phone.png",
            "analysis-wide.png",
            "analysis-phone.png",
        ],
    )
    .await;
}

/// A plain HTTP/1.1 exchange: status, lower-cased headers, body.
async fn http(
    server: &TestServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    let addr = server.server.as_ref().expect("running").addr();
    let reply = common::exchange(addr, method, path, headers, body.as_bytes()).await;
    (reply.status, reply.headers(), reply.body)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name} header in {headers:?}"))
}

#[tokio::test]
async fn the_page_and_its_modules_are_served_with_their_types_and_revalidated() {
    let server = TestServer::start().await;
    let (status, headers, body) = http(&server, "GET", "/", &[], "").await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), "text/html; charset=utf-8");
    assert!(header(&headers, "content-security-policy").contains("script-src 'self'"));
    assert_eq!(header(&headers, "cache-control"), "no-cache");
    assert!(body.contains(r#"<script type="module" src="/js/app.js">"#));
    for (path, kind) in [
        ("/js/app.js", "text/javascript; charset=utf-8"),
        ("/js/goban.js", "text/javascript; charset=utf-8"),
        ("/style.css", "text/css; charset=utf-8"),
        ("/favicon.svg", "image/svg+xml"),
        ("/fonts/cjk-result.woff2", "font/woff2"),
        ("/fonts/LICENSE.txt", "text/plain; charset=utf-8"),
    ] {
        let (status, headers, _) = http(&server, "GET", path, &[], "").await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(header(&headers, "content-type"), kind, "{path}");
        assert_eq!(header(&headers, "x-content-type-options"), "nosniff");
        let etag = header(&headers, "etag").to_string();
        let (again, _, body) = http(&server, "GET", path, &[("If-None-Match", &etag)], "").await;
        assert_eq!(again, 304, "{path} revalidates with its ETag");
        assert!(body.is_empty());
    }
    let (status, _, _) = http(&server, "GET", "/js/missing.js", &[], "").await;
    assert_eq!(status, 404);
    // The page may load its own font: `font-src`, or failing it `default-src`, allows 'self'.
    let (_, headers, _) = http(&server, "GET", "/", &[], "").await;
    let csp = header(&headers, "content-security-policy");
    let directive = |name: &str| {
        csp.split(';')
            .map(str::trim)
            .find_map(|d| d.strip_prefix(name)?.strip_prefix(' '))
            .map(str::to_string)
    };
    let fonts = directive("font-src").or_else(|| directive("default-src"));
    assert!(
        fonts.is_some_and(|d| d.split(' ').any(|s| s == "'self'")),
        "the CSP lets the page load its font: {csp}"
    );
}

#[tokio::test]
async fn the_dev_login_hands_out_tokens_the_server_accepts() {
    let server = TestServer::start().await;
    let (status, _, body) = http(&server, "GET", "/api/dev-login", &[], "").await;
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["enabled"],
        true
    );
    let json = [("Content-Type", "application/json")];
    let (status, _, body) = http(
        &server,
        "POST",
        "/api/dev-login",
        &json,
        r#"{"name": "dana"}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let reply: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["user"]["id"], "dana");
    let token = reply["token"].as_str().expect("a token");
    let client = Client::connect(&format!("{}?token={token}", server.url)).await;
    assert_eq!(client.welcome["user"]["id"], "dana");
    for bad in [
        r#"{"name": "a b"}"#,
        r#"{"name": ""}"#,
        r#"{"nom": "x"}"#,
        "nope",
    ] {
        let (status, _, body) = http(&server, "POST", "/api/dev-login", &json, bad).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(serde_json::from_str::<Value>(&body).unwrap()["error"].is_string());
    }
    server.stop().await;
}

#[tokio::test]
async fn the_dev_login_can_be_turned_off() {
    let server = TestServer::start_with(|c| c.auth.dev_login = Some(false)).await;
    let (_, _, body) = http(&server, "GET", "/api/dev-login", &[], "").await;
    let info: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(info["enabled"], false);
    assert!(info["reason"].as_str().unwrap().contains("auth.dev_login"));
    let json = [("Content-Type", "application/json")];
    let (status, _, body) = http(
        &server,
        "POST",
        "/api/dev-login",
        &json,
        r#"{"name": "mallory"}"#,
    )
    .await;
    assert_eq!(status, 403, "{body}");
    server.stop().await;
}

#[tokio::test]
async fn the_score_estimate_counts_the_live_position_with_every_stone_alive() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let settings = serde_json::json!({"board_size": 9, "color": "black", "komi": 7.5});
    let id = start_game(&mut alice, &mut bob, settings).await;
    for (n, vertex) in ["E5", "A1", "A2", "J9", "B1"].into_iter().enumerate() {
        let mover = if n % 2 == 0 { &mut alice } else { &mut bob };
        play(mover, &id, n as u32 + 1, vertex).await;
    }
    let (status, _, body) = http(
        &server,
        "GET",
        &format!("/api/games/{id}/estimate"),
        &[],
        "",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let e: Value = serde_json::from_str(&body).unwrap();
    // B1 took A1: Black has 3 stones and A1, White 1 stone; the 76 shared points split.
    assert_eq!(e["move_number"], 5);
    assert_eq!(e["black"], 42.0);
    assert_eq!(e["white"], 39.0);
    assert_eq!(e["komi"], 7.5);
    assert_eq!(e["result"], "W+4.5");
    assert_eq!(e["estimate"], true);

    let (status, _, body) = http(&server, "GET", "/api/games/nosuchgame/estimate", &[], "").await;
    assert_eq!(status, 404, "{body}");
    assert!(serde_json::from_str::<Value>(&body).unwrap()["error"].is_string());
    alice
        .ok(serde_json::json!({"type": "resign", "game_id": id}))
        .await;
    let (status, _, body) = http(
        &server,
        "GET",
        &format!("/api/games/{id}/estimate"),
        &[],
        "",
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("is over (W+R)"), "{body}");
    server.stop().await;
}

#[tokio::test]
async fn the_score_estimate_counts_handicap_stones_and_their_compensation() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let settings =
        serde_json::json!({"board_size": 9, "color": "black", "handicap": 2, "komi": 0.5});
    let id = start_game(&mut alice, &mut bob, settings).await;
    play(&mut bob, &id, 1, "E5").await;
    let (status, _, body) = http(
        &server,
        "GET",
        &format!("/api/games/{id}/estimate"),
        &[],
        "",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let e: Value = serde_json::from_str(&body).unwrap();
    // Two black stones, one white, 78 shared points; Chinese counting gives White back
    // one point per handicap stone (docs/RULES.md §6).
    assert_eq!(e["move_number"], 1);
    assert_eq!(e["black"], 41.0);
    assert_eq!(e["white"], 40.0);
    assert_eq!(e["result"], "W+1.5");
    server.stop().await;
}

#[tokio::test]
async fn the_archive_list_tells_each_game_s_board_size() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let settings = serde_json::json!({"board_size": 13, "color": "black"});
    let id = start_game(&mut alice, &mut bob, settings).await;
    let (status, _, body) = http(&server, "GET", "/api/games?player=alice", &[], "").await;
    assert_eq!(status, 200, "{body}");
    let list: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(list["games"][0]["game_id"], id.as_str());
    assert_eq!(list["games"][0]["board_size"], 13);
    server.stop().await;
}

#[tokio::test]
async fn a_review_is_saved_by_a_logged_in_user_and_opened_by_anyone() {
    let server = TestServer::start().await;
    let json = ("Content-Type", "application/json");
    let sgf = "(;FF[4]GM[1]SZ[9];B[ee];W[cc](;B[gg])(;B[gc]))";
    let body = serde_json::json!({"sgf": sgf}).to_string();

    let (status, _, reply) = http(&server, "POST", "/api/reviews", &[json], &body).await;
    assert_eq!(status, 401, "no token: {reply}");
    let bearer = format!("Bearer {}", server.token("alice"));
    let auth = ("Authorization", bearer.as_str());
    let bad = [
        (r#"{"sgf": "(;FF[4]SZ[9];B[ee]"}"#, 400),
        (r#"{"sgf": "(;SZ[9])(;SZ[9])"}"#, 400),
        (r#"{"sgf": "(;SZ[9])", "colour": "x"}"#, 400),
        (
            r#"{"sgf": "(;SZ[9])", "game_id": "nosuchgame", "move_number": 3}"#,
            404,
        ),
        ("nope", 400),
    ];
    for (bad, code) in bad {
        let (status, _, reply) = http(&server, "POST", "/api/reviews", &[json, auth], bad).await;
        assert_eq!(status, code, "{bad}: {reply}");
        assert!(serde_json::from_str::<Value>(&reply).unwrap()["error"].is_string());
    }
    let huge = serde_json::json!({"sgf": format!("(;C[{}])", "x".repeat(70_000))}).to_string();
    let (status, _, _) = http(&server, "POST", "/api/reviews", &[json, auth], &huge).await;
    assert_eq!(status, 413);
    // Past the server's body limit too, the refusal is the documented JSON.
    let vast = serde_json::json!({"sgf": "x".repeat(3 << 20)}).to_string();
    let (status, _, reply) = http(&server, "POST", "/api/reviews", &[json, auth], &vast).await;
    assert_eq!(status, 413, "{reply}");
    assert!(serde_json::from_str::<Value>(&reply).unwrap()["error"].is_string());

    let (status, _, reply) = http(&server, "POST", "/api/reviews", &[json, auth], &body).await;
    assert_eq!(status, 201, "{reply}");
    let created: Value = serde_json::from_str(&reply).unwrap();
    let id = created["review_id"].as_str().expect("an id");
    assert_eq!(created["url"], format!("/#/analysis?review={id}"));

    let (status, _, reply) = http(&server, "GET", &format!("/api/reviews/{id}"), &[], "").await;
    assert_eq!(status, 200, "{reply}");
    let review: Value = serde_json::from_str(&reply).unwrap();
    assert_eq!(review["review_id"], id);
    assert_eq!(review["owner"], "alice");
    assert_eq!(review["sgf"], sgf);
    assert!(review.get("game_id").is_none());
    let (status, headers, reply) =
        http(&server, "GET", &format!("/api/reviews/{id}/sgf"), &[], "").await;
    assert_eq!(status, 200);
    assert!(header(&headers, "content-type").starts_with("application/x-go-sgf"));
    assert_eq!(reply, sgf);
    let (status, _, _) = http(&server, "GET", "/api/reviews/nosuchreview", &[], "").await;
    assert_eq!(status, 404);

    // Stored: a restarted server still has it.
    let data = server.stop().await;
    let server = TestServer::start_in(data, |_| {}).await;
    let (status, _, reply) = http(&server, "GET", &format!("/api/reviews/{id}"), &[], "").await;
    assert_eq!(status, 200, "{reply}");
    server.stop().await;
}
