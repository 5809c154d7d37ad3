//! One live game as a state machine: the rules position, the phase, the clock, the
//! dead-stone marks and acceptances. No I/O and no tasks: the room actor feeds it actions
//! with the current time and gets back the events to number, store and broadcast.
//!
//! Every change goes through [`LiveGame::apply`], both for a new action and when a game is
//! rebuilt from its stored events, so a rebuilt game is the game that was played.

use crate::clock::{ClockView, GameClock, LagQuota, LagSettings, Millis};
use crate::protocol::{
    ErrorCode, GameEvent, GameSettings, HandicapPlacement, MoveRecord, NigiriProof, Phase,
    Prisoners, Refusal, ScoreView, Seat, Snapshot, UserInfo,
};
use crate::rules::{self, Color, DeadStones, Game, GameResult, Move, Vertex};

/// Longest chat line, in characters.
pub const MAX_CHAT_CHARS: usize = 500;

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
}

/// When something happens: the room's monotonic time (for clocks), the wall time (for
/// records) and the acting connection's latency estimate (for lag compensation).
#[derive(Debug, Clone, Copy, Default)]
pub struct Moment {
    pub now: Millis,
    pub wall_ms: i64,
    pub lag_ms: u64,
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
    score: Option<ScoreView>,
    nigiri: Option<NigiriProof>,
    online: [bool; 2],
    /// Numbered events so far (the last event's seq).
    seq: u64,
}

fn refuse(code: ErrorCode, message: impl Into<String>) -> Refusal {
    Refusal::new(code, message)
}

impl LiveGame {
    /// A game from its first event (`game_created`), which must be seq 1.
    pub fn create(first: &GameEvent, now: Millis, lag: LagSettings) -> Option<LiveGame> {
        let GameEvent::GameCreated {
            settings,
            black,
            white,
            handicap_stones,
            nigiri,
            ..
        } = first
        else {
            return None;
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
        .ok()?;
        let mut clock = GameClock::new(settings.clock);
        // A flag at the very start is impossible: nothing has run yet.
        let _ = clock.start(first_to_move, now);
        Some(LiveGame {
            settings: settings.clone(),
            black: black.clone(),
            white: white.clone(),
            game,
            phase: if free_handicap {
                Phase::Handicap
            } else {
                Phase::Play
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
            score: None,
            nigiri: nigiri.clone(),
            online: [false; 2],
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

    /// The instant the side to move flags, for the room's one timer.
    pub fn deadline(&self) -> Option<Millis> {
        match self.phase {
            Phase::Play | Phase::Handicap => self.clock.deadline(),
            Phase::Scoring | Phase::Ended => None,
        }
    }

    /// The loss on time that has happened by `now`, as an event to record.
    pub fn flag_fall(&self, now: Millis) -> Option<GameEvent> {
        if self.result.is_some() {
            return None;
        }
        let loser = self.deadline().and(self.clock.check_flag(now))?;
        Some(ended(
            GameResult::Time {
                winner: loser.opponent(),
            },
            None,
        ))
    }

    /// Decides what `who` asking for `action` does: the events to record, in order, or a
    /// refusal that leaves the game exactly as it was.
    pub fn decide(
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
            Action::PlaceHandicap(vertices) => self.decide_handicap(who, vertices),
            Action::MarkDead { vertex, dead } => {
                self.in_phase(Phase::Scoring)?;
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
                if self.disputes == 0 {
                    Ok(vec![GameEvent::PlayResumed {
                        by: who,
                        to_move: self.game.to_move(),
                    }])
                } else {
                    // The second dispute: every stone on the board counts as alive.
                    Ok(vec![self.counted(&DeadStones::new())])
                }
            }
        }
    }

    fn in_phase(&self, phase: Phase) -> Result<(), Refusal> {
        if self.phase == phase {
            Ok(())
        } else {
            Err(refuse(
                ErrorCode::WrongPhase,
                format!("the game is in the {} phase", phase_name(self.phase)),
            ))
        }
    }

    fn decide_move(
        &self,
        who: Color,
        number: u32,
        mv: Move,
        now: Millis,
    ) -> Result<Vec<GameEvent>, Refusal> {
        self.in_phase(Phase::Play)?;
        let expected = self.move_count() + 1;
        if number != expected {
            return Err(refuse(
                ErrorCode::StaleMove,
                format!("the next move is number {expected}, not {number}"),
            ));
        }
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
        }];
        let passes =
            (self.game.passes_in_row() as usize).min(self.game.moves().len() - self.resumed_at);
        if mv == Move::Pass && passes + 1 >= 2 {
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

    /// Records `event` as number `seq`. Live events get their derived fields (captures,
    /// clock, time) filled in here; stored events already carry them.
    pub fn apply(&mut self, event: &mut GameEvent, seq: u64, at: Moment) {
        let Moment {
            now,
            wall_ms,
            lag_ms,
        } = at;
        self.seq = seq;
        match event {
            GameEvent::GameCreated { .. } => {}
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
                ..
            } => {
                if self.game.play(*color, *vertex).is_ok() {
                    *captures = self.game.last_captures().to_vec();
                }
                match clock {
                    Some(view) => self.clock.restore(*view),
                    None => {
                        let credit = match self.clock.elapsed(now) {
                            Some(elapsed) if self.clock.running() == Some(*color) => {
                                self.lag[color.index()].credit(lag_ms, elapsed)
                            }
                            _ => 0,
                        };
                        crate::metrics::lag_credit(credit);
                        let _ = self.clock.on_move(*color, now, credit);
                        *clock = self.settings.clock.is_timed().then(|| self.clock.view(now));
                    }
                }
            }
            GameEvent::ScoringStarted { .. } => {
                self.phase = Phase::Scoring;
                self.dead = DeadStones::new();
                self.accepted = [false; 2];
                self.marks_seq = seq;
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
            GameEvent::PlayResumed { to_move, .. } => {
                self.phase = Phase::Play;
                self.disputes += 1;
                self.resumed_at = self.game.moves().len();
                self.dead = DeadStones::new();
                self.accepted = [false; 2];
                let _ = self.clock.start(*to_move, now);
            }
            GameEvent::GameEnded { result, score, .. } => {
                self.phase = Phase::Ended;
                self.result = Some(*result);
                self.score = score.clone();
                let _ = self.clock.stop(now);
            }
            GameEvent::Chat { at, .. } => {
                if *at == 0 {
                    *at = wall_ms;
                }
            }
            GameEvent::Presence { color, online } => self.online[color.index()] = *online,
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
            accepted: [Color::Black, Color::White]
                .into_iter()
                .filter(|c| self.accepted[c.index()])
                .collect(),
            disputes: self.disputes,
            result: self.result,
            score: self.score.clone(),
            nigiri: self.nigiri.clone(),
            you,
        }
    }

    /// Stops the clock without charging anyone (a game rebuilt after a restart).
    pub fn stop_clock(&mut self) {
        let view = self.clock.view(0);
        self.clock.restore(view);
    }

    /// Starts the clock of the side to move if no clock runs (after a restart).
    pub fn start_clock_if_stopped(&mut self, now: Millis) {
        let playing = matches!(self.phase, Phase::Play | Phase::Handicap);
        if playing && self.clock.running().is_none() && !self.clock.is_paused() {
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
        Phase::Handicap => "handicap placement",
        Phase::Play => "play",
        Phase::Scoring => "dead-stone marking",
        Phase::Ended => "finished",
    }
}
