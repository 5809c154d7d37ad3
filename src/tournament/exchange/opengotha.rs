//! OpenGotha's tournament file (XML, data version 201): the players, every round's games
//! and byes, and the parameters that map onto the regulations. Element and attribute
//! names are OpenGotha's own (`Tournament` / `Players` / `Player` / `Games` / `Game` /
//! `ByePlayers` / `TournamentParameterSet`), so OpenGotha opens what tengen exports, and
//! tengen imports OpenGotha's files, a bare player list included.
//!
//! OpenGotha names a player by a key, surname and first name in capitals
//! ([`Person::key`]); it has no withdrawal, so a withdrawn player is one who does not
//! take part in the rounds after the last one they played.

use std::collections::HashMap;
use std::fmt::Write as _;

use quick_xml::XmlVersion;
use quick_xml::escape::escape;
use quick_xml::events::{BytesStart, Event as XmlEvent};
use quick_xml::reader::Reader;

use super::super::field::{Adjustment, Board, Entrant, Outcome, Record, Round, Status, Turn};
use super::super::regulations::{
    ColourRule, HalfPoints, HandicapRule, Regulations, Seeding, System, TieBreak,
};
use super::{Event, Imported, Person, person_at};
use crate::rating::Rank;

/// OpenGotha's most rounds, and the length of a player's `participating` flags.
const MAX_ROUNDS: usize = 20;
/// OpenGotha's most placement criteria.
const MAX_CRITERIA: usize = 6;
/// Players one import may bring: more than any congress has had.
const MAX_PLAYERS: usize = 10_000;

/// Why an OpenGotha file could not be imported. Nothing is imported then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GothaError {
    #[error("line {line}: the file is not well-formed XML: {why}")]
    Xml { line: usize, why: String },
    #[error("the file has no <Tournament> element")]
    NotATournament,
    #[error("line {line}: <{element}> has no {attribute} attribute")]
    Missing {
        line: usize,
        element: &'static str,
        attribute: &'static str,
    },
    #[error("line {line}: <{element} {attribute}=\"{value}\"> is not {expected}")]
    Invalid {
        line: usize,
        element: &'static str,
        attribute: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("line {line}: player {key} has an unknown rank {rank:?} (30K to 1K, 1D to 9D)")]
    UnknownRank {
        line: usize,
        key: String,
        rank: String,
    },
    #[error("line {line}: player {key} is listed twice")]
    DuplicatePlayer { line: usize, key: String },
    #[error("line {line}: round {round} names {key}, who is not among the players")]
    UnknownPlayer {
        line: usize,
        round: usize,
        key: String,
    },
    #[error("line {line}: {key} appears twice in round {round}")]
    TwiceInRound {
        line: usize,
        round: usize,
        key: String,
    },
    #[error("the file has more than {MAX_PLAYERS} players")]
    TooManyPlayers,
}

/// The tournament as OpenGotha's XML; `people[seat]` names each seat (the entrant's id
/// stands in for a missing one).
pub fn export(record: &Record, people: &[Person], event: &Event) -> String {
    let people = distinct(record, people);
    let regs = &record.regulations;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
    out.push_str("<Tournament dataVersion=\"201\">\n    <Players>\n");
    for (seat, (entrant, person)) in record.field.iter().zip(&people).enumerate() {
        let rank = gotha_rank(entrant.rank);
        let rating = person
            .rating
            .unwrap_or(2100 + 100 * (i32::from(entrant.rank.steps()) - 30));
        let correction = smms_correction(record, seat).to_string();
        let (participating, rating) = (participating(record, seat), rating.to_string());
        let mut attributes = vec![
            ("agaExpirationDate", ""),
            ("agaId", ""),
            ("club", &entrant.club),
            ("country", &entrant.country),
            ("egfPin", &person.egf_pin),
            ("ffgLicence", ""),
            ("ffgLicenceStatus", ""),
            ("firstName", &person.first_name),
            ("grade", &rank),
            ("name", &person.surname),
            ("participating", &participating),
            ("rank", &rank),
            ("rating", &rating),
            ("ratingOrigin", ""),
            ("registeringStatus", "FIN"),
            ("smmsCorrection", &correction),
        ];
        if !person.account.is_empty() {
            attributes.push(("tengenAccount", &person.account));
        }
        element(&mut out, 8, "Player", &attributes);
    }
    out.push_str("    </Players>\n    <Games>\n");
    for (r, round) in record.rounds.iter().enumerate() {
        for (table, board) in round.boards.iter().enumerate() {
            let known = board.handicap > 0 || regs.colours == ColourRule::Draw;
            element(
                &mut out,
                8,
                "Game",
                &[
                    ("blackPlayer", &people[board.black].key()),
                    ("handicap", &board.handicap.to_string()),
                    ("knownColor", if known { "true" } else { "false" }),
                    ("result", result_name(board.outcome)),
                    ("roundNumber", &(r + 1).to_string()),
                    ("tableNumber", &(table + 1).to_string()),
                    ("whitePlayer", &people[board.white].key()),
                ],
            );
        }
    }
    out.push_str("    </Games>\n");
    if record.rounds.iter().any(|r| !r.byes.is_empty()) {
        out.push_str("    <ByePlayers>\n");
        for (r, round) in record.rounds.iter().enumerate() {
            // OpenGotha keeps one bye a round.
            if let Some(&seat) = round.byes.first() {
                element(
                    &mut out,
                    8,
                    "ByePlayer",
                    &[
                        ("player", &people[seat].key()),
                        ("roundNumber", &(r + 1).to_string()),
                    ],
                );
            }
        }
        out.push_str("    </ByePlayers>\n");
    }
    parameters(&mut out, regs, event);
    out.push_str("</Tournament>\n");
    out
}

