//! Web Push through the real server (client-protocol/notifications.md#web-push): the
//! test is the push service, a loopback HTTP server, and the browser, holding the keys a
//! subscription names. A challenge to a subscribed player arrives at the endpoint with a
//! VAPID token that verifies with the server's public key for the endpoint's origin, and
//! a body the test decrypts (RFC 8291) into the notice's JSON; a kind turned off is not
//! pushed; a 410 from the service makes the server forget the subscription; a newer
//! notice about the same game has the older one's `Topic`, so the service replaces it;
//! an account the operator disables is pushed nothing more; bad subscriptions are
//! refused with their codes.

mod common;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU16, Ordering};

use aes_gcm::aead::Aead;
use aes_gcm::{Aes128Gcm, KeyInit};
use base64ct::{Base64UrlUnpadded, Encoding};
use bytes::Bytes;
use common::{TestServer, WAIT, http_json};
use hkdf::Hkdf;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use p256::{PublicKey, SecretKey};
use serde_json::{Value, json};
use sha2::Sha256;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// One request the push service took.
struct Pushed {
    path: String,
    headers: hyper::HeaderMap,
    body: Vec<u8>,
}

/// A push service on loopback: every request is handed to the test, and answered with
/// the status the test sets (201 to begin with).
struct PushService {
    addr: SocketAddr,
    status: Arc<AtomicU16>,
    taken: mpsc::UnboundedReceiver<Pushed>,
}

impl PushService {
    async fn start() -> PushService {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let addr = listener.local_addr().expect("an address");
        let status = Arc::new(AtomicU16::new(201));
        let (tx, taken) = mpsc::unbounded_channel();
        let answer = status.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (tx, answer) = (tx.clone(), answer.clone());
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let (tx, answer) = (tx.clone(), answer.clone());
                    async move {
                        let (head, body) = req.into_parts();
                        let body = body.collect().await.map(|b| b.to_bytes().to_vec());
                        let _ = tx.send(Pushed {
                            path: head.uri.path().to_string(),
                            headers: head.headers,
                            body: body.unwrap_or_default(),
                        });
                        let status = StatusCode::from_u16(answer.load(Ordering::SeqCst))
                            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                        let mut res = Response::new(Full::new(Bytes::new()));
                        *res.status_mut() = status;
                        Ok::<_, Infallible>(res)
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service),
                );
            }
        });
        PushService {
            addr,
            status,
            taken,
        }
    }

    async fn next(&mut self) -> Pushed {
        tokio::time::timeout(WAIT, self.taken.recv())
            .await
            .expect("a push within the wait")
            .expect("the service runs")
    }
}

/// A browser's side of a subscription: its key pair and auth secret.
struct Browser {
    secret: SecretKey,
    auth: [u8; 16],
}

impl Browser {
    fn new() -> Browser {
        let secret = loop {
            if let Ok(key) = SecretKey::from_slice(&rand::random::<[u8; 32]>()) {
                break key;
            }
        };
        Browser {
            secret,
            auth: rand::random(),
        }
    }

    fn subscription(&self, endpoint: &str) -> Value {
        json!({
            "endpoint": endpoint,
            "expirationTime": null,
            "keys": {
                "p256dh": Base64UrlUnpadded::encode_string(&self.secret.public_key().to_sec1_bytes()),
                "auth": Base64UrlUnpadded::encode_string(&self.auth),
            },
        })
    }

