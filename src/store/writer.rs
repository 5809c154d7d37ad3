//! Group commit: one writer owns all writes to the [`EventLog`], and whatever many games
//! queue while it is busy goes into one transaction, so they share one write and one
//! fsync.
//!
//! For a store that flushes its log apart from the write (SQLite at `store.sync =
//! "full"`, see [`EventLog::append_unsynced`]) the writer writes a group, flushes the log
//! ([`EventLog::sync_log`]) and only then answers it; the next group is what queued
//! meanwhile. So a commit waits for at most the group in flight when it arrived, then
//! its own write and flush. Readers of the store (an HTTP game view) can see a group
//! between its write and its flush; nothing is acknowledged or broadcast before the
//! flush.
//!
//! Write and flush run one after the other on one thread: an earlier design overlapped
//! the next group's write with the flush on a second thread, and measured under load
//! that hand-over (a futex wake and two context switches a group, several a move) cost
//! more CPU than the overlap saved in latency, since a group's write takes a fraction
//! of a flush.
//!
//! Under load the writer waits a moment (`store.group_wait_us`) after a group's first
//! commit for others to join it. At 1,500 moves a second with a flush of about 0.3 ms a
//! group held 1.5 moves; the flush, SQLite's six lock calls, and the hand-overs to and
//! from this thread are paid per group, and the wait of 1 ms doubled or tripled its size
//! and took 6-15% off the server's CPU there, and about 12% at 3,000-5,000 moves a
//! second (1-24% step by step; BENCHMARKS.md, "Issue 17, sixth pass"). A move waits at most that much longer.
//! When commits are rare the wait would gather nothing, so the writer waits only while
//! its last group began less than [`BUSY_WAITS`] waits ago; and a group that already
//! holds [`ENOUGH`] commits when it is taken, a burst, is written at once (a
//! closed-loop burst of 200 games a round ran at half speed with the wait).
//!
//! The writer runs on a thread of its own ([`Runner::Thread`]), so a commit is not queued
//! behind thousands of connection tasks on the runtime's workers each time it changes
//! hands: under load those waits, not the disk, were most of a move's latency. On a
//! current-thread runtime (tests on tokio's paused clock) it is a task that blocks on
//! the blocking pool instead ([`Runner::Pool`]): that is the one blocking work the paused
//! clock knows to wait for, so clock tests over a real store stay exact.

use std::future::Future;
use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::{mpsc, oneshot, watch};

use super::{Append, Durability, EventLog, StoreError};

/// The most commit requests folded into one transaction, so one transaction (and the
/// time its waiters wait) stays bounded however deep the queue is.
pub const MAX_BATCH_REQUESTS: usize = 1024;

/// The writer waits for a group to fill only when its last group began less than this
/// many waits ago: at the default 1 ms, when it writes more than 250 groups a second.
const BUSY_WAITS: u32 = 4;

/// A group that already holds this many commits when the writer takes it is written at
/// once: its per-group costs are already spread thin, and commits that came in a burst
/// (all the games of a round at once) would only wait for nothing.
const ENOUGH: usize = 8;

/// Where a commit's answer goes.
type Ack = oneshot::Sender<Result<(), StoreError>>;

/// A commit waiting for its group's transaction.
struct Request {
    items: Vec<Append>,
    ack: Ack,
}

enum Message {
    Commit(Request),
    /// Stop taking new commits, finish the queued ones, and exit.
    Close,
}

/// A cloneable handle to the store's writer task.
///
/// `commit` returns once the items are durable (to the store's sync mode), so the room
/// can acknowledge and broadcast after it. The queue is bounded: when it is full,
/// `commit` waits, slowing the games down instead of growing memory. The task exits
/// after finishing queued commits when every handle is dropped or [`StoreWriter::close`]
/// is called, releasing its reference to the store.
///
/// A failed flush of the log fails every commit waiting for it, and every commit after
/// it with the same error ([`StoreError::Sync`]), without writing them: after a failed
/// fsync the kernel may have dropped the unwritten pages and marked them clean, so a
/// later fsync can succeed without them ("fsyncgate"). What the log holds is then
/// unknown, and nothing more is acknowledged on top of it; the server needs a restart,
/// which recovers from what the disk really holds.
#[derive(Clone, Debug)]
pub struct StoreWriter {
    tx: mpsc::Sender<Message>,
    /// Its sender lives in the writer task; `changed()` fails once the task is gone.
    stopped: watch::Receiver<()>,
}

