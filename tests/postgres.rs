//! A real server on `store.backend = "postgres"`: a game played to the end is in the
//! archive, a restart on the same database rebuilds an unfinished game, and
//! `tengen store migrate` copies a real server's SQLite store, verifies it, and changes
//! nothing the second time. And the lease on a job one node of a cluster does for all,
//! and which games a cluster's sweep for orphans leaves to that job (the waker).

mod common;

use std::process::{Command, Output};

use common::services::postgres_db;
use common::{TestServer, get, get_json, play, start_game};
use serde_json::{Value, json};
use tengen::config::{Config, StoreBackend};
use tengen::store::{
    AccountStore, Append, CalendarStore, Claim, DeadlineStore, EventLog, GameRecord, GameStatus,
    GameStore, Leases, PgStore, PushStore, StoreError, TournamentEntry, TournamentRecord,
    TournamentStore, VacationStore,
};

fn on_postgres(url: &str) -> impl FnOnce(&mut Config) + '_ {
    move |c| {
        c.store.backend = StoreBackend::Postgres;
        c.store.postgres_url = Some(url.to_owned());
    }
}

/// Alice (Black) and Bob play a short 9x9 game; alice resigns when `resign`.
async fn game(server: &TestServer, moves: &[&str], resign: bool) -> String {
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let id = start_game(
        &mut alice,
        &mut bob,
        json!({"board_size": 9, "color": "black", "komi": 6.5}),
    )
    .await;
    for (i, v) in moves.iter().enumerate() {
        let n = i as u32 + 1;
        let c = if n % 2 == 1 { &mut alice } else { &mut bob };
        play(c, &id, n, v).await;
    }
    if resign {
        alice.ok(json!({"type": "resign", "game_id": id})).await;
        assert_eq!(bob.recv_type("game_ended").await["result"], "W+R");
    }
    id
}

#[tokio::test]
async fn a_server_on_postgres_plays_a_game_to_the_end_and_the_archive_reads_it_back() {
    let db = postgres_db();
    let server = TestServer::start_with(on_postgres(db.url())).await;
    let id = game(&server, &["E5", "C3", "G7"], true).await;
    let (status, list) = get_json(&server, "/api/games?player=alice").await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["games"][0]["game_id"], id.as_str());
    assert_eq!(list["games"][0]["result"], "W+R");
    assert_eq!(list["games"][0]["move_count"], 3);
    let (status, body) = get(&server, &format!("/api/games/{id}")).await;
    assert_eq!(status, 200, "{body}");
    let record: Value = serde_json::from_str(&body).expect("json");
    let moves: Vec<&str> = record["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .filter_map(|m| m["vertex"].as_str())
        .collect();
    assert_eq!(moves, ["E5", "C3", "G7"]);
    let (status, sgf) = get(&server, &format!("/api/games/{id}/sgf")).await;
    assert_eq!(status, 200);
    assert!(sgf.contains("RE[W+R]"), "{sgf}");
    let (status, _) = get(&server, "/readyz").await;
    assert_eq!(status, 200, "the store is writable");
    server.stop().await;
    // It is all in the database itself.
    let store = PgStore::open(db.url()).expect("open");
    let events = store.events(&id).expect("events");
    assert!(events.iter().any(|e| e.kind == "game_ended"));
}

#[tokio::test]
async fn a_restart_on_the_same_database_rebuilds_an_unfinished_game() {
    let db = postgres_db();
    let server = TestServer::start_with(on_postgres(db.url())).await;
    let id = game(&server, &["E5", "C3"], false).await;
    let dir = server.stop().await;
    assert!(
        !dir.path().join(tengen::server::DB_FILE).exists(),
        "no SQLite file beside the secret"
    );
    let server = TestServer::start_in(dir, on_postgres(db.url())).await;
    let mut watcher = server.anonymous().await;
    watcher.ok(json!({"type": "join", "game_id": id})).await;
    let snap = watcher.recv_type("snapshot").await;
    assert_eq!(snap["phase"], "play", "{snap}");
    assert_eq!(snap["moves"][1]["vertex"], "C3", "{snap}");
    // The game goes on where it was.
    let mut alice = server.login("alice").await;
    alice.ok(json!({"type": "join", "game_id": id})).await;
    play(&mut alice, &id, 3, "G7").await;
    assert_eq!(watcher.recv_type("move_played").await["vertex"], "G7");
}

