//! The board: stones, chains with pseudo-liberty counts, captures and an incremental
//! Zobrist hash. Fixed-size arrays only, so playing a move never allocates.
//!
//! A chain is a circular linked list of its stones (`next`) with one representative
//! (`head`). Each chain counts its *pseudo-liberties*: (stone, empty neighbour) pairs. The
//! count is zero exactly when the chain has no liberty, which is all capture and suicide
//! need, and it is kept up to date in O(1) per placed stone.

use super::vertex::{Color, MAX_SIZE, MIN_SIZE, Vertex};
use super::zobrist;

/// Width of the padded array for the largest board: one edge cell on each side.
const MAX_STRIDE: usize = MAX_SIZE as usize + 2;
/// Cells in the padded array.
pub(super) const CELLS: usize = MAX_STRIDE * MAX_STRIDE;

const EMPTY: u8 = 0;
const BLACK: u8 = 1;
const WHITE: u8 = 2;
const EDGE: u8 = 3;

#[inline]
fn stone(c: Color) -> u8 {
    match c {
        Color::Black => BLACK,
        Color::White => WHITE,
    }
}

#[inline]
fn color_of(cell: u8) -> Option<Color> {
    match cell {
        BLACK => Some(Color::Black),
        WHITE => Some(Color::White),
        _ => None,
    }
}

/// A board size outside 2..=25.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("board size {0} is not supported; use a size from 2 to 25")]
pub struct SizeError(pub u8);

/// What placing a stone would do, worked out without changing the board.
#[derive(Debug, Clone, Copy)]
pub(super) struct Placement {
    /// The board hash after the move (captures included).
    pub hash_after: u64,
    /// Opposing stones the move captures.
    pub captures: u16,
    /// The move leaves the mover's own chain without a liberty and captures nothing.
    pub suicide: bool,
    /// The move captures one stone and leaves a lone stone in atari at `ko_point`.
    pub ko_point: Option<u16>,
}

/// A Go board of any size from 2 to 25.
#[derive(Clone)]
pub struct Board {
    size: u8,
    stride: u16,
    cells: [u8; CELLS],
    head: [u16; CELLS],
    next: [u16; CELLS],
    /// Pseudo-liberties, valid at chain heads.
    libs: [u16; CELLS],
    /// Stones in the chain, valid at chain heads.
    len: [u16; CELLS],
    hash: u64,
    on_board: [u16; 2],
}

impl Board {
    /// An empty board.
    pub fn new(size: u8) -> Result<Board, SizeError> {
        if !(MIN_SIZE..=MAX_SIZE).contains(&size) {
            return Err(SizeError(size));
        }
        let stride = size as u16 + 2;
        let mut cells = [EDGE; CELLS];
        for y in 0..size {
            for x in 0..size {
                cells[(y as usize + 1) * stride as usize + x as usize + 1] = EMPTY;
            }
        }
        Ok(Board {
            size,
            stride,
            cells,
            head: [0; CELLS],
            next: [0; CELLS],
            libs: [0; CELLS],
            len: [0; CELLS],
            hash: 0,
            on_board: [0; 2],
        })
    }

    pub fn size(&self) -> u8 {
        self.size
    }

    /// The Zobrist hash of the stones (not of whose turn it is).
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The stone on `v`, if any.
    pub fn get(&self, v: Vertex) -> Option<Color> {
        self.contains(v)
            .then(|| color_of(self.cells[self.idx(v)]))?
    }

    /// Whether `v` lies on this board.
    pub fn contains(&self, v: Vertex) -> bool {
        v.x < self.size && v.y < self.size
    }

    /// Stones of `color` on the board.
    pub fn stones(&self, color: Color) -> u16 {
        self.on_board[color.index()]
    }

    /// Every point of the board, row by row from A1.
    pub fn points(&self) -> impl Iterator<Item = Vertex> + use<> {
        let size = self.size;
        (0..size).flat_map(move |y| (0..size).map(move |x| Vertex::new(x, y)))
    }

