//! Deciding what an action or the timer does. A [`Draft`] builds each event complete
//! (captures from the rules engine, the clocks after it, wall time, lag credit) from the
//! game as the events before it left it, and applies it at once, exactly as a replay
//! of the stored log will.

use super::{LiveGame, MAX_CHAT_CHARS, Moment, Play, Scoring, Sealed, Stage, Step};
use crate::clock::{ClockView, Flagged, GameClock};
use crate::protocol::{ErrorCode, GameAction, GameEvent, GroupTax, Refusal, ScoreView};
use crate::rules::{self, Color, DeadStones, GameResult, Move, Vertex};

/// A decision being built: the game after the events so far, and those events.
pub(super) struct Draft {
    pub(super) game: Box<LiveGame>,
    pub(super) events: Vec<GameEvent>,
    pub(super) at: Moment,
}

pub(super) fn refuse(code: ErrorCode, message: impl Into<String>) -> Refusal {
    Refusal::new(code, message)
}

pub(super) fn ended(result: GameResult, score: Option<ScoreView>) -> GameEvent {
    GameEvent::GameEnded {
        result,
        reason: result.reason().to_string(),
        score,
        clock: None,
    }
}

/// The end of a game that no move of its was ever going to decide: a player ended it
/// before their first move, or its first move never came. No result for either side, so
/// nothing is rated and nobody is an escaper.
fn aborted() -> GameEvent {
    GameEvent::GameEnded {
        result: GameResult::Void,
        reason: "aborted".into(),
        score: None,
        clock: None,
    }
}

pub(super) fn time_loss(loser: Color) -> GameEvent {
    ended(
        GameResult::Time {
            winner: loser.opponent(),
        },
        None,
    )
}

impl Draft {
    pub(super) fn new(game: &LiveGame, at: Moment) -> Draft {
        Draft {
            game: Box::new(game.clone()),
            events: Vec::new(),
            at,
        }
    }

    pub(super) fn finish(self) -> Step {
        Step {
            events: self.events,
            game: self.game,
        }
    }

    /// Applies a complete event and keeps it. One the game refuses is the decider's own
    /// mistake: the action is refused as a whole and nothing changes.
    pub(super) fn push(&mut self, mut event: GameEvent) -> Result<(), Refusal> {
        let seq = self.game.seq + 1;
        // The draft is the decision's own copy, dropped whole on a refusal: no copy per
        // event is needed to keep a failure from leaving a trace.
        self.game
            .apply_in_place(&event, seq, self.at)
            .map_err(|e| {
                tracing::error!(error = %e, "a decided event did not apply");
                refuse(
                    ErrorCode::Unavailable,
                    format!("the server could not apply its own decision: {e}"),
                )
            })?;
        if let GameEvent::GameEnded { clock, .. } = &mut event {
            // The clocks as applying the end stopped them.
            *clock = self.game.clock_view(self.at.now);
        }
        self.events.push(event);
        Ok(())
    }

    /// Both clocks after `op` on a copy of the game's clock, for timed games.
    pub(super) fn clock_after(
        &self,
        op: impl FnOnce(&mut GameClock) -> Result<(), Flagged>,
    ) -> Result<Option<ClockView>, Flagged> {
        let game = &self.game;
        if !game.settings.clock.is_timed() {
            return Ok(None);
        }
        let mut clock = game.clock.clone();
        op(&mut clock)?;
        Ok(Some(clock.view(self.at.now)))
    }

    /// The player whose running clock has run out by now, if any.
    pub(super) fn flagged(&self) -> Option<Color> {
        let game = &self.game;
        game.stage
            .clock_runs()
            .then(|| game.clock.check_flag(self.at.now))
            .flatten()
    }

