//! The SQLite store's own tests: its file, its move log and its group commit, beside the
//! scenarios both backends share (`tests/store_backends.rs`).

use super::checkpoint::{CHECKPOINT_PAGES, fold};
use super::last_seqs::LAST_SEQ;
use super::log::{INSERT_EVENT, open_if_present};
use super::*;
use crate::store::{
    Append, Durability, EventLog, EventRecord, FairPlayStore, GameQuery, GameRecord, GameStatus,
    GameStore, KibitzRecord,
};
use proptest::prelude::*;
use rusqlite::Connection;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use tempfile::TempDir;

fn temp_db() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("games.sqlite");
    (dir, path)
}

fn open(path: &Path) -> SqliteStore {
    SqliteStore::open(path, SyncMode::Normal).expect("open the store")
}

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

#[test]
fn a_game_and_its_events_round_trip_through_the_file() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    let g = game("g1", 10, "alice", "bob");
    store.create_game(&g).expect("create");
    store.append(&events("g1", 1..=2)).expect("first events");
    let mut batch = events("g1", 3..=4);
    batch.push(Append::MoveCount {
        game_id: "g1".to_owned(),
        move_count: 4,
    });
    store.append(&batch).expect("more events");
    // A game can also be created in the same batch as its first event.
    store
        .append(&[
            Append::Create(game("g2", 11, "carol", "dave")),
            Append::Event(event("g2", 1)),
        ])
        .expect("create with first event");

    let expected = GameRecord {
        move_count: 4,
        ..g.clone()
    };
    assert_eq!(store.game("g1").expect("read"), Some(expected.clone()));
    let want: Vec<EventRecord> = (1..=4).map(|seq| event("g1", seq)).collect();
    assert_eq!(store.events("g1").expect("events"), want);
    assert_eq!(
        store.events_in("g1", 2..4).expect("a range of events"),
        want[1..3],
        "a range reads its seqs only, the end excluded"
    );
    assert_eq!(store.events("g2").expect("events"), vec![event("g2", 1)]);
    assert_eq!(store.game("nope").expect("read"), None);
    assert!(store.events("nope").expect("events").is_empty());
    store.close().expect("close");

    let store = open(&path);
    assert_eq!(store.game("g1").expect("read"), Some(expected));
    assert_eq!(store.events("g1").expect("events"), want);
}

