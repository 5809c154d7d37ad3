//! Standings: the score, then the regulations' tie-breaks in their order, as the EGF
//! tournament system rules define them. All values are in half points.
//!
//! A round without an opponent (a bye, a round missed before a late registration, an
//! absence) adds to SOS the player's own start score in a McMahon and 0 otherwise (EGF
//! rules, "the effect of unplayed games"); to SOSOS it adds that virtual opponent's SOS:
//! the same start score once for each round of the event. Equal players share a place.

use serde::{Deserialize, Serialize};

use super::field::{Record, Seat, Turn};
use super::regulations::{HalfPoints, System, TieBreak};

/// One line of the standings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Standing {
    pub seat: Seat,
    /// 1 for the first; equal players share one.
    pub place: usize,
    /// McMahon score (McMahon), points (other systems).
    pub score: HalfPoints,
    /// Half points earned in the event: games, byes and missed rounds.
    pub wins: HalfPoints,
    pub sos: i64,
    pub sosos: i64,
    pub sodos: i64,
    pub cuss: i64,
    /// Direct confrontation: 1 for a player placed above their one equal by winning
    /// their games, else 0.
    #[serde(default)]
    pub direct: i64,
}

impl Standing {
    fn value(&self, tie_break: TieBreak) -> i64 {
        match tie_break {
            TieBreak::Sos => self.sos,
            TieBreak::Sosos => self.sosos,
            TieBreak::Sodos => self.sodos,
            TieBreak::Cuss => self.cuss,
            TieBreak::Wins => i64::from(self.wins),
            TieBreak::Direct => self.direct,
        }
    }
}

/// The standings after every round so far, first place first.
pub fn standings(record: &Record) -> Vec<Standing> {
    let n = record.field.len();
    let rounds = record.rounds.len();
    let score: Vec<HalfPoints> = (0..n).map(|s| record.score(s)).collect();
    let unplayed = |seat: Seat| match record.regulations.system {
        System::McMahon { .. } => i64::from(record.start(seat)),
        _ => 0,
    };
    let turns: Vec<Vec<Turn>> = (0..n)
        .map(|s| (0..rounds).map(|r| record.turn(s, r)).collect())
        .collect();
    let sos: Vec<i64> = (0..n)
        .map(|s| {
            turns[s]
                .iter()
                .map(|t| match *t {
                    Turn::Played { opponent, .. } => i64::from(score[opponent]),
                    _ => unplayed(s),
                })
                .sum()
        })
        .collect();
    let mut table: Vec<Standing> = (0..n)
        .map(|s| {
            let mut sosos = 0;
            let mut sodos = 0;
            for t in &turns[s] {
                match *t {
                    Turn::Played {
                        opponent, points, ..
                    } => {
                        sosos += sos[opponent];
                        sodos += i64::from(score[opponent]) * i64::from(points.unwrap_or(0)) / 2;
                    }
                    _ => sosos += unplayed(s) * rounds as i64,
                }
            }
            Standing {
                seat: s,
                place: 0,
                score: score[s],
                wins: score[s] - record.start(s) - record.adjusted(s, rounds),
                sos: sos[s],
                sosos,
                sodos,
                cuss: (1..=rounds)
                    .map(|r| i64::from(record.score_after(s, r)))
                    .sum(),
                direct: 0,
            }
        })
        .collect();
    table.sort_by_key(|st| (std::cmp::Reverse(st.score), st.seat));
    // Each position's group of equals, in the order refining leaves the table in.
    let mut equals = Vec::with_capacity(n);
    let mut start = 0;
    while start < table.len() {
        let score = table[start].score;
        let end = start
            + table[start..]
                .iter()
                .take_while(|t| t.score == score)
                .count();
        refine(record, &mut table[start..end], 0, &mut equals);
        start = end;
    }
    for i in 0..table.len() {
        table[i].place = if i > 0 && equals[i] == equals[i - 1] {
            table[i - 1].place
        } else {
            i + 1
        };
    }
    table
}

/// Orders `group` (equal so far) in place by the tie-breaks from `level` on, and
/// appends for each of its players the number of the group they stay equal in.
fn refine(record: &Record, group: &mut [Standing], level: usize, equals: &mut Vec<usize>) {
    let tie_breaks = &record.regulations.tie_breaks;
    if group.len() == 1 || level == tie_breaks.len() {
        let number = equals.last().map_or(0, |n| n + 1);
        equals.extend(std::iter::repeat_n(number, group.len()));
        return;
    }
    let tie_break = tie_breaks[level];
    if tie_break == TieBreak::Direct {
        let winner = match group {
            [a, b] => winner_between(record, a.seat, b.seat),
            _ => None,
        };
        if let Some(winner) = winner {
            if winner == group[1].seat {
                group.swap(0, 1);
            }
            group[0].direct = 1;
            let (first, second) = group.split_at_mut(1);
            refine(record, first, tie_breaks.len(), equals);
            refine(record, second, tie_breaks.len(), equals);
            return;
        }
        refine(record, group, level + 1, equals);
        return;
    }
    group.sort_by_key(|st| (std::cmp::Reverse(st.value(tie_break)), st.seat));
    let mut start = 0;
    while start < group.len() {
        let value = group[start].value(tie_break);
        let end = start
            + group[start..]
                .iter()
                .take_while(|t| t.value(tie_break) == value)
                .count();
        refine(record, &mut group[start..end], level + 1, equals);
        start = end;
    }
}

/// The winner of the games between `a` and `b`, if they met and one won more often.
fn winner_between(record: &Record, a: Seat, b: Seat) -> Option<Seat> {
    let mut balance = 0;
    for round in &record.rounds {
        if let Some(board) = round.board_of(a).filter(|board| board.has(b)) {
            balance += board.points_of(a).unwrap_or(1) - board.points_of(b).unwrap_or(1);
        }
    }
    match balance.signum() {
        1 => Some(a),
        -1 => Some(b),
        _ => None,
    }
}
