//! One set of store scenarios run over both backends, SQLite and PostgreSQL, so they keep
//! the same promises: one or more scenarios for each trait of the store, the event log
//! (seq numbering, all-or-nothing batches, the fence, the group commit's path), games
//! (reads, paging), accounts, ratings, fair play and reviews. Plus what only a shared
//! database shows: two stores (two nodes) appending to one game take turns, and a lost
//! connection comes back. (Leases, which only PostgreSQL has, are `tests/cluster.rs`'s.)

mod common;

use std::sync::Arc;

use common::services::{PgDb, admin_sql, postgres_admin_url, postgres_db};
use tengen::config::CorrespondenceConfig;
use tengen::correspondence::vacation::{DeadlineDay, Policy};
use tengen::protocol::Role;
use tengen::store::{
    Append, CalendarRow, DeskRow, EventLog, EventRecord, GameQuery, GameRecord, GameStatus,
    GameStore, KibitzRecord, MadeBot, MailPrefs, NewInvite, NewNotice, NewRefresh, NewReport,
    Origin, PgStore, PushSubscription, RatingChangeRow, RatingRecord, RatingRow, ReviewRecord,
    Rotation, SqliteStore, Store, StoreError, Subscribed, SyncMode, TOUCH_MS, TokenRecord,
    TournamentEntry, TournamentRecord, UserChange, UserRecord, VacationChange, VacationRow,
};

/// A store under test with what keeps it alive (a temp dir or a database).
struct Backend {
    store: Arc<dyn Store>,
    _sqlite: Option<tempfile::TempDir>,
    pg: Option<PgDb>,
}

impl Backend {
    /// A second store on the same data: another node on the same database, or (SQLite,
    /// one process) the same store again.
    fn another_node(&self) -> Arc<dyn Store> {
        match &self.pg {
            Some(db) => Arc::new(PgStore::open(db.url()).expect("a second PgStore")),
            None => Arc::clone(&self.store),
        }
    }
}

fn sqlite() -> Backend {
    let dir = tempfile::tempdir().expect("temp dir");
    let store =
        SqliteStore::open(&dir.path().join("t.sqlite"), SyncMode::Normal).expect("sqlite opens");
    Backend {
        store: Arc::new(store),
        _sqlite: Some(dir),
        pg: None,
    }
}

/// SQLite at `full`, where the group commit puts plain moves in the move log beside the
/// database ([`EventLog::append_unsynced`]).
fn sqlite_full() -> Backend {
    let dir = tempfile::tempdir().expect("temp dir");
    let store =
        SqliteStore::open(&dir.path().join("t.sqlite"), SyncMode::Full).expect("sqlite opens");
    Backend {
        store: Arc::new(store),
        _sqlite: Some(dir),
        pg: None,
    }
}

fn postgres() -> Backend {
    let db = postgres_db();
    let store = PgStore::open(db.url()).expect("postgres opens");
    Backend {
        store: Arc::new(store),
        _sqlite: None,
        pg: Some(db),
    }
}

/// Each scenario as two tests, `<name>::sqlite` and `<name>::postgres`.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn sqlite() {
                super::$name(&super::sqlite());
            }
            #[test]
            fn postgres() {
                super::$name(&super::postgres());
            }
        }
    )*};
}

on_both!(
    games_and_events_round_trip,
    a_group_commit_reads_back_like_an_append,
    only_the_next_seq_is_accepted,
    a_bad_item_rolls_the_whole_batch_back,
    the_fence_only_grows,
    unknown_and_taken_games_are_refused,
    game_lists_page_without_skipping_ties,
    unfinished_games_come_back_oldest_first,
    refresh_tokens_rotate_and_a_replay_revokes_the_family,
    users_invites_and_external_sightings,
    ratings_are_recorded_in_order_and_rebuilt,
    fair_play_rows_and_forfeit_losses,
    reviews_are_saved_and_counted,
    two_nodes_appending_to_one_game_take_turns,
    batches_naming_games_in_any_order_never_deadlock,
    mutes_are_kept_and_undone,
    changes_to_users_standing_are_numbered,
    time_losses_are_read_with_forfeits,
    tournaments_keep_their_numbered_logs,
    two_nodes_appending_to_one_tournament_take_turns,
    the_deadline_index_follows_its_games,
    a_players_correspondence_games_are_listed_from_the_index,
    notices_are_bounded_paged_and_marked_read,
    digests_wait_for_their_time_and_mail_prefs_are_kept,
    personal_tokens_are_bounded_used_and_revoked,
    a_player_without_rated_games_becomes_a_bot_once,
    vacations_are_kept_and_changed_on_the_row_they_find,
    deadlines_due_at_once_on_two_nodes_spend_one_day,
    calendars_are_kept_and_replaced,
    push_subscriptions_are_bounded_replaced_and_forgotten,
    a_disabled_account_is_sent_nothing_more,
);

fn game(id: &str, created_at_ms: i64, black: &str, white: &str) -> GameRecord {
    GameRecord {
        id: id.to_owned(),
        created_at_ms,
        settings: r#"{"size":19,"komi":7.5}"#.to_owned(),
        black: black.to_owned(),
        white: white.to_owned(),
        black_name: format!("{black} the Black"),
        white_name: format!("{white} the White"),
        status: GameStatus::Live,
        result: None,
        ended_at_ms: None,
        move_count: 0,
    }
}

