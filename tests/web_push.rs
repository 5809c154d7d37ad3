//! Web Push settings in a real browser (`tests/browser/push.mjs`, see
//! tests/browser/README.md), on a server with `[push]` on: the device switch once the
//! service worker is installed, and a push box per kind that keeps its choice.

#[path = "common/browser.rs"]
mod browser;
mod common;

use common::TestServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_profile_offers_push_on_this_device_and_keeps_each_kinds_push_choice() {
    let (private, _) = tengen::notify::push::vapid::new_key_pair();
    let server = TestServer::start_with(|c| {
        c.push.private_key = Some(private);
        c.push.subject = "mailto:ops@example.org".into();
    })
    .await;
    browser::run_scenario("push.mjs", &server.http("/"), &["push-settings.png"]).await;
    server.stop().await;
}