fn tengen(args: &[&str], data: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(args)
        .arg("--data")
        .arg(data)
        .env_remove("TENGEN_MIGRATE_TO")
        .output()
        .expect("tengen runs")
}

#[tokio::test]
async fn store_migrate_copies_a_real_servers_store_verifies_it_and_is_idempotent() {
    // A real server's SQLite store: a finished game, an unfinished one, accounts.
    let server = TestServer::start().await;
    let finished = game(&server, &["E5", "C3", "G7"], true).await;
    let live = game(&server, &["D4"], false).await;
    // A player's calendar (client-protocol/correspondence.md#weekends).
    let mut bob = server.login("bob").await;
    let calendar = json!({"time_zone": "Asia/Dubai", "weekend": ["friday", "saturday"]});
    bob.ok(json!({"type": "set_calendar", "calendar": calendar}))
        .await;
    drop(bob);
    let browser = tengen::store::PushSubscription {
        account: "alice".into(),
        endpoint: "https://push.example.net/wpush/alice".into(),
        p256dh: "BCVxsr7N".into(),
        auth: "BTBZMqHH6r4Tts7J_aSIgg".into(),
        created_ms: 7,
    };
    let hub_store = server.store();
    hub_store
        .add_push_subscription(&browser, 10)
        .expect("a browser subscribed");
    let dir = server.stop().await;

    let db = postgres_db();
    let url = db.url().to_owned();
    let first = tengen(&["store", "migrate", "--to", &url], dir.path());
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(
        first.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(stdout.contains("games: 2 rows copied"), "{stdout}");
    assert!(stdout.contains("verified: games 2 / 2"), "{stdout}");

    let second = tengen(&["store", "migrate", "--to", &url], dir.path());
    let again = String::from_utf8_lossy(&second.stdout);
    assert!(second.status.success(), "{again}");
    for line in again.lines().filter(|l| l.contains("rows copied")) {
        assert!(line.ends_with(": 0 rows copied"), "{again}");
    }

    let store = PgStore::open(&url).expect("open");
    let sqlite =
        tengen::store::SqliteStore::open_read_only(&dir.path().join(tengen::server::DB_FILE))
            .expect("sqlite");
    for id in [&finished, &live] {
        assert_eq!(
            store.events(id).expect("pg"),
            sqlite.events(id).expect("sqlite")
        );
        assert_eq!(
            store.game(id).expect("pg"),
            sqlite.game(id).expect("sqlite")
        );
    }
    assert_eq!(
        store.users("", 100).expect("pg"),
        sqlite.users("", 100).expect("sqlite")
    );
    let kept = store.calendar("bob").expect("pg");
    assert_eq!(
        kept.as_ref().map(|c| c.time_zone.as_str()),
        Some("Asia/Dubai")
    );
    assert_eq!(kept, sqlite.calendar("bob").expect("sqlite"));
    assert_eq!(store.push_subscriptions("alice").expect("pg"), [browser]);

    // A game whose log differs between the two is refused by name, and nothing changes.
    store
        .append(&[tengen::store::Append::Event(tengen::store::EventRecord {
            game_id: live.clone(),
            seq: store.events(&live).expect("events").len() as u64 + 1,
            kind: "presence".into(),
            payload: "{}".into(),
            at_ms: 1,
        })])
        .expect("only in PostgreSQL");
    let third = tengen(&["store", "migrate", "--to", &url], dir.path());
    let err = String::from_utf8_lossy(&third.stderr);
    assert!(!third.status.success());
    assert!(err.contains(&live), "{err}");
    assert!(!err.contains("postgres:postgres@"), "no password: {err}");

    // A server on the copy serves both games.
    drop(sqlite);
    let server = TestServer::start_in(dir, on_postgres(&url)).await;
    let (_, record) = get_json(&server, &format!("/api/games/{finished}")).await;
    assert_eq!(record["result"], "W+R", "{record}");
}

/// `tengen user add alice` on the data directory (its SQLite store), or on PostgreSQL.
fn add_alice(data: &std::path::Path, postgres: Option<&str>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tengen"));
    command.args(["user", "add", "alice", "--data"]).arg(data);
    if let Some(url) = postgres {
        command
            .env("TENGEN_STORE__BACKEND", "postgres")
            .env("TENGEN_STORE__POSTGRES_URL", url);
    }
    let added = command
        .stdin(std::process::Stdio::null())
        .output()
        .expect("tengen runs");
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
}

#[test]
fn store_migrate_refuses_another_account_of_the_same_name_and_a_target_that_is_no_url() {
    let db = postgres_db();
    let (sqlite, elsewhere) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    add_alice(sqlite.path(), None);
    add_alice(elsewhere.path(), Some(db.url()));
    let store = PgStore::open(db.url()).expect("open");
    let before = store.user("alice").expect("read");
    let refused = tengen(&["store", "migrate", "--to", db.url()], sqlite.path());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{err}");
    assert!(
        err.contains("alice") && err.contains("two accounts"),
        "{err}"
    );
    assert_eq!(
        store.user("alice").expect("read"),
        before,
        "alice is unchanged"
    );
    // A connection string that is not a URL is refused, and not shown.
    let refused = tengen(
        &[
            "store",
            "migrate",
            "--to",
            "host=127.0.0.1 password=hunter2",
        ],
        sqlite.path(),
    );
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        err.contains("postgres://") && !err.contains("hunter2"),
        "{err}"
    );
}

