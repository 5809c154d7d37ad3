//! Moves per second through the durable event log with `SyncMode::Full` (every commit
//! fsynced), on a file next to the build (a real disk, not a tmpfs):
//!
//! - `one_commit_per_move`: one `append` transaction per move, one after another, which is
//!   what a server without group commit would do;
//! - `group_commit_200_games`: 200 games play at once, each awaiting its own move's
//!   acknowledgement through the `StoreWriter` before the next, as the room does; the
//!   writer writes each group, fsyncs the log once for it (`EventLog::sync_log`), and only
//!   then acknowledges its moves;
//! - `transaction_of_{1,3,8}_moves`: SQLite's own work for one group, without its fsync
//!   (`EventLog::append_unsynced`), each move in another of 1,500 games, as under load.
//!   Read against each other, they split that work into what a group costs whatever its
//!   size (BEGIN, COMMIT) and what each move adds (its row, and the page of its game it
//!   writes to the log), so a change to either shows up in a number.
//!
//! Criterion's `thrpt` is in moves (elements) per second; a plain summary line follows each.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tempfile::TempDir;
use tengen::store::{
    Append, EventLog, EventRecord, GameRecord, GameStatus, SqliteStore, StoreWriter, SyncMode,
};

const GAMES: usize = 200;
const MOVES_PER_GAME: u64 = 10;

fn temp_store() -> (TempDir, Arc<SqliteStore>) {
    let dir = tempfile::Builder::new()
        .prefix("tengen-store-bench")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("temp dir");
    let store = SqliteStore::open(&dir.path().join("games.sqlite"), SyncMode::Full)
        .expect("open the store");
    (dir, Arc::new(store))
}

fn game(id: String) -> GameRecord {
    GameRecord {
        id,
        created_at_ms: 0,
        settings: r#"{"size":19,"komi":7.5}"#.to_owned(),
        black: "alice".to_owned(),
        white: "bob".to_owned(),
        black_name: "Alice".to_owned(),
        white_name: "Bob".to_owned(),
        status: GameStatus::Live,
        result: None,
        ended_at_ms: None,
        move_count: 0,
    }
}

/// Stores a live game for each of `ids`, in one transaction.
fn create_games(store: &SqliteStore, ids: &[String]) {
    let creates: Vec<Append> = ids
        .iter()
        .map(|id| Append::Create(game(id.clone())))
        .collect();
    store.append(&creates).expect("create games");
}

fn play(game_id: &str, seq: u64) -> Append {
    Append::Event(EventRecord {
        game_id: game_id.to_owned(),
        seq,
        kind: "move_played".to_owned(),
        payload: format!(
            r#"{{"vertex":"D4","move_number":{seq},"clock":{{"black_ms":600000,"white_ms":600000}}}}"#
        ),
        at_ms: 1_700_000_000_000 + seq as i64,
    })
}

/// Games the transactions spread over, as many as `tengen load` plays.
const LIVE_GAMES: usize = 1500;

/// A plain summary line, unless a filter left the benchmark out.
fn report(name: &str, moves: u64, elapsed: Duration) {
    if moves == 0 {
        return;
    }
    let per_second = moves as f64 / elapsed.as_secs_f64().max(f64::EPSILON);
    println!("{name}: {per_second:.0} moves/s ({moves} moves in {elapsed:.2?}, SyncMode::Full)");
}

fn one_commit_per_move(c: &mut Criterion) {
    let (_dir, store) = temp_store();
    store.create_game(&game("solo".to_owned())).expect("create");
    let mut seq = 0;
    let mut total = (0u64, Duration::ZERO);
    let mut group = c.benchmark_group("store");
    group.throughput(Throughput::Elements(1));
    group.bench_function("one_commit_per_move", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                seq += 1;
                store.append(&[play("solo", seq)]).expect("append");
            }
            let elapsed = start.elapsed();
            total.0 += iters;
            total.1 += elapsed;
            elapsed
        })
    });
    group.finish();
    report("store/one_commit_per_move", total.0, total.1);
}

fn group_commit(c: &mut Criterion) {
    let (_dir, store) = temp_store();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    // The writer task lives on this runtime.
    let _entered = runtime.enter();
    // The server's default wait for a group to fill.
    let group_wait = Duration::from_micros(tengen::config::StoreConfig::default().group_wait_us);
    let writer = StoreWriter::spawn(store.clone(), 4 * GAMES, group_wait);
    let mut round = 0;
    let mut total = (0u64, Duration::ZERO);
    let mut group = c.benchmark_group("store");
    group.throughput(Throughput::Elements(GAMES as u64 * MOVES_PER_GAME));
    group.bench_function("group_commit_200_games", |b| {
        b.iter_custom(|iters| {
            let mut elapsed = Duration::ZERO;
            for _ in 0..iters {
                round += 1;
                // Fresh games each round, created outside the timed part.
                let ids: Vec<String> = (0..GAMES).map(|g| format!("r{round}g{g}")).collect();
                create_games(&store, &ids);

                let start = Instant::now();
                runtime.block_on(async {
                    let tasks: Vec<_> = ids
                        .into_iter()
                        .map(|id| {
                            let writer = writer.clone();
                            tokio::spawn(async move {
                                for seq in 1..=MOVES_PER_GAME {
                                    writer.commit(vec![play(&id, seq)]).await?;
                                }
                                Ok::<_, tengen::store::StoreError>(())
                            })
                        })
                        .collect();
                    for task in tasks {
                        task.await.expect("task").expect("commit");
                    }
                });
                elapsed += start.elapsed();
            }
            total.0 += iters * GAMES as u64 * MOVES_PER_GAME;
            total.1 += elapsed;
            elapsed
        })
    });
    group.finish();
    runtime.block_on(writer.close());
    report("store/group_commit_200_games", total.0, total.1);
}

fn transaction_without_fsync(c: &mut Criterion) {
    let (_dir, store) = temp_store();
    let ids: Vec<String> = (0..LIVE_GAMES).map(|g| format!("live{g:04}")).collect();
    create_games(&store, &ids);
    let mut seqs = vec![0u64; LIVE_GAMES];
    let mut next = 0usize;
    let mut group = c.benchmark_group("store");
    for moves in [1usize, 3, 8] {
        group.throughput(Throughput::Elements(moves as u64));
        group.bench_function(format!("transaction_of_{moves}_moves"), |b| {
            b.iter_custom(|iters| {
                let mut elapsed = Duration::ZERO;
                for _ in 0..iters {
                    let batch: Vec<Append> = (0..moves)
                        .map(|_| {
                            // A stride through the games, so that consecutive moves land
                            // on different pages, as 1,500 games' moves do.
                            next = (next + 7919) % LIVE_GAMES;
                            seqs[next] += 1;
                            play(&ids[next], seqs[next])
                        })
                        .collect();
                    let start = Instant::now();
                    store.append_unsynced(&batch).expect("append");
                    elapsed += start.elapsed();
                }
                elapsed
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = one_commit_per_move, group_commit, transaction_without_fsync
}
criterion_main!(benches);
