//! Pairing a McMahon or Swiss round: every possible pair gets a cost from weighted
//! criteria, and the round is the perfect matching of least total cost.
//!
//! The criteria, most important first, each weighted above everything below it for one
//! pair (a pair's costs are shown to the director as [`Costs`]):
//! 1. no repeat game and no pair the director forbade, unless unavoidable;
//! 2. stay in the score group: the square of the score gap, so two small floats beat one
//!    large; then balance floats, preferring players not drawn that way before;
//! 3. colour balance in even games;
//! 4. seeding inside the group (split and fold, slip, or random);
//! 5. keep apart players of one club, then of one country.
//!
//! An odd field gives a bye to the lowest-placed eligible player who has had none.
//! Never does I/O; the event's draw is a seed, so a pairing can be checked afterwards.

use serde::{Deserialize, Serialize};

use super::field::{Board, Record, Seat};
use super::matching::min_cost_perfect;
use super::regulations::{ColourRule, HalfPoints, Seeding};

/// Above every other cost a whole round can add up to.
const UNAVOIDABLE: i64 = 1_000_000_000_000;
const SCORE_GAP: i64 = 10_000;
const FLOAT: i64 = 1_500;
const COLOUR: i64 = 500;
const SEEDING: i64 = 4;
const CLUB: i64 = 2;
const COUNTRY: i64 = 1;

/// Why two players were paired: each criterion's share of the pair's cost.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Costs {
    pub repeat: bool,
    pub forbidden: bool,
    /// Difference of scores, in half points.
    pub score_gap: HalfPoints,
    /// Earlier floats the same way, of the one drawn up plus the one drawn down (0–4).
    pub floats: u8,
    /// How far colours would stay unbalanced (0–2).
    pub colour: u8,
    /// Distance from the seeding's ideal opponent, in hundredths of the group (0–100).
    pub seeding: u8,
    pub same_club: bool,
    pub same_country: bool,
}

impl Costs {
    pub fn total(&self) -> i64 {
        let gap = i64::from(self.score_gap);
        UNAVOIDABLE * (i64::from(self.repeat) + i64::from(self.forbidden))
            + SCORE_GAP * gap * gap
            + FLOAT * i64::from(self.floats)
            + COLOUR * i64::from(self.colour)
            + SEEDING * i64::from(self.seeding)
            + CLUB * i64::from(self.same_club)
            + COUNTRY * i64::from(self.same_country)
    }
}

/// One board of a proposed round, with why it was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proposed {
    pub board: Board,
    /// Colours are left to nigiri at the board (the regulations say so, and the game is
    /// even); `black` and `white` are then only the order of the names.
    pub nigiri: bool,
    pub costs: Costs,
}

/// A proposed round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proposal {
    pub boards: Vec<Proposed>,
    pub bye: Option<Seat>,
}

/// Why a round could not be paired.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairingError {
    #[error("there are fewer than two players to pair")]
    TooFew,
    #[error("every player who could take the bye already has one")]
    NoBye,
}

/// What the pairing knows of one player for this round.
struct Entry {
    seat: Seat,
    score: HalfPoints,
    colour: i32,
    floats: (u8, u8),
    opponents: Vec<Seat>,
    /// Place inside the score group, strongest first, and the group's size.
    place: (usize, usize),
}

/// Pairs the next round among `seats`, avoiding `forbidden` pairs, with the event's draw
/// `seed` breaking ties of colour and seeding.
pub fn pair(
    record: &Record,
    seats: &[Seat],
    forbidden: &[(Seat, Seat)],
    seed: u64,
) -> Result<Proposal, PairingError> {
    let (paired, bye, pairs) = costed(record, seats, forbidden, seed)?;
    let edges: Vec<(usize, usize, i64)> =
        pairs.iter().map(|&(i, j, c)| (i, j, c.total())).collect();
    let mates = min_cost_perfect(paired.len(), &edges).ok_or(PairingError::TooFew)?;
    // Pair (i, j), i < j, sits at this index of the row-by-row list `costed` makes.
    let n = paired.len();
    let index = |i: usize, j: usize| i * (2 * n - i - 1) / 2 + (j - i - 1);
    let round = record.rounds.len() as u64;
    let mut boards = Vec::with_capacity(n / 2);
    for (i, &j) in mates.iter().enumerate() {
        if i < j {
            let c = pairs[index(i, j)].2;
            boards.push(place(record, &paired[i], &paired[j], c, seed ^ round));
        }
    }
    // Top boards first: by the higher score, then the lower.
    let mut score = vec![0; record.field.len()];
    for e in &paired {
        score[e.seat] = e.score;
    }
    boards.sort_by_key(|p| {
        let (a, b) = (score[p.board.black], score[p.board.white]);
        (-a.max(b), -a.min(b))
    });
    Ok(Proposal { boards, bye })
}

