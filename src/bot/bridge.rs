//! One game between the server and one engine process: the game's events become GTP
//! commands (`play` for the opponent, `genmove` on the bot's turn, `final_status_list
//! dead` when scoring starts) and the engine's answers become requests to the server.
//!
//! The bridge keeps its own copy of the position (the rules module's [`Game`]) so that it
//! always knows what the engine should have on its board: after a snapshot it clears the
//! engine's board and replays the move list, after missed events it plays just those.
//! It never sends a request while its connection is down; after a rejoin it decides
//! again from the state it has, which is the server's. Any engine failure resigns the
//! game with a chat message saying why.

use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};

use super::gtp::{Engine, GtpError, QUICK};
use super::scoring::{Verdict, verdict};
use super::time::{kgs_time_settings, move_deadline, time_left, time_settings};
use crate::clock::{ClockView, TimeControl};
use crate::protocol::{
    ErrorCode, EventFrame, GameAction, GameEvent, GameSettings, HandicapPlacement, Phase, Snapshot,
};
use crate::rules::{self, Color, Game, Move, Vertex};

/// What the connection loop tells a game.
#[derive(Debug)]
pub enum ToGame {
    Snapshot(Box<Snapshot>),
    Event(Box<EventFrame>),
    /// The server refused a request this game sent.
    Refused {
        action: GameAction,
        code: ErrorCode,
        message: String,
    },
    /// The game is joined on the current connection; events missed while away (if any)
    /// came before this.
    Joined,
    /// The connection dropped: requests in flight may be lost.
    Disconnected,
}

/// A request a game wants sent.
#[derive(Debug)]
pub struct Outgoing {
    pub game_id: String,
    pub action: GameAction,
}

/// Why a question to the engine got no answer.
enum AskError {
    Engine(GtpError),
    /// The game ended or the connection loop stopped while the engine was thinking.
    Interrupted,
}

impl From<GtpError> for AskError {
    fn from(e: GtpError) -> Self {
        AskError::Engine(e)
    }
}

/// The bot's own move, from the engine's answer until the server's event for it.
#[derive(Debug, Clone, Copy)]
struct Pending {
    number: u32,
    mv: Move,
    sent: bool,
}

/// What the opponent asked the bot to agree to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    Pause,
    Resume,
}

/// The dead-stone phase as this bot sees it.
#[derive(Debug, Default)]
struct Marking {
    /// Stones the engine calls dead (whole chains), once asked.
    mine: Option<BTreeSet<Vertex>>,
    marks: BTreeSet<Vertex>,
    /// The seq of the event that last set the marks (unknown after a snapshot).
    marks_seq: Option<u64>,
    ever_marked: BTreeSet<Vertex>,
    requested: BTreeSet<Vertex>,
    accepted: bool,
    accept_sent: Option<Option<u64>>,
    reject_sent: bool,
}

/// A game's bridge task.
pub struct GameBridge {
    game_id: String,
    engine_command: String,
    untimed_move_limit: Duration,
    engine: Option<Engine>,
    kgs_time: bool,
    /// From the first snapshot on: the settings, the bot's colour and the position.
    settings: GameSettings,
    me: Color,
    position: Option<Game>,
    handicap: Vec<Vertex>,
    phase: Phase,
    seq: u64,
    clock: Option<ClockView>,
    /// After a dispute: capture what we claim dead (`kgs-genmove_cleanup`).
    cleanup: bool,
    pending: Option<Pending>,
    /// Paused by agreement, or adjourned with a sealed move: no moves until resumed.
    stopped: bool,
    /// The opponent asked to pause or to resume; the bot agrees (`pause` / `resume`).
    opponent_asks: Option<Ask>,
    agreed: bool,
    /// The seq of a `pause_requested` agreed to while the engine was thinking, before
    /// its move (a move would withdraw the request).
    early_pause: Option<u64>,
    /// Free handicap stones the engine placed and we sent.
    placed: Option<Vec<Vertex>>,
    handicap_sent: bool,
    marking: Marking,
    /// Joined on a live connection: requests may be sent.
    ready: bool,
    /// After a refused move: do not try again before this instant.
    retry_at: Option<Instant>,
    retry_delay: Duration,
    failed: Option<String>,
    resign_sent: bool,
    ended: bool,
    inbox: mpsc::Receiver<ToGame>,
    backlog: VecDeque<ToGame>,
    out: mpsc::Sender<Outgoing>,
}