    /// Decrypts an aes128gcm body (RFC 8188) of one record, as RFC 8291 says a browser
    /// does: the plaintext without its delimiter.
    fn decrypt(&self, body: &[u8]) -> Vec<u8> {
        let (salt, rest) = body.split_at(16);
        let record_size = u32::from_be_bytes(rest[..4].try_into().expect("4 bytes"));
        assert_eq!(record_size, 4096);
        let id_len = usize::from(rest[4]);
        assert_eq!(id_len, 65, "the key id is the sender's public key");
        let sender = PublicKey::from_sec1_bytes(&rest[5..5 + id_len]).expect("a P-256 key");
        let sealed = &rest[5 + id_len..];
        let shared = self.secret.diffie_hellman(&sender);
        let ua_public = self.secret.public_key().to_sec1_bytes();
        let mut info = b"WebPush: info\0".to_vec();
        info.extend_from_slice(&ua_public);
        info.extend_from_slice(&sender.to_sec1_bytes());
        let mut ikm = [0u8; 32];
        Hkdf::<Sha256>::new(Some(&self.auth), shared.raw_secret_bytes())
            .expand(&info, &mut ikm)
            .expect("32 bytes");
        let prk = Hkdf::<Sha256>::new(Some(salt), &ikm);
        let mut cek = [0u8; 16];
        prk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
            .expect("16 bytes");
        let mut nonce = [0u8; 12];
        prk.expand(b"Content-Encoding: nonce\0", &mut nonce)
            .expect("12 bytes");
        let mut plain = Aes128Gcm::new_from_slice(&cek)
            .expect("a key")
            .decrypt(&nonce.into(), sealed)
            .expect("the body decrypts with the browser's keys");
        while plain.last() == Some(&0) {
            plain.pop();
        }
        assert_eq!(plain.pop(), Some(2), "the last record's delimiter");
        plain
    }
}

#[derive(serde::Deserialize)]
struct Claims {
    aud: String,
    exp: u64,
    sub: String,
}

/// Checks the VAPID `Authorization` of a push to `origin` against the server's `key`.
fn check_vapid(pushed: &Pushed, key: &str, origin: &str) {
    let header = pushed.headers["authorization"].to_str().expect("text");
    let (token, k) = header
        .strip_prefix("vapid t=")
        .and_then(|rest| rest.split_once(", k="))
        .expect("vapid t=…, k=…");
    assert_eq!(k, key, "the key the server published");
    let point = Base64UrlUnpadded::decode_vec(key).expect("base64url");
    let mut check = Validation::new(Algorithm::ES256);
    check.set_audience(&[origin]);
    check.set_required_spec_claims(&["exp", "aud", "sub"]);
    let claims = jsonwebtoken::decode::<Claims>(token, &DecodingKey::from_ec_der(&point), &check)
        .expect("the token verifies with the server's public key")
        .claims;
    assert_eq!(claims.aud, origin);
    assert_eq!(claims.sub, "mailto:ops@example.org");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    assert!(
        claims.exp > now && claims.exp <= now + 24 * 3600,
        "exp {} is not within 24 hours of {now}",
        claims.exp
    );
}

async fn push_server() -> (TestServer, String) {
    let (private, public) = tengen::notify::push::vapid::new_key_pair();
    let server = TestServer::start_with(|c| {
        c.push.private_key = Some(private);
        c.push.subject = "mailto:ops@example.org".into();
        c.push.allow_http = true;
        c.push.max_subscriptions = 2;
        c.push.concurrency = 1;
    })
    .await;
    (server, public)
}

/// A push's `Topic` (RFC 8030 §5.4), checked to be at most 32 characters of base64url.
fn topic(pushed: &Pushed) -> String {
    let topic = pushed.headers["topic"].to_str().expect("text").to_string();
    let url_safe = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    assert!(
        (1..=32).contains(&topic.len()) && topic.chars().all(url_safe),
        "{topic:?} is no topic"
    );
    topic
}

/// Subscribes `who`'s browser at an endpoint of `service`.
async fn subscribe(server: &TestServer, service: &PushService, who: &str) -> Browser {
    let browser = Browser::new();
    let endpoint = format!("http://{}/wpush/{who}", service.addr);
    let (status, _) = http_json(
        server,
        "POST",
        "/api/push/subscriptions",
        Some(&server.token(who)),
        Some(browser.subscription(&endpoint)),
    )
    .await;
    assert_eq!(status, 204);
    browser
}

/// The next push, its `Topic` and `Urgency`, and the message the browser reads.
async fn next_message(service: &mut PushService, browser: &Browser) -> (String, String, Value) {
    let pushed = service.next().await;
    let message = serde_json::from_slice(&browser.decrypt(&pushed.body)).expect("JSON inside");
    let urgency = pushed.headers["urgency"]
        .to_str()
        .expect("text")
        .to_string();
    (topic(&pushed), urgency, message)
}

/// Alice challenges bob; the challenge's id.
async fn challenge(alice: &mut common::Client) -> String {
    let made = alice
        .ok(json!({"type": "challenge", "opponent": "bob", "settings": {"board_size": 9}}))
        .await;
    made["challenge"]["challenge_id"]
        .as_str()
        .expect("an id")
        .to_string()
}

