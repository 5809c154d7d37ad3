//! The room: one tokio task per game that owns its [`LiveGame`], its crowd and its event
//! history. Commands arrive on a bounded channel; each accepted change is checked by the
//! rules, timed by the clock, committed to the store, and only then acknowledged and
//! broadcast, in that order. No lock is held around game state.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, sleep_until};

use super::crowd::{Crowd, Member};
use super::live::{Action, LiveGame, Moment, ReplayError, Step};
use crate::clock::{LagSettings, Millis};
use crate::fanout::{Frame, Outbox, encode};
use crate::hub::Hub;
use crate::protocol::{
    ErrorCode, EventFrame, GameEvent, GameSummary, Phase, Refusal, ServerMsg, UserInfo,
};
use crate::rules::Color;
use crate::store::{Append, EventRecord, GameRecord, GameStatus};
use crate::time::wall_ms;

/// Commands a room's queue holds at most; senders wait when it is full.
const QUEUE: usize = 256;
/// A reconnecting client that missed more events than this gets a snapshot instead.
const MAX_REPLAY: u64 = 512;

/// What a room is asked to do.
pub enum RoomCmd {
    /// Subscribe a connection: events after `since_seq`, or a snapshot.
    Join {
        outbox: Outbox,
        user: Option<UserInfo>,
        since_seq: Option<u64>,
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    Leave {
        conn: u64,
    },
    /// A player's action; the reply carries the seq of the last event it caused.
    Act {
        user: UserInfo,
        action: Action,
        /// The connection's one-way latency estimate, for lag compensation.
        lag_ms: u64,
        reply: oneshot::Sender<Result<Option<u64>, Refusal>>,
    },
    /// Chat: numbered players' chat from a player, spectators' chat from anyone else.
    Chat {
        user: UserInfo,
        text: String,
        reply: oneshot::Sender<Result<Option<u64>, Refusal>>,
    },
    Summary {
        reply: oneshot::Sender<GameSummary>,
    },
}

/// A cheap handle to a running room.
#[derive(Clone)]
pub struct RoomHandle {
    pub game_id: Arc<str>,
    tx: mpsc::Sender<RoomCmd>,
}

impl RoomHandle {
    /// Sends a command and waits for its reply; a room that has stopped answers
    /// `not_found`.
    pub async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> RoomCmd,
    ) -> Result<T, Refusal> {
        let (reply, rx) = oneshot::channel();
        let gone = || Refusal::new(ErrorCode::NotFound, "that game is no longer open");
        self.tx.send(make(reply)).await.map_err(|_| gone())?;
        rx.await.map_err(|_| gone())
    }

    /// Sends a command that needs no reply (the room may have stopped: then it is moot).
    pub async fn tell(&self, cmd: RoomCmd) {
        let _ = self.tx.send(cmd).await;
    }
}

/// The room task's state.
pub struct Room {
    id: Arc<str>,
    hub: Arc<Hub>,
    live: LiveGame,
    /// Every committed event's public frame; `history[i]` has seq `i + 1`.
    history: Vec<Frame>,
    /// Stored frames that differ from their public form (sealed moves), by history index.
    private: Vec<(usize, Frame)>,
    crowd: Crowd,
    epoch: Instant,
}

impl Room {
    /// Creates a game: commits its record and first event, then starts its room.
    pub async fn create(
        hub: Arc<Hub>,
        id: String,
        first: GameEvent,
    ) -> Result<RoomHandle, Refusal> {
        let epoch = Instant::now();
        let at = Moment {
            wall_ms: wall_ms(),
            ..Moment::default()
        };
        let live = LiveGame::create(&first, at, hub.config.clock.lag).map_err(|e| {
            Refusal::new(
                ErrorCode::BadRequest,
                format!("these settings cannot start a game: {}", e.reason),
            )
        })?;
        let frame = encode(&EventFrame {
            game_id: id.clone(),
            seq: 1,
            event: first,
        });
        let now = wall_ms();
        let record = GameRecord {
            id: id.clone(),
            created_at_ms: now,
            settings: serde_json::to_string(&live.settings).unwrap_or_default(),
            black: live.black.id.clone(),
            white: live.white.id.clone(),
            black_name: live.black.name.clone(),
            white_name: live.white.name.clone(),
            status: GameStatus::Live,
            result: None,
            ended_at_ms: None,
            move_count: 0,
        };
        hub.writer
            .commit(vec![
                Append::Create(record),
                Append::Event(event_record(&id, 1, "game_created", &frame, now)),
            ])
            .await
            .map_err(|e| unavailable(&e))?;
        let rebuilt = Rebuilt {
            live,
            history: vec![frame],
            private: Vec::new(),
            gone: Vec::new(),
        };
        Ok(Room::spawn(hub, id, rebuilt, epoch))
    }

