//! The referee in the web client, in a real browser (`tests/browser/referee.mjs`, see
//! tests/browser/README.md): a player calls the referee, a referee (logged in with a
//! token of the `referee` role) finds the call in the referee view, warns a player from
//! the game's page, sees and closes a report, and ends the game with a ruling; the
//! players see each of these in the game.

#[path = "common/browser.rs"]
mod browser;
mod common;

use common::TestServer;
use tengen::protocol::Role;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_referee_answers_a_call_warns_reads_a_report_and_rules_in_the_browser() {
    let server = TestServer::start().await;
    let token = server.token_as("li", Role::Referee);
    browser::run_scenario_with(
        "referee.mjs",
        &server.http("/"),
        &["referee-view.png", "referee-game.png", "referee-player.png"],
        &[("TENGEN_REFEREE_TOKEN", token)],
    )
    .await;
    server.stop().await;
}
