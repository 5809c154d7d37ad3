//! One live game as a state machine: the rules position, the stage, the clock, the lag
//! quotas. No I/O and no tasks: the room actor feeds it actions with the current time
//! and gets back the complete events to store and broadcast, with the game after them.
//!
//! Every change is an event applied by [`LiveGame::apply`]: a decision builds each event
//! complete (captures, clocks, times, lag credit) and applies it the way a replay of the
//! stored log does, so a rebuilt game is the game that was played.

mod apply;
mod decide;
mod referee;
#[cfg(test)]
mod referee_tests;
mod snapshot;
mod stage;
#[cfg(test)]
mod tests;

use crate::clock::{ClockView, GameClock, LagQuota, LagSettings, Millis};
use crate::protocol::{
    ChatLine, FairPlay, GameAction, GameEvent, GameSettings, GameSummary, HandicapPlacement,
    NigiriProof, Phase, Refusal, UserInfo,
};
use crate::rules::{Color, Game, GameResult, Vertex};

use decide::Draft;
pub use referee::is_referee_act;
use stage::{Ended, Play, Scheduled, Scoring, Sealed, Stage};

/// Longest chat line, in characters.
pub const MAX_CHAT_CHARS: usize = 500;
/// Chat lines a snapshot carries.
const CHAT_KEPT: usize = 50;

/// A player's call for the referee, open until a referee acts or the game ends.
#[derive(Debug, Clone, PartialEq)]
struct OpenCall {
    seq: u64,
    message: String,
    at: i64,
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
    stage: Stage,
    handicap_stones: Vec<Vertex>,
    clock: GameClock,
    /// Each player's lag quota, by [`Color::index`]; charged by every move's recorded
    /// credit, so a rebuilt game has what was left.
    lag: [LagQuota; 2],
    /// Rejected scorings so far.
    disputes: u32,
    /// Moves played before play last resumed: passes before it do not count.
    resumed_at: usize,
    /// The players' latest chat lines, for snapshots.
    chat: std::collections::VecDeque<ChatLine>,
    nigiri: Option<NigiriProof>,
    online: [bool; 2],
    /// Referee warnings so far, by [`Color::index`].
    warnings: [u8; 2],
    /// A referee's scheduled adjournment, wall Unix ms, until the referee opens the
    /// sealed move.
    adjourn_at: Option<i64>,
    /// Each player's open call for the referee, by [`Color::index`]: at most one each.
    calls: [Option<OpenCall>; 2],
    /// Whether each player has been here at all (scheduled games' lateness rule).
    ever_present: [bool; 2],
    /// The seq of each move's `move_played`, in order, for the spectators' delay.
    move_seqs: Vec<u64>,
    /// When each move was applied here (this room's timeline), for the delay in time.
    move_times: Vec<Millis>,
    /// When the side to move's turn began (or play last went on), for stalling claims.
    turn_since: Millis,
    /// Since when each player has been away.
    absent_since: [Option<Millis>; 2],
    /// When absent players of a scheduled game forfeit, until both have come.
    forfeit_at: Option<Millis>,
    /// Numbered events so far (the last event's seq).
    seq: u64,
    /// Correspondence games: how long before their deadline the player to move is
    /// warned (0: never); the server's setting, not the game's.
    deadline_warn_ms: Millis,
    /// The last warning given (`deadline_warned`): to whom, for which deadline.
    warned: Option<(Color, Millis)>,
}

