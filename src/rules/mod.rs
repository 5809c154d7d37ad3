//! Pure Go rules (docs/RULES.md): the board, captures, ko and superko, handicap, counting and
//! game records. Never does I/O, never reads a clock, never allocates while playing a
//! move; usable as a library on its own.

mod board;
mod cells;
mod game;
mod handicap;
mod points;
mod result;
mod ruleset;
mod score;
pub mod sgf;
mod vertex;
mod zobrist;

pub use board::{Board, SizeError};
pub use game::{Game, IllegalMove};
pub use handicap::{
    HandicapError, MAX_STONES as MAX_HANDICAP, check_count as check_handicap,
    fixed_points as fixed_handicap,
};
pub use points::HalfPoints;
pub use result::{BadResult, GameResult};
pub use ruleset::{Counting, KoRule, Ruleset, UnknownName};
pub use score::{DeadStones, Score, ScoreRules, count};
pub use vertex::{Color, MAX_SIZE, MIN_SIZE, Move, Vertex, VertexError};