    /// Rebuilds a room from its stored events (after a restart, or to show a finished
    /// game). Clocks do not run until the player to move is back.
    pub fn restore(
        hub: Arc<Hub>,
        id: String,
        events: &[EventRecord],
    ) -> Result<RoomHandle, ReplayError> {
        let epoch = Instant::now();
        let frames = events.iter().map(|e| e.payload.as_str());
        let rebuilt = rebuild(frames, hub.config.clock.lag, 0)?;
        Ok(Room::spawn(hub, id, rebuilt, epoch))
    }

    fn spawn(hub: Arc<Hub>, id: String, rebuilt: Rebuilt, epoch: Instant) -> RoomHandle {
        let (tx, rx) = mpsc::channel(QUEUE);
        let id: Arc<str> = id.into();
        let handle = RoomHandle {
            game_id: id.clone(),
            tx,
        };
        // Boxed, like the command handler below: a room future holding the game by
        // value (and a copy per async layer) would weigh some 58 KB per live game.
        let room = Box::new(Room {
            id,
            hub,
            live: rebuilt.live,
            history: rebuilt.history,
            private: rebuilt.private,
            crowd: Crowd::default(),
            epoch,
        });
        tokio::spawn(room.run(rx, rebuilt.gone));
        handle
    }

    fn now(&self) -> Millis {
        self.epoch.elapsed().as_millis() as Millis
    }

    /// This instant, for an action from a connection with one-way latency `lag_ms`.
    fn moment(&self, lag_ms: u64) -> Moment {
        Moment {
            now: self.now(),
            wall_ms: wall_ms(),
            lag_ms,
        }
    }

    async fn run(self: Box<Self>, rx: mpsc::Receiver<RoomCmd>, gone: Vec<Color>) {
        let span = tracing::info_span!("game", id = %self.id);
        // Instrumented, not entered: see net::session::serve.
        tracing::Instrument::instrument(self.run_game(rx, gone), span).await
    }

