//! One user cannot take every connection slot: `limits.max_connections_per_user` caps the
//! connections of one login, at the upgrade and at an `auth` message alike.

mod common;

use common::{Client, TestServer, WAIT};
use serde_json::json;

#[tokio::test]
async fn a_user_over_the_cap_is_refused_with_limit_reached_and_4009() {
    let server = TestServer::start_with(|c| c.limits.max_connections_per_user = 2).await;
    let first = server.login("alice").await;
    let _second = server.login("alice").await;
    assert_eq!(first.welcome["type"], "welcome");

    let url = format!("{}?token={}", server.url, server.token("alice"));
    let mut third = Client::connect(&url).await;
    assert_eq!(third.welcome["type"], "error", "{}", third.welcome);
    assert_eq!(third.welcome["code"], "limit_reached");
    assert!(third.welcome.get("id").is_none());
    assert_eq!(third.closed().await, Some(4009));

    // Other users are not affected, and the refused connection took no place.
    let mut bob = server.login("bob").await;
    assert_eq!(bob.welcome["user"]["id"], "bob");
    bob.ok(json!({"type": "ping"})).await;

    // An `auth` on an anonymous connection counts too, and changes nothing when refused.
    let mut anon = server.anonymous().await;
    let token = server.token("alice");
    anon.refused(json!({"type": "auth", "token": token}), "limit_reached")
        .await;
    anon.refused(
        json!({"type": "seek", "settings": {"board_size": 9}}),
        "unauthorized",
    )
    .await;

    // A place comes free when a connection goes.
    first.close().await;
    // (The server may not have seen the close yet: ask again until the wait is over.)
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let c = Client::connect(&url).await;
        if c.welcome["type"] == "welcome" {
            break;
        }
        assert_eq!(c.welcome["code"], "limit_reached");
        assert!(
            tokio::time::Instant::now() < deadline,
            "the freed place was never given again"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    anon.ok(json!({"type": "ping"})).await;
}