    /// What is due by itself at this instant: a scheduled start, then a forfeit, a flag,
    /// or the end of the dead-stone phase.
    pub(super) fn timer(&mut self) -> Result<(), Refusal> {
        let now = self.at.now;
        if let Stage::Scheduled(s) = &self.game.stage
            && s.begins_at <= now
        {
            let (to_move, begins_at, missed) = (self.game.to_move(), s.begins_at, s.missed);
            // The clock runs from the start itself, however late the timer fires.
            let clock = self.clock_after(|c| match missed {
                true => Ok(()),
                false => c.start(to_move, begins_at),
            });
            match clock {
                Ok(clock) => self.push(GameEvent::GameBegan { clock })?,
                Err(flag) => return self.push(time_loss(flag.color)),
            }
        }
        if matches!(self.game.stage, Stage::Ended(_)) {
            return Ok(());
        }
        let forfeit = match self.game.ever_present {
            _ if self.game.forfeit_at.is_none_or(|t| t > now) => None,
            [false, false] => Some(GameResult::DoubleForfeit),
            [false, true] => Some(GameResult::Forfeit {
                winner: Color::White,
            }),
            [true, false] => Some(GameResult::Forfeit {
                winner: Color::Black,
            }),
            [true, true] => None,
        };
        if let Some(result) = forfeit {
            return self.push(ended(result, None));
        }
        if let Some(loser) = self.flagged() {
            let end = match self.abortable() {
                true => aborted(),
                false => time_loss(loser),
            };
            return self.push(end);
        }
        if let Stage::Scoring(s) = &self.game.stage
            && s.until <= now
        {
            // Time is up for marking and the marks are not agreed: that is a dispute,
            // settled as one. Nobody's silence counts as consent to marks it never saw
            // through (a player cannot win by marking live stones and waiting).
            return self.dispute(None);
        }
        Ok(())
    }

    pub(super) fn action(&mut self, who: Color, action: &GameAction) -> Result<(), Refusal> {
        if matches!(self.game.stage, Stage::Ended(_)) {
            return Err(refuse(ErrorCode::WrongPhase, "the game is over"));
        }
        match action {
            GameAction::Resign {} => self.push(ended(
                GameResult::Resignation {
                    winner: who.opponent(),
                },
                None,
            )),
            GameAction::Chat { text } => self.chat(who, text),
            GameAction::Play {
                move_number,
                vertex,
            } => self.play(who, *move_number, *vertex),
            GameAction::Pass { move_number } => self.play(who, *move_number, Move::Pass),
            GameAction::Pause {} => self.pause(who),
            GameAction::Resume {} => self.resume(who),
            GameAction::Seal {
                move_number,
                vertex,
            } => self.seal(who, *move_number, *vertex),
            GameAction::ClaimWin {} => self.claim(who),
            GameAction::Abort {} => self.abort(who),
            GameAction::PlaceHandicap { vertices } => self.place_handicap(who, vertices),
            GameAction::MarkDead { vertex, dead } => self.mark(who, *vertex, *dead),
            GameAction::AcceptScore { marks_seq } => self.accept(who, *marks_seq),
            GameAction::RejectScore {} => {
                self.scoring()?;
                self.dispute(Some(who))
            }
            GameAction::RefereeCall { message } => self.call_referee(who, message),
            // A connection's own business, never a room's.
            GameAction::Join { .. } | GameAction::Leave {} => Err(refuse(
                ErrorCode::BadRequest,
                "joining and leaving are not actions in a game",
            )),
            _ => Err(refuse(
                ErrorCode::Forbidden,
                "only a referee or an admin may do this",
            )),
        }
    }

    /// Refuses, with `why`, what only a live game has (its players at the board now).
    fn live_only(&self, why: &str) -> Result<(), Refusal> {
        match self.game.settings.correspondence {
            true => Err(refuse(ErrorCode::Forbidden, why)),
            false => Ok(()),
        }
    }

    fn chat(&mut self, who: Color, text: &str) -> Result<(), Refusal> {
        if self.game.settings.fair_play == crate::protocol::FairPlay::Tournament {
            return Err(refuse(
                ErrorCode::Forbidden,
                "the players' chat is off in tournament games",
            ));
        }
        let text = text.trim();
        if text.is_empty() || text.chars().count() > MAX_CHAT_CHARS {
            return Err(refuse(
                ErrorCode::BadRequest,
                format!("chat text must have 1 to {MAX_CHAT_CHARS} characters"),
            ));
        }
        self.push(GameEvent::Chat {
            from: self.game.player(who).clone(),
            text: text.to_string(),
            at: self.at.wall_ms,
            muted: false,
        })
    }