fn gtp_color(c: Color) -> &'static str {
    match c {
        Color::Black => "b",
        Color::White => "w",
    }
}

impl GameBridge {
    pub fn new(
        game_id: String,
        engine_command: String,
        untimed_move_limit: Duration,
        inbox: mpsc::Receiver<ToGame>,
        out: mpsc::Sender<Outgoing>,
    ) -> GameBridge {
        GameBridge {
            game_id,
            engine_command,
            untimed_move_limit,
            engine: None,
            kgs_time: false,
            settings: GameSettings::default(),
            me: Color::Black,
            position: None,
            handicap: Vec::new(),
            phase: Phase::Play,
            seq: 0,
            clock: None,
            cleanup: false,
            pending: None,
            stopped: false,
            opponent_asks: None,
            agreed: false,
            early_pause: None,
            placed: None,
            handicap_sent: false,
            marking: Marking::default(),
            ready: false,
            retry_at: None,
            retry_delay: Duration::from_millis(500),
            failed: None,
            resign_sent: false,
            ended: false,
            inbox,
            backlog: VecDeque::new(),
            out,
        }
    }

    /// Plays the game to its end (or until the connection loop drops this game).
    pub async fn run(mut self) {
        match Engine::start(&self.engine_command).await {
            Ok(engine) => {
                tracing::info!(pid = engine.pid(), "engine started");
                self.kgs_time = engine.knows("kgs-time_settings");
                self.engine = Some(engine);
            }
            Err(e) => self.fail(format!("the engine could not start: {e}")).await,
        }
        loop {
            let input = match self.backlog.pop_front() {
                Some(input) => input,
                None => {
                    let retry = self.retry_at;
                    tokio::select! {
                        input = self.inbox.recv() => match input {
                            Some(input) => input,
                            None => break,
                        },
                        status = engine_exit(&mut self.engine) => {
                            self.engine = None;
                            self.fail(format!("the engine exited ({status})")).await;
                            continue;
                        }
                        () = sleep_until(retry.unwrap_or_else(Instant::now)), if retry.is_some() => {
                            self.retry_at = None;
                            self.act().await;
                            continue;
                        }
                    }
                }
            };
            self.handle(input).await;
            if self.ended {
                break;
            }
            self.act().await;
        }
        if let Some(engine) = self.engine.take() {
            engine.quit().await;
        }
    }

    async fn send(&self, action: GameAction) {
        let _ = self
            .out
            .send(Outgoing {
                game_id: self.game_id.clone(),
                action,
            })
            .await;
    }

    /// Asks the engine, while still taking in what the server says: events that arrive
    /// meanwhile wait in the backlog, and the end of the game stops the wait.
    async fn ask(&mut self, command: &str, timeout: Duration) -> Result<String, AskError> {
        let Some(engine) = self.engine.as_mut() else {
            return Err(AskError::Engine(GtpError::Exited));
        };
        let answer = engine.command(command, timeout);
        tokio::pin!(answer);
        loop {
            tokio::select! {
                result = &mut answer => return result.map_err(AskError::Engine),
                input = self.inbox.recv() => match input {
                    Some(ToGame::Event(frame)) if matches!(frame.event, GameEvent::GameEnded { .. }) => {
                        self.backlog.push_back(ToGame::Event(frame));
                        return Err(AskError::Interrupted);
                    }
                    Some(ToGame::Event(frame)) => {
                        // The opponent asks to pause while the engine thinks: agree now,
                        // before the engine's move could withdraw the request.
                        let asks_pause = matches!(frame.event, GameEvent::PauseRequested { by } if by != self.me);
                        if asks_pause && self.ready && frame.seq > self.seq && self.failed.is_none() {
                            self.early_pause = Some(frame.seq);
                            let agree = Outgoing {
                                game_id: self.game_id.clone(),
                                action: GameAction::Pause {},
                            };
                            let _ = self.out.send(agree).await;
                        }
                        self.backlog.push_back(ToGame::Event(frame));
                    }
                    Some(input) => self.backlog.push_back(input),
                    None => return Err(AskError::Interrupted),
                },
            }
        }
    }

    /// Gives up the game: the engine cannot be trusted any more.
    async fn fail(&mut self, why: String) {
        if self.failed.is_some() || self.ended {
            return;
        }
        tracing::warn!(%why, "engine failure: resigning");
        self.failed = Some(why);
        // A dead or confused engine is killed; a fresh one is not worth a lost game's time.
        self.engine = None;
        self.resign().await;
    }

