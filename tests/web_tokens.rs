//! Personal API tokens and a self-made bot account in a real browser
//! (`tests/browser/tokens.mjs`, see tests/browser/README.md), against a server with
//! registration open and the dev login off: a token created on the profile page is shown
//! once, listed by its prefix, works and is revoked; the account becomes a bot and is
//! labelled on the bots page.

#[path = "common/browser.rs"]
mod browser;
mod common;

use common::TestServer;
use tengen::config::Registration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_is_made_on_the_profile_page_and_the_account_turned_into_a_bot() {
    let server = TestServer::start_with(|c| {
        c.auth.dev_login = Some(false);
        c.auth.registration = Registration::Open;
    })
    .await;
    browser::run_scenario(
        "tokens.mjs",
        &server.http("/"),
        &["tokens-created.png", "bots-page.png"],
    )
    .await;
    server.stop().await;
}