/// What the file itself holds: the game row's move count and each event's.
fn stored_counts(store: &SqliteStore, id: &str) -> (i64, Vec<Option<i64>>) {
    let conn = store.lock().expect("lock");
    let row = conn
        .query_row("SELECT move_count FROM games WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .expect("the game's row");
    let mut stmt = conn
        .prepare("SELECT move_count FROM events WHERE game_id = ?1 ORDER BY seq")
        .expect("prepare");
    let events = stmt
        .query_map([id], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    (row, events)
}

#[test]
fn a_move_count_is_kept_on_its_event_and_copied_into_the_row_when_the_game_ends() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.create_game(&game("g", 1, "a", "b")).expect("create");
    let count = |move_count| Append::MoveCount {
        game_id: "g".to_owned(),
        move_count,
    };
    let read = |store: &SqliteStore| store.game("g").expect("read").map(|g| g.move_count);

    store
        .append(&[Append::Event(event("g", 1)), count(1)])
        .expect("a move");
    assert_eq!(read(&store), Some(1));
    assert_eq!(
        stored_counts(&store, "g"),
        (0, vec![Some(1)]),
        "the move wrote its event, not the game's row"
    );
    // An event that is not a move carries no count; the last counted one still says.
    store.append(&events("g", 2..=2)).expect("an event");
    assert_eq!(read(&store), Some(1));
    // A count with no event before it goes on the game's last event.
    store.append(&[count(5)]).expect("a count alone");
    assert_eq!(stored_counts(&store, "g"), (0, vec![Some(1), Some(5)]));
    let listed = store.list_games(&GameQuery::default()).expect("list");
    assert_eq!(listed.iter().map(|g| g.move_count).collect::<Vec<_>>(), [5]);

    store
        .append(&[Append::Finish {
            game_id: "g".to_owned(),
            result: "B+R".to_owned(),
            ended_at_ms: 9,
        }])
        .expect("finish");
    assert_eq!(stored_counts(&store, "g").0, 5, "copied into the row");
    assert_eq!(read(&store), Some(5));

    // A game with no events keeps a count in its row.
    store.create_game(&game("e", 2, "a", "b")).expect("create");
    store
        .append(&[Append::MoveCount {
            game_id: "e".to_owned(),
            move_count: 2,
        }])
        .expect("a count");
    assert_eq!(stored_counts(&store, "e"), (2, vec![]));
    assert_eq!(
        store.game("e").expect("read").map(|g| g.move_count),
        Some(2)
    );
}

fn synchronous(store: &SqliteStore) -> i64 {
    store
        .lock()
        .expect("lock")
        .pragma_query_value(None, "synchronous", |r| r.get(0))
        .expect("pragma")
}

/// Events with something else about their game in the batch, which SQLite writes
/// (plain events go to the move log).
fn with_chat(game_id: &str, seqs: std::ops::RangeInclusive<u64>) -> Vec<Append> {
    let mut batch = events(game_id, seqs);
    batch.push(Append::Kibitz(kibitz(game_id, 1)));
    batch
}

/// A store in `full` mode (so with a move log) holding game "g".
fn full_store_with_game() -> (TempDir, PathBuf, SqliteStore) {
    let (dir, path) = temp_db();
    let store = SqliteStore::open(&path, SyncMode::Full).expect("open");
    store
        .create_game(&game("g", 1, "alice", "bob"))
        .expect("create");
    (dir, path, store)
}

/// The game's events `seqs`, then its move count after them (one per event).
fn counted(game_id: &str, seqs: std::ops::RangeInclusive<u64>) -> Vec<Append> {
    let move_count = *seqs.end() as u32;
    let mut batch = events(game_id, seqs);
    batch.push(Append::MoveCount {
        game_id: game_id.into(),
        move_count,
    });
    batch
}

/// How many of the game's events SQLite itself holds.
fn in_file(store: &SqliteStore, id: &str) -> i64 {
    store
        .conn
        .lock()
        .expect("lock")
        .query_row(
            "SELECT count(*) FROM events WHERE game_id = ?1",
            [id],
            |r| r.get(0),
        )
        .expect("count")
}

#[test]
fn in_full_mode_a_group_write_leaves_the_flush_to_sync_log() {
    let (_dir, _path, store) = full_store_with_game();
    let written = store.append_unsynced(&with_chat("g", 1..=2));
    assert_eq!(written.expect("written"), Durability::AfterSyncLog);
    // The connection stays at NORMAL (1) for the next group, unswitched...
    let raw = |store: &SqliteStore| -> i64 {
        let conn = store.conn.lock().expect("lock");
        conn.pragma_query_value(None, "synchronous", |r| r.get(0))
            .expect("pragma")
    };
    assert_eq!(raw(&store), 1);
    store
        .append_unsynced(&with_chat("g", 3..=3))
        .expect("written");
    assert_eq!(raw(&store), 1);
    // ...and anything else that takes it finds FULL (2) again.
    assert_eq!(synchronous(&store), 2);
    assert_eq!(raw(&store), 2);
    store.sync_log().expect("flushed");
    // A rejected group write changes nothing; whatever comes next still finds FULL.
    let refused = store.append_unsynced(&events("g", 2..=2));
    assert!(
        matches!(refused, Err(StoreError::SeqOutOfOrder { .. })),
        "{refused:?}"
    );
    assert_eq!(synchronous(&store), 2);
    assert_eq!(store.events("g").expect("events").len(), 3);
}

#[test]
fn appending_events_prepares_its_statements_once() {
    let (_dir, _path, store) = full_store_with_game();
    for seq in 1..=20 {
        store
            .append_unsynced(&with_chat("g", seq..=seq))
            .expect("written");
    }
    let conn = store.conn.lock().expect("lock");
    let check = conn.prepare_cached(LAST_SEQ).expect("cached");
    assert_eq!(
        check.get_status(rusqlite::StatementStatus::Run),
        1,
        "the game's last number is read from the file once, then known"
    );
    let insert = conn.prepare_cached(INSERT_EVENT).expect("cached");
    assert_eq!(insert.get_status(rusqlite::StatementStatus::Run), 20);
    assert_eq!(insert.get_status(rusqlite::StatementStatus::RePrepare), 0);
}

#[test]
fn plain_events_go_to_the_move_log_and_reads_see_them_before_and_after_the_copy() {
    let (_dir, _path, store) = full_store_with_game();
    assert_eq!(
        store
            .append_unsynced(&counted("g", 1..=3))
            .expect("written"),
        Durability::AfterSyncLog
    );
    store.sync_log().expect("flushed");
    assert_eq!(in_file(&store, "g"), 0, "logged, not in SQLite yet");
    assert_eq!(
        store.events("g").expect("events"),
        (1..=3).map(|n| event("g", n)).collect::<Vec<_>>()
    );
    assert_eq!(store.game("g").expect("game").expect("found").move_count, 3);
    // A rejected plain event writes nothing anywhere.
    let refused = store.append_unsynced(&events("g", 3..=3));
    assert!(
        matches!(refused, Err(StoreError::SeqOutOfOrder { expected: 4, .. })),
        "{refused:?}"
    );
    let log = store.log.clone().expect("a move log");
    assert!(fold(&store.conn.lock().expect("lock"), &log, true).expect("copied"));
    assert_eq!(in_file(&store, "g"), 3, "copied in");
    assert_eq!(store.events("g").expect("events").len(), 3, "once each");
    assert_eq!(store.game("g").expect("game").expect("found").move_count, 3);
    store
        .append_unsynced(&events("g", 4..=4))
        .expect("the next one");
    assert_eq!(store.events_in("g", 3..5).expect("events").len(), 2);
}

#[test]
fn finishing_a_game_copies_its_logged_events_in_first() {
    let (_dir, _path, store) = full_store_with_game();
    store.append_unsynced(&counted("g", 1..=2)).expect("logged");
    let finish = [
        Append::Event(event("g", 3)),
        Append::Finish {
            game_id: "g".into(),
            result: "B+R".into(),
            ended_at_ms: 9,
        },
    ];
    store.append_unsynced(&finish).expect("finished");
    store.sync_log().expect("flushed");
    assert_eq!(in_file(&store, "g"), 3);
    let finished = store.game("g").expect("game").expect("found");
    assert_eq!(
        (finished.status, finished.move_count),
        (GameStatus::Finished, 2)
    );
    assert_eq!(store.events("g").expect("events").len(), 3);
}

/// Copies the files of the database `from` with these suffixes that exist to the
/// same names beside `to`.
fn copy_beside(from: &Path, to: &Path, suffixes: &[&str]) {
    for suffix in suffixes {
        let src = move_log::side_path(from, suffix);
        if src.exists() {
            fs::copy(&src, move_log::side_path(to, suffix)).expect("copy");
        }
    }
}

/// Copies the database, its SQLite log and the move log as a crash would leave
/// them: what was flushed, with the store still open.
fn crash_copy(from: &Path, to: &Path) {
    copy_beside(from, to, &["", "-wal", "-moves-0", "-moves-1"]);
}

#[test]
fn logged_events_outlive_a_crash_and_are_copied_in_at_the_next_open() {
    let (dir, path, store) = full_store_with_game();
    store.append_unsynced(&events("g", 1..=4)).expect("logged");
    store.sync_log().expect("flushed");
    let copy = dir.path().join("after-crash.sqlite");
    crash_copy(&path, &copy);
    // A second store on the same file finds the log taken, and writes directly.
    let beside = SqliteStore::open(&path, SyncMode::Full).expect("open beside");
    assert!(beside.log.is_none());
    drop(beside);

    let reopened = SqliteStore::open(&copy, SyncMode::Full).expect("reopen");
    assert_eq!(in_file(&reopened, "g"), 4, "copied in at the open");
    assert_eq!(reopened.events("g").expect("events").len(), 4);
    reopened
        .append_unsynced(&events("g", 5..=5))
        .expect("the next one");
    reopened.sync_log().expect("flushed");
    drop(reopened);
    // Closing copies the rest in.
    let raw = Connection::open(&copy).expect("raw");
    let stored: i64 = raw
        .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
        .expect("count");
    assert_eq!(stored, 5);
}

#[test]
fn a_move_log_that_does_not_fit_the_database_is_refused() {
    let (dir, path, store) = full_store_with_game();
    store.append_unsynced(&events("g", 1..=2)).expect("logged");
    store.sync_log().expect("flushed");
    let other = dir.path().join("other.sqlite");
    drop(SqliteStore::open(&other, SyncMode::Full).expect("another database"));
    copy_beside(&path, &other, &["-moves-0", "-moves-1"]);
    let refused = SqliteStore::open(&other, SyncMode::Full);
    assert!(
        matches!(refused, Err(StoreError::Corrupt { .. })),
        "{refused:?}"
    );
}

#[test]
fn in_normal_mode_a_group_write_is_all_there_is() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store
        .create_game(&game("g", 1, "alice", "bob"))
        .expect("create");
    let written = store.append_unsynced(&events("g", 1..=1));
    assert_eq!(written.expect("written"), Durability::Durable);
    assert_eq!(synchronous(&store), 1, "NORMAL");
}