    fn play(&mut self, who: Color, number: u32, mv: Move) -> Result<(), Refusal> {
        self.running()?;
        self.not_adjourned()?;
        self.numbered(number)?;
        if who != self.game.to_move() {
            return Err(refuse(ErrorCode::NotYourTurn, "it is your opponent's move"));
        }
        if let Some(loser) = self.flagged() {
            let end = match self.abortable() {
                true => aborted(),
                false => time_loss(loser),
            };
            return self.push(end);
        }
        match self.game.game.check(who, mv) {
            Ok(()) => self.move_played(who, mv, None),
            // Off the board is no move at all, so it is refused even in strict mode.
            Err(e) if self.game.settings.strict_illegal && e.reason() != "off_board" => {
                self.push(GameEvent::IllegalAttempt {
                    move_number: number,
                    color: who,
                    vertex: mv,
                    reason: e.reason().to_string(),
                })?;
                self.move_played(who, Move::Pass, None)
            }
            Err(e) => Err(Refusal::illegal(e)),
        }
    }

    /// Plays a move checked legal, then starts scoring if it was the second pass.
    fn move_played(&mut self, color: Color, mv: Move, sealed: Option<Move>) -> Result<(), Refusal> {
        let game = &self.game;
        let captures = game.game.captures(color, mv).map_err(Refusal::illegal)?;
        let elapsed = match game.clock.running() {
            Some(running) if running == color => game.clock.elapsed(self.at.now).unwrap_or(0),
            _ => 0,
        };
        let mut quota = game.lag[color.index()];
        let credit = quota.credit(self.at.lag_ms, elapsed);
        let now = self.at.now;
        // An opened sealed move starts the next clock only for a player who is here.
        let waits = sealed.is_some() && !game.is_online(color.opponent());
        let event = match self.clock_after(|c| {
            c.on_move(color, now, credit)?;
            if waits { c.stop(now) } else { Ok(()) }
        }) {
            Ok(clock) => GameEvent::MovePlayed {
                move_number: self.game.move_count() + 1,
                color,
                vertex: mv,
                captures,
                clock,
                at: self.at.wall_ms,
                sealed,
                lag_credit_ms: credit,
                planned: false,
            },
            Err(_) => return self.push(time_loss(color)),
        };
        crate::metrics::lag_credit(credit);
        self.push(event)?;
        if mv == Move::Pass && self.game.passes() >= 2 {
            let disputes = self.game.disputes;
            self.push(GameEvent::ScoringStarted { disputes })?;
        }
        Ok(())
    }

    fn pause(&mut self, who: Color) -> Result<(), Refusal> {
        self.live_only(
            "agreed pauses are for live games: a correspondence game's clock counts days",
        )?;
        let requested = match self.running()? {
            Play::Running { pause_requested_by } => *pause_requested_by,
            _ => None,
        };
        if let Some(loser) = self.flagged() {
            let end = match self.abortable() {
                true => aborted(),
                false => time_loss(loser),
            };
            return self.push(end);
        }
        match requested {
            Some(by) if by != who => {
                let now = self.at.now;
                match self.clock_after(|c| c.pause(now)) {
                    Ok(clock) => self.push(GameEvent::Paused { clock }),
                    Err(flag) => self.push(time_loss(flag.color)),
                }
            }
            Some(_) => Ok(()),
            None => self.push(GameEvent::PauseRequested { by: who }),
        }
    }

    fn resume(&mut self, who: Color) -> Result<(), Refusal> {
        let (requested, sealed) = match &self.game.stage {
            Stage::Play(Play::Paused {
                resume_requested_by,
            }) => (*resume_requested_by, None),
            Stage::Play(Play::Adjourned {
                sealed,
                resume_requested_by,
            }) => (*resume_requested_by, Some(*sealed)),
            Stage::Play(Play::Halted) => {
                return Err(refuse(
                    ErrorCode::WrongPhase,
                    "the referee paused this game: only a referee resumes it",
                ));
            }
            _ => {
                return Err(refuse(
                    ErrorCode::WrongPhase,
                    "the game is neither paused nor adjourned",
                ));
            }
        };
        if sealed.is_some() && self.game.adjourn_at.is_some() {
            return Err(refuse(
                ErrorCode::WrongPhase,
                "the referee adjourned this game and opens the sealed move",
            ));
        }
        match requested {
            Some(by) if by != who => self.resumption(sealed),
            Some(_) => Ok(()),
            None => self.push(GameEvent::ResumeRequested { by: who }),
        }
    }