/// Each seat's person, with a seat's id added to the first name where two would share
/// one key (OpenGotha tells players apart by it).
fn distinct(record: &Record, people: &[Person]) -> Vec<Person> {
    let mut seen = std::collections::HashSet::new();
    (0..record.field.len())
        .map(|seat| {
            let mut person = person_at(record, people, seat);
            if !seen.insert(person.key()) {
                person.first_name = format!("{} {}", person.first_name, record.field[seat].id);
                seen.insert(person.key());
            }
            person
        })
        .collect()
}

/// OpenGotha's correction of a McMahon start score, in whole points: the adjustments
/// made before round one (a half point, or one made later, it cannot say).
fn smms_correction(record: &Record, seat: usize) -> HalfPoints {
    match record.regulations.system {
        System::McMahon { .. } => record.adjusted(seat, 0) / 2,
        _ => 0,
    }
}

/// `participating`: a `0` for each round before the player's first, and for a player no
/// longer paired, each round they sat out and every round to come.
fn participating(record: &Record, seat: usize) -> String {
    let gone = record.field[seat].status != Status::Playing;
    (0..MAX_ROUNDS)
        .map(|r| {
            let missed = r + 1 < usize::from(record.field[seat].first_round);
            let out = gone && (r >= record.rounds.len() || record.turn(seat, r) == Turn::Absent);
            if missed || out { '0' } else { '1' }
        })
        .collect()
}

