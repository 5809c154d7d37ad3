//! A game in progress: the position, whose turn it is, the move list and the history of
//! every position since the start, which the repetition rules (docs/RULES.md §3) consult.
//!
//! Superko looks at the whole history, the starting position included. A 64-bit hash
//! only nominates a repetition: before a move is refused, the earlier position is rebuilt
//! from the move list and compared stone by stone, so a hash collision can never forbid a
//! legal move. Rebuilding is rare (real repetitions), so the common path stays a hash
//! probe with no allocation.

use std::sync::Arc;

use super::board::{Board, Placement, SizeError};
use super::ruleset::KoRule;
use super::vertex::{Color, Move, Vertex};
use super::zobrist;

/// Why a move is not allowed. The protocol and `tengen rules` report [`IllegalMove::reason`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IllegalMove {
    #[error("{0} is not on the board")]
    OffBoard(Vertex),
    #[error("{0} is already occupied")]
    Occupied(Vertex),
    #[error("{0} would leave the stones played without a liberty (suicide is forbidden)")]
    Suicide(Vertex),
    #[error("{0} retakes the ko at once; play elsewhere first")]
    Ko(Vertex),
    #[error("{0} would repeat an earlier whole-board position (superko)")]
    Superko(Vertex),
}

impl IllegalMove {
    /// A stable code: `off_board`, `occupied`, `suicide`, `ko` or `superko`.
    pub fn reason(&self) -> &'static str {
        match self {
            IllegalMove::OffBoard(_) => "off_board",
            IllegalMove::Occupied(_) => "occupied",
            IllegalMove::Suicide(_) => "suicide",
            IllegalMove::Ko(_) => "ko",
            IllegalMove::Superko(_) => "superko",
        }
    }
}

/// A set of position keys with no false negatives: open addressing over a power-of-two
/// table, grown (rarely) when three-quarters full. Every decision copies its game, so
/// the table's size is copied per move: it is kept no larger than that load allows.
#[derive(Clone)]
struct Seen {
    slots: Vec<u64>,
    len: usize,
}

impl Seen {
    fn with_capacity(positions: usize) -> Seen {
        Seen {
            slots: vec![0; (positions * 4 / 3 + 1).next_power_of_two().max(64)],
            len: 0,
        }
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key as usize) & (self.slots.len() - 1)
    }

    /// Keys are stored with the low bit set so that 0 can mark an empty slot.
    #[inline]
    fn contains(&self, key: u64) -> bool {
        let key = key | 1;
        let mut i = self.slot(key);
        loop {
            match self.slots[i] {
                0 => return false,
                k if k == key => return true,
                _ => i = (i + 1) & (self.slots.len() - 1),
            }
        }
    }

    fn insert(&mut self, key: u64) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            let grown = vec![0; self.slots.len() * 2];
            let old = std::mem::replace(&mut self.slots, grown);
            self.len = 0;
            for k in old.into_iter().filter(|&k| k != 0) {
                self.insert(k);
            }
        }
        let key = key | 1;
        let mut i = self.slot(key);
        loop {
            match self.slots[i] {
                0 => {
                    self.slots[i] = key;
                    self.len += 1;
                    return;
                }
                k if k == key => return,
                _ => i = (i + 1) & (self.slots.len() - 1),
            }
        }
    }
}

/// A game from its starting position onwards.
#[derive(Clone)]
pub struct Game {
    ko_rule: KoRule,
    /// Never changes after the set-up: shared by every copy of the game, so copying a
    /// game (as a decision does) copies one board, not two.
    start: Arc<Board>,
    /// On the heap, so that moving a game (and the room's game around it) does not copy
    /// the board's several KB.
    board: Box<Board>,
    start_to_move: Color,
    to_move: Color,
    moves: Vec<(Color, Move)>,
    /// Board hash of every position so far; index 0 is the starting position.
    history: Vec<u64>,
    seen: Seen,
    /// The point the given colour may not retake at once (simple ko).
    ko: Option<(u16, Color)>,
    prisoners: [u32; 2],
    passes_in_row: u32,
    last_captures: Vec<Vertex>,
}

impl Game {
    /// An empty board with Black to move.
    pub fn new(size: u8, ko_rule: KoRule) -> Result<Game, SizeError> {
        Game::with_setup(size, ko_rule, &[], Color::Black)
    }