    /// The on-board orthogonal neighbours of `v`.
    pub fn neighbors(&self, v: Vertex) -> impl Iterator<Item = Vertex> + use<> {
        let size = self.size;
        let (x, y) = (v.x as i16, v.y as i16);
        [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)]
            .into_iter()
            .filter(move |&(a, b)| a >= 0 && b >= 0 && a < size as i16 && b < size as i16)
            .map(|(a, b)| Vertex::new(a as u8, b as u8))
    }

    /// All stones of the chain through `v` (empty when `v` is empty).
    pub fn chain(&self, v: Vertex) -> Vec<Vertex> {
        let mut out = Vec::new();
        if self.get(v).is_some() {
            let start = self.idx(v);
            let mut s = start;
            loop {
                out.push(self.vertex(s));
                s = self.next[s] as usize;
                if s == start {
                    break;
                }
            }
        }
        out
    }

    /// The number of distinct liberties of the chain through `v` (0 when `v` is empty).
    /// Computed from scratch: for checks and tests, not the hot path.
    pub fn liberties(&self, v: Vertex) -> usize {
        let mut libs: Vec<Vertex> = self
            .chain(v)
            .into_iter()
            .flat_map(|s| self.neighbors(s))
            .filter(|&n| self.get(n).is_none())
            .collect();
        libs.sort_unstable();
        libs.dedup();
        libs.len()
    }

    /// The hash recomputed from the stones alone, to check the incremental one.
    pub fn recompute_hash(&self) -> u64 {
        self.points()
            .filter_map(|v| self.get(v).map(|c| zobrist::key(c, self.idx(v))))
            .fold(0, |h, k| h ^ k)
    }

    /// Whether both boards hold the same stones on the same points.
    pub fn same_stones(&self, other: &Board) -> bool {
        let n = self.stride as usize * self.stride as usize;
        self.size == other.size && self.cells[..n] == other.cells[..n]
    }

    #[inline]
    pub(super) fn idx(&self, v: Vertex) -> usize {
        (v.y as usize + 1) * self.stride as usize + v.x as usize + 1
    }

    #[inline]
    pub(super) fn vertex(&self, i: usize) -> Vertex {
        let s = self.stride as usize;
        Vertex::new((i % s - 1) as u8, (i / s - 1) as u8)
    }

    #[inline]
    fn around(&self, i: usize) -> [usize; 4] {
        let s = self.stride as usize;
        [i - 1, i + 1, i - s, i + s]
    }

    /// How many of the points around `p` belong to the chain headed by `h`.
    #[inline]
    fn touching(&self, p: usize, h: u16) -> u16 {
        self.around(p)
            .iter()
            .filter(|&&n| self.cells[n] == BLACK || self.cells[n] == WHITE)
            .filter(|&&n| self.head[n] == h)
            .count() as u16
    }

    /// Whether the empty point `i` is on the board and empty.
    #[inline]
    pub(super) fn is_empty_idx(&self, i: usize) -> bool {
        self.cells[i] == EMPTY
    }

    /// Works out what `color` playing on the empty point `p` would do.
    pub(super) fn placement(&self, p: usize, color: Color) -> Placement {
        let own = stone(color);
        let mut liberty = false;
        let mut hash_after = self.hash ^ zobrist::key(color, p);
        let mut captured_heads = [u16::MAX; 4];
        let mut captures = 0u16;
        let mut captured_at = 0usize;
        for (k, n) in self.around(p).into_iter().enumerate() {
            match self.cells[n] {
                EMPTY => liberty = true,
                EDGE => {}
                cell => {
                    let h = self.head[n];
                    let remaining = self.libs[h as usize] - self.touching(p, h);
                    if cell == own {
                        liberty |= remaining > 0;
                    } else if remaining == 0 && !captured_heads[..k].contains(&h) {
                        captured_heads[k] = h;
                        captures += self.len[h as usize];
                        captured_at = n;
                        hash_after ^= self.chain_hash(h as usize);
                    }
                }
            }
        }
        // A ko: one stone captured, and the new stone stands alone with the captured
        // point as its only liberty, so the opponent could take straight back.
        let ko_point = (captures == 1
            && self
                .around(p)
                .iter()
                .all(|&n| self.cells[n] != own && (self.cells[n] != EMPTY)))
        .then_some(captured_at as u16);
        Placement {
            hash_after,
            captures,
            suicide: !liberty && captures == 0,
            ko_point,
        }
    }

    /// Calls `captured` for every opposing stone that `color` playing on the empty point
    /// `p` would remove, in the order [`Board::apply`] removes them: chain by chain as
    /// the neighbours of `p` are visited, each chain from its head.
    pub(super) fn captured_by(&self, p: usize, color: Color, mut captured: impl FnMut(Vertex)) {
        let own = stone(color);
        let mut seen_heads = [u16::MAX; 4];
        for (k, n) in self.around(p).into_iter().enumerate() {
            let cell = self.cells[n];
            if cell == own || cell == EMPTY || cell == EDGE {
                continue;
            }
            let h = self.head[n];
            if seen_heads[..k].contains(&h) || self.libs[h as usize] != self.touching(p, h) {
                continue;
            }
            seen_heads[k] = h;
            let mut s = h as usize;
            loop {
                captured(self.vertex(s));
                s = self.next[s] as usize;
                if s == h as usize {
                    break;
                }
            }
        }
    }

    fn chain_hash(&self, h: usize) -> u64 {
        let c = color_of(self.cells[h]).unwrap_or(Color::Black);
        let mut hash = 0;
        let mut s = h;
        loop {
            hash ^= zobrist::key(c, s);
            s = self.next[s] as usize;
            if s == h {
                return hash;
            }
        }
    }

    /// Places a stone of `color` on the empty point `p`, removes the opposing chains it
    /// leaves without liberties (then its own chain, if that has none: only setup
    /// positions can ask for that), and calls `captured` for every removed stone.
    pub(super) fn apply(&mut self, p: usize, color: Color, mut captured: impl FnMut(Vertex)) {
        let own = stone(color);
        self.cells[p] = own;
        self.hash ^= zobrist::key(color, p);
        self.on_board[color.index()] += 1;
        self.head[p] = p as u16;
        self.next[p] = p as u16;
        self.len[p] = 1;
        self.libs[p] = 0;
        let around = self.around(p);
        for n in around {
            match self.cells[n] {
                EMPTY => self.libs[p] += 1,
                EDGE => {}
                _ => self.libs[self.head[n] as usize] -= 1,
            }
        }
        for n in around {
            if self.cells[n] == own && self.head[n] != self.head[p] {
                self.merge(self.head[p] as usize, self.head[n] as usize);
            }
        }
        for n in around {
            let cell = self.cells[n];
            if cell != own && cell != EMPTY && cell != EDGE && self.libs[self.head[n] as usize] == 0
            {
                self.remove(self.head[n] as usize, &mut captured);
            }
        }
        if self.libs[self.head[p] as usize] == 0 {
            self.remove(self.head[p] as usize, &mut captured);
        }
    }

    fn merge(&mut self, a: usize, b: usize) {
        let (base, other) = if self.len[a] >= self.len[b] {
            (a, b)
        } else {
            (b, a)
        };
        let mut s = other;
        loop {
            self.head[s] = base as u16;
            s = self.next[s] as usize;
            if s == other {
                break;
            }
        }
        self.next.swap(base, other);
        self.libs[base] += self.libs[other];
        self.len[base] += self.len[other];
    }

    fn remove(&mut self, h: usize, captured: &mut impl FnMut(Vertex)) {
        let cell = self.cells[h];
        let Some(color) = color_of(cell) else { return };
        let mut s = h;
        loop {
            self.cells[s] = EMPTY;
            self.hash ^= zobrist::key(color, s);
            self.on_board[color.index()] -= 1;
            captured(self.vertex(s));
            for n in self.around(s) {
                let c = self.cells[n];
                if c != cell && c != EMPTY && c != EDGE {
                    self.libs[self.head[n] as usize] += 1;
                }
            }
            s = self.next[s] as usize;
            if s == h {
                break;
            }
        }
    }

    /// Places a stone without any legality check (setup stones such as SGF `AB`/`AW` or
    /// handicap). Returns false when the point is off the board or occupied.
    pub fn place_setup(&mut self, v: Vertex, color: Color) -> bool {
        if !self.contains(v) || !self.is_empty_idx(self.idx(v)) {
            return false;
        }
        self.apply(self.idx(v), color, |_| {});
        true
    }
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_diagram())
    }
}