    /// Both agreed to go on: clocks run again; an adjourned game's sealed move is played
    /// first, or counts as a pass when the point is occupied or the move illegal.
    fn resumption(&mut self, sealed: Option<Sealed>) -> Result<(), Refusal> {
        let clock = match sealed {
            // The sealed move is played from stopped clocks: it costs no time.
            Some(_) => self.clock_after(|_| Ok(())),
            None => self.clocks_on(),
        };
        let clock = match clock {
            Ok(clock) => clock,
            Err(flag) => return self.push(time_loss(flag.color)),
        };
        self.push(GameEvent::Resumed { clock })?;
        match sealed {
            Some(sealed) => self.open_sealed(sealed),
            None => Ok(()),
        }
    }

    /// Both clocks as play goes on after a pause: the clock of the player to move runs if
    /// they are here; an absent one's starts when they come back, as at the start and
    /// after a restart (their opponent may claim meanwhile).
    pub(super) fn clocks_on(&self) -> Result<Option<ClockView>, Flagged> {
        let (to_move, now) = (self.game.to_move(), self.at.now);
        let present = self.game.is_online(to_move);
        self.clock_after(|c| {
            c.resume(now);
            match (present, c.running()) {
                (false, _) => c.stop(now),
                (true, None) => c.start(to_move, now),
                (true, Some(_)) => Ok(()),
            }
        })
    }

    /// Plays a sealed move, or a pass when the point is occupied or the move illegal.
    pub(super) fn open_sealed(&mut self, Sealed { by, mv }: Sealed) -> Result<(), Refusal> {
        let played = if self.game.game.check(by, mv).is_ok() {
            mv
        } else {
            Move::Pass
        };
        self.move_played(by, played, Some(mv))
    }

    fn seal(&mut self, who: Color, number: u32, mv: Move) -> Result<(), Refusal> {
        self.running()?;
        self.numbered(number)?;
        if who != self.game.to_move() {
            return Err(refuse(
                ErrorCode::NotYourTurn,
                "only the player to move seals a move",
            ));
        }
        if let Some(loser) = self.flagged() {
            let end = match self.abortable() {
                true => aborted(),
                false => time_loss(loser),
            };
            return self.push(end);
        }
        let now = self.at.now;
        match self.clock_after(|c| c.stop(now)) {
            Ok(clock) => self.push(GameEvent::MoveSealed {
                by: who,
                move_number: number,
                vertex: Some(mv),
                clock,
            }),
            Err(flag) => self.push(time_loss(flag.color)),
        }
    }

    /// Whether the game has no move yet and its lateness is not the rules' business (it
    /// is neither scheduled nor a tournament's): it then ends aborted, not lost, when
    /// its first player's time or the wait for them runs out.
    fn abortable(&self) -> bool {
        let settings = &self.game.settings;
        self.game.move_count() == 0
            && settings.start_at.is_none()
            && settings.fair_play != crate::protocol::FairPlay::Tournament
    }

    /// `abort`: a player ends a game in which they have not made a move yet.
    fn abort(&mut self, who: Color) -> Result<(), Refusal> {
        let settings = &self.game.settings;
        if settings.start_at.is_some()
            || settings.fair_play == crate::protocol::FairPlay::Tournament
        {
            return Err(refuse(
                ErrorCode::Forbidden,
                "a scheduled or tournament game cannot be aborted: its lateness and forfeit rules stand",
            ));
        }
        if self
            .game
            .rules()
            .moves()
            .iter()
            .any(|(color, _)| *color == who)
        {
            return Err(refuse(
                ErrorCode::Forbidden,
                "you have made a move: a game is aborted only before your first",
            ));
        }
        self.push(aborted())
    }