#[test]
fn a_missing_log_has_nothing_to_flush() {
    let (dir, path) = temp_db();
    let missing = open_if_present(&dir.path().join("games.sqlite-wal"));
    assert!(missing.expect("no error").is_none());
    fs::write(&path, b"x").expect("write");
    assert!(open_if_present(&path).expect("opened").is_some());
}

#[test]
fn the_log_is_checkpointed_while_open_and_reused_under_steady_writes() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    let size = |p: &Path| fs::metadata(p).map_or(0, |m| m.len());
    for g in 0..200 {
        store
            .create_game(&game(&format!("g{g}"), g, "alice", "bob"))
            .expect("create");
    }
    // The log is held open from here on.
    store.sync_log().expect("flushed");
    let db_before = size(&path);
    // One commit per move, games all over the file: every commit adds at least one
    // page to the log, and no commit ever checkpoints by itself. The writer goes flat
    // out for a burst of commits, then slowly, a commit at a time, until the log starts
    // afresh (the checkpoint sequence number in the log's header, offset 12, moves), so
    // a checkpointer thread starved by a loaded machine does not lose a race to a writer
    // that never stops; a log that is never reset fails at the deadline.
    let restarts = || {
        let mut header = [0u8; 16];
        fs::File::open(&wal)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut header))
            .map_or(0, |()| {
                u32::from_be_bytes([header[12], header[13], header[14], header[15]])
            })
    };
    const BURST: u64 = 2 * CHECKPOINT_PAGES as u64;
    const ROUNDS: u32 = 8;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut seqs = [0u64; 200];
    let mut commit = |g: usize| {
        seqs[g] += 1;
        store
            .append(&events(&format!("g{g}"), seqs[g]..=seqs[g]))
            .expect("append");
    };
    let mut commits = 0u64;
    for _ in 0..ROUNDS {
        let seen = restarts();
        for _ in 0..BURST {
            commit((commits % 200) as usize);
            commits += 1;
        }
        while restarts() == seen {
            assert!(
                std::time::Instant::now() < deadline,
                "the log was never reset: {} bytes after {commits} commits",
                size(&wal)
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
            commit((commits % 200) as usize);
            commits += 1;
        }
    }
    assert!(size(&path) > db_before, "the checkpointer copied pages in");
    assert!(
        size(&wal) < commits * 4096 / 2,
        "the log was reused, not grown: {} bytes for {commits} commits",
        size(&wal)
    );
    assert_eq!(store.events("g7").expect("events").len() as u64, seqs[7]);
    #[cfg(unix)]
    {
        // Rewritten from its start, the log is still the file first opened, so the
        // descriptor `sync_log` holds flushes the log SQLite writes.
        use std::os::unix::fs::MetadataExt;
        let held = store.wal_file.lock().expect("lock");
        let held = held.as_ref().expect("held").metadata().expect("fstat");
        let now = fs::metadata(&wal).expect("stat");
        assert_eq!((held.dev(), held.ino()), (now.dev(), now.ino()));
        assert!(held.nlink() > 0);
    }
    store.sync_log().expect("flushed");
    store.close().expect("close");
    assert!(
        !wal.exists(),
        "closing still folds the log in and removes it"
    );
}