impl Board {
    /// The board as rows of `X` (black), `O` (white) and `.`, top row first.
    pub fn to_diagram(&self) -> String {
        let mut out = String::new();
        for y in (0..self.size).rev() {
            for x in 0..self.size {
                out.push(match self.get(Vertex::new(x, y)) {
                    Some(Color::Black) => 'X',
                    Some(Color::White) => 'O',
                    None => '.',
                });
            }
            out.push('\n');
        }
        out
    }

    /// Reads a diagram of `X`, `O` and `.` rows (top row first; spaces ignored), as tests
    /// and documentation draw positions.
    pub fn from_diagram(diagram: &str) -> Result<Board, SizeError> {
        let rows: Vec<Vec<char>> = diagram
            .lines()
            .map(|l| l.chars().filter(|c| !c.is_whitespace()).collect::<Vec<_>>())
            .filter(|r| !r.is_empty())
            .collect();
        let size = rows.len() as u8;
        let mut board = Board::new(size)?;
        for (r, row) in rows.iter().enumerate() {
            if row.len() != rows.len() {
                return Err(SizeError(row.len() as u8));
            }
            let y = size - 1 - r as u8;
            for (x, ch) in row.iter().enumerate() {
                let c = match ch {
                    'X' | 'x' | '#' => Color::Black,
                    'O' | 'o' => Color::White,
                    _ => continue,
                };
                board.place_setup(Vertex::new(x as u8, y), c);
            }
        }
        Ok(board)
    }
}
