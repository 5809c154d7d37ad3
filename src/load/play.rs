//! Playing one game: random legal moves from the rules engine at the run's pace, each
//! sent by the player to move and waited for on both players' connections.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::time::{Instant, MissedTickBehavior};

use super::Plan;
use super::conn::{Conn, Fail, GameShared, Got, STEP_TIMEOUT, Stats};
use super::wire::{self, Protocol};
use crate::protocol::GameSettings;
use crate::rules::{Color, Game, Move, Vertex};

/// A game ready to be driven: its two players and the state its spectators share.
pub(super) struct Table {
    pub(super) game_id: String,
    pub(super) black: Conn,
    pub(super) white: Conn,
    pub(super) shared: Arc<GameShared>,
    pub(super) seed: u64,
}

/// xorshift64*: cheap, and a game's moves follow from the run's seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as usize) % n.max(1)
    }
}

/// A random legal move other than a pass that does not fill the mover's own one-point
/// eye (so games go on, with captures, for hundreds of moves); None when there is none.
fn random_move(game: &Game, rng: &mut Rng) -> Option<Move> {
    let board = game.board();
    let color = game.to_move();
    let size = board.size();
    let good = |v: Vertex| {
        board.get(v).is_none()
            && !board.neighbors(v).all(|n| board.get(n) == Some(color))
            && game.check(color, Move::Play(v)).is_ok()
    };
    for _ in 0..32 {
        let v = Vertex::new(rng.below(size.into()) as u8, rng.below(size.into()) as u8);
        if good(v) {
            return Some(Move::Play(v));
        }
    }
    let mut rest: Vec<Vertex> = board.points().filter(|&v| board.get(v).is_none()).collect();
    while !rest.is_empty() {
        let v = rest.swap_remove(rng.below(rest.len()));
        if good(v) {
            return Some(Move::Play(v));
        }
    }
    None
}

/// Plays one game until the deadline: one move per tick, each waited for (the mover's
/// acknowledgement or echo and the opponent's copy) before the next. Returns the table
/// for the end of the run, or None when the game broke.
pub(super) async fn drive(
    plan: Arc<Plan>,
    stats: Arc<Stats>,
    mut t: Table,
    start: Instant,
    deadline: Instant,
) -> Option<Table> {
    let settings = GameSettings {
        board_size: plan.board_size,
        ..GameSettings::default()
    };
    let mut game = Game::new(plan.board_size, settings.ko_rule()).ok()?;
    let mut rng = Rng(t.seed | 1);
    let period = Duration::from_millis(plan.move_interval_ms.max(1));
    let phase = Duration::from_micros(rng.below(period.as_micros() as usize) as u64);
    let mut tick = tokio::time::interval_at(start + phase, period);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut last_seq = t.black.last_seq.max(t.white.last_seq);
    loop {
        // The run ends at the deadline, not at the first tick after it.
        tokio::select! {
            _ = tick.tick() => {}
            () = tokio::time::sleep_until(deadline) => break,
        }
        if Instant::now() >= deadline {
            break;
        }
        let Some(mv) = random_move(&game, &mut rng) else {
            stats.exhausted.fetch_add(1, Ordering::Relaxed);
            break;
        };
        let color = game.to_move();
        if game.play(color, mv).is_err() {
            stats.error("the rules engine refused its own move");
            break;
        }
        let n = game.moves().len() as u32;
        let frame = match plan.protocol {
            Protocol::Tengen => wire::play(&t.game_id, n, mv),
            Protocol::Baseline => wire::move_played(
                &t.game_id,
                n,
                color,
                mv,
                game.last_captures(),
                crate::time::wall_ms(),
            ),
        };
        let (mover, other) = match color {
            Color::Black => (&mut t.black, &mut t.white),
            Color::White => (&mut t.white, &mut t.black),
        };
        let sent = stats.now_us();
        t.shared.record_send(n, sent);
        let played = async {
            mover.send(frame).await?;
            exchange(plan.protocol, &stats, mover, other, n, sent).await
        };
        match tokio::time::timeout(STEP_TIMEOUT, played).await {
            Ok(Ok(seq)) => {
                last_seq = seq;
                stats.moves.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Err(Fail(kind))) => {
                stats.error(format!("move: {kind}"));
                t.shared.last.store(last_seq, Ordering::Release);
                return None;
            }
            Err(_) => {
                stats.error("move: timed out");
                t.shared.last.store(last_seq, Ordering::Release);
                return None;
            }
        }
    }
    t.shared.last.store(last_seq, Ordering::Release);
    Some(t)
}

/// Waits for move `n` to reach both players; records the opponent's and the
/// acknowledgement's latency. Returns the move's seq.
async fn exchange(
    protocol: Protocol,
    stats: &Stats,
    mover: &mut Conn,
    other: &mut Conn,
    n: u32,
    sent: u64,
) -> Result<u64, Fail> {
    // tengen: the mover's own move_played and the ack; baseline: the echo.
    let (mut own, mut acked, mut seen) = (false, protocol == Protocol::Baseline, false);
    let mut seq = 0;
    while !(own && acked && seen) {
        tokio::select! {
            got = mover.recv(stats, None), if !(own && acked) => match got? {
                Got::Move(m) if m == n => {
                    own = true;
                    seq = seq.max(mover.last_seq);
                    if protocol == Protocol::Baseline && stats.measuring() {
                        stats.ack.record(stats.now_us().saturating_sub(sent));
                    }
                }
                Got::Ack { id: Some(id), .. } if id == u64::from(n) => {
                    acked = true;
                    if stats.measuring() {
                        stats.ack.record(stats.now_us().saturating_sub(sent));
                    }
                }
                Got::Refused { id: Some(id), code } if id == u64::from(n) => {
                    return Err(Fail::new(format!("refused: {}", code.as_str())));
                }
                Got::Refused { code, .. } => stats.error(format!("refused: {}", code.as_str())),
                _ => {}
            },
            got = other.recv(stats, None), if !seen => match got? {
                Got::Move(m) if m == n => {
                    seen = true;
                    if stats.measuring() {
                        stats.opponent.record(stats.now_us().saturating_sub(sent));
                    }
                }
                Got::Refused { code, .. } => stats.error(format!("refused: {}", code.as_str())),
                _ => {}
            },
        }
    }
    Ok(seq)
}
