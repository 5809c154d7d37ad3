//! The referee's actions (Art. 14, 16.3, 20, 23; client-protocol/referee.md): who may
//! take them, and the events each records. Like a player's action, a referee's is
//! decided on a copy of the game and becomes numbered events, or is refused and changes
//! nothing.

use super::decide::{Draft, ended, refuse, time_loss};
use super::{LiveGame, Moment, Play, Stage, Step};
use crate::protocol::{
    ErrorCode, GameAction, GameEvent, MAX_REASON_CHARS, RefereeCall, Refusal, Role, Ruling,
    UserInfo,
};
use crate::rules::{self, Color, DeadStones, Vertex};

/// The longest time a referee adds or takes away at once: a day.
const MAX_ADJUST_MS: u64 = 24 * 3600 * 1000;

/// Whether `act` is a referee's (a player asking gets `forbidden`).
pub fn is_referee_act(act: &GameAction) -> bool {
    matches!(
        act,
        GameAction::Warn { .. }
            | GameAction::AdjustClock { .. }
            | GameAction::RefereePause { .. }
            | GameAction::Adjourn { .. }
            | GameAction::RefereeResume { .. }
            | GameAction::Rule { .. }
            | GameAction::CorrectCount { .. }
            | GameAction::ChangeResult { .. }
    )
}

/// The referee's reason in words, which every referee action carries.
fn reason(act: &GameAction) -> Option<&str> {
    match act {
        GameAction::Warn { reason, .. }
        | GameAction::AdjustClock { reason, .. }
        | GameAction::RefereePause { reason }
        | GameAction::Adjourn { reason, .. }
        | GameAction::RefereeResume { reason }
        | GameAction::Rule { reason, .. }
        | GameAction::CorrectCount { reason, .. }
        | GameAction::ChangeResult { reason, .. } => Some(reason),
        _ => None,
    }
}

impl LiveGame {
    /// Whether `user` may referee this game: any admin, the referee assigned to it, or
    /// any referee when none is assigned; never one of its players.
    pub fn may_referee(&self, user: &UserInfo) -> Result<(), Refusal> {
        if self.color_of(&user.id).is_some() {
            return Err(refuse(
                ErrorCode::Forbidden,
                "a player cannot referee their own game",
            ));
        }
        match (user.role, self.settings.referee.as_deref()) {
            (Role::Admin, _) => Ok(()),
            (Role::Referee, None) => Ok(()),
            (Role::Referee, Some(assigned)) if assigned == user.id => Ok(()),
            (Role::Referee, Some(_)) => Err(refuse(
                ErrorCode::Forbidden,
                "another referee is assigned to this game",
            )),
            _ => Err(refuse(
                ErrorCode::Forbidden,
                "only a referee or an admin may do this",
            )),
        }
    }

    /// The players' open calls for the referee, oldest first.
    pub fn open_calls(&self) -> Vec<RefereeCall> {
        let mut calls: Vec<RefereeCall> = [Color::Black, Color::White]
            .into_iter()
            .filter_map(|color| {
                let call = self.calls[color.index()].as_ref()?;
                Some(RefereeCall {
                    seq: call.seq,
                    color,
                    from: self.player(color).clone(),
                    message: call.message.clone(),
                    at: call.at,
                })
            })
            .collect();
        calls.sort_by_key(|c| c.seq);
        calls
    }

