//! One live game as a state machine: the rules position, the phase, the clock, the
//! dead-stone marks and acceptances. No I/O and no tasks: the room actor feeds it actions
//! with the current time and gets back the events to number, store and broadcast.
//!
//! Every change goes through [`LiveGame::apply`], both for a new action and when a game is
//! rebuilt from its stored events, so a rebuilt game is the game that was played.

use crate::clock::{ClockView, GameClock, LagQuota, LagSettings, Millis};
use crate::protocol::{
    ChatLine, ErrorCode, GameEvent, GameSettings, HandicapPlacement, MoveRecord, NigiriProof,
    Phase, Prisoners, Refusal, ScoreView, Seat, Snapshot, UserInfo,
};
use crate::rules::{self, Color, DeadStones, Game, GameResult, Move, Vertex};

/// Longest chat line, in characters.
pub const MAX_CHAT_CHARS: usize = 500;
/// Chat lines a snapshot carries.
const CHAT_KEPT: usize = 50;

/// What a player asks for in a game.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Play { move_number: u32, mv: Move },
    Resign,
    PlaceHandicap(Vec<Vertex>),
    MarkDead { vertex: Vertex, dead: bool },
    AcceptScore { marks_seq: Option<u64> },
    RejectScore,
    Chat(String),
    Pause,
    Resume,
    Seal { move_number: u32, mv: Move },
    ClaimWin,
}

/// When something happens: the room's monotonic time (for clocks), the wall time (for
/// records) and the acting connection's latency estimate (for lag compensation).
#[derive(Debug, Clone, Copy, Default)]
pub struct Moment {
    pub now: Millis,
    pub wall_ms: i64,
    pub lag_ms: u64,
}

/// An accepted change: its events, complete (captures, clocks and times filled in) and
/// numbered from the game's next `seq` on, and the game as it is after them. The room
/// stores the events and only then takes `game` as its state, so a store that refuses
/// leaves the game exactly as it was.
pub struct Step {
    pub events: Vec<GameEvent>,
    pub game: Box<LiveGame>,
}

impl Step {
    /// The seq of the first event.
    pub fn first_seq(&self) -> u64 {
        self.game.seq + 1 - self.events.len() as u64
    }
}

/// A stored event that does not apply to the game its log rebuilt so far: the log is not
/// one this server wrote, or it is damaged. Never skipped in silence.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("event {seq} does not apply: {reason}")]
pub struct ReplayError {
    pub seq: u64,
    pub reason: String,
}

/// A game being played.
#[derive(Clone)]
pub struct LiveGame {
    pub settings: GameSettings,
    pub black: UserInfo,
    pub white: UserInfo,
    game: Game,
    phase: Phase,
    handicap_stones: Vec<Vertex>,
    clock: GameClock,
    lag: [LagQuota; 2],
    dead: DeadStones,
    accepted: [bool; 2],
    /// The seq of the event that last changed the marks.
    marks_seq: u64,
    disputes: u32,
    /// Moves played before play last resumed: passes before it do not count.
    resumed_at: usize,
    result: Option<GameResult>,
    reason: Option<String>,
    score: Option<ScoreView>,
    /// The players' latest chat lines, for snapshots.
    chat: std::collections::VecDeque<ChatLine>,
    nigiri: Option<NigiriProof>,
    online: [bool; 2],
    /// Whether each player has been here at all (scheduled games' lateness rule).
    ever_present: [bool; 2],
    /// Since when each player has been away.
    absent_since: [Option<Millis>; 2],
    /// A scheduled game's start, on the room's clock, until it begins.
    begins_at: Option<Millis>,
    /// When absent players of a scheduled game forfeit, until both have come.
    forfeit_at: Option<Millis>,
    /// When the dead-stone phase runs out.
    scoring_until: Option<Millis>,
    paused: bool,
    pause_request: Option<Color>,
    resume_request: Option<Color>,
    /// The sealed move of an adjourned game: who, and what.
    sealed: Option<(Color, Move)>,
    /// Numbered events so far (the last event's seq).
    seq: u64,
}

fn refuse(code: ErrorCode, message: impl Into<String>) -> Refusal {
    Refusal::new(code, message)
}

