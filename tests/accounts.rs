//! Accounts through a real server (`client-protocol/accounts.md`): registration, login,
//! refresh rotation, logout and revocation, password change, guests, operators' invites
//! and disabling; hostile input, each answered with a coded error that changes nothing;
//! the WebSocket taking the access tokens; the server's own tokens and an identity
//! service's at once.

mod common;

use common::{Client, TestServer, tengen};
use serde_json::{Value, json};
use tengen::config::{JwtAlgorithm, Registration};
use tengen::protocol::Role;
use tengen::store::{NewInvite, UserChange};

/// One HTTP/1.1 exchange.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The refresh token this reply sets, if it sets one.
    fn refresh_cookie(&self) -> Option<String> {
        let set = self.header("set-cookie")?;
        let value = set.strip_prefix("tengen_refresh=")?.split(';').next()?;
        Some(value.to_string())
    }

    fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    fn token(&self) -> String {
        self.body["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no access token in {}", self.body))
            .to_string()
    }
}

async fn send(server: &TestServer, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let addr = server.server.as_ref().expect("running").addr();
    let mut all = headers.to_vec();
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        all.push(("Content-Type", "application/json"));
    }
    let reply = common::exchange(addr, "POST", path, &all, body).await;
    Reply {
        status: reply.status,
        headers: reply.headers(),
        body: serde_json::from_str(&reply.body).unwrap_or(Value::Null),
    }
}

async fn post(server: &TestServer, path: &str, body: Value) -> Reply {
    send(server, path, &[], body.to_string().as_bytes()).await
}

async fn with_cookie(server: &TestServer, path: &str, cookie: &str) -> Reply {
    let cookie = format!("tengen_refresh={cookie}");
    send(server, path, &[("Cookie", &cookie)], b"").await
}

async fn register(server: &TestServer, username: &str, password: &str) -> Reply {
    post(
        server,
        "/api/auth/register",
        json!({"username": username, "password": password}),
    )
    .await
}

async fn login(server: &TestServer, username: &str, password: &str) -> Reply {
    post(
        server,
        "/api/auth/login",
        json!({"username": username, "password": password}),
    )
    .await
}

const PASSWORD: &str = "correct horse battery";

/// Every user id the store holds.
fn user_ids(server: &TestServer) -> Vec<String> {
    let store = server.server.as_ref().expect("running").hub().store();
    store
        .users("", 1000)
        .expect("users")
        .into_iter()
        .map(|u| u.id)
        .collect()
}

async fn connect(server: &TestServer, token: &str) -> Client {
    Client::connect(&format!("{}?token={token}", server.url)).await
}

