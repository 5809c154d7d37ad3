//! The rules core plays moves without touching the heap: a counting allocator watches a
//! whole 19x19 game (captures, ko fights, superko checks included) replayed on a fresh
//! `Game`, whose buffers were sized when it was made. Only the test's own thread is
//! counted: the test harness's threads allocate when they like (under load, its main
//! thread did, failing the test now and then).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use tengen::rules::{Game, KoRule, Move, Vertex};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread's allocations are counted (a const initialiser: reading it
    /// allocates nothing).
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if COUNTED.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A long game of random legal moves (deterministic), preferring captures so that kos
/// and repetition checks happen.
fn record(ko_rule: KoRule) -> Vec<Move> {
    let mut game = Game::new(19, ko_rule).unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut moves = Vec::new();
    while moves.len() < 400 {
        let c = game.to_move();
        let mut played = None;
        for _ in 0..200 {
            let r = next();
            let v = Vertex::new((r % 19) as u8, ((r >> 8) % 19) as u8);
            if game.play(c, Move::Play(v)).is_ok() {
                played = Some(Move::Play(v));
                break;
            }
        }
        let mv = played.unwrap_or_else(|| {
            game.play(c, Move::Pass).unwrap();
            Move::Pass
        });
        moves.push(mv);
    }
    moves
}

#[test]
fn playing_a_move_never_allocates() {
    COUNTED.set(true);
    for ko_rule in [KoRule::Situational, KoRule::Positional, KoRule::Simple] {
        let moves = record(ko_rule);
        let mut game = Game::new(19, ko_rule).unwrap();
        let mut captures = 0;
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        for &mv in &moves {
            let c = game.to_move();
            game.play(c, mv).unwrap();
            captures += game.last_captures().len();
            // Asking about a move (legal or not) does not allocate either.
            let _ = game.check(c.opponent(), Move::Play(Vertex::new(3, 3)));
        }
        let after = ALLOCATIONS.load(Ordering::Relaxed);
        assert!(captures > 20, "the game had captures to check: {captures}");
        assert_eq!(
            after - before,
            0,
            "{ko_rule:?}: {} allocations in 400 moves",
            after - before
        );
    }
}