fn parameters(out: &mut String, regs: &Regulations, event: &Event) {
    let (mcmahon, bar, floor) = match regs.system {
        System::McMahon { bar, floor } => (true, bar, floor),
        _ => (false, Rank::Dan(9), Rank::Kyu(30)),
    };
    let handicap = regs.handicap.unwrap_or(HandicapRule {
        correction: 0,
        ceiling: 0,
        threshold: Rank::Kyu(30),
    });
    let seeding = match regs.seeding {
        Seeding::SplitAndFold => "SPLITANDFOLD",
        Seeding::SplitAndSlip => "SPLITANDSLIP",
        Seeding::SplitAndRandom => "SPLITANDRANDOM",
    };
    let geo = regs.separate_clubs || regs.separate_countries;
    out.push_str("    <TournamentParameterSet>\n");
    element(
        out,
        8,
        "GeneralParameterSet",
        &[
            ("bInternet", "true"),
            ("basicTime", &event.main_minutes.to_string()),
            ("beginDate", &event.begin),
            ("canByoYomiTime", "300"),
            (
                "complementaryTimeSystem",
                if event.byoyomi_seconds > 0 {
                    "STDBYOYOMI"
                } else {
                    "SUDDENDEATH"
                },
            ),
            ("director", ""),
            ("endDate", &event.end),
            ("fischerTime", "10"),
            ("genCountNotPlayedGamesAsHalfPoint", "false"),
            ("genMMBar", &gotha_rank(bar)),
            ("genMMFloor", &gotha_rank(floor)),
            ("genMMS2ValueAbsent", &regs.missed_round.to_string()),
            ("genMMS2ValueBye", &regs.bye.to_string()),
            ("genMMZero", "30K"),
            ("genNBW2ValueAbsent", &regs.missed_round.to_string()),
            ("genNBW2ValueBye", &regs.bye.to_string()),
            // tengen keeps half points; OpenGotha would round them down.
            ("genRoundDownNBWMMS", "false"),
            ("komi", &event.komi.to_string()),
            ("location", &event.city),
            ("name", &event.name),
            ("nbMovesCanTime", "15"),
            ("numberOfCategories", "1"),
            ("numberOfRounds", &regs.rounds.to_string()),
            ("shortName", &event.short_name),
            ("size", &event.board_size.to_string()),
            ("stdByoYomiTime", &event.byoyomi_seconds.to_string()),
        ],
    );
    element(
        out,
        8,
        "HandicapParameterSet",
        &[
            ("hdBasedOnMMS", "true"),
            ("hdCeiling", &handicap.ceiling.to_string()),
            ("hdCorrection", &handicap.correction.to_string()),
            ("hdNoHdRankThreshold", &gotha_rank(handicap.threshold)),
        ],
    );
    out.push_str("        <PlacementParameterSet>\n            <PlacementCriteria>\n");
    let mut names = vec![if mcmahon { "MMS" } else { "NBW" }];
    names.extend(regs.tie_breaks.iter().map(|&t| criterion_name(t, mcmahon)));
    names.resize(MAX_CRITERIA.max(names.len()), "NULL");
    for (i, name) in names.iter().take(MAX_CRITERIA).enumerate() {
        element(
            out,
            16,
            "PlacementCriterion",
            &[("name", name), ("number", &(i + 1).to_string())],
        );
    }
    out.push_str("            </PlacementCriteria>\n        </PlacementParameterSet>\n");
    // OpenGotha's own weights where tengen has no counterpart.
    element(
        out,
        8,
        "PairingParameterSet",
        &[
            ("paiBaAvoidDuplGame", "500000000000000"),
            ("paiBaBalanceWB", "1000000"),
            ("paiBaDeterministic", "true"),
            ("paiBaRandom", "0"),
            ("paiMaAdditionalPlacementCritSystem1", "Rating"),
            ("paiMaAdditionalPlacementCritSystem2", "NULL"),
            ("paiMaAvoidMixingCategories", "0"),
            ("paiMaCompensateDUDD", "true"),
            ("paiMaDUDDLowerMode", "MID"),
            ("paiMaDUDDUpperMode", "MID"),
            ("paiMaDUDDWeight", "100000000"),
            ("paiMaLastRoundForSeedSystem1", "1"),
            ("paiMaMaximizeSeeding", "5000000"),
            ("paiMaMinimizeScoreDifference", "100000000000"),
            ("paiMaSeedSystem1", seeding),
            ("paiMaSeedSystem2", seeding),
            ("paiSeAvoidSameGeo", if geo { "100000000000" } else { "0" }),
            ("paiSeBarThresholdActive", "true"),
            ("paiSeDefSecCrit", "100000000000"),
            ("paiSeMinimizeHandicap", "0"),
            ("paiSeNbWinsThresholdActive", "false"),
            (
                "paiSePreferMMSDiffRatherThanSameClub",
                if regs.separate_clubs { "3" } else { "0" },
            ),
            (
                "paiSePreferMMSDiffRatherThanSameCountry",
                if regs.separate_countries { "1" } else { "0" },
            ),
            ("paiSeRankThreshold", &gotha_rank(handicap.threshold)),
            ("paiStandardNX1Factor", "0.5"),
        ],
    );
    out.push_str("    </TournamentParameterSet>\n");
}

/// One empty element on its own line, its attribute values escaped.
fn element(out: &mut String, indent: usize, name: &str, attributes: &[(&str, &str)]) {
    let _ = write!(out, "{:indent$}<{name}", "");
    for (key, value) in attributes {
        let _ = write!(out, " {key}=\"{}\"", escape(*value));
    }
    out.push_str("/>\n");
}

fn gotha_rank(rank: Rank) -> String {
    rank.to_string().to_uppercase()
}

