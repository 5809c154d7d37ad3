//! A reference Go engine: the yardstick issue 17 holds `Game::play` to. Not used by the
//! server; it lives in the benchmark so tengen's engine is compared with something real.
//! It is the textbook design, done with care: a padded byte board, a flood fill per
//! neighbouring group (explicit stack, marks reused across calls), an incremental Zobrist
//! hash, and situational superko through a hash map of every position whose hits are
//! confirmed against the stored boards, so a collision never refuses a legal move.
//!
//! The rules are tengen's (docs/RULES.md §2-3): opposing groups left without a liberty are
//! removed, then the mover's own group must have one (suicide is illegal); a placement is
//! illegal if the board after it, with the opponent to move, occurred earlier with that
//! same player to move. The starting position and the positions after passes count.
//! Setup stones are placed as they are, without captures (records hold legal positions).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use tengen::rules::{Color, Move, Vertex};

const EMPTY: u8 = 0;
const BLACK: u8 = 1;
const WHITE: u8 = 2;
const BORDER: u8 = 3;

/// Padded cells of the largest board tengen supports (25x25, so 27x27).
const MAX_CELLS: usize = 27 * 27;

struct Keys {
    /// Indexed by stone value then cell; row 0 (empty) stays zero.
    stones: [[u64; MAX_CELLS]; 3],
    /// Mixed in when White is to move: same stones, other player to move, other position.
    white_to_move: u64,
}

/// Made at compile time from a fixed-seed xorshift64, so every run hashes alike and
/// building an engine per game costs nothing.
static KEYS: Keys = make_keys();

const fn xorshift(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^ (x << 17)
}

const fn make_keys() -> Keys {
    let (mut stones, mut x, mut i) = ([[0; MAX_CELLS]; 3], 0x2545_f491_4f6c_dd1d, 0);
    while i < 2 * MAX_CELLS {
        x = xorshift(x);
        stones[1 + i / MAX_CELLS][i % MAX_CELLS] = x;
        i += 1;
    }
    let white_to_move = xorshift(x);
    Keys {
        stones,
        white_to_move,
    }
}

/// The keys are uniformly random already: the map uses them as they are (no SipHash).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("the map is keyed by u64 only")
    }
    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

/// Why a move is refused.
#[derive(Debug)]
pub enum Illegal {
    OffBoard,
    Occupied,
    Suicide,
    Superko,
}

fn stone(c: Color) -> u8 {
    match c {
        Color::Black => BLACK,
        Color::White => WHITE,
    }
}

pub struct Engine {
    size: usize,
    stride: usize,
    cells: Vec<u8>,
    /// Zobrist hash of the stones alone.
    hash: u64,
    /// Flood-fill marks: a cell is visited in this fill when its mark equals `generation`,
    /// so nothing is cleared between fills.
    mark: Vec<u32>,
    generation: u32,
    stack: Vec<usize>,
    /// The stones the last flood fill reached.
    group: Vec<usize>,
    /// The stones the move being played removed, to put back if it is refused.
    captured: Vec<usize>,
    /// Position key (stones, and White to move) to the latest position with that key.
    seen: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
    /// Every position so far, one after another: the cells, then the player to move.
    history: Vec<u8>,
    /// For each position, the previous one with the same key (`u32::MAX`: none).
    same_key: Vec<u32>,
}

impl Engine {
    pub fn new(size: u8, setup: &[(Vertex, Color)], to_move: Color) -> Engine {
        let (size, stride) = (size as usize, size as usize + 2);
        let cells = stride * stride;
        assert!(cells <= MAX_CELLS, "board size {size} is over 25");
        // Room for a long game, as tengen's `Game` reserves, so playing never reallocates.
        let positions = size * size * 3 / 2 + 1;
        let mut engine = Engine {
            size,
            stride,
            cells: vec![BORDER; cells],
            hash: 0,
            mark: vec![0; cells],
            generation: 0,
            stack: Vec::with_capacity(cells),
            group: Vec::with_capacity(cells),
            captured: Vec::with_capacity(cells),
            seen: HashMap::with_capacity_and_hasher(positions, Default::default()),
            history: Vec::with_capacity(positions * (cells + 1)),
            same_key: Vec::with_capacity(positions),
        };
        for y in 0..size {
            let row = (y + 1) * stride + 1;
            engine.cells[row..row + size].fill(EMPTY);
        }
        for &(v, c) in setup {
            if let Some(p) = engine.index(v).filter(|&p| engine.cells[p] == EMPTY) {
                engine.cells[p] = stone(c);
                engine.hash ^= KEYS.stones[stone(c) as usize][p];
            }
        }
        engine.record(stone(to_move));
        engine
    }

