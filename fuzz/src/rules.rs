//! The rules engine on random games: after every move the incremental board (stones,
//! chains, counts, Zobrist hash, captures) equals a from-scratch recompute, and every
//! verdict (occupied, suicide, ko, superko) equals that of a slow reference written here
//! from RULES.md alone: a plain grid, captures by flood fill, and repetition by comparing
//! the new grid with every earlier one.

use std::collections::HashSet;

use tengen::rules::{Color, Game, IllegalMove, KoRule, Move, Vertex};

use crate::bytes::Bytes;

/// The reference: a grid of `Option<Color>`, row by row from A1.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Grid {
    size: u8,
    cells: Vec<Option<Color>>,
}

impl Grid {
    fn new(size: u8) -> Self {
        Self {
            size,
            cells: vec![None; usize::from(size) * usize::from(size)],
        }
    }

    fn at(&self, v: Vertex) -> Option<Color> {
        self.cells[self.index(v)]
    }

    fn index(&self, v: Vertex) -> usize {
        usize::from(v.y) * usize::from(self.size) + usize::from(v.x)
    }

    fn neighbors(&self, v: Vertex) -> Vec<Vertex> {
        let mut out = Vec::with_capacity(4);
        if v.x > 0 {
            out.push(Vertex::new(v.x - 1, v.y));
        }
        if v.x + 1 < self.size {
            out.push(Vertex::new(v.x + 1, v.y));
        }
        if v.y > 0 {
            out.push(Vertex::new(v.x, v.y - 1));
        }
        if v.y + 1 < self.size {
            out.push(Vertex::new(v.x, v.y + 1));
        }
        out
    }

    /// The chain through the stone on `v` (sorted) and its number of liberties.
    fn chain(&self, v: Vertex) -> (Vec<Vertex>, usize) {
        let color = self.at(v);
        let mut seen = vec![false; self.cells.len()];
        seen[self.index(v)] = true;
        let mut chain = vec![v];
        let mut liberties = 0;
        let mut i = 0;
        while i < chain.len() {
            for n in self.neighbors(chain[i]) {
                let k = self.index(n);
                if seen[k] {
                    continue;
                }
                match self.at(n) {
                    None => liberties += 1,
                    c if c == color => chain.push(n),
                    _ => continue,
                }
                seen[k] = true;
            }
            i += 1;
        }
        chain.sort_unstable();
        (chain, liberties)
    }

    /// Puts a stone on the empty `v`, removes the opposing chains left without a
    /// liberty, then the mover's own chain if it has none; returns what was removed.
    fn place(&mut self, v: Vertex, color: Color) -> Vec<Vertex> {
        let i = self.index(v);
        self.cells[i] = Some(color);
        let mut removed = Vec::new();
        for n in self.neighbors(v) {
            if self.at(n) == Some(color.opponent()) {
                let (chain, liberties) = self.chain(n);
                if liberties == 0 {
                    for s in chain {
                        let i = self.index(s);
                        self.cells[i] = None;
                        removed.push(s);
                    }
                }
            }
        }
        let (own, liberties) = self.chain(v);
        if liberties == 0 {
            for s in own {
                let i = self.index(s);
                self.cells[i] = None;
                removed.push(s);
            }
        }
        removed.sort_unstable();
        removed
    }
}

/// The reference game: the grid, every position so far with the side then to move (in
/// a set that compares whole grids), and the point the last move forbids its opponent.
struct Reference {
    ko_rule: KoRule,
    grid: Grid,
    history: HashSet<(Grid, Color)>,
    positions: usize,
    ko: Option<(Vertex, Color)>,
    prisoners: [u32; 2],
    passes_in_row: u32,
    last_captures: Vec<Vertex>,
}

impl Reference {
    /// The verdict on `color` playing `v`, and the grid and captures it would give.
    fn judge(
        &self,
        color: Color,
        v: Vertex,
        repetition: bool,
    ) -> Result<(Grid, Vec<Vertex>), IllegalMove> {
        if v.x >= self.grid.size || v.y >= self.grid.size {
            return Err(IllegalMove::OffBoard(v));
        }
        if self.grid.at(v).is_some() {
            return Err(IllegalMove::Occupied(v));
        }
        let mut after = self.grid.clone();
        let captured = after.place(v, color);
        if after.at(v).is_none() {
            return Err(IllegalMove::Suicide(v));
        }
        if !repetition {
            return Ok((after, captured));
        }
        if self.ko == Some((v, color)) {
            return Err(IllegalMove::Ko(v));
        }
        let next = color.opponent();
        let seen = |to_move: Color| self.history.contains(&(after.clone(), to_move));
        let repeats = match self.ko_rule {
            KoRule::Simple => false,
            KoRule::Positional => seen(Color::Black) || seen(Color::White),
            KoRule::Situational => seen(next),
        };
        if repeats {
            return Err(IllegalMove::Superko(v));
        }
        Ok((after, captured))
    }

    fn play(&mut self, color: Color, mv: Move, repetition: bool) -> Result<(), IllegalMove> {
        self.last_captures = match mv {
            Move::Pass => {
                self.ko = None;
                self.passes_in_row += 1;
                Vec::new()
            }
            Move::Play(v) => {
                let (after, captured) = self.judge(color, v, repetition)?;
                // A simple ko: one stone taken by a lone stone whose only liberty is the
                // point just emptied.
                let (own, liberties) = after.chain(v);
                self.ko = (captured.len() == 1 && own.len() == 1 && liberties == 1)
                    .then(|| (captured[0], color.opponent()));
                self.grid = after;
                self.prisoners[color.index()] += captured.len() as u32;
                self.passes_in_row = 0;
                captured
            }
        };
        self.record(color.opponent());
        Ok(())
    }

