//! A tournament run through the web client in a real browser (`tests/browser/tournament.mjs`,
//! see tests/browser/README.md): a referee creates it with the form, four players register
//! from their pages, the director pairs, reads the costs, swaps and publishes from the
//! console, the games end by resignation on their pages, an appeal is ruled, and the
//! standings and crosstable follow to the end of round two.

#[path = "common/browser.rs"]
mod browser;
mod common;

use common::TestServer;
use tengen::protocol::Role;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_is_created_played_and_finished_through_the_pages() {
    let server = TestServer::start().await;
    let token = server.token_as("td", Role::Referee);
    browser::run_scenario_with(
        "tournament.mjs",
        &server.http("/"),
        &[
            "tournament-registration.png",
            "tournament-console.png",
            "tournament-phone-proposed.png",
            "tournament-phone.png",
            "tournament-wide.png",
            "tournament-list.png",
        ],
        &[("TENGEN_REFEREE_TOKEN", token)],
    )
    .await;
    server.stop().await;
}
