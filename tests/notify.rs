//! Notices through the real server (client-protocol/notifications.md): a game's end and a
//! challenge reach the player live over the WebSocket and are kept for the next
//! connection; "your move" reaches a player away from a slow game; and mail goes through
//! a real SMTP server on loopback (aiosmtpd, `tests/notify/smtp_sink.py`): the address is
//! verified by its link, a deadline (through `Notices::notify_now`, the service's API)
//! is mailed at once, the digest carries the notices with a working one-click
//! unsubscribe link, and an address that does not parse is refused with its code.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{Client, TestServer, WAIT, http_text, start_game};
use serde_json::{Value, json};
use tengen::config::{Config, MailTls};
use tengen::protocol::{NoticeKind, NoticePayload};

/// The next `notice` pushed to `c`, of `kind`.
async fn notice(c: &mut Client, kind: &str) -> Value {
    loop {
        let n = c.recv_type("notice").await;
        if n["notice"]["kind"] == kind {
            return n;
        }
    }
}

/// A game between `alice` (Black) and `bob` that alice resigns: its id.
async fn resigned_game(alice: &mut Client, bob: &mut Client) -> String {
    let game = start_game(alice, bob, json!({"board_size": 9, "color": "black"})).await;
    alice.ok(json!({"type": "resign", "game_id": game})).await;
    game
}

#[tokio::test]
async fn a_game_end_reaches_both_players_live_and_on_their_next_visit() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let game = resigned_game(&mut alice, &mut bob).await;

    for (c, opponent) in [(&mut alice, "bob"), (&mut bob, "alice")] {
        let pushed = notice(c, "game_ended").await;
        assert_eq!(pushed["notice"]["payload"]["game_id"], game, "{pushed}");
        assert_eq!(pushed["notice"]["payload"]["opponent"]["id"], opponent);
        assert_eq!(pushed["notice"]["payload"]["result"], "W+R");
        assert_eq!(pushed["notice"]["read"], false);
        assert_eq!(pushed["unread"], 1);
    }

    // Bob comes back on a fresh connection: the notice is kept, unread.
    bob.close().await;
    let mut bob = server.login("bob").await;
    let listed = bob.ok(json!({"type": "list_notices"})).await;
    assert_eq!(listed["type"], "notices");
    assert_eq!(listed["unread"], 1);
    let notices = listed["notices"].as_array().expect("a list");
    assert_eq!(notices.len(), 1, "{listed}");
    assert_eq!(notices[0]["kind"], "game_ended");
    assert_eq!(notices[0]["payload"]["game_id"], game);
    let id = notices[0]["notice_id"].as_u64().expect("an id");

    // Marking it read tells every connection of bob's how many remain.
    let mut bob_elsewhere = server.login("bob").await;
    bob.ok(json!({"type": "mark_notices_read", "up_to": id}))
        .await;
    for c in [&mut bob, &mut bob_elsewhere] {
        assert_eq!(c.recv_type("unread_notices").await["unread"], 0);
    }
    let listed = bob.ok(json!({"type": "list_notices"})).await;
    assert_eq!(listed["unread"], 0);
    assert_eq!(listed["notices"][0]["read"], true);
    // Alice's own notice is untouched by bob's reading.
    let alices = alice.ok(json!({"type": "list_notices"})).await;
    assert_eq!(alices["unread"], 1);
}

#[tokio::test]
async fn notices_page_from_newest_and_only_the_newest_are_kept() {
    let server = TestServer::start_with(|c| c.notify.keep_per_account = 3).await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    // Five challenges to bob, each withdrawn so alice stays under her limit of seeks.
    let mut challenges = Vec::new();
    for _ in 0..5 {
        let made = alice
            .ok(json!({"type": "challenge", "opponent": "bob", "settings": {"board_size": 9}}))
            .await;
        let id = made["challenge"]["challenge_id"]
            .as_str()
            .unwrap()
            .to_string();
        let pushed = notice(&mut bob, "challenge_received").await;
        assert_eq!(pushed["notice"]["payload"]["challenge_id"], id.as_str());
        assert_eq!(pushed["notice"]["payload"]["opponent"]["id"], "alice");
        alice
            .ok(json!({"type": "cancel", "challenge_id": id}))
            .await;
        challenges.push(id);
    }
    let page = bob.ok(json!({"type": "list_notices", "limit": 2})).await;
    let ids = |page: &Value| -> Vec<String> {
        page["notices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["payload"]["challenge_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&page), [challenges[4].clone(), challenges[3].clone()]);
    assert_eq!(page["unread"], 3, "only the newest 3 are kept");
    let next = page["next"].as_u64().expect("a next page");
    let rest = bob
        .ok(json!({"type": "list_notices", "limit": 2, "before": next}))
        .await;
    assert_eq!(ids(&rest), [challenges[2].clone()]);
    assert!(rest.get("next").is_none(), "{rest}");
    bob.refused(json!({"type": "list_notices", "limit": 0}), "bad_request")
        .await;
    bob.refused(json!({"type": "list_notices", "limit": 101}), "bad_request")
        .await;
    let anonymous = &mut server.anonymous().await;
    anonymous
        .refused(json!({"type": "list_notices"}), "unauthorized")
        .await;
}