#[test]
fn only_live_games_come_back_for_recovery() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    for (id, at) in [("late", 30), ("early", 10), ("done", 20)] {
        store
            .create_game(&game(id, at, "alice", "bob"))
            .expect("create");
    }
    store.append(&events("late", 1..=3)).expect("events");
    store.append(&events("done", 1..=2)).expect("events");
    store.append(&events("early", 1..=1)).expect("events");
    store
        .append(&[
            Append::Event(event("done", 3)),
            Append::Finish {
                game_id: "done".to_owned(),
                result: "W+R".to_owned(),
                ended_at_ms: 99,
            },
        ])
        .expect("finish");

    let live = store.unfinished_games().expect("unfinished");
    let ids: Vec<&str> = live.iter().map(|(g, _)| g.id.as_str()).collect();
    assert_eq!(ids, ["early", "late"], "oldest first, finished left out");
    let seqs: Vec<u64> = live[1].1.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert!(live[1].1.iter().all(|e| e.game_id == "late"));

    let done = store.game("done").expect("read").expect("exists");
    assert_eq!(done.status, GameStatus::Finished);
    assert_eq!(done.result.as_deref(), Some("W+R"));
    assert_eq!(done.ended_at_ms, Some(99));

    // A result is never overwritten.
    let again = store.append(&[Append::Finish {
        game_id: "done".to_owned(),
        result: "B+R".to_owned(),
        ended_at_ms: 100,
    }]);
    assert!(
        matches!(again, Err(StoreError::AlreadyFinished { .. })),
        "{again:?}"
    );
    let done = store.game("done").expect("read").expect("exists");
    assert_eq!(done.result.as_deref(), Some("W+R"));
}

fn kibitz(game_id: &str, at_ms: i64) -> KibitzRecord {
    KibitzRecord {
        game_id: game_id.to_owned(),
        at_ms,
        user_id: "kibitzer".to_owned(),
        name: "Kibitzer".to_owned(),
        text: format!("line at {at_ms}"),
    }
}

#[test]
fn spectators_chat_is_kept_per_game_oldest_first() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.create_game(&game("g", 1, "a", "b")).expect("create");
    store.create_game(&game("h", 1, "a", "b")).expect("create");
    let lines = [kibitz("g", 20), kibitz("h", 5), kibitz("g", 10)];
    store
        .append(&lines.map(Append::Kibitz))
        .expect("kept in one batch");
    drop(store);
    let store = open(&path);
    let kept = store.kibitz("g").expect("read");
    assert_eq!(kept, [kibitz("g", 10), kibitz("g", 20)]);
    assert_eq!(store.kibitz("none").expect("read"), []);
}