impl StoreWriter {
    /// Starts the writer with room for `queue` waiting commits, where the current tokio
    /// runtime calls for ([`Runner::for_runtime`]); under load it waits `group_wait` after
    /// a group's first commit for more (see the module's comment).
    ///
    /// Outside a runtime, or if the writer's thread cannot be started, the failure is logged
    /// and every `commit` on the returned handle fails with [`StoreError::WriterStopped`]
    /// (so the readiness probe and the games see it) rather than panicking here.
    pub fn spawn(store: Arc<dyn EventLog>, queue: usize, group_wait: Duration) -> StoreWriter {
        let (tx, rx) = mpsc::channel(queue.max(1));
        let (stopped_tx, stopped) = watch::channel(());
        match Handle::try_current() {
            Ok(runtime) => {
                let runner = Runner::for_runtime(&runtime);
                let writer = run(store, rx, stopped_tx, runner, group_wait);
                runner.start("tengen-store-write", writer);
            }
            // `rx` and `stopped_tx` are dropped here: sends fail, `close` returns at once.
            Err(err) => tracing::error!(error = %err, "the store writer needs a tokio runtime"),
        }
        StoreWriter { tx, stopped }
    }

    /// Commits `items` as one unit (all or nothing) in the next group transaction and
    /// returns when it is durable, or with the error that kept it out.
    ///
    /// A request the store rejects (say a duplicate `seq`) fails alone: the others in the
    /// same group are still written. If this future is dropped after the request was
    /// queued, the items may or may not be written.
    pub async fn commit(&self, items: Vec<Append>) -> Result<(), StoreError> {
        if items.is_empty() {
            return Ok(());
        }
        let (ack, done) = oneshot::channel();
        self.tx
            .send(Message::Commit(Request { items, ack }))
            .await
            .map_err(|_| StoreError::WriterStopped)?;
        done.await.map_err(|_| StoreError::WriterStopped)?
    }

    /// Commits waiting in the queue, not counting the group being written; for metrics
    /// and for noticing a store that falls behind.
    pub fn queued(&self) -> usize {
        self.tx.max_capacity() - self.tx.capacity()
    }

    /// Stops taking commits (from every handle: later ones fail with
    /// [`StoreError::WriterStopped`]), waits until those already queued are written and
    /// acknowledged, and returns once the task has released the store, so graceful
    /// shutdown can then close it.
    pub async fn close(self) {
        // Fails only if the task is already gone, which is what we wait for anyway.
        let _ = self.tx.send(Message::Close).await;
        drop(self.tx);
        let mut stopped = self.stopped;
        // The task never sends; `changed` returns Err when it drops the sender on exit.
        while stopped.changed().await.is_ok() {}
    }
}

/// Where the writer runs, and so where its blocking work does.
#[derive(Clone, Copy, Debug)]
enum Runner {
    /// A thread of its own, driving the writer on a runtime of its own that has nothing
    /// else to run, so the store's calls block that thread only.
    Thread,
    /// A task on the caller's runtime, its store calls on the blocking pool.
    Pool,
}

impl Runner {
    /// A thread, except on a current-thread runtime (see the module's comment).
    fn for_runtime(runtime: &Handle) -> Runner {
        match runtime.runtime_flavor() {
            RuntimeFlavor::CurrentThread => Runner::Pool,
            _ => Runner::Thread,
        }
    }

    /// Starts the writer's loop `writer`. A failure to start is logged and drops `writer`
    /// with the channels it holds, which the handles see as the writer gone.
    fn start(self, name: &str, writer: impl Future<Output = ()> + Send + 'static) {
        match self {
            Runner::Pool => drop(tokio::spawn(writer)),
            Runner::Thread => {
                let started = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .and_then(|runtime| {
                        std::thread::Builder::new()
                            .name(name.to_owned())
                            .spawn(move || runtime.block_on(writer))
                    });
                if let Err(err) = started {
                    tracing::error!(error = %err, thread = name, "the store writer could not start");
                }
            }
        }
    }

    /// Lets a group gather for `wait`. Only on the writer's own thread: on a
    /// current-thread runtime commits come from the one thread that would be blocked,
    /// and clock tests want no real sleeps.
    fn gather(self, wait: Duration) {
        match self {
            Runner::Thread => std::thread::sleep(wait),
            Runner::Pool => {}
        }
    }

    /// Runs the store call `work` where the writer blocks; `None` if it panicked.
    async fn block<T: Send + 'static>(
        self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        match self {
            Runner::Thread => std::panic::catch_unwind(AssertUnwindSafe(work)).ok(),
            Runner::Pool => tokio::task::spawn_blocking(work).await.ok(),
        }
    }
}