    /// Decides what referee `by` doing `act` at `at` records, or refuses it; `self` is
    /// never changed. A `replay` ruling names the new game's id, drawn here.
    pub fn referee(&self, by: &UserInfo, act: &GameAction, at: Moment) -> Result<Step, Refusal> {
        self.may_referee(by)?;
        let Some(reason) = reason(act).map(str::trim) else {
            return Err(refuse(ErrorCode::BadRequest, "not a referee's action"));
        };
        if reason.is_empty() || reason.chars().count() > MAX_REASON_CHARS {
            return Err(refuse(
                ErrorCode::BadRequest,
                format!("a referee's reason must have 1 to {MAX_REASON_CHARS} characters"),
            ));
        }
        let mut draft = Draft::new(self, at);
        let (by, reason) = (by.clone(), reason.to_string());
        match act {
            GameAction::Warn { color, .. } => draft.warn(by, *color, reason)?,
            GameAction::AdjustClock {
                color, delta_ms, ..
            } => draft.adjust_clock(by, *color, *delta_ms, reason)?,
            GameAction::RefereePause { .. } => draft.halt(by, reason)?,
            GameAction::Adjourn { at, .. } => draft.adjourn(by, *at, reason)?,
            GameAction::RefereeResume { .. } => draft.unhalt(by, reason)?,
            GameAction::Rule { ruling, .. } => {
                let replay = (*ruling == Ruling::Replay).then(crate::ids::new_id);
                draft.rule(by, *ruling, reason, replay)?
            }
            GameAction::CorrectCount { dead, .. } => draft.correct_count(by, dead, reason)?,
            GameAction::ChangeResult { ruling, .. } => draft.change_result(by, *ruling, reason)?,
            _ => return Err(refuse(ErrorCode::BadRequest, "not a referee's action")),
        }
        Ok(draft.finish())
    }
}

impl Draft {
    /// A player calls the referee; one open call each, so a game holds at most two.
    pub(super) fn call_referee(&mut self, who: Color, message: &str) -> Result<(), Refusal> {
        let message = message.trim();
        if message.is_empty() || message.chars().count() > MAX_REASON_CHARS {
            return Err(refuse(
                ErrorCode::BadRequest,
                format!("a call's message must have 1 to {MAX_REASON_CHARS} characters"),
            ));
        }
        if self.game.calls[who.index()].is_some() {
            return Err(refuse(
                ErrorCode::LimitReached,
                "your call is still open; a referee will come to this game",
            ));
        }
        self.push(GameEvent::RefereeCalled {
            color: who,
            message: message.to_string(),
            at: self.at.wall_ms,
        })
    }

    /// Refuses a finished game, for the actions that belong to a game in progress.
    fn unfinished(&self) -> Result<(), Refusal> {
        self.in_stage(!matches!(self.game.stage, Stage::Ended(_)))
    }

    fn warn(&mut self, by: UserInfo, color: Color, reason: String) -> Result<(), Refusal> {
        self.unfinished()?;
        let warnings = self.game.warnings[color.index()] + 1;
        self.push(GameEvent::Warned {
            color,
            warnings,
            by,
            reason,
        })?;
        if warnings >= self.game.settings.warnings_to_lose {
            let winner = color.opponent();
            self.push(ended(rules::GameResult::Forfeit { winner }, None))?;
        }
        Ok(())
    }

    fn adjust_clock(
        &mut self,
        by: UserInfo,
        color: Color,
        delta_ms: i64,
        reason: String,
    ) -> Result<(), Refusal> {
        self.unfinished()?;
        if !self.game.settings.clock.is_timed() {
            return Err(refuse(ErrorCode::BadRequest, "this game has no clock"));
        }
        if delta_ms == 0 || delta_ms.unsigned_abs() > MAX_ADJUST_MS {
            return Err(refuse(
                ErrorCode::BadRequest,
                format!("delta_ms must be non-zero and at most {MAX_ADJUST_MS} either way"),
            ));
        }
        if let Some(loser) = self.flagged() {
            return self.push(time_loss(loser));
        }
        let mut clock = self.game.clock.view(self.at.now);
        let tc = self.game.settings.clock;
        let flagged = clock.adjust(&tc, color, delta_ms).is_err();
        if flagged {
            // The penalty took all the time left: the clocks stop and the player loses.
            clock.running = None;
            clock.paused = false;
        }
        self.push(GameEvent::ClockAdjusted {
            color,
            delta_ms,
            by,
            reason,
            clock: Some(clock),
        })?;
        if flagged {
            self.push(time_loss(color))?;
        }
        Ok(())
    }

    fn halt(&mut self, by: UserInfo, reason: String) -> Result<(), Refusal> {
        self.running()?;
        self.not_adjourned()?;
        if let Some(loser) = self.flagged() {
            return self.push(time_loss(loser));
        }
        let now = self.at.now;
        match self.clock_after(|c| c.pause(now)) {
            Ok(clock) => self.push(GameEvent::RefereePaused { by, reason, clock }),
            Err(flag) => self.push(time_loss(flag.color)),
        }
    }