#[test]
fn requests_about_unknown_or_taken_games_are_refused() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.create_game(&game("g", 1, "a", "b")).expect("create");
    let dup = store.create_game(&game("g", 2, "c", "d"));
    assert!(
        matches!(dup, Err(StoreError::DuplicateGame { .. })),
        "{dup:?}"
    );
    assert_eq!(
        store.game("g").expect("read").map(|g| g.black),
        Some("a".to_owned())
    );

    let unknown = [
        Append::Event(event("x", 1)),
        Append::MoveCount {
            game_id: "x".to_owned(),
            move_count: 1,
        },
        Append::Finish {
            game_id: "x".to_owned(),
            result: "0".to_owned(),
            ended_at_ms: 1,
        },
        Append::Kibitz(kibitz("x", 1)),
    ];
    for item in unknown {
        let err = store.append(std::slice::from_ref(&item));
        assert!(
            matches!(err, Err(StoreError::UnknownGame { .. })),
            "{item:?}: {err:?}"
        );
        assert!(err.err().is_some_and(|e| e.is_rejection()));
    }
}

fn fence(game_id: &str, fence: u64) -> Append {
    Append::Fence {
        game_id: game_id.to_owned(),
        fence,
    }
}

fn stored_fence(store: &SqliteStore, game_id: &str) -> i64 {
    store
        .lock()
        .expect("lock")
        .query_row("SELECT fence FROM games WHERE id = ?1", [game_id], |row| {
            row.get(0)
        })
        .expect("fence")
}

#[test]
fn a_fence_only_grows_and_a_stale_claim_rolls_the_batch_back() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.create_game(&game("g", 1, "a", "b")).expect("create");
    assert_eq!(stored_fence(&store, "g"), 0, "a new game is unfenced");
    store
        .append(&[fence("g", 0)])
        .expect("an equal claim passes");
    store
        .append(&[fence("g", 5)])
        .expect("a higher claim passes");
    assert_eq!(stored_fence(&store, "g"), 5);
    store
        .append(&[fence("g", 5), Append::Event(event("g", 1))])
        .expect("the owner claims again and writes");

    // A former owner's claim fails, and with it everything in its batch.
    let err = store.append(&[
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
    assert_eq!(store.game("h").expect("read"), None);
    assert_eq!(store.events("g").expect("events").len(), 1);
    assert_eq!(stored_fence(&store, "g"), 5);

    // A number SQLite cannot hold is no claim either.
    let err = store.append(&[fence("g", u64::MAX)]);
    assert!(matches!(err, Err(StoreError::Fenced { .. })), "{err:?}");
    assert_eq!(stored_fence(&store, "g"), 5);

    let err = store.append(&[fence("x", 1)]);
    assert!(
        matches!(err, Err(StoreError::UnknownGame { .. })),
        "{err:?}"
    );
}

#[test]
fn game_lists_page_newest_first_without_skipping_ties() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    let games = [
        game("a", 100, "alice", "bob"),
        game("b", 200, "carol", "alice"),
        game("c", 200, "bob", "carol"),
        game("d", 200, "alice", "dave"),
        game("e", 300, "bob", "dave"),
        game("f", 400, "alice", "carol"),
        game("g", 500, "erin", "bob"),
    ];
    let batch: Vec<Append> = games.iter().cloned().map(Append::Create).collect();
    store.append(&batch).expect("create");
    store
        .append(&[Append::Finish {
            game_id: "f".to_owned(),
            result: "B+3.5".to_owned(),
            ended_at_ms: 450,
        }])
        .expect("finish");

    let all = store.list_games(&GameQuery::default()).expect("list");
    let ids: Vec<&str> = all.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["g", "f", "e", "d", "c", "b", "a"]);

    // Pages of 2 with the (created_at_ms, id) cursor cross the three-way tie at 200.
    let mut paged = Vec::new();
    let mut query = GameQuery {
        limit: 2,
        ..GameQuery::default()
    };
    loop {
        let page = store.list_games(&query).expect("page");
        assert!(page.len() <= 2);
        let Some(last) = page.last() else { break };
        query.before_ms = Some(last.created_at_ms);
        query.before_id = Some(last.id.clone());
        paged.extend(page.into_iter().map(|g| g.id));
    }
    assert_eq!(paged, ["g", "f", "e", "d", "c", "b", "a"]);

    // A bare millisecond cursor excludes that whole millisecond.
    let before = store
        .list_games(&GameQuery {
            before_ms: Some(200),
            ..GameQuery::default()
        })
        .expect("list");
    assert_eq!(
        before.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(),
        ["a"]
    );

    let alice = store
        .list_games(&GameQuery {
            player: Some("alice".to_owned()),
            ..GameQuery::default()
        })
        .expect("list");
    let ids: Vec<&str> = alice.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["f", "d", "b", "a"], "alice as Black or White");

    let alice_live_page = store
        .list_games(&GameQuery {
            player: Some("alice".to_owned()),
            status: Some(GameStatus::Live),
            before_ms: Some(200),
            before_id: Some("d".to_owned()),
            limit: 1,
        })
        .expect("list");
    let ids: Vec<&str> = alice_live_page.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(ids, ["b"]);

    let finished = store
        .list_games(&GameQuery {
            status: Some(GameStatus::Finished),
            ..GameQuery::default()
        })
        .expect("list");
    assert_eq!(
        finished.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(),
        ["f"]
    );

    let none = store
        .list_games(&GameQuery {
            limit: 0,
            ..GameQuery::default()
        })
        .expect("list");
    assert!(none.is_empty());
}