#[tokio::test]
async fn a_new_account_logs_in_and_its_access_token_opens_the_websocket() {
    let server = TestServer::start().await;
    let reply = post(
        &server,
        "/api/auth/register",
        json!({"username": "Alice", "password": PASSWORD, "display_name": "Alice Liddell"}),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(
        reply.body["user"],
        json!({"id": "alice", "name": "Alice Liddell", "role": "player"})
    );
    assert_eq!(reply.body["token_type"], "Bearer");
    assert_eq!(reply.body["expires_in"], 900);
    let cookie = reply.header("set-cookie").expect("a refresh cookie");
    for part in [
        "HttpOnly",
        "SameSite=Strict",
        "Path=/api/auth",
        "Max-Age=2592000",
    ] {
        assert!(cookie.contains(part), "{cookie} lacks {part}");
    }
    assert!(!cookie.contains("Secure"), "plain http: {cookie}");
    assert_eq!(reply.header("cache-control"), Some("no-store"));

    let mut ws = connect(&server, &reply.token()).await;
    assert_eq!(ws.welcome["type"], "welcome", "{}", ws.welcome);
    assert_eq!(ws.welcome["user"]["id"], "alice");
    assert_eq!(ws.welcome["user"]["name"], "Alice Liddell");
    ws.ok(json!({"type": "ping"})).await;

    // Any case or compatibility form of the username logs in.
    for spelling in ["alice", "ALICE", "Ａｌｉｃｅ"] {
        let reply = login(&server, spelling, PASSWORD).await;
        assert_eq!(reply.status, 200, "{spelling}: {}", reply.body);
        assert_eq!(reply.body["user"]["id"], "alice");
        assert!(reply.refresh_cookie().is_some());
    }
    // A wrong password and an unknown user get the same answer.
    let wrong = login(&server, "alice", "not the password").await;
    let unknown = login(&server, "nobody", "not the password").await;
    assert_eq!((wrong.status, unknown.status), (401, 401));
    assert_eq!(wrong.body, unknown.body);
    assert_eq!(wrong.code(), "invalid_credentials");
    assert!(wrong.header("set-cookie").is_none());
}

#[tokio::test]
async fn refresh_rotates_and_a_replayed_cookie_ends_its_whole_family() {
    let server = TestServer::start().await;
    assert_eq!(register(&server, "alice", PASSWORD).await.status, 201);
    let first = login(&server, "alice", PASSWORD).await;
    let other = login(&server, "alice", PASSWORD).await;
    let c1 = first.refresh_cookie().expect("cookie");
    let d1 = other.refresh_cookie().expect("cookie");

    let rotated = with_cookie(&server, "/api/auth/refresh", &c1).await;
    assert_eq!(rotated.status, 200, "{}", rotated.body);
    let c2 = rotated.refresh_cookie().expect("a new cookie");
    assert_ne!(c1, c2);
    assert_eq!(rotated.body["user"]["id"], "alice");
    assert_eq!(
        connect(&server, &rotated.token()).await.welcome["type"],
        "welcome"
    );

    // The old cookie again: someone holds a copy, so the family ends, c2 included.
    let replay = with_cookie(&server, "/api/auth/refresh", &c1).await;
    assert_eq!((replay.status, replay.code()), (401, "refresh_reused"));
    assert_eq!(replay.refresh_cookie().as_deref(), Some(""), "cleared");
    let after = with_cookie(&server, "/api/auth/refresh", &c2).await;
    assert_eq!((after.status, after.code()), (401, "invalid_refresh"));
    // The other login's family is untouched.
    let d2 = with_cookie(&server, "/api/auth/refresh", &d1).await;
    assert_eq!(d2.status, 200, "{}", d2.body);

    let none = send(&server, "/api/auth/refresh", &[], b"").await;
    assert_eq!((none.status, none.code()), (401, "invalid_refresh"));
    let forged = with_cookie(&server, "/api/auth/refresh", &"0".repeat(64)).await;
    assert_eq!((forged.status, forged.code()), (401, "invalid_refresh"));
}

#[tokio::test]
async fn logout_ends_a_session_and_a_password_change_ends_them_all() {
    let server = TestServer::start().await;
    assert_eq!(register(&server, "alice", PASSWORD).await.status, 201);
    let a = login(&server, "alice", PASSWORD).await;
    let b = login(&server, "alice", PASSWORD).await;
    let (ca, cb) = (a.refresh_cookie().unwrap(), b.refresh_cookie().unwrap());

    let out = with_cookie(&server, "/api/auth/logout", &ca).await;
    assert_eq!(out.status, 204);
    assert!(out.header("set-cookie").unwrap().contains("Max-Age=0"));
    assert_eq!(out.header("cache-control"), Some("no-store"));
    let gone = with_cookie(&server, "/api/auth/refresh", &ca).await;
    assert_eq!((gone.status, gone.code()), (401, "invalid_refresh"));
    assert_eq!(
        send(&server, "/api/auth/logout", &[], b"").await.status,
        204
    );

    let bearer = format!("Bearer {}", b.token());
    let change = |old: &str, new: &str| json!({"old": old, "new": new}).to_string();
    let headers = [("Authorization", bearer.as_str())];
    let weak = send(
        &server,
        "/api/auth/password",
        &headers,
        change(PASSWORD, "password1").as_bytes(),
    )
    .await;
    assert_eq!((weak.status, weak.code()), (400, "weak_password"));
    let wrong = send(
        &server,
        "/api/auth/password",
        &headers,
        change("guess guess", "a new long secret").as_bytes(),
    )
    .await;
    assert_eq!((wrong.status, wrong.code()), (401, "invalid_credentials"));
    let none = send(
        &server,
        "/api/auth/password",
        &[],
        change(PASSWORD, "a new long secret").as_bytes(),
    )
    .await;
    assert_eq!((none.status, none.code()), (401, "unauthorized"));
    // The length cap is checked before anything else, the token included.
    let long = "x".repeat(300);
    for body in [change(&long, "a new long secret"), change(PASSWORD, &long)] {
        let refused = send(&server, "/api/auth/password", &[], body.as_bytes()).await;
        assert_eq!((refused.status, refused.code()), (400, "password_too_long"));
    }
    // Nothing changed so far.
    assert_eq!(login(&server, "alice", PASSWORD).await.status, 200);

    let changed = send(
        &server,
        "/api/auth/password",
        &headers,
        change(PASSWORD, "a new long secret").as_bytes(),
    )
    .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    let fresh = changed
        .refresh_cookie()
        .expect("a new session for this client");
    let old = with_cookie(&server, "/api/auth/refresh", &cb).await;
    assert_eq!((old.status, old.code()), (401, "invalid_refresh"));
    assert_eq!(
        with_cookie(&server, "/api/auth/refresh", &fresh)
            .await
            .status,
        200
    );
    assert_eq!(
        login(&server, "alice", PASSWORD).await.code(),
        "invalid_credentials"
    );
    assert_eq!(
        login(&server, "alice", "a new long secret").await.status,
        200
    );
}

#[tokio::test]
async fn a_guest_is_one_click_plays_unrated_and_has_no_password() {
    let server = TestServer::start().await;
    let guest = send(&server, "/api/auth/guest", &[], b"").await;
    assert_eq!(guest.status, 201, "{}", guest.body);
    let id = guest.body["user"]["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("guest-"), "{id}");
    assert_eq!(guest.body["user"]["role"], "guest");
    let ws = connect(&server, &guest.token()).await;
    assert_eq!(ws.welcome["user"]["role"], "guest");
    // It lasts as long as its refresh cookie.
    let again = with_cookie(
        &server,
        "/api/auth/refresh",
        &guest.refresh_cookie().unwrap(),
    )
    .await;
    assert_eq!(again.body["user"]["id"], id.as_str());
    let bearer = format!("Bearer {}", guest.token());
    let change = send(
        &server,
        "/api/auth/password",
        &[("Authorization", &bearer)],
        json!({"old": "", "new": "a new long secret"})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert_eq!((change.status, change.code()), (403, "forbidden"));
    // Nobody can register or dev-login a guest's name.
    assert_eq!(
        register(&server, &id, PASSWORD).await.code(),
        "username_reserved"
    );
    let dev = post(&server, "/api/dev-login", json!({"name": id})).await;
    assert_eq!(dev.status, 409);
}

#[tokio::test]
async fn hostile_registrations_get_coded_errors_and_change_nothing() {
    let server = TestServer::start().await;
    assert_eq!(register(&server, "alice", PASSWORD).await.status, 201);
    let huge_name = "a".repeat(3000);
    let cases: Vec<(Vec<u8>, u16, &str)> = vec![
        (b"".to_vec(), 400, "bad_request"),
        (b"{}".to_vec(), 400, "bad_request"),
        (b"[1, 2]".to_vec(), 400, "bad_request"),
        // serde would read a struct's fields from an array by their order.
        (
            json!(["bob", PASSWORD]).to_string().into_bytes(),
            400,
            "bad_request",
        ),
        (
            b"{\"username\": \"bob\", \"password\": \"\xff\xfe long enough\"}".to_vec(),
            400,
            "bad_request",
        ),
        (
            json!({"username": "bob", "password": PASSWORD, "admin": true})
                .to_string()
                .into_bytes(),
            400,
            "bad_request",
        ),
        (
            json!({"username": 7, "password": PASSWORD})
                .to_string()
                .into_bytes(),
            400,
            "bad_request",
        ),
        (vec![b' '; 10_000], 413, "too_large"),
        (
            json!({"username": huge_name, "password": PASSWORD})
                .to_string()
                .into_bytes(),
            400,
            "invalid_username",
        ),
        (
            json!({"username": "", "password": PASSWORD})
                .to_string()
                .into_bytes(),
            400,
            "invalid_username",
        ),
        (
            json!({"username": "ab", "password": PASSWORD})
                .to_string()
                .into_bytes(),
            400,
            "invalid_username",
        ),
        (
            json!({"username": "bob smith", "password": PASSWORD})
                .to_string()
                .into_bytes(),
            400,
            "invalid_username",
        ),
        (
            json!({"username": "Admin", "password": PASSWORD})
                .to_string()
                .into_bytes(),
            400,
            "username_reserved",
        ),
        (
            json!({"username": "ALICE", "password": PASSWORD})
                .to_string()
                .into_bytes(),
            409,
            "username_taken",
        ),
        (
            json!({"username": "Ａｌｉｃｅ", "password": PASSWORD})
                .to_string()
                .into_bytes(),
            409,
            "username_taken",
        ),
        (
            json!({"username": "bob", "password": ""})
                .to_string()
                .into_bytes(),
            400,
            "weak_password",
        ),
        (
            json!({"username": "bob", "password": "short"})
                .to_string()
                .into_bytes(),
            400,
            "weak_password",
        ),
        (
            json!({"username": "bob", "password": "Password123"})
                .to_string()
                .into_bytes(),
            400,
            "weak_password",
        ),
        (
            json!({"username": "bob", "password": "x".repeat(300)})
                .to_string()
                .into_bytes(),
            400,
            "password_too_long",
        ),
        (
            json!({"username": "bob", "password": PASSWORD, "display_name": ""})
                .to_string()
                .into_bytes(),
            400,
            "invalid_display_name",
        ),
        (
            json!({"username": "bob", "password": PASSWORD, "display_name": "a\nb"})
                .to_string()
                .into_bytes(),
            400,
            "invalid_display_name",
        ),
        (
            json!({"username": "bob", "password": PASSWORD, "display_name": "x".repeat(41)})
                .to_string()
                .into_bytes(),
            400,
            "invalid_display_name",
        ),
    ];
    for (body, status, code) in cases {
        let reply = send(&server, "/api/auth/register", &[], &body).await;
        let shown = String::from_utf8_lossy(&body[..body.len().min(60)]).to_string();
        assert_eq!(
            (reply.status, reply.code()),
            (status, code),
            "{shown}: {}",
            reply.body
        );
        assert!(
            reply.body["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{shown}"
        );
        assert!(reply.header("set-cookie").is_none(), "{shown}");
    }
    assert_eq!(user_ids(&server), ["alice"], "nothing was created");
    // Hostile logins too.
    let huge = send(&server, "/api/auth/login", &[], &vec![b'{'; 5000]).await;
    assert_eq!(huge.code(), "too_large");
    let long = login(&server, "alice", &"x".repeat(10_000)[..3000]).await;
    assert_eq!(long.code(), "password_too_long");
    let bad = send(
        &server,
        "/api/auth/login",
        &[],
        b"{\"username\": \"al\xffice\", \"password\": \"x\"}",
    )
    .await;
    assert_eq!(bad.code(), "bad_request");
    assert_eq!(
        login(&server, "alice", PASSWORD).await.status,
        200,
        "alice is unharmed"
    );
}

#[tokio::test]
async fn wrong_passwords_past_the_limit_are_delayed_even_for_the_right_one() {
    let server = TestServer::start().await;
    assert_eq!(register(&server, "alice", PASSWORD).await.status, 201);
    for i in 0..6 {
        let reply = login(&server, "alice", &format!("wrong guess {i}")).await;
        assert_eq!(reply.code(), "invalid_credentials", "attempt {i}");
    }
    // The sixth failure started a delay: the next try is refused without a check.
    let held = login(&server, "alice", PASSWORD).await;
    assert_eq!(
        (held.status, held.code()),
        (429, "rate_limited"),
        "{}",
        held.body
    );
    let secs = held.body["retry_after"].as_u64().expect("retry_after");
    assert!((1..=2).contains(&secs), "{secs}");
    assert_eq!(held.header("retry-after"), Some(secs.to_string().as_str()));
    assert!(held.header("set-cookie").is_none());
    // The same holds for a name that does not exist, so the answer tells nothing.
    for i in 0..6 {
        login(&server, "nobody", &format!("wrong guess {i}")).await;
    }
    assert_eq!(
        login(&server, "nobody", PASSWORD).await.code(),
        "rate_limited"
    );
}

#[tokio::test]
async fn new_identities_are_limited_per_address_and_proxies_are_trusted_only_when_named() {
    let server = TestServer::start_with(|c| c.auth.registrations_per_hour = 2).await;
    assert_eq!(register(&server, "alice", PASSWORD).await.status, 201);
    assert_eq!(send(&server, "/api/auth/guest", &[], b"").await.status, 201);
    // A forged X-Forwarded-For from an untrusted peer is ignored.
    let forged = send(
        &server,
        "/api/auth/register",
        &[("X-Forwarded-For", "203.0.113.9")],
        json!({"username": "bob", "password": PASSWORD})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert_eq!((forged.status, forged.code()), (429, "rate_limited"));
    assert!(forged.body["retry_after"].as_u64().unwrap() > 3000);
    assert_eq!(user_ids(&server).len(), 2);

    let proxied = TestServer::start_with(|c| {
        c.auth.registrations_per_hour = 1;
        c.auth.trusted_proxies = vec!["127.0.0.0/8".parse().unwrap()];
    })
    .await;
    assert_eq!(via(&proxied, "203.0.113.1", "carol").await.status, 201);
    assert_eq!(
        via(&proxied, "198.51.100.7, 203.0.113.2", "dave")
            .await
            .status,
        201
    );
    assert_eq!(
        via(&proxied, "203.0.113.1", "erin").await.code(),
        "rate_limited"
    );
}

/// Registers `name` through a proxy that says the client is `forwarded_for`.
async fn via(server: &TestServer, forwarded_for: &str, name: &str) -> Reply {
    send(
        server,
        "/api/auth/register",
        &[("X-Forwarded-For", forwarded_for)],
        json!({"username": name, "password": PASSWORD})
            .to_string()
            .as_bytes(),
    )
    .await
}

#[tokio::test]
async fn invite_and_closed_registration() {
    let closed = TestServer::start_with(|c| {
        c.auth.registration = Registration::Closed;
        c.auth.guests = false;
    })
    .await;
    let reply = register(&closed, "alice", PASSWORD).await;
    assert_eq!((reply.status, reply.code()), (403, "registration_closed"));
    let guest = send(&closed, "/api/auth/guest", &[], b"").await;
    assert_eq!((guest.status, guest.code()), (403, "registration_closed"));
    assert!(user_ids(&closed).is_empty());

    let invite = TestServer::start_with(|c| c.auth.registration = Registration::Invite).await;
    let store = invite.server.as_ref().unwrap().hub().store().clone();
    store
        .create_invite(&NewInvite {
            hash: tengen::accounts::digest("the-code"),
            created_at_ms: 0,
            expires_at_ms: i64::MAX,
        })
        .unwrap();
    let body = |name: &str, code: Option<&str>| {
        let mut b = json!({"username": name, "password": PASSWORD});
        if let Some(code) = code {
            b["invite"] = json!(code);
        }
        b
    };
    let none = post(&invite, "/api/auth/register", body("alice", None)).await;
    assert_eq!((none.status, none.code()), (403, "invite_required"));
    let wrong = post(&invite, "/api/auth/register", body("alice", Some("guess"))).await;
    assert_eq!((wrong.status, wrong.code()), (403, "invalid_invite"));
    assert!(user_ids(&invite).is_empty());
    let good = post(
        &invite,
        "/api/auth/register",
        body("alice", Some("the-code")),
    )
    .await;
    assert_eq!(good.status, 201, "{}", good.body);
    let twice = post(&invite, "/api/auth/register", body("bob", Some("the-code"))).await;
    assert_eq!(twice.code(), "invalid_invite");
    assert_eq!(user_ids(&invite), ["alice"]);
}

#[tokio::test]
async fn a_disabled_account_cannot_log_in_refresh_or_connect() {
    let server = TestServer::start().await;
    let reply = register(&server, "bob", PASSWORD).await;
    let token = reply.token();
    let cookie = reply.refresh_cookie().unwrap();
    let store = server.server.as_ref().unwrap().hub().store().clone();
    store
        .update_user("bob", &UserChange::Disabled(true))
        .unwrap();

    let refused = login(&server, "bob", PASSWORD).await;
    assert_eq!((refused.status, refused.code()), (403, "account_disabled"));
    // Disabling ended the session, and the refresh says why (and clears the cookie).
    let refresh = with_cookie(&server, "/api/auth/refresh", &cookie).await;
    assert_eq!((refresh.status, refresh.code()), (403, "account_disabled"));
    assert!(refresh.header("set-cookie").unwrap().contains("Max-Age=0"));
    // The access token is still within its 15 minutes, but the WebSocket asks the store.
    let mut ws = connect(&server, &token).await;
    assert_eq!(ws.welcome["type"], "error", "{}", ws.welcome);
    assert_eq!(ws.welcome["code"], "unauthorized");
    assert_eq!(ws.closed().await, Some(4001));
    // Nor through an `auth` message on an anonymous connection.
    let mut anonymous = server.anonymous().await;
    anonymous
        .refused(json!({"type": "auth", "token": token}), "unauthorized")
        .await;
    // Nor save a review over HTTP.
    let bearer = format!("Bearer {token}");
    let review = send(
        &server,
        "/api/reviews",
        &[("Authorization", &bearer)],
        br#"{"sgf": "(;SZ[9])"}"#,
    )
    .await;
    assert_eq!(review.status, 401, "{}", review.body);
    // A wrong password does not reveal that the account is disabled.
    assert_eq!(
        login(&server, "bob", "wrong password").await.code(),
        "invalid_credentials"
    );
    // Enabled again, bob logs in anew: the sessions the disabling ended stay ended.
    store
        .update_user("bob", &UserChange::Disabled(false))
        .unwrap();
    let again = with_cookie(&server, "/api/auth/refresh", &cookie).await;
    assert_eq!((again.status, again.code()), (401, "invalid_refresh"));
    assert_eq!(login(&server, "bob", PASSWORD).await.status, 200);
}

#[tokio::test]
async fn a_token_signed_with_another_key_is_refused_everywhere() {
    let server = TestServer::start().await;
    let reply = register(&server, "alice", PASSWORD).await;
    assert_eq!(reply.status, 201);
    let claims = tengen::auth::claims_for("alice", None, Role::Admin, 600);
    let forged = tengen::auth::sign(b"not the server's secret", &claims).unwrap();
    let mut ws = connect(&server, &forged).await;
    assert_eq!(ws.welcome["code"], "unauthorized", "{}", ws.welcome);
    assert_eq!(ws.closed().await, Some(4001));
    let bearer = format!("Bearer {forged}");
    let change = send(
        &server,
        "/api/auth/password",
        &[("Authorization", &bearer)],
        json!({"old": PASSWORD, "new": "a new long secret"})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert_eq!((change.status, change.code()), (401, "unauthorized"));
    assert_eq!(login(&server, "alice", PASSWORD).await.status, 200);
}

#[tokio::test]
async fn nobody_registers_the_id_of_a_token_user_who_has_played() {
    let server = TestServer::start().await;
    // A bot on an operator's token (`tengen token --sub gnugo`) has no account row.
    let mut bot = connect(&server, &server.token("gnugo")).await;
    let mut zed = connect(&server, &server.token("zed")).await;
    common::start_game(&mut zed, &mut bot, json!({"board_size": 9})).await;
    for name in ["gnugo", "GNUGO", "ｇｎｕｇｏ"] {
        let reply = register(&server, name, PASSWORD).await;
        assert_eq!(
            (reply.status, reply.code()),
            (409, "username_taken"),
            "{name}: {}",
            reply.body
        );
    }
    assert!(user_ids(&server).is_empty(), "nothing was created");
    // A name that has never played is free.
    assert_eq!(register(&server, "gnugo2", PASSWORD).await.status, 201);
}

#[tokio::test]
async fn the_dev_login_never_speaks_for_a_registered_account() {
    let server = TestServer::start().await;
    assert_eq!(register(&server, "alice", PASSWORD).await.status, 201);
    for name in [
        "alice",
        "Alice",
        "ALICE",
        "Ａｌｉｃｅ",
        "guest-7",
        "ｇｕｅｓｔ7",
    ] {
        let reply = post(&server, "/api/dev-login", json!({"name": name})).await;
        assert_eq!(reply.status, 409, "{name}: {}", reply.body);
        assert!(reply.body.get("token").is_none());
    }
    let array = post(&server, "/api/dev-login", json!(["carol"])).await;
    assert_eq!(array.status, 400, "{}", array.body);
    assert_eq!(
        post(&server, "/api/dev-login", json!({"name": "carol"}))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn an_https_public_url_makes_the_cookie_secure() {
    let server =
        TestServer::start_with(|c| c.auth.public_url = Some("https://go.example".into())).await;
    let reply = register(&server, "alice", PASSWORD).await;
    assert!(reply.header("set-cookie").unwrap().ends_with("; Secure"));
}

#[tokio::test]
async fn local_accounts_and_an_identity_services_users_connect_at_once() {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    let keys = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/keys");
    let server = TestServer::start_with(|c| {
        c.auth.algorithm = JwtAlgorithm::EdDSA;
        c.auth.public_key_file = Some(keys.join("ed25519-test-public.pem"));
        c.auth.issuer = Some("https://id.example".into());
        c.auth.audience = Some("tengen".into());
    })
    .await;
    let key =
        EncodingKey::from_ed_pem(&std::fs::read(keys.join("ed25519-test-private.pem")).unwrap())
            .unwrap();
    let sign_external = |sub: &str, aud: &str| {
        let mut claims = tengen::auth::claims_for(sub, Some("From Outside"), Role::Player, 600);
        claims.iss = Some("https://id.example".into());
        claims.aud = Some(aud.into());
        jsonwebtoken::encode(&Header::new(Algorithm::EdDSA), &claims, &key).unwrap()
    };
    let external = |sub: &str| sign_external(sub, "tengen");

    let local = register(&server, "alice", PASSWORD).await;
    assert_eq!(local.status, 201, "{}", local.body);
    let a = connect(&server, &local.token()).await;
    assert_eq!(a.welcome["user"]["id"], "alice", "{}", a.welcome);
    let e = connect(&server, &external("eve")).await;
    assert_eq!(e.welcome["user"]["id"], "eve", "{}", e.welcome);
    let store = server.server.as_ref().unwrap().hub().store().clone();
    let eve = store.user("eve").unwrap().expect("recorded at first sight");
    assert_eq!(eve.origin, tengen::store::Origin::External);

    // The identity service's `iss` and `aud` are still checked on its tokens (the
    // server's own tokens carry neither).
    let mut other = connect(&server, &sign_external("mallory", "another-app")).await;
    assert_eq!(other.welcome["code"], "unauthorized", "{}", other.welcome);
    assert_eq!(other.closed().await, Some(4001));
    // The identity service cannot speak for a local account...
    // Nor for one by another spelling that folds to it as a username does, nor for a
    // guest's name.
    for sub in [
        "alice",
        "ALICE",
        "Ａｌｉｃｅ",
        "guest-0123456789",
        "GUEST-x",
        "ｇｕｅｓｔ7",
    ] {
        let mut clash = connect(&server, &external(sub)).await;
        assert_eq!(
            clash.welcome["code"], "unauthorized",
            "{sub}: {}",
            clash.welcome
        );
        assert_eq!(clash.closed().await, Some(4001), "{sub}");
    }
    // An id that is no username at all is the identity service's to choose.
    let opaque = connect(&server, &external("auth0|42")).await;
    assert_eq!(
        opaque.welcome["user"]["id"], "auth0|42",
        "{}",
        opaque.welcome
    );
    // ...nor can anyone register an external user's id, or log in to it.
    assert_eq!(
        register(&server, "eve", PASSWORD).await.code(),
        "username_taken"
    );
    assert_eq!(
        login(&server, "eve", PASSWORD).await.code(),
        "invalid_credentials"
    );
    assert_eq!(user_ids(&server), ["alice", "auth0|42", "eve"]);
}

#[tokio::test]
async fn operators_manage_accounts_with_the_cli_beside_a_running_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().to_path_buf();
    // A data directory with no store yet (one given wrong, say) is not quietly made a
    // new one: reading or changing accounts is refused, adding says it makes one.
    let (ok, _, err) = tengen(&path, &["user", "list"], "");
    assert!(!ok && err.contains("no game database"), "{err}");
    assert!(
        !path.join(tengen::server::DB_FILE).exists(),
        "nothing was made"
    );
    let (ok, out, err) = tengen(&path, &["user", "add", "Alice"], "");
    assert!(ok);
    assert!(err.contains("made now"), "{err}");
    let generated = out
        .trim()
        .strip_prefix("password: ")
        .expect("the generated password is printed once")
        .to_string();
    let (ok, _, err) = tengen(&path, &["user", "add", "ALICE"], "");
    assert!(!ok && err.contains("taken"), "{err}");
    // A reserved name is the operator's to give, a guest's never.
    assert!(tengen(&path, &["user", "add", "admin"], "").0);
    let (ok, _, err) = tengen(&path, &["user", "add", "Guest7"], "");
    assert!(!ok && err.contains("guests"), "{err}");
    let (ok, _, err) = tengen(
        &path,
        &["user", "add", "bob", "--password-stdin"],
        "password1\n",
    );
    assert!(!ok && err.contains("common"), "{err}");
    let (ok, out, _) = tengen(
        &path,
        &["user", "add", "bob", "--password-stdin", "--role", "bot"],
        "a fine long secret\n",
    );
    assert!(ok && out.is_empty(), "nothing printed: {out}");
    let (ok, _, _) = tengen(&path, &["user", "set-role", "bob", "referee"], "");
    assert!(ok);
    let (ok, _, err) = tengen(&path, &["user", "disable", "nobody"], "");
    assert!(!ok && err.contains("no user"), "{err}");
    let (ok, code, _) = tengen(&path, &["user", "invite", "--expires", "1h"], "");
    assert!(ok);
    let code = code.trim().to_string();
    assert_eq!(code.len(), 24, "{code}");

    let server = TestServer::start_in(dir, |c| c.auth.registration = Registration::Invite).await;
    let alice = login(&server, "alice", &generated).await;
    assert_eq!(alice.status, 200, "{}", alice.body);
    assert_eq!(
        alice.body["user"],
        json!({"id": "alice", "name": "Alice", "role": "player"})
    );
    assert_eq!(
        login(&server, "bob", "a fine long secret").await.body["user"]["role"],
        "referee"
    );
    let invited = post(
        &server,
        "/api/auth/register",
        json!({"username": "carol", "password": PASSWORD, "invite": code}),
    )
    .await;
    assert_eq!(invited.status, 201, "{}", invited.body);

    // While the server runs: disable, reset, list.
    let cookie = alice.refresh_cookie().unwrap();
    assert!(tengen(&path, &["user", "disable", "alice"], "").0);
    assert_eq!(
        login(&server, "alice", &generated).await.code(),
        "account_disabled"
    );
    assert_eq!(
        with_cookie(&server, "/api/auth/refresh", &cookie)
            .await
            .code(),
        "account_disabled"
    );
    assert!(tengen(&path, &["user", "enable", "alice"], "").0);
    assert_eq!(login(&server, "alice", &generated).await.status, 200);
    let (ok, _, _) = tengen(
        &path,
        &["user", "reset-password", "alice", "--password-stdin"],
        "brand new secret\n",
    );
    assert!(ok);
    assert_eq!(
        login(&server, "alice", &generated).await.code(),
        "invalid_credentials"
    );
    assert_eq!(
        login(&server, "alice", "brand new secret").await.status,
        200
    );
    let (ok, list, _) = tengen(&path, &["user", "list"], "");
    assert!(ok);
    assert_eq!(
        list.lines().collect::<Vec<_>>(),
        [
            "admin\tlocal\tplayer\tenabled\tadmin",
            "alice\tlocal\tplayer\tenabled\tAlice",
            "bob\tlocal\treferee\tenabled\tbob",
            "carol\tlocal\tplayer\tenabled\tcarol",
        ]
    );
    server.stop().await;
}

#[tokio::test]
async fn a_new_account_and_a_guest_have_profiles_before_their_first_game() {
    let server = TestServer::start().await;
    assert_eq!(register(&server, "Alice", PASSWORD).await.status, 201);
    let guest = send(&server, "/api/auth/guest", &[], b"").await;
    let guest_id = guest.body["user"]["id"].as_str().unwrap().to_string();
    // A username in another case finds the account, as at login.
    for (path_id, id, name) in [
        ("alice", "alice", "Alice"),
        ("ALICE", "alice", "Alice"),
        (guest_id.as_str(), guest_id.as_str(), guest_id.as_str()),
    ] {
        let (status, profile) = common::get_json(&server, &format!("/api/users/{path_id}")).await;
        assert_eq!(status, 200, "{profile}");
        assert_eq!(
            (&profile["id"], &profile["name"]),
            (&json!(id), &json!(name))
        );
        let pools: Vec<_> = profile["ratings"].as_array().unwrap().iter().collect();
        assert_eq!(pools.len(), 4, "{profile}");
        for (pool, want) in pools.iter().zip(["overall", "9x9", "13x13", "19x19"]) {
            assert_eq!(pool["pool"], want);
            assert_eq!(
                (pool["rating"].as_f64(), pool["games"].as_u64()),
                (Some(1500.0), Some(0))
            );
            assert_eq!(pool["rank"], "15k?");
            assert!(pool.get("last_game_at").is_none(), "{pool}");
        }
        assert_eq!(profile["history"], json!([]));
        assert_eq!(profile["escapes"], json!({"count": 0, "recent": []}));
    }
    // Nobody has played a rated game: an empty leaderboard.
    let (_, board) = common::get_json(&server, "/api/ratings").await;
    assert_eq!(board, json!({"pool": "overall", "players": []}));
}

#[tokio::test]
async fn an_eleventh_session_ends_the_oldest() {
    let server = TestServer::start().await;
    let first = register(&server, "alice", PASSWORD)
        .await
        .refresh_cookie()
        .unwrap();
    let mut cookies = Vec::new();
    for _ in 0..10 {
        cookies.push(
            login(&server, "alice", PASSWORD)
                .await
                .refresh_cookie()
                .unwrap(),
        );
    }
    let oldest = with_cookie(&server, "/api/auth/refresh", &first).await;
    assert_eq!((oldest.status, oldest.code()), (401, "invalid_refresh"));
    for cookie in &cookies {
        assert_eq!(
            with_cookie(&server, "/api/auth/refresh", cookie)
                .await
                .status,
            200
        );
    }
}

#[tokio::test]
async fn wrong_old_passwords_count_as_failed_logins() {
    let server = TestServer::start().await;
    let token = register(&server, "alice", PASSWORD).await.token();
    let bearer = format!("Bearer {token}");
    let body = json!({"old": "not the password", "new": "a new long secret"}).to_string();
    for i in 1..=6 {
        let reply = send(
            &server,
            "/api/auth/password",
            &[("Authorization", &bearer)],
            body.as_bytes(),
        )
        .await;
        assert_eq!(reply.code(), "invalid_credentials", "attempt {i}");
    }
    // The sixth failure started the account's delay, at login too.
    let held = login(&server, "alice", PASSWORD).await;
    assert_eq!(
        (held.status, held.code()),
        (429, "rate_limited"),
        "{}",
        held.body
    );
}

#[tokio::test]
async fn a_method_a_path_does_not_take_is_refused_with_a_json_405() {
    let server = TestServer::start().await;
    for path in ["/api/games", "/api/ratings", "/healthz"] {
        let reply = post(&server, path, json!({})).await;
        assert_eq!(reply.status, 405, "{path}");
        assert!(
            reply.body["error"].as_str().is_some(),
            "{path}: {}",
            reply.body
        );
    }
    let (status, body) = common::get_json(&server, "/api/auth/login").await;
    assert_eq!(status, 405);
    assert!(body["error"].as_str().is_some(), "{body}");
}

#[tokio::test]
async fn the_account_routes_refuse_forms_and_other_sites_pages() {
    let server = TestServer::start().await;
    assert_eq!(register(&server, "alice", PASSWORD).await.status, 201);
    let addr = server.server.as_ref().expect("running").addr();
    let credentials = json!({"username": "alice", "password": PASSWORD}).to_string();
    // A cross-site form post: text/plain (or a form encoding) and a foreign Origin.
    for (headers, status, code) in [
        (
            vec![("Content-Type", "text/plain")],
            415,
            "unsupported_media_type",
        ),
        (
            vec![("Content-Type", "application/x-www-form-urlencoded")],
            415,
            "unsupported_media_type",
        ),
        (
            vec![("Content-Type", "multipart/form-data; boundary=x")],
            415,
            "unsupported_media_type",
        ),
        (
            vec![
                ("Content-Type", "text/plain"),
                ("Origin", "http://evil.example"),
            ],
            403,
            "cross_origin",
        ),
        (vec![("Origin", "http://evil.example")], 403, "cross_origin"),
        (vec![("Origin", "null")], 403, "cross_origin"),
        (vec![("Sec-Fetch-Site", "cross-site")], 403, "cross_origin"),
        (vec![("Sec-Fetch-Site", "same-site")], 403, "cross_origin"),
    ] {
        let reply = send(&server, "/api/auth/login", &headers, credentials.as_bytes()).await;
        assert_eq!(
            (reply.status, reply.code()),
            (status, code),
            "{headers:?}: {}",
            reply.body
        );
        assert!(
            reply.header("set-cookie").is_none(),
            "{headers:?}: no session"
        );
    }
    // A register body shaped like a form post creates nothing.
    let form = b"username=mallory&password=correct+horse+battery";
    let reply = send(
        &server,
        "/api/auth/register",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        form,
    )
    .await;
    assert_eq!(
        (reply.status, reply.code()),
        (415, "unsupported_media_type")
    );
    let foreign = json!({"username": "mallory", "password": PASSWORD}).to_string();
    let reply = send(
        &server,
        "/api/auth/register",
        &[("Origin", "https://evil.example")],
        foreign.as_bytes(),
    )
    .await;
    assert_eq!((reply.status, reply.code()), (403, "cross_origin"));
    assert_eq!(user_ids(&server), ["alice"], "nothing was created");
    // Nor do the routes without a body answer another site's page.
    let cookie = login(&server, "alice", PASSWORD)
        .await
        .refresh_cookie()
        .unwrap();
    let jar = format!("tengen_refresh={cookie}");
    for route in ["/api/auth/refresh", "/api/auth/logout", "/api/auth/guest"] {
        let reply = send(
            &server,
            route,
            &[("Cookie", &jar), ("Origin", "http://evil.example")],
            b"",
        )
        .await;
        assert_eq!(
            (reply.status, reply.code()),
            (403, "cross_origin"),
            "{route}"
        );
    }
    assert_eq!(user_ids(&server), ["alice"], "no guest either");
    // This server's own page, and a program that names no origin, are answered; the
    // refresh cookie is `SameSite=Strict`.
    let own = format!("http://{addr}");
    let same = send(
        &server,
        "/api/auth/login",
        &[("Origin", &own), ("Sec-Fetch-Site", "same-origin")],
        credentials.as_bytes(),
    )
    .await;
    assert_eq!(same.status, 200, "{}", same.body);
    assert!(
        same.header("set-cookie")
            .unwrap()
            .contains("; SameSite=Strict;")
    );
    let rotated = send(
        &server,
        "/api/auth/refresh",
        &[("Cookie", &jar), ("Origin", &own)],
        b"",
    )
    .await;
    assert_eq!(
        rotated.status, 200,
        "the cookie was not used up by the refused refresh"
    );
    assert_eq!(login(&server, "alice", PASSWORD).await.status, 200);
}

#[tokio::test]
async fn with_a_public_url_only_its_origin_is_this_servers() {
    let server =
        TestServer::start_with(|c| c.auth.public_url = Some("https://go.example:443/play/".into()))
            .await;
    let addr = server.server.as_ref().expect("running").addr();
    let body = json!({"username": "alice", "password": PASSWORD}).to_string();
    let host = format!("http://{addr}");
    let reply = send(
        &server,
        "/api/auth/register",
        &[("Origin", &host)],
        body.as_bytes(),
    )
    .await;
    assert_eq!((reply.status, reply.code()), (403, "cross_origin"));
    for origin in ["https://go.example", "HTTPS://GO.EXAMPLE"] {
        let reply = send(
            &server,
            "/api/auth/login",
            &[("Origin", origin)],
            body.as_bytes(),
        )
        .await;
        assert_ne!(reply.code(), "cross_origin", "{origin}: {}", reply.body);
    }
    let reply = send(
        &server,
        "/api/auth/register",
        &[("Origin", "https://go.example")],
        body.as_bytes(),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
}

#[tokio::test]
async fn only_accounts_play_rated_games() {
    let server = TestServer::start().await;
    let alice = register(&server, "alice", PASSWORD).await.token();
    let mut alice = connect(&server, &alice).await;
    // A token of the server's own for a name with no account, and a dev login.
    let mut drifter = connect(&server, &server.token("drifter")).await;
    let dev = post(&server, "/api/dev-login", json!({"name": "carol"})).await;
    let dev = dev.body["token"].as_str().expect("a dev token").to_string();
    let mut carol = connect(&server, &dev).await;
    let rated = json!({"board_size": 9, "rated": true});
    for (who, client) in [("drifter", &mut drifter), ("carol", &mut carol)] {
        for msg in [
            json!({"type": "seek", "settings": rated}),
            json!({"type": "challenge", "opponent": "alice", "settings": rated}),
            json!({"type": "automatch", "sizes": [9], "speeds": ["live"], "rated": true}),
        ] {
            let error = client.refused(msg.clone(), "rated_not_allowed").await;
            let message = error["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("only accounts") && message.contains(who),
                "{msg}: {error}"
            );
        }
    }
    let seek = alice.ok(json!({"type": "seek", "settings": rated})).await;
    let seek_id = seek["challenge"]["challenge_id"]
        .as_str()
        .unwrap()
        .to_string();
    drifter
        .refused(
            json!({"type": "accept", "challenge_id": seek_id}),
            "rated_not_allowed",
        )
        .await;
    // The seek is still open, and unrated games are anyone's.
    let seeks = drifter.ok(json!({"type": "list_seeks"})).await;
    assert_eq!(
        seeks["challenges"].as_array().map(Vec::len),
        Some(1),
        "{seeks}"
    );
    drifter
        .ok(json!({"type": "seek", "settings": {"board_size": 9}}))
        .await;
    // An account accepts it.
    let bob = register(&server, "bob", PASSWORD).await.token();
    let mut bob = connect(&server, &bob).await;
    bob.ok(json!({"type": "accept", "challenge_id": seek_id}))
        .await;
}

#[tokio::test]
async fn disabling_an_account_ends_its_open_connections_and_withdraws_its_seeks() {
    let server = TestServer::start().await;
    let alice = register(&server, "alice", PASSWORD).await.token();
    let bob = register(&server, "bob", PASSWORD).await.token();
    let (mut first, mut second) = (
        connect(&server, &alice).await,
        connect(&server, &alice).await,
    );
    let mut bob = connect(&server, &bob).await;
    bob.ok(json!({"type": "watch_lobby"})).await;
    let seek = first
        .ok(json!({"type": "seek", "settings": {"board_size": 9, "rated": true}}))
        .await;
    let seek_id = seek["challenge"]["challenge_id"].clone();
    assert_eq!(
        bob.recv_type("challenge_added").await["challenge"]["challenge_id"],
        seek_id
    );
    second
        .ok(json!({"type": "automatch", "sizes": [19], "speeds": ["live"], "rated": true}))
        .await;
    // The operator disables alice from another process, beside the running server.
    let (ok, _, err) = tengen(server.dir.path(), &["user", "disable", "alice"], "");
    assert!(ok, "{err}");
    for ws in [&mut first, &mut second] {
        let told = ws.recv_type("error").await;
        assert_eq!(told["code"], "unauthorized", "{told}");
        assert_eq!(ws.closed().await, Some(4001));
    }
    let removed = bob.recv_type("challenge_removed").await;
    assert_eq!(removed["challenge_id"], seek_id, "{removed}");
    assert_eq!(
        bob.ok(json!({"type": "list_seeks"})).await["challenges"],
        json!([])
    );
    // Bob's automatch finds nobody waiting: alice's request went with her.
    bob.ok(json!({"type": "automatch", "sizes": [19], "speeds": ["live"], "rated": true}))
        .await;
    bob.ok(json!({"type": "ping"})).await;
    assert!(
        bob.pending().iter().all(|v| v["type"] != "game_started"),
        "{:?}",
        bob.pending()
    );
    // Her token, still unexpired, is refused.
    let mut again = connect(&server, &alice).await;
    assert_eq!(again.welcome["code"], "unauthorized", "{}", again.welcome);
    assert_eq!(again.closed().await, Some(4001));
}

#[tokio::test]
async fn a_role_change_ends_open_connections_and_old_tokens_carry_the_new_role() {
    let server = TestServer::start().await;
    let token = register(&server, "alice", PASSWORD).await.token();
    let mut ws = connect(&server, &token).await;
    assert_eq!(ws.welcome["user"]["role"], "player");
    let (ok, _, err) = tengen(
        server.dir.path(),
        &["user", "set-role", "alice", "referee"],
        "",
    );
    assert!(ok, "{err}");
    assert_eq!(ws.recv_type("error").await["code"], "unauthorized");
    assert_eq!(ws.closed().await, Some(4001));
    let back = connect(&server, &token).await;
    assert_eq!(back.welcome["user"]["role"], "referee", "{}", back.welcome);
    // And down again: the old token is no referee's any more.
    let (ok, _, err) = tengen(
        server.dir.path(),
        &["user", "set-role", "alice", "player"],
        "",
    );
    assert!(ok, "{err}");
    let mut back = back;
    assert_eq!(back.closed().await, Some(4001));
    let again = connect(&server, &token).await;
    assert_eq!(again.welcome["user"]["role"], "player", "{}", again.welcome);
}

/// An account registered before usernames were case-folded keeps its id (`straße`):
/// every spelling that folds to it logs in to it, and none registers beside it.
#[tokio::test]
async fn an_account_from_before_folding_is_found_by_every_spelling() {
    let server = TestServer::start().await;
    assert_eq!(register(&server, "oldtimer", PASSWORD).await.status, 201);
    let dir = server.stop().await;
    // What a server before folding stored for "Straße": its lower case.
    let db = rusqlite::Connection::open(dir.path().join(tengen::server::DB_FILE)).expect("db");
    // (Its refresh token, which names the old id, is left behind.)
    db.execute_batch(
        "PRAGMA foreign_keys = OFF; UPDATE users SET id = 'straße' WHERE id = 'oldtimer';",
    )
    .expect("renamed");
    drop(db);
    let server = TestServer::start_in(dir, |_| {}).await;
    for same in ["strasse", "STRASSE", "Straße"] {
        let reply = register(&server, same, PASSWORD).await;
        assert_eq!(
            (reply.status, reply.code()),
            (409, "username_taken"),
            "{same}"
        );
        let reply = login(&server, same, PASSWORD).await;
        assert_eq!(reply.status, 200, "{same}: {}", reply.body);
        assert_eq!(reply.body["user"]["id"], "straße", "{same}");
    }
    assert_eq!(user_ids(&server), ["straße"]);
}

#[tokio::test]
async fn names_fold_fully_hold_one_script_and_show_something() {
    let server = TestServer::start().await;
    let istanbul = register(&server, "İstanbul", PASSWORD).await;
    assert_eq!(istanbul.status, 201, "{}", istanbul.body);
    assert_eq!(istanbul.body["user"]["id"], "i\u{307}stanbul");
    assert_eq!(login(&server, "İSTANBUL", PASSWORD).await.status, 200);
    assert_eq!(register(&server, "Straße", PASSWORD).await.status, 201);
    for same in ["STRASSE", "strasse", "STRAẞE"] {
        let reply = register(&server, same, PASSWORD).await;
        assert_eq!(
            (reply.status, reply.code()),
            (409, "username_taken"),
            "{same}"
        );
    }
    assert_eq!(login(&server, "STRASSE", PASSWORD).await.status, 200);
    for mixed in ["p\u{430}ypal", "\u{430}lice"] {
        let reply = register(&server, mixed, PASSWORD).await;
        assert_eq!(
            (reply.status, reply.code()),
            (400, "invalid_username"),
            "{mixed:?}"
        );
    }
    for shown in [
        "\u{200b}",
        "\u{200b}\u{2060}\u{feff}",
        " \u{3164} ",
        "evil\u{202e}gnp.exe",
        "Bob\u{2066}",
        "P\u{430}ypal Support",
    ] {
        let reply = post(
            &server,
            "/api/auth/register",
            json!({"username": "shown", "password": PASSWORD, "display_name": shown}),
        )
        .await;
        assert_eq!(
            (reply.status, reply.code()),
            (400, "invalid_display_name"),
            "{shown:?}: {}",
            reply.body
        );
    }
    let fine = post(
        &server,
        "/api/auth/register",
        json!({"username": "lee", "password": PASSWORD, "display_name": "Lee Sedol 이세돌"}),
    )
    .await;
    assert_eq!(fine.status, 201, "{}", fine.body);
    assert_eq!(user_ids(&server), ["i\u{307}stanbul", "lee", "strasse"]);
}