#[tokio::test]
async fn a_notice_reaches_the_browser_encrypted_and_signed_and_a_gone_one_is_forgotten() {
    let mut service = PushService::start().await;
    let (server, public) = push_server().await;
    let (status, key) = http_json(&server, "GET", "/api/push/key", None, None).await;
    assert_eq!((status, key["key"].as_str()), (200, Some(public.as_str())));

    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let bob_token = server.token("bob");
    let browser = Browser::new();
    let origin = format!("http://{}", service.addr);
    let endpoint = format!("{origin}/wpush/bob-s-browser-secret");
    let (status, _) = http_json(
        &server,
        "POST",
        "/api/push/subscriptions",
        Some(&bob_token),
        Some(browser.subscription(&endpoint)),
    )
    .await;
    assert_eq!(status, 204);
    let settings = bob.ok(json!({"type": "get_notification_settings"})).await;
    assert_eq!(settings["settings"]["push"], true);
    assert_eq!(
        settings["settings"]["push_kinds"]["challenge_received"],
        true
    );

    let challenge_id = challenge(&mut alice).await;
    let pushed = service.next().await;
    assert_eq!(pushed.path, "/wpush/bob-s-browser-secret");
    assert_eq!(pushed.headers["content-encoding"], "aes128gcm");
    assert_eq!(pushed.headers["ttl"], "86400");
    assert_eq!(pushed.headers["urgency"], "normal");
    topic(&pushed);
    check_vapid(&pushed, &public, &origin);
    let message: Value =
        serde_json::from_slice(&browser.decrypt(&pushed.body)).expect("JSON inside");
    assert_eq!(message["kind"], "challenge_received", "{message}");
    assert_eq!(message["title"], "Challenge");
    assert_eq!(message["url"], "/#/");
    assert!(
        message["body"].as_str().expect("text").contains("alice"),
        "{message}"
    );
    let listed = bob.ok(json!({"type": "list_notices"})).await;
    assert_eq!(
        listed["notices"][0]["payload"]["challenge_id"],
        challenge_id
    );
    assert_eq!(listed["notices"][0]["notice_id"], message["notice_id"]);

    // Challenges turned off for push: the next push bob gets is the game's end.
    bob.ok(json!({"type": "set_notification_settings",
        "push_kinds": {"challenge_received": false}}))
        .await;
    alice
        .ok(json!({"type": "cancel", "challenge_id": challenge_id}))
        .await;
    let quiet = challenge(&mut alice).await;
    alice
        .ok(json!({"type": "cancel", "challenge_id": quiet}))
        .await;
    let game = common::start_game(
        &mut alice,
        &mut bob,
        json!({"board_size": 9, "color": "black"}),
    )
    .await;
    alice.ok(json!({"type": "resign", "game_id": game})).await;
    let ended: Value =
        serde_json::from_slice(&browser.decrypt(&service.next().await.body)).expect("JSON inside");
    assert_eq!(ended["kind"], "game_ended", "{ended}");
    assert_eq!(ended["url"], format!("/#/game/{game}"));

    // The service says the subscription is gone: the server forgets it.
    service.status.store(410, Ordering::SeqCst);
    bob.ok(json!({"type": "set_notification_settings",
        "push_kinds": {"challenge_received": true}}))
        .await;
    challenge(&mut alice).await;
    service.next().await;
    let store = server.store();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let store = store.clone();
        let left = tokio::task::spawn_blocking(move || store.push_subscriptions("bob"))
            .await
            .expect("the store call")
            .expect("read");
        if left.is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the gone subscription is still kept"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_newer_notice_about_the_same_game_has_the_older_ones_topic() {
    let mut service = PushService::start().await;
    let (server, _) = push_server().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let browser = subscribe(&server, &service, "bob").await;
    let untimed = json!({"board_size": 9, "color": "black"});
    let first = common::start_game(&mut alice, &mut bob, untimed.clone()).await;
    bob.ok(json!({"type": "leave", "game_id": first})).await;

    // Two moves of alice's while bob is away from the board: one topic.
    common::play(&mut alice, &first, 1, "E5").await;
    let (moved, urgency, message) = next_message(&mut service, &browser).await;
    assert_eq!(
        (message["kind"].as_str(), urgency.as_str()),
        (Some("your_move"), "normal")
    );
    assert_eq!(message["url"], format!("/#/game/{first}"));
    let first_notice = message["notice_id"].clone();
    bob.ok(json!({"type": "join", "game_id": first})).await;
    common::play(&mut bob, &first, 2, "C3").await;
    bob.ok(json!({"type": "leave", "game_id": first})).await;
    common::play(&mut alice, &first, 3, "G7").await;
    let (again, _, message) = next_message(&mut service, &browser).await;
    assert_eq!(message["kind"], "your_move");
    assert_ne!(message["notice_id"], first_notice, "a notice of its own");
    assert_eq!(again, moved, "the same game's next move replaces the last");

    // Another game's move, and the first game's end, are topics of their own.
    let second = common::start_game(&mut alice, &mut bob, untimed).await;
    bob.ok(json!({"type": "leave", "game_id": second})).await;
    common::play(&mut alice, &second, 1, "E5").await;
    let (other, _, message) = next_message(&mut service, &browser).await;
    assert_eq!(message["url"], format!("/#/game/{second}"));
    assert_ne!(other, moved);
    alice.ok(json!({"type": "resign", "game_id": first})).await;
    let (ended, urgency, message) = next_message(&mut service, &browser).await;
    assert_eq!(
        (message["kind"].as_str(), urgency.as_str()),
        (Some("game_ended"), "low")
    );
    assert_eq!(message["url"], format!("/#/game/{first}"));
    assert!(ended != moved && ended != other, "{ended}");
}