fn result_name(outcome: Option<Outcome>) -> &'static str {
    match outcome {
        None => "RESULT_UNKNOWN",
        Some(Outcome::Black) => "RESULT_BLACKWINS",
        Some(Outcome::White) => "RESULT_WHITEWINS",
        Some(Outcome::Jigo) => "RESULT_EQUAL",
        Some(Outcome::BothLose) => "RESULT_BOTHLOSE",
    }
}

/// OpenGotha's criterion for a tie-break: on the McMahon score in a McMahon, on the
/// number of wins otherwise.
fn criterion_name(tie_break: TieBreak, mcmahon: bool) -> &'static str {
    match (tie_break, mcmahon) {
        (TieBreak::Sos, true) => "SOSM",
        (TieBreak::Sos, false) => "SOSW",
        (TieBreak::Sosos, true) => "SOSOSM",
        (TieBreak::Sosos, false) => "SOSOSW",
        (TieBreak::Sodos, true) => "SODOSM",
        (TieBreak::Sodos, false) => "SODOSW",
        (TieBreak::Cuss, true) => "CUSSM",
        (TieBreak::Cuss, false) => "CUSSW",
        (TieBreak::Wins, _) => "NBW",
        (TieBreak::Direct, _) => "DC",
    }
}

fn tie_break_named(name: &str) -> Option<TieBreak> {
    Some(match name {
        "SOSM" | "SOSW" => TieBreak::Sos,
        "SOSOSM" | "SOSOSW" => TieBreak::Sosos,
        "SODOSM" | "SODOSW" => TieBreak::Sodos,
        "CUSSM" | "CUSSW" => TieBreak::Cuss,
        "NBW" => TieBreak::Wins,
        "DC" => TieBreak::Direct,
        _ => return None,
    })
}

/// One element of interest as read: its name, its line, its attributes.
struct Element {
    name: &'static str,
    line: usize,
    attributes: HashMap<String, String>,
}

impl Element {
    fn get(&self, attribute: &'static str) -> Option<&str> {
        self.attributes.get(attribute).map(String::as_str)
    }

    fn require(&self, attribute: &'static str) -> Result<&str, GothaError> {
        self.get(attribute).ok_or(GothaError::Missing {
            line: self.line,
            element: self.name,
            attribute,
        })
    }

    /// A number attribute, or `default` when it is absent (as OpenGotha reads it).
    fn number<T: std::str::FromStr>(
        &self,
        attribute: &'static str,
        default: T,
    ) -> Result<T, GothaError> {
        match self.get(attribute) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| self.invalid(attribute, v, "a number")),
        }
    }

    fn rank(&self, attribute: &'static str, default: Rank) -> Result<Rank, GothaError> {
        match self.get(attribute) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| self.invalid(attribute, v, "a rank")),
        }
    }

    fn invalid(&self, attribute: &'static str, value: &str, expected: &'static str) -> GothaError {
        GothaError::Invalid {
            line: self.line,
            element: self.name,
            attribute,
            value: value.to_string(),
            expected,
        }
    }
}

/// The elements the import reads, by name; a `PlacementCriterion` counts only inside the
/// players' `PlacementParameterSet` (a team tournament has its own).
const READ: [&str; 8] = [
    "Tournament",
    "Player",
    "Game",
    "ByePlayer",
    "GeneralParameterSet",
    "HandicapParameterSet",
    "PlacementCriterion",
    "PairingParameterSet",
];

fn elements(xml: &str) -> Result<Vec<Element>, GothaError> {
    let line_at = |pos: u64| {
        let pos = usize::try_from(pos).unwrap_or(usize::MAX).min(xml.len());
        xml.as_bytes()[..pos]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    };
    let mut reader = Reader::from_str(xml);
    let mut path: Vec<String> = Vec::new();
    let mut found = Vec::new();
    loop {
        let at = reader.buffer_position();
        let event = reader.read_event().map_err(|e| GothaError::Xml {
            line: line_at(reader.buffer_position()),
            why: e.to_string(),
        })?;
        let (start, empty) = match &event {
            XmlEvent::Start(s) => (s, false),
            XmlEvent::Empty(s) => (s, true),
            XmlEvent::End(_) => {
                path.pop();
                continue;
            }
            XmlEvent::Eof => break,
            _ => continue,
        };
        let name = start.name().as_ref().to_string();
        let wanted = READ.iter().find(|&&n| n == name).filter(|&&n| {
            n != "PlacementCriterion" || path.iter().any(|p| p == "PlacementParameterSet")
        });
        if let Some(&name) = wanted {
            found.push(Element {
                name,
                line: line_at(at),
                attributes: attributes(start).map_err(|why| GothaError::Xml {
                    line: line_at(at),
                    why,
                })?,
            });
            if found.len() > MAX_PLAYERS * 4 {
                return Err(GothaError::TooManyPlayers);
            }
        }
        if !empty {
            path.push(name);
        }
    }
    Ok(found)
}