#[test]
fn a_list_never_returns_more_than_the_cap() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    let batch: Vec<Append> = (0..GameQuery::MAX_LIMIT + 5)
        .map(|i| Append::Create(game(&format!("g{i:03}"), i64::from(i), "a", "b")))
        .collect();
    store.append(&batch).expect("create");
    let page = store
        .list_games(&GameQuery {
            limit: u32::MAX,
            ..GameQuery::default()
        })
        .expect("list");
    assert_eq!(page.len(), GameQuery::MAX_LIMIT as usize);
    assert_eq!(page[0].id, "g204");
}

#[test]
fn a_duplicate_seq_fails_the_whole_batch() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.create_game(&game("g", 1, "a", "b")).expect("create");
    store.append(&events("g", 1..=2)).expect("events");

    let err = store.append(&[Append::Event(event("g", 2))]);
    assert!(
        matches!(
            err,
            Err(StoreError::SeqOutOfOrder {
                seq: 2,
                expected: 3,
                ..
            })
        ),
        "{err:?}"
    );

    // A duplicate after good items: nothing of the batch may be written.
    let mut replaced = event("g", 1);
    replaced.payload = r#"{"vertex":"Q16"}"#.to_owned();
    let err = store.append(&[
        Append::Create(game("h", 2, "c", "d")),
        Append::Event(event("g", 3)),
        Append::MoveCount {
            game_id: "g".to_owned(),
            move_count: 3,
        },
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
    assert_eq!(store.game("h").expect("read"), None);
    assert_eq!(
        store.game("g").expect("read").map(|g| g.move_count),
        Some(0)
    );
    let want: Vec<EventRecord> = (1..=2).map(|seq| event("g", seq)).collect();
    assert_eq!(
        store.events("g").expect("events"),
        want,
        "history unchanged"
    );
    store
        .append(&[Append::Event(event("g", 3))])
        .expect("the rolled-back event's number is still the next");
}

#[test]
fn a_gap_or_zero_seq_is_refused() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.create_game(&game("g", 1, "a", "b")).expect("create");
    for seq in [0, 2] {
        let err = store.append(&[Append::Event(event("g", seq))]);
        assert!(
            matches!(err, Err(StoreError::SeqOutOfOrder { expected: 1, .. })),
            "seq {seq}: {err:?}"
        );
    }
    store.append(&events("g", 1..=2)).expect("events");
    let err = store.append(&[Append::Event(event("g", 4))]);
    assert!(
        matches!(
            err,
            Err(StoreError::SeqOutOfOrder {
                seq: 4,
                expected: 3,
                ..
            })
        ),
        "{err:?}"
    );
    let err = store.append(&[Append::Event(event("g", u64::MAX))]);
    assert!(
        matches!(err, Err(StoreError::SeqOutOfOrder { .. })),
        "{err:?}"
    );
    assert_eq!(store.events("g").expect("events").len(), 2);
}

/// Deterministic bytes that are not a SQLite header.
fn garbage(len: usize) -> Vec<u8> {
    let mut state: u32 = 0x2545_f491;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state.to_le_bytes()[0]
        })
        .collect()
}

fn assert_refused_untouched(path: &Path, err: StoreError, bytes: &[u8]) {
    let text = err.to_string();
    assert!(
        text.contains(&path.display().to_string()),
        "the message names the file: {text}"
    );
    assert_eq!(fs::read(path).expect("read back"), bytes, "file unchanged");
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    assert!(!wal.exists(), "no WAL file was created beside it");
}

#[test]
fn a_file_of_garbage_is_refused_and_left_alone() {
    let (_dir, path) = temp_db();
    for bytes in [garbage(8192), b"hello, this is not a database\n".to_vec()] {
        fs::write(&path, &bytes).expect("write garbage");
        let err = SqliteStore::open(&path, SyncMode::Full).expect_err("refused");
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
        assert_refused_untouched(&path, err, &bytes);
    }
}

