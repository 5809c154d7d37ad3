//! Applying one complete event to the game: the one path for a live decision and for a
//! replay of the stored log. An event that does not fit the stage or the position is an
//! error naming why, never skipped.

use super::{CHAT_KEPT, LiveGame, Moment, Play, ReplayError, Scoring, Sealed, Stage};
use crate::clock::{ClockView, Millis};
use crate::protocol::{ChatLine, GameEvent, Ruling};
use crate::rules::{Color, DeadStones, Vertex};

impl LiveGame {
    /// Applies event number `seq`, which must be the next one and must fit the game.
    pub fn apply(&mut self, event: &GameEvent, seq: u64, at: Moment) -> Result<(), ReplayError> {
        // Applied to a copy, so an event that fails halfway leaves no trace.
        let mut next = self.clone();
        next.apply_in_place(event, seq, at)?;
        *self = next;
        Ok(())
    }

    /// [`LiveGame::apply`] on this game itself, with no copy: an event that fails halfway
    /// leaves the game half changed. Only for a game that is thrown away on an error, as a
    /// decision's draft is, and a game being rebuilt from its log.
    pub(in crate::room) fn apply_in_place(
        &mut self,
        event: &GameEvent,
        seq: u64,
        at: Moment,
    ) -> Result<(), ReplayError> {
        if seq != self.seq + 1 {
            return Err(ReplayError {
                seq,
                reason: format!("expected event {}", self.seq + 1),
            });
        }
        self.seq = seq;
        self.record(event, seq, at.now)
            .map_err(|reason| ReplayError { seq, reason })
    }

    fn record(&mut self, event: &GameEvent, seq: u64, now: Millis) -> Result<(), String> {
        // Logs written before a start already past (or missed in downtime) was recorded
        // as `game_began` go straight on to play: its first move or handicap placement
        // begins the game, with the clock its own event records.
        if matches!(self.stage, Stage::Scheduled(_))
            && matches!(
                event,
                GameEvent::MovePlayed { .. } | GameEvent::HandicapPlaced { .. }
            )
        {
            self.stage = LiveGame::opening(&self.settings);
        }
        // Play begins, or goes on after it stood still.
        let goes_on = matches!(
            event,
            GameEvent::GameBegan { .. }
                | GameEvent::Resumed { .. }
                | GameEvent::RefereeResumed { .. }
                | GameEvent::PlayResumed { .. }
        );
        if goes_on
            || matches!(
                event,
                GameEvent::MovePlayed { .. } | GameEvent::HandicapPlaced { .. }
            )
        {
            self.turn_since = now;
        }
        if goes_on {
            // Stepping away before the start or while play stood still is allowed, so
            // absence, for claims, counts from when play went on.
            for since in self.absent_since.iter_mut().flatten() {
                *since = (*since).max(now);
            }
        }
        if event.is_referees() || matches!(event, GameEvent::GameEnded { .. }) {
            // The referee has come (or the game is over): the players' calls are answered.
            self.calls = [None, None];
        }
        match event {
            GameEvent::GameCreated { .. } => Err("a game is created only once".into()),
            GameEvent::GameBegan { .. }
            | GameEvent::HandicapPlaced { .. }
            | GameEvent::MovePlayed { .. }
            | GameEvent::MoveSealed { .. }
            | GameEvent::IllegalAttempt { .. } => self.record_play(event, seq, now),
            GameEvent::PauseRequested { .. }
            | GameEvent::Paused { .. }
            | GameEvent::ResumeRequested { .. }
            | GameEvent::Resumed { .. }
            | GameEvent::RefereePaused { .. }
            | GameEvent::RefereeResumed { .. }
            | GameEvent::AdjournmentScheduled { .. } => self.record_pause(event, seq, now),
            GameEvent::ScoringStarted { .. }
            | GameEvent::DeadMarked { .. }
            | GameEvent::ScoreAccepted { .. }
            | GameEvent::PlayResumed { .. } => self.record_scoring(event, seq, now),
            GameEvent::GameEnded { .. }
            | GameEvent::Ruled { .. }
            | GameEvent::ResultChanged { .. } => self.record_end(event, seq, now),
            GameEvent::Chat { .. }
            | GameEvent::Warned { .. }
            | GameEvent::ClockAdjusted { .. }
            | GameEvent::RefereeCalled { .. }
            | GameEvent::Presence { .. } => self.record_table(event, seq, now),
            GameEvent::Vacation { color, away } => {
                self.expect(
                    self.settings.correspondence && !matches!(self.stage, Stage::Ended(_)),
                )?;
                self.clock
                    .set_away(*color, *away, now)
                    .map_err(|f| f.to_string())
            }
            GameEvent::WeekendSet { color, calendar } => {
                self.expect(self.settings.correspondence && self.settings.weekends)?;
                self.clock.set_weekend(*color, calendar.weekend().ok());
                Ok(())
            }
            GameEvent::DeadlineWarned { color, deadline } => {
                self.warned = Some((*color, *deadline));
                Ok(())
            }
            GameEvent::VacationSpent { color, ms, .. } => {
                self.expect(self.clock.running() == Some(*color))?;
                self.clock.hold(*color, *ms);
                Ok(())
            }
        }
    }