    async fn resign(&mut self) {
        if !self.ready || self.resign_sent || self.ended || self.position.is_none() {
            return;
        }
        let why = self.failed.as_deref().unwrap_or("the engine resigned");
        let why = why.trim_end_matches('.');
        let text = format!("The bot's engine failed: {why}. The bot resigns this game.");
        self.send(GameAction::Chat { text }).await;
        self.send(GameAction::Resign {}).await;
        self.resign_sent = true;
    }

    async fn handle(&mut self, input: ToGame) {
        match input {
            ToGame::Snapshot(snapshot) => self.restart_from(*snapshot).await,
            ToGame::Event(frame) => self.event(*frame).await,
            ToGame::Refused {
                action,
                code,
                message,
            } => self.refused(action, code, &message).await,
            ToGame::Joined => self.ready = true,
            ToGame::Disconnected => {
                self.ready = false;
                if let Some(p) = &mut self.pending {
                    p.sent = false;
                }
                self.handicap_sent = false;
                self.agreed = false;
                self.early_pause = None;
                self.resign_sent = false;
                self.marking.requested.clear();
                self.marking.accept_sent = None;
                self.marking.reject_sent = false;
            }
        }
    }

    /// Takes the server's whole state: the position is rebuilt and the engine's board
    /// cleared and replayed.
    async fn restart_from(&mut self, s: Snapshot) {
        self.seq = s.seq;
        if let Some(you) = s.you {
            self.me = you;
        }
        self.settings = s.settings;
        self.handicap = s.handicap_stones;
        let mut position = self.fresh_position();
        for m in &s.moves {
            if let Err(e) = position.play_ignoring_repetition(m.color, m.vertex) {
                tracing::warn!(error = %e, "a recorded move does not replay");
            }
        }
        self.position = Some(position);
        self.phase = s.phase;
        self.clock = s.clock;
        self.cleanup = s.disputes > 0;
        self.pending = None;
        self.stopped = s.paused || s.sealed_by.is_some();
        let opponent = Some(self.me.opponent());
        self.opponent_asks = if s.pause_requested_by == opponent {
            Some(Ask::Pause)
        } else if s.resume_requested_by == opponent {
            Some(Ask::Resume)
        } else {
            None
        };
        self.agreed = false;
        self.marking = Marking {
            marks: s.dead.iter().copied().collect(),
            ever_marked: s.dead.iter().copied().collect(),
            accepted: s.accepted.contains(&self.me),
            ..Marking::default()
        };
        if self.phase == Phase::Ended {
            self.ended = true;
            return;
        }
        if self.failed.is_none() {
            self.sync_engine().await;
        }
    }

    fn fresh_position(&self) -> Game {
        self.settings
            .starting_game(&self.handicap)
            .unwrap_or_else(|_| {
                Game::new(rules::MIN_SIZE, self.settings.ko_rule()).expect("the smallest board")
            })
    }

    /// Komi as the engine should count it: the server's komi, plus the points Black
    /// gives back for handicap stones under rules that count them (docs/RULES.md §7.3).
    fn engine_komi(&self) -> f64 {
        let s = &self.settings;
        let back = if s.ruleset.compensates_handicap() && s.handicap >= 2 {
            f64::from(s.handicap)
        } else {
            0.0
        };
        s.komi().points() + back
    }

    /// Sets the engine's board to the position: size, komi, time, handicap, moves.
    async fn sync_engine(&mut self) {
        if let Err(AskError::Engine(e)) = self.try_sync_engine().await {
            self.fail(format!("the engine could not take the position: {e}"))
                .await;
        }
    }

