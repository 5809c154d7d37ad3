//! The pairing's promises, checked on simulated events.

use proptest::prelude::*;

use super::exchange;
use super::field::{Adjustment, Board, Entrant, Outcome, Record, Round, Seat, Status};
use super::pairing::{Costs, all_costs, draw, pair};
use super::regulations::{ColourRule, HandicapRule, Regulations, Seeding, System, TieBreak};
use super::standings::{Standing, standings};
use crate::rating::Rank;

fn regulations(system: System, handicap: bool) -> Regulations {
    Regulations {
        system,
        rounds: 5,
        handicap: handicap.then_some(HandicapRule {
            correction: 1,
            ceiling: 9,
            threshold: Rank::Dan(1),
        }),
        colours: ColourRule::Draw,
        seeding: Seeding::SplitAndFold,
        tie_breaks: vec![TieBreak::Sos, TieBreak::Sosos, TieBreak::Direct],
        bye: 2,
        missed_round: 0,
        separate_clubs: true,
        separate_countries: false,
    }
}

/// A field of `n` players with ranks, clubs and countries drawn from `seed`.
fn field(n: usize, seed: u64) -> Vec<Entrant> {
    (0..n)
        .map(|i| Entrant {
            id: format!("p{i}"),
            rank: Rank::from_steps(10 + (draw(seed, 10, i as u64, 0) % 28) as u8),
            club: format!("club{}", draw(seed, 11, i as u64, 0) % 4),
            country: format!("c{}", draw(seed, 12, i as u64, 0) % 2),
            first_round: 1,
            status: Status::Playing,
        })
        .collect()
}

/// A McMahon of `n` players (bar 2d, floor 20k, handicaps) before its first round.
fn mcmahon(n: usize, seed: u64) -> Record {
    Record {
        regulations: regulations(
            System::McMahon {
                bar: Rank::Dan(2),
                floor: Rank::Kyu(20),
            },
            true,
        ),
        field: field(n, seed),
        rounds: Vec::new(),
        adjustments: Vec::new(),
    }
}