#[test]
fn a_damaged_page_is_caught_by_the_quick_check() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.create_game(&game("g", 1, "a", "b")).expect("create");
    store.append(&events("g", 1..=50)).expect("events");
    store.close().expect("close");
    let mut bytes = fs::read(&path).expect("read");
    let page_size = 4096;
    assert!(bytes.len() > 2 * page_size, "the file has a second page");
    // Scribble over the b-tree header of page 2.
    for byte in &mut bytes[page_size..page_size + 12] {
        *byte = 0xff;
    }
    fs::write(&path, &bytes).expect("damage");
    let err = SqliteStore::open(&path, SyncMode::Full).expect_err("refused");
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert_refused_untouched(&path, err, &bytes);
}

#[test]
fn a_directory_is_not_a_database() {
    let (dir, _path) = temp_db();
    let err = SqliteStore::open(dir.path(), SyncMode::Full).expect_err("refused");
    assert!(matches!(err, StoreError::IsDirectory { .. }), "{err:?}");
    assert!(err.to_string().contains(&dir.path().display().to_string()));
}

#[test]
fn a_database_from_a_newer_tengen_is_refused() {
    let (_dir, path) = temp_db();
    {
        let conn = Connection::open(&path).expect("raw open");
        conn.execute_batch(&format!(
            "CREATE TABLE games (id TEXT PRIMARY KEY);
             PRAGMA application_id = {};
             PRAGMA user_version = 99;",
            migrations::APPLICATION_ID
        ))
        .expect("make a future schema");
    }
    let bytes = fs::read(&path).expect("read");
    let err = SqliteStore::open(&path, SyncMode::Full).expect_err("refused");
    assert!(
        matches!(err, StoreError::TooNew { found: 99, .. }),
        "{err:?}"
    );
    assert_refused_untouched(&path, err, &bytes);
}

#[test]
fn another_programs_database_is_refused() {
    let (_dir, path) = temp_db();
    {
        let conn = Connection::open(&path).expect("raw open");
        conn.execute_batch("CREATE TABLE notes (body TEXT);")
            .expect("someone else's schema");
    }
    let bytes = fs::read(&path).expect("read");
    let err = SqliteStore::open(&path, SyncMode::Full).expect_err("refused");
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert_refused_untouched(&path, err, &bytes);
}

#[test]
fn reopening_keeps_everything_and_migrates_once() {
    let (_dir, path) = temp_db();
    let store = SqliteStore::open(&path, SyncMode::Full).expect("open");
    assert_eq!(store.sync_mode(), SyncMode::Full);
    assert_eq!(store.path(), path);
    store.create_game(&game("g", 1, "a", "b")).expect("create");
    store.append(&events("g", 1..=3)).expect("events");
    store.close().expect("close");

    for _ in 0..2 {
        let store = SqliteStore::open(&path, SyncMode::Full).expect("reopen");
        assert_eq!(store.events("g").expect("events").len(), 3);
        let conn = store.lock().expect("lock");
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .expect("version");
        assert_eq!(version, migrations::latest_version());
        let mode: String = conn
            .pragma_query_value(None, "journal_mode", |row| row.get(0))
            .expect("mode");
        assert_eq!(mode, "wal");
        let sync: i64 = conn
            .pragma_query_value(None, "synchronous", |row| row.get(0))
            .expect("sync");
        assert_eq!(sync, 2, "FULL");
    }
}