    /// The stone on `v`, if any.
    pub fn get(&self, v: Vertex) -> Option<Color> {
        match self.index(v).map(|p| self.cells[p]) {
            Some(BLACK) => Some(Color::Black),
            Some(WHITE) => Some(Color::White),
            _ => None,
        }
    }

    fn index(&self, v: Vertex) -> Option<usize> {
        let (x, y) = (v.x as usize, v.y as usize);
        (x < self.size && y < self.size).then_some((y + 1) * self.stride + x + 1)
    }

    fn around(&self, p: usize) -> [usize; 4] {
        [p - 1, p + 1, p - self.stride, p + self.stride]
    }

    /// Plays `mv` for `color`; an illegal move leaves the position as it was. Never
    /// inlined: a real call, as tengen's `Game::play` is from the benchmark crate, and a
    /// symbol of its own for callgrind.
    #[inline(never)]
    pub fn play(&mut self, color: Color, mv: Move) -> Result<(), Illegal> {
        let (me, them) = (stone(color), stone(color.opponent()));
        let Move::Play(v) = mv else {
            // A pass only hands over the move; that position joins the history too.
            self.record(them);
            return Ok(());
        };
        let p = self.index(v).ok_or(Illegal::OffBoard)?;
        if self.cells[p] != EMPTY {
            return Err(Illegal::Occupied);
        }
        self.cells[p] = me;
        self.hash ^= KEYS.stones[me as usize][p];
        self.captured.clear();
        for n in self.around(p) {
            // A group captured through an earlier neighbour is empty by now.
            if self.cells[n] == them && !self.has_liberty(n) {
                for &s in &self.group {
                    self.cells[s] = EMPTY;
                    self.hash ^= KEYS.stones[them as usize][s];
                }
                self.captured.extend_from_slice(&self.group);
            }
        }
        // A capture leaves the new stone a liberty, so only a quiet move can be suicide.
        if self.captured.is_empty() && !self.has_liberty(p) {
            self.take_back(p, me, them);
            return Err(Illegal::Suicide);
        }
        if self.repeats(them) {
            self.take_back(p, me, them);
            return Err(Illegal::Superko);
        }
        self.record(them);
        Ok(())
    }

    /// Whether the group through `start` has a liberty. Stops at the first one found;
    /// when there is none, `group` holds every stone of the group.
    fn has_liberty(&mut self, start: usize) -> bool {
        if self.generation == u32::MAX {
            self.mark.fill(0);
            self.generation = 0;
        }
        self.generation += 1;
        let colour = self.cells[start];
        self.group.clear();
        self.stack.clear();
        self.stack.push(start);
        self.mark[start] = self.generation;
        while let Some(s) = self.stack.pop() {
            self.group.push(s);
            for n in self.around(s) {
                let c = self.cells[n];
                if c == EMPTY {
                    return true;
                }
                if c == colour && self.mark[n] != self.generation {
                    self.mark[n] = self.generation;
                    self.stack.push(n);
                }
            }
        }
        false
    }

    /// Undoes a refused placement on `p`: the captured stones go back, the new one goes.
    fn take_back(&mut self, p: usize, me: u8, them: u8) {
        for &s in &self.captured {
            self.cells[s] = them;
            self.hash ^= KEYS.stones[them as usize][s];
        }
        self.cells[p] = EMPTY;
        self.hash ^= KEYS.stones[me as usize][p];
    }

    fn key(&self, to_move: u8) -> u64 {
        match to_move {
            WHITE => self.hash ^ KEYS.white_to_move,
            _ => self.hash,
        }
    }

    /// Whether the current stones with `to_move` to play occurred before. The hash only
    /// nominates candidates; each is compared cell by cell.
    fn repeats(&self, to_move: u8) -> bool {
        let Some(&latest) = self.seen.get(&self.key(to_move)) else {
            return false;
        };
        let len = self.cells.len() + 1;
        let mut i = latest;
        while i != u32::MAX {
            let earlier = &self.history[i as usize * len..][..len];
            if earlier[len - 1] == to_move && earlier[..len - 1] == self.cells[..] {
                return true;
            }
            i = self.same_key[i as usize];
        }
        false
    }

    /// Adds the current position, with `to_move` to play, to the history.
    fn record(&mut self, to_move: u8) {
        let index = self.same_key.len() as u32;
        let previous = self.seen.insert(self.key(to_move), index);
        self.same_key.push(previous.unwrap_or(u32::MAX));
        self.history.extend_from_slice(&self.cells);
        self.history.push(to_move);
    }
}
