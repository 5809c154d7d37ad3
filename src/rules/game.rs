//! A game in progress: the position, whose turn it is, the move list and the history of
//! every position since the start, which the repetition rules (docs/RULES.md §3) consult.
//!
//! Superko looks at the whole history, the starting position included. A 64-bit hash
//! only nominates a repetition: before a move is refused, the earlier position is rebuilt
//! from the move list and compared stone by stone, so a hash collision can never forbid a
//! legal move. Rebuilding is rare (real repetitions), and so is looking through the
//! history at all: the common path is one probe of a small filter ([`Seen`]) with no
//! allocation.

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

/// The position keys a game has filed, as a filter with no false negatives: open
/// addressing over a power-of-two table of 15-bit tags (0 marks an empty slot), grown
/// (rarely) when three-quarters full. A tag found says only that the key *may* have been
/// filed, and the caller looks for it in the history. Full keys would make the table four
/// times larger, and every new game zeroes it and every decision copies it; a false alarm
/// (one in 32,768 of the filed slots a probe passes) costs a scan of the history.
#[derive(Clone)]
struct Seen {
    tags: Vec<u16>,
    len: usize,
}

impl Seen {
    /// Room for `positions` keys before the table must grow.
    fn with_room(positions: usize) -> Seen {
        Seen::with_slots((positions * 4 / 3 + 1).next_power_of_two().max(64))
    }

    fn with_slots(slots: usize) -> Seen {
        Seen {
            tags: vec![0; slots],
            len: 0,
        }
    }