fn attributes(start: &BytesStart) -> Result<HashMap<String, String>, String> {
    let mut map = HashMap::new();
    for attribute in start.attributes() {
        let attribute = attribute.map_err(|e| e.to_string())?;
        let key = attribute.key.as_ref().to_string();
        let value = attribute
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|e| e.to_string())?;
        map.insert(key, value.into_owned());
    }
    Ok(map)
}

/// A tournament from OpenGotha's XML: its players (an entrant's id is [`Person::key`]),
/// the rounds played so far, and the regulations its parameters give (OpenGotha's
/// defaults where a bare player list has none).
pub fn import(xml: &str) -> Result<Imported, GothaError> {
    let elements = elements(xml)?;
    if !elements.iter().any(|e| e.name == "Tournament") {
        return Err(GothaError::NotATournament);
    }
    let of = |name: &'static str| elements.iter().filter(move |e| e.name == name);
    let general = of("GeneralParameterSet").next();
    let (event, mut regulations) = regulations(
        general,
        of("HandicapParameterSet").next(),
        of("PlacementCriterion"),
        of("PairingParameterSet").next(),
    )?;

    let Players {
        people,
        mut field,
        flags,
        adjustments,
        seat_of,
    } = players(of("Player"))?;

    let mut rounds: Vec<Round> = Vec::new();
    let mut placed: Vec<Vec<bool>> = Vec::new();
    let mut nigiri = false;
    let seat = |e: &Element, attribute: &'static str, round: usize| -> Result<usize, GothaError> {
        let key = e.require(attribute)?;
        seat_of
            .get(key)
            .copied()
            .ok_or_else(|| GothaError::UnknownPlayer {
                line: e.line,
                round,
                key: key.to_string(),
            })
    };
    let round_of = |e: &Element,
                    rounds: &mut Vec<Round>,
                    placed: &mut Vec<Vec<bool>>|
     -> Result<usize, GothaError> {
        let round: usize = e.number("roundNumber", 0)?;
        if !(1..=MAX_ROUNDS).contains(&round) {
            return Err(e.invalid(
                "roundNumber",
                e.get("roundNumber").unwrap_or_default(),
                "a round from 1 to 20",
            ));
        }
        while rounds.len() < round {
            rounds.push(Round::default());
            placed.push(vec![false; field.len()]);
        }
        Ok(round)
    };
    for g in of("Game") {
        let round = round_of(g, &mut rounds, &mut placed)?;
        let (black, white) = (
            seat(g, "blackPlayer", round)?,
            seat(g, "whitePlayer", round)?,
        );
        for (s, attribute) in [(black, "blackPlayer"), (white, "whitePlayer")] {
            if std::mem::replace(&mut placed[round - 1][s], true) {
                return Err(GothaError::TwiceInRound {
                    line: g.line,
                    round,
                    key: g.require(attribute)?.to_string(),
                });
            }
        }
        let handicap: u8 = g.number("handicap", 0)?;
        let outcome = match g.get("result").unwrap_or("RESULT_UNKNOWN") {
            "RESULT_UNKNOWN" => None,
            "RESULT_BLACKWINS" | "RESULT_BLACKWINS_BYDEF" => Some(Outcome::Black),
            "RESULT_WHITEWINS" | "RESULT_WHITEWINS_BYDEF" => Some(Outcome::White),
            "RESULT_EQUAL" | "RESULT_EQUAL_BYDEF" => Some(Outcome::Jigo),
            "RESULT_BOTHLOSE" | "RESULT_BOTHLOSE_BYDEF" => Some(Outcome::BothLose),
            other => {
                return Err(g.invalid(
                    "result",
                    other,
                    "a result tengen keeps (both-win is not one)",
                ));
            }
        };
        nigiri |= handicap == 0 && g.get("knownColor") == Some("false");
        rounds[round - 1].boards.push(Board {
            black,
            white,
            handicap,
            outcome,
        });
    }
    for b in of("ByePlayer") {
        let round = round_of(b, &mut rounds, &mut placed)?;
        let s = seat(b, "player", round)?;
        if std::mem::replace(&mut placed[round - 1][s], true) {
            return Err(GothaError::TwiceInRound {
                line: b.line,
                round,
                key: b.require("player")?.to_string(),
            });
        }
        rounds[round - 1].byes.push(s);
    }
    if nigiri {
        regulations.colours = ColourRule::Nigiri;
    }
    regulations.rounds = regulations
        .rounds
        .max(u8::try_from(rounds.len()).unwrap_or(u8::MAX));
    // Sitting out the next round to pair, after one's first: withdrawn.
    let next = rounds.len();
    for (entrant, participating) in field.iter_mut().zip(&flags) {
        let started = usize::from(entrant.first_round) <= next + 1;
        if started
            && next < usize::from(regulations.rounds)
            && participating.get(next) == Some(&false)
        {
            entrant.status = Status::Withdrawn;
        }
    }
    Ok(Imported {
        event,
        people,
        record: Record {
            regulations,
            field,
            rounds,
            adjustments,
        },
    })
}

