//! Correspondence Go in a real browser (`tests/browser/correspondence.mjs` and
//! `weekend.mjs`, see tests/browser/README.md): a game challenged with a clock in days,
//! the dashboard, the planner of conditional moves (its drafts) and a planned reply, and
//! a refused plan; a clock standing still on its player's weekend and vacation.

#[path = "common/browser.rs"]
mod browser;
mod common;

use common::{Client, TestServer, WEEKDAYS, start_game};
use serde_json::json;
use tengen::correspondence::calendar;

const DAY: u64 = 86_400_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_correspondence_game_is_challenged_listed_planned_and_answered_from_the_plan() {
    let server = TestServer::start().await;
    browser::run_scenario(
        "correspondence.mjs",
        &server.http("/"),
        &[
            "correspondence-dashboard-phone.png",
            "correspondence-planner.png",
            "correspondence-planned-move.png",
            "correspondence-draft-dropped.png",
        ],
    )
    .await;
    server.stop().await;
}

/// Wes (Black, to move) has today and tomorrow as his weekend in UTC, whatever day the
/// test runs on; the scenario gets one game of his with `weekends` and one without.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_correspondence_clock_stands_still_on_the_page_on_its_players_weekend_and_vacation() {
    let server = TestServer::start().await;
    // No accounts: the scenario logs them in with the dev login, as itself.
    let url = |sub| format!("{}?token={}", server.url, server.token(sub));
    let mut wes = Client::connect(&url("wes")).await;
    let mut val = Client::connect(&url("val")).await;
    // 1 January 1970 was a Thursday.
    let today = (calendar::now_ms() / DAY + 3) as usize;
    let weekend = json!([WEEKDAYS[today % 7], WEEKDAYS[(today + 1) % 7]]);
    let set = wes
        .ok(json!({"type": "set_calendar", "calendar": {"time_zone": "UTC", "weekend": weekend}}))
        .await;
    assert_eq!(set["type"], "calendar", "{set}");
    let settings = |weekends: bool| {
        json!({
            "board_size": 9, "color": "black", "correspondence": true, "weekends": weekends,
            "clock": {"system": "simple", "per_move_ms": 3 * DAY},
        })
    };
    let on_weekend = start_game(&mut wes, &mut val, settings(true)).await;
    let plain = start_game(&mut wes, &mut val, settings(false)).await;
    browser::run_scenario_with(
        "weekend.mjs",
        &server.http("/"),
        &["clock-weekend.png", "clock-vacation.png"],
        &[("WEEKEND_GAME", on_weekend), ("PLAIN_GAME", plain)],
    )
    .await;
    server.stop().await;
}