/// `who`'s push subscriptions as the store holds them.
async fn kept_subscriptions(server: &TestServer, who: &str) -> usize {
    let (store, who) = (server.store(), who.to_string());
    tokio::task::spawn_blocking(move || store.push_subscriptions(&who))
        .await
        .expect("the store call")
        .expect("read")
        .len()
}

#[tokio::test]
async fn a_disabled_account_is_pushed_nothing_more() {
    use tengen::protocol::{NoticeKind, NoticePayload};
    let mut service = PushService::start().await;
    let (server, _) = push_server().await;
    server.account("bob").await;
    server.account("carol").await;
    subscribe(&server, &service, "bob").await;
    let carols = subscribe(&server, &service, "carol").await;
    assert_eq!(kept_subscriptions(&server, "bob").await, 1);

    // The operator disables bob from another process, beside the running server.
    let (ok, _, err) = common::tengen(server.dir.path(), &["user", "disable", "bob"], "");
    assert!(ok, "{err}");
    assert_eq!(kept_subscriptions(&server, "bob").await, 0);

    // A notice for bob, then one for carol, through the service every source calls. One
    // account is pushed to at a time (`push.concurrency` 1), in the order queued: when
    // carol's arrives, bob's turn has passed, and it sent nothing.
    let notices = &server.server.as_ref().expect("running").hub().notices;
    let payload = |game: &str| NoticePayload {
        game_id: Some(game.into()),
        ..NoticePayload::default()
    };
    let kept = notices
        .notify_now("bob", NoticeKind::YourMove, payload("g-bob"))
        .await
        .expect("kept");
    assert_eq!(
        kept.kind,
        NoticeKind::YourMove,
        "bob's notice is still kept"
    );
    notices
        .notify_now("carol", NoticeKind::YourMove, payload("g-carol"))
        .await
        .expect("kept");
    let pushed = service.next().await;
    assert_eq!(pushed.path, "/wpush/carol", "bob was pushed to");
    let message: Value = serde_json::from_slice(&carols.decrypt(&pushed.body)).expect("JSON");
    assert_eq!(message["url"], "/#/game/g-carol");
    assert!(service.taken.try_recv().is_err(), "nothing else was pushed");

    // Disabled, bob cannot subscribe again.
    let again = Browser::new().subscription(&format!("http://{}/wpush/bob-2", service.addr));
    let (status, reply) = http_json(
        &server,
        "POST",
        "/api/push/subscriptions",
        Some(&server.token("bob")),
        Some(again),
    )
    .await;
    assert_eq!(
        (status, reply["code"].as_str()),
        (401, Some("unauthorized"))
    );
    assert_eq!(kept_subscriptions(&server, "bob").await, 0);
}