    fn claim(&mut self, who: Color) -> Result<(), Refusal> {
        self.live_only(
            "a correspondence game is not claimed for absence: its clock in days decides",
        )?;
        // Stepping away during an agreed pause or an adjournment is allowed.
        if self.game.stage != Stage::Handicap {
            self.running().map_err(|r| match self.game.stage {
                Stage::Play(_) => r,
                _ => refuse(
                    ErrorCode::WrongPhase,
                    "a game can be claimed only during play",
                ),
            })?;
        }
        let game = &self.game;
        let absent = who.opponent();
        if game.to_move() != absent {
            return Err(refuse(
                ErrorCode::Forbidden,
                "a game is claimed only while the absent opponent is to move; it is your move",
            ));
        }
        let i = absent.index();
        if game.forfeit_at.is_some() && !game.ever_present[i] {
            return Err(refuse(
                ErrorCode::Forbidden,
                "your opponent has not come yet: a late player loses by forfeit at start_at + forfeit_after_ms",
            ));
        }
        let wait = game.settings.claim_wait_ms();
        let away = game.absent_since[i]
            .filter(|_| !game.online[i])
            .map(|since| self.at.now.saturating_sub(since));
        // Untimed games with a stalling limit: the turn's length counts, present or not.
        let stalled = game
            .settings
            .stall_after_ms
            .filter(|_| !game.settings.clock.is_timed())
            .map(|limit| (self.at.now.saturating_sub(game.turn_since), limit));
        let forfeit = match self.abortable() {
            true => aborted(),
            false => ended(GameResult::Forfeit { winner: who }, None),
        };
        match (away, stalled) {
            (Some(ms), _) if ms >= wait => self.push(forfeit),
            (_, Some((ms, limit))) if ms >= limit => self.push(forfeit),
            (Some(ms), stalled) => {
                let left = stalled.map_or(wait - ms, |(t, limit)| (wait - ms).min(limit - t));
                Err(refuse(
                    ErrorCode::Forbidden,
                    format!(
                        "your opponent must be away {} s before you can claim the game",
                        wait.div_ceil(1000)
                    ),
                )
                .retry_after(left))
            }
            (None, Some((ms, limit))) => Err(refuse(
                ErrorCode::Forbidden,
                format!(
                    "your opponent has been to move {} s; a stall is claimed after {} s",
                    ms / 1000,
                    limit.div_ceil(1000)
                ),
            )
            .retry_after(limit - ms)),
            (None, None) => Err(refuse(
                ErrorCode::Forbidden,
                "your opponent is connected; a game is claimed only from an absent player",
            )),
        }
    }

    fn place_handicap(&mut self, who: Color, vertices: &[Vertex]) -> Result<(), Refusal> {
        self.in_stage(self.game.stage == Stage::Handicap)?;
        if who != Color::Black {
            return Err(refuse(
                ErrorCode::NotYourTurn,
                "Black places the handicap stones",
            ));
        }
        let handicap = self.game.settings.handicap;
        let mut sorted = vertices.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != vertices.len() || vertices.len() != usize::from(handicap) {
            return Err(refuse(
                ErrorCode::BadRequest,
                format!("place exactly {handicap} different points"),
            ));
        }
        if let Some(v) = vertices
            .iter()
            .find(|v| !self.game.game.board().contains(**v))
        {
            return Err(Refusal::illegal(rules::IllegalMove::OffBoard(*v)));
        }
        // The board holds the set stones of the ancient rules, if any (RULES.md §9.1).
        if let Some(v) = vertices
            .iter()
            .find(|v| self.game.game.board().get(**v).is_some())
        {
            return Err(Refusal::illegal(rules::IllegalMove::Occupied(*v)));
        }
        if let Some(loser) = self.flagged() {
            let end = match self.abortable() {
                true => aborted(),
                false => time_loss(loser),
            };
            return self.push(end);
        }
        let now = self.at.now;
        match self.clock_after(|c| c.on_move(Color::Black, now, 0).map(|_| ())) {
            Ok(clock) => self.push(GameEvent::HandicapPlaced {
                vertices: vertices.to_vec(),
                clock,
            }),
            Err(flag) => self.push(time_loss(flag.color)),
        }
    }

    fn mark(&mut self, who: Color, vertex: Vertex, dead: bool) -> Result<(), Refusal> {
        let scoring = self.scoring()?;
        let board = self.game.game.board();
        if !board.contains(vertex) {
            return Err(Refusal::illegal(rules::IllegalMove::OffBoard(vertex)));
        }
        let mut marks = scoring.dead.clone();
        if !marks.set_chain(board, vertex, dead) {
            return Err(refuse(
                ErrorCode::BadRequest,
                format!("there is no stone on {vertex}"),
            ));
        }
        if marks == scoring.dead {
            return Ok(());
        }
        self.push(GameEvent::DeadMarked {
            by: who,
            vertex,
            dead,
            marks: marks.iter().collect(),
        })
    }

