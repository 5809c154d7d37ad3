//! Vacation on one's own profile in a real browser (`tests/browser/vacation.mjs`, see
//! tests/browser/README.md), on a phone: the balance, going away and coming back; the
//! weekend's time zone (the browser's, when the player agrees) and days.

#[path = "common/browser.rs"]
mod browser;
mod common;

use common::TestServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_profile_shows_the_vacation_balance_and_sends_its_player_away_and_back() {
    let server = TestServer::start().await;
    browser::run_scenario(
        "vacation.mjs",
        &server.http("/"),
        &["vacation-away.png", "calendar.png"],
    )
    .await;
    server.stop().await;
}