    fn adjourn(&mut self, by: UserInfo, at: i64, reason: String) -> Result<(), Refusal> {
        self.running()?;
        self.not_adjourned()?;
        let year = 366 * 24 * 3600 * 1000;
        if at < 0 || at > self.at.wall_ms.saturating_add(year) {
            return Err(refuse(
                ErrorCode::BadRequest,
                "`at` must be a Unix time in ms within a year",
            ));
        }
        // "Now" is recorded as the moment it took effect.
        let at = at.max(self.at.wall_ms);
        self.push(GameEvent::AdjournmentScheduled { at, by, reason })
    }

    fn unhalt(&mut self, by: UserInfo, reason: String) -> Result<(), Refusal> {
        if let Stage::Play(Play::Adjourned { sealed, .. }) = self.game.stage
            && self.game.adjourn_at.is_some()
        {
            // The referee opens the sealed move, from stopped clocks.
            let clock = self.clock_after(|_| Ok(())).ok().flatten();
            self.push(GameEvent::RefereeResumed { by, reason, clock })?;
            return self.open_sealed(sealed);
        }
        if self.game.stage != Stage::Play(Play::Halted) {
            return Err(refuse(
                ErrorCode::WrongPhase,
                format!(
                    "only a game paused by a referee can be resumed by one; this one is {}",
                    self.game.stage.describe()
                ),
            ));
        }
        match self.clocks_on() {
            Ok(clock) => self.push(GameEvent::RefereeResumed { by, reason, clock }),
            Err(flag) => self.push(time_loss(flag.color)),
        }
    }

    fn rule(
        &mut self,
        by: UserInfo,
        ruling: Ruling,
        reason: String,
        replay_game_id: Option<String>,
    ) -> Result<(), Refusal> {
        self.unfinished()?;
        if ruling == Ruling::Annul {
            return Err(refuse(
                ErrorCode::BadRequest,
                "`annul` is for finished games (`change_result`); a game in play is ruled `replay` or `draw`",
            ));
        }
        let replay_game_id = replay_game_id.filter(|_| ruling == Ruling::Replay);
        self.push(GameEvent::Ruled {
            ruling,
            by,
            reason,
            replay_game_id,
        })?;
        self.push(ended(ruling.result(), None))
    }

    fn correct_count(
        &mut self,
        by: UserInfo,
        dead: &[Vertex],
        reason: String,
    ) -> Result<(), Refusal> {
        let previous = match &self.game.stage {
            Stage::Ended(e) if e.counted => e.result,
            _ => {
                return Err(refuse(
                    ErrorCode::WrongPhase,
                    "only a game that ended by counting can have its count corrected",
                ));
            }
        };
        let board = self.game.game.board();
        let mut marks = DeadStones::new();
        for &v in dead {
            if !board.contains(v) {
                return Err(Refusal::illegal(rules::IllegalMove::OffBoard(v)));
            }
            if !marks.set_chain(board, v, true) {
                return Err(refuse(
                    ErrorCode::BadRequest,
                    format!("there is no stone on {v}"),
                ));
            }
        }
        let (result, score) = self.count(&marks);
        self.push(GameEvent::ResultChanged {
            previous,
            result,
            by,
            reason,
            ruling: None,
            score: Some(score),
        })
    }

    fn change_result(
        &mut self,
        by: UserInfo,
        ruling: Ruling,
        reason: String,
    ) -> Result<(), Refusal> {
        let Stage::Ended(e) = &self.game.stage else {
            return Err(refuse(
                ErrorCode::WrongPhase,
                "only a finished game's result can be changed; use `rule` during the game",
            ));
        };
        if ruling == Ruling::Replay {
            return Err(refuse(
                ErrorCode::BadRequest,
                "a finished game is not replayed; `annul` it and start a new game",
            ));
        }
        let previous = e.result;
        self.push(GameEvent::ResultChanged {
            previous,
            result: ruling.result(),
            by,
            reason,
            ruling: Some(ruling),
            score: None,
        })
    }
}