#[tokio::test]
async fn your_move_reaches_a_player_away_from_a_slow_game() {
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let slow = json!({"board_size": 9, "color": "black",
        "clock": {"system": "simple", "per_move_ms": 3_600_000}});
    let game = start_game(&mut alice, &mut bob, slow).await;
    // Bob stays online but leaves the game's board.
    bob.ok(json!({"type": "leave", "game_id": game})).await;
    common::play(&mut alice, &game, 1, "E5").await;
    let pushed = notice(&mut bob, "your_move").await;
    assert_eq!(pushed["notice"]["payload"]["game_id"], game);
    assert_eq!(pushed["notice"]["payload"]["opponent"]["id"], "alice");
}

/// aiosmtpd on a port of the kernel's choosing, writing each mail it takes to a folder.
struct SmtpSink {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl SmtpSink {
    fn start() -> SmtpSink {
        let dir = tempfile::tempdir().expect("temp dir");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/notify/smtp_sink.py");
        // Debian's python3-aiosmtpd (tests/run installs it) is the system Python's.
        let python = ["/usr/bin/python3", "python3"]
            .into_iter()
            .find(|p| !p.starts_with('/') || Path::new(p).exists())
            .expect("a python");
        let mut child = Command::new(python)
            .arg(&script)
            .arg(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the SMTP sink starts (python3 with aiosmtpd)");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("its stdout");
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line)
            .expect("the sink says its port");
        let port = line.trim().parse().expect("a port number");
        SmtpSink { child, port, dir }
    }