/// Plays a proposed round: the stronger by rank wins, unless the draw says otherwise.
fn play(record: &mut Record, seed: u64) {
    let seats: Vec<Seat> = (0..record.field.len()).collect();
    let proposal = pair(record, &seats, &[], seed).expect("a field of two or more pairs");
    let round = record.rounds.len() as u64;
    let boards = proposal
        .boards
        .iter()
        .map(|p| {
            let b = p.board;
            let coin = draw(seed, 20 + round, b.black as u64, b.white as u64) % 3;
            let (rb, rw) = (
                record.field[b.black].rank.steps(),
                record.field[b.white].rank.steps(),
            );
            let outcome = match coin {
                0 => Outcome::Black,
                1 => Outcome::White,
                _ if rb >= rw => Outcome::Black,
                _ => Outcome::White,
            };
            Board {
                outcome: Some(outcome),
                ..b
            }
        })
        .collect();
    record.rounds.push(Round {
        boards,
        byes: proposal.bye.into_iter().collect(),
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Five rounds of a McMahon of 9 to 40 players: no repeat game, one bye each at most,
    /// everyone paired once a round.
    #[test]
    fn no_repeat_and_everyone_paired(n in 9usize..40, seed in any::<u64>()) {
        let mut record = mcmahon(n, seed);
        for _ in 0..5 {
            play(&mut record, seed);
            let round = record.rounds.last().unwrap();
            let mut seen = vec![0; n];
            for b in &round.boards {
                seen[b.black] += 1;
                seen[b.white] += 1;
            }
            for &s in &round.byes {
                seen[s] += 1;
            }
            prop_assert!(seen.iter().all(|&c| c == 1), "everyone once: {seen:?}");
            prop_assert_eq!(round.byes.len(), n % 2);
        }
        for a in 0..n {
            let opponents: Vec<Seat> = record.opponents(a).collect();
            let mut unique = opponents.clone();
            unique.sort();
            unique.dedup();
            prop_assert_eq!(unique.len(), opponents.len(), "{} met someone twice", a);
            prop_assert!(record.rounds.iter().filter(|r| r.byes.contains(&a)).count() <= 1);
        }
    }

    /// Every pairing is as cheap as the cheapest of all pairings, found by trying them
    /// all, for fields up to 10 after a few played rounds.
    #[test]
    fn the_pairing_is_the_cheapest(half in 1usize..=5, rounds in 0usize..4, seed in any::<u64>()) {
        let n = 2 * half;
        let mut record = Record {
            regulations: regulations(System::McMahon { bar: Rank::Dan(2), floor: Rank::Kyu(20) }, seed % 2 == 0),
            field: field(n, seed),
            rounds: Vec::new(),
            adjustments: Vec::new(),
        };
        for _ in 0..rounds.min(n - 1) {
            play(&mut record, seed);
        }
        let seats: Vec<Seat> = (0..n).collect();
        let proposal = pair(&record, &seats, &[], seed).unwrap();
        let total: i64 = proposal.boards.iter().map(|p| p.costs.total()).sum();
        let mut costs = vec![vec![0; n]; n];
        for (a, b, c) in all_costs(&record, &seats, &[], seed).unwrap() {
            costs[a][b] = c.total();
            costs[b][a] = c.total();
        }
        prop_assert_eq!(total, cheapest(&costs, n));
    }
}

fn cheapest(costs: &[Vec<i64>], n: usize) -> i64 {
    fn go(free: &[usize], costs: &[Vec<i64>]) -> i64 {
        let Some((&a, rest)) = free.split_first() else {
            return 0;
        };
        rest.iter()
            .map(|&b| {
                let others: Vec<usize> = rest.iter().copied().filter(|&v| v != b).collect();
                costs[a][b] + go(&others, costs)
            })
            .min()
            .unwrap_or(0)
    }
    go(&(0..n).collect::<Vec<_>>(), costs)
}

#[test]
fn costs_order_the_criteria() {
    let repeat = Costs {
        repeat: true,
        ..Costs::default()
    };
    let far = Costs {
        score_gap: 60,
        floats: 4,
        colour: 2,
        seeding: 100,
        same_club: true,
        same_country: true,
        ..Costs::default()
    };
    assert!(repeat.total() > far.total());
    let gap = Costs {
        score_gap: 1,
        ..Costs::default()
    };
    let rest = Costs {
        floats: 4,
        colour: 2,
        seeding: 100,
        same_club: true,
        same_country: true,
        ..Costs::default()
    };
    assert!(gap.total() > rest.total());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every handicap is the rule's for the scores at pairing time, and the lower score
    /// (then the lower rank) takes Black in a handicap game; no handicap above the bar.
    #[test]
    fn handicaps_follow_the_rule(n in 8usize..30, seed in any::<u64>()) {
        let mut record = mcmahon(n, seed);
        for _ in 0..4 {
            let seats: Vec<Seat> = (0..n).collect();
            let proposal = pair(&record, &seats, &[], seed).unwrap();
            for p in &proposal.boards {
                let (b, w) = (p.board.black, p.board.white);
                let (rb, rw) = (record.field[b].rank, record.field[w].rank);
                let stronger = if rb.steps() >= rw.steps() { rb } else { rw };
                let gap = record.score(b) - record.score(w);
                prop_assert_eq!(p.board.handicap, record.regulations.handicap_stones(gap, stronger));
                if p.board.handicap > 0 {
                    prop_assert!((record.score(b), rb.steps()) < (record.score(w), rw.steps()));
                    prop_assert!(stronger.steps() < Rank::Dan(1).steps());
                }
            }
            play(&mut record, seed);
        }
    }

    /// A pair the director forbade is never chosen when another pairing avoids it.
    #[test]
    fn forbidden_pairs_are_kept_apart(seed in any::<u64>()) {
        let mut field = field(8, seed);
        for p in field.iter_mut() {
            p.rank = Rank::Kyu(5);
        }
        let record = Record { regulations: regulations(System::Swiss, false), field, rounds: Vec::new(), adjustments: Vec::new() };
        let seats: Vec<Seat> = (0..8).collect();
        // Every pair of seat 0 but 0–7 is forbidden, and 1–2 as well.
        let mut forbidden: Vec<(Seat, Seat)> = (1..7).map(|s| (0, s)).collect();
        forbidden.push((2, 1));
        let proposal = pair(&record, &seats, &forbidden, seed).unwrap();
        for p in &proposal.boards {
            prop_assert!(!p.costs.forbidden, "{:?}", p);
        }
        prop_assert!(proposal.boards.iter().any(|p| p.board.has(0) && p.board.has(7)));
    }
}

/// Equal players whose colours lean opposite ways are paired across, and the one who
/// has had White more often takes Black.
#[test]
fn colours_are_evened_out() {
    let mut record = Record {
        regulations: regulations(System::Swiss, false),
        field: field(4, 1),
        rounds: Vec::new(),
        adjustments: Vec::new(),
    };
    for p in record.field.iter_mut() {
        p.rank = Rank::Kyu(5);
    }
    // Round one: 0 and 1 had Black, 2 and 3 White; every game a jigo keeps one group.
    record.rounds.push(Round {
        boards: vec![
            Board {
                black: 0,
                white: 2,
                handicap: 0,
                outcome: Some(Outcome::Jigo),
            },
            Board {
                black: 1,
                white: 3,
                handicap: 0,
                outcome: Some(Outcome::Jigo),
            },
        ],
        byes: vec![],
    });
    for seed in 0..20 {
        let proposal = pair(&record, &[0, 1, 2, 3], &[], seed).unwrap();
        let mut boards: Vec<(Seat, Seat)> = proposal
            .boards
            .iter()
            .map(|p| (p.board.black, p.board.white))
            .collect();
        boards.sort();
        assert_eq!(boards, vec![(2, 1), (3, 0)], "seed {seed}");
    }
}

/// Players of one club are kept apart when nothing above it decides: a round-one
/// McMahon of two groups of two in which each group's pair is of one club, beside a
/// cross-club pairing that floats both groups equally, is still paired in its groups
/// (the score group comes first), and with the flag off the club costs nothing.
#[test]
fn the_club_criterion_counts_only_when_asked_and_below_the_score_group() {
    let mut field = field(4, 3);
    for (i, p) in field.iter_mut().enumerate() {
        p.rank = if i < 2 { Rank::Kyu(5) } else { Rank::Kyu(8) };
        p.club = if i < 2 { "x".into() } else { "y".into() };
    }
    let mut regs = regulations(
        System::McMahon {
            bar: Rank::Dan(2),
            floor: Rank::Kyu(25),
        },
        false,
    );
    let record = Record {
        regulations: regs.clone(),
        field: field.clone(),
        rounds: Vec::new(),
        adjustments: Vec::new(),
    };
    let proposal = pair(&record, &[0, 1, 2, 3], &[], 5).unwrap();
    assert!(
        proposal
            .boards
            .iter()
            .all(|p| p.costs.same_club && p.costs.score_gap == 0)
    );
    regs.separate_clubs = false;
    let record = Record {
        regulations: regs,
        field,
        rounds: Vec::new(),
        adjustments: Vec::new(),
    };
    let proposal = pair(&record, &[0, 1, 2, 3], &[], 5).unwrap();
    assert!(proposal.boards.iter().all(|p| !p.costs.same_club));
}

/// Round one of a McMahon whose groups are all even never pairs across groups.
#[test]
fn score_groups_are_kept_when_they_can_be() {
    for seed in 0..50 {
        let mut field = field(24, seed);
        for (i, p) in field.iter_mut().enumerate() {
            p.rank = Rank::Kyu(1 + (i / 4) as u8 * 3); // six groups of four
        }
        let record = Record {
            regulations: regulations(
                System::McMahon {
                    bar: Rank::Dan(2),
                    floor: Rank::Kyu(25),
                },
                false,
            ),
            field,
            rounds: Vec::new(),
            adjustments: Vec::new(),
        };
        let seats: Vec<Seat> = (0..24).collect();
        let proposal = pair(&record, &seats, &[], seed).unwrap();
        assert!(
            proposal.boards.iter().all(|p| p.costs.score_gap == 0),
            "seed {seed}"
        );
    }
}

/// Every perfect matching of `players`, as lists of pairs (945 for ten players).
fn matchings(players: &[Seat]) -> Vec<Vec<(Seat, Seat)>> {
    let Some((&a, rest)) = players.split_first() else {
        return vec![Vec::new()];
    };
    let mut all = Vec::new();
    for &b in rest {
        let others: Vec<Seat> = rest.iter().copied().filter(|&s| s != b).collect();
        for mut m in matchings(&others) {
            m.push((a, b));
            all.push(m);
        }
    }
    all
}

/// A pair's cost above the club and country criteria.
fn above_geography(c: &Costs) -> i64 {
    let geography = Costs {
        same_club: c.same_club,
        same_country: c.same_country,
        ..Costs::default()
    };
    c.total() - geography.total()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Against every possible pairing of a field of up to ten after a few rounds, the
    /// chosen one keeps the criteria in their order: no repeat game when some pairing
    /// avoids them all; no one out of their score group when a pairing without repeats
    /// keeps every group (the score gap outweighs all the lower criteria of five
    /// boards); no two of one club or country together when a pairing as good on every
    /// criterion above keeps them apart; and in each even game the player who has had
    /// White more often takes Black, so two players whose colours lean opposite ways
    /// both come back to even.
    #[test]
    fn the_pairing_keeps_the_criteria_in_their_order(
        players in 2usize..=10,
        rounds in 0usize..5,
        swiss in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let system = if swiss {
            System::Swiss
        } else {
            System::McMahon { bar: Rank::Dan(2), floor: Rank::Kyu(20) }
        };
        let mut regs = regulations(system, !swiss && seed.is_multiple_of(3));
        regs.separate_countries = seed.is_multiple_of(2);
        let mut record = Record { regulations: regs, field: field(players, seed), rounds: Vec::new(), adjustments: Vec::new() };
        for _ in 0..rounds.min(players.saturating_sub(2)) {
            play(&mut record, seed);
        }
        let seats: Vec<Seat> = (0..players).collect();
        let proposal = pair(&record, &seats, &[], seed).unwrap();
        let mut cost = std::collections::HashMap::new();
        for (a, b, c) in all_costs(&record, &seats, &[], seed).unwrap() {
            cost.insert((a.min(b), a.max(b)), c);
        }
        let of = |a: Seat, b: Seat| cost[&(a.min(b), a.max(b))];
        let paired: Vec<Seat> = seats.iter().copied().filter(|&s| Some(s) != proposal.bye).collect();
        let all = matchings(&paired);
        let chosen: Vec<(Seat, Seat)> = proposal.boards.iter().map(|p| (p.board.black, p.board.white)).collect();
        let sum = |m: &[(Seat, Seat)], f: &dyn Fn(&Costs) -> i64| -> i64 { m.iter().map(|&(a, b)| f(&of(a, b))).sum() };
        let repeats = |c: &Costs| i64::from(c.repeat);
        let gaps = |c: &Costs| i64::from(c.score_gap);
        let geography = |c: &Costs| i64::from(c.same_club) + i64::from(c.same_country);

        let fewest_repeats = all.iter().map(|m| sum(m, &repeats)).min().unwrap();
        prop_assert_eq!(sum(&chosen, &repeats), fewest_repeats);

        if all.iter().any(|m| sum(m, &repeats) == 0 && sum(m, &gaps) == 0) {
            prop_assert_eq!(sum(&chosen, &gaps), 0, "someone floated: {:?}", chosen);
        }

        let best_above = all.iter().map(|m| sum(m, &above_geography)).min().unwrap();
        if all.iter().any(|m| sum(m, &above_geography) == best_above && sum(m, &geography) == 0) {
            prop_assert_eq!(sum(&chosen, &geography), 0);
        }

        for p in &proposal.boards {
            let (b, w) = (p.board.black, p.board.white);
            if p.board.handicap == 0 {
                let (cb, cw) = (record.colour_balance(b), record.colour_balance(w));
                prop_assert!(cb <= cw, "Black had Black more often: {} {}", cb, cw);
            }
        }
    }
}

/// An adjustment counts in the score from the rounds it was made after, in the
/// opponents' SOS through that score, and not in the half points earned; one made
/// before round one is OpenGotha's start-score correction and reads back as one.
#[test]
fn an_adjustment_moves_the_score_its_opponents_sos_and_not_the_wins() {
    let regs = regulations(System::Swiss, false);
    let board = |black, white| Board {
        black,
        white,
        handicap: 0,
        outcome: Some(Outcome::Black),
    };
    let mut record = Record {
        regulations: regs,
        field: field(4, 1),
        rounds: vec![Round {
            boards: vec![board(0, 1), board(2, 3)],
            byes: vec![],
        }],
        adjustments: Vec::new(),
    };
    let before = standings(&record);
    record.adjustments.push(Adjustment {
        seat: 3,
        points: 4,
        from_round: 1,
        reason: "won the qualifier".into(),
    });
    assert_eq!(
        record.score_after(3, 0),
        0,
        "it counts from round 1's score on"
    );
    assert_eq!(record.score(3), 4);
    let after = standings(&record);
    let line = |t: &[Standing], seat| t.iter().find(|s| s.seat == seat).unwrap().clone();
    assert_eq!(line(&after, 3).score, 4);
    assert_eq!(line(&after, 3).wins, 0);
    assert_eq!(line(&after, 3).place, 1);
    assert_eq!(line(&after, 2).sos, line(&before, 2).sos + 4);
    let score_and_sos = |st: Standing| (st.score, st.sos);
    assert_eq!(
        score_and_sos(line(&after, 0)),
        score_and_sos(line(&before, 0)),
        "another's score and SOS stay"
    );

    record.regulations.system = System::McMahon {
        bar: Rank::Dan(2),
        floor: Rank::Kyu(25),
    };
    record.adjustments[0].from_round = 0;
    record.adjustments[0].points = -2;
    let xml = exchange::opengotha::export(&record, &[], &exchange::Event::default());
    assert!(xml.contains("smmsCorrection=\"-1\""), "{xml}");
    let back = exchange::opengotha::import(&xml).unwrap();
    assert_eq!(back.record.adjustments.len(), 1);
    assert_eq!(standings(&back.record), standings(&record));
}

#[test]
fn a_tie_is_broken_by_the_direct_game_when_the_regulations_name_it() {
    let board = |black, white| Board {
        black,
        white,
        handicap: 0,
        outcome: Some(Outcome::Black),
    };
    let mut record = Record {
        regulations: Regulations {
            tie_breaks: Vec::new(),
            ..regulations(System::Swiss, false)
        },
        field: field(4, 1),
        // 1 beats 0, then 2 beats 1 and 0 beats 3: 0 and 1 finish on one win each.
        rounds: vec![
            Round {
                boards: vec![board(1, 0), board(2, 3)],
                byes: vec![],
            },
            Round {
                boards: vec![board(2, 1), board(0, 3)],
                byes: vec![],
            },
        ],
        adjustments: Vec::new(),
    };
    let line = |t: &[Standing], seat| t.iter().find(|s| s.seat == seat).unwrap().clone();
    let equal = standings(&record);
    assert_eq!((line(&equal, 0).place, line(&equal, 1).place), (2, 2));
    assert_eq!((line(&equal, 0).direct, line(&equal, 1).direct), (0, 0));

    record.regulations.tie_breaks = vec![TieBreak::Direct];
    let broken = standings(&record);
    assert_eq!((line(&broken, 1).place, line(&broken, 1).direct), (2, 1));
    assert_eq!((line(&broken, 0).place, line(&broken, 0).direct), (3, 0));
    let order: Vec<Seat> = broken.iter().map(|s| s.seat).collect();
    assert_eq!(order, vec![2, 1, 0, 3]);
}