    async fn try_sync_engine(&mut self) -> Result<(), AskError> {
        let Some(position) = &self.position else {
            return Ok(());
        };
        let moves = position.moves().to_vec();
        let size = self.settings.board_size;
        self.ask(&format!("boardsize {size}"), QUICK).await?;
        self.ask("clear_board", QUICK).await?;
        self.ask(&format!("komi {}", self.engine_komi()), QUICK)
            .await?;
        let tc = engine_time_control(self.settings.clock, self.untimed_move_limit);
        let command = if self.kgs_time {
            kgs_time_settings(&tc)
        } else {
            time_settings(&tc)
        };
        optional(self.ask(&command, QUICK).await)?;
        // The set stones of the ancient rules (none under others), as plain moves.
        for (v, color) in self.settings.starting_stones(&[]) {
            self.ask(&format!("play {} {v}", gtp_color(color)), QUICK)
                .await?;
        }
        if !self.handicap.is_empty() {
            let list: Vec<String> = self.handicap.iter().map(Vertex::to_string).collect();
            let set = format!("set_free_handicap {}", list.join(" "));
            if let Err(AskError::Engine(GtpError::Failure { .. })) = self.ask(&set, QUICK).await {
                for v in list {
                    self.ask(&format!("play b {v}"), QUICK).await?;
                }
            }
        }
        for (color, mv) in moves {
            self.ask(&format!("play {} {mv}", gtp_color(color)), QUICK)
                .await?;
        }
        Ok(())
    }

    async fn event(&mut self, frame: EventFrame) {
        if frame.seq <= self.seq || self.position.is_none() {
            return;
        }
        self.seq = frame.seq;
        let seq = frame.seq;
        match frame.event {
            GameEvent::Chat { .. } | GameEvent::Presence { .. } => {}
            _ => self.retry_at = None,
        }
        match frame.event {
            GameEvent::MovePlayed {
                move_number,
                color,
                vertex,
                clock,
                ..
            } => {
                if clock.is_some() {
                    self.clock = clock;
                }
                self.retry_delay = Duration::from_millis(500);
                // A move withdraws a pause request (competition.md).
                if self.opponent_asks == Some(Ask::Pause) {
                    self.opponent_asks = None;
                }
                self.move_played(move_number, color, vertex).await;
            }
            GameEvent::GameBegan { clock } => {
                self.clock = clock.or(self.clock);
                let free = self.settings.handicap >= 2
                    && self.settings.handicap_placement == HandicapPlacement::Free;
                self.phase = if free { Phase::Handicap } else { Phase::Play };
            }
            GameEvent::PauseRequested { by } if by != self.me => {
                self.opponent_asks = Some(Ask::Pause);
                self.agreed = self.early_pause.take() == Some(seq);
            }
            // Our agreement reached the server after the request was withdrawn, and
            // became a request of ours: nothing of the opponent's to wait for.
            GameEvent::PauseRequested { .. } => self.opponent_asks = None,
            GameEvent::ResumeRequested { by } if by != self.me => {
                self.opponent_asks = Some(Ask::Resume);
                self.agreed = false;
            }
            GameEvent::Paused { clock } | GameEvent::MoveSealed { clock, .. } => {
                self.clock = clock.or(self.clock);
                self.stopped = true;
                self.opponent_asks = None;
            }
            GameEvent::Resumed { clock } => {
                self.clock = clock.or(self.clock);
                self.stopped = false;
                self.opponent_asks = None;
            }
            GameEvent::HandicapPlaced { vertices, .. } => {
                self.handicap = vertices.clone();
                self.position = Some(self.fresh_position());
                self.phase = Phase::Play;
                if self.placed.as_ref() != Some(&vertices) && self.failed.is_none() {
                    self.sync_engine().await;
                }
            }
            GameEvent::ScoringStarted { disputes } => {
                self.phase = Phase::Scoring;
                self.cleanup = disputes > 0;
                self.marking = Marking {
                    marks_seq: Some(seq),
                    ..Marking::default()
                };
            }
            GameEvent::DeadMarked { marks, .. } => {
                let m = &mut self.marking;
                m.marks = marks.into_iter().collect();
                m.ever_marked.extend(m.marks.iter().copied());
                m.marks_seq = Some(seq);
                m.accepted = false;
                m.accept_sent = None;
            }
            GameEvent::ScoreAccepted { by } if by == self.me => self.marking.accepted = true,
            GameEvent::PlayResumed { .. } => {
                self.phase = Phase::Play;
                self.cleanup = true;
                self.marking = Marking::default();
            }
            GameEvent::GameEnded { result, reason, .. } => {
                tracing::info!(%result, %reason, "game ended");
                self.phase = Phase::Ended;
                self.ended = true;
                self.send(GameAction::Leave {}).await;
            }
            _ => {}
        }
    }