#[test]
fn operators_commands_work_on_the_configured_postgres_store() {
    let db = postgres_db();
    let dir = tempfile::tempdir().expect("dir");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_tengen"))
            .args(args)
            .arg("--data")
            .arg(dir.path())
            .env("TENGEN_STORE__BACKEND", "postgres")
            .env("TENGEN_STORE__POSTGRES_URL", db.url())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("tengen runs")
    };
    let added = run(&["user", "add", "carol", "--role", "referee"]);
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let store = PgStore::open(db.url()).expect("open");
    let carol = store.user("carol").expect("read").expect("in PostgreSQL");
    assert_eq!(carol.role, tengen::protocol::Role::Referee);
    assert!(
        !dir.path().join(tengen::server::DB_FILE).exists(),
        "no SQLite file was made"
    );
    let rebuilt = run(&["ratings", "rebuild"]);
    assert!(
        rebuilt.status.success(),
        "{}",
        String::from_utf8_lossy(&rebuilt.stderr)
    );
}

/// What a correspondence game keeps beside its log, read from one store: the game's
/// plans, its next deadline, Bob's vacation and Bob's notices.
type Beside = (
    Vec<(String, String)>,
    Option<i64>,
    Option<tengen::store::VacationRow>,
    Vec<tengen::store::NoticeRow>,
);

fn beside<S>(store: &S, game: &str) -> Beside
where
    S: tengen::store::PlanStore
        + tengen::store::DeadlineStore
        + tengen::store::VacationStore
        + tengen::store::NoticeStore,
{
    (
        store.plans(game).expect("plans"),
        store.next_deadline(0).expect("the deadline index"),
        store.vacation("bob").expect("a vacation"),
        store.notices("bob", None, 100).expect("notices"),
    )
}

