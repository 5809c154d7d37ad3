//! What is exported reads back to the same standings, on simulated events: McMahon,
//! Swiss and round-robin scoring, handicaps, late entries, withdrawals, byes worth 0 to
//! 2 half points, jigos and "both lose" rulings.

use proptest::prelude::*;

use super::super::field::{Board, Entrant, Outcome, Record, Round, Seat, Status};
use super::super::pairing::{draw, pair};
use super::super::regulations::{ColourRule, HandicapRule, Regulations, Seeding, System, TieBreak};
use super::super::standings::{Standing, standings};
use super::{Event, Person, egf, opengotha};
use crate::rating::Rank;

/// What varies between simulated events.
#[derive(Debug, Clone)]
struct Spec {
    players: usize,
    rounds: usize,
    seed: u64,
    system: System,
    handicap: bool,
    nigiri: bool,
    bye: i32,
    missed_round: i32,
    tie_breaks: Vec<TieBreak>,
    /// A player who joins late, from this round (1-based).
    late: Option<u8>,
    /// A player who withdraws after this many rounds.
    withdraws: Option<usize>,
}

fn spec() -> impl Strategy<Value = Spec> {
    let systems = prop_oneof![
        Just(System::McMahon {
            bar: Rank::Dan(2),
            floor: Rank::Kyu(20)
        }),
        Just(System::Swiss),
        Just(System::RoundRobin),
    ];
    let all = vec![
        TieBreak::Sos,
        TieBreak::Sosos,
        TieBreak::Sodos,
        TieBreak::Cuss,
        TieBreak::Wins,
        TieBreak::Direct,
    ];
    (
        (8usize..28, 0usize..=5, any::<u64>(), systems),
        (any::<bool>(), any::<bool>(), 0i32..=2, 0i32..=2),
        proptest::sample::subsequence(all, 0..=5),
        (
            proptest::option::of(2u8..=4),
            proptest::option::of(1usize..=4),
        ),
    )
        .prop_map(
            |(
                (players, rounds, seed, system),
                (handicap, nigiri, bye, missed_round),
                mut tie_breaks,
                (late, withdraws),
            )| {
                tie_breaks.sort_by_key(|t| draw(seed, 40, *t as u64, 0));
                Spec {
                    players,
                    rounds,
                    seed,
                    system,
                    handicap,
                    nigiri,
                    bye,
                    missed_round,
                    tie_breaks,
                    late,
                    withdraws,
                }
            },
        )
}

const SURNAMES: [&str; 5] = ["Lee", "van Dijk", "O'Brien", "Müller", "Zhang"];
const FIRST_NAMES: [&str; 4] = ["Ann", "Jean Paul", "", "Kim"];

