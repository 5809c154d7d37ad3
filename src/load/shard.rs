//! One process's share of a load run: sets up its games (players seated and joined,
//! spectators joined), waits for the word to start, drives a random legal move in every
//! game at the pace, records latencies and checks every connection's event numbers, then
//! lets the spectators catch up, ends its games and closes.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Semaphore, oneshot, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::conn::{Conn, Fail, GameShared, Got, Seat, Stats};
use super::play::{Table, drive};
use super::wire::{self, Protocol};
use super::{Plan, SetupReport, ShardReport, Violations};
use crate::auth::{claims_for, sign};
use crate::protocol::{Role, ServerFrame, ServerMsg};

/// How long spectators get to catch up with the last move after the run.
const DRAIN: Duration = Duration::from_secs(5);

/// Runs one share: sets up, reports `ready`, waits for `go`, drives the moves for the
/// plan's duration, drains and ends its games, and returns what it measured.
pub async fn run_shard(
    plan: Plan,
    ready: oneshot::Sender<SetupReport>,
    go: oneshot::Receiver<()>,
) -> ShardReport {
    let plan = Arc::new(plan);
    let stats = Arc::new(Stats::new());
    let secret = plan
        .secret_hex
        .as_deref()
        .and_then(|h| hex::decode(h).ok())
        .unwrap_or_default();
    let secret = Arc::new(secret);
    let (stop_tx, stop_rx) = watch::channel(false);

    // Setup: a bounded number of games at once, each seating its players first.
    let started = Instant::now();
    let permits = Arc::new(Semaphore::new(plan.setup_concurrency.max(1)));
    let mut setups = JoinSet::new();
    let spectators = Arc::new(Mutex::new(JoinSet::new()));
    for g in 0..plan.games {
        let (plan, stats, secret, permits) =
            (plan.clone(), stats.clone(), secret.clone(), permits.clone());
        let (spectators, stop_rx) = (spectators.clone(), stop_rx.clone());
        setups.spawn(async move {
            let _permit = permits.acquire_owned().await.ok()?;
            set_up_game(&plan, &stats, &secret, g, &spectators, stop_rx).await
        });
    }
    let mut tables = Vec::new();
    let (mut failed_games, mut failed_spectators) = (0u64, 0u64);
    while let Some(done) = setups.join_next().await {
        match done {
            Ok(Some((table, missing))) => {
                failed_spectators += missing;
                tables.push(table);
            }
            _ => failed_games += 1,
        }
    }
    let connections = tables.len() as u64 * (2 + u64::from(plan.spectators)) - failed_spectators;
    let _ = ready.send(SetupReport {
        connections,
        games: tables.len() as u32,
        failed: failed_games + failed_spectators,
        secs: started.elapsed().as_secs_f64(),
    });
    let go_on = go.await.is_ok();

    // The run: every game moves at the pace, starting at a random phase of it.
    stats.measuring.store(true, Ordering::Relaxed);
    let run_start = Instant::now();
    let deadline = run_start
        + if go_on {
            Duration::from_millis(plan.duration_ms)
        } else {
            Duration::ZERO
        };
    let mut drivers = JoinSet::new();
    for table in tables {
        drivers.spawn(drive(
            plan.clone(),
            stats.clone(),
            table,
            run_start,
            deadline,
        ));
    }
    let mut seated = Vec::new();
    while let Some(done) = drivers.join_next().await {
        if let Ok(Some(table)) = done {
            seated.push(table);
        }
    }
    let run_secs = run_start.elapsed().as_secs_f64();

    // Spectators catch up with each game's last move, or are counted as missing it.
    let drain_until = Instant::now() + DRAIN;
    let behind = |t: &Table| {
        let last = t.shared.last.load(Ordering::Acquire);
        t.shared
            .seen
            .iter()
            .filter(|s| s.load(Ordering::Acquire) < last)
            .count() as u64
    };
    while Instant::now() < drain_until && seated.iter().map(behind).sum::<u64>() > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stats.measuring.store(false, Ordering::Relaxed);
    let missing_at_end = seated.iter().map(behind).sum::<u64>();

    // End the games (tengen keeps a live game's room otherwise) and close everything.
    let _ = stop_tx.send(true);
    let mut closing = JoinSet::new();
    for table in seated {
        let (plan, stats) = (plan.clone(), stats.clone());
        closing.spawn(async move { finish(&plan, &stats, table).await });
    }
    let spectators = std::mem::take(&mut *spectators.lock().unwrap_or_else(|e| e.into_inner()));
    let closed = async {
        while closing.join_next().await.is_some() {}
        let mut spectators = spectators;
        while spectators.join_next().await.is_some() {}
    };
    let _ = tokio::time::timeout(Duration::from_secs(10), closed).await;

    ShardReport {
        setup: SetupReport::default(),
        moves: stats.moves.load(Ordering::Relaxed),
        deliveries: stats.deliveries.load(Ordering::Relaxed),
        run_secs,
        spectator: stats.spectator.snapshot(),
        opponent: stats.opponent.snapshot(),
        ack: stats.ack.snapshot(),
        errors: stats
            .errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone(),
        violations: Violations {
            gaps: stats.gaps.load(Ordering::Relaxed),
            out_of_order: stats.out_of_order.load(Ordering::Relaxed),
            missing_at_end,
        },
        unmatched: stats.unmatched.load(Ordering::Relaxed),
        exhausted: stats.exhausted.load(Ordering::Relaxed),
        client_cpu_secs: 0.0,
    }
}