    fn accept(&mut self, who: Color, marks_seq: Option<u64>) -> Result<(), Refusal> {
        let scoring = self.scoring()?;
        if marks_seq.is_some_and(|s| s != scoring.marks_seq) {
            return Err(refuse(
                ErrorCode::StaleMove,
                format!(
                    "the marks changed at seq {}; look at them again",
                    scoring.marks_seq
                ),
            ));
        }
        if scoring.accepted[who.index()] {
            return Ok(());
        }
        let both = scoring.accepted[who.opponent().index()];
        let dead = scoring.dead.clone();
        self.push(GameEvent::ScoreAccepted { by: who })?;
        if both {
            self.push(self.counted(&dead))?;
        }
        Ok(())
    }

    /// The marks are not agreed (`by` rejected them, or nobody accepted in time): the
    /// first time, play resumes to settle it; the second time, every stone still on the
    /// board counts as alive, since each side had the chance to capture what it claimed.
    fn dispute(&mut self, by: Option<Color>) -> Result<(), Refusal> {
        if self.game.disputes > 0 {
            return self.push(self.counted(&DeadStones::new()));
        }
        let (to_move, now) = (self.game.to_move(), self.at.now);
        match self.clock_after(|c| c.start(to_move, now)) {
            Ok(clock) => self.push(GameEvent::PlayResumed { by, to_move, clock }),
            Err(flag) => self.push(time_loss(flag.color)),
        }
    }

    /// The count with `dead` removed, as the event that ends the game.
    fn counted(&self, dead: &DeadStones) -> GameEvent {
        let (result, score) = self.count(dead);
        ended(result, Some(score))
    }

    /// The result and the count of the board with `dead` removed.
    pub(super) fn count(&self, dead: &DeadStones) -> (GameResult, ScoreView) {
        let game = &self.game;
        let prisoners = [
            game.game.prisoners(Color::Black),
            game.game.prisoners(Color::White),
        ];
        let settings = &game.settings;
        let score = rules::count(game.game.board(), dead, &settings.score_rules(), prisoners);
        (
            score.result,
            ScoreView {
                black: score.black,
                white: score.white,
                komi: settings.komi(),
                margin_stones: score.margin_stones(),
                chinese: score.chinese(),
                dead: dead.iter().collect(),
                tax: score.tax.map(|[black, white]| GroupTax { black, white }),
            },
        )
    }

    pub(super) fn in_stage(&self, fits: bool) -> Result<(), Refusal> {
        if fits {
            Ok(())
        } else {
            Err(refuse(
                ErrorCode::WrongPhase,
                format!("not now: the game is {}", self.game.stage.describe()),
            ))
        }
    }

    fn scoring(&self) -> Result<&Scoring, Refusal> {
        match &self.game.stage {
            Stage::Scoring(scoring) => Ok(scoring),
            _ => Err(self.in_stage(false).unwrap_err()),
        }
    }

    /// Play with the clocks running; refuses other stages, a pause, an adjournment.
    pub(super) fn running(&self) -> Result<&Play, Refusal> {
        match &self.game.stage {
            Stage::Play(play @ Play::Running { .. }) => Ok(play),
            Stage::Play(Play::Paused { .. }) => Err(refuse(
                ErrorCode::WrongPhase,
                "the game is paused; `resume` first",
            )),
            Stage::Play(Play::Adjourned { .. }) => Err(refuse(
                ErrorCode::WrongPhase,
                "the game is adjourned with a sealed move; `resume` first",
            )),
            _ => Err(self.in_stage(false).unwrap_err()),
        }
    }

    /// Refuses while a referee's adjournment is due and the move not yet sealed.
    pub(super) fn not_adjourned(&self) -> Result<(), Refusal> {
        if self.game.adjourn_at.is_some_and(|t| self.at.wall_ms >= t) {
            return Err(refuse(
                ErrorCode::WrongPhase,
                "the referee has adjourned the game: the player to move seals a move",
            ));
        }
        Ok(())
    }

    /// Refuses a move number that is not the next one.
    fn numbered(&self, number: u32) -> Result<(), Refusal> {
        let expected = self.game.move_count() + 1;
        if number == expected {
            Ok(())
        } else {
            Err(refuse(
                ErrorCode::StaleMove,
                format!("the next move is number {expected}, not {number}"),
            ))
        }
    }
}