/// The event `spec` describes, paired by the real pairing and played by the draw, with
/// a person for each seat.
fn simulate(spec: &Spec) -> (Record, Vec<Person>) {
    let seed = spec.seed;
    let regulations = Regulations {
        system: spec.system,
        rounds: spec.rounds as u8 + (seed % 2) as u8,
        handicap: spec.handicap.then_some(HandicapRule {
            correction: 1,
            ceiling: 9,
            threshold: Rank::Dan(1),
        }),
        colours: if spec.nigiri {
            ColourRule::Nigiri
        } else {
            ColourRule::Draw
        },
        seeding: Seeding::SplitAndFold,
        tie_breaks: spec.tie_breaks.clone(),
        bye: spec.bye,
        missed_round: spec.missed_round,
        separate_clubs: true,
        separate_countries: seed.is_multiple_of(3),
    };
    let n = spec.players;
    let field: Vec<Entrant> = (0..n)
        .map(|i| Entrant {
            id: format!("user{i}"),
            rank: Rank::from_steps(10 + (draw(seed, 10, i as u64, 0) % 28) as u8),
            club: ["Lyon", "GoClub Bern", "", "Wars"][(draw(seed, 11, i as u64, 0) % 4) as usize]
                .into(),
            country: ["FR", "CH", "", "PL"][(draw(seed, 12, i as u64, 0) % 4) as usize].into(),
            first_round: 1,
            status: Status::Playing,
        })
        .collect();
    let people = (0..n)
        .map(|i| Person {
            surname: format!("{}{i}", SURNAMES[i % SURNAMES.len()]),
            first_name: FIRST_NAMES[i % FIRST_NAMES.len()].into(),
            rating: (i % 3 == 0).then_some(1000 + 37 * i as i32),
            egf_pin: if i % 2 == 0 {
                format!("1{i:07}")
            } else {
                String::new()
            },
            account: String::new(),
        })
        .collect();
    let mut record = Record {
        regulations,
        field,
        rounds: Vec::new(),
        adjustments: Vec::new(),
    };
    let (late, gone) = (0, n - 1);
    if let Some(first) = spec.late {
        record.field[late].first_round = first;
    }
    for round in 0..spec.rounds {
        if spec.withdraws == Some(round) {
            record.field[gone].status = Status::Withdrawn;
        }
        let seats: Vec<Seat> = (0..n)
            .filter(|&s| {
                let p = &record.field[s];
                p.status == Status::Playing && usize::from(p.first_round) <= round + 1
            })
            .collect();
        let proposal = pair(&record, &seats, &[], seed).expect("eight or more players pair");
        let boards = proposal
            .boards
            .iter()
            .map(|p| {
                let coin = draw(seed, 30 + round as u64, p.board.black as u64, 0) % 7;
                let outcome = [
                    Outcome::Black,
                    Outcome::White,
                    Outcome::Black,
                    Outcome::White,
                    Outcome::Black,
                    Outcome::Jigo,
                    Outcome::BothLose,
                ][coin as usize];
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
    (record, people)
}

fn event() -> Event {
    Event {
        name: "Spring Open".into(),
        short_name: "spring".into(),
        country: "FR".into(),
        city: "Lyon".into(),
        begin: "2026-04-11".into(),
        end: "2026-04-12".into(),
        komi: 7.5,
        board_size: 19,
        main_minutes: 60,
        byoyomi_seconds: 30,
        class: "B".into(),
    }
}

/// What the standings say of a player, seat aside.
fn line(st: &Standing) -> (usize, i32, i32, i64, i64, i64, i64) {
    (
        st.place, st.score, st.wins, st.sos, st.sosos, st.sodos, st.cuss,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// The EGF table read back under the same regulations gives the same standings, line
    /// by line, with the same people on them.
    #[test]
    fn the_egf_table_reads_back_to_the_same_standings(spec in spec()) {
        let (record, people) = simulate(&spec);
        let text = egf::write(&record, &people, &event());
        let back = egf::read(&text, record.regulations.clone())
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let (before, after) = (standings(&record), standings(&back.record));
        prop_assert_eq!(before.len(), after.len());
        for (a, b) in before.iter().zip(&after) {
            let (pa, pb) = (&people[a.seat], &back.people[b.seat]);
            prop_assert_eq!((&pa.surname, &pa.first_name), (&pb.surname, &pb.first_name), "{}", text);
            prop_assert_eq!(record.field[a.seat].rank, back.record.field[b.seat].rank);
            prop_assert_eq!(&record.field[a.seat].club, &back.record.field[b.seat].club);
            prop_assert_eq!(line(a), line(b), "{:?}\n{}", people[a.seat], text);
        }
        let expected = Event { short_name: String::new(), byoyomi_seconds: 0, board_size: 19, ..event() };
        prop_assert_eq!(back.event, expected);
    }

    /// OpenGotha's XML imported again is the same tournament: the same players, boards,
    /// byes, and standings, and the regulations that map (a round robin is scored, and
    /// so comes back, as a Swiss).
    #[test]
    fn the_opengotha_file_imports_to_the_same_tournament(spec in spec()) {
        let (record, people) = simulate(&spec);
        let xml = opengotha::export(&record, &people, &event());
        let back = opengotha::import(&xml)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{xml}")))?;
        prop_assert_eq!(standings(&record), standings(&back.record), "{}", xml);
        // A rating the server did not know is written as the rank's (2100 for 1d).
        let rated: Vec<Person> = people
            .iter()
            .zip(&record.field)
            .map(|(p, e)| Person {
                rating: Some(p.rating.unwrap_or(2100 + 100 * (i32::from(e.rank.steps()) - 30))),
                ..p.clone()
            })
            .collect();
        prop_assert_eq!(&back.people, &rated);
        prop_assert_eq!(&back.record.rounds, &record.rounds);
        for (a, b) in record.field.iter().zip(&back.record.field) {
            prop_assert_eq!((a.rank, &a.club, &a.country, a.first_round), (b.rank, &b.club, &b.country, b.first_round));
            prop_assert_eq!(b.id.clone(), people[record.field.iter().position(|e| e == a).unwrap()].key());
            // A withdrawal shows only while rounds are left to sit out.
            if record.rounds.len() < usize::from(record.regulations.rounds) {
                prop_assert_eq!(a.status, b.status);
            }
        }
        let mut expected = record.regulations.clone();
        if expected.system == System::RoundRobin {
            expected.system = System::Swiss;
        }
        let even_game = record.rounds.iter().flat_map(|r| &r.boards).any(|b| b.handicap == 0);
        if !even_game {
            expected.colours = ColourRule::Draw;
        }
        prop_assert_eq!(back.record.regulations, expected);
        prop_assert_eq!(back.event, Event { country: String::new(), class: String::new(), ..event() });
    }
}

/// Accepts OpenGotha's own file, as saved by OpenGotha 3.48 (the players and two games
/// of a McMahon; the parameter sets as OpenGotha writes them).
#[test]
fn an_opengotha_file_imports() {
    let xml = r#"<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<Tournament dataVersion="201" externalIPAddress="77.128.107.78" gothaMinorVersion="5" gothaVersion="348" saveDT="20191119110542">
    <Players>
        <Player agaExpirationDate="" agaId="" club="13Ma" country="FR" egfPin="" ffgLicence="2200056" ffgLicenceStatus="L" firstName="Clé" grade="10K" name="Robin" participating="11111111111111111111" rank="10K" rating="1129" ratingOrigin="FFG : -921" registeringStatus="FIN" smmsCorrection="0"/>
        <Player agaExpirationDate="" agaId="" club="38Gr" country="FR" egfPin="" ffgLicence="2100063" ffgLicenceStatus="L" firstName="Baptiste" grade="1D" name="Fiorina" participating="11111111111111111111" rank="1D" rating="2106" ratingOrigin="FFG : 56" registeringStatus="FIN" smmsCorrection="0"/>
        <Player agaExpirationDate="" agaId="" club="38Gr" country="FR" egfPin="" ffgLicence="0280000" ffgLicenceStatus="L" firstName="Motoki" grade="7D" name="Noguchi" participating="01111111111111111111" rank="7D" rating="2666" ratingOrigin="FFG : 616" registeringStatus="FIN" smmsCorrection="0"/>
    </Players>
    <Games>
        <Game blackPlayer="ROBINCLÉ" handicap="2" knownColor="true" result="RESULT_WHITEWINS" roundNumber="1" tableNumber="1" whitePlayer="FIORINABAPTISTE"/>
        <Game blackPlayer="FIORINABAPTISTE" handicap="0" knownColor="true" result="RESULT_BLACKWINS_BYDEF" roundNumber="2" tableNumber="1" whitePlayer="NOGUCHIMOTOKI"/>
    </Games>
    <ByePlayers>
        <ByePlayer player="ROBINCLÉ" roundNumber="2"/>
    </ByePlayers>
    <TournamentParameterSet>
        <GeneralParameterSet bInternet="false" basicTime="60" beginDate="2023-10-31" canByoYomiTime="300" complementaryTimeSystem="STDBYOYOMI" director="Theo" endDate="2023-10-31" fischerTime="10" genCountNotPlayedGamesAsHalfPoint="false" genMMBar="4D" genMMFloor="20K" genMMS2ValueAbsent="1" genMMS2ValueBye="2" genMMZero="30K" genNBW2ValueAbsent="0" genNBW2ValueBye="2" genRoundDownNBWMMS="true" komi="7.5" location="Marseille" name="SimpleMM" nbMovesCanTime="15" numberOfCategories="1" numberOfRounds="5" shortName="simplemm" size="19" stdByoYomiTime="30"/>
        <HandicapParameterSet hdBasedOnMMS="true" hdCeiling="9" hdCorrection="1" hdNoHdRankThreshold="1D"/>
        <PlacementParameterSet>
            <PlacementCriteria>
                <PlacementCriterion name="MMS" number="1"/>
                <PlacementCriterion name="SOSM" number="2"/>
                <PlacementCriterion name="SOSOSM" number="3"/>
                <PlacementCriterion name="NULL" number="4"/>
                <PlacementCriterion name="NULL" number="5"/>
                <PlacementCriterion name="NULL" number="6"/>
            </PlacementCriteria>
        </PlacementParameterSet>
        <PairingParameterSet paiBaAvoidDuplGame="500000000000000" paiBaBalanceWB="1000000" paiBaDeterministic="true" paiBaRandom="0" paiMaAdditionalPlacementCritSystem1="Rating" paiMaAdditionalPlacementCritSystem2="NULL" paiMaAvoidMixingCategories="0" paiMaCompensateDUDD="true" paiMaDUDDLowerMode="MID" paiMaDUDDUpperMode="MID" paiMaDUDDWeight="100000000" paiMaLastRoundForSeedSystem1="2" paiMaMaximizeSeeding="5000000" paiMaMinimizeScoreDifference="100000000000" paiMaSeedSystem1="SPLITANDRANDOM" paiMaSeedSystem2="SPLITANDSLIP" paiSeAvoidSameGeo="100000000000" paiSeBarThresholdActive="true" paiSeDefSecCrit="100000000000" paiSeMinimizeHandicap="0" paiSeNbWinsThresholdActive="false" paiSePreferMMSDiffRatherThanSameClub="3" paiSePreferMMSDiffRatherThanSameCountry="1" paiSeRankThreshold="1D" paiStandardNX1Factor="0.5"/>
    </TournamentParameterSet>
    <TeamTournamentParameterSet>
        <TeamGeneralParameterSet teamSize="4"/>
        <TeamPlacementParameterSet>
            <PlacementCriteria>
                <PlacementCriterion name="TEAMP" number="1"/>
                <PlacementCriterion name="BDW" number="2"/>
            </PlacementCriteria>
        </TeamPlacementParameterSet>
    </TeamTournamentParameterSet>
</Tournament>
"#;
    let t = opengotha::import(xml).unwrap();
    assert_eq!(t.people[0].first_name, "Clé");
    assert_eq!(t.people[1].rating, Some(2106));
    assert_eq!(t.record.field[0].id, "ROBINCLÉ");
    assert_eq!(
        (
            t.record.field[2].rank,
            &t.record.field[2].club,
            t.record.field[2].first_round
        ),
        (Rank::Dan(7), &"38Gr".to_string(), 2)
    );
    let r = &t.record.regulations;
    assert_eq!(
        r.system,
        System::McMahon {
            bar: Rank::Dan(4),
            floor: Rank::Kyu(20)
        }
    );
    assert_eq!(r.tie_breaks, vec![TieBreak::Sos, TieBreak::Sosos]);
    assert_eq!((r.rounds, r.bye, r.missed_round), (5, 2, 1));
    assert_eq!(r.seeding, Seeding::SplitAndSlip);
    assert!(r.separate_clubs && r.separate_countries);
    assert_eq!(
        r.handicap,
        Some(HandicapRule {
            correction: 1,
            ceiling: 9,
            threshold: Rank::Dan(1)
        })
    );
    assert_eq!(
        t.record.rounds,
        vec![
            Round {
                boards: vec![Board {
                    black: 0,
                    white: 1,
                    handicap: 2,
                    outcome: Some(Outcome::White)
                }],
                byes: vec![]
            },
            Round {
                boards: vec![Board {
                    black: 1,
                    white: 2,
                    handicap: 0,
                    outcome: Some(Outcome::Black)
                }],
                byes: vec![0]
            },
        ]
    );
    assert_eq!(
        (
            t.event.name.as_str(),
            t.event.city.as_str(),
            t.event.main_minutes,
            t.event.byoyomi_seconds
        ),
        ("SimpleMM", "Marseille", 60, 30)
    );
    // Noguchi, 7D above a 4D bar, missed round one (half a point), then lost by default.
    assert_eq!(t.record.score(2), 2 * 33 + 1);
}

/// A bad file is refused with the line and element at fault, and nothing imported.
#[test]
fn bad_opengotha_files_are_refused_with_their_line() {
    use opengotha::GothaError;
    let player = |name: &str, rank: &str| {
        format!(r#"<Player name="{name}" firstName="A" rank="{rank}" club="" country=""/>"#)
    };
    let file = |body: &str| {
        format!("<Tournament dataVersion=\"201\">\n<Players>\n{body}\n</Players>\n</Tournament>")
    };
    assert!(matches!(
        opengotha::import("<Tournament><Players></Tournament>"),
        Err(GothaError::Xml { line: 1, .. })
    ));
    assert_eq!(
        opengotha::import("<Players/>"),
        Err(GothaError::NotATournament)
    );
    assert_eq!(
        opengotha::import(&file(&format!(
            "{}\n{}",
            player("Lee", "3d"),
            player("Kim", "3p")
        ))),
        Err(GothaError::UnknownRank {
            line: 4,
            key: "KIMA".into(),
            rank: "3p".into()
        })
    );
    assert_eq!(
        opengotha::import(&file(&format!(
            "{}\n{}",
            player("Lee", "3d"),
            player("Lee", "5k")
        ))),
        Err(GothaError::DuplicatePlayer {
            line: 4,
            key: "LEEA".into()
        })
    );
    assert_eq!(
        opengotha::import(&file(r#"<Player firstName="A" rank="3d"/>"#)),
        Err(GothaError::Missing {
            line: 3,
            element: "Player",
            attribute: "name"
        })
    );
    let game = format!(
        "{}\n</Players>\n<Games>\n<Game blackPlayer=\"LEEA\" whitePlayer=\"NOBODYA\" roundNumber=\"1\" result=\"RESULT_BLACKWINS\"/>\n</Games><Players>",
        player("Lee", "3d")
    );
    assert_eq!(
        opengotha::import(&file(&game)),
        Err(GothaError::UnknownPlayer {
            line: 6,
            round: 1,
            key: "NOBODYA".into()
        })
    );
    let twice = format!(
        "{}\n{}\n{}\n</Players>\n<Games>\n<Game blackPlayer=\"LEEA\" whitePlayer=\"KIMA\" roundNumber=\"1\"/>\n<Game blackPlayer=\"LEEA\" whitePlayer=\"PAKA\" roundNumber=\"1\"/>\n</Games><Players>",
        player("Lee", "3d"),
        player("Kim", "3d"),
        player("Pak", "3d")
    );
    assert_eq!(
        opengotha::import(&file(&twice)),
        Err(GothaError::TwiceInRound {
            line: 9,
            round: 1,
            key: "LEEA".into()
        })
    );
}

/// A table as OpenGotha writes it (a shared place left blank, twenty rounds padded with
/// `0-`, a forfeit marked `!`) reads, and a table whose two lines of a game disagree is
/// refused with the round.
#[test]
fn an_opengotha_table_reads_and_a_contradiction_is_refused() {
    let regs = Regulations {
        system: System::McMahon {
            bar: Rank::Dan(4),
            floor: Rank::Kyu(20),
        },
        rounds: 2,
        handicap: None,
        colours: ColourRule::Draw,
        seeding: Seeding::SplitAndFold,
        tie_breaks: vec![TieBreak::Sos],
        bye: 2,
        missed_round: 1,
        separate_clubs: false,
        separate_countries: false,
    };
    let text = "; CL[A]\n; EV[Test]\n; PC[,Lyon]\n; DT[2017-02-11,2017-02-12]\n; HA[h1]\n; KM[7.5]\n; TM[80]\n\
; Pl Name                            Rk Co Club  MMS  SOS\n\
   1 Chauvin Robin                   2D FR 69Ly   31  567    3+/b0    2+!w0    0-       0-\n\
     Godivier Vincent                2D FR 69Ly   30  565    0+       1-!b0    0-       0-\n\
   3 de_Butler Tristan               9K XX xxxx   21  544    1-/w0    0-       0-       0-\n";
    let t = egf::read(text, regs.clone()).unwrap();
    assert_eq!(t.record.rounds.len(), 2);
    assert_eq!(t.people[2].surname, "de Butler");
    assert_eq!(
        (
            t.record.field[2].country.as_str(),
            t.record.field[2].club.as_str()
        ),
        ("", "")
    );
    assert_eq!(t.record.rounds[0].byes, vec![1]);
    assert_eq!(
        t.record.rounds[1].boards,
        vec![Board {
            black: 1,
            white: 0,
            handicap: 0,
            outcome: Some(Outcome::White)
        }]
    );
    assert_eq!(t.event.city, "Lyon");
    let bad = text.replace("2+!w0", "2+!b0");
    assert_eq!(
        egf::read(&bad, regs),
        Err(egf::TableError::Games {
            round: 2,
            why: "the lines of places 1 and 2 disagree on their game".into()
        })
    );
}

/// The example in `docs/TOURNAMENTS.md`, written exactly.
#[test]
fn the_documented_table_is_what_is_written() {
    let entrant = |id: &str, rank, country: &str, club: &str| Entrant {
        id: id.into(),
        rank,
        club: club.into(),
        country: country.into(),
        first_round: 1,
        status: Status::Playing,
    };
    let record = Record {
        regulations: Regulations {
            system: System::Swiss,
            rounds: 2,
            handicap: None,
            colours: ColourRule::Draw,
            seeding: Seeding::SplitAndFold,
            tie_breaks: vec![TieBreak::Sos],
            bye: 2,
            missed_round: 0,
            separate_clubs: false,
            separate_countries: false,
        },
        field: vec![
            entrant("lee", Rank::Dan(5), "FR", "Lyon"),
            entrant("kim", Rank::Kyu(2), "", ""),
            entrant("vandijk", Rank::Dan(3), "CH", "GoClub Bern"),
        ],
        rounds: vec![
            Round {
                boards: vec![Board {
                    black: 0,
                    white: 1,
                    handicap: 0,
                    outcome: Some(Outcome::Black),
                }],
                byes: vec![2],
            },
            Round {
                boards: vec![Board {
                    black: 0,
                    white: 2,
                    handicap: 0,
                    outcome: Some(Outcome::White),
                }],
                byes: vec![1],
            },
        ],
        adjustments: Vec::new(),
    };
    let person = |surname: &str, first_name: &str| Person {
        surname: surname.into(),
        first_name: first_name.into(),
        ..Person::default()
    };
    let people = [
        person("Lee", "Ann"),
        person("Kim", ""),
        person("van Dijk", "Jean Paul"),
    ];
    let expected = "; CL[B]
; EV[Spring Open]
; PC[FR,Lyon]
; DT[2026-04-11,2026-04-12]
; KM[7.5]
; TM[60]
; Generated by tengen
;
; Pl Name Rk Co Club NBW SOS
   1 van_Dijk Jean_Paul  3D CH GoClub_Bern    2    1       0+    2+/w0
   2 Lee Ann  5D FR Lyon    1    3    3+/b0    1-/b0
   3 Kim   2K XX xxxx    1    1    2-/w0       0+
";
    assert_eq!(egf::write(&record, &people, &event()), expected);
}

#[test]
fn an_event_without_a_place_writes_no_place_line() {
    let online = Event {
        country: String::new(),
        city: String::new(),
        ..event()
    };
    let record = Record {
        regulations: Regulations {
            system: System::Swiss,
            rounds: 1,
            handicap: None,
            colours: ColourRule::Draw,
            seeding: Seeding::SplitAndFold,
            tie_breaks: Vec::new(),
            bye: 2,
            missed_round: 0,
            separate_clubs: false,
            separate_countries: false,
        },
        field: Vec::new(),
        rounds: Vec::new(),
        adjustments: Vec::new(),
    };
    let text = egf::write(&record, &[], &online);
    assert!(text.contains("; EV[Spring Open]\n"), "{text}");
    assert!(!text.contains("PC["), "{text}");
    let placed = egf::write(&record, &[], &event());
    assert!(placed.contains("; PC[FR,Lyon]\n"), "{placed}");
}
