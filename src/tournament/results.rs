//! The results file a rating list takes (the EGF tournament table): a header of `;`
//! lines, then one line a player in placement order, each round as the opponent's place,
//! `+`, `-` or `=`, then `/`, the colour and the handicap (`5+/w0`), and a round without a
//! game as `0+`, `0-` or `0=`. Reading a table back gives a record with the same
//! standings.

use std::fmt::Write as _;

use super::field::{Board, Entrant, Outcome, Record, Round, Seat, Status, Turn};
use super::regulations::{HalfPoints, Regulations};
use super::standings::standings;
use crate::rating::Rank;

/// Why a results table could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("line {line}: {why}")]
    Line { line: usize, why: String },
    #[error("the games of rounds {round} do not agree: {why}")]
    Games { round: usize, why: String },
}

/// Header facts the table names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header {
    pub event: String,
    pub place: String,
    /// First and last day, `YYYY-MM-DD`.
    pub dates: (String, String),
    pub komi: String,
}

/// The table of `record`'s standings.
pub fn write_table(record: &Record, header: &Header) -> String {
    let table = standings(record);
    let mut place_of = vec![0; record.field.len()];
    for (i, st) in table.iter().enumerate() {
        place_of[st.seat] = i + 1;
    }
    let mut out = String::new();
    let _ = writeln!(out, "; EV[{}]", header.event);
    let _ = writeln!(out, "; PC[{}]", header.place);
    let _ = writeln!(out, "; DT[{},{}]", header.dates.0, header.dates.1);
    let _ = writeln!(out, "; KM[{}]", header.komi);
    let _ = writeln!(
        out,
        "; HA[h{}]",
        record.regulations.handicap.map_or(0, |h| h.correction)
    );
    let _ = writeln!(out, ";");
    let _ = writeln!(out, "; Pl Name Rank Co Club Score SOS Rounds");
    for (i, st) in table.iter().enumerate() {
        let p = &record.field[st.seat];
        let _ = write!(
            out,
            "{:>4} {} {} {} {} {} {}",
            i + 1,
            word(&p.id),
            p.rank,
            word_or_dash(&p.country),
            word_or_dash(&p.club),
            half(st.score),
            half_i64(st.sos),
        );
        for round in 0..record.rounds.len() {
            out.push(' ');
            out.push_str(&cell(record, st.seat, round, &place_of));
        }
        out.push('\n');
    }
    out
}

fn cell(record: &Record, seat: Seat, round: usize, place_of: &[usize]) -> String {
    let sign = |points: HalfPoints| match points {
        2.. => '+',
        1 => '=',
        _ => '-',
    };
    match record.turn(seat, round) {
        Turn::Played {
            opponent,
            black,
            handicap,
            points,
        } => format!(
            "{}{}/{}{}",
            place_of[opponent],
            sign(points.unwrap_or(0)),
            if black { 'b' } else { 'w' },
            handicap
        ),
        _ => format!("0{}", sign(record.gained(seat, round))),
    }
}

/// A name as one word: the table separates columns by spaces.
fn word(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join("_")
}

fn word_or_dash(s: &str) -> String {
    if s.trim().is_empty() {
        "-".into()
    } else {
        word(s)
    }
}

fn half(h: HalfPoints) -> String {
    half_i64(i64::from(h))
}

fn half_i64(h: i64) -> String {
    if h % 2 == 0 {
        format!("{}", h / 2)
    } else {
        format!("{}.5", h / 2)
    }
}

/// One round's cell as read: the opponent's place (0 for none), this player's points,
/// and for a game the colour and handicap.
struct Cell {
    opponent: usize,
    points: HalfPoints,
    black: bool,
    handicap: u8,
}

fn read_cell(token: &str) -> Option<Cell> {
    let split = token.find(['+', '-', '='])?;
    let opponent: usize = token[..split].parse().ok()?;
    let points = match token.as_bytes()[split] {
        b'+' => 2,
        b'=' => 1,
        _ => 0,
    };
    let rest = &token[split + 1..];
    if opponent == 0 {
        return rest.is_empty().then_some(Cell {
            opponent,
            points,
            black: false,
            handicap: 0,
        });
    }
    let rest = rest.strip_prefix('/')?;
    let black = match rest.as_bytes().first()? {
        b'b' => true,
        b'w' => false,
        _ => return None,
    };
    let handicap = rest[1..].parse().ok()?;
    Some(Cell {
        opponent,
        points,
        black,
        handicap,
    })
}

