//! A tournament as the exchange files write it (docs/TOURNAMENTS.md §6): who each seat
//! is, what the event was, and where each game goes in the SGF archive. The files
//! themselves are `crate::tournament::exchange`'s; this only says what to give it.

use super::state::Tournament;
use crate::clock::TimeControl;
use crate::tournament::exchange::{Event, Person, egf, opengotha};

impl Tournament {
    /// Each seat as the files name it: an account has only its display name, which
    /// stands as the surname.
    pub fn people(&self) -> Vec<Person> {
        self.users
            .iter()
            .map(|u| Person {
                surname: u.name.clone(),
                account: u.id.clone(),
                ..Person::default()
            })
            .collect()
    }

    /// The event: its name, the days of its first and last published rounds (UTC), and
    /// the games' board, komi and time. An online event has no venue.
    pub fn event(&self) -> Event {
        let s = &self.setup.settings;
        let day = |at: Option<i64>| at.map(crate::archive::date).unwrap_or_default();
        Event {
            name: self.setup.name.clone(),
            short_name: format!("tengen-{}", self.id),
            begin: day(self.played.first().map(|p| p.start_at)),
            end: day(self.played.last().map(|p| p.start_at)),
            komi: s.komi().points(),
            board_size: s.board_size,
            main_minutes: u32::try_from(s.clock.main_ms().unwrap_or(0) / 60_000)
                .unwrap_or(u32::MAX),
            byoyomi_seconds: match s.clock {
                TimeControl::Byoyomi { period_ms, .. } => {
                    u32::try_from(period_ms / 1000).unwrap_or(u32::MAX)
                }
                _ => 0,
            },
            ..Event::default()
        }
    }

    /// The EGF results table of the published rounds.
    pub fn egf_table(&self) -> String {
        egf::write(&self.record, &self.people(), &self.event())
    }

    /// OpenGotha's file of the published rounds.
    pub fn opengotha(&self) -> String {
        opengotha::export(&self.record, &self.people(), &self.event())
    }

    /// Each published board's game id and its file in the archive,
    /// `round-<r>/board-<b>.sgf`.
    pub fn game_files(&self) -> Vec<(String, String)> {
        self.played
            .iter()
            .enumerate()
            .flat_map(|(r, p)| {
                p.games.iter().enumerate().map(move |(b, game)| {
                    (format!("round-{}/board-{}.sgf", r + 1, b + 1), game.clone())
                })
            })
            .collect()
    }
}