    async fn move_played(&mut self, number: u32, color: Color, mv: Move) {
        let Some(position) = self.position.as_mut() else {
            return;
        };
        let played = position.play_ignoring_repetition(color, mv);
        let in_order = position.moves().len() as u32 == number;
        if played.is_err() || !in_order {
            tracing::warn!(
                number,
                "the position went out of step; asking for a snapshot"
            );
            self.request_snapshot().await;
            return;
        }
        let mine = self.pending.take();
        if self.failed.is_some() {
            return;
        }
        match mine {
            // The engine chose this move and has it on its board already.
            Some(p) if color == self.me && p.number == number && p.mv == mv => {}
            // The engine's board has a move the server did not record: start again.
            Some(_) => self.sync_engine().await,
            None => {
                let command = format!("play {} {mv}", gtp_color(color));
                match self.ask(&command, QUICK).await {
                    Ok(_) | Err(AskError::Interrupted) => {}
                    Err(AskError::Engine(e)) => {
                        self.fail(format!("it did not take the move {mv}: {e}"))
                            .await
                    }
                }
            }
        }
    }

    async fn refused(&mut self, action: GameAction, code: ErrorCode, message: &str) {
        let code_name = code.as_str();
        tracing::warn!(code = code_name, message, request = ?action, "the server refused a request");
        match action {
            GameAction::Play { move_number, .. } | GameAction::Pass { move_number, .. } => {
                let live = self.pending.is_some_and(|p| p.number == move_number);
                if !live {
                    // A retry of a move the server already has, or an older request.
                    return;
                }
                if code == ErrorCode::IllegalMove {
                    // The engine does not know this server's repetition rule: take the
                    // stone back by replaying the position, and pass instead, on the
                    // engine's board too so that its history is the game's.
                    self.pending = None;
                    self.sync_engine().await;
                    if self.failed.is_some() {
                        return;
                    }
                    let pass = format!("play {} pass", gtp_color(self.me));
                    match self.ask(&pass, QUICK).await {
                        Ok(_) => {}
                        Err(AskError::Interrupted) => return,
                        Err(AskError::Engine(e)) => {
                            return self.fail(format!("it did not take its pass: {e}")).await;
                        }
                    }
                    self.pending = Some(Pending {
                        number: move_number,
                        mv: Move::Pass,
                        sent: false,
                    });
                } else {
                    self.pending = None;
                    self.back_off();
                    self.request_snapshot().await;
                }
            }
            GameAction::PlaceHandicap { .. } => {
                self.placed = None;
                self.back_off();
                self.request_snapshot().await;
            }
            GameAction::AcceptScore { .. } => self.marking.accept_sent = None,
            GameAction::RejectScore { .. } => self.back_off(),
            GameAction::MarkDead { vertex, .. } => {
                self.marking.requested.remove(&vertex);
                self.back_off();
            }
            GameAction::Join { .. } if code == ErrorCode::NotFound => self.ended = true,
            // The request crossed the opponent's change of mind: nothing to agree to.
            GameAction::Pause { .. } | GameAction::Resume { .. } => self.opponent_asks = None,
            _ => {}
        }
    }

    fn back_off(&mut self) {
        self.retry_at = Some(Instant::now() + self.retry_delay);
        self.retry_delay = (self.retry_delay * 2).min(Duration::from_secs(30));
    }

    async fn request_snapshot(&mut self) {
        self.send(GameAction::Join { since_seq: None }).await;
    }

    /// Does what the game needs from the bot now, if anything.
    async fn act(&mut self) {
        if !self.ready || self.ended || self.position.is_none() || !self.backlog.is_empty() {
            return;
        }
        if self.failed.is_some() {
            return self.resign().await;
        }
        if let Some(ask) = self.opponent_asks
            && !self.agreed
        {
            // A bot never needs a break, so it never refuses one to a person.
            self.agreed = true;
            self.send(match ask {
                Ask::Pause => GameAction::Pause {},
                Ask::Resume => GameAction::Resume {},
            })
            .await;
        }
        // Agreed to a pause that is not in force yet: a move now would withdraw it.
        let pausing = self.opponent_asks == Some(Ask::Pause) && self.agreed;
        if self.stopped || pausing || self.retry_at.is_some_and(|t| t > Instant::now()) {
            return;
        }
        match self.phase {
            Phase::Handicap if self.me == Color::Black => self.place_handicap().await,
            Phase::Play if self.to_move() == Some(self.me) => self.take_turn().await,
            Phase::Scoring => self.mark().await,
            _ => {}
        }
    }

