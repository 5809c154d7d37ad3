//! Exchange with the rest of the Go world: the results table the European rating list
//! takes ([`egf`]), OpenGotha's tournament file ([`opengotha`]), and one archive of every
//! game's SGF ([`zip`]).
//!
//! Pure: every function takes text or bytes and returns text or bytes, never a file. What
//! is exported reads back to the same standings (the property tests in `tests`); what a
//! file cannot say (a withdrawal's reason, the colour rule when every game was handicap) is
//! named in `docs/TOURNAMENTS.md`.

pub mod egf;
pub mod opengotha;
#[cfg(test)]
mod tests;
pub mod zip;

use serde::{Deserialize, Serialize};

use super::field::{Entrant, Record};

/// What the files say of the event beyond its record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub name: String,
    /// One word, for OpenGotha's file name.
    pub short_name: String,
    /// Two-letter country code of the venue.
    pub country: String,
    pub city: String,
    /// First and last day, `YYYY-MM-DD`.
    pub begin: String,
    pub end: String,
    pub komi: f64,
    pub board_size: u8,
    /// Main time per player, in minutes.
    pub main_minutes: u32,
    /// Byo-yomi period, in seconds (0: sudden death).
    pub byoyomi_seconds: u32,
    /// The EGF class (`A`, `B`, `C`, `D`), if the organisers gave one.
    pub class: String,
}

impl Default for Event {
    fn default() -> Event {
        Event {
            name: String::new(),
            short_name: String::new(),
            country: String::new(),
            city: String::new(),
            begin: String::new(),
            end: String::new(),
            komi: 7.5,
            board_size: 19,
            main_minutes: 0,
            byoyomi_seconds: 0,
            class: String::new(),
        }
    }
}

/// Who a seat is, as a rating list or OpenGotha names them (the pairing needs none of it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Person {
    pub surname: String,
    pub first_name: String,
    /// On the EGF scale (2100 is 1d, 100 a rank), if known.
    pub rating: Option<i32>,
    /// The player's EGF PIN, if known.
    pub egf_pin: String,
    /// The tengen account the player is, if known: OpenGotha's files carry it as the
    /// attribute `tengenAccount`, which tengen alone writes and reads.
    #[serde(default)]
    pub account: String,
}

impl Person {
    /// A person known only by the entrant's id (an account with no real name given).
    pub fn of(entrant: &Entrant) -> Person {
        Person {
            surname: entrant.id.clone(),
            ..Person::default()
        }
    }

    /// OpenGotha's key for a player: surname and first name run together, upper case.
    /// An imported entrant's id is this key.
    pub fn key(&self) -> String {
        format!("{}{}", self.surname, self.first_name).to_uppercase()
    }
}

/// A tournament read from a file: the event, who each seat is, and the record.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub event: Event,
    /// One per seat of `record.field`.
    pub people: Vec<Person>,
    pub record: Record,
}

/// The person at each seat: `people[seat]`, or one named by the entrant's id where the
/// caller gave fewer people than seats.
fn person_at(record: &Record, people: &[Person], seat: usize) -> Person {
    people
        .get(seat)
        .cloned()
        .unwrap_or_else(|| Person::of(&record.field[seat]))
}