impl LiveGame {
    /// A game from its first event (`game_created`), which must be seq 1. A game with a
    /// `start_at` is scheduled even when that instant has passed: its timer then begins
    /// it at once, so `game_began` is always recorded.
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
        let game = settings
            .starting_game(handicap_stones)
            .map_err(|e| bad(&e.to_string()))?;
        // A scheduled start, moved onto the room's clock (a past one is now).
        let later = |wall: i64| now + wall.saturating_sub(at.wall_ms).max(0) as Millis;
        let stage = match settings.start_at {
            Some(t) => Stage::Scheduled(Scheduled {
                begins_at: later(t),
                missed: false,
            }),
            None => LiveGame::opening(settings),
        };
        let forfeit_at = settings
            .start_at
            .map(|t| later(t.saturating_add(settings.forfeit_after_ms as i64)));
        // No clock runs yet: the first player's starts when they come to the board
        // (`start_clock_if_stopped`), or at a scheduled start whether they come or not;
        // a correspondence game's at once (below).
        let mut live = LiveGame {
            settings: (**settings).clone(),
            black: black.clone(),
            white: white.clone(),
            game,
            stage,
            handicap_stones: handicap_stones.clone(),
            clock: GameClock::new(settings.clock),
            lag: [LagQuota::new(lag), LagQuota::new(lag)],
            disputes: 0,
            resumed_at: 0,
            chat: std::collections::VecDeque::new(),
            nigiri: nigiri.clone(),
            online: [false; 2],
            warnings: [0; 2],
            calls: [None, None],
            adjourn_at: None,
            ever_present: [false; 2],
            absent_since: [Some(now); 2],
            turn_since: now,
            move_seqs: Vec::new(),
            move_times: Vec::new(),
            forfeit_at,
            seq: 1,
            deadline_warn_ms: 0,
            warned: None,
        };
        if live.settings.correspondence {
            live.start_clock_if_stopped(now);
        }
        Ok(live)
    }

    /// The stage a game begins in: Black places free handicap stones, or play starts.
    fn opening(settings: &GameSettings) -> Stage {
        if free_handicap(settings) {
            Stage::Handicap
        } else {
            Stage::Play(Play::RUNNING)
        }
    }

    pub fn seq(&self) -> u64 {
        self.seq
    }

    pub fn phase(&self) -> Phase {
        self.stage.phase()
    }

    pub fn result(&self) -> Option<GameResult> {
        match &self.stage {
            Stage::Ended(ended) => Some(ended.result),
            _ => None,
        }
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

    /// A player's lag quota left for the rest of the game.
    pub fn lag_quota_ms(&self, color: Color) -> Millis {
        self.lag[color.index()].quota_ms()
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

    /// The next instant something happens by itself (a start, a flag, a forfeit, the
    /// end of the dead-stone phase), for the room's one timer.
    pub fn next_timer(&self) -> Option<Millis> {
        let stage = match &self.stage {
            Stage::Ended(_) => return None,
            Stage::Scheduled(s) => Some(s.begins_at),
            Stage::Scoring(s) => Some(s.until),
            _ => None,
        };
        let flag = self
            .stage
            .clock_runs()
            .then(|| self.clock.deadline())
            .flatten();
        let forfeit = self
            .forfeit_at
            .filter(|_| !self.ever_present.iter().all(|&p| p));
        let warning = self.deadline_warning().map(|(_, _, at)| at);
        [stage, flag, forfeit, warning].into_iter().flatten().min()
    }

    /// A correspondence game in play: the player to move, and the instant their time runs
    /// out (None while their clock stands still). None for any other game, and for one
    /// whose spectators see it late (its turn would tell them the moves to come).
    pub fn turn_deadline(&self) -> Option<(Color, Option<i64>)> {
        if !self.settings.correspondence
            || self.settings.delays_spectators()
            || self.phase() != Phase::Play
        {
            return None;
        }
        let deadline = self
            .stage
            .clock_runs()
            .then(|| self.clock.deadline())
            .flatten()
            .map(|ms| i64::try_from(ms).unwrap_or(i64::MAX));
        Some((self.to_move(), deadline))
    }

    /// The game as a list of games sums it up, as seen by spectators who have been sent
    /// up to `released` ([`LiveGame::as_spectators_see`]) with `spectators` watching. The
    /// lobby adds the ranks: a game knows nothing of ratings.
    pub fn summary(&self, game_id: &str, released: u64, spectators: u32) -> GameSummary {
        let (move_number, phase) = self.as_spectators_see(released);
        let turn = self.turn_deadline();
        GameSummary {
            game_id: game_id.to_string(),
            black: self.black.clone(),
            white: self.white.clone(),
            black_rank: None,
            white_rank: None,
            board_size: self.settings.board_size,
            move_number,
            phase,
            spectators,
            result: self.result(),
            to_move: turn.map(|(color, _)| color),
            deadline: turn.and_then(|(_, deadline)| deadline),
        }
    }

    /// Warns the player to move `ms` before their deadline (correspondence games).
    pub fn warn_before_deadline(&mut self, ms: Millis) {
        self.deadline_warn_ms = ms;
    }

    /// The warning the player to move has coming before their deadline in a
    /// correspondence game: `(colour, deadline, when)`. None when warnings are off, it
    /// was given for this deadline, or the turn began already within the warning time
    /// (the `your_move` news says as much).
    pub fn deadline_warning(&self) -> Option<(Color, Millis, Millis)> {
        if !self.settings.correspondence || self.deadline_warn_ms == 0 || !self.stage.clock_runs() {
            return None;
        }
        let deadline = self.clock.deadline()?;
        let color = self.clock.running()?;
        let at = deadline.checked_sub(self.deadline_warn_ms)?;
        let began = self.clock.since()?;
        (at > began && self.warned != Some((color, deadline))).then_some((color, deadline, at))
    }

    /// What happens by itself at `at`: the events to record (none if nothing is due).
    pub fn on_timer(&self, at: Moment) -> Step {
        let mut draft = Draft::new(self, at);
        match draft.timer() {
            Ok(()) => draft.finish(),
            Err(refusal) => {
                tracing::error!(message = %refusal.message, "a timer event did not apply");
                Draft::new(self, at).finish()
            }
        }
    }

    /// Decides what `who` asking for `action` at `at` does: the events to record, in
    /// order, with the game after them, or a refusal. `self` is never changed.
    pub fn decide(&self, who: Color, action: &GameAction, at: Moment) -> Result<Step, Refusal> {
        let mut draft = Draft::new(self, at);
        draft.action(who, action)?;
        Ok(draft.finish())
    }

    /// A player's connection coming or going, with the clocks as they stand after it at
    /// `at` (left out when the running side has run out: the timer records that loss).
    /// The player to move arriving to a clock that stands still (after a restart, or
    /// away when play began or went on) starts theirs: the event records it running, as
    /// the room then has it, so that clients and a replay of the log see the same.
    /// A correspondence game's clock runs whoever is here: its presence carries none.
    pub fn presence(&self, color: Color, online: bool, at: Moment) -> Step {
        let clock = match online && color == self.game.to_move() {
            true => self.clock_started(at.now),
            false => self.clock.clone(),
        };
        let clock = (self.settings.clock.is_timed() && !self.settings.correspondence)
            .then(|| clock.view(at.now))
            .filter(|_| clock.check_flag(at.now).is_none());
        self.step(
            vec![GameEvent::Presence {
                color,
                online,
                clock,
            }],
            at,
        )
    }

    /// Applies complete events the room records itself (presence) to a copy of the game.
    /// An event that does not apply is logged and left out.
    pub fn step(&self, events: Vec<GameEvent>, at: Moment) -> Step {
        let mut game = Box::new(self.clone());
        let mut kept = Vec::with_capacity(events.len());
        for event in events {
            let seq = game.seq + 1;
            match game.apply(&event, seq, at) {
                Ok(()) => kept.push(event),
                Err(e) => tracing::error!(error = %e, "the room's own event did not apply"),
            }
        }
        Step { events: kept, game }
    }

    /// After a rebuild from the log: no clock runs (downtime is never charged) and
    /// nobody is here yet; absence counts from now. A correspondence game's clock runs
    /// on as its log left it: downtime is charged like any other time. A scheduled start that passed while
    /// the server was down begins the game (by the timer, at once) with clocks stopped.
    /// Returns the players the log last showed online, whose going offline the room
    /// records so that clients hear of it.
    pub fn settle_after_restart(&mut self, now: Millis) -> Vec<Color> {
        if !self.settings.correspondence {
            self.clock.settle(now);
        }
        self.absent_since = [Some(now); 2];
        self.turn_since = now;
        if let Stage::Scheduled(s) = &mut self.stage {
            s.missed = s.begins_at <= now;
        }
        [Color::Black, Color::White]
            .into_iter()
            .filter(|c| self.online[c.index()] && self.phase() != Phase::Ended)
            .collect()
    }

    /// Starts the clock of the side to move if no clock runs (when that player comes to
    /// the board at the start of the game or after a restart).
    pub fn start_clock_if_stopped(&mut self, now: Millis) {
        self.clock = self.clock_started(now);
    }

    /// The clocks with the player to move's started at `now`, if play is on and no
    /// clock runs.
    fn clock_started(&self, now: Millis) -> GameClock {
        let mut clock = self.clock.clone();
        if self.stage.clock_runs() && clock.running().is_none() {
            // No clock runs, so nothing is charged and nothing can flag.
            let _ = clock.start(self.game.to_move(), now);
        }
        clock
    }

    /// The last seq spectators may see at `now`: in a tournament game, everything before
    /// the first move that is among the latest `spectator_delay_moves` moves or younger
    /// than `spectator_delay_ms`, until the game ends; otherwise every event.
    pub fn spectator_horizon(&self, now: Millis) -> u64 {
        let (moves, ms) = self.spectator_delay();
        if (moves == 0 && ms == 0) || matches!(self.stage, Stage::Ended(_)) {
            return self.seq;
        }
        let by_moves = self.move_seqs.len().saturating_sub(moves);
        // Moves are applied in time order, so the seen ones are a prefix.
        let by_time = self.move_times.partition_point(|&t| t + ms <= now);
        self.move_seqs
            .get(by_moves.min(by_time))
            .map_or(self.seq, |&seq| seq - 1)
    }

    /// The move count and phase a list of games shows (`list_games`, the referees'
    /// lists): in a tournament game with delayed spectators, those as of `released`, the
    /// last event the spectators have been sent, so no list tells them more than the board
    /// they watch; otherwise, and once the game has ended, those now.
    pub fn as_spectators_see(&self, released: u64) -> (u32, Phase) {
        let (moves, ms) = self.spectator_delay();
        if (moves == 0 && ms == 0) || matches!(self.stage, Stage::Ended(_)) || released >= self.seq
        {
            return (self.move_count(), self.phase());
        }
        let hidden = self.move_seqs.len() - self.move_seqs.partition_point(|&s| s <= released);
        // Play ended, or the game did, only in events they have not been sent.
        let phase = match self.phase() {
            Phase::Scoring | Phase::Ended => Phase::Play,
            phase => phase,
        };
        (self.move_count().saturating_sub(hidden as u32), phase)
    }

    /// When a move now hidden from spectators by the delay in time is theirs to see, if
    /// one is (the room wakes then to send it).
    pub fn next_release(&self, now: Millis) -> Option<Millis> {
        let (_, ms) = self.spectator_delay();
        if ms == 0 || matches!(self.stage, Stage::Ended(_)) {
            return None;
        }
        self.move_times.iter().map(|&t| t + ms).find(|&at| at > now)
    }

    /// The spectators' delay in moves and in milliseconds (none outside tournaments).
    fn spectator_delay(&self) -> (usize, Millis) {
        match self.settings.fair_play {
            FairPlay::Tournament => (
                usize::from(self.settings.spectator_delay_moves),
                self.settings.spectator_delay_ms,
            ),
            FairPlay::Open => (0, 0),
        }
    }

    /// Whether `user` watches this game with the spectators' delay: a tournament
    /// game's spectator who may not referee it.
    pub fn delays(&self, user: Option<&UserInfo>) -> bool {
        self.settings.fair_play == FairPlay::Tournament
            && user.is_none_or(|u| self.color_of(&u.id).is_none() && self.may_referee(u).is_err())
    }

    /// Both clocks at `now`, for timed games.
    pub fn clock_view(&self, now: Millis) -> Option<ClockView> {
        self.settings.clock.is_timed().then(|| self.clock.view(now))
    }
}

fn free_handicap(settings: &GameSettings) -> bool {
    settings.handicap >= 2 && settings.handicap_placement == HandicapPlacement::Free
}