    /// The empty slot where `key` would be filed, with its tag; `None` when the tag is
    /// in the key's run already. The low bits of the key pick where the run starts, its
    /// top 15 bits (and the low bit set, never 0) are the tag.
    #[inline(always)]
    fn vacancy(&self, key: u64) -> Option<(usize, u16)> {
        let mask = self.tags.len() - 1;
        let (mut i, tag) = (key as usize & mask, (key >> 48) as u16 | 1);
        loop {
            match self.tags[i] {
                0 => return Some((i, tag)),
                t if t == tag => return None,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Whether `key` may have been filed: false means it certainly was not.
    #[inline(always)]
    fn may_contain(&self, key: u64) -> bool {
        self.vacancy(key).is_none()
    }

    /// Whether one more key would take the table over three-quarters full.
    #[inline]
    fn is_full(&self) -> bool {
        (self.len + 1) * 4 > self.tags.len() * 3
    }

    /// Files `key` (see [`Seen::is_full`] first). A tag already in the run stands for it.
    #[inline]
    fn insert(&mut self, key: u64) {
        if let Some((i, tag)) = self.vacancy(key) {
            self.tags[i] = tag;
            self.len += 1;
        }
    }
}

/// The position before the first move. It never changes, so every copy of a game shares
/// it: copying a game (as a decision does) copies one board, not two.
#[derive(Clone)]
enum Start {
    /// The empty board of the game's size ([`Board::empty`]).
    Empty(&'static Board),
    /// Handicap or other set-up stones.
    Setup(Arc<Board>),
}

/// A game from its starting position onwards.
#[derive(Clone)]
pub struct Game {
    ko_rule: KoRule,
    start: Start,
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
        let empty = Board::empty(size)?;
        let mut board = Box::new(empty.clone());
        let start = match stones {
            [] => Start::Empty(empty),
            _ => {
                for &(v, c) in stones {
                    board.place_setup(v, c);
                }
                Start::Setup(Arc::new(Board::clone(&board)))
            }
        };
        let area = size as usize * size as usize;
        let mut game = Game {
            ko_rule,
            start,
            board,
            start_to_move: to_move,
            to_move,
            moves: Vec::with_capacity(area * 3 / 2),
            history: Vec::with_capacity(area * 3 / 2 + 1),
            seen: Seen::with_room(area * 2),
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
        match &self.start {
            Start::Empty(board) => board,
            Start::Setup(board) => board,
        }
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
                let placement = self.judge(color, v, true)?;
                let mut out = Vec::with_capacity(usize::from(placement.captures));
                self.board.captured_by(&placement, |s| out.push(s));
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
                let placement = self.judge(color, v, repetition)?;
                self.last_captures.clear();
                let captured = &mut self.last_captures;
                self.board.commit(&placement, |s| captured.push(s));
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
    fn judge(&self, color: Color, v: Vertex, repetition: bool) -> Result<Placement, IllegalMove> {
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
            return Ok(placement);
        }
        if self.ko == Some((p as u16, color)) {
            return Err(IllegalMove::Ko(v));
        }
        // Every placement is checked, captures or not: a cycle can close on a quiet move.
        // The probe almost always misses; only a hit pays for the look at the history.
        if self.ko_rule != KoRule::Simple
            && self
                .seen
                .may_contain(self.key(placement.hash_after, color.opponent()))
            && self.repeats(color, &placement)
        {
            return Err(IllegalMove::Superko(v));
        }
        Ok(placement)
    }

    /// The key under which the repetition rule files a position.
    #[inline]
    fn key(&self, hash: u64, to_move: Color) -> u64 {
        match (self.ko_rule, to_move) {
            (KoRule::Situational, Color::White) => hash ^ zobrist::WHITE_TO_MOVE,
            _ => hash,
        }
    }

    #[inline]
    fn record_position(&mut self) {
        let hash = self.board.hash();
        if self.ko_rule != KoRule::Simple {
            if self.seen.is_full() {
                self.grow_seen();
            }
            self.seen.insert(self.key(hash, self.to_move));
        }
        self.history.push(hash);
    }

    /// Refiles the history in a table of twice the size. Tags cannot be moved to the
    /// larger table's slots, so the keys are made again from the history.
    #[cold]
    #[inline(never)]
    fn grow_seen(&mut self) {
        let mut seen = Seen::with_slots(self.seen.tags.len() * 2);
        for (i, &hash) in self.history.iter().enumerate() {
            seen.insert(self.key(hash, self.to_move_at(i)));
        }
        self.seen = seen;
    }

    /// Who was to move in history position `i`.
    fn to_move_at(&self, i: usize) -> Color {
        match i {
            0 => self.start_to_move,
            _ => self.moves[i - 1].0.opponent(),
        }
    }

    /// Whether `color` making `placement`, whose position key the game may have seen,
    /// recreates an earlier position the repetition rule forbids. Confirmed stone by stone.
    #[cold]
    #[inline(never)]
    fn repeats(&self, color: Color, placement: &Placement) -> bool {
        let next = color.opponent();
        let candidates = self.history.iter().enumerate().filter(|&(i, &hash)| {
            hash == placement.hash_after
                && (self.ko_rule == KoRule::Positional || self.to_move_at(i) == next)
        });
        // Made at the first candidate: a false alarm of the filter costs only the scan.
        let mut boards = None;
        for (i, _) in candidates {
            let (after, replay, replayed) = boards.get_or_insert_with(|| {
                let mut after = Board::clone(&self.board);
                after.commit(placement, |_| {});
                (after, Board::clone(self.start()), 0)
            });
            for &(c, m) in &self.moves[*replayed..i] {
                if let Move::Play(v) = m {
                    replay.apply(replay.idx(v), c, |_| {});
                }
            }
            *replayed = i;
            if replay.same_stones(after) {
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
    fn seen_filter_has_no_false_negatives() {
        let key = |k: u64| k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut s = Seen::with_room(700);
        for k in 0..700 {
            assert!(!s.is_full());
            s.insert(key(k));
        }
        assert!((0..700).all(|k| s.may_contain(key(k))));
        let false_alarms = (700..100_700).filter(|&k| s.may_contain(key(k))).count();
        assert!(
            false_alarms < 100,
            "{false_alarms} false alarms in 100,000 probes"
        );
    }

    /// A game long enough to outgrow its table still finds every earlier position.
    #[test]
    fn seen_grows_and_keeps_every_position() {
        for ko_rule in [KoRule::Situational, KoRule::Positional] {
            let mut game = Game::new(9, ko_rule).unwrap();
            let slots = game.seen.tags.len();
            let mut seed = 0x2545_f491_4f6c_dd1d_u64;
            while game.seen.tags.len() == slots {
                assert!(game.moves().len() < 10_000, "{ko_rule:?}: the table grows");
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let v = Vertex::new((seed % 9) as u8, ((seed >> 8) % 9) as u8);
                let c = game.to_move();
                if game.play(c, Move::Play(v)).is_err() {
                    game.play(c, Move::Pass).unwrap();
                }
            }
            for (i, &hash) in game.history.iter().enumerate() {
                let key = game.key(hash, game.to_move_at(i));
                assert!(game.seen.may_contain(key), "{ko_rule:?}: position {i}");
            }
        }
    }
}
