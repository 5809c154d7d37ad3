//! A tournament as its director task holds it: the setup, the field and its record, the
//! proposed round, the published rounds' games, appeals, and the secrets of the draw.
//!
//! Pure, like a game's live state: each request is decided on the state as it is into
//! the entries that would record it (or a refusal that changes nothing), and every change,
//! new or replayed from the log, goes through one [`Tournament::apply`]. Who may ask is
//! the director task's question; the randomness (secrets, game ids) and the time come in
//! as arguments.

use super::entry::Entry;
use crate::lobby::nigiri;
use crate::protocol::{
    AdjustmentView, AppealView, BoardView, DrawView, ErrorCode, PlayerView, Refusal, RoundView,
    Stage, StandingView, TournamentSetup, TournamentView, UserInfo,
};
use crate::rating::Rank;
use crate::rules::{Color, GameResult};
use crate::tournament::draw::Draw;
use crate::tournament::field::{
    Adjustment, Board, Entrant, Outcome, Record, Round, Seat, Status, Turn,
};
use crate::tournament::knockout::{advance, bracket};
use crate::tournament::pairing::{Costs, Proposed, all_costs, draw, pair};
use crate::tournament::regulations::{ColourRule, HalfPoints, System, TieBreak};
use crate::tournament::round_robin::berger;
use crate::tournament::standings::standings;

/// Players one tournament takes at most.
pub const MAX_PLAYERS: usize = 2_000;
/// Rounds one tournament has at most.
pub const MAX_ROUNDS: u8 = 30;
/// Directors, and board referees, named in a setup at most.
pub const MAX_STAFF: usize = 50;
/// Appeals one tournament keeps at most.
pub const MAX_APPEALS: usize = 1_000;
/// The longest name, club, country, appeal or ruling, in characters.
pub const MAX_TEXT_CHARS: usize = 500;
/// The most half points one adjustment adds or takes away.
pub const MAX_ADJUSTMENT: HalfPoints = 20;

fn refuse(code: ErrorCode, message: impl Into<String>) -> Refusal {
    Refusal::new(code, message)
}

fn bad(message: impl Into<String>) -> Refusal {
    refuse(ErrorCode::BadRequest, message)
}

/// A setup a tournament can run with, or why not.
pub fn check_setup(setup: &TournamentSetup) -> Result<(), Refusal> {
    let name = setup.name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(bad("a tournament's name has 1 to 100 characters"));
    }
    let rounds = setup.regulations.rounds;
    if rounds == 0 || rounds > MAX_ROUNDS {
        return Err(bad(format!("a tournament has 1 to {MAX_ROUNDS} rounds")));
    }
    if setup.registration_opens >= setup.registration_closes {
        return Err(bad("registration must open before it closes"));
    }
    if let (Some(low), Some(high)) = (setup.min_rank, setup.max_rank)
        && low.steps() > high.steps()
    {
        return Err(bad("`min_rank` is stronger than `max_rank`"));
    }
    if setup.directors.len() > MAX_STAFF || setup.referees.len() > MAX_STAFF {
        return Err(bad(format!(
            "a setup names at most {MAX_STAFF} directors and {MAX_STAFF} referees"
        )));
    }
    if setup.regulations.tie_breaks.len() > 6 {
        return Err(bad("at most 6 tie-breaks"));
    }
    if setup.settings.correspondence {
        return Err(bad(
            "a tournament's games are live: each round starts them at one time, which a correspondence game cannot have",
        ));
    }
    if setup.settings.start_at.is_some() || setup.settings.referee.is_some() {
        return Err(bad(
            "a tournament sets each game's `start_at` and `referee` itself; leave them out",
        ));
    }
    Ok(())
}

/// What the nigiri at board `board` (1-based) of round `round` draws from.
pub fn nigiri_seed(tournament: &str, round: u8, board: usize) -> String {
    format!("{tournament}/{round}/{board}")
}

/// A game's result as a board's outcome (None: voided, to be replayed).
pub fn outcome_of(result: &GameResult) -> Option<Outcome> {
    let won = |c: &Color| match c {
        Color::Black => Outcome::Black,
        Color::White => Outcome::White,
    };
    match result {
        GameResult::Score { winner, .. } => Some(winner.as_ref().map_or(Outcome::Jigo, won)),
        GameResult::Resignation { winner }
        | GameResult::Time { winner }
        | GameResult::Forfeit { winner } => Some(won(winner)),
        GameResult::DoubleForfeit => Some(Outcome::BothLose),
        GameResult::Draw => Some(Outcome::Jigo),
        GameResult::Void => None,
    }
}

/// A player a director brings in from a file: the account, and what the file says.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Newcomer {
    pub user: UserInfo,
    pub rank: Rank,
    pub club: String,
    pub country: String,
}

/// A published round beside its record: the boards as proposed (with their costs),
/// their games and referees.
#[derive(Debug, Clone)]
pub struct Played {
    pub start_at: i64,
    pub boards: Vec<Proposed>,
    pub games: Vec<String>,
    pub referees: Vec<Option<String>>,
}

/// The round proposed and not yet published.
#[derive(Debug, Clone)]
pub struct Proposal {
    pub round: u8,
    pub boards: Vec<Proposed>,
    pub byes: Vec<Seat>,
}

#[derive(Debug, Clone)]
pub struct Tournament {
    pub id: String,
    pub setup: TournamentSetup,
    pub creator: String,
    /// One draw per round, its secret revealed when the round is published.
    secrets: Vec<Draw>,
    pub record: Record,
    /// The players' accounts, by seat.
    pub users: Vec<UserInfo>,
    pub played: Vec<Played>,
    pub proposal: Option<Proposal>,
    pub byes_asked: Vec<Seat>,
    pub appeals: Vec<AppealView>,
    pub finished: bool,
}