    /// Every mail taken so far, in order, once there are at least `n` (bounded by WAIT).
    async fn mails(&self, n: usize) -> Vec<Mail> {
        let deadline = tokio::time::Instant::now() + WAIT * 2;
        loop {
            let found: Vec<PathBuf> = (1..)
                .map(|i| self.dir.path().join(format!("{i}.eml")))
                .take_while(|p| p.exists())
                .collect();
            if found.len() >= n {
                return found.iter().map(|p| Mail::read(p)).collect();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{n} mails did not arrive; {} did",
                found.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A received mail: its head, and its body with line folds and quoted-printable undone.
struct Mail {
    head: String,
    body: String,
}

impl Mail {
    fn read(path: &Path) -> Mail {
        let raw = std::fs::read_to_string(path).expect("a mail");
        let (head, body) = raw.split_once("\r\n\r\n").expect("a head and a body");
        let head = head.replace("\r\n ", " ").replace("\r\n\t", " ");
        let body = match header(&head, "Content-Transfer-Encoding").as_deref() {
            Some("quoted-printable") => unquote(body),
            _ => body.to_string(),
        };
        Mail {
            head: head.to_string(),
            body: body.replace("\r\n", "\n"),
        }
    }

    fn header(&self, name: &str) -> Option<String> {
        header(&self.head, name)
    }

    /// The first link in the body that starts with `prefix`.
    fn link(&self, prefix: &str) -> String {
        let start = self.body.find(prefix).unwrap_or_else(|| {
            panic!("no link {prefix} in: {}", self.body);
        });
        self.body[start..]
            .split_whitespace()
            .next()
            .expect("a link")
            .to_string()
    }
}

fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
    })
}

/// Quoted-printable (RFC 2045 §6.7) undone: soft breaks joined, `=XX` decoded.
fn unquote(text: &str) -> String {
    let joined = text.replace("=\r\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'='
            && let Some(hex) = joined.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).expect("UTF-8")
}

/// The path and query of a link to the server.
fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").expect("a URL").1;
    &rest[rest.find('/').expect("a path")..]
}

fn with_mail(sink: &SmtpSink) -> impl FnOnce(&mut Config) + use<> {
    let port = sink.port;
    move |c: &mut Config| {
        c.mail.enabled = true;
        c.mail.host = "127.0.0.1".into();
        c.mail.port = port;
        c.mail.tls = MailTls::None;
        c.mail.from = "tengen <notices@tengen.test>".into();
        c.mail.sweep_secs = 1;
    }
}

#[tokio::test]
async fn the_digest_is_mailed_with_a_working_unsubscribe_link() {
    let sink = SmtpSink::start();
    let server = TestServer::start_with(with_mail(&sink)).await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;

    // An address that does not parse is refused, and nothing changes.
    let bad = json!({"type": "set_notification_settings", "address": "bob at example"});
    bob.refused(bad, "invalid_address").await;
    let (status, body) = http_text(
        &server,
        "PUT",
        "/api/notifications",
        Some(&server.token("bob")),
        r#"{"address": "<bob@example.org"}"#,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["code"],
        "invalid_address"
    );
    let settings = bob.ok(json!({"type": "get_notification_settings"})).await;
    assert!(settings["settings"].get("address").is_none(), "{settings}");
    assert_eq!(settings["settings"]["mail"], true);
    assert_eq!(settings["settings"]["modes"]["game_ended"], "digest");

    // A new address is unverified until its link is followed.
    let set = json!({"type": "set_notification_settings", "address": "bob@example.org"});
    let settings = bob.ok(set).await;
    assert_eq!(settings["settings"]["address"], "bob@example.org");
    assert_eq!(settings["settings"]["verified"], false);
    let verify = &sink.mails(1).await[0];
    assert_eq!(
        verify.header("X-Rcpt-To").as_deref(),
        Some("bob@example.org")
    );
    let link = verify.link("http://");
    let (status, text) = http_text(&server, "GET", path_of(&link), None, "").await;
    assert_eq!(status, 200, "{text}");
    let (status, body) = http_text(
        &server,
        "GET",
        "/api/notifications",
        Some(&server.token("bob")),
        "",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["verified"],
        true
    );

    // A deadline, as the correspondence clocks report one through the service's API,
    // is mailed at once in a mail of its own.
    let notices = server
        .server
        .as_ref()
        .expect("running")
        .hub()
        .notices
        .clone();
    let deadline = NoticePayload {
        game_id: Some("g1".into()),
        deadline: Some(1_796_040_910_000),
        ..NoticePayload::default()
    };
    let kept = notices
        .notify_now("bob", NoticeKind::Deadline, deadline)
        .await
        .expect("kept");
    assert_eq!(
        notice(&mut bob, "deadline").await["notice"]["notice_id"],
        kept.notice_id
    );
    let immediate = &sink.mails(2).await[1];
    assert_eq!(
        immediate.header("Subject").as_deref(),
        Some("Your time runs out soon in game g1")
    );
    assert!(immediate.header("List-Unsubscribe").is_some());

    // A game ends: bob's notice waits for the digest, which the next sweep mails.
    let game = resigned_game(&mut alice, &mut bob).await;
    notice(&mut bob, "game_ended").await;
    let digest = &sink.mails(3).await[2];
    assert_eq!(
        digest.header("X-Rcpt-To").as_deref(),
        Some("bob@example.org")
    );
    assert!(
        digest
            .body
            .contains(&format!("Game {game} against alice ended: W+R")),
        "{}",
        digest.body
    );
    let message_id = digest.header("Message-ID").expect("a Message-ID");
    assert!(message_id.ends_with("@tengen.test>"), "{message_id}");
    assert_eq!(
        digest.header("List-Unsubscribe-Post").as_deref(),
        Some("List-Unsubscribe=One-Click")
    );
    let unsubscribe = digest.header("List-Unsubscribe").expect("List-Unsubscribe");
    let url = unsubscribe.trim_matches(['<', '>']);
    assert!(url.contains("/notify/unsubscribe?token="), "{url}");
    // The body's link for the kind, and the header's one-click POST, both work.
    let in_body = digest.link("http://");
    assert!(in_body.contains("/notify/unsubscribe?token="), "{in_body}");
    let (status, text) = http_text(
        &server,
        "POST",
        path_of(url),
        None,
        "List-Unsubscribe=One-Click",
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("game_ended"), "{text}");
    let settings = bob.ok(json!({"type": "get_notification_settings"})).await;
    assert_eq!(settings["settings"]["modes"]["game_ended"], "off");
    assert_eq!(settings["settings"]["modes"]["your_move"], "digest");

    // A link that was tampered with does nothing.
    let forged = path_of(&in_body).replace("token=", "token=x");
    let (status, _) = http_text(&server, "GET", &forged, None, "").await;
    assert_eq!(status, 400);
}
