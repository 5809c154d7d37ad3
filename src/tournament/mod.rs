//! Tournaments as the rules run them: the regulations, the field and its record, the
//! pairing of McMahon and Swiss rounds as a least-cost matching, round-robin tables and
//! knockout brackets, the standings with their tie-breaks, the event's verifiable draw,
//! and the files exchanged with rating lists and other pairing programs.
//!
//! Pure: never does I/O and never reads a clock; the event's randomness is a seed.

pub mod draw;
pub mod exchange;
pub mod field;
pub mod knockout;
pub mod matching;
pub mod pairing;
pub mod regulations;
pub mod round_robin;
pub mod standings;
#[cfg(test)]
mod tests;