    fn to_move(&self) -> Option<Color> {
        self.position.as_ref().map(Game::to_move)
    }

    async fn place_handicap(&mut self) {
        if self.handicap_sent {
            return;
        }
        let stones = match &self.placed {
            Some(stones) => Ok(stones.clone()),
            None => self.choose_handicap().await,
        };
        match stones {
            Ok(stones) => {
                self.placed = Some(stones.clone());
                self.handicap_sent = true;
                self.send(GameAction::PlaceHandicap { vertices: stones })
                    .await;
            }
            Err(AskError::Interrupted) => {}
            Err(AskError::Engine(e)) => {
                self.fail(format!("it could not place handicap stones: {e}"))
                    .await
            }
        }
    }

    async fn choose_handicap(&mut self) -> Result<Vec<Vertex>, AskError> {
        let n = self.settings.handicap;
        let size = self.settings.board_size;
        let known = self
            .engine
            .as_ref()
            .is_some_and(|e| e.knows("place_free_handicap"));
        if known {
            let text = self.ask(&format!("place_free_handicap {n}"), QUICK).await?;
            let stones = parse_vertices(&text, size).map_err(AskError::Engine)?;
            if stones.len() == usize::from(n) {
                return Ok(stones);
            }
            // The engine placed some other number: start its board afresh.
            self.ask("clear_board", QUICK).await?;
        }
        let stones = rules::fixed_handicap(size, n).unwrap_or_default();
        let list: Vec<String> = stones.iter().map(Vertex::to_string).collect();
        self.ask(&format!("set_free_handicap {}", list.join(" ")), QUICK)
            .await?;
        Ok(stones)
    }

    async fn take_turn(&mut self) {
        let Some(number) = self.position.as_ref().map(|p| p.moves().len() as u32 + 1) else {
            return;
        };
        if let Some(p) = &mut self.pending {
            if p.number == number {
                if !p.sent {
                    p.sent = true;
                    let mv = p.mv;
                    self.send_move(number, mv).await;
                }
                return;
            }
            // An answer for an older turn the server never recorded: the engine's board
            // has a stone too many.
            self.pending = None;
            self.sync_engine().await;
        }
        match self.generate().await {
            Ok(Some(mv)) => {
                // What came while the engine thought (a pause asked for, the game
                // ended) is taken in first; the move is sent after it, if still due.
                let now = self.backlog.is_empty();
                self.pending = Some(Pending {
                    number,
                    mv,
                    sent: now,
                });
                if now {
                    self.send_move(number, mv).await;
                }
            }
            Ok(None) => {
                tracing::info!("the engine resigns");
                self.resign_sent = true;
                self.send(GameAction::Resign {}).await;
            }
            Err(AskError::Interrupted) => {}
            Err(AskError::Engine(e)) => self.fail(format!("it could not choose a move: {e}")).await,
        }
    }

    /// The engine's move, or `None` when it resigns.
    async fn generate(&mut self) -> Result<Option<Move>, AskError> {
        let tc = self.settings.clock;
        let me = self.me;
        let own_clock = self.clock.map(|c| *c.player(me));
        if let Some(command) = own_clock.and_then(|c| time_left(&tc, me, &c, self.kgs_time)) {
            optional(self.ask(&command, QUICK).await)?;
        }
        let cleanup = self.cleanup
            && self
                .engine
                .as_ref()
                .is_some_and(|e| e.knows("kgs-genmove_cleanup"));
        let verb = if cleanup {
            "kgs-genmove_cleanup"
        } else {
            "genmove"
        };
        let deadline = move_deadline(&tc, own_clock.as_ref(), self.untimed_move_limit);
        let answer = self
            .ask(&format!("{verb} {}", gtp_color(me)), deadline)
            .await?;
        if answer.eq_ignore_ascii_case("resign") {
            return Ok(None);
        }
        Move::parse(answer.trim(), self.settings.board_size)
            .map(Some)
            .map_err(|e| {
                AskError::Engine(GtpError::Malformed {
                    command: verb.to_string(),
                    text: e.to_string(),
                })
            })
    }

    async fn send_move(&self, move_number: u32, mv: Move) {
        self.send(match mv {
            Move::Pass => GameAction::Pass { move_number },
            Move::Play(_) => GameAction::Play {
                move_number,
                vertex: mv,
            },
        })
        .await;
    }