#[tokio::test]
async fn store_migrate_carries_plans_deadlines_vacations_and_notices() {
    // A real server's SQLite store: a correspondence game where Alice (Black) has played
    // and planned her answers to Bob's next two moves; Bob, who was not at the board, was
    // told it is his move, and went on vacation.
    let server = TestServer::start().await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let day = 86_400_000u64;
    let settings = json!({"board_size": 9, "color": "black", "correspondence": true,
        "clock": {"system": "fischer", "main_ms": 3 * day, "increment_ms": day, "max_ms": 4 * day}});
    let id = start_game(&mut alice, &mut bob, settings).await;
    bob.close().await;
    play(&mut alice, &id, 1, "E5").await;
    let replies = json!([{"if": "C3", "play": "G7", "then": [{"if": "G3", "play": "C7"}]}]);
    alice
        .ok(json!({"type": "plan", "game_id": id, "move_number": 2, "replies": replies}))
        .await;
    let mut bob = server.login("bob").await;
    let away = bob.ok(json!({"type": "start_vacation"})).await;
    assert_eq!(away["vacation"]["paused"], json!([id]), "{away}");
    drop((alice, bob));
    let dir = server.stop().await;
    // And the day Bob spent at a deadline earlier runs a while yet (days of a clock a
    // test on real time cannot wait for; written as a deadline would).
    let db_file = dir.path().join(tengen::server::DB_FILE);
    let writable =
        tengen::store::SqliteStore::open(&db_file, tengen::store::SyncMode::Full).expect("sqlite");
    writable
        .change_vacation(
            "bob",
            Box::new(|row| tengen::store::VacationRow {
                paid_until_ms: row.map(|r| r.as_of_ms + 5_000),
                ..row.expect("Bob's vacation")
            }),
        )
        .expect("a day spent");
    writable.close().expect("closed");
    let sqlite =
        tengen::store::SqliteStore::open_read_only(&dir.path().join(tengen::server::DB_FILE))
            .expect("sqlite");
    let kept = beside(&sqlite, &id);
    assert_eq!(kept.0.len(), 1, "Alice's plan is stored: {:?}", kept.0);
    assert!(kept.1.is_some(), "the game is in the deadline index");
    assert!(
        kept.2
            .is_some_and(|v| v.away_since_ms.is_some() && v.paid_until_ms.is_some()),
        "{:?}",
        kept.2
    );
    assert!(kept.3.iter().any(|n| n.kind == "your_move"), "{:?}", kept.3);

    let db = postgres_db();
    let url = db.url().to_owned();
    let copied = tengen(&["store", "migrate", "--to", &url], dir.path());
    let said = String::from_utf8_lossy(&copied.stdout);
    assert!(
        copied.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&copied.stderr)
    );
    for table in ["correspondence_deadlines", "plans", "vacations"] {
        assert!(said.contains(&format!("{table}: 1 rows copied")), "{said}");
    }
    let store = PgStore::open(&url).expect("open");
    assert_eq!(beside(&store, &id), kept);
    drop(sqlite);

    // A server on the copy: Bob is still away, and Alice's plan answers his moves.
    let server = TestServer::start_in(dir, on_postgres(&url)).await;
    let mut bob = server.login("bob").await;
    let status = bob.ok(json!({"type": "get_vacation"})).await;
    assert_eq!(
        status["vacation"]["away_since"], away["vacation"]["away_since"],
        "{status}"
    );
    bob.ok(json!({"type": "join", "game_id": id})).await;
    play(&mut bob, &id, 2, "C3").await;
    let planned = bob.recv_type("move_played").await;
    assert_eq!(
        (&planned["vertex"], &planned["planned"]),
        (&json!("G7"), &json!(true)),
        "{planned}"
    );
    play(&mut bob, &id, 4, "G3").await;
    let planned = bob.recv_type("move_played").await;
    assert_eq!(planned["vertex"], "C7", "{planned}");
}