    fn record(&mut self, to_move: Color) {
        self.history.insert((self.grid.clone(), to_move));
        self.positions += 1;
    }
}

fn ko_rule(b: u8) -> KoRule {
    match b % 3 {
        0 => KoRule::Situational,
        1 => KoRule::Positional,
        _ => KoRule::Simple,
    }
}

fn color(b: u8) -> Color {
    if b & 1 == 0 {
        Color::Black
    } else {
        Color::White
    }
}

/// Mostly small boards, where repetitions come quickly; now and then any size.
fn board_size(b: u8) -> u8 {
    if b & 0x80 == 0 { 2 + b % 6 } else { 2 + b % 24 }
}

pub fn check(data: &[u8]) {
    let mut bytes = Bytes::new(data);
    let size = board_size(bytes.u8());
    let rule = ko_rule(bytes.u8());
    let mut reference = Reference {
        ko_rule: rule,
        grid: Grid::new(size),
        history: HashSet::new(),
        positions: 0,
        ko: None,
        prisoners: [0; 2],
        passes_in_row: 0,
        last_captures: Vec::new(),
    };
    let setup: Vec<(Vertex, Color)> = (0..bytes.u8() % 8)
        .map(|_| {
            let (x, y, c) = (bytes.u8() % size, bytes.u8() % size, bytes.u8());
            (Vertex::new(x, y), color(c))
        })
        .collect();
    for &(v, c) in &setup {
        if reference.grid.at(v).is_none() {
            reference.grid.place(v, c);
        }
    }
    let first = color(bytes.u8());
    let mut game = Game::with_setup(size, rule, &setup, first).expect("sizes 2..=25 are valid");
    reference.record(first);
    compare(&game, &reference);
    assert_eq!(game.start().hash(), game.start().recompute_hash());

    let mut moves = 0;
    while !bytes.is_empty() && moves < 1_000 {
        moves += 1;
        let op = bytes.u8();
        // Mostly the side to move; sometimes the same side twice, as records may hold.
        let mover = if op & 0x40 == 0 {
            game.to_move()
        } else {
            game.to_move().opponent()
        };
        let mv = if op & 0x0f == 0 {
            Move::Pass
        } else if op & 0x0f == 1 {
            // Now and then a point off the board.
            Move::Play(Vertex::new(bytes.u8() % 26, bytes.u8() % 26))
        } else {
            Move::Play(Vertex::new(bytes.u8() % size, bytes.u8() % size))
        };
        let repetition = op & 0x80 == 0;
        let expected = reference.clone_verdict(mover, mv, repetition);
        if repetition {
            assert_eq!(
                game.check(mover, mv),
                expected.map(|_| ()),
                "check {mover:?} {mv}"
            );
        }
        let got = if repetition {
            game.play(mover, mv)
        } else {
            game.play_ignoring_repetition(mover, mv)
        };
        assert_eq!(
            got,
            expected.map(|_| ()),
            "{mover:?} {mv} on\n{:?}",
            game.board()
        );
        if got.is_ok() {
            reference.play(mover, mv, repetition).expect("judged legal");
        }
        // After an illegal move too: it must have changed nothing.
        compare(&game, &reference);
    }
}

impl Reference {
    fn clone_verdict(&self, color: Color, mv: Move, repetition: bool) -> Result<(), IllegalMove> {
        match mv {
            Move::Pass => Ok(()),
            Move::Play(v) => self.judge(color, v, repetition).map(|_| ()),
        }
    }
}

/// The game's incremental state equals the reference recomputed from the stones.
fn compare(game: &Game, reference: &Reference) {
    let board = game.board();
    let grid = &reference.grid;
    let mut checked = vec![false; grid.cells.len()];
    for v in board.points() {
        assert_eq!(board.get(v), grid.at(v), "stone on {v}\n{board:?}");
        if grid.at(v).is_some() && !checked[grid.index(v)] {
            let (chain, liberties) = grid.chain(v);
            let mut got = board.chain(v);
            got.sort_unstable();
            assert_eq!(got, chain, "chain through {v}\n{board:?}");
            assert_eq!(board.liberties(v), liberties, "liberties of {v}\n{board:?}");
            for s in chain {
                checked[grid.index(s)] = true;
            }
        }
    }
    assert_eq!(
        board.hash(),
        board.recompute_hash(),
        "incremental hash\n{board:?}"
    );
    for c in [Color::Black, Color::White] {
        let on_board = grid.cells.iter().filter(|&&s| s == Some(c)).count();
        assert_eq!(usize::from(board.stones(c)), on_board, "{c} stones");
        assert_eq!(
            game.prisoners(c),
            reference.prisoners[c.index()],
            "{c} prisoners"
        );
    }
    let mut captured = game.last_captures().to_vec();
    captured.sort_unstable();
    assert_eq!(captured, reference.last_captures, "captures\n{board:?}");
    assert_eq!(game.passes_in_row(), reference.passes_in_row);
    assert_eq!(game.moves().len() + 1, reference.positions);
}