impl Tournament {
    /// The tournament its first entry describes; None if it is not a `Created`.
    pub fn created(id: &str, first: &Entry) -> Option<Tournament> {
        let Entry::Created { by, setup, secrets } = first else {
            return None;
        };
        Some(Tournament {
            id: id.to_string(),
            creator: by.id.clone(),
            secrets: decode_secrets(secrets),
            record: Record {
                regulations: setup.regulations.clone(),
                field: Vec::new(),
                rounds: Vec::new(),
                adjustments: Vec::new(),
            },
            setup: setup.clone(),
            users: Vec::new(),
            played: Vec::new(),
            proposal: None,
            byes_asked: Vec::new(),
            appeals: Vec::new(),
            finished: false,
        })
    }

    pub fn is_director(&self, user: &str) -> bool {
        user == self.creator || self.setup.directors.iter().any(|d| d == user)
    }

    pub fn is_chief_referee(&self, user: &str) -> bool {
        self.setup.chief_referee.as_deref() == Some(user)
    }

    pub fn seat_of(&self, user: &str) -> Option<Seat> {
        self.users.iter().position(|u| u.id == user)
    }

    /// The seat of a named player, or `not_found`.
    pub fn player(&self, user: &str) -> Result<Seat, Refusal> {
        self.seat_of(user).ok_or_else(|| {
            refuse(
                ErrorCode::NotFound,
                format!("`{user}` is not registered in this tournament"),
            )
        })
    }

    pub fn stage(&self) -> Stage {
        if self.finished {
            Stage::Finished
        } else if self.proposal.is_some() {
            Stage::Paired
        } else if self.record.rounds.is_empty() {
            Stage::Registration
        } else if self.last_round_done() {
            Stage::Ready
        } else {
            Stage::Playing
        }
    }

    /// Every game of the last published round has a result, but those of players no
    /// longer in the event: no round waits on them.
    fn last_round_done(&self) -> bool {
        self.record.rounds.last().is_none_or(|round| {
            round.boards.iter().all(|b| {
                b.outcome.is_some()
                    || self.record.field[b.black].status != Status::Playing
                    || self.record.field[b.white].status != Status::Playing
            })
        })
    }

    /// The round a registration now joins in (1-based).
    fn next_open_round(&self) -> u8 {
        let paired = self.record.rounds.len() + usize::from(self.proposal.is_some());
        u8::try_from(paired + 1).unwrap_or(u8::MAX)
    }

    pub fn configure(
        &self,
        setup: TournamentSetup,
        secrets: Vec<String>,
    ) -> Result<Entry, Refusal> {
        if self.stage() != Stage::Registration || self.proposal.is_some() {
            return Err(refuse(
                ErrorCode::WrongPhase,
                "the setup is fixed once round one is paired",
            ));
        }
        check_setup(&setup)?;
        Ok(Entry::Configured { setup, secrets })
    }

    pub fn register(
        &self,
        user: &UserInfo,
        rank: Option<Rank>,
        club: String,
        country: String,
        now: i64,
    ) -> Result<Entry, Refusal> {
        if self.seat_of(&user.id).is_some() {
            return Err(refuse(
                ErrorCode::AlreadyRegistered,
                "you are already registered in this tournament",
            ));
        }
        let s = &self.setup;
        if self.finished || now < s.registration_opens || now >= s.registration_closes {
            return Err(refuse(
                ErrorCode::RegistrationClosed,
                "registration for this tournament is not open now",
            ));
        }
        if self.next_open_round() > self.record.regulations.rounds {
            return Err(refuse(
                ErrorCode::RegistrationClosed,
                "every round of this tournament is paired",
            ));
        }
        if self.users.len() >= MAX_PLAYERS {
            return Err(refuse(
                ErrorCode::LimitReached,
                format!("this tournament has {MAX_PLAYERS} players, the most it takes"),
            ));
        }
        let Some(rank) = rank else {
            return Err(bad(
                "declare a `rank`: you have no rated rank on this server yet",
            ));
        };
        let below = s.min_rank.is_some_and(|m| rank.steps() < m.steps());
        let above = s.max_rank.is_some_and(|m| rank.steps() > m.steps());
        if below || above {
            return Err(refuse(
                ErrorCode::OutsideLimits,
                format!("{rank} is outside this tournament's rank limits"),
            ));
        }
        if club.chars().count() > 100 || country.chars().count() > 100 {
            return Err(bad("a club or country has at most 100 characters"));
        }
        Ok(Entry::Registered {
            user: user.clone(),
            rank,
            club,
            country,
            first_round: self.next_open_round(),
        })
    }

