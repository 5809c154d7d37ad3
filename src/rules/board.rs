//! The board: stones, chains with pseudo-liberty counts, captures and an incremental
//! Zobrist hash. Fixed-size arrays only, so playing a move never allocates.
//!
//! A chain is a circular linked list of its stones (`next`) with one representative
//! (`head`). Each chain counts its *pseudo-liberties*: (stone, empty neighbour) pairs. The
//! count is zero exactly when the chain has no liberty, which is all capture and suicide
//! need, and it is kept up to date in O(1) per placed stone.

use std::sync::OnceLock;

use super::cells::CELLS;
use super::vertex::{Color, MAX_SIZE, MIN_SIZE, Vertex};
use super::zobrist;

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

/// The chain of a neighbour that holds no stone (empty or off the board): point 0, a corner
/// of the edge, which never holds a stone, so no chain has it as its head.
const NO_CHAIN: u16 = 0;

/// What placing a stone would do, worked out without changing the board. It also keeps
/// what [`Board::commit`] needs, so playing the move reads the neighbourhood only once.
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
    point: u16,
    color: Color,
    /// The chain head of each neighbour of `point` (`NO_CHAIN` for no stone), in the
    /// order of [`Board::around`].
    heads: [u16; 4],
    /// Bit `k`: neighbour `k` holds an own stone, whose chain joins the new one.
    joins: u8,
    /// Bit `k`: neighbour `k` is the first to touch an opposing chain that is captured.
    takes: u8,
    /// Empty neighbours: the new stone's own pseudo-liberties.
    empties: u16,
}

impl Placement {
    /// The heads of the chains `mask` marks, in neighbour order.
    fn chains(&self, mut mask: u8) -> impl Iterator<Item = u16> + use<> {
        let heads = self.heads;
        std::iter::from_fn(move || {
            let k = mask.trailing_zeros() as usize;
            mask &= mask.wrapping_sub(1);
            heads.get(k).copied()
        })
    }
}