#[test]
fn a_read_only_database_fails_the_writability_check() {
    let (dir, path) = temp_db();
    let store = open(&path);
    store.create_game(&game("g", 1, "a", "b")).expect("create");
    store.check_writable().expect("a fresh store is writable");
    store.close().expect("close");
    let before = fs::read(&path).expect("read");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).expect("chmod file");

    // Root (as in CI) ignores permission bits, so a chmod alone proves nothing there.
    // SQLite's own read-only open is the mechanism that holds for everyone. (The
    // directory stays writable for this part: a reader of a WAL database must be
    // able to create its shared-memory file.)
    let read_only = SqliteStore::open_read_only(&path).expect("open read-only");
    assert_eq!(read_only.events("g").expect("reads work").len(), 0);
    let err = read_only.check_writable().expect_err("not writable");
    assert!(matches!(err, StoreError::Sqlite { .. }), "{err:?}");
    assert!(err.to_string().contains(&path.display().to_string()));
    let write = read_only.append(&[Append::Event(event("g", 1))]);
    assert!(write.is_err(), "{write:?}");
    drop(read_only);

    // Where the permission bits do bite (not root), a normal open of a 0444 file in a
    // 0555 directory must not pass the check either. Probe: if we can still create a
    // file in the directory, we are privileged and this part cannot fail honestly.
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o555)).expect("chmod dir");
    let privileged = fs::write(dir.path().join("probe"), b"x").is_ok();
    if !privileged {
        let outcome = SqliteStore::open(&path, SyncMode::Full).and_then(|s| s.check_writable());
        assert!(
            outcome.is_err(),
            "a 0444 file in a 0555 directory is not writable"
        );
    }

    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod dir");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).expect("chmod file");
    assert_eq!(
        fs::read(&path).expect("read"),
        before,
        "nothing was written"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever numbers arrive, alone or in batches, the store keeps exactly the
    /// 1, 2, 3 … prefix it accepted, per game, and refuses everything else: a batch
    /// with one wrong number writes nothing of itself.
    #[test]
    fn only_the_next_seq_is_ever_accepted(
        batches in proptest::collection::vec(
            proptest::collection::vec((0usize..3, 0u64..6), 1..4),
            1..40,
        )
    ) {
        let (_dir, path) = temp_db();
        let store = open(&path);
        let ids = ["g0", "g1", "g2"];
        for (i, id) in ids.iter().enumerate() {
            store.create_game(&game(id, i as i64, "a", "b")).expect("create");
        }
        let mut next = [1u64; 3];
        for batch in batches {
            let items: Vec<Append> =
                batch.iter().map(|&(g, seq)| Append::Event(event(ids[g], seq))).collect();
            let outcome = store.append(&items);
            let mut after = next;
            let mut first_wrong = None;
            for &(g, seq) in &batch {
                if seq != after[g] {
                    first_wrong = Some(after[g]);
                    break;
                }
                after[g] += 1;
            }
            match first_wrong {
                None => {
                    prop_assert!(outcome.is_ok(), "{:?}", outcome);
                    next = after;
                }
                Some(want) => prop_assert!(
                    matches!(outcome, Err(StoreError::SeqOutOfOrder { expected, .. }) if expected == want),
                    "{:?}", outcome
                ),
            }
        }
        for (g, id) in ids.iter().enumerate() {
            let seqs: Vec<u64> = store.events(id).expect("events").iter().map(|e| e.seq).collect();
            prop_assert_eq!(seqs, (1..next[g]).collect::<Vec<_>>());
        }
    }

    /// Through the move log, whatever mix of plain groups (some with a wrong
    /// number), groups SQLite writes, copies, clean reopenings and crashes: every
    /// game reads back exactly the events accepted, each once, in order.
    #[test]
    fn the_move_log_loses_and_repeats_nothing(
        ops in proptest::collection::vec((0u8..6, 0usize..3, 1u64..4, any::<bool>()), 1..24)
    ) {
        let (dir, path) = temp_db();
        let mut path = path;
        let mut store = SqliteStore::open(&path, SyncMode::Full).expect("open");
        let ids = ["g0", "g1", "g2"];
        for (i, id) in ids.iter().enumerate() {
            store.create_game(&game(id, i as i64, "a", "b")).expect("create");
        }
        let mut next = [1u64; 3];
        for (step, (op, g, n, flag)) in ops.into_iter().enumerate() {
            let first = next[g];
            match op {
                // Plain events: to the log; a wrong first number writes nothing.
                0 | 1 => {
                    let start = if flag && op == 1 { first + 1 } else { first };
                    let outcome = store.append_unsynced(&events(ids[g], start..=start + n - 1));
                    if start == first {
                        prop_assert!(outcome.is_ok(), "{:?}", outcome);
                        next[g] += n;
                    } else {
                        prop_assert!(matches!(outcome, Err(StoreError::SeqOutOfOrder { .. })), "{:?}", outcome);
                    }
                    store.sync_log().expect("flushed");
                }
                // Events with chat: SQLite, after the game's logged events.
                2 => {
                    store.append_unsynced(&with_chat(ids[g], first..=first + n - 1)).expect("written");
                    store.sync_log().expect("flushed");
                    next[g] += n;
                }
                3 => {
                    let log = store.log.clone().expect("a move log");
                    fold(&store.conn.lock().expect("lock"), &log, flag).expect("copied");
                }
                // A clean stop and a new start.
                4 => {
                    drop(store);
                    store = SqliteStore::open(&path, SyncMode::Full).expect("reopen");
                }
                // A crash: the files as they are, opened elsewhere.
                _ => {
                    let copy = dir.path().join(format!("crash-{step}.sqlite"));
                    crash_copy(&path, &copy);
                    drop(store);
                    path = copy;
                    store = SqliteStore::open(&path, SyncMode::Full).expect("recover");
                }
            }
            for (g, id) in ids.iter().enumerate() {
                let seqs: Vec<u64> = store.events(id).expect("events").iter().map(|e| e.seq).collect();
                prop_assert_eq!(seqs, (1..next[g]).collect::<Vec<_>>());
            }
        }
    }
}