/// The players of an OpenGotha file, in its order, and what each one's element says.
struct Players {
    people: Vec<Person>,
    field: Vec<Entrant>,
    /// Each player's `participating` flags, round by round.
    flags: Vec<Vec<bool>>,
    /// Their `smmsCorrection`s, as adjustments from round one.
    adjustments: Vec<Adjustment>,
    /// Each player's seat by their key (surname and first name).
    seat_of: HashMap<String, usize>,
}

fn players<'a>(elements: impl Iterator<Item = &'a Element>) -> Result<Players, GothaError> {
    let mut people = Vec::new();
    let mut field = Vec::new();
    let mut flags = Vec::new();
    let mut adjustments = Vec::new();
    let mut seat_of = HashMap::new();
    for p in elements {
        if field.len() == MAX_PLAYERS {
            return Err(GothaError::TooManyPlayers);
        }
        let person = Person {
            surname: p.require("name")?.to_string(),
            first_name: p.require("firstName")?.to_string(),
            rating: p.get("rating").map(|_| p.number("rating", 0)).transpose()?,
            egf_pin: p.get("egfPin").unwrap_or_default().to_string(),
            account: p.get("tengenAccount").unwrap_or_default().to_string(),
        };
        let key = person.key();
        let rank_text = p.require("rank")?;
        let rank = rank_text
            .parse::<Rank>()
            .map_err(|_| GothaError::UnknownRank {
                line: p.line,
                key: key.clone(),
                rank: rank_text.to_string(),
            })?;
        if seat_of.insert(key.clone(), field.len()).is_some() {
            return Err(GothaError::DuplicatePlayer { line: p.line, key });
        }
        let participating: Vec<bool> = p
            .get("participating")
            .unwrap_or_default()
            .chars()
            .map(|c| c != '0')
            .collect();
        let leading = participating
            .iter()
            .take_while(|&&taking_part| !taking_part)
            .count();
        let correction: HalfPoints = p.number("smmsCorrection", 0)?;
        if correction != 0 {
            adjustments.push(Adjustment {
                seat: field.len(),
                points: correction.saturating_mul(2),
                from_round: 0,
                reason: "OpenGotha's smmsCorrection".into(),
            });
        }
        field.push(Entrant {
            id: key,
            rank,
            club: p.get("club").unwrap_or_default().to_string(),
            country: p.get("country").unwrap_or_default().to_string(),
            first_round: u8::try_from(leading + 1).unwrap_or(u8::MAX),
            status: Status::Playing,
        });
        flags.push(participating);
        people.push(person);
    }
    Ok(Players {
        people,
        field,
        flags,
        adjustments,
        seat_of,
    })
}