/// The writer: wait for one request, if busy wait `group_wait` for more, take
/// everything else already queued (up to the cap), write it as one group, flush the log
/// if the group waits for that, answer it, repeat until the channel is closed and empty.
/// A failed flush is kept, and fails every group after it unwritten (see
/// [`StoreWriter`]).
async fn run(
    store: Arc<dyn EventLog>,
    mut rx: mpsc::Receiver<Message>,
    stopped: watch::Sender<()>,
    runner: Runner,
    group_wait: Duration,
) {
    let mut failure: Option<StoreError> = None;
    let mut batch = Vec::new();
    let mut last_group: Option<Instant> = None;
    while let Some(message) = rx.recv().await {
        take(message, &mut batch, &mut rx);
        take_queued(&mut batch, &mut rx);
        let now = Instant::now();
        // A closing writer takes no new commits, so it has none to wait for.
        if batch.len() < ENOUGH && !rx.is_closed() && busy(last_group, now, group_wait) {
            runner.gather(group_wait);
            take_queued(&mut batch, &mut rx);
        }
        last_group = Some(now);
        let group = std::mem::take(&mut batch);
        if let Some(err) = &failure {
            answer(group.into_iter().map(|r| r.ack), &Err(err.clone()));
            continue;
        }
        let store = store.clone();
        // A panic in the store drops the waiters' acks: they then see WriterStopped, and
        // the next group goes on.
        let written = runner.block(move || write_and_flush(store.as_ref(), group));
        if let Some(Err(err)) = written.await {
            failure = Some(err);
        }
    }
    // Whoever opens the store next, this process or another, finds every event in it.
    let folding = store.clone();
    if let Some(Err(err)) = runner.block(move || folding.fold_log()).await {
        tracing::warn!(error = %err, "the store's move log could not be copied in at the writer's stop; the next start does it");
    }
    // Release the store before announcing the stop, so `close` returning means the
    // caller may close the store.
    drop(store);
    drop(stopped);
}

/// Writes `group`, flushes the log once if any of it waits for that, and answers every
/// request; the error of a failed flush, which no later group may be written after.
fn write_and_flush(store: &dyn EventLog, group: Vec<Request>) -> Result<(), StoreError> {
    let unsynced = commit_batch(store, group);
    if unsynced.is_empty() {
        return Ok(());
    }
    let started = Instant::now();
    let synced = store.sync_log();
    crate::metrics::store_fsync(started.elapsed().as_micros() as u64);
    if let Err(err) = &synced {
        tracing::error!(error = %err, requests = unsynced.len(), "the store's log could not be flushed; no more commits are taken");
    }
    answer(unsynced, &synced);
    synced
}

/// Whether a group whose first commit came at `now` should wait `group_wait` for more:
/// only if the last group began less than [`BUSY_WAITS`] waits before it.
fn busy(last_group: Option<Instant>, now: Instant, group_wait: Duration) -> bool {
    last_group.is_some_and(|last| now.duration_since(last) < group_wait * BUSY_WAITS)
}

fn answer(acks: impl IntoIterator<Item = Ack>, outcome: &Result<(), StoreError>) {
    for ack in acks {
        // A waiter that stopped waiting needs no answer.
        let _ = ack.send(outcome.clone());
    }
}

/// Takes whatever else is queued, up to the cap.
fn take_queued(batch: &mut Vec<Request>, rx: &mut mpsc::Receiver<Message>) {
    while batch.len() < MAX_BATCH_REQUESTS {
        match rx.try_recv() {
            Ok(message) => take(message, batch, rx),
            Err(_) => break,
        }
    }
}

fn take(message: Message, batch: &mut Vec<Request>, rx: &mut mpsc::Receiver<Message>) {
    match message {
        Message::Commit(request) => batch.push(request),
        // Queued messages can still be received after `close`; new sends fail.
        Message::Close => rx.close(),
    }
}

/// A waiter and the span of the group's items that are its request.
struct Waiter {
    span: Range<usize>,
    ack: Ack,
}

/// Writes the batch as one group; returns the acks of the requests written but waiting
/// for the log's flush (the others are answered).
fn commit_batch(store: &dyn EventLog, batch: Vec<Request>) -> Vec<Ack> {
    let mut items = Vec::with_capacity(batch.iter().map(|r| r.items.len()).sum());
    let mut waiters = Vec::with_capacity(batch.len());
    for Request {
        items: mut request_items,
        ack,
    } in batch
    {
        let start = items.len();
        items.append(&mut request_items);
        waiters.push(Waiter {
            span: start..items.len(),
            ack,
        });
    }
    let mut unsynced = Vec::new();
    commit_group(store, &items, waiters, &mut unsynced);
    unsynced
}