    /// The game begins, a handicap is placed, a move is played, sealed or attempted.
    fn record_play(&mut self, event: &GameEvent, seq: u64, now: Millis) -> Result<(), String> {
        match event {
            GameEvent::GameBegan { clock } => {
                self.expect(matches!(self.stage, Stage::Scheduled(_)))?;
                self.stage = LiveGame::opening(&self.settings);
                self.set_clock(*clock, now)?;
            }
            GameEvent::HandicapPlaced { vertices, clock } => {
                self.expect(self.stage == Stage::Handicap)?;
                self.place_handicap(vertices)?;
                self.stage = Stage::Play(Play::RUNNING);
                match clock {
                    Some(_) => self.set_clock(*clock, now)?,
                    // Logs from before the placement recorded its clock.
                    None if self.settings.clock.is_timed() => {
                        self.clock
                            .on_move(Color::Black, now, 0)
                            .map_err(|_| "Black had run out of time".to_string())?;
                    }
                    None => {}
                }
            }
            GameEvent::MovePlayed {
                move_number,
                color,
                vertex,
                captures,
                clock,
                lag_credit_ms,
                ..
            } => {
                self.expect(matches!(self.stage, Stage::Play(Play::Running { .. })))?;
                if *move_number != self.move_count() + 1 || *color != self.game.to_move() {
                    return Err(format!(
                        "move {move_number} by {color} is not the next move (number {}, {} to play)",
                        self.move_count() + 1,
                        self.game.to_move()
                    ));
                }
                self.game
                    .play(*color, *vertex)
                    .map_err(|e| format!("{color} {vertex} is not legal here: {e}"))?;
                if self.game.last_captures() != captures.as_slice() {
                    return Err(format!("{color} {vertex} does not capture what it says"));
                }
                self.stage = Stage::Play(Play::RUNNING);
                self.move_seqs.push(seq);
                self.move_times.push(now);
                self.lag[color.index()].credit(*lag_credit_ms, *lag_credit_ms);
                self.set_clock(*clock, now)?;
            }
            GameEvent::MoveSealed {
                by,
                move_number,
                vertex,
                clock,
            } => {
                self.expect(matches!(self.stage, Stage::Play(Play::Running { .. })))?;
                let Some(mv) = vertex else {
                    return Err("a stored sealed move must hold its point".into());
                };
                if *move_number != self.move_count() + 1 || *by != self.game.to_move() {
                    return Err("only the next move can be sealed".into());
                }
                self.stage = Stage::Play(Play::Adjourned {
                    sealed: Sealed { by: *by, mv: *mv },
                    resume_requested_by: None,
                });
                self.set_clock(*clock, now)?;
            }
            // The lost turn follows as a pass.
            GameEvent::IllegalAttempt {
                move_number, color, ..
            } => {
                self.expect(matches!(self.stage, Stage::Play(Play::Running { .. })))?;
                if *move_number != self.move_count() + 1 || *color != self.game.to_move() {
                    return Err(format!("{color} is not to play move {move_number}"));
                }
            }
            _ => return Err(self.misplaced()),
        }
        Ok(())
    }