    async fn run_game(mut self: Box<Self>, mut rx: mpsc::Receiver<RoomCmd>, gone: Vec<Color>) {
        for color in gone {
            let offline = GameEvent::Presence {
                color,
                online: false,
            };
            let step = self.live.step(vec![offline], self.moment(0));
            let _ = self.commit(step).await;
        }
        loop {
            let deadline = self
                .live
                .next_timer()
                .map(|ms| self.epoch + std::time::Duration::from_millis(ms));
            tokio::select! {
                cmd = rx.recv() => match cmd {
                    Some(cmd) => Box::pin(self.handle(cmd)).await,
                    None => break,
                },
                () = sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                    let step = self.live.on_timer(self.moment(0));
                    for e in &step.events {
                        if let GameEvent::GameEnded { result, .. } = e {
                            tracing::info!(%result, "game ended by the clock");
                            if matches!(result, crate::rules::GameResult::Time { .. }) {
                                crate::metrics::flag_fall();
                            }
                        }
                    }
                    if !step.events.is_empty() {
                        let _ = self.commit(step).await;
                    }
                }
            }
            if self.live.phase() == Phase::Ended && self.crowd.is_empty() {
                break;
            }
        }
        self.hub.rooms.remove(&self.id);
    }

    async fn handle(&mut self, cmd: RoomCmd) {
        match cmd {
            RoomCmd::Join {
                outbox,
                user,
                since_seq,
                reply,
            } => {
                let result = self.join(outbox, user, since_seq).await;
                let _ = reply.send(result);
            }
            RoomCmd::Leave { conn } => {
                if let Some(Some(color)) = self.crowd.remove(conn) {
                    self.presence(color).await;
                }
            }
            RoomCmd::Act {
                user,
                action,
                lag_ms,
                reply,
            } => {
                let result = self.act(&user, action, lag_ms).await;
                let _ = reply.send(result);
            }
            RoomCmd::Chat { user, text, reply } => {
                let result = if self.live.color_of(&user.id).is_some() {
                    self.act(&user, Action::Chat(text), 0).await
                } else {
                    self.kibitz(user, text).map(|()| None)
                };
                let _ = reply.send(result);
            }
            RoomCmd::Summary { reply } => {
                let _ = reply.send(self.summary());
            }
        }
    }

    async fn join(
        &mut self,
        outbox: Outbox,
        user: Option<UserInfo>,
        since_seq: Option<u64>,
    ) -> Result<(), Refusal> {
        let color = user.as_ref().and_then(|u| self.live.color_of(&u.id));
        let conn = outbox.conn();
        let last = self.live.seq();
        match since_seq {
            Some(s) if s > last => {
                return Err(Refusal::new(
                    ErrorCode::BadRequest,
                    format!("since_seq {s} is past this game's last event ({last})"),
                ));
            }
            Some(s) if last - s <= MAX_REPLAY => {
                for frame in &self.history[s as usize..] {
                    if !outbox.push(frame.clone()) {
                        return Err(Refusal::new(
                            ErrorCode::Unavailable,
                            "your connection is too slow to catch up",
                        ));
                    }
                }
            }
            _ => {
                let snapshot = self.live.snapshot(&self.id, self.now(), wall_ms(), color);
                outbox.push(encode(&ServerMsg::Snapshot(Box::new(snapshot))));
            }
        }
        self.crowd.add(Member { outbox, color });
        if let Some(color) = color {
            self.presence(color).await;
            self.resume_clock_if_idle();
        }
        tracing::debug!(conn, ?color, "joined");
        Ok(())
    }

    /// After a restart no clock runs; it starts again once the player to move is here.
    fn resume_clock_if_idle(&mut self) {
        let to_move = self.live.to_move();
        if self.crowd.has_player(to_move) {
            self.live.start_clock_if_stopped(self.now());
        }
    }

    /// Records a player's connection coming or going, if that changed.
    async fn presence(&mut self, color: Color) {
        let online = self.crowd.has_player(color);
        if self.live.is_online(color) != online && self.live.phase() != Phase::Ended {
            let step = self
                .live
                .step(vec![GameEvent::Presence { color, online }], self.moment(0));
            let _ = self.commit(step).await;
        }
    }

    async fn act(
        &mut self,
        user: &UserInfo,
        action: Action,
        lag_ms: u64,
    ) -> Result<Option<u64>, Refusal> {
        let color = self
            .live
            .color_of(&user.id)
            .ok_or_else(|| Refusal::new(ErrorCode::Forbidden, "you do not play in this game"))?;
        let step = self
            .live
            .decide(color, &action, self.moment(lag_ms))
            .inspect_err(|r| {
                if let Some(reason) = r.reason {
                    crate::metrics::move_rejected(reason);
                }
            })?;
        if step.events.is_empty() {
            return Ok(None);
        }
        self.commit(step).await.map(Some)
    }

    fn kibitz(&mut self, user: UserInfo, text: String) -> Result<(), Refusal> {
        let text = text.trim().to_string();
        if text.is_empty() || text.chars().count() > super::live::MAX_CHAT_CHARS {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                format!(
                    "chat text must have 1 to {} characters",
                    super::live::MAX_CHAT_CHARS
                ),
            ));
        }
        let frame = encode(&ServerMsg::Kibitz {
            game_id: self.id.to_string(),
            from: user,
            text,
            at: wall_ms(),
        });
        self.crowd.broadcast(&frame, |m| m.color.is_none());
        Ok(())
    }

    fn summary(&self) -> GameSummary {
        GameSummary {
            game_id: self.id.to_string(),
            black: self.live.black.clone(),
            white: self.live.white.clone(),
            board_size: self.live.settings.board_size,
            move_number: self.live.move_count(),
            phase: self.live.phase(),
            spectators: self.crowd.spectators() as u32,
            result: self.live.result(),
        }
    }

    /// Stores a step's events, then takes its game as the room's state and broadcasts
    /// them; returns the last one's seq. If the store refuses, nothing changed and the
    /// caller is told.
    async fn commit(&mut self, step: Step) -> Result<u64, Refusal> {
        let wall = wall_ms();
        let first = step.first_seq();
        let mut batch = Vec::with_capacity(step.events.len() + 2);
        let mut frames = Vec::with_capacity(step.events.len());
        let mut private = Vec::new();
        let mut ended = None;
        for (seq, event) in (first..).zip(step.events) {
            let kind = event.kind();
            if kind == "move_played" {
                crate::metrics::move_played();
            }
            if let GameEvent::GameEnded { result, .. } = &event {
                ended = Some(result.to_string());
            }
            let public = event.public();
            let mut frame = encode(&EventFrame {
                game_id: self.id.to_string(),
                seq,
                event,
            });
            batch.push(Append::Event(event_record(
                &self.id, seq, kind, &frame, wall,
            )));
            if let Some(public) = public {
                let stored = std::mem::replace(
                    &mut frame,
                    encode(&EventFrame {
                        game_id: self.id.to_string(),
                        seq,
                        event: public,
                    }),
                );
                private.push((self.history.len() + frames.len(), stored));
            }
            frames.push(frame);
        }
        batch.push(Append::MoveCount {
            game_id: self.id.to_string(),
            move_count: step.game.move_count(),
        });
        if let Some(result) = &ended {
            batch.push(Append::Finish {
                game_id: self.id.to_string(),
                result: result.clone(),
                ended_at_ms: wall,
            });
        }
        let started = std::time::Instant::now();
        let committed = self.hub.writer.commit(batch).await;
        crate::metrics::store_commit(started.elapsed().as_micros() as u64);
        if let Err(e) = committed {
            tracing::error!(error = %e, "store refused a commit; nothing changed");
            return Err(unavailable(&e));
        }
        self.live = *step.game;
        self.private.extend(private);
        let last = self.live.seq();
        for frame in frames {
            let dropped = self.crowd.broadcast(&frame, |_| true);
            self.history.push(frame);
            for color in dropped {
                tracing::info!(?color, "dropped a slow player connection");
            }
        }
        if ended.is_some() {
            self.hub.game_ended(self.summary());
        }
        Ok(last)
    }
}

