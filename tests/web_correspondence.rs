//! Correspondence Go in a real browser (`tests/browser/correspondence.mjs`, see
//! tests/browser/README.md): a game challenged with a clock in days, the dashboard, the
//! planner of conditional moves and a planned reply, and a refused plan.

#[path = "common/browser.rs"]
mod browser;
mod common;

use common::TestServer;

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
        ],
    )
    .await;
    server.stop().await;
}