/// Seats two players in a new game (tengen: seek and accept; baseline: a room) and
/// starts its spectators. Returns the table and how many spectators failed.
async fn set_up_game(
    plan: &Plan,
    stats: &Arc<Stats>,
    secret: &[u8],
    g: u32,
    spectators: &Mutex<JoinSet<()>>,
    stop: watch::Receiver<bool>,
) -> Option<(Table, u64)> {
    let global = plan.first_game + g;
    let first_conn = u64::from(global) * (2 + u64::from(plan.spectators));
    let seated = match plan.protocol {
        Protocol::Tengen => seat_tengen(plan, stats, secret, global, first_conn).await,
        Protocol::Baseline => seat_baseline(plan, stats, global, first_conn).await,
    };
    let (game_id, black, white) = match seated {
        Ok(s) => s,
        Err(Fail(kind)) => {
            stats.error(kind);
            return None;
        }
    };
    let shared = Arc::new(GameShared::new(plan.spectators));
    let mut missing = 0;
    for s in 0..plan.spectators {
        let joined = async {
            let node = plan.node(global, s);
            let mut conn = Conn::open(plan, node, first_conn + 2 + u64::from(s), None).await?;
            conn.seat = Seat::Spectator;
            if plan.protocol == Protocol::Baseline {
                conn.next_seq = Some(1);
            }
            conn.request(stats, 1, wire::join(1, &game_id)).await?;
            Ok::<Conn, Fail>(conn)
        };
        match joined.await {
            Ok(conn) => {
                shared.seen[s as usize].store(conn.last_seq, Ordering::Release);
                let (stats, shared, stop) = (stats.clone(), shared.clone(), stop.clone());
                spectators
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .spawn(watch_game(conn, stats, shared, s as usize, stop));
            }
            Err(Fail(kind)) => {
                stats.error(kind);
                // A spectator that never joined counts as always caught up.
                shared.seen[s as usize].store(u64::MAX, Ordering::Release);
                missing += 1;
            }
        }
    }
    let seed = plan.seed ^ (u64::from(global).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    Some((
        Table {
            game_id,
            black,
            white,
            shared,
            seed,
        },
        missing,
    ))
}

async fn seat_tengen(
    plan: &Plan,
    stats: &Stats,
    secret: &[u8],
    global: u32,
    first_conn: u64,
) -> Result<(String, Conn, Conn), Fail> {
    let token = |color: char| {
        let sub = format!("load-{}-{global}{color}", plan.run_id);
        sign(secret, &claims_for(&sub, None, Role::Player, 24 * 3600))
            .map_err(|e| Fail::new(format!("token: {e}")))
    };
    // Both players create the game on its home node (the lobby of one node is enough).
    let home = plan.node(global, 0);
    let mut black = Conn::open(plan, home, first_conn, Some(&token('b')?)).await?;
    let mut white = Conn::open(plan, home, first_conn + 1, Some(&token('w')?)).await?;
    black.send(wire::seek(1, plan.board_size)).await?;
    let challenge_id = black
        .until(stats, Some(1), |got| match got {
            Got::Other(frame) => match frame.as_ref() {
                ServerFrame::Msg(ServerMsg::ChallengeCreated { challenge, .. }) => {
                    Some(challenge.challenge_id.clone())
                }
                _ => None,
            },
            _ => None,
        })
        .await?;
    let game_id = white
        .request(stats, 1, wire::accept(1, &challenge_id))
        .await?
        .ok_or_else(|| Fail::new("accept: no game id"))?;
    black.request(stats, 2, wire::join(2, &game_id)).await?;
    // In a cluster White plays from the next node: its moves are forwarded to the owner.
    let away = plan.node(global, 1);
    if away != home {
        let moved = Conn::open(plan, away, first_conn + 1, Some(&token('w')?)).await?;
        std::mem::replace(&mut white, moved).close().await;
    }
    white.request(stats, 2, wire::join(2, &game_id)).await?;
    Ok((game_id, black, white))
}

async fn seat_baseline(
    plan: &Plan,
    stats: &Stats,
    global: u32,
    first_conn: u64,
) -> Result<(String, Conn, Conn), Fail> {
    // Ten characters, like tengen's game ids, so frames have the same size.
    let game_id = format!(
        "{:0>4}{global:06}",
        &plan.run_id[..plan.run_id.len().min(4)]
    );
    let mut players = Vec::new();
    for i in 0..2 {
        let mut conn = Conn::open(plan, 0, first_conn + i, None).await?;
        conn.next_seq = Some(1);
        conn.request(stats, 1, wire::join(1, &game_id)).await?;
        players.push(conn);
    }
    let white = players.pop().ok_or_else(|| Fail::new("seat"))?;
    let black = players.pop().ok_or_else(|| Fail::new("seat"))?;
    Ok((game_id, black, white))
}

/// A spectator: reads until told to stop, keeping its last seen event number.
async fn watch_game(
    mut conn: Conn,
    stats: Arc<Stats>,
    shared: Arc<GameShared>,
    index: usize,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            got = conn.recv(&stats, Some(&shared)) => match got {
                Ok(_) => shared.seen[index].store(conn.last_seq, Ordering::Release),
                Err(Fail(kind)) => {
                    stats.error(format!("spectator: {kind}"));
                    return;
                }
            }
        }
    }
    conn.close().await;
}

/// After the run: tengen games are resigned (so the server can close their rooms), then
/// both players close.
async fn finish(plan: &Plan, stats: &Stats, mut t: Table) {
    if plan.protocol == Protocol::Tengen {
        const RESIGN: u64 = 1 << 30;
        let resigned = t
            .black
            .request(stats, RESIGN, wire::resign(RESIGN, &t.game_id));
        let _ = tokio::time::timeout(Duration::from_secs(3), resigned).await;
    }
    t.black.close().await;
    t.white.close().await;
}
