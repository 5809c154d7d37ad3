//! The web client's accounts, automatch and ratings in a real browser
//! (`tests/browser/accounts.mjs`, see tests/browser/README.md), against a server with
//! registration open and the dev login off, as on a public server: two new users sign up,
//! automatch pairs them in a rated 9x9 game, one resigns, and both profiles and the
//! leaderboard show the new ratings, and the lobby shows their ranks beside their names; a guest plays in one click and renews its token.

#[path = "common/browser.rs"]
mod browser;
mod common;

use common::TestServer;
use tengen::config::Registration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_users_sign_up_are_automatched_and_see_their_new_ratings_in_the_browser() {
    let server = TestServer::start_with(|c| {
        c.auth.dev_login = Some(false);
        c.auth.registration = Registration::Open;
        c.auth.guests = true;
    })
    .await;
    browser::run_scenario(
        "accounts.mjs",
        &server.http("/"),
        &[
            "account-login.png",
            "automatch-waiting.png",
            "automatch-phone.png",
            "profile-wide.png",
            "profile-phone.png",
            "leaderboard.png",
            "lobby-ranks.png",
        ],
    )
    .await;
    server.stop().await;
}
