//! Colours, points and moves: the small `Copy` values every other part passes around.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The largest board the engine plays (25x25: every GTP column letter used once).
pub const MAX_SIZE: u8 = 25;
/// The smallest board the engine plays.
pub const MIN_SIZE: u8 = 2;

/// GTP column letters: A to Z without I, so that `I` and `J` are never confused.
const COLUMNS: &[u8; 25] = b"ABCDEFGHJKLMNOPQRSTUVWXYZ";

/// A player's colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    Black,
    White,
}

impl Color {
    /// The other colour.
    #[inline]
    pub fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// 0 for Black, 1 for White: for per-colour arrays.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The SGF property letter (`B` or `W`).
    pub fn letter(self) -> char {
        match self {
            Color::Black => 'B',
            Color::White => 'W',
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Color::Black => "black",
            Color::White => "white",
        })
    }
}

impl FromStr for Color {
    type Err = VertexError;

    /// Accepts what GTP accepts: `b`, `black`, `w`, `white`, in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "b" | "black" => Ok(Color::Black),
            "w" | "white" => Ok(Color::White),
            _ => Err(VertexError::BadColor(s.to_string())),
        }
    }
}

/// A point on the board: `x` is the column from the left, `y` the row from the bottom,
/// both from 0, so `D4` is `(3, 3)` on every board size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Vertex {
    pub x: u8,
    pub y: u8,
}

/// Why a vertex or colour could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VertexError {
    #[error("`{0}` is not a vertex; write a column letter A-Z without I and a row number, e.g. D4")]
    Malformed(String),
    #[error("`{vertex}` is off a {size}x{size} board")]
    OffBoard { vertex: String, size: u8 },
    #[error("`{0}` is not a colour; write black or white")]
    BadColor(String),
}

impl Vertex {
    pub const fn new(x: u8, y: u8) -> Vertex {
        Vertex { x, y }
    }

    /// Reads a GTP vertex (`D4`, `q16`) and checks it lies on a `size` board.
    pub fn parse(s: &str, size: u8) -> Result<Vertex, VertexError> {
        let v = Vertex::parse_unchecked(s)?;
        if v.x >= size || v.y >= size {
            return Err(VertexError::OffBoard {
                vertex: s.to_string(),
                size,
            });
        }
        Ok(v)
    }

    /// Reads a GTP vertex without a board size (the caller checks bounds).
    pub fn parse_unchecked(s: &str) -> Result<Vertex, VertexError> {
        let bad = || VertexError::Malformed(s.to_string());
        let bytes = s.as_bytes();
        let (&letter, digits) = bytes.split_first().ok_or_else(bad)?;
        let letter = letter.to_ascii_uppercase();
        let x = COLUMNS.iter().position(|&c| c == letter).ok_or_else(bad)?;
        if digits.is_empty() || digits.len() > 2 || !digits.iter().all(u8::is_ascii_digit) {
            return Err(bad());
        }
        let row: u8 = std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse().ok())
            .ok_or_else(bad)?;
        if row == 0 || row > MAX_SIZE {
            return Err(bad());
        }
        Ok(Vertex::new(x as u8, row - 1))
    }

    /// Reads an SGF point (`dd`; `aa` is the top-left corner) on a `size` board.
    pub fn from_sgf(s: &str, size: u8) -> Option<Vertex> {
        let b = s.as_bytes();
        if b.len() != 2 {
            return None;
        }
        let col = b[0].checked_sub(b'a')?;
        let row = b[1].checked_sub(b'a')?;
        (col < size && row < size).then(|| Vertex::new(col, size - 1 - row))
    }

    /// Writes this point as SGF (`dd`) for a `size` board.
    pub fn to_sgf(self, size: u8) -> String {
        let col = (b'a' + self.x) as char;
        let row = (b'a' + (size - 1 - self.y)) as char;
        format!("{col}{row}")
    }
}

impl fmt::Display for Vertex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", COLUMNS[self.x as usize] as char, self.y + 1)
    }
}

impl Serialize for Vertex {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Vertex {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Vertex::parse_unchecked(&s).map_err(serde::de::Error::custom)
    }
}

/// What a player does on their turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    Play(Vertex),
    Pass,
}

impl Move {
    /// Reads a GTP move: a vertex or `pass`.
    pub fn parse(s: &str, size: u8) -> Result<Move, VertexError> {
        if s.eq_ignore_ascii_case("pass") {
            Ok(Move::Pass)
        } else {
            Vertex::parse(s, size).map(Move::Play)
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Move::Play(v) => v.fmt(f),
            Move::Pass => f.write_str("pass"),
        }
    }
}

impl Serialize for Move {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Move {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        if s.eq_ignore_ascii_case("pass") {
            Ok(Move::Pass)
        } else {
            Vertex::parse_unchecked(&s)
                .map(Move::Play)
                .map_err(serde::de::Error::custom)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gtp_vertices_skip_i_and_count_rows_from_the_bottom() {
        assert_eq!(Vertex::parse("A1", 19).unwrap(), Vertex::new(0, 0));
        assert_eq!(Vertex::parse("J10", 19).unwrap(), Vertex::new(8, 9));
        assert_eq!(Vertex::parse("t19", 19).unwrap(), Vertex::new(18, 18));
        assert_eq!(Vertex::new(7, 3).to_string(), "H4");
        assert_eq!(Vertex::new(8, 3).to_string(), "J4");
        assert_eq!(Vertex::parse("Z25", 25).unwrap(), Vertex::new(24, 24));
    }

    #[test]
    fn bad_vertices_are_refused_with_a_reason() {
        for bad in ["", "I5", "D", "D0", "D26", "4D", "DD4", "D4x", "D+4"] {
            assert!(
                matches!(Vertex::parse(bad, 25), Err(VertexError::Malformed(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            Vertex::parse("T19", 9),
            Err(VertexError::OffBoard { size: 9, .. })
        ));
    }

    #[test]
    fn sgf_points_count_rows_from_the_top() {
        assert_eq!(Vertex::from_sgf("aa", 19), Some(Vertex::new(0, 18)));
        assert_eq!(Vertex::from_sgf("ai", 9), Some(Vertex::new(0, 0)));
        assert_eq!(Vertex::from_sgf("tt", 19), None);
        assert_eq!(Vertex::new(3, 3).to_sgf(19), "dp");
    }

    #[test]
    fn moves_round_trip_through_json() {
        let m: Move = serde_json::from_str("\"Q16\"").unwrap();
        assert_eq!(m, Move::Play(Vertex::new(15, 15)));
        assert_eq!(serde_json::to_string(&Move::Pass).unwrap(), "\"pass\"");
        assert!(serde_json::from_str::<Move>("\"I9\"").is_err());
    }
}