impl LiveGame {
    /// A game from its first event (`game_created`), which must be seq 1.
    pub fn create(
        first: &GameEvent,
        at: Moment,
        lag: LagSettings,
    ) -> Result<LiveGame, ReplayError> {
        let bad = |reason: &str| ReplayError {
            seq: 1,
            reason: reason.to_string(),
        };
        let now = at.now;
        let GameEvent::GameCreated {
            settings,
            black,
            white,
            handicap_stones,
            nigiri,
            ..
        } = first
        else {
            return Err(bad("a game's first event must be game_created"));
        };
        let setup: Vec<(Vertex, Color)> =
            handicap_stones.iter().map(|&v| (v, Color::Black)).collect();
        let free_handicap =
            settings.handicap >= 2 && settings.handicap_placement == HandicapPlacement::Free;
        let first_to_move = if settings.handicap >= 2 && !free_handicap {
            Color::White
        } else {
            Color::Black
        };
        let game = Game::with_setup(
            settings.board_size,
            settings.ko_rule(),
            &setup,
            first_to_move,
        )
        .map_err(|e| bad(&e.to_string()))?;
        let clock = GameClock::new(settings.clock);
        // A scheduled start, moved onto the room's clock.
        let later = |wall: i64| now + (wall - at.wall_ms).max(0) as Millis;
        let begins_at = settings.start_at.filter(|&t| t > at.wall_ms).map(later);
        let forfeit_at = settings
            .start_at
            .map(|t| later(t.saturating_add(settings.forfeit_after_ms as i64)));
        // No clock runs yet: the first player's starts when they come to the board
        // (`start_clock_if_stopped`), or at a scheduled start whether they come or not.
        Ok(LiveGame {
            settings: (**settings).clone(),
            black: black.clone(),
            white: white.clone(),
            game,
            phase: match (begins_at, free_handicap) {
                (Some(_), _) => Phase::Scheduled,
                (None, true) => Phase::Handicap,
                (None, false) => Phase::Play,
            },
            handicap_stones: handicap_stones.clone(),
            clock,
            lag: [LagQuota::new(lag), LagQuota::new(lag)],
            dead: DeadStones::new(),
            accepted: [false; 2],
            marks_seq: 0,
            disputes: 0,
            resumed_at: 0,
            result: None,
            reason: None,
            score: None,
            chat: std::collections::VecDeque::new(),
            nigiri: nigiri.clone(),
            online: [false; 2],
            ever_present: [false; 2],
            absent_since: [Some(now); 2],
            begins_at,
            forfeit_at,
            scoring_until: None,
            paused: false,
            pause_request: None,
            resume_request: None,
            sealed: None,
            seq: 1,
        })
    }