/// How many of the four `heads` each one's chain has, itself included: lane by lane in
/// one word, each head compared with the three others at once by rotating the word.
#[inline(always)]
fn held(heads: [u16; 4]) -> [u16; 4] {
    const LOW: u64 = 0x7fff_7fff_7fff_7fff;
    let word = heads
        .iter()
        .rev()
        .fold(0u64, |word, &h| word << 16 | u64::from(h));
    // Bit 0 of each lane whose 16 bits are all zero (heads are below 2^15).
    let zero = |x: u64| (!(((x & LOW) + LOW) | x) & !LOW) >> 15;
    let others = zero(word ^ word.rotate_left(16))
        + zero(word ^ word.rotate_left(32))
        + zero(word ^ word.rotate_left(48));
    std::array::from_fn(|k| 1 + (others >> (16 * k)) as u16)
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
        Board::empty(size).cloned()
    }

    /// The empty board of `size`, made once per process: a new board is a copy of it, and
    /// a game without set-up stones starts from it without a copy of its own.
    pub(super) fn empty(size: u8) -> Result<&'static Board, SizeError> {
        const SIZES: usize = (MAX_SIZE - MIN_SIZE + 1) as usize;
        static BOARDS: [OnceLock<Board>; SIZES] = [const { OnceLock::new() }; SIZES];
        let once = BOARDS
            .get(usize::from(size.wrapping_sub(MIN_SIZE)))
            .ok_or(SizeError(size))?;
        Ok(once.get_or_init(|| {
            let stride = size as usize + 2;
            let mut cells = [EDGE; CELLS];
            for row in cells[stride..].chunks_exact_mut(stride).take(size as usize) {
                row[1..=size as usize].fill(EMPTY);
            }
            Board {
                size,
                stride: stride as u16,
                cells,
                head: [0; CELLS],
                next: [0; CELLS],
                libs: [0; CELLS],
                len: [0; CELLS],
                hash: 0,
                on_board: [0; 2],
            }
        }))
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

    /// Whether the empty point `i` is on the board and empty.
    #[inline]
    pub(super) fn is_empty_idx(&self, i: usize) -> bool {
        self.cells[i] == EMPTY
    }

    /// Works out what `color` playing on the empty point `p` would do.
    ///
    /// A neighbouring chain loses one pseudo-liberty per neighbour of `p` it holds, and is
    /// left without a liberty exactly when that takes its count to zero. Every neighbour
    /// is worked through alike, stone or not, and the answers for stones kept: which
    /// neighbours are stones is as good as random, and a branch on it would be mispredicted
    /// about once a move.
    #[inline(always)]
    pub(super) fn placement(&self, p: usize, color: Color) -> Placement {
        let (own, theirs) = (stone(color), stone(color.opponent()));
        let around = self.around(p);
        let cells = around.map(|n| self.cells[n]);
        let heads: [u16; 4] = std::array::from_fn(|k| {
            let h = self.head[around[k]];
            if matches!(cells[k], BLACK | WHITE) {
                h
            } else {
                NO_CHAIN
            }
        });
        let held = held(heads);
        let empties = cells.iter().filter(|&&c| c == EMPTY).count() as u16;
        let (mut joins, mut takes, mut captures) = (0, 0, 0);
        let mut hash_after = self.hash ^ zobrist::key(color, p);
        let mut liberty = empties > 0;
        for k in 0..4 {
            let h = heads[k];
            let left = self.libs[h as usize] > held[k];
            let mine = cells[k] == own;
            joins |= u8::from(mine) << k;
            liberty |= mine & left;
            if cells[k] == theirs && !left && !heads[..k].contains(&h) {
                takes |= 1 << k;
                captures += self.len[h as usize];
                hash_after ^= self.chain_hash(h as usize);
            }
        }
        let mut pl = Placement {
            hash_after,
            captures,
            suicide: !liberty && captures == 0,
            ko_point: None,
            point: p as u16,
            color,
            heads,
            joins,
            takes,
            empties,
        };
        // A ko: one stone captured, and the new stone stands alone with the captured
        // point as its only liberty, so the opponent could take straight back.
        if captures == 1 && empties == 0 && joins == 0 {
            pl.ko_point = pl.chains(takes).next();
        }
        pl
    }

    /// Calls `captured` for every opposing stone that `pl` would remove, in the order
    /// [`Board::commit`] removes them: chain by chain as the neighbours of the point are
    /// visited, each chain from its head.
    pub(super) fn captured_by(&self, pl: &Placement, mut captured: impl FnMut(Vertex)) {
        for h in pl.chains(pl.takes) {
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
    pub(super) fn apply(&mut self, p: usize, color: Color, captured: impl FnMut(Vertex)) {
        let pl = self.placement(p, color);
        self.commit(&pl, captured);
    }

    /// Makes the placement `pl`, worked out on this board as it still is: the stone goes
    /// down, joins its own chains, and the chains `pl` captures (then its own, if `pl` is
    /// suicide) are removed, `captured` being called for every removed stone.
    #[inline(always)]
    pub(super) fn commit(&mut self, pl: &Placement, mut captured: impl FnMut(Vertex)) {
        let p = pl.point as usize;
        self.cells[p] = stone(pl.color);
        self.hash ^= zobrist::key(pl.color, p);
        self.on_board[pl.color.index()] += 1;
        self.head[p] = pl.point;
        self.next[p] = pl.point;
        self.len[p] = 1;
        self.libs[p] = pl.empties;
        // Without a branch on which neighbours are stones: `NO_CHAIN` takes nothing.
        for h in pl.heads {
            self.libs[h as usize] -= u16::from(h != NO_CHAIN);
        }
        // Two neighbours may hold one chain: joined through the first, it has p's head.
        for h in pl.chains(pl.joins) {
            if self.head[h as usize] != self.head[p] {
                self.merge(self.head[p] as usize, h as usize);
            }
        }
        for h in pl.chains(pl.takes) {
            self.remove(h as usize, &mut captured);
        }
        if pl.suicide {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_counts_each_head_among_the_four() {
        let heads = [0u16, 1, 728, 0x7fff];
        for a in heads {
            for b in heads {
                for c in heads {
                    for d in heads {
                        let four = [a, b, c, d];
                        let counted = four.map(|h| four.iter().filter(|&&o| o == h).count() as u16);
                        assert_eq!(held(four), counted, "{four:?}");
                    }
                }
            }
        }
    }
}