    /// Play stands still or goes on: the players' pause and resume, the referee's.
    fn record_pause(&mut self, event: &GameEvent, _seq: u64, now: Millis) -> Result<(), String> {
        match event {
            GameEvent::PauseRequested { by } => {
                self.expect(matches!(
                    self.stage,
                    Stage::Play(Play::Running {
                        pause_requested_by: None
                    })
                ))?;
                self.stage = Stage::Play(Play::Running {
                    pause_requested_by: Some(*by),
                });
            }
            GameEvent::Paused { clock } => {
                self.expect(matches!(self.stage, Stage::Play(Play::Running { .. })))?;
                self.stage = Stage::Play(Play::Paused {
                    resume_requested_by: None,
                });
                self.set_clock(*clock, now)?;
            }
            GameEvent::ResumeRequested { by } => match &mut self.stage {
                Stage::Play(
                    Play::Paused {
                        resume_requested_by: request @ None,
                    }
                    | Play::Adjourned {
                        resume_requested_by: request @ None,
                        ..
                    },
                ) => *request = Some(*by),
                _ => return Err(self.misplaced()),
            },
            GameEvent::Resumed { clock } => {
                self.expect(matches!(
                    self.stage,
                    Stage::Play(Play::Paused { .. } | Play::Adjourned { .. })
                ))?;
                // An adjourned game's sealed move follows as its own event.
                self.stage = Stage::Play(Play::RUNNING);
                self.set_clock(*clock, now)?;
            }
            GameEvent::RefereePaused { clock, .. } => {
                self.expect(matches!(self.stage, Stage::Play(Play::Running { .. })))?;
                self.stage = Stage::Play(Play::Halted);
                self.set_clock(*clock, now)?;
            }
            GameEvent::RefereeResumed { clock, .. } => {
                let sealed = matches!(self.stage, Stage::Play(Play::Adjourned { .. }))
                    && self.adjourn_at.is_some();
                self.expect(self.stage == Stage::Play(Play::Halted) || sealed)?;
                // A sealed move, opened here, follows as its own event.
                if sealed {
                    self.adjourn_at = None;
                }
                self.stage = Stage::Play(Play::RUNNING);
                self.set_clock(*clock, now)?;
            }
            GameEvent::AdjournmentScheduled { at, .. } => {
                self.expect(matches!(self.stage, Stage::Play(Play::Running { .. })))?;
                self.adjourn_at = Some(*at);
            }
            _ => return Err(self.misplaced()),
        }
        Ok(())
    }

    /// The dead-stone phase: its start, the marks, the agreement, and play resumed.
    fn record_scoring(&mut self, event: &GameEvent, seq: u64, now: Millis) -> Result<(), String> {
        match event {
            GameEvent::ScoringStarted { disputes } => {
                self.expect(matches!(self.stage, Stage::Play(Play::Running { .. })))?;
                if self.passes() < 2 || *disputes != self.disputes {
                    return Err("scoring starts after two passes in a row".into());
                }
                self.stage = Stage::Scoring(Scoring {
                    dead: DeadStones::new(),
                    accepted: [false; 2],
                    marks_seq: seq,
                    until: now + self.settings.scoring_ms,
                });
                self.stop_clock(now);
            }
            GameEvent::DeadMarked { marks, .. } => {
                let Stage::Scoring(scoring) = &mut self.stage else {
                    return Err(self.misplaced());
                };
                let mut dead = DeadStones::new();
                for &v in marks {
                    if !dead.set_chain(self.game.board(), v, true) {
                        return Err(format!("there is no stone on {v} to mark"));
                    }
                }
                scoring.dead = dead;
                scoring.accepted = [false; 2];
                scoring.marks_seq = seq;
            }
            GameEvent::ScoreAccepted { by } => {
                let Stage::Scoring(scoring) = &mut self.stage else {
                    return Err(self.misplaced());
                };
                scoring.accepted[by.index()] = true;
            }
            GameEvent::PlayResumed { to_move, clock, .. } => {
                self.expect(matches!(self.stage, Stage::Scoring(_)))?;
                if *to_move != self.game.to_move() {
                    return Err(format!("{to_move} is not to move"));
                }
                self.stage = Stage::Play(Play::RUNNING);
                self.disputes += 1;
                self.resumed_at = self.game.moves().len();
                self.set_clock(*clock, now)?;
            }
            _ => return Err(self.misplaced()),
        }
        Ok(())
    }

    /// The end, a ruling, and a result changed after it.
    fn record_end(&mut self, event: &GameEvent, _seq: u64, now: Millis) -> Result<(), String> {
        match event {
            GameEvent::GameEnded {
                result,
                score,
                reason,
                clock,
            } => {
                let scoring = match &self.stage {
                    Stage::Ended(_) => return Err(self.misplaced()),
                    Stage::Scoring(scoring) => Some(scoring.clone()),
                    _ => None,
                };
                self.stage = Stage::Ended(super::Ended {
                    result: *result,
                    reason: reason.clone(),
                    score: score.clone(),
                    counted: score.is_some(),
                    scoring,
                });
                self.stop_clock(now);
                if let Some(view) = clock {
                    self.clock.restore(*view);
                }
            }
            // The ending follows as its own event.
            GameEvent::Ruled { .. } => self.expect(!matches!(self.stage, Stage::Ended(_)))?,
            GameEvent::ResultChanged {
                result,
                ruling,
                score,
                ..
            } => {
                let Stage::Ended(ended) = &mut self.stage else {
                    return Err(self.misplaced());
                };
                if let (Some(score), Some(scoring)) = (score, &mut ended.scoring) {
                    let mut dead = DeadStones::new();
                    for &v in &score.dead {
                        if !dead.set_chain(self.game.board(), v, true) {
                            return Err(format!("there is no stone on {v} to count dead"));
                        }
                    }
                    scoring.dead = dead;
                }
                // The ruling's own result, where `result`'s string lost which one it was.
                ended.result = ruling.map_or(*result, Ruling::result);
                ended.reason = match score {
                    Some(_) => "score",
                    None => ended.result.reason(),
                }
                .into();
                ended.score = score.clone();
            }
            _ => return Err(self.misplaced()),
        }
        Ok(())
    }