/// Every pair the next round could have among `seats` but the bye, with its costs: what
/// `pair` chooses from, and what the director sees when swapping by hand.
pub fn all_costs(
    record: &Record,
    seats: &[Seat],
    forbidden: &[(Seat, Seat)],
    seed: u64,
) -> Result<Vec<(Seat, Seat, Costs)>, PairingError> {
    let (paired, _, pairs) = costed(record, seats, forbidden, seed)?;
    Ok(pairs
        .into_iter()
        .map(|(i, j, c)| (paired[i].seat, paired[j].seat, c))
        .collect())
}

/// Every pair of a round's players, row by row (`i < j`, indices into the players), with
/// its costs.
type Pairs = Vec<(usize, usize, Costs)>;

/// The round's players but the bye, in score-group order; the bye; and their [`Pairs`].
fn costed(
    record: &Record,
    seats: &[Seat],
    forbidden: &[(Seat, Seat)],
    seed: u64,
) -> Result<(Vec<Entry>, Option<Seat>, Pairs), PairingError> {
    let (entries, bye) = prepare(record, seats, seed)?;
    let paired: Vec<Entry> = entries
        .into_iter()
        .filter(|e| Some(e.seat) != bye)
        .collect();
    let mut pairs = Vec::with_capacity(paired.len() * paired.len() / 2);
    for i in 0..paired.len() {
        for j in i + 1..paired.len() {
            let c = costs_of(record, &paired[i], &paired[j], forbidden, seed);
            pairs.push((i, j, c));
        }
    }
    Ok((paired, bye, pairs))
}

/// The players of the round in score groups, each with their place in the group, and
/// who takes the bye in an odd field.
fn prepare(
    record: &Record,
    seats: &[Seat],
    seed: u64,
) -> Result<(Vec<Entry>, Option<Seat>), PairingError> {
    if seats.len() < 2 {
        return Err(PairingError::TooFew);
    }
    let mut entries: Vec<Entry> = seats
        .iter()
        .map(|&seat| Entry {
            seat,
            score: record.score(seat),
            colour: record.colour_balance(seat),
            floats: record.floats(seat),
            opponents: record.opponents(seat).collect(),
            place: (0, 0),
        })
        .collect();
    // Score groups, strongest first; inside a group by rank, then by the draw.
    entries.sort_by_key(|e| {
        let rank = record.field[e.seat].rank.steps();
        (
            -e.score,
            std::cmp::Reverse(rank),
            draw(seed, 0, e.seat as u64, 0),
        )
    });
    let mut start = 0;
    while start < entries.len() {
        let score = entries[start].score;
        let end = start
            + entries[start..]
                .iter()
                .take_while(|e| e.score == score)
                .count();
        for (i, e) in entries[start..end].iter_mut().enumerate() {
            e.place = (i, end - start);
        }
        start = end;
    }
    let bye = if entries.len() % 2 == 1 {
        Some(choose_bye(record, &entries)?)
    } else {
        None
    };
    Ok((entries, bye))
}

/// The lowest-placed player with no bye yet; a player who had one only if all have.
fn choose_bye(record: &Record, entries: &[Entry]) -> Result<Seat, PairingError> {
    entries
        .iter()
        .rev()
        .find(|e| !record.had_bye(e.seat))
        .map(|e| e.seat)
        .ok_or(PairingError::NoBye)
}