    /// The registrations of `players` brought in by a director from a file, before round
    /// one is paired: the window and the rank limits are the players' own registrations'
    /// rules, not the director's. Players already registered are left as they are.
    pub fn import(&self, players: Vec<Newcomer>) -> Result<Vec<Entry>, Refusal> {
        if self.stage() != Stage::Registration {
            return Err(refuse(
                ErrorCode::WrongPhase,
                "players are imported before round one is paired",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        let new: Vec<Newcomer> = players
            .into_iter()
            .filter(|p| self.seat_of(&p.user.id).is_none() && seen.insert(p.user.id.clone()))
            .collect();
        if self.users.len() + new.len() > MAX_PLAYERS {
            return Err(refuse(
                ErrorCode::LimitReached,
                format!("a tournament takes at most {MAX_PLAYERS} players"),
            ));
        }
        if new
            .iter()
            .any(|p| p.club.chars().count() > 100 || p.country.chars().count() > 100)
        {
            return Err(bad("a club or country has at most 100 characters"));
        }
        Ok(new
            .into_iter()
            .map(|p| Entry::Registered {
                user: p.user,
                rank: p.rank,
                club: p.club,
                country: p.country,
                first_round: 1,
            })
            .collect())
    }

    /// A player's status changes (withdrawn, disqualified).
    pub fn set_status(&self, seat: Seat, status: Status, reason: String) -> Result<Entry, Refusal> {
        if self.finished {
            return Err(refuse(ErrorCode::WrongPhase, "the tournament is over"));
        }
        if self.record.field[seat].status != Status::Playing {
            return Err(refuse(
                ErrorCode::WrongPhase,
                "that player has already left the tournament",
            ));
        }
        if reason.chars().count() > MAX_TEXT_CHARS {
            return Err(bad(format!(
                "a reason has at most {MAX_TEXT_CHARS} characters"
            )));
        }
        Ok(Entry::StatusChanged {
            seat,
            status,
            reason,
        })
    }

    /// A change to `seat`'s score by hand: `points` half points (at most
    /// [`MAX_ADJUSTMENT`] either way, not 0), with a reason, until the tournament is over.
    pub fn adjust(&self, seat: Seat, points: HalfPoints, reason: String) -> Result<Entry, Refusal> {
        if self.finished {
            return Err(refuse(ErrorCode::WrongPhase, "the tournament is over"));
        }
        if points == 0 || points.abs() > MAX_ADJUSTMENT {
            return Err(bad(format!(
                "an adjustment is 1 to {MAX_ADJUSTMENT} half points, up or down"
            )));
        }
        if reason.trim().is_empty() || reason.chars().count() > MAX_TEXT_CHARS {
            return Err(bad(format!(
                "an adjustment's reason has 1 to {MAX_TEXT_CHARS} characters"
            )));
        }
        Ok(Entry::Adjusted {
            seat,
            points,
            from_round: self.record.rounds.len(),
            reason,
        })
    }

    pub fn ask_bye(&self, seat: Seat) -> Result<Entry, Refusal> {
        if self.proposal.is_some() || self.finished {
            return Err(refuse(
                ErrorCode::WrongPhase,
                "a bye is given before the round is paired",
            ));
        }
        if self.byes_asked.contains(&seat) {
            return Err(bad("that player already has the next bye"));
        }
        Ok(Entry::ByeAsked { seat })
    }

    /// Pairs the next round by the regulations' system.
    pub fn pair(&self) -> Result<Entry, Refusal> {
        match self.stage() {
            Stage::Finished => {
                return Err(refuse(ErrorCode::WrongPhase, "the tournament is over"));
            }
            Stage::Playing => {
                return Err(refuse(
                    ErrorCode::RoundNotFinished,
                    "the last round still has games without a result",
                ));
            }
            _ => {}
        }
        let index = self.record.rounds.len();
        let round = u8::try_from(index + 1).unwrap_or(u8::MAX);
        if round > self.record.regulations.rounds {
            return Err(refuse(ErrorCode::WrongPhase, "every round has been played"));
        }
        let seats: Vec<Seat> = (0..self.record.field.len())
            .filter(|&s| {
                let e = &self.record.field[s];
                e.status == Status::Playing
                    && e.first_round <= round
                    && !self.byes_asked.contains(&s)
            })
            .collect();
        let seed = self.secrets[index].seed(&self.id);
        let nigiri = self.record.regulations.colours == ColourRule::Nigiri;
        let even = |black, white| Proposed {
            board: Board {
                black,
                white,
                handicap: 0,
                outcome: None,
            },
            nigiri,
            costs: Costs::default(),
        };
        let (boards, mut byes) = match self.record.regulations.system {
            System::McMahon { .. } | System::Swiss => {
                let p = pair(&self.record, &seats, &[], seed).map_err(|e| bad(e.to_string()))?;
                (p.boards, p.bye.into_iter().collect::<Vec<_>>())
            }
            System::RoundRobin => {
                let everyone: Vec<Seat> = (0..self.record.field.len()).collect();
                let (pairs, bye) = berger(&everyone, index);
                let mut byes: Vec<Seat> = bye.into_iter().filter(|s| seats.contains(s)).collect();
                let mut boards = Vec::new();
                for (b, w) in pairs {
                    match (seats.contains(&b), seats.contains(&w)) {
                        (true, true) => boards.push(even(b, w)),
                        (true, false) => byes.push(b),
                        (false, true) => byes.push(w),
                        (false, false) => {}
                    }
                }
                (boards, byes)
            }
            System::Knockout => {
                let mut slots = self.seeded_bracket();
                for r in &self.record.rounds {
                    slots = advance(&slots, |a, b| winner_of(r, a, b)).ok_or_else(|| {
                        refuse(
                            ErrorCode::RoundNotFinished,
                            "a game of the bracket has no winner yet",
                        )
                    })?;
                }
                if slots.len() < 2 {
                    return Err(refuse(ErrorCode::WrongPhase, "the final has been played"));
                }
                let mut boards = Vec::new();
                let mut byes = Vec::new();
                for pair in slots.chunks(2) {
                    match (pair[0], pair[1]) {
                        (Some(a), Some(b)) => {
                            let a_black = draw(seed, 2, a as u64, b as u64).is_multiple_of(2);
                            boards.push(if a_black { even(a, b) } else { even(b, a) });
                        }
                        (Some(a), None) | (None, Some(a)) => byes.push(a),
                        (None, None) => {}
                    }
                }
                (boards, byes)
            }
        };
        byes.extend(self.byes_asked.iter().copied());
        Ok(Entry::Paired {
            round,
            boards,
            byes,
        })
    }

    /// The knockout's bracket: everyone who entered for round one, strongest first.
    fn seeded_bracket(&self) -> Vec<Option<Seat>> {
        let mut seeded: Vec<Seat> = (0..self.record.field.len())
            .filter(|&s| self.record.field[s].first_round == 1)
            .collect();
        seeded.sort_by_key(|&s| (std::cmp::Reverse(self.record.field[s].rank.steps()), s));
        bracket(&seeded)
    }

    /// Exchanges players `a` and `b` in the proposed round (or one with a bye).
    pub fn swap(&self, a: Seat, b: Seat) -> Result<Entry, Refusal> {
        let Some(p) = &self.proposal else {
            return Err(refuse(ErrorCode::WrongPhase, "no round is proposed"));
        };
        let (mut boards, mut byes) = (p.boards.clone(), p.byes.clone());
        let (Some(at_a), Some(at_b)) = (place_of(p, a), place_of(p, b)) else {
            return Err(bad("both players must be in the proposed round"));
        };
        if let (Place::Board(i, _), Place::Board(j, _)) = (at_a, at_b)
            && i == j
        {
            return Err(bad("these two already play each other"));
        }
        for (at, seat) in [(at_a, b), (at_b, a)] {
            match at {
                Place::Board(i, true) => boards[i].board.black = seat,
                Place::Board(i, false) => boards[i].board.white = seat,
                Place::Bye(i) => byes[i] = seat,
            }
        }
        // The players on the boards after the swap: one taken from a bye is costed too.
        let seats: Vec<Seat> = boards
            .iter()
            .flat_map(|x| [x.board.black, x.board.white])
            .collect();
        let costs = match self.record.regulations.system {
            System::McMahon { .. } | System::Swiss => {
                let seed = self.secrets[self.record.rounds.len()].seed(&self.id);
                all_costs(&self.record, &seats, &[], seed).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        for at in [at_a, at_b] {
            let Place::Board(i, _) = at else { continue };
            let board = &mut boards[i];
            let (x, y) = (board.board.black, board.board.white);
            if self.record.have_met(x, y) {
                return Err(refuse(
                    ErrorCode::RepeatGame,
                    format!(
                        "{} and {} have already played each other",
                        self.users[x].id, self.users[y].id
                    ),
                ));
            }
            self.rehandicap(board);
            board.costs = costs
                .iter()
                .find(|&&(p, q, _)| (p, q) == (x, y) || (q, p) == (x, y))
                .map_or_else(Costs::default, |&(_, _, c)| c);
        }
        Ok(Entry::Paired {
            round: p.round,
            boards,
            byes,
        })
    }

    /// A board's handicap after a swap, as the pairing gives it: from the scores, the
    /// lower score (then rank) taking Black.
    fn rehandicap(&self, p: &mut Proposed) {
        let (x, y) = (p.board.black, p.board.white);
        let (rx, ry) = (self.record.field[x].rank, self.record.field[y].rank);
        let stronger = if rx.steps() >= ry.steps() { rx } else { ry };
        let (sx, sy) = (self.record.score(x), self.record.score(y));
        let stones = self.record.regulations.handicap_stones(sx - sy, stronger);
        p.board.handicap = stones;
        if stones > 0 && (sx, rx.steps()) > (sy, ry.steps()) {
            p.board.black = y;
            p.board.white = x;
        }
        p.nigiri = stones == 0 && self.record.regulations.colours == ColourRule::Nigiri;
    }

    /// Publishes the proposed round: colours drawn at the nigiri boards from the round's
    /// secret, a game id (from `ids`) and a referee for each board.
    pub fn publish(&self, now: i64, mut ids: impl FnMut() -> String) -> Result<Entry, Refusal> {
        let Some(p) = &self.proposal else {
            return Err(if self.record.rounds.is_empty() {
                refuse(ErrorCode::WrongPhase, "no round is paired yet")
            } else {
                refuse(
                    ErrorCode::AlreadyPublished,
                    format!(
                        "round {} is already published; pair the next one first",
                        self.record.rounds.len()
                    ),
                )
            });
        };
        let secret = self.secrets[usize::from(p.round) - 1].secret();
        let boards: Vec<Proposed> = p
            .boards
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let mut b = *b;
                let seed = nigiri_seed(&self.id, p.round, i + 1);
                if b.nigiri && nigiri::draw(secret, &seed) == Color::White {
                    std::mem::swap(&mut b.board.black, &mut b.board.white);
                }
                b
            })
            .collect();
        let staff = &self.setup.referees;
        let referees = (0..boards.len())
            .map(|i| match staff.is_empty() {
                true => self.setup.chief_referee.clone(),
                false => Some(staff[i % staff.len()].clone()),
            })
            .collect();
        Ok(Entry::Published {
            round: p.round,
            start_at: now.saturating_add(i64::try_from(self.setup.start_delay_ms).unwrap_or(0)),
            games: boards.iter().map(|_| ids()).collect(),
            boards,
            referees,
        })
    }

    /// Where game `game_id` is: its round (0-based) and board.
    pub fn board_of_game(&self, game_id: &str) -> Option<(usize, usize)> {
        self.played
            .iter()
            .enumerate()
            .find_map(|(r, p)| p.games.iter().position(|g| g == game_id).map(|b| (r, b)))
    }

    /// The entry recording game `game_id`'s result, unless it is not ours or already
    /// recorded so.
    pub fn result(&self, game_id: &str, outcome: Option<Outcome>) -> Option<Entry> {
        let (r, b) = self.board_of_game(game_id)?;
        if self.record.rounds[r].boards[b].outcome == outcome {
            return None;
        }
        Some(Entry::Result {
            round: u8::try_from(r + 1).ok()?,
            board: b,
            outcome,
        })
    }

    /// `Finished` when the last round is over and no other can be paired.
    pub fn finish(&self) -> Option<Entry> {
        let all_played = self.record.rounds.len() >= usize::from(self.record.regulations.rounds);
        (!self.finished && self.proposal.is_none() && all_played && self.last_round_done())
            .then_some(Entry::Finished {})
    }

    pub fn appeal(&self, from: &str, message: String, at: i64) -> Result<Entry, Refusal> {
        if self.seat_of(from).is_none() {
            return Err(refuse(
                ErrorCode::Forbidden,
                "only the tournament's players appeal to its chief referee",
            ));
        }
        if self.setup.chief_referee.is_none() {
            return Err(refuse(
                ErrorCode::WrongPhase,
                "this tournament has no chief referee to appeal to",
            ));
        }
        if message.trim().is_empty() || message.chars().count() > MAX_TEXT_CHARS {
            return Err(bad(format!(
                "an appeal has 1 to {MAX_TEXT_CHARS} characters"
            )));
        }
        if self.appeals.len() >= MAX_APPEALS {
            return Err(refuse(
                ErrorCode::LimitReached,
                "this tournament has had all the appeals it keeps",
            ));
        }
        Ok(Entry::Appealed {
            from: from.to_string(),
            message,
            at,
        })
    }

    pub fn rule_appeal(&self, by: &str, appeal: u32, ruling: String) -> Result<Entry, Refusal> {
        let found = self
            .appeals
            .iter()
            .find(|a| a.appeal == appeal)
            .ok_or_else(|| refuse(ErrorCode::NotFound, format!("there is no appeal {appeal}")))?;
        if found.ruling.is_some() {
            return Err(refuse(
                ErrorCode::WrongPhase,
                "that appeal has been ruled on",
            ));
        }
        if ruling.trim().is_empty() || ruling.chars().count() > MAX_TEXT_CHARS {
            return Err(bad(format!(
                "a ruling has 1 to {MAX_TEXT_CHARS} characters"
            )));
        }
        Ok(Entry::AppealRuled {
            appeal,
            by: by.to_string(),
            ruling,
        })
    }

    /// Records one entry, new or replayed.
    pub fn apply(&mut self, entry: &Entry) {
        match entry {
            Entry::Created { .. } => {}
            Entry::Configured { setup, secrets } => {
                self.record.regulations = setup.regulations.clone();
                self.setup = setup.clone();
                self.secrets = decode_secrets(secrets);
            }
            Entry::Registered {
                user,
                rank,
                club,
                country,
                first_round,
            } => {
                self.users.push(user.clone());
                self.record.field.push(Entrant {
                    id: user.id.clone(),
                    rank: *rank,
                    club: club.clone(),
                    country: country.clone(),
                    first_round: *first_round,
                    status: Status::Playing,
                });
            }
            Entry::StatusChanged { seat, status, .. } => {
                if let Some(e) = self.record.field.get_mut(*seat) {
                    e.status = *status;
                }
            }
            Entry::ByeAsked { seat } => self.byes_asked.push(*seat),
            Entry::Paired {
                round,
                boards,
                byes,
            } => {
                self.proposal = Some(Proposal {
                    round: *round,
                    boards: boards.clone(),
                    byes: byes.clone(),
                });
            }
            Entry::Published {
                start_at,
                boards,
                games,
                referees,
                ..
            } => {
                let byes = self.proposal.take().map(|p| p.byes).unwrap_or_default();
                self.byes_asked.clear();
                self.record.rounds.push(Round {
                    boards: boards.iter().map(|b| b.board).collect(),
                    byes,
                });
                self.played.push(Played {
                    start_at: *start_at,
                    boards: boards.clone(),
                    games: games.clone(),
                    referees: referees.clone(),
                });
            }
            Entry::Result {
                round,
                board,
                outcome,
            } => {
                let r = usize::from(*round).wrapping_sub(1);
                if let Some(b) = self
                    .record
                    .rounds
                    .get_mut(r)
                    .and_then(|r| r.boards.get_mut(*board))
                {
                    b.outcome = *outcome;
                }
            }
            Entry::Adjusted {
                seat,
                points,
                from_round,
                reason,
            } => self.record.adjustments.push(Adjustment {
                seat: *seat,
                points: *points,
                from_round: *from_round,
                reason: reason.clone(),
            }),
            Entry::Appealed { from, message, at } => {
                let appeal = u32::try_from(self.appeals.len() + 1).unwrap_or(u32::MAX);
                self.appeals.push(AppealView {
                    appeal,
                    from: from.clone(),
                    message: message.clone(),
                    at: *at,
                    ruling: None,
                });
            }
            Entry::AppealRuled { appeal, ruling, .. } => {
                if let Some(a) = self.appeals.iter_mut().find(|a| a.appeal == *appeal) {
                    a.ruling = Some(ruling.clone());
                }
            }
            Entry::Finished {} => self.finished = true,
        }
    }

    pub fn player_view(&self, seat: Seat) -> PlayerView {
        let e = &self.record.field[seat];
        PlayerView {
            user: self.users[seat].clone(),
            rank: e.rank,
            club: e.club.clone(),
            country: e.country.clone(),
            first_round: e.first_round,
            status: e.status,
        }
    }

    fn board_views(
        &self,
        boards: &[Proposed],
        games: Option<&Played>,
        costs: bool,
        outcomes: Option<&Round>,
    ) -> Vec<BoardView> {
        boards
            .iter()
            .enumerate()
            .map(|(i, p)| BoardView {
                board: u16::try_from(i + 1).unwrap_or(u16::MAX),
                black: self.users[p.board.black].id.clone(),
                white: self.users[p.board.white].id.clone(),
                handicap: p.board.handicap,
                by_nigiri: p.nigiri,
                game_id: games.and_then(|g| g.games.get(i).cloned()),
                outcome: outcomes
                    .and_then(|r| r.boards.get(i))
                    .and_then(|b| b.outcome),
                costs: costs.then_some(p.costs),
            })
            .collect()
    }

    /// Round `index` (0-based): published, or the proposal; with the costs for directors.
    pub fn round_view(&self, index: usize, costs: bool) -> Option<RoundView> {
        let round = u8::try_from(index + 1).ok()?;
        if let Some(played) = self.played.get(index) {
            let record = &self.record.rounds[index];
            return Some(RoundView {
                round,
                published: true,
                start_at: Some(played.start_at),
                boards: self.board_views(&played.boards, Some(played), costs, Some(record)),
                byes: record
                    .byes
                    .iter()
                    .map(|&s| self.users[s].id.clone())
                    .collect(),
            });
        }
        let p = self.proposal.as_ref().filter(|p| p.round == round)?;
        Some(RoundView {
            round,
            published: false,
            start_at: None,
            boards: self.board_views(&p.boards, None, costs, None),
            byes: p.byes.iter().map(|&s| self.users[s].id.clone()).collect(),
        })
    }

    /// The standings with the crosstable.
    pub fn standings_view(&self) -> Vec<StandingView> {
        let table = standings(&self.record);
        let mut place = vec![0; self.record.field.len()];
        for st in &table {
            place[st.seat] = st.place;
        }
        let direct = (self.record.regulations.tie_breaks).contains(&TieBreak::Direct);
        table
            .iter()
            .map(|st| StandingView {
                place: st.place,
                player: self.users[st.seat].id.clone(),
                score: st.score,
                wins: st.wins,
                sos: st.sos,
                sosos: st.sosos,
                sodos: st.sodos,
                cuss: st.cuss,
                direct: direct.then_some(st.direct),
                rounds: (0..self.record.rounds.len())
                    .map(|r| self.cell(st.seat, r, &place))
                    .collect(),
                adjustments: (self.record.adjustments.iter())
                    .filter(|a| a.seat == st.seat)
                    .map(|a| AdjustmentView {
                        points: a.points,
                        after_round: a.from_round,
                        reason: a.reason.clone(),
                    })
                    .collect(),
            })
            .collect()
    }

    /// One crosstable cell, as the results table writes it.
    fn cell(&self, seat: Seat, round: usize, place: &[usize]) -> String {
        match self.record.turn(seat, round) {
            Turn::Played {
                opponent,
                black,
                handicap,
                points,
            } => {
                let sign = match points {
                    Some(2) => "+",
                    Some(1) => "=",
                    Some(_) => "-",
                    None => "?",
                };
                let colour = if black { 'b' } else { 'w' };
                format!("{}{sign}/{colour}{handicap}", place[opponent])
            }
            _ => match self.record.gained(seat, round) {
                2 => "0+".into(),
                1 => "0=".into(),
                _ => "0-".into(),
            },
        }
    }

    pub fn draws(&self) -> Vec<DrawView> {
        self.secrets
            .iter()
            .enumerate()
            .map(|(i, draw)| DrawView {
                round: u8::try_from(i + 1).unwrap_or(u8::MAX),
                commitment: draw.commitment(),
                secret: (i < self.played.len()).then(|| draw.secret_hex()),
            })
            .collect()
    }

    /// The whole tournament; the proposal's costs for directors only.
    pub fn view(&self, costs: bool) -> TournamentView {
        let rounds = self.played.len() + usize::from(self.proposal.is_some());
        let mut directors = vec![self.creator.clone()];
        directors.extend(self.setup.directors.iter().cloned());
        TournamentView {
            tournament_id: self.id.clone(),
            setup: self.setup.clone(),
            directors,
            stage: self.stage(),
            players: (0..self.users.len()).map(|s| self.player_view(s)).collect(),
            rounds: (0..rounds)
                .filter_map(|r| self.round_view(r, costs))
                .collect(),
            standings: self.standings_view(),
            draws: self.draws(),
            appeals: self.appeals.clone(),
        }
    }
}

/// Where a player sits in a proposed round.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// Board index, and whether as Black.
    Board(usize, bool),
    Bye(usize),
}

fn place_of(p: &Proposal, seat: Seat) -> Option<Place> {
    p.boards
        .iter()
        .enumerate()
        .find_map(|(i, b)| {
            (b.board.black == seat)
                .then_some(Place::Board(i, true))
                .or((b.board.white == seat).then_some(Place::Board(i, false)))
        })
        .or_else(|| p.byes.iter().position(|&s| s == seat).map(Place::Bye))
}

/// The winner between `a` and `b` in `round`, if they played and one won.
fn winner_of(round: &Round, a: Seat, b: Seat) -> Option<Seat> {
    let board = round.board_of(a).filter(|x| x.has(b))?;
    match board.outcome? {
        Outcome::Black => Some(board.black),
        Outcome::White => Some(board.white),
        Outcome::Jigo | Outcome::BothLose => None,
    }
}

/// The log's secrets (written by [`fresh_secrets`], so each is 32 bytes in hex).
fn decode_secrets(secrets: &[String]) -> Vec<Draw> {
    secrets
        .iter()
        .map(|s| {
            let bytes = hex::decode(s)
                .ok()
                .and_then(|b| <[u8; 32]>::try_from(b).ok());
            Draw::new(bytes.unwrap_or_default())
        })
        .collect()
}

/// Fresh secrets, one per round, hex.
pub fn fresh_secrets(rounds: u8) -> Vec<String> {
    (0..rounds)
        .map(|_| hex::encode(rand::random::<[u8; 32]>()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{GameSettings, Role};
    use crate::tournament::regulations::{Regulations, Seeding};

    const NOW: i64 = 1_000;

    fn user(id: &str) -> UserInfo {
        UserInfo {
            id: id.to_string(),
            name: id.to_string(),
            role: Role::Player,
        }
    }

    fn setup(rounds: u8, colours: ColourRule) -> TournamentSetup {
        TournamentSetup {
            name: "Cup".into(),
            regulations: Regulations {
                system: System::McMahon {
                    bar: "3d".parse().unwrap(),
                    floor: "10k".parse().unwrap(),
                },
                rounds,
                handicap: None,
                colours,
                seeding: Seeding::SplitAndFold,
                tie_breaks: vec![],
                bye: 2,
                missed_round: 1,
                separate_clubs: false,
                separate_countries: false,
            },
            settings: serde_json::from_str::<GameSettings>("{}").unwrap(),
            registration_opens: 0,
            registration_closes: 2 * NOW,
            min_rank: Some("15k".parse().unwrap()),
            max_rank: None,
            directors: vec![],
            chief_referee: Some("chief".into()),
            referees: vec![],
            start_delay_ms: 0,
            auto_pair: false,
        }
    }

    /// A tournament of `players` registered players (p0 strongest), as if replayed.
    fn tournament(players: usize, rounds: u8, colours: ColourRule) -> Tournament {
        let first = Entry::Created {
            by: user("td"),
            setup: setup(rounds, colours),
            secrets: fresh_secrets(rounds),
        };
        let mut t = Tournament::created("t", &first).unwrap();
        for i in 0..players {
            let rank: Rank = format!("{}k", 1 + i).parse().unwrap();
            let e = t
                .register(
                    &user(&format!("p{i}")),
                    Some(rank),
                    "".into(),
                    "".into(),
                    NOW,
                )
                .unwrap();
            t.apply(&e);
        }
        t
    }

    fn step(t: &mut Tournament, e: Result<Entry, Refusal>) {
        t.apply(&e.expect("accepted"));
    }

    fn code(e: Result<Entry, Refusal>) -> ErrorCode {
        e.expect_err("refused").code
    }

    /// Pairs and publishes the next round; game ids `g<round>.<board>`.
    fn next_round(t: &mut Tournament) {
        step(t, t.pair());
        let round = t.record.rounds.len() + 1;
        let mut n = 0;
        step(
            t,
            t.publish(NOW, || {
                n += 1;
                format!("g{round}.{n}")
            }),
        );
    }

    /// Black wins every game of the last round.
    fn finish_round(t: &mut Tournament) {
        for g in t.played.last().unwrap().games.clone() {
            let e = t.result(&g, Some(Outcome::Black)).unwrap();
            t.apply(&e);
        }
    }

    #[test]
    fn registration_is_refused_twice_outside_its_window_and_its_limits() {
        let t = tournament(2, 3, ColourRule::Draw);
        let rank = Some("5k".parse().unwrap());
        let reg = |who: &str, rank, now| t.register(&user(who), rank, "".into(), "".into(), now);
        assert_eq!(code(reg("p0", rank, NOW)), ErrorCode::AlreadyRegistered);
        assert_eq!(code(reg("x", rank, 2 * NOW)), ErrorCode::RegistrationClosed);
        assert_eq!(code(reg("x", rank, -1)), ErrorCode::RegistrationClosed);
        assert_eq!(
            code(reg("x", Some("20k".parse().unwrap()), NOW)),
            ErrorCode::OutsideLimits
        );
        assert_eq!(code(reg("x", None, NOW)), ErrorCode::BadRequest);
        assert!(reg("x", rank, NOW).is_ok());
    }

    #[test]
    fn rounds_are_paired_published_once_and_wait_for_their_results() {
        let mut t = tournament(4, 2, ColourRule::Draw);
        assert_eq!(code(t.publish(NOW, new_id_for_test)), ErrorCode::WrongPhase);
        next_round(&mut t);
        assert_eq!(t.stage(), Stage::Playing);
        assert_eq!(
            code(t.publish(NOW, new_id_for_test)),
            ErrorCode::AlreadyPublished
        );
        assert_eq!(code(t.pair()), ErrorCode::RoundNotFinished);
        // A result for a game not ours, and one already recorded, record nothing.
        assert_eq!(t.result("elsewhere", Some(Outcome::Black)), None);
        finish_round(&mut t);
        assert_eq!(t.result("g1.1", Some(Outcome::Black)), None);
        assert_eq!(t.stage(), Stage::Ready);
        next_round(&mut t);
        finish_round(&mut t);
        assert!(t.finish().is_some());
        assert_eq!(code(t.pair()), ErrorCode::WrongPhase);
    }

    #[test]
    fn no_round_waits_on_a_withdrawn_players_game_and_they_are_not_paired_again() {
        let mut t = tournament(4, 3, ColourRule::Draw);
        next_round(&mut t);
        let g = t.played[0].games[0].clone();
        let gone = t.record.rounds[0].boards[0].black;
        let e = t.set_status(gone, Status::Withdrawn, String::new());
        step(&mut t, e);
        for other in t.played[0].games.clone().into_iter().filter(|x| *x != g) {
            let e = t.result(&other, Some(Outcome::White)).unwrap();
            t.apply(&e);
        }
        assert_eq!(t.stage(), Stage::Ready);
        let e = t.pair();
        step(&mut t, e);
        let p = t.proposal.as_ref().unwrap();
        assert!(p.boards.iter().all(|b| !b.board.has(gone)));
        assert!(!p.byes.contains(&gone));
        assert_eq!(p.byes.len(), 1, "three players left: one bye");
        // Its result still counts when it comes.
        assert!(t.result(&g, Some(Outcome::White)).is_some());
    }

    #[test]
    fn a_late_registration_misses_the_rounds_before_it() {
        let mut t = tournament(4, 3, ColourRule::Draw);
        next_round(&mut t);
        let e = t
            .register(
                &user("late"),
                Some("2k".parse().unwrap()),
                "".into(),
                "".into(),
                NOW,
            )
            .unwrap();
        assert!(matches!(e, Entry::Registered { first_round: 2, .. }));
        t.apply(&e);
        let late = t.seat_of("late").unwrap();
        assert_eq!(t.record.score(late), t.record.start(late) + 1);
    }

    #[test]
    fn a_swap_that_repeats_a_game_is_refused_and_one_that_does_not_is_proposed() {
        let mut t = tournament(4, 3, ColourRule::Draw);
        next_round(&mut t);
        let first = t.record.rounds[0].boards[0];
        finish_round(&mut t);
        let e = t.pair();
        step(&mut t, e);
        let p = t.proposal.clone().unwrap();
        let partner = p.boards.iter().find(|b| b.board.has(first.black)).unwrap();
        let partner = partner.board.opponent_of(first.black);
        assert_eq!(code(t.swap(partner, first.white)), ErrorCode::RepeatGame);
        assert_eq!(code(t.swap(first.black, partner)), ErrorCode::BadRequest);
        assert_eq!(t.proposal.as_ref().unwrap().boards, p.boards);
    }

    #[test]
    fn a_nigiri_board_is_seated_by_the_rounds_revealed_secret() {
        let mut t = tournament(4, 1, ColourRule::Nigiri);
        let e = t.pair();
        step(&mut t, e);
        let proposed = t.proposal.clone().unwrap();
        let commitment = t.draws()[0].commitment.clone();
        assert_eq!(t.draws()[0].secret, None);
        next_round_publish_only(&mut t);
        let secret = hex::decode(t.draws()[0].secret.clone().unwrap()).unwrap();
        assert!(Draw::reveal(&commitment, &hex::encode(&secret)).is_ok());
        for (i, (before, after)) in proposed.boards.iter().zip(&t.played[0].boards).enumerate() {
            let first_black = nigiri::draw(&secret, &nigiri_seed("t", 1, i + 1)) == Color::Black;
            assert_eq!(after.board.black == before.board.black, first_black);
        }
    }

    #[test]
    fn a_player_swapped_in_from_the_bye_gets_the_costs_of_their_board() {
        // Five players: one bye. Ranks 1k to 5k, so every pair has a score gap.
        let mut t = tournament(5, 2, ColourRule::Draw);
        let e = t.pair();
        step(&mut t, e);
        let p = t.proposal.clone().unwrap();
        let bye = p.byes[0];
        let on_board = p.boards[0].board.black;
        let e = t.swap(bye, on_board);
        step(&mut t, e);
        let board = t.proposal.as_ref().unwrap().boards[0];
        assert!(board.board.has(bye));
        let other = board.board.opponent_of(bye);
        let gap = t.record.score(bye) - t.record.score(other);
        assert_eq!(board.costs.score_gap, gap.abs(), "{:?}", board.costs);
        assert_eq!(t.proposal.as_ref().unwrap().byes, vec![on_board]);
    }

    fn next_round_publish_only(t: &mut Tournament) {
        step(t, t.publish(NOW, new_id_for_test));
    }

    fn new_id_for_test() -> String {
        "g".into()
    }

    #[test]
    fn replaying_the_log_gives_the_tournament_that_was_run() {
        let mut t = tournament(5, 2, ColourRule::Draw);
        let mut log = vec![Entry::Created {
            by: user("td"),
            setup: t.setup.clone(),
            secrets: t.secrets.iter().map(Draw::secret_hex).collect(),
        }];
        for (seat, u) in t.users.iter().enumerate() {
            let e = &t.record.field[seat];
            log.push(Entry::Registered {
                user: u.clone(),
                rank: e.rank,
                club: e.club.clone(),
                country: e.country.clone(),
                first_round: e.first_round,
            });
        }
        let e = t.pair().unwrap();
        t.apply(&e);
        log.push(e);
        let e = t.publish(NOW, new_id_for_test).unwrap();
        t.apply(&e);
        log.push(e);
        let stored: Vec<String> = log
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect();
        let mut again =
            Tournament::created("t", &serde_json::from_str(&stored[0]).unwrap()).unwrap();
        for s in &stored[1..] {
            again.apply(&serde_json::from_str(s).unwrap());
        }
        assert_eq!(again.view(true), t.view(true));
    }
}
