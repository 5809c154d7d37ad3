//! Counting a finished position (docs/RULES.md §6): area counting with dame split for the
//! Chinese rules, territory plus prisoners for the Japanese and Korean ones, and under the
//! ancient rules area counting less one point per living group (还棋头, §9.1). Counts are
//! kept in exact half points; floats appear only when a number is shown.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

use super::board::Board;
use super::points::HalfPoints;
use super::result::GameResult;
use super::ruleset::{Counting, Ruleset};
use super::vertex::{Color, Vertex};

/// The stones both players are marking dead. Marks go by chain: marking one stone
/// marks every stone connected to it, and so does unmarking.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct DeadStones(BTreeSet<Vertex>);

impl DeadStones {
    pub fn new() -> DeadStones {
        DeadStones::default()
    }

    /// Marks (`dead = true`) or unmarks the whole chain through `v`. Returns false when
    /// `v` holds no stone, so nothing changed.
    pub fn set_chain(&mut self, board: &Board, v: Vertex, dead: bool) -> bool {
        let chain = board.chain(v);
        for &s in &chain {
            if dead {
                self.0.insert(s);
            } else {
                self.0.remove(&s);
            }
        }
        !chain.is_empty()
    }

    /// Flips the chain through `v` between dead and alive.
    pub fn toggle_chain(&mut self, board: &Board, v: Vertex) -> bool {
        let dead = !self.contains(v);
        self.set_chain(board, v, dead)
    }

    pub fn contains(&self, v: Vertex) -> bool {
        self.0.contains(&v)
    }

    pub fn iter(&self) -> impl Iterator<Item = Vertex> + '_ {
        self.0.iter().copied()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What the count needs besides the position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoreRules {
    pub ruleset: Ruleset,
    pub komi: HalfPoints,
    /// Handicap stones Black received (0 for an even game).
    pub handicap: u8,
}

/// A counted position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Score {
    /// Black's count: area (stones + surrounded points) or territory + prisoners, less
    /// the group tax where the rules have one.
    pub black: HalfPoints,
    pub white: HalfPoints,
    /// Living groups per colour (Black, White): the points each gave back under the
    /// ancient rules' group tax (还棋头); `None` under rules without it.
    pub tax: Option<[u32; 2]>,
    /// Black's margin after komi and handicap compensation; negative when White wins.
    pub black_margin: HalfPoints,
    pub result: GameResult,
}

impl Score {
    /// Black's margin in stones (docs/RULES.md §6.5: 0.75 is "Black wins by ¾ stone").
    pub fn margin_stones(&self) -> f64 {
        self.black_margin.stones()
    }

    /// The result as the Chinese rules say it, e.g. `黑胜3/4子`, `白胜1又1/4子`, `和棋`.
    pub fn chinese(&self) -> String {
        let quarters = self.black_margin.0.unsigned_abs();
        if quarters == 0 {
            return "和棋".to_string();
        }
        let who = if self.black_margin.0 > 0 {
            "黑"
        } else {
            "白"
        };
        let (whole, frac) = (quarters / 4, quarters % 4);
        let frac = ["", "1/4", "1/2", "3/4"][frac as usize];
        match (whole, frac) {
            (w, "") => format!("{who}胜{w}子"),
            (0, f) => format!("{who}胜{f}子"),
            (w, f) => format!("{who}胜{w}又{f}子"),
        }
    }
}

/// Counts `board` with the `dead` stones taken off. `prisoners[c]` are the stones colour
/// `c` captured during play (only territory counting uses them).
pub fn count(board: &Board, dead: &DeadStones, rules: &ScoreRules, prisoners: [u32; 2]) -> Score {
    let size = board.size() as usize;
    let at = |v: Vertex| board.get(v).filter(|_| !dead.contains(v));
    // Per colour: live stones, living groups, surrounded empty points; dame is shared.
    let mut stones = [0i32; 2];
    let mut groups = [0u32; 2];
    let mut surrounded = [0i32; 2];
    let mut dame = 0i32;
    let mut seen = vec![false; size * size];
    let mut stack = Vec::new();
    for v in board.points() {
        let slot = |v: Vertex| v.y as usize * size + v.x as usize;
        if seen[slot(v)] {
            continue;
        }
        // Flood from v what is like it: a group of live stones of its colour, or an empty
        // (or dead) region, noting which colours border the region.
        let here = at(v);
        let (mut region, mut borders) = (0i32, [false; 2]);
        seen[slot(v)] = true;
        stack.push(v);
        while let Some(p) = stack.pop() {
            region += 1;
            for n in board.neighbors(p) {
                match at(n) {
                    c if c == here && !seen[slot(n)] => {
                        seen[slot(n)] = true;
                        stack.push(n);
                    }
                    Some(c) if here.is_none() => borders[c.index()] = true,
                    _ => {}
                }
            }
        }
        if let Some(c) = here {
            stones[c.index()] += region;
            groups[c.index()] += 1;
            continue;
        }
        match borders {
            [true, false] => surrounded[0] += region,
            [false, true] => surrounded[1] += region,
            [true, true] => dame += region,
            [false, false] => {}
        }
    }
    let dead_of = |c: Color| dead.iter().filter(|&v| board.get(v) == Some(c)).count() as i32;
    let (mut black, mut white) = match rules.ruleset.counting() {
        Counting::Area { split_dame } => {
            let shared = if split_dame { dame } else { 0 };
            (
                2 * (stones[0] + surrounded[0]) + shared,
                2 * (stones[1] + surrounded[1]) + shared,
            )
        }
        Counting::Territory => (
            2 * (surrounded[0] + prisoners[0] as i32 + dead_of(Color::White)),
            2 * (surrounded[1] + prisoners[1] as i32 + dead_of(Color::Black)),
        ),
    };
    // 还棋头: one point (two half points) given back per living group.
    let tax = rules.ruleset.taxes_groups().then_some(groups);
    if let Some([b, w]) = tax {
        black -= 2 * b as i32;
        white -= 2 * w as i32;
    }
    let compensation = if rules.ruleset.compensates_handicap() && rules.handicap >= 2 {
        2 * i32::from(rules.handicap)
    } else {
        0
    };
    let black_margin = HalfPoints(black - white - rules.komi.0 - compensation);
    let winner = match black_margin.0 {
        0 => None,
        m if m > 0 => Some(Color::Black),
        _ => Some(Color::White),
    };
    Score {
        black: HalfPoints(black),
        white: HalfPoints(white),
        tax,
        black_margin,
        result: GameResult::Score {
            winner,
            margin: HalfPoints(black_margin.0.abs()),
        },
    }
}