fn costs_of(record: &Record, a: &Entry, b: &Entry, forbidden: &[(Seat, Seat)], seed: u64) -> Costs {
    let (pa, pb) = (&record.field[a.seat], &record.field[b.seat]);
    let (high, low) = if a.score >= b.score { (a, b) } else { (b, a) };
    let floats = if high.score == low.score {
        0
    } else {
        (high.floats.1 + low.floats.0).min(4)
    };
    let handicap = handicap_of(record, a, b) > 0;
    let colour = if handicap || a.colour.signum() != b.colour.signum() {
        0
    } else {
        a.colour.abs().min(b.colour.abs()).min(2) as u8
    };
    Costs {
        repeat: a.opponents.contains(&b.seat),
        forbidden: forbidden
            .iter()
            .any(|&(x, y)| (x, y) == (a.seat, b.seat) || (y, x) == (a.seat, b.seat)),
        score_gap: (a.score - b.score).abs(),
        floats,
        colour,
        seeding: seeding_cost(record.regulations.seeding, a, b, seed),
        same_club: record.regulations.separate_clubs && !pa.club.is_empty() && pa.club == pb.club,
        same_country: record.regulations.separate_countries
            && !pa.country.is_empty()
            && pa.country == pb.country,
    }
}

/// How far `b` is from `a`'s ideal opponent in their group, 0–100; players of
/// different groups are judged by the score gap alone.
fn seeding_cost(seeding: Seeding, a: &Entry, b: &Entry, seed: u64) -> u8 {
    if a.score != b.score {
        return 0;
    }
    let (i, j, n) = (a.place.0 as i64, b.place.0 as i64, a.place.1 as i64);
    let half = n / 2;
    let (top, bottom) = if i < j { (i, j) } else { (j, i) };
    let off = match seeding {
        Seeding::SplitAndSlip => (bottom - top - half).abs(),
        Seeding::SplitAndFold => (top + bottom - (n - 1)).abs(),
        Seeding::SplitAndRandom => {
            if (top < half) == (bottom < half) {
                n
            } else {
                (draw(
                    seed,
                    1,
                    a.seat.min(b.seat) as u64,
                    a.seat.max(b.seat) as u64,
                ) % n as u64) as i64
            }
        }
    };
    (off * 100 / n.max(1)).min(100) as u8
}

fn handicap_of(record: &Record, a: &Entry, b: &Entry) -> u8 {
    let (ra, rb) = (record.field[a.seat].rank, record.field[b.seat].rank);
    let stronger = if ra.steps() >= rb.steps() { ra } else { rb };
    record
        .regulations
        .handicap_stones(a.score - b.score, stronger)
}

/// Colours and handicap for a chosen pair: in a handicap game the lower score (then the
/// lower rank) takes Black; in an even game the one who has had White more often, then
/// the draw; under nigiri, the board decides.
fn place(record: &Record, a: &Entry, b: &Entry, costs: Costs, seed: u64) -> Proposed {
    let handicap = handicap_of(record, a, b);
    let a_black = if handicap > 0 {
        let (ra, rb) = (
            record.field[a.seat].rank.steps(),
            record.field[b.seat].rank.steps(),
        );
        (a.score, ra) < (b.score, rb)
    } else if a.colour != b.colour {
        a.colour < b.colour
    } else {
        let lower_seat_black = draw(
            seed,
            2,
            a.seat.min(b.seat) as u64,
            a.seat.max(b.seat) as u64,
        )
        .is_multiple_of(2);
        lower_seat_black == (a.seat < b.seat)
    };
    let (black, white) = if a_black {
        (a.seat, b.seat)
    } else {
        (b.seat, a.seat)
    };
    Proposed {
        board: Board {
            black,
            white,
            handicap,
            outcome: None,
        },
        nigiri: handicap == 0 && record.regulations.colours == ColourRule::Nigiri,
        costs,
    }
}

/// The event's draw: a number fixed by the seed and what it is drawn for, so anyone
/// holding the seed can check every random choice (SplitMix64 over the inputs).
pub fn draw(seed: u64, purpose: u64, a: u64, b: u64) -> u64 {
    let mut x = seed
        ^ purpose.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ a.wrapping_mul(0xBF58_476D_1CE4_E5B9)
        ^ b.wrapping_mul(0x94D0_49BB_1331_11EB);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}