    /// A game from a set-up position (handicap or SGF `AB`/`AW` stones) with `to_move`
    /// to play first. Stones on occupied or off-board points are ignored.
    pub fn with_setup(
        size: u8,
        ko_rule: KoRule,
        stones: &[(Vertex, Color)],
        to_move: Color,
    ) -> Result<Game, SizeError> {
        let mut board = Board::new(size)?;
        for &(v, c) in stones {
            board.place_setup(v, c);
        }
        let area = size as usize * size as usize;
        let mut game = Game {
            ko_rule,
            start: Arc::new(board.clone()),
            board: Box::new(board),
            start_to_move: to_move,
            to_move,
            moves: Vec::with_capacity(area * 3 / 2),
            history: Vec::with_capacity(area * 3 / 2 + 1),
            seen: Seen::with_capacity(area * 2),
            ko: None,
            prisoners: [0; 2],
            passes_in_row: 0,
            last_captures: Vec::with_capacity(area),
        };
        game.record_position();
        Ok(game)
    }

    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The position the game started from (after handicap or setup stones).
    pub fn start(&self) -> &Board {
        &self.start
    }

    pub fn ko_rule(&self) -> KoRule {
        self.ko_rule
    }

    pub fn to_move(&self) -> Color {
        self.to_move
    }

    /// Every move so far with the colour that made it.
    pub fn moves(&self) -> &[(Color, Move)] {
        &self.moves
    }

    /// Stones `color` has captured so far.
    pub fn prisoners(&self, color: Color) -> u32 {
        self.prisoners[color.index()]
    }

    /// Passes at the end of the move list (2 ends play).
    pub fn passes_in_row(&self) -> u32 {
        self.passes_in_row
    }

    /// The stones the last move captured.
    pub fn last_captures(&self) -> &[Vertex] {
        &self.last_captures
    }

    /// Whether `color` may make `mv` now (turn order aside: see [`Game::play`]).
    pub fn check(&self, color: Color, mv: Move) -> Result<(), IllegalMove> {
        match mv {
            Move::Pass => Ok(()),
            Move::Play(v) => self.judge(color, v, true).map(|_| ()),
        }
    }

    /// The stones `color` playing `mv` would capture, listed as [`Game::last_captures`]
    /// would list them after [`Game::play`], or why the move is illegal (as `play` would
    /// refuse it). The game is not changed: this is how a decision learns a move's
    /// captures without playing it on a copy of the game.
    pub fn captures(&self, color: Color, mv: Move) -> Result<Vec<Vertex>, IllegalMove> {
        match mv {
            Move::Pass => Ok(Vec::new()),
            Move::Play(v) => {
                let (p, placement) = self.judge(color, v, true)?;
                let mut out = Vec::with_capacity(usize::from(placement.captures));
                self.board.captured_by(p, color, |s| out.push(s));
                Ok(out)
            }
        }
    }

    /// Plays `mv` for `color`. The game does not enforce alternation (game records may
    /// hold two moves by one side); the server checks turn order before calling this.
    /// After a move, [`Game::to_move`] is `color`'s opponent.
    /// An illegal move leaves the game exactly as it was.
    pub fn play(&mut self, color: Color, mv: Move) -> Result<(), IllegalMove> {
        self.play_judged(color, mv, true)
    }

    /// Plays a move from a game record made under other rules, as other programs load
    /// records (GTP `loadsgf`): an occupied point, a point off the board and suicide
    /// are still refused, but ko and superko are not checked. The position joins the
    /// history all the same, so later moves are judged against it.
    pub fn play_ignoring_repetition(&mut self, color: Color, mv: Move) -> Result<(), IllegalMove> {
        self.play_judged(color, mv, false)
    }

    #[inline(always)]
    fn play_judged(&mut self, color: Color, mv: Move, repetition: bool) -> Result<(), IllegalMove> {
        match mv {
            Move::Pass => {
                self.last_captures.clear();
                self.ko = None;
                self.passes_in_row += 1;
            }
            Move::Play(v) => {
                let (p, placement) = self.judge(color, v, repetition)?;
                self.last_captures.clear();
                let captured = &mut self.last_captures;
                self.board.apply(p, color, |s| captured.push(s));
                self.prisoners[color.index()] += u32::from(placement.captures);
                self.ko = placement.ko_point.map(|k| (k, color.opponent()));
                self.passes_in_row = 0;
            }
        }
        self.moves.push((color, mv));
        self.to_move = color.opponent();
        self.record_position();
        Ok(())
    }