/// A record from a table written by [`write_table`] (or any table in that format), under
/// `regulations`: players take the seats of their places.
pub fn read_table(text: &str, regulations: Regulations) -> Result<Record, TableError> {
    let mut field = Vec::new();
    let mut cells: Vec<Vec<Cell>> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with(';') {
            continue;
        }
        let bad = |why: &str| TableError::Line {
            line: n + 1,
            why: why.into(),
        };
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let place: usize = tokens[0]
            .parse()
            .map_err(|_| bad("a line must begin with a place"))?;
        if place != field.len() + 1 {
            return Err(bad("places must run 1, 2, 3, … in order"));
        }
        let rank_at = (2..tokens.len())
            .find(|&i| tokens[i].parse::<Rank>().is_ok())
            .ok_or_else(|| bad("no rank (like 3d or 12k) after the name"))?;
        let rank: Rank = tokens[rank_at].parse().map_err(|_| bad("bad rank"))?;
        let first_cell = (rank_at + 3..tokens.len())
            .find(|&i| tokens[i..].iter().all(|t| read_cell(t).is_some()))
            .unwrap_or(tokens.len());
        let row: Vec<Cell> = tokens[first_cell..]
            .iter()
            .filter_map(|t| read_cell(t))
            .collect();
        if cells
            .first()
            .is_some_and(|first: &Vec<Cell>| row.len() != first.len())
        {
            return Err(bad("every line must have the same number of rounds"));
        }
        let dash = |s: &str| {
            if s == "-" {
                String::new()
            } else {
                s.to_string()
            }
        };
        field.push(Entrant {
            id: tokens[1..rank_at].join("_"),
            rank,
            country: dash(tokens.get(rank_at + 1).copied().unwrap_or("-")),
            club: dash(tokens.get(rank_at + 2).copied().unwrap_or("-")),
            first_round: 1,
            status: Status::Playing,
        });
        cells.push(row);
    }
    let rounds = cells.first().map_or(0, Vec::len);
    let mut record = Record {
        regulations,
        field,
        rounds: Vec::with_capacity(rounds),
    };
    for round in 0..rounds {
        let mut r = Round::default();
        for seat in 0..cells.len() {
            let c = &cells[seat][round];
            if c.opponent == 0 {
                unplayed(&mut record, &mut r, seat, round, c.points)?;
                continue;
            }
            let opponent = c.opponent - 1;
            let games = |why: &str| TableError::Games {
                round: round + 1,
                why: why.into(),
            };
            let theirs = cells
                .get(opponent)
                .map(|row| &row[round])
                .ok_or_else(|| games("a place beyond the table"))?;
            if theirs.opponent != seat + 1
                || theirs.black == c.black
                || theirs.handicap != c.handicap
            {
                return Err(games("two lines of one game disagree"));
            }
            if c.black {
                let outcome = match (c.points, theirs.points) {
                    (2, _) => Outcome::Black,
                    (_, 2) => Outcome::White,
                    (1, 1) => Outcome::Jigo,
                    _ => Outcome::BothLose,
                };
                r.boards.push(Board {
                    black: seat,
                    white: opponent,
                    handicap: c.handicap,
                    outcome: Some(outcome),
                });
            }
        }
        record.rounds.push(r);
    }
    Ok(record)
}

/// A round without a game: a bye, a round before a late start, or an absence, whichever
/// scores what the table says.
fn unplayed(
    record: &mut Record,
    round: &mut Round,
    seat: Seat,
    index: usize,
    points: HalfPoints,
) -> Result<(), TableError> {
    let regs = &record.regulations;
    let late = usize::from(record.field[seat].first_round) == index + 1
        && (0..index).all(|r| {
            record.rounds[r].board_of(seat).is_none() && !record.rounds[r].byes.contains(&seat)
        });
    if points == regs.bye && !record.had_bye(seat) {
        round.byes.push(seat);
    } else if points == regs.missed_round && late {
        record.field[seat].first_round += 1;
    } else if points != 0 {
        return Err(TableError::Games {
            round: index + 1,
            why: format!(
                "place {} scores {points} half points without a game",
                seat + 1
            ),
        });
    }
    Ok(())
}