fn unavailable(e: &crate::store::StoreError) -> Refusal {
    Refusal::new(
        ErrorCode::Unavailable,
        format!("the game could not be saved, so nothing changed: {e}"),
    )
}

fn event_record(game_id: &str, seq: u64, kind: &str, frame: &Frame, at_ms: i64) -> EventRecord {
    EventRecord {
        game_id: game_id.to_string(),
        seq,
        kind: kind.to_string(),
        payload: frame.as_str().to_string(),
        at_ms,
    }
}

/// A game rebuilt from stored frames: the game, the public history, and the frames
/// whose stored form holds secrets (sealed moves), by index into the history.
struct Rebuilt {
    live: LiveGame,
    history: Vec<Frame>,
    private: Vec<(usize, Frame)>,
    /// Players the log showed online, now gone: the room records it when it starts.
    gone: Vec<Color>,
}

/// Replays stored event frames (in seq order) into a game.
fn rebuild<'a>(
    frames: impl Iterator<Item = &'a str>,
    lag: LagSettings,
    now: Millis,
) -> Result<Rebuilt, ReplayError> {
    let at = Moment {
        now,
        wall_ms: wall_ms(),
        lag_ms: 0,
    };
    let mut live: Option<LiveGame> = None;
    let mut history = Vec::new();
    let mut private = Vec::new();
    for (i, text) in frames.enumerate() {
        let frame: EventFrame = serde_json::from_str(text).map_err(|e| ReplayError {
            seq: i as u64 + 1,
            reason: format!("unreadable: {e}"),
        })?;
        match live.as_mut() {
            Some(game) => game.apply(&frame.event, frame.seq, at)?,
            None => {
                live = Some(LiveGame::create(&frame.event, at, lag)?);
            }
        }
        match frame.event.public() {
            Some(public) => {
                private.push((history.len(), Frame::from(text.to_string())));
                history.push(encode(&EventFrame {
                    event: public,
                    ..frame
                }));
            }
            None => history.push(Frame::from(text.to_string())),
        }
    }
    let mut live = live.ok_or_else(|| ReplayError {
        seq: 1,
        reason: "the log is empty".to_string(),
    })?;
    let gone = live.settle_after_restart(now);
    Ok(Rebuilt {
        live,
        history,
        private,
        gone,
    })
}