/// The event and the regulations from the parameter sets, each attribute defaulting as
/// OpenGotha's own reader defaults it.
fn regulations<'a>(
    general: Option<&Element>,
    handicap: Option<&Element>,
    criteria: impl Iterator<Item = &'a Element>,
    pairing: Option<&Element>,
) -> Result<(Event, Regulations), GothaError> {
    let none = Element {
        name: "GeneralParameterSet",
        line: 0,
        attributes: HashMap::new(),
    };
    let g = general.unwrap_or(&none);
    let text = |attribute| g.get(attribute).unwrap_or_default().to_string();
    let event = Event {
        name: text("name"),
        short_name: text("shortName"),
        country: String::new(),
        city: text("location"),
        begin: text("beginDate"),
        end: text("endDate"),
        komi: g.number("komi", 7.5)?,
        board_size: g.number("size", 19)?,
        main_minutes: g.number("basicTime", 0)?,
        byoyomi_seconds: if g.get("complementaryTimeSystem") == Some("STDBYOYOMI") {
            g.number("stdByoYomiTime", 0)?
        } else {
            0
        },
        class: String::new(),
    };
    let mut criteria: Vec<(usize, &str, &Element)> = criteria
        .map(|c| Ok((c.number("number", 1)?, c.get("name").unwrap_or("NULL"), c)))
        .collect::<Result<_, GothaError>>()?;
    criteria.sort_by_key(|c| c.0);
    let mcmahon = criteria.first().is_none_or(|c| c.1 == "MMS");
    let system = if mcmahon {
        System::McMahon {
            bar: g.rank("genMMBar", Rank::Dan(4))?,
            floor: g.rank("genMMFloor", Rank::Kyu(20))?,
        }
    } else {
        System::Swiss
    };
    let tie_breaks: Vec<TieBreak> = if criteria.is_empty() {
        vec![TieBreak::Sos, TieBreak::Sosos]
    } else {
        let mut t: Vec<TieBreak> = criteria
            .iter()
            .skip(1)
            .filter_map(|c| tie_break_named(c.1))
            .collect();
        t.dedup();
        t
    };
    let (bye, absent): (HalfPoints, HalfPoints) = if mcmahon {
        (
            g.number("genMMS2ValueBye", 0)?,
            g.number("genMMS2ValueAbsent", 0)?,
        )
    } else {
        (
            g.number("genNBW2ValueBye", 0)?,
            g.number("genNBW2ValueAbsent", 0)?,
        )
    };
    let handicap = match handicap {
        Some(h) => {
            let rule = HandicapRule {
                correction: h.number("hdCorrection", 1)?,
                ceiling: h.number("hdCeiling", 9)?,
                threshold: h.rank("hdNoHdRankThreshold", Rank::Dan(1))?,
            };
            (rule.ceiling > 0).then_some(rule)
        }
        None => None,
    };
    let none = Element {
        name: "PairingParameterSet",
        line: 0,
        attributes: HashMap::new(),
    };
    let p = pairing.unwrap_or(&none);
    let seed_name =
        |attribute: &'static str, default: &'static str| -> Result<Seeding, GothaError> {
            match p.get(attribute).unwrap_or(default) {
                "SPLITANDFOLD" => Ok(Seeding::SplitAndFold),
                "SPLITANDSLIP" => Ok(Seeding::SplitAndSlip),
                "SPLITANDRANDOM" => Ok(Seeding::SplitAndRandom),
                other => Err(p.invalid(attribute, other, "a seeding system")),
            }
        };
    let rounds: u8 = g.number("numberOfRounds", 5)?;
    // System 1 seeds the first rounds, system 2 the rest: the rest is what matters.
    let last_of_first: u8 = p.number("paiMaLastRoundForSeedSystem1", 2)?;
    let seeding = if last_of_first >= rounds {
        seed_name("paiMaSeedSystem1", "SPLITANDRANDOM")?
    } else {
        seed_name("paiMaSeedSystem2", "SPLITANDFOLD")?
    };
    let geo = p.number::<i64>("paiSeAvoidSameGeo", 0)? > 0;
    let regulations = Regulations {
        system,
        rounds,
        handicap,
        colours: ColourRule::Draw,
        seeding,
        tie_breaks,
        bye,
        missed_round: absent,
        separate_clubs: geo && p.number::<i64>("paiSePreferMMSDiffRatherThanSameClub", 0)? > 0,
        separate_countries: geo
            && p.number::<i64>("paiSePreferMMSDiffRatherThanSameCountry", 0)? > 0,
    };
    Ok((event, regulations))
}