/// Writes the requests of `waiters` (contiguous in `items`) in one transaction. If the
/// store rejects one request, the group is halved and each half retried in order, so the
/// bad request fails alone after about 2·log₂(n) transactions and a later request that
/// depends on an earlier good one still sees it. Any other failure (I/O, a full disk) is
/// given to every waiter: retrying would only fail slower. The acks of requests written
/// but not yet durable go to `unsynced`.
fn commit_group(
    store: &dyn EventLog,
    items: &[Append],
    mut waiters: Vec<Waiter>,
    unsynced: &mut Vec<Ack>,
) {
    let (Some(first), Some(last)) = (waiters.first(), waiters.last()) else {
        return;
    };
    let span = first.span.start..last.span.end;
    match store.append_unsynced(&items[span]) {
        Ok(Durability::Durable) => answer(waiters.into_iter().map(|w| w.ack), &Ok(())),
        Ok(Durability::AfterSyncLog) => unsynced.extend(waiters.into_iter().map(|w| w.ack)),
        Err(err) if err.is_rejection() && waiters.len() > 1 => {
            tracing::debug!(error = %err, requests = waiters.len(), "isolating a rejected commit");
            let right = waiters.split_off(waiters.len() / 2);
            commit_group(store, items, waiters, unsynced);
            commit_group(store, items, right, unsynced);
        }
        Err(err) => {
            if !err.is_rejection() {
                tracing::warn!(error = %err, requests = waiters.len(), "a group commit failed");
            }
            answer(waiters.into_iter().map(|w| w.ack), &Err(err));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{EventRecord, GameRecord, GameStatus, GameStore, SqliteStore, SyncMode};
    use std::sync::Mutex;
    use std::time::Duration;
    use tempfile::TempDir;

    fn game(id: &str) -> GameRecord {
        GameRecord {
            id: id.to_owned(),
            created_at_ms: 1,
            settings: "{}".to_owned(),
            black: "a".to_owned(),
            white: "b".to_owned(),
            black_name: "A".to_owned(),
            white_name: "B".to_owned(),
            status: GameStatus::Live,
            result: None,
            ended_at_ms: None,
            move_count: 0,
        }
    }

    fn event(game_id: &str, seq: u64) -> Append {
        Append::Event(EventRecord {
            game_id: game_id.to_owned(),
            seq,
            kind: "move_played".to_owned(),
            payload: "{}".to_owned(),
            at_ms: 5,
        })
    }

    /// What a [`GatedStore`] did, in order, as a test watching it sees it.
    #[derive(Debug, PartialEq)]
    enum Op {
        /// A transaction of this many items was written.
        Wrote(usize),
        /// A flush of the log began.
        SyncStarted,
    }

    /// A real store's event log (all the writer needs, so the stand-in implements
    /// [`EventLog`] alone) that records each write's batch size, can hold the first write until
    /// told to go on, and can hold each flush of the log until the test says how it ends,
    /// so a test can line commits up behind either deterministically.
    struct GatedStore {
        inner: SqliteStore,
        batches: Mutex<Vec<usize>>,
        gate: Mutex<Option<(oneshot::Sender<()>, std::sync::mpsc::Receiver<()>)>>,
        /// When set: every write and flush is reported here, and every flush waits for
        /// the outcome it is given.
        syncs: Option<(mpsc::UnboundedSender<Op>, Mutex<Outcomes>)>,
    }

    /// The outcomes a test gives the held flushes, one each.
    type Outcomes = std::sync::mpsc::Receiver<Result<(), StoreError>>;

    impl GatedStore {
        fn write<T>(&self, batch: &[Append], write: impl FnOnce() -> T) -> T {
            let gate = self.gate.lock().expect("gate").take();
            if let Some((entered, release)) = gate {
                let _ = entered.send(());
                let _ = release.recv();
            }
            self.batches.lock().expect("batches").push(batch.len());
            let written = write();
            if let Some((ops, _)) = &self.syncs {
                let _ = ops.send(Op::Wrote(batch.len()));
            }
            written
        }
    }

    impl EventLog for GatedStore {
        fn append(&self, batch: &[Append]) -> Result<(), StoreError> {
            self.write(batch, || self.inner.append(batch))
        }
        fn append_unsynced(&self, batch: &[Append]) -> Result<Durability, StoreError> {
            self.write(batch, || self.inner.append_unsynced(batch))
        }
        fn fold_log(&self) -> Result<(), StoreError> {
            self.inner.fold_log()
        }
        fn sync_log(&self) -> Result<(), StoreError> {
            if let Some((ops, outcomes)) = &self.syncs {
                let _ = ops.send(Op::SyncStarted);
                outcomes
                    .lock()
                    .expect("outcomes")
                    .recv()
                    .unwrap_or(Err(StoreError::WriterStopped))?;
            }
            self.inner.sync_log()
        }
        fn check_writable(&self) -> Result<(), StoreError> {
            self.inner.check_writable()
        }
    }

    struct Gate {
        entered: oneshot::Receiver<()>,
        release: std::sync::mpsc::Sender<()>,
    }

    fn real_store(games: &[&str], sync: SyncMode) -> (TempDir, SqliteStore) {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("games.sqlite"), sync).expect("open");
        for id in games {
            store.create_game(&game(id)).expect("create");
        }
        (dir, store)
    }

    /// A store in `full` mode whose first write waits at `Gate`.
    fn gated_store(games: &[&str]) -> (TempDir, Arc<GatedStore>, Gate) {
        let (dir, inner) = real_store(games, SyncMode::Full);
        let (entered_tx, entered) = oneshot::channel();
        let (release, release_rx) = std::sync::mpsc::channel();
        let store = Arc::new(GatedStore {
            inner,
            batches: Mutex::new(Vec::new()),
            gate: Mutex::new(Some((entered_tx, release_rx))),
            syncs: None,
        });
        (dir, store, Gate { entered, release })
    }

    /// The test's side of a store whose flushes wait to be told how they end.
    struct SyncGate {
        ops: mpsc::UnboundedReceiver<Op>,
        outcomes: std::sync::mpsc::Sender<Result<(), StoreError>>,
    }

    impl SyncGate {
        async fn next(&mut self) -> Op {
            tokio::time::timeout(Duration::from_secs(10), self.ops.recv())
                .await
                .expect("the store was used")
                .expect("the store is alive")
        }

        fn end_sync(&self, outcome: Result<(), StoreError>) {
            self.outcomes.send(outcome).expect("a flush is waiting");
        }
    }

    fn sync_gated_store(games: &[&str], sync: SyncMode) -> (TempDir, Arc<GatedStore>, SyncGate) {
        let (dir, inner) = real_store(games, sync);
        let (ops_tx, ops) = mpsc::unbounded_channel();
        let (outcomes, outcomes_rx) = std::sync::mpsc::channel();
        let store = Arc::new(GatedStore {
            inner,
            batches: Mutex::new(Vec::new()),
            gate: Mutex::new(None),
            syncs: Some((ops_tx, Mutex::new(outcomes_rx))),
        });
        (dir, store, SyncGate { ops, outcomes })
    }

    /// Commits `items` from a task of its own, its outcome sent to `done` under `name`.
    fn commit_in_background(
        writer: &StoreWriter,
        name: &'static str,
        items: Vec<Append>,
        done: &mpsc::UnboundedSender<(&'static str, Result<(), StoreError>)>,
    ) {
        let (writer, done) = (writer.clone(), done.clone());
        tokio::spawn(async move {
            let _ = done.send((name, writer.commit(items).await));
        });
    }

    async fn outcome(
        done: &mut mpsc::UnboundedReceiver<(&'static str, Result<(), StoreError>)>,
    ) -> (&'static str, Result<(), StoreError>) {
        tokio::time::timeout(Duration::from_secs(10), done.recv())
            .await
            .expect("a commit was answered")
            .expect("the tasks are alive")
    }

    async fn wait_for_queue(writer: &StoreWriter, n: usize) {
        tokio::time::timeout(Duration::from_secs(10), async {
            while writer.queued() < n {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
        .await
        .expect("the commits were queued");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn fifty_concurrent_commits_share_one_transaction() {
        let ids: Vec<String> = (0..50).map(|i| format!("g{i}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let (_dir, store, gate) = gated_store(&refs);
        let writer = StoreWriter::spawn(store.clone(), 64, Duration::ZERO);

        // The first commit holds the writer inside `append` ...
        let first = tokio::spawn({
            let writer = writer.clone();
            async move { writer.commit(vec![event("g0", 1)]).await }
        });
        gate.entered.await.expect("writer entered append");
        // ... while 49 more games queue theirs.
        let mut tasks = Vec::new();
        for id in &ids[1..] {
            let writer = writer.clone();
            let id = id.clone();
            tasks.push(tokio::spawn(async move {
                writer.commit(vec![event(&id, 1)]).await
            }));
        }
        wait_for_queue(&writer, 49).await;
        gate.release.send(()).expect("release");

        first.await.expect("task").expect("first commit");
        for task in tasks {
            task.await.expect("task").expect("commit acknowledged");
        }
        assert_eq!(*store.batches.lock().expect("batches"), [1, 49]);
        for id in &ids {
            assert_eq!(
                store.inner.events(id).expect("events").len(),
                1,
                "{id} is stored"
            );
        }
        writer.close().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn under_load_a_commit_sent_while_the_group_waits_joins_it() {
        let (_dir, store, mut gate) = sync_gated_store(&["a", "b", "c"], SyncMode::Full);
        // Long enough that c's commit is surely sent within it.
        let writer = StoreWriter::spawn(store.clone(), 64, Duration::from_secs(1));
        let (done_tx, mut done) = mpsc::unbounded_channel();
        // The first group does not wait: nothing came before it.
        commit_in_background(&writer, "a", vec![event("a", 1)], &done_tx);
        assert_eq!(gate.next().await, Op::Wrote(1));
        assert_eq!(gate.next().await, Op::SyncStarted);
        // b queues while a's flush is held ...
        commit_in_background(&writer, "b", vec![event("b", 1)], &done_tx);
        wait_for_queue(&writer, 1).await;
        gate.end_sync(Ok(()));
        assert_eq!(outcome(&mut done).await.0, "a");
        // ... and once the writer takes it, it waits, the last group being that recent,
        // so c, sent only now, joins b's group.
        tokio::time::timeout(Duration::from_secs(10), async {
            while writer.queued() > 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await
        .expect("the writer took b's commit");
        commit_in_background(&writer, "c", vec![event("c", 1)], &done_tx);
        assert_eq!(gate.next().await, Op::Wrote(2));
        assert_eq!(gate.next().await, Op::SyncStarted);
        gate.end_sync(Ok(()));
        for _ in 0..2 {
            let (name, result) = outcome(&mut done).await;
            result.unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert_eq!(*store.batches.lock().expect("batches"), [1, 2]);
        writer.close().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_group_that_is_already_large_does_not_wait() {
        let ids: Vec<String> = (0..=ENOUGH).map(|i| format!("g{i}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let (_dir, store, mut gate) = sync_gated_store(&refs, SyncMode::Full);
        // Far longer than `SyncGate::next` waits: a group that waited fails the test.
        let writer = StoreWriter::spawn(store.clone(), 64, Duration::from_secs(60));
        let (done_tx, mut done) = mpsc::unbounded_channel();
        commit_in_background(&writer, "first", vec![event("g0", 1)], &done_tx);
        assert_eq!(gate.next().await, Op::Wrote(1));
        assert_eq!(gate.next().await, Op::SyncStarted);
        // A burst queues behind the held flush ...
        for id in ["g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8"] {
            commit_in_background(&writer, "burst", vec![event(id, 1)], &done_tx);
        }
        wait_for_queue(&writer, ENOUGH).await;
        gate.end_sync(Ok(()));
        // ... and is written as soon as the writer takes it, busy as it is.
        assert_eq!(gate.next().await, Op::Wrote(ENOUGH));
        assert_eq!(gate.next().await, Op::SyncStarted);
        gate.end_sync(Ok(()));
        for _ in 0..=ENOUGH {
            let (name, result) = outcome(&mut done).await;
            result.unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        writer.close().await;
    }

    #[test]
    fn a_group_waits_only_when_the_last_one_began_recently() {
        let wait = Duration::from_millis(1);
        let now = Instant::now() + Duration::from_secs(1);
        assert!(!busy(None, now, wait), "the first group");
        assert!(busy(Some(now - wait), now, wait));
        assert!(busy(Some(now - wait * 3), now, wait));
        assert!(!busy(Some(now - wait * BUSY_WAITS), now, wait), "quiet");
        assert!(
            !busy(Some(now - Duration::from_secs(1)), now, wait),
            "quiet"
        );
        assert!(!busy(Some(now), now, Duration::ZERO), "turned off");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_rejected_commit_does_not_fail_its_neighbours() {
        let (_dir, store, gate) = gated_store(&["a", "b", "c", "d"]);
        store.inner.append(&[event("b", 1)]).expect("b has event 1");
        let writer = StoreWriter::spawn(store.clone(), 64, Duration::ZERO);

        let hold = tokio::spawn({
            let writer = writer.clone();
            async move { writer.commit(vec![event("d", 1)]).await }
        });
        gate.entered.await.expect("writer entered append");
        let requests = [
            vec![event("a", 1), event("a", 2)],
            vec![event("b", 1)], // duplicate
            vec![
                Append::Create(game("e")),
                event("e", 1),
                event("c", 1),
                Append::Finish {
                    game_id: "c".to_owned(),
                    result: "B+R".to_owned(),
                    ended_at_ms: 9,
                },
            ],
            vec![event("e", 2)], // depends on the request before it
        ];
        let mut tasks = Vec::new();
        for items in requests {
            let handle = writer.clone();
            tasks.push(tokio::spawn(async move { handle.commit(items).await }));
            // Keep queue order equal to this list's order.
            wait_for_queue(&writer, tasks.len()).await;
        }
        gate.release.send(()).expect("release");
        hold.await.expect("task").expect("d commits");

        let mut outcomes = Vec::new();
        for task in tasks {
            outcomes.push(task.await.expect("task"));
        }
        assert!(outcomes[0].is_ok(), "{:?}", outcomes[0]);
        assert!(
            matches!(
                outcomes[1],
                Err(StoreError::SeqOutOfOrder {
                    seq: 1,
                    expected: 2,
                    ..
                })
            ),
            "{:?}",
            outcomes[1]
        );
        assert!(outcomes[2].is_ok(), "{:?}", outcomes[2]);
        assert!(outcomes[3].is_ok(), "{:?}", outcomes[3]);
        assert_eq!(store.inner.events("a").expect("events").len(), 2);
        assert_eq!(store.inner.events("b").expect("events").len(), 1);
        assert_eq!(store.inner.events("e").expect("events").len(), 2);
        let c = store.inner.game("c").expect("read").expect("exists");
        assert_eq!(c.status, GameStatus::Finished);
        // The group of four (8 items) was tried once, then halved around the bad request:
        // [a a, b] fails and splits into [a a] and [b]; [e e c c, e] commits whole.
        assert_eq!(*store.batches.lock().expect("batches"), [1, 8, 3, 2, 1, 5]);
        writer.close().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn close_finishes_queued_commits_then_refuses_new_ones() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Arc::new(
            SqliteStore::open(&dir.path().join("games.sqlite"), SyncMode::Normal).expect("open"),
        );
        store.create_game(&game("g")).expect("create");
        let writer = StoreWriter::spawn(store.clone(), 8, Duration::ZERO);
        let other = writer.clone();

        // Commits from one game in order: each queued before close is acknowledged.
        let queued = tokio::spawn({
            let writer = writer.clone();
            async move {
                for seq in 1..=100 {
                    writer.commit(vec![event("g", seq)]).await?;
                }
                Ok::<_, StoreError>(())
            }
        });
        queued.await.expect("task").expect("all committed");
        writer.close().await;

        let late = other.commit(vec![event("g", 101)]).await;
        assert!(matches!(late, Err(StoreError::WriterStopped)), "{late:?}");
        assert_eq!(store.events("g").expect("events").len(), 100);
        // The thread let go of the store, so it can be closed cleanly now.
        drop(other);
        let store = Arc::try_unwrap(store).expect("the writer released the store");
        store.close().expect("close");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_every_handle_drains_the_queue_and_stops_the_thread() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Arc::new(
            SqliteStore::open(&dir.path().join("games.sqlite"), SyncMode::Normal).expect("open"),
        );
        let store_dyn: Arc<dyn EventLog> = store.clone();
        let writer = StoreWriter::spawn(store_dyn, 4, Duration::ZERO);
        let ack = {
            let writer = writer.clone();
            tokio::spawn(async move { writer.commit(vec![Append::Create(game("g"))]).await })
        };
        ack.await.expect("task").expect("created");
        let mut stopped = writer.stopped.clone();
        drop(writer);
        tokio::time::timeout(Duration::from_secs(10), async {
            while stopped.changed().await.is_ok() {}
        })
        .await
        .expect("the thread stopped");
        assert_eq!(
            Arc::strong_count(&store),
            1,
            "the thread released the store"
        );
        assert!(store.game("g").expect("read").is_some());
    }

    #[tokio::test]
    async fn an_empty_commit_is_a_no_op() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Arc::new(
            SqliteStore::open(&dir.path().join("games.sqlite"), SyncMode::Normal).expect("open"),
        );
        let writer = StoreWriter::spawn(store, 1, Duration::ZERO);
        writer.commit(Vec::new()).await.expect("nothing to do");
        writer.close().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn commits_queued_during_a_flush_are_written_and_flushed_together_after_it() {
        let (_dir, store, mut syncs) = sync_gated_store(&["a", "b", "c"], SyncMode::Full);
        let writer = StoreWriter::spawn(store.clone(), 64, Duration::ZERO);
        let (done_tx, mut done) = mpsc::unbounded_channel();

        commit_in_background(&writer, "a", vec![event("a", 1)], &done_tx);
        assert_eq!(syncs.next().await, Op::Wrote(1));
        assert_eq!(syncs.next().await, Op::SyncStarted);
        // While a's flush is held, b and c queue up and nothing is written.
        commit_in_background(&writer, "b", vec![event("b", 1)], &done_tx);
        commit_in_background(&writer, "c", vec![event("c", 1), event("c", 2)], &done_tx);
        wait_for_queue(&writer, 2).await;
        assert!(
            syncs.ops.try_recv().is_err(),
            "nothing is written during a flush"
        );
        assert!(
            done.try_recv().is_err(),
            "nothing is answered before its flush"
        );

        syncs.end_sync(Ok(()));
        let (name, answer) = outcome(&mut done).await;
        assert_eq!(name, "a");
        answer.expect("a is durable");
        // b and c are one group: one transaction of their three items, one flush.
        assert_eq!(syncs.next().await, Op::Wrote(3));
        assert_eq!(syncs.next().await, Op::SyncStarted);
        assert!(done.try_recv().is_err(), "b and c wait for their flush");
        syncs.end_sync(Ok(()));
        let mut answered = [outcome(&mut done).await, outcome(&mut done).await];
        answered.sort_by_key(|(name, _)| *name);
        assert_eq!(
            answered.map(|(name, answer)| (name, answer.is_ok())),
            [("b", true), ("c", true)]
        );

        writer.close().await;
        assert!(
            syncs.ops.try_recv().is_err(),
            "two writes and two flushes for three commits"
        );
        assert_eq!(store.inner.events("c").expect("events").len(), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_flush_fails_its_waiters_and_every_later_commit() {
        let (_dir, store, mut syncs) = sync_gated_store(&["a", "b", "c"], SyncMode::Full);
        let writer = StoreWriter::spawn(store.clone(), 64, Duration::ZERO);
        let (done_tx, mut done) = mpsc::unbounded_channel();

        commit_in_background(&writer, "a", vec![event("a", 1)], &done_tx);
        assert_eq!(syncs.next().await, Op::Wrote(1));
        assert_eq!(syncs.next().await, Op::SyncStarted);
        commit_in_background(&writer, "b", vec![event("b", 1)], &done_tx);
        wait_for_queue(&writer, 1).await;
        let disk = StoreError::Sync {
            path: "games.sqlite-wal".into(),
            cause: Arc::new(std::io::Error::other("EIO")),
        };
        syncs.end_sync(Err(disk));

        // a's flush failed, and b, queued behind it, is refused unwritten: nothing is
        // written on top of a log whose state is unknown.
        for _ in 0..2 {
            let (name, answer) = outcome(&mut done).await;
            assert!(
                matches!(answer, Err(StoreError::Sync { .. })),
                "{name}: {answer:?}"
            );
        }
        let late = writer.commit(vec![event("c", 1)]).await;
        assert!(matches!(late, Err(StoreError::Sync { .. })), "{late:?}");
        for id in ["b", "c"] {
            assert!(
                store.inner.events(id).expect("events").is_empty(),
                "{id} was not written"
            );
        }

        writer.close().await;
        assert!(
            syncs.ops.try_recv().is_err(),
            "nothing written or flushed after the failure"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_store_that_is_durable_on_write_is_answered_without_a_flush() {
        // At `sync = normal` a write is all there is; a flush would wait here forever.
        let (_dir, store, mut syncs) = sync_gated_store(&["g"], SyncMode::Normal);
        let writer = StoreWriter::spawn(store.clone(), 8, Duration::ZERO);
        for seq in 1..=3 {
            writer
                .commit(vec![event("g", seq)])
                .await
                .expect("committed");
            assert_eq!(syncs.next().await, Op::Wrote(1));
        }
        writer.close().await;
        assert!(syncs.ops.try_recv().is_err(), "no flush was asked for");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn full_mode_commits_go_through_the_flush_and_survive_a_reopen() {
        let ids: Vec<String> = (0..20).map(|i| format!("g{i}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let (dir, store) = real_store(&refs, SyncMode::Full);
        let store = Arc::new(store);
        let writer = StoreWriter::spawn(store.clone(), 64, Duration::ZERO);
        let flushes_before = fsync_count();
        let mut tasks = Vec::new();
        for id in ids.clone() {
            let writer = writer.clone();
            tasks.push(tokio::spawn(async move {
                for seq in 1..=5 {
                    writer.commit(vec![event(&id, seq)]).await?;
                }
                Ok::<_, StoreError>(())
            }));
        }
        for task in tasks {
            task.await.expect("task").expect("committed");
        }
        writer.close().await;
        assert!(fsync_count() > flushes_before, "the flushes were measured");
        Arc::try_unwrap(store)
            .expect("the writer released the store")
            .close()
            .expect("close");

        let reopened =
            SqliteStore::open(&dir.path().join("games.sqlite"), SyncMode::Full).expect("reopen");
        for id in &ids {
            assert_eq!(reopened.events(id).expect("events").len(), 5, "{id}");
        }
    }

    /// Flushes measured so far, by this process (other tests add to it too).
    fn fsync_count() -> u64 {
        crate::metrics::render(0)
            .lines()
            .find_map(|line| line.strip_prefix("tengen_store_fsync_seconds_count "))
            .and_then(|n| n.parse().ok())
            .expect("the fsync histogram is rendered")
    }
}
