//! Pairing a McMahon round of a large congress: 1,000 players (the size of a large
//! European congress), 100 clubs, 30 countries, with handicaps, over rounds 1 to 6 of
//! a simulated event (later rounds have more repeats to avoid and uneven groups).
//!
//! `cargo bench --bench pairing` (release build). The figure to report is the time of
//! one round's `pair`: every pair's costs and the least-cost perfect matching.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use tengen::rating::Rank;
use tengen::tournament::field::{Board, Entrant, Outcome, Record, Round, Status};
use tengen::tournament::pairing::{draw, pair};
use tengen::tournament::regulations::{
    ColourRule, HandicapRule, Regulations, Seeding, System, TieBreak,
};

const PLAYERS: usize = 1000;

/// The event after `rounds` rounds, each paired by `pair` and decided by the draw.
fn event(rounds: usize) -> Record {
    let regulations = Regulations {
        system: System::McMahon {
            bar: Rank::Dan(3),
            floor: Rank::Kyu(20),
        },
        rounds: 10,
        handicap: Some(HandicapRule {
            correction: 2,
            ceiling: 9,
            threshold: Rank::Dan(1),
        }),
        colours: ColourRule::Draw,
        seeding: Seeding::SplitAndFold,
        tie_breaks: vec![TieBreak::Sos, TieBreak::Sosos],
        bye: 2,
        missed_round: 0,
        separate_clubs: true,
        separate_countries: true,
    };
    let field = (0..PLAYERS as u64)
        .map(|i| Entrant {
            id: format!("p{i}"),
            rank: Rank::from_steps((draw(1, 10, i, 0) % 39) as u8),
            club: format!("club{}", draw(1, 11, i, 0) % 100),
            country: format!("c{}", draw(1, 12, i, 0) % 30),
            first_round: 1,
            status: Status::Playing,
        })
        .collect();
    let mut record = Record {
        regulations,
        field,
        rounds: Vec::new(),
        adjustments: Vec::new(),
    };
    let seats: Vec<usize> = (0..PLAYERS).collect();
    for round in 0..rounds as u64 {
        let proposal = pair(&record, &seats, &[], 7).expect("a field of 1,000 pairs");
        let boards = proposal
            .boards
            .iter()
            .map(|p| {
                let black_wins = draw(2, round, p.board.black as u64, 0).is_multiple_of(2);
                let outcome = if black_wins {
                    Outcome::Black
                } else {
                    Outcome::White
                };
                Board {
                    outcome: Some(outcome),
                    ..p.board
                }
            })
            .collect();
        record.rounds.push(Round {
            boards,
            byes: proposal.bye.into_iter().collect(),
        });
    }
    record
}

fn pairing(c: &mut Criterion) {
    let seats: Vec<usize> = (0..PLAYERS).collect();
    let mut group = c.benchmark_group("pair_1000");
    group.sample_size(10);
    for played in [0, 2, 5] {
        let record = event(played);
        group.bench_function(format!("round_{}", played + 1), |b| {
            b.iter(|| pair(black_box(&record), &seats, &[], 7).expect("paired"))
        });
    }
    group.finish();
}

criterion_group!(benches, pairing);
criterion_main!(benches);