#[tokio::test]
async fn bad_subscriptions_are_refused_with_their_codes_and_one_can_be_removed() {
    let service = PushService::start().await;
    let (server, _) = push_server().await;
    server.account("carol").await;
    let token = server.token("carol");
    let browser = Browser::new();
    let endpoint = format!("http://{}/wpush/carol", service.addr);
    let good = browser.subscription(&endpoint);
    let with = |f: &dyn Fn(&mut Value)| {
        let mut sub = good.clone();
        f(&mut sub);
        sub
    };
    let cases: Vec<(Value, u16, &str)> = vec![
        (
            with(&|s| s["endpoint"] = json!("ftp://push.example.net/x")),
            400,
            "invalid_subscription",
        ),
        (
            with(&|s| {
                s["endpoint"] = json!(format!("https://push.example.net/{}", "a".repeat(1100)))
            }),
            400,
            "invalid_subscription",
        ),
        (
            with(&|s| s["keys"]["p256dh"] = json!("BCVxsr7N")),
            400,
            "invalid_subscription",
        ),
        (
            with(&|s| s["keys"]["auth"] = json!("AAAA")),
            400,
            "invalid_subscription",
        ),
        (
            with(&|s| s["expirationTime"] = json!(1000)),
            400,
            "invalid_subscription",
        ),
        (
            with(&|s| s["keys"] = json!({"p256dh": "x"})),
            400,
            "bad_request",
        ),
        (json!(["not", "an", "object"]), 400, "bad_request"),
    ];
    for (body, status, code) in cases {
        let (got, reply) = http_json(
            &server,
            "POST",
            "/api/push/subscriptions",
            Some(&token),
            Some(body.clone()),
        )
        .await;
        assert_eq!(
            (got, reply["code"].as_str()),
            (status, Some(code)),
            "{body}"
        );
    }
    let (status, reply) = http_json(
        &server,
        "POST",
        "/api/push/subscriptions",
        None,
        Some(good.clone()),
    )
    .await;
    assert_eq!(
        (status, reply["code"].as_str()),
        (401, Some("unauthorized"))
    );

    // Two browsers at most; the same endpoint again replaces, a third is refused.
    for n in 0..2 {
        let sub = with(&|s| s["endpoint"] = json!(format!("{endpoint}/{n}")));
        for _ in 0..2 {
            let (status, _) = http_json(
                &server,
                "POST",
                "/api/push/subscriptions",
                Some(&token),
                Some(sub.clone()),
            )
            .await;
            assert_eq!(status, 204);
        }
    }
    let (status, reply) = http_json(
        &server,
        "POST",
        "/api/push/subscriptions",
        Some(&token),
        Some(good.clone()),
    )
    .await;
    assert_eq!(
        (status, reply["code"].as_str()),
        (409, Some("limit_reached"))
    );

    let gone = json!({"endpoint": format!("{endpoint}/0")});
    let (status, _) = http_json(
        &server,
        "DELETE",
        "/api/push/subscriptions",
        Some(&token),
        Some(gone.clone()),
    )
    .await;
    assert_eq!(status, 204);
    let (status, reply) = http_json(
        &server,
        "DELETE",
        "/api/push/subscriptions",
        Some(&token),
        Some(gone),
    )
    .await;
    assert_eq!((status, reply["code"].as_str()), (404, Some("not_found")));
    let (status, _) = http_json(
        &server,
        "POST",
        "/api/push/subscriptions",
        Some(&token),
        Some(good),
    )
    .await;
    assert_eq!(status, 204, "room again after one was removed");
}

#[tokio::test]
async fn a_server_without_push_says_so() {
    let server = TestServer::start().await;
    let (status, reply) = http_json(&server, "GET", "/api/push/key", None, None).await;
    assert_eq!((status, reply["code"].as_str()), (404, Some("not_found")));
    let mut alice = server.login("alice").await;
    let settings = alice.ok(json!({"type": "get_notification_settings"})).await;
    assert_eq!(settings["settings"]["push"], false);
    let body = Browser::new().subscription("https://push.example.net/x");
    let (status, reply) = http_json(
        &server,
        "POST",
        "/api/push/subscriptions",
        Some(&server.token("alice")),
        Some(body),
    )
    .await;
    assert_eq!((status, reply["code"].as_str()), (404, Some("not_found")));
}