    /// The dead-stone phase: mark what the engine calls dead, then accept or reject.
    async fn mark(&mut self) {
        if self.marking.mine.is_none() {
            let size = self.settings.board_size;
            let deadline = self.untimed_move_limit;
            let dead = match self.ask("final_status_list dead", deadline).await {
                Ok(text) => parse_vertices(&text, size),
                Err(AskError::Interrupted) => return,
                Err(AskError::Engine(e)) => Err(e),
            };
            match dead {
                Ok(dead) => {
                    let board = self.position.as_ref().map(Game::board);
                    let chains = dead
                        .iter()
                        .flat_map(|&v| board.map(|b| b.chain(v)).unwrap_or_default())
                        .collect();
                    self.marking.mine = Some(chains);
                }
                Err(e) => {
                    return self
                        .fail(format!("it could not say which stones are dead: {e}"))
                        .await;
                }
            }
            if !self.backlog.is_empty() {
                // The marks may have changed while the engine thought.
                return;
            }
        }
        let Some(position) = &self.position else {
            return;
        };
        let m = &self.marking;
        let Some(mine) = &m.mine else { return };
        let board = position.board();
        match verdict(board, mine, &m.marks, &m.ever_marked, &m.requested) {
            Verdict::Mark(chains) => {
                for v in chains {
                    let chain = board.chain(v);
                    self.marking.requested.extend(chain);
                    self.send(GameAction::MarkDead {
                        vertex: v,
                        dead: true,
                    })
                    .await;
                }
            }
            Verdict::Accept => {
                if !m.accepted && m.accept_sent != Some(m.marks_seq) {
                    let marks_seq = m.marks_seq;
                    self.marking.accept_sent = Some(marks_seq);
                    self.send(GameAction::AcceptScore { marks_seq }).await;
                }
            }
            Verdict::Reject => {
                if !m.reject_sent {
                    tracing::info!("the marks differ from the engine's: rejecting");
                    self.marking.reject_sent = true;
                    self.send(GameAction::RejectScore {}).await;
                }
            }
        }
    }
}

/// The time control the engine is told: the game's, or for an untimed game the bridge's
/// own limit per move (`--untimed-move-secs`, past which it resigns), so that the engine
/// plans its thinking within it instead of being told there is no limit.
fn engine_time_control(tc: TimeControl, untimed_move_limit: Duration) -> TimeControl {
    match tc {
        TimeControl::None => TimeControl::Simple {
            per_move_ms: u64::try_from(untimed_move_limit.as_millis()).unwrap_or(u64::MAX),
        },
        tc => tc,
    }
}

/// A command the engine may not know (`time_settings`, `time_left`): a refusal is fine.
fn optional(result: Result<String, AskError>) -> Result<(), AskError> {
    match result {
        Ok(_) | Err(AskError::Engine(GtpError::Failure { .. })) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Vertices in a GTP answer (whitespace or line separated).
fn parse_vertices(text: &str, size: u8) -> Result<Vec<Vertex>, GtpError> {
    text.split_whitespace()
        .map(|w| {
            Vertex::parse(w, size).map_err(|e| GtpError::Malformed {
                command: "a vertex list".into(),
                text: e.to_string(),
            })
        })
        .collect()
}

/// Resolves when the engine's process exits; never, when there is no engine.
async fn engine_exit(engine: &mut Option<Engine>) -> String {
    match engine {
        Some(e) => match e.exited().await {
            Ok(status) => status.to_string(),
            Err(err) => err.to_string(),
        },
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertex_lists_read_across_lines() {
        assert_eq!(
            parse_vertices("C3 D4\nE5", 9).unwrap(),
            [Vertex::new(2, 2), Vertex::new(3, 3), Vertex::new(4, 4)]
        );
        assert!(parse_vertices("", 9).unwrap().is_empty());
        assert!(parse_vertices("Z9", 9).is_err());
    }

    #[test]
    fn an_untimed_game_tells_the_engine_the_bridges_limit_per_move() {
        let limit = Duration::from_secs(300);
        let told = engine_time_control(TimeControl::None, limit);
        assert_eq!(super::time_settings(&told), "time_settings 0 300 1");
        assert_eq!(
            kgs_time_settings(&told),
            "kgs-time_settings byoyomi 0 300 1"
        );
        let timed = TimeControl::Absolute { main_ms: 60_000 };
        assert_eq!(engine_time_control(timed, limit), timed);
    }
}