    pub fn seq(&self) -> u64 {
        self.seq
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn result(&self) -> Option<GameResult> {
        self.result
    }

    /// Moves played so far (passes included).
    pub fn move_count(&self) -> u32 {
        self.game.moves().len() as u32
    }

    pub fn to_move(&self) -> Color {
        self.game.to_move()
    }

    pub fn rules(&self) -> &Game {
        &self.game
    }

    pub fn clock(&self) -> &GameClock {
        &self.clock
    }

    /// The seat of `user`, if they play in this game.
    pub fn color_of(&self, user_id: &str) -> Option<Color> {
        if self.black.id == user_id {
            Some(Color::Black)
        } else if self.white.id == user_id {
            Some(Color::White)
        } else {
            None
        }
    }

    pub fn player(&self, color: Color) -> &UserInfo {
        match color {
            Color::Black => &self.black,
            Color::White => &self.white,
        }
    }

    pub fn is_online(&self, color: Color) -> bool {
        self.online[color.index()]
    }

    /// Whether the side to move's clock should be running now.
    fn clock_should_run(&self) -> bool {
        matches!(self.phase, Phase::Play | Phase::Handicap) && !self.paused && self.sealed.is_none()
    }

    /// The next instant something happens by itself (a start, a flag, a forfeit, the
    /// end of the dead-stone phase), for the room's one timer.
    pub fn next_timer(&self) -> Option<Millis> {
        if self.phase == Phase::Ended {
            return None;
        }
        let flag = self
            .clock_should_run()
            .then(|| self.clock.deadline())
            .flatten();
        let scoring = self.scoring_until.filter(|_| self.phase == Phase::Scoring);
        let forfeit = self
            .forfeit_at
            .filter(|_| !self.ever_present.iter().all(|&p| p));
        [self.begins_at, flag, scoring, forfeit]
            .into_iter()
            .flatten()
            .min()
    }

    /// What happens by itself at `at`: the events to record (none if nothing is due).
    pub fn on_timer(&self, at: Moment) -> Step {
        self.step(self.timer_events(at.now), at)
    }

    fn timer_events(&self, now: Millis) -> Vec<GameEvent> {
        if self.phase == Phase::Ended {
            return Vec::new();
        }
        if let Some(t) = self.forfeit_at
            && t <= now
        {
            match self.ever_present {
                [false, false] => return vec![ended(GameResult::DoubleForfeit, None)],
                [false, true] => {
                    return vec![ended(
                        GameResult::Forfeit {
                            winner: Color::White,
                        },
                        None,
                    )];
                }
                [true, false] => {
                    return vec![ended(
                        GameResult::Forfeit {
                            winner: Color::Black,
                        },
                        None,
                    )];
                }
                [true, true] => {}
            }
        }
        if self.begins_at.is_some_and(|t| t <= now) {
            return vec![GameEvent::GameBegan { clock: None }];
        }
        if self.clock_should_run()
            && let Some(loser) = self.clock.check_flag(now)
        {
            return vec![ended(
                GameResult::Time {
                    winner: loser.opponent(),
                },
                None,
            )];
        }
        if self.phase == Phase::Scoring && self.scoring_until.is_some_and(|t| t <= now) {
            // Time is up for marking and the marks are not agreed: that is a dispute,
            // settled as one. Nobody's silence counts as consent to marks it never saw
            // through (a player cannot win by marking live stones and waiting).
            return vec![self.dispute(None)];
        }
        Vec::new()
    }

    /// Decides what `who` asking for `action` at `at` does: the events to record, in
    /// order, with the game after them, or a refusal. `self` is never changed.
    pub fn decide(&self, who: Color, action: &Action, at: Moment) -> Result<Step, Refusal> {
        Ok(self.step(self.decide_events(who, action, at.now)?, at))
    }

    /// Applies `events` (new, not yet numbered) to a copy of the game, completing them.
    pub fn step(&self, mut events: Vec<GameEvent>, at: Moment) -> Step {
        let mut game = Box::new(self.clone());
        for event in &mut events {
            let seq = game.seq + 1;
            game.record(event, seq, at);
        }
        Step { events, game }
    }

    fn decide_events(
        &self,
        who: Color,
        action: &Action,
        now: Millis,
    ) -> Result<Vec<GameEvent>, Refusal> {
        if self.phase == Phase::Ended {
            return Err(refuse(ErrorCode::WrongPhase, "the game is over"));
        }
        match action {
            Action::Resign => Ok(vec![ended(
                GameResult::Resignation {
                    winner: who.opponent(),
                },
                None,
            )]),
            Action::Chat(text) => {
                let text = text.trim();
                if text.is_empty() || text.chars().count() > MAX_CHAT_CHARS {
                    return Err(refuse(
                        ErrorCode::BadRequest,
                        format!("chat text must have 1 to {MAX_CHAT_CHARS} characters"),
                    ));
                }
                Ok(vec![GameEvent::Chat {
                    from: self.player(who).clone(),
                    text: text.to_string(),
                    at: 0,
                }])
            }
            Action::Play { move_number, mv } => self.decide_move(who, *move_number, *mv, now),
            Action::Pause => {
                self.in_phase(Phase::Play)?;
                self.running()?;
                Ok(match self.pause_request {
                    Some(by) if by != who => vec![GameEvent::Paused { clock: None }],
                    Some(_) => Vec::new(),
                    None => vec![GameEvent::PauseRequested { by: who }],
                })
            }
            Action::Resume => {
                if !self.paused && self.sealed.is_none() {
                    return Err(refuse(
                        ErrorCode::WrongPhase,
                        "the game is neither paused nor adjourned",
                    ));
                }
                Ok(match self.resume_request {
                    Some(by) if by != who => self.resumption(),
                    Some(_) => Vec::new(),
                    None => vec![GameEvent::ResumeRequested { by: who }],
                })
            }
            Action::Seal { move_number, mv } => {
                self.in_phase(Phase::Play)?;
                self.running()?;
                self.numbered(*move_number)?;
                if who != self.game.to_move() {
                    return Err(refuse(
                        ErrorCode::NotYourTurn,
                        "only the player to move seals a move",
                    ));
                }
                if let Some(loser) = self.clock.check_flag(now) {
                    return Ok(vec![ended(
                        GameResult::Time {
                            winner: loser.opponent(),
                        },
                        None,
                    )]);
                }
                Ok(vec![GameEvent::MoveSealed {
                    by: who,
                    move_number: *move_number,
                    vertex: Some(*mv),
                    clock: None,
                }])
            }
            Action::ClaimWin => {
                if !matches!(self.phase, Phase::Play | Phase::Handicap) {
                    return Err(refuse(
                        ErrorCode::WrongPhase,
                        "a game can be claimed only during play",
                    ));
                }
                // Stepping away during an agreed pause or an adjournment is allowed.
                self.running()?;
                let away = self.absent_since[who.opponent().index()]
                    .filter(|_| !self.online[who.opponent().index()])
                    .map(|since| now.saturating_sub(since));
                match away {
                    Some(ms) if ms >= self.settings.claim_after_ms => {
                        Ok(vec![ended(GameResult::Forfeit { winner: who }, None)])
                    }
                    _ => Err(refuse(
                        ErrorCode::Forbidden,
                        format!(
                            "your opponent must be away {} s before you can claim the game",
                            self.settings.claim_after_ms / 1000
                        ),
                    )),
                }
            }
            Action::PlaceHandicap(vertices) => self.decide_handicap(who, vertices),
            Action::MarkDead { vertex, dead } => {
                self.in_phase(Phase::Scoring)?;
                if !self.game.board().contains(*vertex) {
                    return Err(Refusal::illegal(rules::IllegalMove::OffBoard(*vertex)));
                }
                let mut marks = self.dead.clone();
                if !marks.set_chain(self.game.board(), *vertex, *dead) {
                    return Err(refuse(
                        ErrorCode::BadRequest,
                        format!("there is no stone on {vertex}"),
                    ));
                }
                if marks == self.dead {
                    return Ok(Vec::new());
                }
                Ok(vec![GameEvent::DeadMarked {
                    by: who,
                    vertex: *vertex,
                    dead: *dead,
                    marks: marks.iter().collect(),
                }])
            }
            Action::AcceptScore { marks_seq } => {
                self.in_phase(Phase::Scoring)?;
                if marks_seq.is_some_and(|s| s != self.marks_seq) {
                    return Err(refuse(
                        ErrorCode::StaleMove,
                        format!(
                            "the marks changed at seq {}; look at them again",
                            self.marks_seq
                        ),
                    ));
                }
                if self.accepted[who.index()] {
                    return Ok(Vec::new());
                }
                let mut events = vec![GameEvent::ScoreAccepted { by: who }];
                if self.accepted[who.opponent().index()] {
                    events.push(self.counted(&self.dead));
                }
                Ok(events)
            }
            Action::RejectScore => {
                self.in_phase(Phase::Scoring)?;
                Ok(vec![self.dispute(Some(who))])
            }
        }
    }

    /// The marks are not agreed (`by` rejected them, or nobody accepted in time): the
    /// first time, play resumes to settle it; the second time, every stone still on the
    /// board counts as alive, since each side had the chance to capture what it claimed.
    fn dispute(&self, by: Option<Color>) -> GameEvent {
        if self.disputes == 0 {
            GameEvent::PlayResumed {
                by,
                to_move: self.game.to_move(),
                clock: None,
            }
        } else {
            self.counted(&DeadStones::new())
        }
    }

    fn in_phase(&self, phase: Phase) -> Result<(), Refusal> {
        if self.phase == phase {
            Ok(())
        } else {
            Err(refuse(
                ErrorCode::WrongPhase,
                format!("not now: the game is {}", phase_name(self.phase)),
            ))
        }
    }

    /// Refuses while clocks are stopped by a pause or an adjournment.
    fn running(&self) -> Result<(), Refusal> {
        if self.paused {
            Err(refuse(
                ErrorCode::WrongPhase,
                "the game is paused; `resume` first",
            ))
        } else if self.sealed.is_some() {
            Err(refuse(
                ErrorCode::WrongPhase,
                "the game is adjourned with a sealed move; `resume` first",
            ))
        } else {
            Ok(())
        }
    }

    /// Refuses a move number that is not the next one.
    fn numbered(&self, number: u32) -> Result<(), Refusal> {
        let expected = self.move_count() + 1;
        if number == expected {
            Ok(())
        } else {
            Err(refuse(
                ErrorCode::StaleMove,
                format!("the next move is number {expected}, not {number}"),
            ))
        }
    }

    /// Both agreed to go on: clocks run again; an adjourned game's sealed move is played
    /// first, or counts as a pass when the point is occupied or the move illegal.
    fn resumption(&self) -> Vec<GameEvent> {
        let mut events = vec![GameEvent::Resumed { clock: None }];
        if let Some((color, mv)) = self.sealed {
            let played = if self.game.check(color, mv).is_ok() {
                mv
            } else {
                Move::Pass
            };
            events.push(GameEvent::MovePlayed {
                move_number: self.move_count() + 1,
                color,
                vertex: played,
                captures: Vec::new(),
                clock: None,
                at: 0,
                sealed: Some(mv),
            });
            if played == Move::Pass && self.passes() >= 1 {
                events.push(GameEvent::ScoringStarted {
                    disputes: self.disputes,
                });
            }
        }
        events
    }

    /// Passes at the end of the record since play last resumed.
    fn passes(&self) -> usize {
        (self.game.passes_in_row() as usize).min(self.game.moves().len() - self.resumed_at)
    }

    fn decide_move(
        &self,
        who: Color,
        number: u32,
        mv: Move,
        now: Millis,
    ) -> Result<Vec<GameEvent>, Refusal> {
        self.in_phase(Phase::Play)?;
        self.running()?;
        self.numbered(number)?;
        if who != self.game.to_move() {
            return Err(refuse(ErrorCode::NotYourTurn, "it is your opponent's move"));
        }
        if let Some(loser) = self.clock.check_flag(now) {
            return Ok(vec![ended(
                GameResult::Time {
                    winner: loser.opponent(),
                },
                None,
            )]);
        }
        self.game.check(who, mv).map_err(Refusal::illegal)?;
        let mut events = vec![GameEvent::MovePlayed {
            move_number: number,
            color: who,
            vertex: mv,
            captures: Vec::new(),
            clock: None,
            at: 0,
            sealed: None,
        }];
        if mv == Move::Pass && self.passes() >= 1 {
            events.push(GameEvent::ScoringStarted {
                disputes: self.disputes,
            });
        }
        Ok(events)
    }

    fn decide_handicap(&self, who: Color, vertices: &[Vertex]) -> Result<Vec<GameEvent>, Refusal> {
        self.in_phase(Phase::Handicap)?;
        if who != Color::Black {
            return Err(refuse(
                ErrorCode::NotYourTurn,
                "Black places the handicap stones",
            ));
        }
        let mut sorted = vertices.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != vertices.len() || vertices.len() != usize::from(self.settings.handicap) {
            return Err(refuse(
                ErrorCode::BadRequest,
                format!("place exactly {} different points", self.settings.handicap),
            ));
        }
        if let Some(v) = vertices.iter().find(|v| !self.game.board().contains(**v)) {
            return Err(Refusal::illegal(rules::IllegalMove::OffBoard(*v)));
        }
        Ok(vec![GameEvent::HandicapPlaced {
            vertices: vertices.to_vec(),
        }])
    }

    /// The count with `dead` removed, as the event that ends the game.
    fn counted(&self, dead: &DeadStones) -> GameEvent {
        let prisoners = [
            self.game.prisoners(Color::Black),
            self.game.prisoners(Color::White),
        ];
        let score = rules::count(
            self.game.board(),
            dead,
            &self.settings.score_rules(),
            prisoners,
        );
        ended(
            score.result,
            Some(ScoreView {
                black: score.black,
                white: score.white,
                komi: self.settings.komi(),
                margin_stones: score.margin_stones(),
                chinese: score.chinese(),
                dead: dead.iter().collect(),
            }),
        )
    }

    /// Replays stored event number `seq`, which must be the next one and must apply.
    pub fn apply(&mut self, event: &GameEvent, seq: u64, at: Moment) -> Result<(), ReplayError> {
        let bad = |reason: String| ReplayError { seq, reason };
        if seq != self.seq + 1 {
            return Err(bad(format!("expected event {}", self.seq + 1)));
        }
        if let GameEvent::MovePlayed { color, vertex, .. } = event {
            self.game
                .check(*color, *vertex)
                .map_err(|e| bad(format!("{color} {vertex} is not legal here: {e}")))?;
        }
        let mut event = event.clone();
        self.record(&mut event, seq, at);
        Ok(())
    }

    /// Records `event` as number `seq`. Live events get their derived fields (captures,
    /// clock, time) filled in here; stored events already carry them, and their clock
    /// views are restored rather than recomputed.
    fn record(&mut self, event: &mut GameEvent, seq: u64, at: Moment) {
        let now = at.now;
        self.seq = seq;
        match event {
            GameEvent::GameCreated { .. } => {}
            GameEvent::GameBegan { clock } => {
                self.begins_at = None;
                self.phase = if self.settings.handicap >= 2
                    && self.settings.handicap_placement == HandicapPlacement::Free
                {
                    Phase::Handicap
                } else {
                    Phase::Play
                };
                let to_move = self.game.to_move();
                self.clocked(clock, now, |c| {
                    let _ = c.start(to_move, now);
                });
            }
            GameEvent::HandicapPlaced { vertices } => {
                let setup: Vec<(Vertex, Color)> =
                    vertices.iter().map(|&v| (v, Color::Black)).collect();
                if let Ok(game) = Game::with_setup(
                    self.settings.board_size,
                    self.settings.ko_rule(),
                    &setup,
                    Color::White,
                ) {
                    self.game = game;
                }
                self.handicap_stones = vertices.clone();
                self.phase = Phase::Play;
                let _ = self.clock.on_move(Color::Black, now, 0);
            }
            GameEvent::MovePlayed {
                color,
                vertex,
                captures,
                clock,
                at: when,
                sealed,
                ..
            } => {
                if self.game.play(*color, *vertex).is_ok() {
                    *captures = self.game.last_captures().to_vec();
                }
                if sealed.is_some() {
                    self.sealed = None;
                }
                self.pause_request = None;
                if *when == 0 {
                    *when = at.wall_ms;
                }
                let color = *color;
                let lag = &mut self.lag[color.index()];
                let credit = match self.clock.elapsed(now) {
                    Some(elapsed) if clock.is_none() && self.clock.running() == Some(color) => {
                        lag.credit(at.lag_ms, elapsed)
                    }
                    _ => 0,
                };
                crate::metrics::lag_credit(credit);
                self.clocked(clock, now, |c| {
                    let _ = c.on_move(color, now, credit);
                });
            }
            GameEvent::PauseRequested { by } => self.pause_request = Some(*by),
            GameEvent::Paused { clock } => {
                self.paused = true;
                self.pause_request = None;
                self.clocked(clock, now, |c| {
                    let _ = c.pause(now);
                });
            }
            GameEvent::ResumeRequested { by } => self.resume_request = Some(*by),
            GameEvent::Resumed { clock } => {
                self.paused = false;
                self.resume_request = None;
                let (sealed, to_move) = (self.sealed.is_some(), self.game.to_move());
                self.clocked(clock, now, |c| {
                    if c.is_paused() {
                        c.resume(now);
                    } else if !sealed {
                        let _ = c.start(to_move, now);
                    }
                });
            }
            GameEvent::MoveSealed {
                by, vertex, clock, ..
            } => {
                self.sealed = vertex.map(|v| (*by, v));
                self.pause_request = None;
                self.clocked(clock, now, |c| {
                    let _ = c.stop(now);
                });
            }
            GameEvent::ScoringStarted { .. } => {
                self.phase = Phase::Scoring;
                self.dead = DeadStones::new();
                self.accepted = [false; 2];
                self.marks_seq = seq;
                self.scoring_until = Some(now + self.settings.scoring_ms);
                let _ = self.clock.stop(now);
            }
            GameEvent::DeadMarked { marks, .. } => {
                self.dead = DeadStones::new();
                for &v in marks.iter() {
                    self.dead.set_chain(self.game.board(), v, true);
                }
                self.accepted = [false; 2];
                self.marks_seq = seq;
            }
            GameEvent::ScoreAccepted { by } => self.accepted[by.index()] = true,
            GameEvent::PlayResumed { to_move, clock, .. } => {
                self.phase = Phase::Play;
                self.disputes += 1;
                self.resumed_at = self.game.moves().len();
                self.dead = DeadStones::new();
                self.accepted = [false; 2];
                self.scoring_until = None;
                let to_move = *to_move;
                self.clocked(clock, now, |c| {
                    let _ = c.start(to_move, now);
                });
            }
            GameEvent::GameEnded {
                result,
                score,
                reason,
            } => {
                self.phase = Phase::Ended;
                self.result = Some(*result);
                self.reason = Some(reason.clone());
                self.score = score.clone();
                let _ = self.clock.stop(now);
            }
            GameEvent::Chat {
                from,
                text,
                at: when,
            } => {
                if *when == 0 {
                    *when = at.wall_ms;
                }
                if self.chat.len() == CHAT_KEPT {
                    self.chat.pop_front();
                }
                self.chat.push_back(ChatLine {
                    seq,
                    from: from.clone(),
                    text: text.clone(),
                    at: *when,
                });
            }
            GameEvent::Presence { color, online } => {
                let i = color.index();
                self.online[i] = *online;
                if *online {
                    self.ever_present[i] = true;
                    self.absent_since[i] = None;
                } else {
                    self.absent_since[i] = Some(now);
                }
            }
        }
    }

    /// Runs a clock operation for a live event and records the resulting view in it, or,
    /// for a stored event, puts back the view it recorded.
    fn clocked(
        &mut self,
        view: &mut Option<ClockView>,
        now: Millis,
        op: impl FnOnce(&mut GameClock),
    ) {
        match view {
            Some(v) => self.clock.restore(*v),
            None => {
                op(&mut self.clock);
                *view = self.clock_view(now);
            }
        }
    }

    /// The whole state for a client that has nothing.
    pub fn snapshot(
        &self,
        game_id: &str,
        now: Millis,
        server_time: i64,
        you: Option<Color>,
    ) -> Snapshot {
        let board = self.game.board();
        let rows = board.to_diagram().lines().map(str::to_string).collect();
        Snapshot {
            game_id: game_id.to_string(),
            seq: self.seq,
            settings: self.settings.clone(),
            black: self.seat(Color::Black),
            white: self.seat(Color::White),
            phase: self.phase,
            board: rows,
            handicap_stones: self.handicap_stones.clone(),
            moves: self
                .game
                .moves()
                .iter()
                .map(|&(color, vertex)| MoveRecord { color, vertex })
                .collect(),
            prisoners: Prisoners {
                black: self.game.prisoners(Color::Black),
                white: self.game.prisoners(Color::White),
            },
            to_move: self.game.to_move(),
            clock: self.clock_view(now),
            server_time,
            dead: self.dead.iter().collect(),
            marks_seq: self.marks_seq,
            accepted: [Color::Black, Color::White]
                .into_iter()
                .filter(|c| self.accepted[c.index()])
                .collect(),
            disputes: self.disputes,
            paused: self.paused,
            sealed_by: self.sealed.map(|(c, _)| c),
            pause_requested_by: self.pause_request,
            resume_requested_by: self.resume_request,
            result: self.result,
            reason: self.reason.clone(),
            score: self.score.clone(),
            chat: self.chat.iter().cloned().collect(),
            nigiri: self.nigiri.clone(),
            you,
        }
    }

    /// After a rebuild from the log: no clock runs (downtime is never charged) and
    /// nobody is here yet; absence counts from now.
    /// Returns the players the log last showed online, whose going offline the room
    /// records so that clients hear of it.
    pub fn settle_after_restart(&mut self, now: Millis) -> Vec<Color> {
        let view = self.clock.view(now);
        self.clock.restore(view);
        self.absent_since = [Some(now); 2];
        [Color::Black, Color::White]
            .into_iter()
            .filter(|c| self.online[c.index()] && self.phase != Phase::Ended)
            .collect()
    }

    /// Starts the clock of the side to move if no clock runs (when that player comes to
    /// the board at the start of the game or after a restart).
    pub fn start_clock_if_stopped(&mut self, now: Millis) {
        if self.clock_should_run() && self.clock.running().is_none() {
            let _ = self.clock.start(self.game.to_move(), now);
        }
    }

    /// Both clocks at `now`, for timed games.
    pub fn clock_view(&self, now: Millis) -> Option<ClockView> {
        self.settings.clock.is_timed().then(|| self.clock.view(now))
    }

    fn seat(&self, color: Color) -> Seat {
        Seat {
            user: self.player(color).clone(),
            online: self.online[color.index()],
        }
    }
}

fn ended(result: GameResult, score: Option<ScoreView>) -> GameEvent {
    GameEvent::GameEnded {
        result,
        reason: result.reason().to_string(),
        score,
    }
}

fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Scheduled => "waiting for its scheduled start",
        Phase::Handicap => "waiting for Black's handicap stones",
        Phase::Play => "in play",
        Phase::Scoring => "in the dead-stone phase",
        Phase::Ended => "over",
    }
}