    /// The verdict on `color` placing a stone on `v`, with what the placement would do;
    /// the repetition rules are consulted only when `repetition` is set.
    #[inline(always)]
    fn judge(
        &self,
        color: Color,
        v: Vertex,
        repetition: bool,
    ) -> Result<(usize, Placement), IllegalMove> {
        if !self.board.contains(v) {
            return Err(IllegalMove::OffBoard(v));
        }
        let p = self.board.idx(v);
        if !self.board.is_empty_idx(p) {
            return Err(IllegalMove::Occupied(v));
        }
        let placement = self.board.placement(p, color);
        if placement.suicide {
            return Err(IllegalMove::Suicide(v));
        }
        if !repetition {
            return Ok((p, placement));
        }
        if self.ko == Some((p as u16, color)) {
            return Err(IllegalMove::Ko(v));
        }
        // Every placement is checked, captures or not: a cycle can close on a quiet move.
        if self.ko_rule != KoRule::Simple && self.repeats(color, p, placement.hash_after) {
            return Err(IllegalMove::Superko(v));
        }
        Ok((p, placement))
    }

    /// The key under which the repetition rule files a position.
    #[inline]
    fn key(&self, hash: u64, to_move: Color) -> u64 {
        match (self.ko_rule, to_move) {
            (KoRule::Situational, Color::White) => hash ^ zobrist::WHITE_TO_MOVE,
            _ => hash,
        }
    }

    fn record_position(&mut self) {
        let hash = self.board.hash();
        self.history.push(hash);
        if self.ko_rule != KoRule::Simple {
            self.seen.insert(self.key(hash, self.to_move));
        }
    }

    /// Who was to move in history position `i`.
    fn to_move_at(&self, i: usize) -> Color {
        match i {
            0 => self.start_to_move,
            _ => self.moves[i - 1].0.opponent(),
        }
    }

    /// Whether `color` playing on `p` (whose result hashes to `hash_after`) recreates an
    /// earlier position the repetition rule forbids. Confirmed stone by stone.
    fn repeats(&self, color: Color, p: usize, hash_after: u64) -> bool {
        let next = color.opponent();
        if !self.seen.contains(self.key(hash_after, next)) {
            return false;
        }
        let mut after = Board::clone(&self.board);
        after.apply(p, color, |_| {});
        let mut replay = Board::clone(&self.start);
        let mut replayed = 0;
        for (i, &hash) in self.history.iter().enumerate() {
            let side_matches = self.ko_rule == KoRule::Positional || self.to_move_at(i) == next;
            if hash != hash_after || !side_matches {
                continue;
            }
            for &(c, m) in &self.moves[replayed..i] {
                if let Move::Play(v) = m {
                    replay.apply(replay.idx(v), c, |_| {});
                }
            }
            replayed = i;
            if replay.same_stones(&after) {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game of random moves with captures; `captures` before each move must list
    /// exactly what `play` then reports, in the same order, and refuse what it refuses.
    #[test]
    fn captures_lists_what_play_removes() {
        for ko_rule in [KoRule::Situational, KoRule::Positional, KoRule::Simple] {
            let mut game = Game::new(9, ko_rule).unwrap();
            let mut seed = 0x2545_f491_4f6c_dd1d_u64;
            let (mut captured, mut refused) = (0, 0);
            for _ in 0..3000 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let c = game.to_move();
                let mv = match seed % 50 {
                    0 => Move::Pass,
                    r => Move::Play(Vertex::new((r % 9) as u8, ((seed >> 8) % 9) as u8)),
                };
                let predicted = game.captures(c, mv);
                let before = game.clone();
                match game.play(c, mv) {
                    Ok(()) => {
                        assert_eq!(predicted.as_deref(), Ok(game.last_captures()));
                        captured += game.last_captures().len();
                    }
                    Err(e) => {
                        assert_eq!(predicted, Err(e));
                        assert_eq!(game.moves(), before.moves());
                        refused += 1;
                    }
                }
            }
            assert!(
                captured > 100,
                "{ko_rule:?}: the games captured: {captured}"
            );
            assert!(refused > 100, "{ko_rule:?}: moves were refused: {refused}");
        }
    }

    #[test]
    fn seen_set_grows_and_keeps_every_key() {
        let mut s = Seen::with_capacity(4);
        for k in 0..1000u64 {
            s.insert(k.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        }
        for k in 0..1000u64 {
            assert!(s.contains(k.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        }
        assert!(!s.contains(12345));
    }
}