fn event(game_id: &str, seq: u64) -> EventRecord {
    EventRecord {
        game_id: game_id.to_owned(),
        seq,
        kind: "move_played".to_owned(),
        payload: format!(r#"{{"vertex":"D{seq}"}}"#),
        at_ms: 1_000 + seq as i64,
    }
}

fn events(game_id: &str, seqs: std::ops::RangeInclusive<u64>) -> Vec<Append> {
    seqs.map(|seq| Append::Event(event(game_id, seq))).collect()
}

fn finish(game_id: &str, result: &str, ended_at_ms: i64) -> Append {
    Append::Finish {
        game_id: game_id.to_owned(),
        result: result.to_owned(),
        ended_at_ms,
    }
}

fn fence(game_id: &str, fence: u64) -> Append {
    Append::Fence {
        game_id: game_id.to_owned(),
        fence,
    }
}

fn ids(games: &[GameRecord]) -> Vec<&str> {
    games.iter().map(|g| g.id.as_str()).collect()
}

fn games_and_events_round_trip(b: &Backend) {
    let s = &b.store;
    let g = game("g1", 10, "alice", "bob");
    s.create_game(&g).expect("create");
    s.append(&events("g1", 1..=2)).expect("first events");
    let mut batch = events("g1", 3..=4);
    batch.push(Append::MoveCount {
        game_id: "g1".into(),
        move_count: 4,
    });
    s.append(&batch).expect("more events");
    s.append(&[
        Append::Create(game("g2", 11, "carol", "dave")),
        Append::Event(event("g2", 1)),
        Append::Event(event("g2", 2)),
    ])
    .expect("a game created with its first events");
    let want: Vec<EventRecord> = (1..=4).map(|seq| event("g1", seq)).collect();
    assert_eq!(
        s.game("g1").expect("read"),
        Some(GameRecord { move_count: 4, ..g })
    );
    assert_eq!(s.events("g1").expect("events"), want);
    assert_eq!(s.events_in("g1", 2..4).expect("range"), want[1..3]);
    assert_eq!(s.events_in("g1", 4..u64::MAX).expect("range"), want[3..]);
    assert_eq!(s.events("g2").expect("events").len(), 2);
    assert_eq!(s.game("nope").expect("read"), None);
    assert!(s.events("nope").expect("events").is_empty());
    for (id, played) in [
        ("alice", true),
        ("bob", true),
        ("dave", true),
        ("erin", false),
    ] {
        assert_eq!(s.has_played(id).expect("has played"), played, "{id}");
    }
    s.check_writable().expect("writable");
}

/// The group commit's path: [`EventLog::append_unsynced`], then [`EventLog::sync_log`],
/// and [`EventLog::fold_log`] when the writer stops. What it wrote reads back as an
/// `append`'s would, refusals included.
fn a_group_commit_reads_back_like_an_append(b: &Backend) {
    let s = &b.store;
    s.create_game(&game("g", 1, "a", "b")).expect("create");
    let mut batch = events("g", 1..=3);
    batch.push(Append::MoveCount {
        game_id: "g".into(),
        move_count: 3,
    });
    s.append_unsynced(&batch).expect("written");
    s.sync_log().expect("synced");
    let err = s.append_unsynced(&[Append::Event(event("g", 3))]);
    assert!(
        matches!(err, Err(StoreError::SeqOutOfOrder { expected: 4, .. })),
        "{err:?}"
    );
    s.append_unsynced(&[Append::Event(event("g", 4)), finish("g", "B+R", 9)])
        .expect("the last move and the end");
    s.sync_log().expect("synced");
    s.fold_log().expect("folded");
    let other = b.another_node();
    let want: Vec<EventRecord> = (1..=4).map(|seq| event("g", seq)).collect();
    assert_eq!(other.events("g").expect("events"), want);
    let g = other.game("g").expect("read").expect("the game");
    assert_eq!(
        (g.status, g.result.as_deref(), g.move_count),
        (GameStatus::Finished, Some("B+R"), 3)
    );
    s.check_writable().expect("writable");
}

#[test]
fn a_group_commit_reads_back_like_an_append_through_the_move_log() {
    a_group_commit_reads_back_like_an_append(&sqlite_full());
}

fn only_the_next_seq_is_accepted(b: &Backend) {
    let s = &b.store;
    s.create_game(&game("g", 1, "a", "b")).expect("create");
    for seq in [0, 2] {
        let err = s.append(&[Append::Event(event("g", seq))]);
        assert!(
            matches!(err, Err(StoreError::SeqOutOfOrder { expected: 1, .. })),
            "seq {seq}: {err:?}"
        );
    }
    s.append(&events("g", 1..=2)).expect("events");
    for seq in [2, 4, u64::MAX] {
        let err = s.append(&[Append::Event(event("g", seq))]);
        assert!(
            matches!(err, Err(StoreError::SeqOutOfOrder { expected: 3, .. })),
            "seq {seq}: {err:?}"
        );
        assert!(err.err().is_some_and(|e| e.is_rejection()));
    }
    assert_eq!(s.events("g").expect("events").len(), 2);
}

fn a_bad_item_rolls_the_whole_batch_back(b: &Backend) {
    let s = &b.store;
    s.create_game(&game("g", 1, "a", "b")).expect("create");
    s.append(&events("g", 1..=2)).expect("events");
    let mut replaced = event("g", 1);
    replaced.payload = r#"{"vertex":"Q16"}"#.into();
    let err = s.append(&[
        Append::Create(game("h", 2, "c", "d")),
        Append::Event(event("g", 3)),
        Append::MoveCount {
            game_id: "g".into(),
            move_count: 3,
        },
        Append::Kibitz(kibitz("g", 5)),
        Append::Event(replaced),
    ]);
    assert!(
        matches!(
            err,
            Err(StoreError::SeqOutOfOrder {
                seq: 1,
                expected: 4,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(s.game("h").expect("read"), None);
    assert_eq!(s.game("g").expect("read").map(|g| g.move_count), Some(0));
    assert_eq!(s.events("g").expect("events").len(), 2);
    assert!(s.kibitz("g").expect("kibitz").is_empty());
    // The store is healthy afterwards: the next good batch goes through.
    s.append(&events("g", 3..=3)).expect("next");
}

fn the_fence_only_grows(b: &Backend) {
    let s = &b.store;
    s.create_game(&game("g", 1, "a", "b")).expect("create");
    s.append(&[fence("g", 0)]).expect("an equal claim passes");
    s.append(&[fence("g", 5)]).expect("a higher claim passes");
    s.append(&[fence("g", 5), Append::Event(event("g", 1))])
        .expect("the owner claims again and writes");
    let err = s.append(&[
        Append::Create(game("h", 2, "c", "d")),
        fence("g", 4),
        Append::Event(event("g", 2)),
    ]);
    assert!(
        matches!(
            err,
            Err(StoreError::Fenced {
                fence: 4,
                current: 5,
                ..
            })
        ),
        "{err:?}"
    );
    assert!(err.err().is_some_and(|e| e.is_rejection()));
    assert_eq!(s.game("h").expect("read"), None);
    assert_eq!(s.events("g").expect("events").len(), 1);
    // The stored value grew to 5: 4 stays refused, 6 passes and then 5 is refused.
    s.append(&[fence("g", 6)]).expect("a newer owner");
    let err = s.append(&[fence("g", 5)]);
    assert!(
        matches!(err, Err(StoreError::Fenced { current: 6, .. })),
        "{err:?}"
    );
    let err = s.append(&[fence("g", u64::MAX)]);
    assert!(matches!(err, Err(StoreError::Fenced { .. })), "{err:?}");
    let err = s.append(&[fence("x", 1)]);
    assert!(
        matches!(err, Err(StoreError::UnknownGame { .. })),
        "{err:?}"
    );
}

fn unknown_and_taken_games_are_refused(b: &Backend) {
    let s = &b.store;
    s.create_game(&game("g", 1, "a", "b")).expect("create");
    let dup = s.create_game(&game("g", 2, "c", "d"));
    assert!(
        matches!(dup, Err(StoreError::DuplicateGame { .. })),
        "{dup:?}"
    );
    assert_eq!(
        s.game("g").expect("read").map(|g| g.black),
        Some("a".into())
    );
    let unknown = [
        Append::Event(event("x", 1)),
        Append::MoveCount {
            game_id: "x".into(),
            move_count: 1,
        },
        finish("x", "0", 1),
        Append::Kibitz(kibitz("x", 1)),
        Append::Rated {
            game_id: "x".into(),
        },
        Append::Rejudge {
            game_id: "g".into(),
            result: "B+R".into(),
        },
    ];
    for item in unknown {
        let err = s.append(std::slice::from_ref(&item));
        assert!(
            matches!(err, Err(StoreError::UnknownGame { .. })),
            "{item:?}: {err:?}"
        );
    }
    s.append(&[finish("g", "W+R", 99)]).expect("finish");
    let again = s.append(&[finish("g", "B+R", 100)]);
    assert!(
        matches!(again, Err(StoreError::AlreadyFinished { .. })),
        "{again:?}"
    );
    let done = s.game("g").expect("read").expect("exists");
    assert_eq!(
        (done.status, done.result.as_deref(), done.ended_at_ms),
        (GameStatus::Finished, Some("W+R"), Some(99))
    );
    s.append(&[Append::Rejudge {
        game_id: "g".into(),
        result: "B+R".into(),
    }])
    .expect("a referee's correction");
    assert_eq!(
        s.game("g").expect("read").and_then(|g| g.result),
        Some("B+R".into())
    );
}

fn game_lists_page_without_skipping_ties(b: &Backend) {
    let s = &b.store;
    let games = [
        game("a", 100, "alice", "bob"),
        game("b", 200, "carol", "alice"),
        game("c", 200, "bob", "carol"),
        game("d", 200, "alice", "dave"),
        game("e", 300, "bob", "dave"),
        game("f", 400, "alice", "carol"),
        game("g", 500, "erin", "bob"),
        // Ids that sort differently by bytes than in a natural-language collation.
        game("B", 200, "x", "y"),
        game("a-b", 200, "x", "y"),
    ];
    let batch: Vec<Append> = games.iter().cloned().map(Append::Create).collect();
    s.append(&batch).expect("create");
    s.append(&[finish("f", "B+3.5", 450)]).expect("finish");
    let all = s.list_games(&GameQuery::default()).expect("list");
    assert_eq!(ids(&all), ["g", "f", "e", "d", "c", "b", "a-b", "B", "a"]);
    let mut paged = Vec::new();
    let mut query = GameQuery {
        limit: 2,
        ..GameQuery::default()
    };
    loop {
        let page = s.list_games(&query).expect("page");
        assert!(page.len() <= 2);
        let Some(last) = page.last() else { break };
        query.before_ms = Some(last.created_at_ms);
        query.before_id = Some(last.id.clone());
        paged.extend(page.into_iter().map(|g| g.id));
    }
    assert_eq!(paged, ["g", "f", "e", "d", "c", "b", "a-b", "B", "a"]);
    let before = s
        .list_games(&GameQuery {
            before_ms: Some(200),
            ..GameQuery::default()
        })
        .expect("list");
    assert_eq!(ids(&before), ["a"]);
    let alice = s
        .list_games(&GameQuery {
            player: Some("alice".into()),
            ..GameQuery::default()
        })
        .expect("list");
    assert_eq!(ids(&alice), ["f", "d", "b", "a"]);
    let page = s
        .list_games(&GameQuery {
            player: Some("alice".into()),
            status: Some(GameStatus::Live),
            before_ms: Some(200),
            before_id: Some("d".into()),
            limit: 1,
        })
        .expect("list");
    assert_eq!(ids(&page), ["b"]);
    let finished = s
        .list_games(&GameQuery {
            status: Some(GameStatus::Finished),
            ..GameQuery::default()
        })
        .expect("list");
    assert_eq!(ids(&finished), ["f"]);
    let none = s
        .list_games(&GameQuery {
            limit: 0,
            ..GameQuery::default()
        })
        .expect("list");
    assert!(none.is_empty());
}

fn unfinished_games_come_back_oldest_first(b: &Backend) {
    let s = &b.store;
    for (id, at) in [("late", 30), ("early", 10), ("done", 20), ("empty", 40)] {
        s.create_game(&game(id, at, "alice", "bob"))
            .expect("create");
    }
    s.append(&events("late", 1..=3)).expect("events");
    s.append(&events("done", 1..=2)).expect("events");
    s.append(&events("early", 1..=1)).expect("events");
    s.append(&[Append::Event(event("done", 3)), finish("done", "W+R", 99)])
        .expect("finish");
    let live = s.unfinished_games().expect("unfinished");
    let found: Vec<(&str, Vec<u64>)> = live
        .iter()
        .map(|(g, log)| (g.id.as_str(), log.iter().map(|e| e.seq).collect()))
        .collect();
    assert_eq!(
        found,
        [
            ("early", vec![1]),
            ("late", vec![1, 2, 3]),
            ("empty", vec![])
        ]
    );
    assert!(live[1].1.iter().all(|e| e.game_id == "late"));
}

/// `row`, whatever the account had: a change that overwrites.
fn put(row: VacationRow) -> VacationChange {
    Box::new(move |_| row)
}

fn vacations_are_kept_and_changed_on_the_row_they_find(b: &Backend) {
    let s = &b.store;
    assert_eq!(s.vacation("alice").expect("read"), None);
    let home = VacationRow {
        balance_ms: 5_000,
        as_of_ms: 10,
        away_since_ms: None,
        warned: false,
        paid_until_ms: None,
    };
    assert_eq!(
        s.change_vacation("alice", put(home)).expect("change"),
        (None, home)
    );
    let away = VacationRow {
        away_since_ms: Some(20),
        warned: true,
        paid_until_ms: Some(30),
        ..home
    };
    s.change_vacation("bob", put(away)).expect("change");
    assert_eq!(s.vacation("alice").expect("read"), Some(home));
    assert_eq!(
        s.away_accounts().expect("away"),
        [("bob".to_string(), away)]
    );
    // A change is decided on the row as it stands.
    let spend = Box::new(|row: Option<VacationRow>| {
        let row = row.expect("alice has a row");
        VacationRow {
            balance_ms: row.balance_ms - 2_000,
            paid_until_ms: Some(row.as_of_ms + 1),
            ..row
        }
    });
    let (before, after) = s.change_vacation("alice", spend).expect("change");
    assert_eq!((before, after.balance_ms), (Some(home), 3_000));
    assert_eq!(s.vacation("alice").expect("read"), Some(after));
    assert_eq!(after.paid_until_ms, Some(11));
    // Home again.
    s.change_vacation(
        "bob",
        put(VacationRow {
            away_since_ms: None,
            ..away
        }),
    )
    .expect("change");
    assert_eq!(s.away_accounts().expect("away"), []);
}

/// Several games of one player due at the same instant, decided at once on two nodes
/// (each change held open a while, so they overlap): one day is spent, and every other
/// deadline finds it running. Once for an account without a row yet (the first rows
/// race to be inserted), once for one with a row.
fn deadlines_due_at_once_on_two_nodes_spend_one_day(b: &Backend) {
    const DAY: i64 = 86_400_000;
    // 10 days to start with and none gained, so the balance moves only by what is spent.
    let policy = Policy::new(&CorrespondenceConfig {
        vacation_start_days: 10,
        vacation_days_per_30: 0,
        ..CorrespondenceConfig::default()
    });
    let deadline = 100 * DAY;
    let nodes = [Arc::clone(&b.store), b.another_node()];
    for who in ["fresh", "known"] {
        if who == "known" {
            let row = policy.settle(None, deadline - DAY);
            nodes[0].change_vacation(who, put(row)).expect("change");
        }
        let start = Arc::new(std::sync::Barrier::new(4));
        let games: Vec<_> = (0..4)
            .map(|i| {
                let (store, start) = (Arc::clone(&nodes[i % 2]), Arc::clone(&start));
                std::thread::spawn(move || {
                    start.wait();
                    let slow = move |row| {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        policy.at_deadline(row, deadline, deadline).1
                    };
                    let (before, _) = store.change_vacation(who, Box::new(slow)).expect("change");
                    policy.at_deadline(before, deadline, deadline).0
                })
            })
            .collect();
        let verdicts: Vec<DeadlineDay> = games
            .into_iter()
            .map(|g| g.join().expect("a game"))
            .collect();
        let until_ms = deadline + DAY;
        let spent = verdicts
            .iter()
            .filter(|v| **v == DeadlineDay::Spent { until_ms })
            .count();
        let covered = verdicts
            .iter()
            .filter(|v| **v == DeadlineDay::Covered { until_ms })
            .count();
        assert_eq!((spent, covered), (1, 3), "{who}: {verdicts:?}");
        let row = nodes[1].vacation(who).expect("read").expect("a row");
        assert_eq!(row.balance_ms, 9 * DAY, "{who}");
        assert_eq!(row.paid_until_ms, Some(until_ms), "{who}");
    }
}

fn calendars_are_kept_and_replaced(b: &Backend) {
    let s = &b.store;
    assert_eq!(s.calendar("alice").expect("read"), None);
    let berlin = CalendarRow {
        time_zone: "Europe/Berlin".into(),
        weekend: 0b110_0000,
    };
    s.put_calendar("alice", &berlin).expect("put");
    assert_eq!(s.calendar("alice").expect("read"), Some(berlin));
    let dubai = CalendarRow {
        time_zone: "Asia/Dubai".into(),
        weekend: 0b011_0000,
    };
    s.put_calendar("alice", &dubai).expect("put");
    assert_eq!(s.calendar("alice").expect("read"), Some(dubai));
    assert_eq!(s.calendar("bob").expect("read"), None);
}

fn deadline(game_id: &str, due_ms: i64) -> Append {
    Append::Deadline {
        game_id: game_id.into(),
        due_ms,
        summary: None,
    }
}

fn the_deadline_index_follows_its_games(b: &Backend) {
    let s = &b.store;
    for (id, at) in [("corr1", 1), ("corr2", 2), ("corr3", 3), ("live", 4)] {
        s.create_game(&game(id, at, "alice", "bob"))
            .expect("create");
    }
    s.append(&[
        deadline("corr1", 500),
        deadline("corr2", 300),
        deadline("corr3", 900),
    ])
    .expect("deadlines");
    // A later batch moves a deadline, in either direction.
    s.append(&[Append::Event(event("corr1", 1)), deadline("corr1", 200)])
        .expect("a move");
    assert_eq!(s.due_games(100, 10).expect("due"), Vec::<String>::new());
    assert_eq!(s.due_games(300, 10).expect("due"), ["corr1", "corr2"]);
    assert_eq!(s.due_games(1000, 1).expect("due"), ["corr1"]);
    assert_eq!(s.next_deadline(200).expect("next"), Some(300));
    assert_eq!(s.next_deadline(900).expect("next"), None);
    // A game in the index is asleep: a restart does not rebuild it.
    let unfinished = s.unfinished_games().expect("unfinished");
    let ids: Vec<&str> = unfinished.iter().map(|(g, _)| g.id.as_str()).collect();
    assert_eq!(ids, ["live"]);
    // Finishing a game takes it out of the index; an index row for no game is refused.
    s.append(&[finish("corr2", "B+T", 300)]).expect("finish");
    assert_eq!(s.due_games(1000, 10).expect("due"), ["corr1", "corr3"]);
    assert!(s.append(&[deadline("nosuch", 1)]).is_err());
    assert_eq!(s.due_games(1000, 10).expect("due"), ["corr1", "corr3"]);
}

fn a_players_correspondence_games_are_listed_from_the_index(b: &Backend) {
    let s = &b.store;
    let noted = |id: &str, due_ms: i64, summary: &str| Append::Deadline {
        game_id: id.into(),
        due_ms,
        summary: Some(summary.into()),
    };
    let plan = |id: &str, color: &str| Append::Plan {
        game_id: id.into(),
        color: color.into(),
        plan: Some("[]".into()),
    };
    for (id, at, black, white) in [
        ("c1", 1, "ann", "bob"),
        ("c2", 2, "bob", "ann"),
        ("c3", 3, "ann", "cid"),
        ("c4", 4, "bob", "cid"),
        ("over", 5, "ann", "bob"),
        ("live", 6, "ann", "bob"),
    ] {
        s.create_game(&game(id, at, black, white)).expect("create");
    }
    s.append(&[
        noted("c1", 100, "first"),
        deadline("c2", 200),
        noted("c3", 300, "third"),
        noted("c4", 400, "not ann's"),
        noted("over", 500, "ended"),
        plan("c1", "white"),
        plan("c2", "white"),
    ])
    .expect("indexed");
    // A later commit replaces the summary with the deadline; an ended game leaves.
    s.append(&[noted("c3", 350, "third, moved")])
        .expect("moved");
    s.append(&[finish("over", "B+R", 600)]).expect("ended");
    let row = |id: &str, summary: Option<&str>, planned: bool| DeskRow {
        game_id: id.into(),
        summary: summary.map(Into::into),
        planned,
    };
    // Newest first; a plan counts only as the player's own colour's.
    assert_eq!(
        s.desk("ann", 10).expect("read"),
        [
            row("c3", Some("third, moved"), false),
            row("c2", None, true),
            row("c1", Some("first"), false),
        ]
    );
    assert_eq!(
        s.desk("bob", 10).expect("read"),
        [
            row("c4", Some("not ann's"), false),
            row("c2", None, false),
            row("c1", Some("first"), true),
        ]
    );
    assert_eq!(s.desk("ann", 2).expect("read").len(), 2, "bounded");
    assert!(s.desk("dee", 10).expect("read").is_empty());
}

fn user(id: &str, origin: Origin) -> UserRecord {
    UserRecord {
        id: id.into(),
        origin,
        display_name: id.to_uppercase(),
        role: Role::Player,
        password_hash: (origin == Origin::Local).then(|| "$argon2id$x".to_string()),
        disabled: false,
        created_at_ms: 1,
    }
}

fn token(hash: &str, at: i64) -> NewRefresh {
    NewRefresh {
        hash: hash.into(),
        issued_at_ms: at,
        expires_at_ms: at + 1000,
    }
}

fn refresh_tokens_rotate_and_a_replay_revokes_the_family(b: &Backend) {
    let s = &b.store;
    s.create_user(&user("alice", Origin::Local), None, 1)
        .expect("create");
    s.start_refresh_family("alice", &token("t1", 10), 10)
        .expect("family");
    assert!(matches!(
        s.rotate_refresh("t1", &token("t2", 20)),
        Ok(Rotation::Rotated(u)) if u.id == "alice"
    ));
    assert_eq!(
        s.rotate_refresh("t1", &token("t3", 30)).expect("replay"),
        Rotation::Replayed
    );
    assert_eq!(
        s.rotate_refresh("t2", &token("t4", 40)).expect("revoked"),
        Rotation::Invalid,
        "the replay revoked the whole family"
    );
    assert_eq!(
        s.rotate_refresh("nope", &token("t5", 40)).expect("unknown"),
        Rotation::Invalid
    );
    s.start_refresh_family("alice", &token("e1", 50), 10)
        .expect("family");
    assert_eq!(
        s.rotate_refresh("e1", &token("e2", 2000)).expect("expired"),
        Rotation::Invalid
    );
    // At most two live families: a third revokes the oldest.
    for (hash, at) in [("f1", 100), ("f2", 110), ("f3", 120)] {
        s.start_refresh_family("alice", &token(hash, at), 2)
            .expect("family");
    }
    assert_eq!(
        s.rotate_refresh("f1", &token("f1b", 130)).expect("oldest"),
        Rotation::Invalid
    );
    assert!(matches!(
        s.rotate_refresh("f3", &token("f3b", 130)),
        Ok(Rotation::Rotated(_))
    ));
    s.revoke_refresh_family("f3b").expect("logout");
    assert_eq!(
        s.rotate_refresh("f3b", &token("f3c", 140))
            .expect("logged out"),
        Rotation::Invalid
    );
    s.revoke_refresh_family("unknown").expect("a no-op");
    s.update_user("alice", &UserChange::Disabled(true))
        .expect("disable");
    assert_eq!(
        s.rotate_refresh("f2", &token("f2b", 150))
            .expect("disabled"),
        Rotation::Disabled
    );
}

fn users_invites_and_external_sightings(b: &Backend) {
    let s = &b.store;
    let alice = user("alice", Origin::Local);
    s.create_user(&alice, None, 1).expect("create");
    assert_eq!(s.user("alice").expect("read"), Some(alice.clone()));
    assert!(matches!(
        s.create_user(&user("alice", Origin::Guest), None, 1),
        Err(StoreError::DuplicateUser { .. })
    ));
    // Only local accounts with ids beyond ASCII may be from before usernames were folded.
    s.create_user(&user("straße", Origin::Local), None, 1)
        .expect("create");
    s.create_user(&user("größe", Origin::External), None, 1)
        .expect("create");
    assert_eq!(s.non_ascii_local_ids().expect("read"), ["straße"]);
    s.create_invite(&NewInvite {
        hash: "inv".into(),
        created_at_ms: 1,
        expires_at_ms: 100,
    })
    .expect("invite");
    assert!(matches!(
        s.create_user(&user("late", Origin::Local), Some("inv"), 100),
        Err(StoreError::InvalidInvite)
    ));
    assert_eq!(s.user("late").expect("read"), None, "rolled back");
    s.create_user(&user("bob", Origin::Local), Some("inv"), 50)
        .expect("invited");
    assert!(matches!(
        s.create_user(&user("cid", Origin::Local), Some("inv"), 50),
        Err(StoreError::InvalidInvite)
    ));
    s.update_user("bob", &UserChange::Role(Role::Referee))
        .expect("role");
    s.update_user("bob", &UserChange::Password("$argon2id$y".into()))
        .expect("password");
    let bob = s.user("bob").expect("read").expect("bob");
    assert_eq!(
        (bob.role, bob.password_hash.as_deref()),
        (Role::Referee, Some("$argon2id$y"))
    );
    assert!(matches!(
        s.update_user("nobody", &UserChange::Disabled(true)),
        Err(StoreError::UnknownUser { .. })
    ));
    use tengen::store::Sighting;
    assert_eq!(
        s.sight_external("ext", "Ext", 5).expect("first"),
        Sighting::Admitted
    );
    assert_eq!(
        s.sight_external("ext", "Ext", 6).expect("again"),
        Sighting::Admitted
    );
    assert_eq!(
        s.sight_external("alice", "A", 6).expect("clash"),
        Sighting::Clash(Origin::Local)
    );
    s.update_user("ext", &UserChange::Disabled(true))
        .expect("disable");
    assert_eq!(
        s.sight_external("ext", "Ext", 7).expect("disabled"),
        Sighting::Disabled
    );
    let page: Vec<String> = s
        .users("alice", 2)
        .expect("users")
        .into_iter()
        .map(|u| u.id)
        .collect();
    assert_eq!(page, ["bob", "ext"]);
}

fn rating_row(player: &str, rating: f64) -> RatingRow {
    RatingRow {
        player: player.into(),
        pool: "overall".into(),
        rating,
        deviation: 300.0,
        volatility: 0.06,
        games: 1,
        won: 1,
        lost: 0,
        last_game_ms: Some(5),
    }
}

fn rating(game_id: &str, black: (&str, f64), white: (&str, f64)) -> RatingRecord {
    let change = |color: &str, (player, r): (&str, f64), opponent: &str| RatingChangeRow {
        game_id: game_id.into(),
        pool: "overall".into(),
        color: color.into(),
        player: player.into(),
        opponent: opponent.into(),
        at_ms: 5,
        before: [1500.0, 350.0, 0.06],
        after: [r, 300.0, 0.06],
    };
    RatingRecord {
        game_id: game_id.into(),
        changes: vec![
            change("black", black, white.0),
            change("white", white, black.0),
        ],
        standings: vec![rating_row(black.0, black.1), rating_row(white.0, white.1)],
    }
}

fn ratings_are_recorded_in_order_and_rebuilt(b: &Backend) {
    let s = &b.store;
    let rated = |id: &str| Append::Rated { game_id: id.into() };
    s.append(&[
        Append::Create(game("late", 1, "ann", "bob")),
        rated("late"),
        Append::Create(game("early", 2, "ann", "bob")),
        rated("early"),
        Append::Create(game("live", 3, "ann", "bob")),
        rated("live"),
        Append::Create(game("unrated", 4, "ann", "cid")),
        finish("late", "B+R", 20),
        finish("early", "B+R", 10),
        finish("unrated", "B+R", 5),
    ])
    .expect("written");
    let games = s.rated_games().expect("read");
    assert!(games.applied.is_empty());
    assert_eq!(ids(&games.pending), ["early", "late"]);
    s.record_rating(&rating("late", ("ann", 1600.0), ("bob", 1400.0)), 0)
        .expect("late");
    // Made before "late" was applied (by another server, say): refused, nothing written.
    let stale = s.record_rating(&rating("early", ("ann", 1650.0), ("bob", 1350.0)), 0);
    assert!(
        matches!(
            stale,
            Err(StoreError::RatingsMoved {
                applied: 1,
                after: 0
            })
        ),
        "{stale:?}"
    );
    s.record_rating(&rating("early", ("ann", 1650.0), ("bob", 1350.0)), 1)
        .expect("early");
    assert_eq!(
        ids(&s.rated_games().expect("read").applied),
        ["late", "early"]
    );
    for id in ["late", "unrated", "nowhere"] {
        let twice = s.record_rating(&rating(id, ("ann", 0.0), ("bob", 0.0)), 2);
        assert!(
            matches!(twice, Err(StoreError::UnknownGame { .. })),
            "{twice:?}"
        );
    }
    assert_eq!(
        s.player_ratings("ann").expect("ann"),
        [rating_row("ann", 1650.0)]
    );
    let board: Vec<(String, f64)> = s
        .leaderboard("overall", 1)
        .expect("board")
        .into_iter()
        .map(|r| (r.player, r.rating))
        .collect();
    assert_eq!(board, [("ann".to_string(), 1650.0)]);
    let history: Vec<String> = s
        .rating_history("ann", 10)
        .expect("history")
        .into_iter()
        .map(|c| c.game_id)
        .collect();
    assert_eq!(history, ["late", "early"], "oldest first");
    assert_eq!(s.ratings_owed().expect("owed"), 0);
    s.append(&[Append::Rejudge {
        game_id: "unrated".into(),
        result: "W+R".into(),
    }])
    .expect("rejudge unrated");
    assert_eq!(
        s.ratings_owed().expect("owed"),
        0,
        "an unrated game owes nothing"
    );
    s.append(&[Append::Rejudge {
        game_id: "late".into(),
        result: "W+R".into(),
    }])
    .expect("rejudge rated");
    let owed = s.ratings_owed().expect("owed");
    assert!(owed > 0);
    s.replace_ratings(&[rating("early", ("ann", 1550.0), ("bob", 1450.0))], owed)
        .expect("rebuilt");
    assert_eq!(s.ratings_owed().expect("owed"), 0);
    let games = s.rated_games().expect("read");
    assert_eq!(ids(&games.applied), ["early"]);
    assert_eq!(ids(&games.pending), ["late"]);
    assert_eq!(
        s.player_ratings("ann").expect("ann"),
        [rating_row("ann", 1550.0)]
    );
    assert_eq!(
        s.player_name("cid").expect("name").as_deref(),
        Some("cid the White")
    );
    assert_eq!(s.player_name("nobody").expect("name"), None);
    s.create_user(&user("cid", Origin::Local), None, 1)
        .expect("account");
    assert_eq!(s.player_name("cid").expect("name").as_deref(), Some("CID"));
}

fn kibitz(game_id: &str, at_ms: i64) -> KibitzRecord {
    KibitzRecord {
        game_id: game_id.into(),
        at_ms,
        user_id: "kibitzer".into(),
        name: "Kibitzer".into(),
        text: format!("line at {at_ms}"),
    }
}

fn fair_play_rows_and_forfeit_losses(b: &Backend) {
    let s = &b.store;
    s.set_block("a", "b", true, 1).expect("block");
    s.set_block("a", "b", true, 2).expect("again");
    s.set_block("c", "a", true, 3).expect("block");
    assert_eq!(
        s.blocks().expect("blocks"),
        [("a".into(), "b".into()), ("c".into(), "a".into())]
    );
    s.set_block("a", "b", false, 4).expect("unblock");
    assert_eq!(s.blocks().expect("blocks"), [("c".into(), "a".into())]);

    let report = |reporter: &str| NewReport {
        reporter: reporter.into(),
        user: Some("x".into()),
        game_id: Some("g".into()),
        seqs: Some((2, 5)),
        reason: "why".into(),
        at_ms: 9,
    };
    let first = s.file_report(&report("a")).expect("report");
    let second = s.file_report(&report("b")).expect("report");
    assert!(second > first);
    let open = s.open_reports(None, 10).expect("open");
    assert_eq!(open.len(), 2);
    assert_eq!(open[0].report, report("a"));
    assert_eq!(s.open_reports(Some("b"), 10).expect("open")[0].id, second);
    assert!(s.close_report(first).expect("close"));
    assert!(!s.close_report(first).expect("closed already"));
    assert_eq!(s.open_reports(None, 10).expect("open").len(), 1);

    s.create_game(&game("g", 1, "a", "b")).expect("create");
    s.create_game(&game("h", 1, "a", "b")).expect("create");
    s.append(&[kibitz("g", 20), kibitz("h", 5), kibitz("g", 10)].map(Append::Kibitz))
        .expect("kibitz");
    assert_eq!(
        s.kibitz("g").expect("read"),
        [kibitz("g", 10), kibitz("g", 20)]
    );

    let forfeit = |id: &str, at: i64, result: &str| {
        let mut batch = vec![Append::Create(game(id, at, "loser", "winner"))];
        for (seq, kind) in [(1, "game_created"), (2, "presence"), (3, "move_played")] {
            batch.push(Append::Event(EventRecord {
                kind: kind.into(),
                ..event(id, seq)
            }));
        }
        batch.push(Append::Event(EventRecord {
            kind: "game_ended".into(),
            ..event(id, 4)
        }));
        batch.push(finish(id, result, at + 10));
        s.append(&batch).expect("a finished game");
    };
    forfeit("f1", 100, "W+F");
    forfeit("f2", 200, "W+F");
    forfeit("r1", 300, "W+R");
    let losses = s.forfeit_losses("loser", 10).expect("losses");
    let found: Vec<(&str, Vec<&str>)> = losses
        .iter()
        .map(|(g, log)| (g.id.as_str(), log.iter().map(|e| e.kind.as_str()).collect()))
        .collect();
    assert_eq!(
        found,
        [
            ("f2", vec!["presence", "game_ended"]),
            ("f1", vec!["presence", "game_ended"])
        ]
    );
    assert!(s.forfeit_losses("winner", 10).expect("none").is_empty());
}

fn mutes_are_kept_and_undone(b: &Backend) {
    let s = &b.store;
    assert!(s.mutes().expect("none yet").is_empty());
    s.set_mute("a", "b", true, 1).expect("mute");
    s.set_mute("a", "b", true, 2).expect("again");
    s.set_mute("c", "a", true, 3).expect("mute");
    s.set_mute("a", "c", true, 4).expect("mute");
    assert_eq!(
        s.mutes().expect("mutes"),
        [
            ("a".into(), "b".into()),
            ("a".into(), "c".into()),
            ("c".into(), "a".into())
        ]
    );
    s.set_mute("a", "b", false, 5).expect("unmute");
    s.set_mute("a", "b", false, 6).expect("again");
    assert_eq!(
        b.another_node().mutes().expect("mutes"),
        [("a".into(), "c".into()), ("c".into(), "a".into())]
    );
}

fn notice(account: &str, n: i64, digest: bool) -> NewNotice {
    NewNotice {
        account: account.into(),
        kind: "game_ended".into(),
        payload: format!(r#"{{"game_id":"g{n}"}}"#),
        at_ms: n,
        digest,
    }
}

fn notices_are_bounded_paged_and_marked_read(b: &Backend) {
    let s = &b.store;
    let ids: Vec<u64> = (1..=5)
        .map(|n| s.add_notice(&notice("ann", n, false), 3).expect("kept"))
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    s.add_notice(&notice("bob", 9, false), 3).expect("kept");
    // Only ann's newest 3 are kept, newest first; bob's are his own.
    let all = s.notices("ann", None, 10).expect("listed");
    let payloads: Vec<&str> = all.iter().map(|n| n.payload.as_str()).collect();
    assert_eq!(
        payloads,
        [
            r#"{"game_id":"g5"}"#,
            r#"{"game_id":"g4"}"#,
            r#"{"game_id":"g3"}"#
        ]
    );
    assert_eq!((all[0].id, all[0].at_ms, all[0].read), (ids[4], 5, false));
    assert_eq!(all[0].kind, "game_ended");
    let page = s.notices("ann", Some(ids[4]), 1).expect("a page");
    assert_eq!(page.iter().map(|n| n.id).collect::<Vec<_>>(), [ids[3]]);
    assert_eq!(s.unread_notices("ann").expect("count"), 3);
    // Marking up to the middle one reads two; again, none.
    assert_eq!(s.mark_notices_read("ann", ids[3]).expect("marked"), 2);
    assert_eq!(s.mark_notices_read("ann", ids[3]).expect("marked"), 0);
    assert_eq!(b.another_node().unread_notices("ann").expect("count"), 1);
    assert_eq!(s.unread_notices("bob").expect("count"), 1);
    let read: Vec<bool> = s
        .notices("ann", None, 10)
        .unwrap()
        .iter()
        .map(|n| n.read)
        .collect();
    assert_eq!(read, [false, true, true]);
}

fn digests_wait_for_their_time_and_mail_prefs_are_kept(b: &Backend) {
    let s = &b.store;
    assert_eq!(s.mail_prefs("ann").expect("read"), None);
    let prefs = MailPrefs {
        account: "ann".into(),
        address: Some("ann@example.org".into()),
        verified: false,
        modes: r#"{"game_ended":"digest"}"#.into(),
        last_digest_ms: None,
    };
    s.set_mail_prefs(&prefs).expect("kept");
    let verified = MailPrefs {
        verified: true,
        ..prefs.clone()
    };
    s.set_mail_prefs(&verified).expect("replaced");
    assert_eq!(s.mail_prefs("ann").expect("read"), Some(verified.clone()));

    s.add_notice(&notice("ann", 1, false), 10).expect("kept");
    let first = s.add_notice(&notice("ann", 2, true), 10).expect("kept");
    let second = s.add_notice(&notice("ann", 3, true), 10).expect("kept");
    s.add_notice(&notice("bob", 4, true), 10).expect("kept");
    assert_eq!(s.digests_due(1000, 10).expect("due"), ["ann", "bob"]);
    assert_eq!(s.digests_due(1000, 1).expect("due"), ["ann"]);
    let waiting = s.digest_notices("ann").expect("waiting");
    assert_eq!(
        waiting.iter().map(|n| n.id).collect::<Vec<_>>(),
        [first, second]
    );

    // A digest up to the first leaves the second waiting, and ann's next digest is due
    // only once the time has come; bob, who never had one, still is. The digest is
    // claimed once: a second sweep of the same moment (another node's) finds it taken.
    assert!(s.claim_digest("ann", 0, 500).expect("claimed"));
    assert!(!s.claim_digest("ann", 0, 500).expect("taken"));
    s.digest_sent("ann", first).expect("sent");
    assert_eq!(s.digest_notices("ann").unwrap().len(), 1);
    assert_eq!(s.digests_due(499, 10).expect("due"), ["bob"]);
    assert_eq!(s.digests_due(500, 10).expect("due"), ["ann", "bob"]);
    let after = s.mail_prefs("ann").expect("read").expect("kept");
    assert_eq!(after.last_digest_ms, Some(500));
    assert_eq!(after.address, verified.address, "the rest is untouched");
    // An account without preferences gets a row that says when its digest left.
    assert!(s.claim_digest("bob", 0, 700).expect("claimed"));
    s.digest_sent("bob", u64::MAX).expect("sent");
    assert!(s.digest_notices("bob").unwrap().is_empty());
    assert_eq!(
        s.mail_prefs("bob").unwrap().unwrap().last_digest_ms,
        Some(700)
    );
}

fn changes_to_users_standing_are_numbered(b: &Backend) {
    let s = &b.store;
    assert_eq!(s.last_user_change().expect("none yet"), 0);
    for id in ["alice", "bob"] {
        s.create_user(&user(id, Origin::Local), None, 1)
            .expect("create");
    }
    s.update_user("alice", &UserChange::Password("h".into()))
        .expect("a password is no change of standing");
    s.update_user("alice", &UserChange::Disabled(true))
        .expect("disable");
    s.update_user("bob", &UserChange::Role(Role::Referee))
        .expect("role");
    s.update_user("alice", &UserChange::Disabled(false))
        .expect("enable");
    let all = s.user_changes(0, 10).expect("changes");
    let ids: Vec<&str> = all.iter().map(|c| c.user_id.as_str()).collect();
    assert_eq!(ids, ["alice", "bob", "alice"]);
    assert!(all.iter().all(|c| c.token.is_none()), "{all:?}");
    assert!(all.windows(2).all(|w| w[0].seq < w[1].seq), "{all:?}");
    assert_eq!(s.last_user_change().expect("last"), all[2].seq);
    assert_eq!(
        s.user_changes(all[0].seq, 1).expect("after the first"),
        [all[1].clone()]
    );
    assert!(
        s.update_user("nobody", &UserChange::Disabled(true))
            .is_err()
    );
    assert_eq!(
        s.user_changes(0, 10).expect("changes").len(),
        3,
        "nothing numbered"
    );
}

fn api_token(id: &str, user: &str, created_at_ms: i64, expires: Option<i64>) -> TokenRecord {
    TokenRecord {
        id: id.into(),
        user_id: user.into(),
        name: format!("{id}'s name"),
        scopes: "read play".into(),
        hash: format!("hash-of-{id}"),
        created_at_ms,
        expires_at_ms: expires,
        last_used_ms: None,
    }
}

fn personal_tokens_are_bounded_used_and_revoked(b: &Backend) {
    let s = &b.store;
    for id in ["alice", "bob"] {
        s.create_user(&user(id, Origin::Local), None, 1)
            .expect("create");
    }
    assert!(
        s.create_token(&api_token("t1", "alice", 10, None), 2)
            .expect("t1")
    );
    assert!(
        s.create_token(&api_token("t2", "alice", 20, Some(100)), 2)
            .expect("t2")
    );
    assert!(
        !s.create_token(&api_token("t3", "alice", 30, None), 2)
            .expect("a third is over the bound"),
    );
    assert!(
        s.create_token(&api_token("b1", "bob", 30, None), 2)
            .expect("bob has his own bound")
    );
    // Once t2 has expired, it makes room for another.
    assert!(
        s.create_token(&api_token("t3", "alice", 100, None), 2)
            .expect("t3 after t2 expired")
    );
    let listed: Vec<String> = s
        .tokens("alice")
        .expect("list")
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(listed, ["t1", "t3"]);

    let (token, owner) = s
        .use_token("hash-of-t1", 1_000)
        .expect("use")
        .expect("found by its hash");
    assert_eq!((token.id.as_str(), owner.id.as_str()), ("t1", "alice"));
    assert_eq!(
        token.last_used_ms, None,
        "the row as it was before this use"
    );
    let used = |at| {
        s.use_token("hash-of-t1", at)
            .expect("use")
            .expect("found")
            .0
            .last_used_ms
    };
    assert_eq!(used(1_000 + TOUCH_MS - 1), Some(1_000));
    assert_eq!(
        used(1_000 + TOUCH_MS),
        Some(1_000),
        "not written again within a minute"
    );
    assert_eq!(
        b.another_node().tokens("alice").expect("list")[0].last_used_ms,
        Some(1_000 + TOUCH_MS)
    );
    assert_eq!(s.use_token("hash-of-nothing", 1).expect("use"), None);

    let before = s.last_user_change().expect("last");
    assert!(!s.revoke_token("bob", "t1").expect("not bob's"));
    assert!(s.revoke_token("alice", "t1").expect("revoke"));
    assert!(!s.revoke_token("alice", "t1").expect("twice"));
    assert_eq!(s.use_token("hash-of-t1", 2_000).expect("use"), None);
    let changes = s.user_changes(before, 10).expect("changes");
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(
        (changes[0].user_id.as_str(), changes[0].token.as_deref()),
        ("alice", Some("t1"))
    );
}

fn a_player_without_rated_games_becomes_a_bot_once(b: &Backend) {
    let s = &b.store;
    for id in ["ann", "rated1", "ref"] {
        s.create_user(&user(id, Origin::Local), None, 1)
            .expect("create");
    }
    s.update_user("ref", &UserChange::Role(Role::Referee))
        .expect("role");
    // rated1 plays a rated game, still live; ann has played an unrated one.
    s.append(&[
        Append::Create(game("g", 1, "zed", "rated1")),
        Append::Rated {
            game_id: "g".into(),
        },
        Append::Create(game("u", 2, "ann", "zed")),
        finish("u", "B+R", 3),
    ])
    .expect("games");
    let before = s.last_user_change().expect("last");
    assert_eq!(s.make_bot("rated1").expect("make"), MadeBot::Rated);
    assert_eq!(
        s.make_bot("ref").expect("make"),
        MadeBot::NotAPlayer(Role::Referee)
    );
    assert_eq!(s.make_bot("nobody").expect("make"), MadeBot::Unknown);
    assert_eq!(
        s.user("rated1").expect("read").map(|u| u.role),
        Some(Role::Player)
    );
    assert_eq!(s.make_bot("ann").expect("make"), MadeBot::Made);
    assert_eq!(
        s.make_bot("ann").expect("again"),
        MadeBot::NotAPlayer(Role::Bot)
    );
    assert_eq!(
        s.user("ann").expect("read").map(|u| u.role),
        Some(Role::Bot)
    );
    let changes = s.user_changes(before, 10).expect("changes");
    let ids: Vec<&str> = changes.iter().map(|c| c.user_id.as_str()).collect();
    assert_eq!(ids, ["ann"], "only the change made is numbered");

    assert_eq!(s.bots("", 10).expect("bots").len(), 1);
    s.set_bot_profile("ann", r#"{"engine":"x"}"#, 5)
        .expect("profile");
    s.set_bot_profile("ann", r#"{"engine":"y"}"#, 6)
        .expect("replaced");
    let bots = s.bots("", 10).expect("bots");
    assert_eq!(bots.len(), 1);
    assert_eq!(bots[0].0.id, "ann");
    assert_eq!(bots[0].1.as_deref(), Some(r#"{"engine":"y"}"#));
    assert!(s.bots("ann", 10).expect("after ann").is_empty());
    s.update_user("ann", &UserChange::Disabled(true))
        .expect("disable");
    assert!(
        b.another_node().bots("", 10).expect("bots").is_empty(),
        "a disabled bot is not listed"
    );
}

fn time_losses_are_read_with_forfeits(b: &Backend) {
    let s = &b.store;
    for (id, at, result) in [("f", 100, "W+F"), ("t", 200, "W+T"), ("r", 300, "W+R")] {
        let mut batch = vec![Append::Create(game(id, at, "loser", "winner"))];
        batch.push(Append::Event(EventRecord {
            kind: "game_ended".into(),
            ..event(id, 1)
        }));
        batch.push(finish(id, result, at + 10));
        s.append(&batch).expect("a finished game");
    }
    let losses = s.forfeit_losses("loser", 10).expect("losses");
    let ids: Vec<&str> = losses.iter().map(|(g, _)| g.id.as_str()).collect();
    assert_eq!(ids, ["t", "f"]);
}

fn reviews_are_saved_and_counted(b: &Backend) {
    let s = &b.store;
    let review = |id: &str, game_id: Option<&str>| ReviewRecord {
        id: id.into(),
        created_at_ms: 7,
        owner: "ann".into(),
        game_id: game_id.map(str::to_owned),
        move_number: game_id.map(|_| 12),
        sgf: "(;SZ[19];B[pd])".into(),
    };
    s.save_review(&review("r1", Some("g"))).expect("save");
    s.save_review(&review("r2", None)).expect("save");
    assert_eq!(s.review("r1").expect("read"), Some(review("r1", Some("g"))));
    assert_eq!(s.review("r2").expect("read"), Some(review("r2", None)));
    assert_eq!(s.review("r3").expect("read"), None);
    assert_eq!(s.count_reviews("ann").expect("count"), 2);
    assert_eq!(s.count_reviews("bob").expect("count"), 0);
}

fn tournament(id: &str, created_at_ms: i64) -> TournamentRecord {
    TournamentRecord {
        id: id.to_string(),
        name: format!("Cup {id}"),
        created_at_ms,
        stage: "registration".to_string(),
    }
}

fn entry(seq: u64, kind: &str) -> TournamentEntry {
    TournamentEntry {
        seq,
        at_ms: 1_000 + seq as i64,
        kind: kind.to_string(),
        payload: format!("{{\"n\":{seq}}}"),
    }
}

fn tournaments_keep_their_numbered_logs(b: &Backend) {
    let s = &b.store;
    s.create_tournament(&tournament("t1", 10), &entry(1, "created"))
        .expect("created");
    s.create_tournament(&tournament("t2", 20), &entry(1, "created"))
        .expect("created");
    assert!(matches!(
        s.create_tournament(&tournament("t1", 30), &entry(1, "created")),
        Err(StoreError::DuplicateTournament { .. })
    ));
    s.append_tournament(
        "t1",
        &[entry(2, "registered"), entry(3, "paired")],
        "running",
    )
    .expect("appended");
    // A gap, a repeat, and a batch whose second entry is wrong change nothing.
    for bad in [
        vec![entry(5, "x")],
        vec![entry(3, "x")],
        vec![entry(4, "x"), entry(6, "x")],
    ] {
        assert!(matches!(
            s.append_tournament("t1", &bad, "finished"),
            Err(StoreError::TournamentOutOfOrder { .. })
        ));
    }
    assert!(matches!(
        s.append_tournament("nope", &[entry(1, "x")], "running"),
        Err(StoreError::UnknownTournament { .. })
    ));
    let (record, log) = s.tournament("t1").expect("read").expect("exists");
    assert_eq!(record.stage, "running");
    assert_eq!(record.name, "Cup t1");
    assert_eq!(log.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(log[1], entry(2, "registered"));
    assert_eq!(s.tournament("nope").expect("read"), None);
    let listed: Vec<String> = s
        .tournaments(10)
        .expect("list")
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(listed, ["t2", "t1"]);
    assert_eq!(s.tournaments(1).expect("list").len(), 1);
    s.append_tournament("t2", &[entry(2, "ended")], "finished")
        .expect("appended");
    assert_eq!(s.unfinished_tournaments().expect("unfinished"), ["t1"]);
}

fn two_nodes_appending_to_one_tournament_take_turns(b: &Backend) {
    let (one, two) = (b.store.clone(), b.another_node());
    one.create_tournament(&tournament("shared", 1), &entry(1, "created"))
        .expect("created");
    one.append_tournament("shared", &[entry(2, "a")], "running")
        .expect("first node");
    assert!(matches!(
        two.append_tournament("shared", &[entry(2, "b")], "running"),
        Err(StoreError::TournamentOutOfOrder { expected: 3, .. })
    ));
    two.append_tournament("shared", &[entry(3, "b")], "running")
        .expect("second node, next number");
    let (_, log) = one.tournament("shared").expect("read").expect("exists");
    assert_eq!(
        log.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
        ["created", "a", "b"]
    );
}

fn two_nodes_appending_to_one_game_take_turns(b: &Backend) {
    let nodes = [Arc::clone(&b.store), b.another_node()];
    nodes[0]
        .create_game(&game("g", 1, "a", "b"))
        .expect("create");
    const EACH: u64 = 40;
    let writers: Vec<_> = (0..4)
        .map(|i| {
            let store = Arc::clone(&nodes[i % 2]);
            std::thread::spawn(move || {
                let mut written = 0;
                while written < EACH {
                    // Read the next number, then race the others for it.
                    let next = store.events("g").expect("read").len() as u64 + 1;
                    match store.append(&[Append::Event(event("g", next))]) {
                        Ok(()) => written += 1,
                        Err(StoreError::SeqOutOfOrder { .. }) => {}
                        Err(e) => panic!("only a lost race may fail: {e}"),
                    }
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("writer");
    }
    let seqs: Vec<u64> = nodes[1]
        .events("g")
        .expect("events")
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, (1..=4 * EACH).collect::<Vec<_>>());
}

fn batches_naming_games_in_any_order_never_deadlock(b: &Backend) {
    let nodes = [Arc::clone(&b.store), b.another_node()];
    for id in ["g1", "g2"] {
        nodes[0]
            .create_game(&game(id, 1, "a", "b"))
            .expect("create");
    }
    const EACH: u64 = 25;
    let writers: Vec<_> = (0..4)
        .map(|i| {
            let store = Arc::clone(&nodes[i % 2]);
            // Half the writers name g1 first, half g2.
            let order = if i < 2 { ["g1", "g2"] } else { ["g2", "g1"] };
            std::thread::spawn(move || {
                let mut written = 0;
                while written < EACH {
                    let batch: Vec<Append> = order
                        .iter()
                        .map(|id| {
                            let next = store.events(id).expect("read").len() as u64 + 1;
                            Append::Event(event(id, next))
                        })
                        .collect();
                    match store.append(&batch) {
                        Ok(()) => written += 1,
                        Err(StoreError::SeqOutOfOrder { .. }) => {}
                        Err(e) => panic!("only a lost race may fail: {e}"),
                    }
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("writer");
    }
    for id in ["g1", "g2"] {
        let seqs: Vec<u64> = nodes[1]
            .events(id)
            .expect("events")
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, (1..=4 * EACH).collect::<Vec<_>>(), "{id}");
    }
}

#[test]
fn postgres_lost_connections_fail_one_call_and_come_back() {
    let db = postgres_db();
    let store = PgStore::open(db.url()).expect("open");
    store.create_game(&game("g", 1, "a", "b")).expect("create");
    let name = db
        .url()
        .rsplit_once('/')
        .map(|(_, name)| name.to_owned())
        .expect("a database name");
    admin_sql(
        &postgres_admin_url(),
        format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = '{name}' AND pid <> pg_backend_pid()"
        ),
    )
    .expect("the server ends our connections");
    // Each idle connection was ended under it: a call on one fails with an error, then a
    // fresh connection serves the next.
    let mut failures = 0;
    let seqs = loop {
        match store.events("g") {
            Ok(events) => break events.len(),
            Err(StoreError::Postgres { .. }) if failures < 8 => failures += 1,
            Err(e) => panic!("a lost connection is a Postgres error: {e:?}"),
        }
    };
    assert_eq!(seqs, 0);
    store
        .append(&[Append::Event(event("g", 1))])
        .expect("writes work again");
}

#[test]
fn postgres_errors_never_show_the_password() {
    // Nothing listens on port 1.
    let url = "postgres://tengen:hunter2secret@127.0.0.1:1/nothing";
    let err = PgStore::open(url).expect_err("no server there");
    let text = format!("{err} {err:?}");
    assert!(matches!(err, StoreError::Postgres { .. }), "{text}");
    assert!(!text.contains("hunter2secret"), "{text}");
    let err = PgStore::open("postgres://tengen:hunter2secret@127.0.0.1:1/x?sslmode=wrong")
        .expect_err("a bad URL");
    assert!(!format!("{err} {err:?}").contains("hunter2secret"));
}

#[test]
fn postgres_check_writable_fails_on_a_read_only_database() {
    let db = postgres_db();
    let store = PgStore::open(db.url()).expect("open");
    store.check_writable().expect("writable at first");
    let name = db
        .url()
        .rsplit_once('/')
        .map(|(_, name)| name.to_owned())
        .expect("a database name");
    admin_sql(
        &postgres_admin_url(),
        format!(
            "ALTER DATABASE {name} SET default_transaction_read_only = on;
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = '{name}' AND pid <> pg_backend_pid()"
        ),
    )
    .expect("the database turns read-only");
    // The first call may meet a connection the server just ended; after it, every
    // connection is new and read-only.
    let _ = store.check_writable();
    let err = store.check_writable().expect_err("read-only");
    assert!(
        err.to_string().contains("read-only"),
        "the reason is given: {err}"
    );
    assert!(
        store.events("any").is_ok(),
        "reads still work on a read-only database"
    );
}

fn push_sub(account: &str, endpoint: &str, at: i64) -> PushSubscription {
    PushSubscription {
        account: account.into(),
        endpoint: endpoint.into(),
        p256dh: format!("key-{endpoint}"),
        auth: "auth".into(),
        created_ms: at,
    }
}

fn push_subscriptions_are_bounded_replaced_and_forgotten(b: &Backend) {
    let s = &b.store;
    let add = |sub: &PushSubscription| s.add_push_subscription(sub, 2).expect("written");
    assert_eq!(add(&push_sub("ann", "https://p/1", 1)), Subscribed::Kept);
    assert_eq!(add(&push_sub("ann", "https://p/2", 2)), Subscribed::Kept);
    assert_eq!(add(&push_sub("ann", "https://p/3", 3)), Subscribed::Full);
    // The same endpoint again replaces its keys, within the bound.
    let mut fresh = push_sub("ann", "https://p/2", 4);
    fresh.auth = "new".into();
    assert_eq!(add(&fresh), Subscribed::Kept);
    let anns = s.push_subscriptions("ann").expect("read");
    assert_eq!(anns, [push_sub("ann", "https://p/1", 1), fresh.clone()]);
    // A browser is one account's: bob subscribing it takes it from ann.
    assert_eq!(add(&push_sub("bob", "https://p/1", 5)), Subscribed::Kept);
    assert_eq!(s.push_subscriptions("ann").expect("read"), [fresh]);
    assert_eq!(s.push_subscriptions("bob").expect("read").len(), 1);
    // Removed by its account only; by anyone when the service says it is gone.
    assert!(
        !s.remove_push_subscription("https://p/1", Some("ann"))
            .expect("ran")
    );
    assert!(
        s.remove_push_subscription("https://p/1", Some("bob"))
            .expect("ran")
    );
    assert!(
        s.remove_push_subscription("https://p/2", None)
            .expect("ran")
    );
    assert!(
        !s.remove_push_subscription("https://p/2", None)
            .expect("ran")
    );
    assert!(s.push_subscriptions("ann").expect("read").is_empty());
    assert!(s.push_subscriptions("bob").expect("read").is_empty());
}

fn a_disabled_account_is_sent_nothing_more(b: &Backend) {
    let s = &b.store;
    for who in ["ann", "bob"] {
        s.create_user(&user(who, Origin::Local), None, 1)
            .expect("created");
        s.add_push_subscription(&push_sub(who, &format!("https://p/{who}"), 1), 5)
            .expect("subscribed");
        let prefs = MailPrefs {
            account: who.into(),
            address: Some(format!("{who}@example.org")),
            verified: true,
            modes: r#"{"game_ended":"digest"}"#.into(),
            last_digest_ms: None,
        };
        s.set_mail_prefs(&prefs).expect("kept");
        s.add_notice(&notice(who, 1, true), 10).expect("kept");
    }
    // A new password or role keeps what the account is sent.
    s.update_user("ann", &UserChange::Password("$argon2id$y".into()))
        .expect("changed");
    s.update_user("ann", &UserChange::Role(Role::Referee))
        .expect("changed");
    assert_eq!(s.push_subscriptions("ann").expect("read").len(), 1);
    assert_eq!(s.digests_due(1000, 10).expect("due"), ["ann", "bob"]);

    s.update_user("ann", &UserChange::Disabled(true))
        .expect("disabled");
    assert!(s.push_subscriptions("ann").expect("read").is_empty());
    let prefs = s.mail_prefs("ann").expect("read").expect("kept");
    assert_eq!((prefs.address, prefs.verified), (None, false));
    assert_eq!(
        prefs.modes, r#"{"game_ended":"digest"}"#,
        "the choices stay"
    );
    assert!(s.digest_notices("ann").expect("read").is_empty());
    assert_eq!(s.notices("ann", None, 10).expect("read").len(), 1, "kept");
    // A subscribe that reaches the store after the disable (its login checked before)
    // keeps nothing.
    assert_eq!(
        s.add_push_subscription(&push_sub("ann", "https://p/ann-late", 2), 5)
            .expect("answered"),
        Subscribed::Disabled
    );
    assert!(s.push_subscriptions("ann").expect("read").is_empty());
    // Bob, not disabled, is sent as before; enabling ann again brings nothing back.
    assert_eq!(s.digests_due(1000, 10).expect("due"), ["bob"]);
    assert_eq!(s.push_subscriptions("bob").expect("read").len(), 1);
    s.update_user("ann", &UserChange::Disabled(false))
        .expect("enabled");
    assert!(s.push_subscriptions("ann").expect("read").is_empty());
    assert_eq!(
        s.mail_prefs("ann").expect("read").expect("kept").address,
        None
    );
}