    /// What happens beside play: chat, warnings, clock adjustments, calls, presence.
    fn record_table(&mut self, event: &GameEvent, seq: u64, now: Millis) -> Result<(), String> {
        match event {
            GameEvent::Chat { from, text, at, .. } => {
                self.expect(!matches!(self.stage, Stage::Ended(_)))?;
                if self.chat.len() == CHAT_KEPT {
                    self.chat.pop_front();
                }
                self.chat.push_back(ChatLine {
                    seq,
                    from: from.clone(),
                    text: text.clone(),
                    at: *at,
                });
            }
            GameEvent::Warned {
                color, warnings, ..
            } => {
                self.expect(!matches!(self.stage, Stage::Ended(_)))?;
                let count = &mut self.warnings[color.index()];
                if *warnings != *count + 1 {
                    return Err(format!(
                        "{color} has {count} warnings, not {}",
                        warnings - 1
                    ));
                }
                *count = *warnings;
            }
            GameEvent::ClockAdjusted { clock, .. } => {
                self.expect(!matches!(self.stage, Stage::Ended(_)))?;
                self.set_clock(*clock, now)?;
            }
            GameEvent::RefereeCalled { color, message, at } => {
                self.expect(!matches!(self.stage, Stage::Ended(_)))?;
                self.calls[color.index()] = Some(super::OpenCall {
                    seq,
                    message: message.clone(),
                    at: *at,
                });
            }
            GameEvent::Presence {
                color,
                online,
                clock,
            } => {
                if clock.is_some() {
                    self.set_clock(*clock, now)?;
                }
                let i = color.index();
                self.online[i] = *online;
                if *online {
                    self.ever_present[i] = true;
                    self.absent_since[i] = None;
                } else {
                    self.absent_since[i] = Some(now);
                }
            }

            _ => return Err(self.misplaced()),
        }
        Ok(())
    }

    /// Passes at the end of the record since play last resumed.
    pub(super) fn passes(&self) -> usize {
        (self.game.passes_in_row() as usize).min(self.game.moves().len() - self.resumed_at)
    }

    fn expect(&self, fits: bool) -> Result<(), String> {
        if fits { Ok(()) } else { Err(self.misplaced()) }
    }

    fn misplaced(&self) -> String {
        format!("not possible while the game is {}", self.stage.describe())
    }

    fn place_handicap(&mut self, vertices: &[Vertex]) -> Result<(), String> {
        let mut distinct = vertices.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() != vertices.len() || vertices.len() != usize::from(self.settings.handicap)
        {
            return Err(format!(
                "{} handicap stones are due, on different points",
                self.settings.handicap
            ));
        }
        self.game = self
            .settings
            .starting_game(vertices)
            .map_err(|e| e.to_string())?;
        self.handicap_stones = vertices.to_vec();
        Ok(())
    }

    /// Sets both clocks as an event recorded them, the side it shows running running
    /// from `now` (a replay's `now` means nothing: the rebuilt game stops every clock).
    fn set_clock(&mut self, view: Option<ClockView>, now: Millis) -> Result<(), String> {
        match (view, self.settings.clock.is_timed()) {
            (Some(view), true) => {
                self.clock.restore(view);
                let flagged = |_| "the clock it records had run out".to_string();
                match (view.running, view.paused) {
                    (Some(color), _) => self.clock.start(color, now).map_err(flagged)?,
                    // Paused with the side to move's clock held, as `pause` leaves it.
                    (None, true) => {
                        self.clock
                            .start(self.game.to_move(), now)
                            .map_err(flagged)?;
                        self.clock.pause(now).map_err(flagged)?;
                    }
                    (None, false) => {}
                }
                Ok(())
            }
            (None, false) => Ok(()),
            (Some(_), false) => Err("an untimed game's event has a clock".into()),
            (None, true) => Err("a timed game's event has no clock".into()),
        }
    }

    /// Stops the clocks at `now`, charging the running side; a side that ran out shows
    /// zero (the events that stop the clocks end play, and the decision saw any flag).
    fn stop_clock(&mut self, now: Millis) {
        self.clock.restore(self.clock.view(now));
    }
}