#[tokio::test]
async fn a_sleeping_correspondence_game_on_postgres_flags_at_its_deadline() {
    let db = postgres_db();
    let server = TestServer::start_with(on_postgres(db.url())).await;
    let mut alice = server.login("alice").await;
    let mut bob = server.login("bob").await;
    let settings = json!({"board_size": 9, "color": "black", "correspondence": true,
        "vacation": false, "clock": {"system": "absolute", "main_ms": 4_000}});
    let id = start_game(&mut alice, &mut bob, settings).await;
    play(&mut alice, &id, 1, "E5").await;
    drop((alice, bob));
    // Restarted, the game sleeps in the deadline index until White's flag falls.
    let dir = server.stop().await;
    let server = TestServer::start_in(dir, on_postgres(db.url())).await;
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (_, record) = get_json(&server, &format!("/api/games/{id}")).await;
        if record["result"].is_string() {
            assert_eq!(record["result"], "B+T", "{record}");
            break;
        }
        assert!(std::time::Instant::now() < until, "no flag: {record}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[test]
fn a_jobs_lease_goes_to_one_node_is_renewed_released_and_taken_after_it_lapses() {
    let db = postgres_db();
    let store = PgStore::open(db.url()).expect("store");
    let held = |node: &str| Claim::Held { node: node.into() };
    let claim =
        |name: &str, node: &str, ms: u64| store.claim_singleton(name, node, ms).expect("a claim");
    // Never claimed before: the first claim makes the row and wins it.
    assert_eq!(claim("waker", "n1", 60_000), Claim::Ours(0));
    assert_eq!(claim("waker", "n2", 60_000), held("n1"));
    // Another job is a lease of its own.
    assert_eq!(claim("other", "n2", 60_000), Claim::Ours(0));
    // The holder's claim renews it (here, to 1 ms); n2's release changes nothing.
    assert_eq!(claim("waker", "n1", 1), Claim::Ours(0));
    store.release_singleton("waker", "n2").expect("release");
    // Lapsed, it is n2's; n1, back, finds it held.
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(claim("waker", "n2", 60_000), Claim::Ours(0));
    assert_eq!(claim("waker", "n1", 60_000), held("n2"));
    // Released by its holder (a graceful stop), it is free at once.
    store.release_singleton("waker", "n2").expect("release");
    assert_eq!(claim("waker", "n1", 60_000), Claim::Ours(0));
    assert_eq!(claim("other", "n1", 60_000), held("n2"));
}

#[test]
fn a_tournament_directors_lease_is_claimed_and_released_as_a_jobs() {
    let db = postgres_db();
    let store = PgStore::open(db.url()).expect("store");
    let record = TournamentRecord {
        id: "t1".into(),
        name: "Cup".into(),
        created_at_ms: 1,
        stage: "registration".into(),
    };
    let created = TournamentEntry {
        seq: 1,
        at_ms: 1,
        kind: "created".into(),
        payload: "{}".into(),
    };
    store.create_tournament(&record, &created).expect("created");
    let claim = |node: &str| store.claim_tournament("t1", node, 60_000).expect("a claim");
    assert_eq!(claim("n1"), Claim::Ours(0));
    assert_eq!(claim("n2"), Claim::Held { node: "n1".into() });
    assert!(store.orphan_tournaments(10).expect("orphans").is_empty());
    assert!(matches!(
        store.claim_tournament("nope", "n1", 60_000),
        Err(StoreError::UnknownTournament { .. })
    ));
    store.release_tournament("t1", "n2").expect("release");
    assert_eq!(claim("n2"), Claim::Held { node: "n1".into() });
    store.release_tournament("t1", "n1").expect("release");
    assert_eq!(store.orphan_tournaments(10).expect("orphans"), ["t1"]);
    assert_eq!(claim("n2"), Claim::Ours(0));
}

#[test]
fn the_sweep_for_orphans_leaves_the_games_of_the_deadline_index_to_the_waker() {
    let db = postgres_db();
    let store = PgStore::open(db.url()).expect("store");
    for (i, id) in ["live", "due", "later"].into_iter().enumerate() {
        store
            .create_game(&GameRecord {
                id: id.into(),
                created_at_ms: i as i64,
                settings: "{}".into(),
                black: "a".into(),
                white: "b".into(),
                black_name: "a".into(),
                white_name: "b".into(),
                status: GameStatus::Live,
                result: None,
                ended_at_ms: None,
                move_count: 0,
            })
            .expect("a game");
    }
    assert_eq!(
        store.orphans(10).expect("orphans"),
        ["live", "due", "later"]
    );
    let deadline = |id: &str, due_ms| Append::Deadline {
        game_id: id.into(),
        due_ms,
        summary: None,
    };
    let now = tengen::time::wall_ms();
    store
        .append(&[deadline("due", now - 1), deadline("later", now + 3_600_000)])
        .expect("deadlines");
    // Asleep, due or not: the waker's; the game outside the index is the sweep's.
    assert_eq!(store.orphans(10).expect("orphans"), ["live"]);
    assert_eq!(store.due_games(now, 10).expect("due"), ["due"]);
}
